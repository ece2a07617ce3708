// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw on the wire under every MPA set-up its module parameters select
 * (admin-guide.rst): mpa_crc on and off, mpa_rev 1, and mpa_rev 2 with
 * each p2p_rtr (0 none, 1 zero-length Send, 2 Write, 3 Read), and
 * mpa_markers with CRC on and off, rev 1 and rev 2 with its default RTR,
 * asked for by both ends or by one. Both ends are xiw, in this one
 * process over 10.99.0.1 on a dummy netdev; each variant sets the
 * parameters before it connects and restores the documented defaults
 * afterwards. mpa_markers is read as each end sends its frame, so the
 * connect sets it for the initiator, then for the responder once the
 * Request has arrived (RFC 5044 section 7.1.1: each end's M asks for
 * markers in what the other sends).
 *
 * Per variant: Send (both ways), Write followed by Send, and Read of 1,
 * 4096, 65536 + 3 and 1 MiB bytes with byte-for-byte checks; zero-length
 * Send, Write and Read (DDP-05, RDMAP-02); and the start-up as captured on
 * lo: the Request and Reply frames (MPA-01, MPA-05, E-01, E-02, E-06),
 * the ready-to-receive message (E-06), and every FPDU's framing and
 * CRC32c (MPA-20, MPA-42) when CRC was negotiated; with markers, every
 * marker's place and FPDUPTR (MPA-13, MPA-30/31), and markers before an
 * FPDU, in a header, in a payload and just before a CRC seen.
 * The capture checker itself is checked against RFC 5044 Figures 5, 6,
 * and a hand-made initiator's bad marker must draw Terminate 0x2/0x0/0x03.
 *
 * The loopback MTU is 1500 during these tests, so FPDUs cross TCP
 * segments as on a real network (MPA-23, MPA-24).
 *
 * Requirement IDs are those of the project's iWARP conformance checklist.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "xiw_wire_checks.h"

/* The parameters and their documented defaults (admin-guide.rst). */
static const struct { const char *name, *def; } xw_params[] = {
	{ "mpa_crc", "Y" }, { "mpa_rev", "2" }, { "p2p_rtr", "2" },
	{ "mpa_timeout_ms", "10000" }, { "ka_idle_s", "30" },
	{ "mpa_markers", "N" },
};

/*
 * First in the file, before any variant changes them: every parameter is
 * there with its documented default, writable by root only, and nothing
 * undocumented is.
 */
TEST(params_documented_defaults)
{
	char p[256], buf[64];
	struct dirent *de;
	struct stat st;
	size_t i, found = 0;
	DIR *d;

	if (xr_is_siw())
		SKIP(return, "xiw's module parameters: not for %s", xr_type());
	ASSERT_EQ(0, xr_load_modules());
	for (i = 0; i < sizeof(xw_params) / sizeof(xw_params[0]); i++) {
		snprintf(p, sizeof(p), XM_PARAMS "%s", xw_params[i].name);
		ASSERT_LT(0, read_text(p, buf, sizeof(buf)))
			TH_LOG("%s missing", p);
		EXPECT_STREQ(xw_params[i].def, buf) TH_LOG("%s", p);
		ASSERT_EQ(0, stat(p, &st));
		EXPECT_EQ(0644, st.st_mode & 0777) TH_LOG("%s mode %o", p,
							  st.st_mode & 0777);
	}
	d = opendir(XM_PARAMS);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		bool known = false;

		if (de->d_name[0] == '.')
			continue;
		for (i = 0; i < sizeof(xw_params) / sizeof(xw_params[0]); i++)
			known |= !strcmp(de->d_name, xw_params[i].name);
		EXPECT_TRUE(known) TH_LOG("undocumented parameter %s", de->d_name);
		found++;
	}
	closedir(d);
	EXPECT_EQ(sizeof(xw_params) / sizeof(xw_params[0]), found);
}

/* ---- one xiw-xiw connection per test, made under the variant's MPA ---- */

FIXTURE(mpa) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;	/* client (MPA initiator), server */
	struct xm_cap *cap;	/* lo, from before the connect */
	uint64_t seed;
};

FIXTURE_VARIANT(mpa) {
	int crc, rev, rtr;
	int m_ini, m_rsp;	/* mpa_markers of initiator, responder */
};

FIXTURE_VARIANT_ADD(mpa, crc1_rev1) { .crc = 1, .rev = 1, .rtr = 0 };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr0) { .crc = 1, .rev = 2, .rtr = 0 };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr1_send) { .crc = 1, .rev = 2, .rtr = 1 };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr2_write) { .crc = 1, .rev = 2, .rtr = 2 };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr3_read) { .crc = 1, .rev = 2, .rtr = 3 };
FIXTURE_VARIANT_ADD(mpa, crc0_rev1) { .crc = 0, .rev = 1, .rtr = 0 };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr0) { .crc = 0, .rev = 2, .rtr = 0 };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr1_send) { .crc = 0, .rev = 2, .rtr = 1 };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr2_write) { .crc = 0, .rev = 2, .rtr = 2 };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr3_read) { .crc = 0, .rev = 2, .rtr = 3 };
FIXTURE_VARIANT_ADD(mpa, mrk_crc1_rev1) {
	.crc = 1, .rev = 1, .rtr = 0, .m_ini = 1, .m_rsp = 1 };
FIXTURE_VARIANT_ADD(mpa, mrk_crc1_rev2_rtr2_write) {
	.crc = 1, .rev = 2, .rtr = 2, .m_ini = 1, .m_rsp = 1 };
FIXTURE_VARIANT_ADD(mpa, mrk_crc0_rev1) {
	.crc = 0, .rev = 1, .rtr = 0, .m_ini = 1, .m_rsp = 1 };
FIXTURE_VARIANT_ADD(mpa, mrk_crc0_rev2_rtr2_write) {
	.crc = 0, .rev = 2, .rtr = 2, .m_ini = 1, .m_rsp = 1 };
/* One end asks: markers flow towards it only. */
FIXTURE_VARIANT_ADD(mpa, mrk_ini_only_crc1_rev2_rtr2_write) {
	.crc = 1, .rev = 2, .rtr = 2, .m_ini = 1, .m_rsp = 0 };
FIXTURE_VARIANT_ADD(mpa, mrk_rsp_only_crc1_rev2_rtr3_read) {
	.crc = 1, .rev = 2, .rtr = 3, .m_ini = 0, .m_rsp = 1 };

/*
 * xr_connect() with mpa_markers set to m_ini for the initiator's Request
 * and to m_rsp once the Request has arrived, before the Reply is built.
 */
static int xw_connect(struct xr_net *n, struct xr_pair *p,
		      const struct xr_opts *o, int m_ini, int m_rsp)
{
	long long end = now_ms() + XR_WAIT_MS + 100LL;
	struct rdma_event_channel *ch[2] = { n->cch, n->sch };
	struct pollfd pf[2] = {
		{ .fd = n->cch->fd, .events = POLLIN },
		{ .fd = n->sch->fd, .events = POLLIN },
	};
	struct rdma_cm_event *ev;
	int k, rc;

	if (xm_param_set("mpa_markers", m_ini))
		return xr_fail(n, "mpa_markers: %s", strerror(errno));
	if (rdma_create_id(n->cch, &p->cli.id, NULL, RDMA_PS_TCP))
		return xr_fail(n, "rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(p->cli.id, n->src.sin_family ?
			      (struct sockaddr *)&n->src : NULL,
			      (struct sockaddr *)&n->addr, 2000))
		return xr_fail(n, "rdma_resolve_addr: %s", strerror(errno));
	while (xr_count_established(p, 1) < 2) {
		if (now_ms() >= end)
			return xr_fail(n, "%d of 2 ends established in %d ms",
				       xr_count_established(p, 1), XR_WAIT_MS);
		if (poll(pf, 2, (int)(end - now_ms())) <= 0)
			continue;
		for (k = 0; k < 2; k++) {
			if (!(pf[k].revents & POLLIN) ||
			    rdma_get_cm_event(ch[k], &ev))
				continue;
			rc = 0;
			if (k && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
			    xm_param_set("mpa_markers", m_rsp))
				rc = xr_fail(n, "mpa_markers: %s",
					     strerror(errno));
			if (!rc)
				rc = k ? xr_srv_event(n, p, 1, o, ev)
				       : xr_cli_event(n, p, 1, o, ev);
			rdma_ack_cm_event(ev);
			if (rc)
				return rc;
		}
	}
	return 0;
}

FIXTURE_SETUP(mpa)
{
	struct xr_opts o = { .buflen = XW_BUFLEN, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	int rc;

	if (xr_is_siw())
		SKIP(return, "xiw's MPA parameters: not for %s", xr_type());
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	xr_lo_mtu(1500);
	rc = xm_params(variant->crc, variant->rev, variant->rtr);
	ASSERT_EQ(0, rc) TH_LOG("setting MPA parameters: %s", strerror(-rc));
	ASSERT_EQ(0, xr_net_init(&self->net)) TH_LOG("%s", self->net.err);
	self->cap = malloc(sizeof(*self->cap));
	ASSERT_NE(NULL, self->cap);
	rc = xm_cap_open(self->cap, ntohs(self->net.addr.sin_port));
	ASSERT_EQ(0, rc) TH_LOG("packet capture on lo: %s", strerror(-rc));
	ASSERT_EQ(0, xw_connect(&self->net, &self->p, &o, variant->m_ini,
				variant->m_rsp))
		TH_LOG("crc %d rev %d rtr %d markers %d/%d: %s", variant->crc,
		       variant->rev, variant->rtr, variant->m_ini,
		       variant->m_rsp, self->net.err);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(mpa)
{
	if (!_metadata->passed)
		xw_log_wire(_metadata, self->cap);
	xm_cap_close(self->cap);
	free(self->cap);
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xm_params_default();
}

/* The data tests need no copy of every packet. */
TEST_F_TIMEOUT(mpa, send_both_ways, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_send_both_ways(_metadata, self->c, self->s, self->seed);
}

TEST_F_TIMEOUT(mpa, write_then_send, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_write_then_send(_metadata, self->c, self->s, self->seed);
}

TEST_F_TIMEOUT(mpa, rdma_read, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_read(_metadata, self->c, self->s, self->seed);
}

/*
 * The MPA responder reads from the initiator, once the initiator has sent
 * its first FPDU (MPA-12); a failure logs the wire.
 */
TEST_F_TIMEOUT(mpa, rdma_read_reverse, XW_TIMEOUT)
{
	xw_initiator_first(_metadata, self->c, self->s);
	xw_read(_metadata, self->s, self->c, self->seed);
}

TEST_F_TIMEOUT(mpa, zero_length, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_zero_length(_metadata, self->c, self->s, self->seed);
}

/*
 * xiw on both ends: the Request asks what the parameters say, the Reply
 * answers in kind (C as configured: both ends have the same setting), the
 * RTR offered is picked and sent first, CRCs are valid when on.
 */
TEST_F_TIMEOUT(mpa, wire_startup, XW_TIMEOUT)
{
	struct xw_expect e = {
		.rev = variant->rev, .req_c = variant->crc,
		.rep_c = variant->crc, .crc = variant->crc,
		.rtr = variant->rev == 2 ? variant->rtr : 0, .rd = 4,
		.req_m = variant->m_ini, .rep_m = variant->m_rsp,
		.mrk_places = variant->m_ini && variant->m_rsp,
	};

	xw_wire_traffic(_metadata, self->c, self->s, self->seed);
	if (e.mrk_places) {
		/* Markers at every place an FPDU offers (see the log). */
		xw_zero_length(_metadata, self->c, self->s, self->seed);
		xw_send_both_ways(_metadata, self->c, self->s, self->seed);
	}
	xw_wire(_metadata, self->cap, &e);
}

/*
 * MPA-42: the capture checker against RFC 5044 Figures 5 and 6, a Send
 * of 24 zero bytes led by a marker, then (after a 492-byte first FPDU) the
 * same Send holding a marker with FPDUPTR 0x14; CRCs as printed there.
 */
TEST(checker_rfc5044_vectors)
{
	static const uint8_t send[] = {
		0x00, 0x2a, 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0,
	};
	static const uint8_t crc5[] = { 0x52, 0x23, 0x99, 0x83 };
	static const uint8_t crc6[] = { 0x84, 0x92, 0x58, 0x98 };
	struct xm_stream *s = calloc(1, sizeof(*s));
	struct xm_mrk_stats ms = { 0 };
	struct xm_fpdu f;
	size_t off = 0, at;

	ASSERT_NE(NULL, s);
	/* Figure 5: marker, FPDU (MSN 1, 24 zero bytes), its CRC. */
	memcpy(s->buf + 4, send, sizeof(send));
	s->buf[4 + 15] = 1;
	memcpy(s->buf + 4 + 44, crc5, 4);
	s->len = 4 + 48;
	ASSERT_TRUE(xm_fpdu(s, 0, true, &off, &f, &ms));
	EXPECT_EQ(0x2a, f.ulpdu_len);
	EXPECT_EQ(f.crc_calc, f.crc_wire) TH_LOG("Figure 5: %08x computed",
						 f.crc_calc);
	EXPECT_EQ(1, ms.at_start);
	EXPECT_EQ(0, ms.bad);
	/* Figure 6: its FPDU at 0x1ec, a marker at 0x200 inside it. */
	at = 0x1ec;
	memcpy(s->buf + at, send, sizeof(send));
	s->buf[at + 15] = 2;
	s->buf[0x200 + 3] = 0x14;
	memset(s->buf + 0x204, 0, 24);
	memcpy(s->buf + 0x21c, crc6, 4);
	s->len = 0x220;
	off = at;
	ASSERT_TRUE(xm_fpdu(s, 0, true, &off, &f, &ms));
	EXPECT_EQ(0x220, off);
	EXPECT_EQ(f.crc_calc, f.crc_wire) TH_LOG("Figure 6: %08x computed",
						 f.crc_calc);
	EXPECT_EQ(1, ms.in_payload);
	EXPECT_EQ(0, ms.bad);
	/* A wrong FPDUPTR is caught. */
	s->buf[0x200 + 3] = 0x10;
	off = at;
	ASSERT_TRUE(xm_fpdu(s, 0, true, &off, &f, &ms));
	EXPECT_EQ(1, ms.bad);
	free(s);
}

/* Read exactly n bytes from a blocking socket with a receive timeout. */
static bool xw_read_n(int fd, uint8_t *b, size_t n)
{
	ssize_t r;

	while (n) {
		r = recv(fd, b, n, 0);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

/*
 * TERM-04, RFC 5044 section 8: xiw as responder asked for markers
 * (mpa_markers), and a hand-made initiator leads full operation with a
 * marker whose FPDUPTR is 4 instead of 0. xiw must answer with one
 * Terminate, layer/type 0x2/0x0 (LLP, MPA), code 0x03, before anything
 * from that stream is taken as an FPDU.
 */
TEST(bad_marker_terminates)
{
	static const uint8_t bad[8] = { 0, 0, 0, 4, 0, 18, 0x41, 0x43 };
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 1 };
	struct timeval tv = { .tv_sec = 5 };
	uint8_t req[20] = "MPA ID Req Frame", rep[20 + 512], term[22];
	struct rdma_cm_event *ev;
	struct xr_pair p = { 0 };
	struct xr_link link;
	struct xr_net net;
	uint16_t pd_len;
	int fd, rc = 0;

	if (xr_is_siw())
		SKIP(return, "xiw's markers: not for %s", xr_type());
	ASSERT_EQ(0, xr_link_add(&link));
	ASSERT_EQ(0, xm_param_set("mpa_markers", 1));
	ASSERT_EQ(0, xr_net_init(&net)) TH_LOG("%s", net.err);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&net.addr, sizeof(net.addr)))
		TH_LOG("connect: %s", strerror(errno));
	/* Revision 1, C set, M clear: no markers towards us. */
	req[16] = 0x40;
	req[17] = 1;
	ASSERT_EQ((ssize_t)sizeof(req), send(fd, req, sizeof(req), 0));
	ev = NULL;
	while (!p.srv.established && !rc) {
		struct pollfd pf = { .fd = net.sch->fd, .events = POLLIN };

		ASSERT_LT(0, poll(&pf, 1, XR_WAIT_MS)) TH_LOG("no CM event");
		ASSERT_EQ(0, rdma_get_cm_event(net.sch, &ev));
		rc = xr_srv_event(&net, &p, 1, &o, ev);
		rdma_ack_cm_event(ev);
	}
	ASSERT_EQ(0, rc) TH_LOG("%s", net.err);
	ASSERT_TRUE(xw_read_n(fd, rep, 20));
	EXPECT_EQ(0, memcmp(rep, "MPA ID Rep Frame", 16));
	EXPECT_EQ(0x80, rep[16] & 0x80) TH_LOG("Reply flags %#x: no M", rep[16]);
	pd_len = (uint16_t)(rep[18] << 8 | rep[19]);
	ASSERT_GE(512, pd_len);
	ASSERT_TRUE(xw_read_n(fd, rep + 20, pd_len));
	ASSERT_EQ((ssize_t)sizeof(bad), send(fd, bad, sizeof(bad), 0));
	/* Length, DDP/RDMAP control, 16 bytes of untagged header, then
	 * layer|type and code (TERM-01).
	 */
	ASSERT_TRUE(xw_read_n(fd, term, sizeof(term))) TH_LOG("no Terminate");
	EXPECT_EQ(0x07, term[3] & 0x0f) TH_LOG("opcode %d", term[3] & 0x0f);
	EXPECT_EQ(0x20, term[20]);
	EXPECT_EQ(0x03, term[21]);
	close(fd);
	xr_pairs_fini(&p, 1);
	xr_net_fini(&net);
	xm_params_default();
}

static void __attribute__((destructor)) purge(void)
{
	xm_params_default();
	xr_link_purge();
}

TEST_HARNESS_MAIN
