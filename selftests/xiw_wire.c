// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw on the wire under every MPA set-up its module parameters select
 * (admin-guide.rst): mpa_crc on and off, mpa_rev 1, and mpa_rev 2 with
 * each p2p_rtr (0 none, 1 zero-length Send, 2 Write, 3 Read). Both ends
 * are xiw, in this one process over 10.99.0.1 on a dummy netdev; each
 * variant sets the parameters before it connects and restores the
 * documented defaults afterwards.
 *
 * Per variant: Send (both ways), Write followed by Send, and Read of 1,
 * 4096, 65536 + 3 and 1 MiB bytes with byte-for-byte checks; zero-length
 * Send, Write and Read (DDP-05, RDMAP-02); and the start-up as captured on
 * lo: the Request and Reply frames (MPA-01, MPA-05, E-01, E-02, E-06),
 * the ready-to-receive message (E-06), and every FPDU's framing and
 * CRC32c (MPA-20, MPA-42) when CRC was negotiated.
 *
 * The loopback MTU is 1500 during these tests, so FPDUs cross TCP
 * segments as on a real network (MPA-23, MPA-24).
 *
 * Requirement IDs are those of the project's iWARP conformance checklist.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"
#include "xiw_mpa_util.h"

#define XW_TIMEOUT	120
#define XW_MAX		(1UL << 20)
#define XW_HALF		(XW_MAX + 4096)

static const size_t xw_sizes[] = { 1, 4096, 65536 + 3, XW_MAX };
#define XW_NSIZES	(sizeof(xw_sizes) / sizeof(xw_sizes[0]))

/* Expect exactly one successful completion on side's CQ. */
#define EXPECT_ONE_WC(side, id, op, len) do {				\
	struct ibv_wc __w;						\
	ASSERT_EQ(1, xr_poll((side)->cq, &__w, 1, XR_WAIT_MS))		\
		TH_LOG("no completion for wr_id %#llx in %d ms",	\
		       (unsigned long long)(id), XR_WAIT_MS);		\
	ASSERT_EQ(IBV_WC_SUCCESS, __w.status) TH_LOG("%s", xr_wc_str(&__w)); \
	ASSERT_EQ((uint64_t)(id), __w.wr_id) TH_LOG("%s", xr_wc_str(&__w)); \
	ASSERT_EQ(op, __w.opcode) TH_LOG("%s", xr_wc_str(&__w));	\
	if ((long)(len) >= 0)						\
		ASSERT_EQ((uint32_t)(len), __w.byte_len)		\
			TH_LOG("%s", xr_wc_str(&__w));			\
} while (0)

/* Data at buf equals the pattern of seed over len bytes; what says where. */
#define ASSERT_PATTERN(buf, len, seed, what) do {			\
	long __bad = xr_check((buf), (len), (seed));			\
	ASSERT_EQ(-1, __bad) TH_LOG("%s: first wrong byte at offset %ld of %zu", \
				    (what), __bad, (size_t)(len));	\
} while (0)

/* The parameters and their documented defaults (admin-guide.rst). */
static const struct { const char *name, *def; } xw_params[] = {
	{ "mpa_crc", "Y" }, { "mpa_rev", "2" }, { "p2p_rtr", "2" },
	{ "mpa_timeout_ms", "10000" }, { "ka_idle_s", "30" },
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

FIXTURE_SETUP(mpa)
{
	struct xr_opts o = { .buflen = 2 * XW_HALF, .wr = 16, .sge = 1,
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
	ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
		TH_LOG("crc %d rev %d rtr %d: %s", variant->crc, variant->rev,
		       variant->rtr, self->net.err);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(mpa)
{
	xm_cap_close(self->cap);
	free(self->cap);
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xm_params_default();
}

/* Stop capturing: the data tests need no copy of every packet. */
static void no_capture(struct xm_cap *cap)
{
	xm_cap_close(cap);
}

/* Send from a to b of each size, into b's second half; bytes checked. */
TEST_F_TIMEOUT(mpa, send_both_ways, XW_TIMEOUT)
{
	struct xr_side *from[2] = { self->c, self->s }, *to[2] = { self->s, self->c };
	size_t i;
	int d;

	no_capture(self->cap);
	for (d = 0; d < 2; d++) {
		for (i = 0; i < XW_NSIZES; i++) {
			size_t sz = xw_sizes[i];
			uint64_t seed = self->seed + 8 * i + d;

			xr_fill(from[d]->buf, sz, seed);
			ASSERT_EQ(0, xr_recv(to[d], 0x100 + i, XW_HALF, sz));
			ASSERT_EQ(0, xr_post(from[d], IBV_WR_SEND, 0x200 + i, 0,
					     sz, 0, NULL, 0));
			EXPECT_ONE_WC(from[d], 0x200 + i, IBV_WC_SEND, -1);
			EXPECT_ONE_WC(to[d], 0x100 + i, IBV_WC_RECV, sz);
			ASSERT_PATTERN(to[d]->buf + XW_HALF, sz, seed,
				       d ? "server to client" : "client to server");
		}
	}
}

/* ORD-*: each Write's data is at the sink when the next Send arrives. */
TEST_F_TIMEOUT(mpa, write_then_send, XW_TIMEOUT)
{
	struct ibv_wc wc[2];
	size_t i;

	no_capture(self->cap);
	for (i = 0; i < XW_NSIZES; i++) {
		size_t sz = xw_sizes[i];

		xr_fill(self->c->buf, sz, self->seed + i);
		ASSERT_EQ(0, xr_recv(self->s, 0x300 + i, 0, 8));
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 0x400 + i, 0,
				     sz, 0, self->s, XW_HALF));
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 0x500 + i, XW_HALF,
				     8, 0, NULL, 0));
		EXPECT_ONE_WC(self->s, 0x300 + i, IBV_WC_RECV, 8);
		ASSERT_PATTERN(self->s->buf + XW_HALF, sz, self->seed + i,
			       "Write");
		ASSERT_EQ(2, xr_poll(self->c->cq, wc, 2, XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
		ASSERT_EQ(IBV_WC_RDMA_WRITE, wc[0].opcode);
		ASSERT_EQ(IBV_WC_SUCCESS, wc[1].status) TH_LOG("%s", xr_wc_str(wc + 1));
		ASSERT_EQ(IBV_WC_SEND, wc[1].opcode);
	}
}

/* RDMAP-04: Reads of each size, the client pulling the server's bytes. */
TEST_F_TIMEOUT(mpa, rdma_read, XW_TIMEOUT)
{
	size_t i;

	no_capture(self->cap);
	for (i = 0; i < XW_NSIZES; i++) {
		size_t sz = xw_sizes[i];

		xr_fill(self->s->buf, sz, self->seed + i);
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 0x600 + i,
				     XW_HALF, sz, 0, self->s, 0));
		EXPECT_ONE_WC(self->c, 0x600 + i, IBV_WC_RDMA_READ, -1);
		ASSERT_PATTERN(self->c->buf + XW_HALF, sz, self->seed + i,
			       "Read");
	}
}

/* DDP-05, RDMAP-02: zero-length Send, Write and Read, then 8 real bytes. */
TEST_F_TIMEOUT(mpa, zero_length, XW_TIMEOUT)
{
	no_capture(self->cap);
	ASSERT_EQ(0, xr_recv(self->s, 1, 0, 0));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 2, 0, 0, 0, NULL, 0));
	EXPECT_ONE_WC(self->c, 2, IBV_WC_SEND, -1);
	EXPECT_ONE_WC(self->s, 1, IBV_WC_RECV, 0);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 3, 0, 0, 0, self->s, 0));
	EXPECT_ONE_WC(self->c, 3, IBV_WC_RDMA_WRITE, -1);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 4, 0, 0, 0, self->s, 0));
	EXPECT_ONE_WC(self->c, 4, IBV_WC_RDMA_READ, -1);
	/* The connection still carries data. */
	xr_fill(self->c->buf, 8, self->seed);
	ASSERT_EQ(0, xr_recv(self->s, 5, XW_HALF, 8));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 6, 0, 8, 0, NULL, 0));
	EXPECT_ONE_WC(self->c, 6, IBV_WC_SEND, -1);
	EXPECT_ONE_WC(self->s, 5, IBV_WC_RECV, 8);
	ASSERT_PATTERN(self->s->buf + XW_HALF, 8, self->seed, "Send");
}

/* The RTR opcode each p2p_rtr value offers (admin-guide.rst). */
static const int rtr_opcode[] = { -1, XM_OP_SEND, XM_OP_WRITE, XM_OP_READ_REQ };

/*
 * Check every complete FPDU of a stream from off: the DDP/RDMAP version
 * bits (DDP-01), and the CRC32c when CRC is on (MPA-05, MPA-42). Returns
 * how many FPDUs were seen; *first gets the first one.
 */
static int check_fpdus(struct __test_metadata *_metadata,
		       const struct xm_stream *s, size_t off, bool crc,
		       const char *who, struct xm_fpdu *first)
{
	struct xm_fpdu f;
	int n = 0;

	while (xm_fpdu(s, &off, &f)) {
		if (!n)
			*first = f;
		EXPECT_EQ(1, f.ddp & 3) TH_LOG("%s FPDU %d: DDP control %#x",
					       who, n, f.ddp);
		EXPECT_EQ(0x40, f.rdmap & 0xc0)
			TH_LOG("%s FPDU %d: RDMAP control %#x", who, n, f.rdmap);
		if (crc)
			EXPECT_EQ(f.crc_calc, f.crc_wire)
				TH_LOG("%s FPDU %d (opcode %d, %u bytes): CRC on the wire %08x, computed %08x",
				       who, n, f.opcode, f.ulpdu_len, f.crc_wire,
				       f.crc_calc);
		n++;
	}
	return n;
}

/*
 * The start-up as seen on lo: the Request says what the parameters ask,
 * the Reply answers in kind, the initiator's first FPDU is the RTR it
 * offered, and FPDUs carry a valid CRC32c when it was negotiated. A Send
 * each way and a Write make FPDUs in both directions.
 */
TEST_F_TIMEOUT(mpa, wire_startup, XW_TIMEOUT)
{
	struct xm_fpdu fi = { 0 }, fr = { 0 };
	struct xm_frame req, rep;
	struct ibv_wc wc[3];
	int ni, nr, want, i;

	xr_fill(self->c->buf, 4096, self->seed);
	xr_fill(self->s->buf, 100, self->seed + 1);
	ASSERT_EQ(0, xr_recv(self->s, 1, XW_HALF, 100));
	ASSERT_EQ(0, xr_recv(self->c, 2, XW_HALF, 100));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 3, 0, 100, 0, NULL, 0));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 4, 0, 4096, 0,
			     self->s, 2 * 4096));
	EXPECT_ONE_WC(self->s, 1, IBV_WC_RECV, 100);
	ASSERT_EQ(0, xr_post(self->s, IBV_WR_SEND, 5, 0, 100, 0, NULL, 0));
	/* The client's CQ: its Send, its Write, its receive, in any order. */
	ASSERT_EQ(3, xr_poll(self->c->cq, wc, 3, XR_WAIT_MS));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(wc + i));
		ASSERT_TRUE(wc[i].wr_id >= 2 && wc[i].wr_id <= 4);
	}
	EXPECT_ONE_WC(self->s, 5, IBV_WC_SEND, -1);
	usleep(50000);
	xm_cap_drain(self->cap);

	req = xm_frame(&self->cap->ini, "MPA ID Req Frame");
	rep = xm_frame(&self->cap->rsp, "MPA ID Rep Frame");
	ASSERT_TRUE(req.ok) TH_LOG("no MPA Request captured (%zu bytes from the initiator)",
				   self->cap->ini.len);
	ASSERT_TRUE(rep.ok) TH_LOG("no MPA Reply captured (%zu bytes from the responder)",
				   self->cap->rsp.len);
	TH_LOG("Request: flags %#x rev %d pd %u v2 %s ird %#x ord %#x; Reply: flags %#x rev %d pd %u ird %#x ord %#x",
	       req.flags, req.rev, req.pd_len, xm_rtr_str(req.ird, req.ord),
	       req.ird, req.ord, rep.flags, rep.rev, rep.pd_len, rep.ird,
	       rep.ord);

	/* MPA-01, MPA-04: revision asked; no markers; not a reject. */
	EXPECT_EQ(variant->rev, req.rev);
	EXPECT_EQ(0, req.flags & (XM_F_M | XM_F_R));
	EXPECT_EQ(0, rep.flags & (XM_F_M | XM_F_R));
	/* MPA-05: C as configured, and the responder (also xiw) agrees. */
	EXPECT_EQ(variant->crc ? XM_F_C : 0, req.flags & XM_F_C);
	EXPECT_EQ(variant->crc ? XM_F_C : 0, rep.flags & XM_F_C);
	/* E-01, E-02: enhanced with rev 2, answered in kind; plain with 1. */
	EXPECT_EQ(variant->rev == 2, req.v2);
	EXPECT_EQ(variant->rev == 2, rep.v2);
	EXPECT_EQ(variant->rev, rep.rev);
	if (variant->rev == 2) {
		uint16_t offer_b = variant->rtr == 1 ? XM_V2_B : 0;
		uint16_t offer_cd = variant->rtr == 2 ? XM_V2_C :
				    variant->rtr == 3 ? XM_V2_D : 0;

		/* E-06: A with exactly the one RTR asked for; echoed. */
		EXPECT_EQ(variant->rtr ? XM_V2_A | offer_b : 0,
			  req.ird & (XM_V2_A | XM_V2_B));
		EXPECT_EQ(offer_cd, req.ord & (XM_V2_C | XM_V2_D));
		EXPECT_EQ(variant->rtr ? XM_V2_A | offer_b : 0,
			  rep.ird & (XM_V2_A | XM_V2_B));
		EXPECT_EQ(offer_cd, rep.ord & (XM_V2_C | XM_V2_D));
		/* E-03 with rd_atom 4 on both sides. */
		EXPECT_EQ(4, req.ird & XM_V2_MASK);
		EXPECT_EQ(4, req.ord & XM_V2_MASK);
		EXPECT_EQ(4, rep.ird & XM_V2_MASK);
		EXPECT_EQ(4, rep.ord & XM_V2_MASK);
	}

	ni = check_fpdus(_metadata, &self->cap->ini, req.end, variant->crc,
			 "initiator", &fi);
	nr = check_fpdus(_metadata, &self->cap->rsp, rep.end, variant->crc,
			 "responder", &fr);
	TH_LOG("FPDUs: %d from the initiator (first: opcode %d, %u bytes, crc %08x), %d from the responder (first: opcode %d)",
	       ni, fi.opcode, fi.ulpdu_len, fi.crc_wire, nr, fr.opcode);
	/* Send 100 + Write 4096 at MSS 1448 at least 4; the Send back 1. */
	ASSERT_LE(4, ni);
	ASSERT_LE(1, nr);
	want = variant->rev == 2 ? rtr_opcode[variant->rtr] : -1;
	if (want >= 0) {
		/* E-06: exactly one zero-length RTR, first (MPA-12). */
		EXPECT_EQ(want, fi.opcode);
		/* ULPDU = DDP/RDMAP header only: 18 untagged, 14 tagged, 28 Read Request. */
		EXPECT_EQ(want == XM_OP_WRITE ? 14 : want == XM_OP_SEND ? 18 : 46,
			  fi.ulpdu_len);
		if (want == XM_OP_READ_REQ)
			EXPECT_EQ(XM_OP_READ_RESP, fr.opcode);
	} else {
		/* No RTR: the first FPDU is the test's own Send. */
		EXPECT_EQ(XM_OP_SEND, fi.opcode);
		EXPECT_EQ(18 + 100, fi.ulpdu_len);
	}
}

static void __attribute__((destructor)) purge(void)
{
	xm_params_default();
	xr_link_purge();
}

TEST_HARNESS_MAIN
