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
 * 4096, 65536 + 3 and 1 MiB bytes with byte-for-byte checks; one 64 MiB
 * Write, Send or Read (bulk_64m; across the variants each operation
 * meets CRC and markers on and off and both revisions); zero-length
 * Send, Write and Read (DDP-05, RDMAP-02); and the start-up as captured on
 * lo: the Request and Reply frames (MPA-01, MPA-05, E-01, E-02, E-06),
 * the ready-to-receive message (E-06), and every FPDU's framing and
 * CRC32c (MPA-20, MPA-42) when CRC was negotiated; with markers, every
 * marker's place and FPDUPTR (MPA-13, MPA-30/31), and markers before an
 * FPDU, in a header, in a payload and just before a CRC seen.
 * Every FPDU captured, markers included, fits one segment of the EMSS
 * (MPA-23). The CRC32c comes from each implementation crc_impl offers
 * (crypto in crc1_rev1, generic in crc1_rev2_rtr0, auto's choice in the
 * rest), and crc_impl_choice checks the choosing. The capture checker
 * itself is checked against RFC 5044 Figures 5, 6 and against synthetic
 * FPDUs too long for the EMSS, and a hand-made initiator's bad marker
 * must draw Terminate 0x2/0x0/0x03.
 *
 * The loopback MTU is 1500 during these tests, so FPDUs cross TCP
 * segments as on a real network (MPA-23, MPA-24). The mulpdu fixture
 * sets it to 9000, 4001, 1283 and 1500 (CRC on and off, markers on and
 * off) and sends messages one byte short of, exactly and one byte over
 * what one FPDU holds at the MULPDU of the EMSS the handshake shows,
 * checking where the capture shows each message cut.
 *
 * Requirement IDs are defined in Documentation/requirements.rst.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "xiw_wire_checks.h"
#include "xiw_bulk.h"

/* The parameters and their documented defaults (admin-guide.rst). */
static const struct { const char *name, *def; } xw_params[] = {
	{ "mpa_crc", "Y" }, { "mpa_rev", "2" }, { "p2p_rtr", "2" },
	{ "mpa_timeout_ms", "10000" }, { "ka_idle_s", "30" },
	{ "mpa_markers", "N" }, { "tx_zcopy", "1" },
	{ "tx_zcopy_min", "16384" }, { "tx_own_pages", "Y" },
	{ "tx_post_bytes", "16384" },
	{ "tx_post_bytes_idle", "262144" },
	{ "max_ird", "128" }, { "max_ord", "128" }, { "crc_impl", "auto" },
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

/* What debugfs says of the CRC32c choice (xiw_mpa.c). */
struct xw_crc {
	char mode[16], using[16];
	unsigned long long crypto_ns, generic_ns;
};

#define XW_CRC_DEBUGFS	"/sys/kernel/debug/xiw/crc32c"

/* 0, or -1 if the file is missing or not as documented. */
static int xw_crc_read(struct xw_crc *c)
{
	FILE *f = fopen(XW_CRC_DEBUGFS, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "mode %15s crypto_ns %llu generic_ns %llu using %15s",
		   c->mode, &c->crypto_ns, &c->generic_ns, c->using);
	fclose(f);
	return n == 4 ? 0 : -1;
}

/*
 * crc_impl (admin-guide.rst): crypto and generic are taken as asked;
 * auto times both and uses the faster; anything else is refused with
 * EINVAL and changes nothing. That each computes MPA's CRC32c right is
 * the mpa fixture's work: crc1_rev1 runs with crypto, crc1_rev2_rtr0
 * with generic, the rest with auto, every FPDU checked on the wire.
 */
TEST(crc_impl_choice)
{
	static const char * const fixed[] = { "crypto", "generic" };
	struct xw_crc c;
	char buf[32];
	int i;

	if (xr_is_siw())
		SKIP(return, "xiw's module parameters: not for %s", xr_type());
	ASSERT_EQ(0, xr_load_modules());
	sh("mountpoint -q /sys/kernel/debug || "
	   "mount -t debugfs none /sys/kernel/debug >/dev/null 2>&1");
	ASSERT_TRUE(path_exists(XW_CRC_DEBUGFS));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, xm_param_set_str("crc_impl", fixed[i]));
		ASSERT_LT(0, read_text(XM_PARAMS "crc_impl", buf, sizeof(buf)));
		EXPECT_STREQ(fixed[i], buf);
		ASSERT_EQ(0, xw_crc_read(&c));
		EXPECT_STREQ(fixed[i], c.mode);
		EXPECT_STREQ(fixed[i], c.using);
	}
	ASSERT_EQ(0, xm_param_set_str("crc_impl", "auto"));
	ASSERT_EQ(0, xw_crc_read(&c));
	EXPECT_STREQ("auto", c.mode);
	EXPECT_LT(0, c.crypto_ns);
	EXPECT_LT(0, c.generic_ns);
	EXPECT_STREQ(c.generic_ns < c.crypto_ns ? "generic" : "crypto",
		     c.using)
		TH_LOG("crypto %llu ns, generic %llu ns", c.crypto_ns,
		       c.generic_ns);
	TH_LOG("crc32c per 4 KiB: crypto %llu ns, generic %llu ns: %s",
	       c.crypto_ns, c.generic_ns, c.using);
	EXPECT_EQ(-EINVAL, xm_param_set_str("crc_impl", "fastest"));
	EXPECT_EQ(-EINVAL, xm_param_set_str("crc_impl", ""));
	ASSERT_LT(0, read_text(XM_PARAMS "crc_impl", buf, sizeof(buf)));
	EXPECT_STREQ("auto", buf);
	ASSERT_EQ(0, xw_crc_read(&c));
	EXPECT_STREQ("auto", c.mode);
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

/*
 * bulk_64m's 64 MiB operations, from the initiator c: a Write (and an
 * 8-byte Send), a Send, a Read (the Read Responses come from s). Where
 * markers flow one way only, the operation is one whose data goes that
 * way.
 */
enum { XW_BIG_WRITE = 1, XW_BIG_SEND = 2, XW_BIG_READ = 4 };

FIXTURE_VARIANT(mpa) {
	int crc, rev, rtr;
	int m_ini, m_rsp;	/* mpa_markers of initiator, responder */
	int big;		/* bulk_64m's operations: XW_BIG_* */
	const char *impl;	/* crc_impl, if not the default auto */
};

FIXTURE_VARIANT_ADD(mpa, crc1_rev1) {
	.crc = 1, .rev = 1, .rtr = 0, .big = XW_BIG_WRITE,
	.impl = "crypto" };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr0) {
	.crc = 1, .rev = 2, .rtr = 0, .big = XW_BIG_SEND,
	.impl = "generic" };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr1_send) {
	.crc = 1, .rev = 2, .rtr = 1, .big = XW_BIG_READ };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr2_write) {
	.crc = 1, .rev = 2, .rtr = 2, .big = XW_BIG_WRITE };
FIXTURE_VARIANT_ADD(mpa, crc1_rev2_rtr3_read) {
	.crc = 1, .rev = 2, .rtr = 3, .big = XW_BIG_SEND };
FIXTURE_VARIANT_ADD(mpa, crc0_rev1) {
	.crc = 0, .rev = 1, .rtr = 0, .big = XW_BIG_READ };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr0) {
	.crc = 0, .rev = 2, .rtr = 0, .big = XW_BIG_WRITE };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr1_send) {
	.crc = 0, .rev = 2, .rtr = 1, .big = XW_BIG_SEND };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr2_write) {
	.crc = 0, .rev = 2, .rtr = 2, .big = XW_BIG_READ };
FIXTURE_VARIANT_ADD(mpa, crc0_rev2_rtr3_read) {
	.crc = 0, .rev = 2, .rtr = 3, .big = XW_BIG_WRITE };
FIXTURE_VARIANT_ADD(mpa, mrk_crc1_rev1) {
	.crc = 1, .rev = 1, .rtr = 0, .m_ini = 1, .m_rsp = 1,
	.big = XW_BIG_SEND };
FIXTURE_VARIANT_ADD(mpa, mrk_crc1_rev2_rtr2_write) {
	.crc = 1, .rev = 2, .rtr = 2, .m_ini = 1, .m_rsp = 1,
	.big = XW_BIG_READ };
FIXTURE_VARIANT_ADD(mpa, mrk_crc0_rev1) {
	.crc = 0, .rev = 1, .rtr = 0, .m_ini = 1, .m_rsp = 1,
	.big = XW_BIG_SEND };
FIXTURE_VARIANT_ADD(mpa, mrk_crc0_rev2_rtr2_write) {
	.crc = 0, .rev = 2, .rtr = 2, .m_ini = 1, .m_rsp = 1,
	.big = XW_BIG_WRITE | XW_BIG_READ };
/* One end asks: markers flow towards it only. */
FIXTURE_VARIANT_ADD(mpa, mrk_ini_only_crc1_rev2_rtr2_write) {
	.crc = 1, .rev = 2, .rtr = 2, .m_ini = 1, .m_rsp = 0,
	.big = XW_BIG_READ };
FIXTURE_VARIANT_ADD(mpa, mrk_rsp_only_crc1_rev2_rtr3_read) {
	.crc = 1, .rev = 2, .rtr = 3, .m_ini = 0, .m_rsp = 1,
	.big = XW_BIG_WRITE };

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
		XSKIP_SETUP("xiw's MPA parameters: not for %s", xr_type());
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	xr_lo_mtu(1500);
	rc = xm_params(variant->crc, variant->rev, variant->rtr);
	ASSERT_EQ(0, rc) TH_LOG("setting MPA parameters: %s", strerror(-rc));
	if (variant->impl) {
		rc = xm_param_set_str("crc_impl", variant->impl);
		ASSERT_EQ(0, rc) TH_LOG("crc_impl %s: %s", variant->impl,
					strerror(-rc));
	}
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
 * 64 MiB through the variant's MPA set-up, with the operation(s) of its
 * big field (xiw_bulk.h: the source holds xr_fill()'s pattern, the sink
 * is cleared first, all 64 MiB are checked): across the variants each of
 * Write, Send and Read meets CRC on and off, markers on and off and both
 * revisions, one 64 MiB transfer per variant (two in one), which keeps
 * the test to about 4 minutes under TCG (testing.rst). No capture:
 * xw_wire checks the framing.
 */
TEST_F_TIMEOUT(mpa, bulk_64m, 300)
{
	xm_cap_close(self->cap);
	ASSERT_NE(0, variant->big);
	if (variant->big & XW_BIG_WRITE)
		xb_write(_metadata, self->c, self->s,
			 self->seed + XW_BIG_WRITE);
	if (variant->big & XW_BIG_SEND)
		xb_send(_metadata, self->c, self->s, self->seed + XW_BIG_SEND);
	if (variant->big & XW_BIG_READ)
		xb_read(_metadata, self->c, self->s, self->seed + XW_BIG_READ);
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
		.fit = true,
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

/* ---- the MULPDU edges at other loopback MTUs ---- */

FIXTURE(mulpdu) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xm_cap *cap;
	int old_mtu;
};

/* MPA revision 2 with the default RTR; markers both ways or none. */
FIXTURE_VARIANT(mulpdu) {
	int mtu, crc, mrk;
};

FIXTURE_VARIANT_ADD(mulpdu, mtu9000_crc1) { .mtu = 9000, .crc = 1 };
FIXTURE_VARIANT_ADD(mulpdu, mtu9000_crc0) { .mtu = 9000, .crc = 0 };
FIXTURE_VARIANT_ADD(mulpdu, mtu9000_mrk_crc1) {
	.mtu = 9000, .crc = 1, .mrk = 1 };
FIXTURE_VARIANT_ADD(mulpdu, mtu9000_mrk_crc0) {
	.mtu = 9000, .crc = 0, .mrk = 1 };
/* EMSS 3949 and 1231: the "EMSS mod 4" of the formula is 1 and 3. */
FIXTURE_VARIANT_ADD(mulpdu, mtu4001_crc1) { .mtu = 4001, .crc = 1 };
FIXTURE_VARIANT_ADD(mulpdu, mtu4001_mrk_crc0) {
	.mtu = 4001, .crc = 0, .mrk = 1 };
FIXTURE_VARIANT_ADD(mulpdu, mtu1283_mrk_crc1) {
	.mtu = 1283, .crc = 1, .mrk = 1 };
/* The MTU of the mpa variants, with markers. */
FIXTURE_VARIANT_ADD(mulpdu, mtu1500_mrk_crc1) {
	.mtu = 1500, .crc = 1, .mrk = 1 };

FIXTURE_SETUP(mulpdu)
{
	struct xr_opts o = { .buflen = XW_BUFLEN, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	char buf[32];
	int rc;

	if (xr_is_siw())
		XSKIP_SETUP("xiw's MPA parameters: not for %s", xr_type());
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_link_add(&self->link));
	self->old_mtu = read_text("/sys/class/net/lo/mtu", buf, sizeof(buf)) > 0 ?
			atoi(buf) : 0;
	xr_lo_mtu(variant->mtu);
	ASSERT_LT(0, read_text("/sys/class/net/lo/mtu", buf, sizeof(buf)));
	ASSERT_EQ(variant->mtu, atoi(buf)) TH_LOG("lo MTU not set");
	rc = xm_params(variant->crc, 2, 2);
	ASSERT_EQ(0, rc) TH_LOG("setting MPA parameters: %s", strerror(-rc));
	ASSERT_EQ(0, xr_net_init(&self->net)) TH_LOG("%s", self->net.err);
	self->cap = malloc(sizeof(*self->cap));
	ASSERT_NE(NULL, self->cap);
	rc = xm_cap_open(self->cap, ntohs(self->net.addr.sin_port));
	ASSERT_EQ(0, rc) TH_LOG("packet capture on lo: %s", strerror(-rc));
	ASSERT_EQ(0, xw_connect(&self->net, &self->p, &o, variant->mrk,
				variant->mrk))
		TH_LOG("MTU %d crc %d markers %d: %s", variant->mtu,
		       variant->crc, variant->mrk, self->net.err);
}

FIXTURE_TEARDOWN(mulpdu)
{
	if (!_metadata->passed)
		xw_log_wire(_metadata, self->cap);
	xm_cap_close(self->cap);
	free(self->cap);
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xm_params_default();
	if (self->old_mtu)
		xr_lo_mtu(self->old_mtu);
}

/*
 * RFC 5044 section 4.5 (MPA-23) in its own words: the largest ULPDU of
 * an FPDU in one segment of emss bytes, with room for the most markers
 * such a segment can hold when there are markers.
 */
static unsigned int xw_rfc_mulpdu(unsigned int emss, bool mrk)
{
	unsigned int m = mrk ? 4 * ((emss + 511) / 512) : 0;

	return emss - (6 + m + emss % 4);
}

#define XW_EDGES	16	/* messages of one direction, at most */

/* The ULPDU_Lengths a message of len bytes must make at a MULPDU room. */
static int xw_cut(unsigned int *l, int n, unsigned int hdr, size_t len,
		  unsigned int room)
{
	do {
		size_t k = len < room ? len : room;

		l[n++] = hdr + (unsigned int)k;
		len -= k;
	} while (len);
	return n;
}

/*
 * MPA-23, MPA-24 at this variant's MTU: the EMSS from the captured
 * handshake, the MULPDU from it by RFC 5044 section 4.5; then messages
 * one byte below, at and above what one FPDU holds: Sends of MULPDU - 18
 * - 1, + 0, + 1 bytes, Writes (each followed by an 8-byte Send) and Reads
 * of MULPDU - 14 - 1, + 0, + 1 bytes, and Sends of MULPDU - 1, MULPDU and
 * MULPDU + 1 bytes. Data checked byte for byte. On the wire every FPDU
 * fits the EMSS (xw_fpdu_fit), and the messages are cut exactly there:
 * each direction's ULPDU_Lengths, in order, are those of MULPDU-sized
 * pieces and the rest.
 */
TEST_F_TIMEOUT(mulpdu, edges, XW_TIMEOUT)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	unsigned int want[2][4 * XW_EDGES], got[2][4 * XW_EDGES];
	int nw[2] = { 0 }, ng[2] = { 0 }, d, i, k;
	unsigned int emss, mulpdu, ps, pw;
	uint64_t seed = (uint64_t)now_ms();
	struct xm_stream *st[2];
	struct xw_fit fit[2];
	struct xm_frame fr[2];
	struct xm_fpdu f;
	size_t off;

	usleep(50000);
	xm_cap_drain(self->cap);
	emss = xm_cap_emss(self->cap);
	/* lo's MTU less the IPv4 and TCP headers (RFC 9293 section 3.7.1). */
	EXPECT_EQ(variant->mtu - 40, self->cap->syn_mss[0]);
	EXPECT_EQ(variant->mtu - 40, self->cap->syn_mss[1]);
	ASSERT_LT(0, emss);
	mulpdu = xw_rfc_mulpdu(emss, variant->mrk);
	ps = mulpdu - 18;
	pw = mulpdu - 14;
	TH_LOG("MTU %d: EMSS %u, MULPDU %u: %u bytes per Send FPDU, %u per Write or Read Response FPDU",
	       variant->mtu, emss, mulpdu, ps, pw);
	ASSERT_GE(XW_HALF, mulpdu + 1);

	/* The zero-length Write RTR (p2p_rtr 2) comes first. */
	want[0][nw[0]++] = 14;
	for (i = -1; i <= 1; i++) {
		size_t sz = ps + i;

		xr_fill(c->buf, sz, seed + 1 + i);
		ASSERT_EQ(0, xr_recv(s, 0x10, XW_HALF, sz));
		ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0x11, 0, sz, 0, NULL, 0));
		EXPECT_ONE_WC(c, 0x11, IBV_WC_SEND, -1);
		EXPECT_ONE_WC(s, 0x10, IBV_WC_RECV, sz);
		ASSERT_PATTERN(s->buf + XW_HALF, sz, seed + 1 + i, "Send");
		nw[0] = xw_cut(want[0], nw[0], 18, sz, ps);
	}
	for (i = -1; i <= 1; i++) {
		size_t sz = pw + i;

		xr_fill(c->buf, sz, seed + 4 + i);
		ASSERT_EQ(0, xr_recv(s, 0x20, 0, 8));
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_WRITE, 0x21, 0, sz, 0, s,
				     XW_HALF));
		ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0x22, XW_HALF, 8, 0, NULL,
				     0));
		EXPECT_ONE_WC(s, 0x20, IBV_WC_RECV, 8);
		EXPECT_ONE_WC(c, 0x21, IBV_WC_RDMA_WRITE, -1);
		EXPECT_ONE_WC(c, 0x22, IBV_WC_SEND, -1);
		ASSERT_PATTERN(s->buf + XW_HALF, sz, seed + 4 + i, "Write");
		nw[0] = xw_cut(want[0], nw[0], 14, sz, pw);
		nw[0] = xw_cut(want[0], nw[0], 18, 8, ps);
	}
	for (i = -1; i <= 1; i++) {
		size_t sz = pw + i;

		xr_fill(s->buf, sz, seed + 7 + i);
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, 0x31, XW_HALF, sz, 0,
				     s, 0));
		EXPECT_ONE_WC(c, 0x31, IBV_WC_RDMA_READ, -1);
		ASSERT_PATTERN(c->buf + XW_HALF, sz, seed + 7 + i, "Read");
		want[0][nw[0]++] = 18 + 28;
		nw[1] = xw_cut(want[1], nw[1], 14, sz, pw);
	}
	for (i = -1; i <= 1; i++) {
		size_t sz = mulpdu + i;

		xr_fill(c->buf, sz, seed + 10 + i);
		ASSERT_EQ(0, xr_recv(s, 0x40, XW_HALF, sz));
		ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0x41, 0, sz, 0, NULL, 0));
		EXPECT_ONE_WC(c, 0x41, IBV_WC_SEND, -1);
		EXPECT_ONE_WC(s, 0x40, IBV_WC_RECV, sz);
		ASSERT_PATTERN(s->buf + XW_HALF, sz, seed + 10 + i, "Send");
		nw[0] = xw_cut(want[0], nw[0], 18, sz, ps);
	}

	usleep(50000);
	xm_cap_drain(self->cap);
	st[0] = &self->cap->ini;
	st[1] = &self->cap->rsp;
	fr[0] = xm_frame(st[0], "MPA ID Req Frame");
	fr[1] = xm_frame(st[1], "MPA ID Rep Frame");
	ASSERT_TRUE(fr[0].ok && fr[1].ok) TH_LOG("start-up frames not captured");
	for (d = 0; d < 2; d++) {
		struct xm_mrk_stats ms = { 0 };

		off = fr[d].end;
		while (ng[d] < 4 * XW_EDGES &&
		       xm_fpdu(st[d], fr[d].end, variant->mrk, &off, &f, &ms)) {
			got[d][ng[d]++] = f.ulpdu_len;
			if (variant->crc)
				EXPECT_EQ(f.crc_calc, f.crc_wire)
					TH_LOG("%s FPDU %d: bad CRC",
					       d ? "responder" : "initiator",
					       ng[d] - 1);
		}
		EXPECT_EQ(0, ms.bad) TH_LOG("%s", ms.err);
		xw_fpdu_fit(st[d], fr[d].end, fr[d].end, variant->mrk, emss,
			    &fit[d]);
		EXPECT_EQ(0, fit[d].over) TH_LOG("%s", fit[d].err);
		TH_LOG("%s: %d FPDUs, longest %zu bytes on the wire (ULPDU %u), EMSS %u",
		       d ? "responder" : "initiator", fit[d].n,
		       fit[d].longest, fit[d].max_ulpdu, emss);
		EXPECT_EQ(nw[d], ng[d]);
		for (k = 0; k < nw[d] && k < ng[d]; k++)
			if (want[d][k] != got[d][k]) {
				EXPECT_EQ(want[d][k], got[d][k])
					TH_LOG("%s FPDU %d: ULPDU_Length",
					       d ? "responder" : "initiator", k);
				break;
			}
	}
	/* The largest FPDUs are exactly MULPDU long in both directions. */
	EXPECT_EQ(mulpdu, fit[0].max_ulpdu);
	EXPECT_EQ(mulpdu, fit[1].max_ulpdu);
}

/*
 * The test's own FPDU encoder for synthetic captures (RFC 5044 sections
 * 4.1, 4.3): a tagged Write FPDU of ulpdu bytes appended to s, with a
 * marker at every 512th byte from start when mrk (FPDUPTR 0 for one just
 * before the FPDU). Header bytes as on the wire, payload and CRC zero.
 */
static void xw_synth_marker(struct xm_stream *s, size_t ptr)
{
	uint8_t *m = s->buf + s->len;

	m[0] = 0;
	m[1] = 0;
	m[2] = (uint8_t)(ptr >> 8);
	m[3] = (uint8_t)ptr;
	s->len += XM_MRK_LEN;
}

static void xw_synth_fpdu(struct xm_stream *s, size_t start, bool mrk,
			  unsigned int ulpdu)
{
	const uint8_t hdr[4] = { (uint8_t)(ulpdu >> 8), (uint8_t)ulpdu,
				 0xc1, 0x40 };	/* T, L, DV 1; RV 1, Write */
	size_t total = ((2 + ulpdu + 3) & ~3u) + 4, fpdu, k;

	if (mrk && (s->len - start) % XM_MRK_INTERVAL == 0)
		xw_synth_marker(s, 0);
	fpdu = s->len;
	for (k = 0; k < total; k++) {
		if (mrk && (s->len - start) % XM_MRK_INTERVAL == 0)
			xw_synth_marker(s, s->len - fpdu);
		s->buf[s->len++] = k < 4 ? hdr[k] : 0;
	}
}

/* The fit of one synthetic FPDU of ulpdu bytes placed at stream byte at. */
static struct xw_fit xw_fit_one(struct xm_stream *s, size_t at, bool mrk,
				size_t emss, unsigned int ulpdu)
{
	struct xw_fit r;

	memset(s->buf, 0xee, at);
	s->len = at;
	xw_synth_fpdu(s, 0, mrk, ulpdu);
	xw_fpdu_fit(s, 0, at, mrk, emss, &r);
	return r;
}

/*
 * MPA-23: the fit check of xw_wire() against synthetic captures, so that
 * it can be seen to fail. Without markers at EMSS 1448 a ULPDU of 1442
 * (RFC 5044 section 4.5's MULPDU) makes a 1448-byte FPDU and fits, 1443
 * (three pad bytes: 1452) does not, nor at EMSS 1449 (FPDUs are whole
 * words: the "EMSS mod 4" of the formula), where 1442 still does. With
 * markers at EMSS 1448 a ULPDU of 1430 fits wherever it starts in the 512-byte
 * marker period; 1434 does not when it starts on a marker (three markers
 * in its 1452 bytes), yet does one word later (two markers, 1448 bytes):
 * the check measures the wire, not the worst case of the formula.
 */
TEST(checker_fpdu_fit)
{
	struct xm_stream *s = calloc(1, sizeof(*s));
	struct xm_mrk_stats ms = { 0 };
	struct xm_fpdu f;
	struct xw_fit r;
	size_t at, off;
	int bad_at = -1;

	ASSERT_NE(NULL, s);
	r = xw_fit_one(s, 0, false, 1448, 1442);
	EXPECT_EQ(1, r.n);
	EXPECT_EQ(1448, r.longest);
	EXPECT_EQ(0, r.over);
	r = xw_fit_one(s, 0, false, 1448, 1443);
	EXPECT_EQ(1452, r.longest);
	EXPECT_EQ(1, r.over);
	TH_LOG("caught: %s", r.err);
	r = xw_fit_one(s, 0, false, 1449, 1443);
	EXPECT_EQ(1, r.over);
	r = xw_fit_one(s, 0, false, 1449, 1442);
	EXPECT_EQ(0, r.over);

	for (at = 0; at < XM_MRK_INTERVAL; at += 4) {
		r = xw_fit_one(s, at, true, 1448, 1430);
		EXPECT_EQ(1, r.n);
		if (r.over && bad_at < 0)
			bad_at = (int)at;
	}
	EXPECT_EQ(-1, bad_at) TH_LOG("ULPDU 1430 too long at marker phase %d",
				     bad_at);
	r = xw_fit_one(s, 0, true, 1448, 1430);
	EXPECT_EQ(1448, r.longest);
	r = xw_fit_one(s, 0, true, 1448, 1434);
	EXPECT_EQ(1452, r.longest);
	EXPECT_EQ(1, r.over);
	TH_LOG("caught: %s", r.err);
	r = xw_fit_one(s, 4, true, 1448, 1434);
	EXPECT_EQ(1448, r.longest);
	EXPECT_EQ(0, r.over);

	/* The encoder's markers are right (else the above proves little). */
	s->len = 0;
	xw_synth_fpdu(s, 0, true, 1434);
	xw_synth_fpdu(s, 0, true, 600);
	off = 0;
	while (xm_fpdu(s, 0, true, &off, &f, &ms))
		;
	EXPECT_EQ(s->len, off);
	EXPECT_EQ(0, ms.bad) TH_LOG("%s", ms.err);
	EXPECT_EQ(1, ms.at_start);
	/* A stream of several: the second, too long, is the one named. */
	s->len = 0;
	xw_synth_fpdu(s, 0, true, 1430);
	xw_synth_fpdu(s, 0, true, 1500);
	xw_synth_fpdu(s, 0, true, 100);
	xw_fpdu_fit(s, 0, 0, true, 1448, &r);
	EXPECT_EQ(3, r.n);
	EXPECT_EQ(1, r.over);
	EXPECT_EQ(1500, r.max_ulpdu);
	EXPECT_NE(NULL, strstr(r.err, "FPDU 1 ")) TH_LOG("%s", r.err);
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
