/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The checks xiw_wire.c and xiw_interop.c run over one connected pair,
 * as functions taking the harness's _metadata (include after
 * kselftest_harness.h): data of several sizes through Send (both ways),
 * Write-then-Send and Read; zero-length messages; and what the start-up
 * and the first FPDUs looked like on lo.
 */
#ifndef XIW_WIRE_CHECKS_H
#define XIW_WIRE_CHECKS_H

#include "xiw_rdma_util.h"
#include "xiw_mpa_util.h"

#define XW_TIMEOUT	120
#define XW_MAX		(1UL << 20)
#define XW_HALF		(XW_MAX + 4096)	/* each buffer: source | sink */
#define XW_BUFLEN	(2 * XW_HALF)

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

/*
 * Describe what is at buf + bad instead of the pattern: how long the wrong
 * run is, whether it is zeros (never placed) or bytes of the message from
 * another offset (placed or sent from the wrong place), in units of the
 * 1424-byte Send FPDU payload at MSS 1448 (xiw_rdma.c).
 */
static const char *xw_diagnose(const uint8_t *buf, size_t len, uint64_t seed,
			       long bad)
{
	static char s[256];
	uint8_t *want = malloc(len);
	size_t run = 0, zeros = 0, k = 32, i;
	const uint8_t *hit;
	long from = -1;

	if (!want)
		return "no memory to diagnose";
	xr_fill(want, len, seed);
	for (i = (size_t)bad; i < len && buf[i] != want[i]; i++, run++)
		zeros += !buf[i];
	if ((size_t)bad + k > len)
		k = len - (size_t)bad;
	hit = memmem(want, len, buf + bad, k);
	if (hit)
		from = (long)(hit - want);
	snprintf(s, sizeof(s),
		 "offset %ld (= %ld x 1424 + %ld): %zu wrong bytes from there (%zu zero); "
		 "the %zu bytes there are the message's bytes at %ld (%+ld)",
		 bad, bad / 1424, bad % 1424, run, zeros, k, from,
		 from < 0 ? 0 : from - bad);
	free(want);
	return s;
}

/* Data at buf equals the pattern of seed over len bytes; what says where. */
#define ASSERT_PATTERN(buf, len, seed, what) do {			\
	long __bad = xr_check((buf), (len), (seed));			\
	ASSERT_EQ(-1, __bad) TH_LOG("%s, %zu bytes: %s", (what), (size_t)(len), \
				    xw_diagnose((buf), (len), (seed), __bad)); \
} while (0)

/* Send each size from c to s, then from s to c; bytes checked. */
static void __attribute__((unused))
xw_send_both_ways(struct __test_metadata *_metadata, struct xr_side *c,
		  struct xr_side *s, uint64_t seed0)
{
	struct xr_side *from[2] = { c, s }, *to[2] = { s, c };
	size_t i;
	int d;

	for (d = 0; d < 2; d++) {
		for (i = 0; i < XW_NSIZES; i++) {
			size_t sz = xw_sizes[i];
			uint64_t seed = seed0 + 8 * i + d;

			xr_fill(from[d]->buf, sz, seed);
			ASSERT_EQ(0, xr_recv(to[d], 0x100 + i, XW_HALF, sz));
			ASSERT_EQ(0, xr_post(from[d], IBV_WR_SEND, 0x200 + i, 0,
					     sz, 0, NULL, 0));
			EXPECT_ONE_WC(from[d], 0x200 + i, IBV_WC_SEND, -1);
			EXPECT_ONE_WC(to[d], 0x100 + i, IBV_WC_RECV, sz);
			ASSERT_PATTERN(to[d]->buf + XW_HALF, sz, seed,
				       d ? "Send server to client" :
				       "Send client to server");
		}
	}
}

/* ORD-02: each Write's data is at the sink when the next Send arrives. */
static void __attribute__((unused))
xw_write_then_send(struct __test_metadata *_metadata, struct xr_side *c,
		   struct xr_side *s, uint64_t seed)
{
	struct ibv_wc wc[2];
	size_t i;

	for (i = 0; i < XW_NSIZES; i++) {
		size_t sz = xw_sizes[i];

		xr_fill(c->buf, sz, seed + i);
		ASSERT_EQ(0, xr_recv(s, 0x300 + i, 0, 8));
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_WRITE, 0x400 + i, 0, sz, 0,
				     s, XW_HALF));
		ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0x500 + i, XW_HALF, 8, 0,
				     NULL, 0));
		EXPECT_ONE_WC(s, 0x300 + i, IBV_WC_RECV, 8);
		ASSERT_PATTERN(s->buf + XW_HALF, sz, seed + i, "Write");
		ASSERT_EQ(2, xr_poll(c->cq, wc, 2, XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
		ASSERT_EQ(IBV_WC_RDMA_WRITE, wc[0].opcode);
		ASSERT_EQ(IBV_WC_SUCCESS, wc[1].status) TH_LOG("%s", xr_wc_str(wc + 1));
		ASSERT_EQ(IBV_WC_SEND, wc[1].opcode);
	}
}

/* RDMAP-04: Reads of each size, c pulling s's bytes. */
static void __attribute__((unused))
xw_read(struct __test_metadata *_metadata, struct xr_side *c,
	struct xr_side *s, uint64_t seed)
{
	size_t i;

	for (i = 0; i < XW_NSIZES; i++) {
		size_t sz = xw_sizes[i];

		xr_fill(s->buf, sz, seed + i);
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, 0x600 + i, XW_HALF,
				     sz, 0, s, 0));
		EXPECT_ONE_WC(c, 0x600 + i, IBV_WC_RDMA_READ, -1);
		ASSERT_PATTERN(c->buf + XW_HALF, sz, seed + i, "Read");
	}
}

/*
 * MPA-12 (RFC 5044 section 7.1.2): without a peer-to-peer RTR the
 * responder sends no FPDU before it has received one, so an application
 * whose responder speaks first must let the initiator send something
 * first. An 8-byte Send from c (the initiator) to s.
 */
static void __attribute__((unused))
xw_initiator_first(struct __test_metadata *_metadata, struct xr_side *c,
		   struct xr_side *s)
{
	ASSERT_EQ(0, xr_recv(s, 0x1f, XW_HALF, 8));
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0x1f, 0, 8, 0, NULL, 0));
	EXPECT_ONE_WC(c, 0x1f, IBV_WC_SEND, -1);
	EXPECT_ONE_WC(s, 0x1f, IBV_WC_RECV, 8);
}

/* DDP-05, RDMAP-02: zero-length Send, Write and Read, then 8 real bytes. */
static void __attribute__((unused))
xw_zero_length(struct __test_metadata *_metadata, struct xr_side *c,
	       struct xr_side *s, uint64_t seed)
{
	ASSERT_EQ(0, xr_recv(s, 1, 0, 0));
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 2, 0, 0, 0, NULL, 0));
	EXPECT_ONE_WC(c, 2, IBV_WC_SEND, -1);
	EXPECT_ONE_WC(s, 1, IBV_WC_RECV, 0);
	ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_WRITE, 3, 0, 0, 0, s, 0));
	EXPECT_ONE_WC(c, 3, IBV_WC_RDMA_WRITE, -1);
	ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, 4, 0, 0, 0, s, 0));
	EXPECT_ONE_WC(c, 4, IBV_WC_RDMA_READ, -1);
	/* The connection still carries data. */
	xr_fill(c->buf, 8, seed);
	ASSERT_EQ(0, xr_recv(s, 5, XW_HALF, 8));
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 6, 0, 8, 0, NULL, 0));
	EXPECT_ONE_WC(c, 6, IBV_WC_SEND, -1);
	EXPECT_ONE_WC(s, 5, IBV_WC_RECV, 8);
	ASSERT_PATTERN(s->buf + XW_HALF, 8, seed, "Send after zero-length");
}

/*
 * FPDUs in both directions for xw_wire(): a 100-byte Send and a 4096-byte
 * Write from c, a 100-byte Send back from s.
 */
static void __attribute__((unused))
xw_wire_traffic(struct __test_metadata *_metadata, struct xr_side *c,
		struct xr_side *s, uint64_t seed)
{
	struct ibv_wc wc[3];
	int i;

	xr_fill(c->buf, 4096, seed);
	xr_fill(s->buf, 100, seed + 1);
	ASSERT_EQ(0, xr_recv(s, 1, XW_HALF, 100));
	ASSERT_EQ(0, xr_recv(c, 2, XW_HALF, 100));
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 3, 0, 100, 0, NULL, 0));
	ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_WRITE, 4, 0, 4096, 0, s, 2 * 4096));
	EXPECT_ONE_WC(s, 1, IBV_WC_RECV, 100);
	ASSERT_EQ(0, xr_post(s, IBV_WR_SEND, 5, 0, 100, 0, NULL, 0));
	/* c's CQ: its Send, its Write, its receive, in any order. */
	ASSERT_EQ(3, xr_poll(c->cq, wc, 3, XR_WAIT_MS));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(wc + i));
		ASSERT_TRUE(wc[i].wr_id >= 2 && wc[i].wr_id <= 4);
	}
	EXPECT_ONE_WC(s, 5, IBV_WC_SEND, -1);
	ASSERT_PATTERN(c->buf + XW_HALF, 100, seed + 1, "Send server to client");
}

/*
 * The FPDUs of s from off, markers counted from start when mrk.
 * MPA-23 (RFC 5044 sections 4.5 and 5.1): DDP sizes its records to the
 * MULPDU so that each FPDU fits one TCP segment of EMSS bytes (FPDU
 * Alignment), and with markers the MULPDU leaves room for the most
 * markers such a segment can hold. The rule checked here is that fit
 * itself, measured on the wire rather than through the MULPDU formula:
 * the bytes of an FPDU in the stream -- from the marker just before its
 * ULPDU_Length (FPDUPTR 0, section 4.3: it goes out in the FPDU's
 * segment) or from ULPDU_Length, through the last CRC octet, with every
 * marker inside it -- number at most EMSS.
 */
struct xw_fit {
	int n, over;		/* FPDUs seen, those longer than the EMSS */
	size_t longest;		/* wire bytes of the longest, markers in */
	unsigned int max_ulpdu;	/* the largest ULPDU_Length */
	char err[160];		/* what the first too long one was */
};

static void __attribute__((unused))
xw_fpdu_fit(const struct xm_stream *s, size_t start, size_t off, bool mrk,
	    size_t emss, struct xw_fit *r)
{
	size_t at = off, len;
	struct xm_fpdu f;

	memset(r, 0, sizeof(*r));
	while (xm_fpdu(s, start, mrk, &off, &f, NULL)) {
		len = off - at;
		if (len > r->longest)
			r->longest = len;
		if (f.ulpdu_len > r->max_ulpdu)
			r->max_ulpdu = f.ulpdu_len;
		if (len > emss && !r->over++)
			snprintf(r->err, sizeof(r->err),
				 "FPDU %d at stream byte %zu (opcode %d, ULPDU %u, %d markers) is %zu bytes on the wire, EMSS %zu",
				 r->n, at, f.opcode, f.ulpdu_len, f.markers,
				 len, emss);
		r->n++;
		at = off;
	}
}

/* What the start-up should look like on the wire. */
struct xw_expect {
	int rev;		/* of the Request and the Reply */
	int req_c, rep_c;	/* C bit in Request, Reply: 0, 1, -1 any */
	bool crc;		/* CRC32c in use: FPDU CRCs checked */
	int rtr;		/* p2p_rtr the initiator offers (0 none) */
	int rd;			/* IRD and ORD in both frames, -1 unchecked */
	bool req_m, rep_m;	/* M bit in Request, Reply (MPA-04) */
	bool mrk_places;	/* markers seen before an FPDU, in a header,
				 * in a payload and between pad and CRC
				 */
	bool fit;		/* every FPDU fits the EMSS (xw_fpdu_fit) */
};

/* The RTR opcode each p2p_rtr value offers (admin-guide.rst). */
static const int xw_rtr_opcode[] = { -1, XM_OP_SEND, XM_OP_WRITE, XM_OP_READ_REQ };

/*
 * Check every complete FPDU of a stream from off: the DDP and RDMAP
 * version bits (DDP-01), the CRC32c when CRC is on (MPA-05, MPA-42) and,
 * with mrk, every marker (MPA-13, MPA-30/31), counted in *ms. Returns
 * how many FPDUs were seen; *first gets the first one, *wr the payload
 * bytes of the tagged Write FPDUs (by ULPDU_Length, markers left out).
 */
static int xw_check_fpdus(struct __test_metadata *_metadata,
			  const struct xm_stream *s, size_t off, bool crc,
			  bool mrk, const char *who, struct xm_fpdu *first,
			  struct xm_mrk_stats *ms, size_t *wr)
{
	size_t start = off;
	struct xm_fpdu f;
	int n = 0;

	memset(ms, 0, sizeof(*ms));
	*wr = 0;
	while (xm_fpdu(s, start, mrk, &off, &f, ms)) {
		if (!n)
			*first = f;
		if (f.tagged && f.opcode == XM_OP_WRITE)
			*wr += f.ulpdu_len - 14u;
		if (!mrk)
			EXPECT_EQ(0, f.markers);
		EXPECT_EQ(1, f.ddp & 3) TH_LOG("%s FPDU %d: DDP control %#x",
					       who, n, f.ddp);
		EXPECT_EQ(0x40, f.rdmap & 0xc0)
			TH_LOG("%s FPDU %d: RDMAP control %#x", who, n, f.rdmap);
		if (crc)
			EXPECT_EQ(f.crc_calc, f.crc_wire)
				TH_LOG("%s FPDU %d (opcode %d, ULPDU %u bytes): CRC on the wire %08x, computed %08x",
				       who, n, f.opcode, f.ulpdu_len, f.crc_wire,
				       f.crc_calc);
		n++;
	}
	return n;
}

/*
 * The start-up as captured on lo, after xw_wire_traffic(): Request and
 * Reply say what e expects (MPA-01, MPA-04, MPA-05, E-01, E-02, E-03,
 * E-06), the initiator's first FPDU is the RTR offered (E-06, MPA-12),
 * and every FPDU has a valid CRC32c when CRC is in use.
 */
static void __attribute__((unused))
xw_wire(struct __test_metadata *_metadata, struct xm_cap *cap,
	const struct xw_expect *e)
{
	struct xm_fpdu fi = { 0 }, fr = { 0 };
	struct xm_mrk_stats mi, mr;
	struct xm_frame req, rep;
	size_t wi, wr;
	int ni, nr, want;

	usleep(50000);
	xm_cap_drain(cap);
	req = xm_frame(&cap->ini, "MPA ID Req Frame");
	rep = xm_frame(&cap->rsp, "MPA ID Rep Frame");
	ASSERT_TRUE(req.ok) TH_LOG("no MPA Request captured (%zu bytes from the initiator)",
				   cap->ini.len);
	ASSERT_TRUE(rep.ok) TH_LOG("no MPA Reply captured (%zu bytes from the responder)",
				   cap->rsp.len);
	TH_LOG("Request: flags %#x rev %d pd %u %s ird %#x ord %#x; Reply: flags %#x rev %d pd %u %s ird %#x ord %#x",
	       req.flags, req.rev, req.pd_len, req.v2 ? "v2" : "plain", req.ird,
	       req.ord, rep.flags, rep.rev, rep.pd_len, rep.v2 ? "v2" : "plain",
	       rep.ird, rep.ord);

	EXPECT_EQ(e->rev, req.rev);
	EXPECT_EQ(e->rev, rep.rev);
	EXPECT_EQ(0, req.flags & XM_F_R);
	EXPECT_EQ(0, rep.flags & XM_F_R);
	EXPECT_EQ(e->req_m ? XM_F_M : 0, req.flags & XM_F_M);
	EXPECT_EQ(e->rep_m ? XM_F_M : 0, rep.flags & XM_F_M);
	if (e->req_c >= 0)
		EXPECT_EQ(e->req_c ? XM_F_C : 0, req.flags & XM_F_C);
	if (e->rep_c >= 0)
		EXPECT_EQ(e->rep_c ? XM_F_C : 0, rep.flags & XM_F_C);
	EXPECT_EQ(e->rev == 2, req.v2);
	EXPECT_EQ(e->rev == 2, rep.v2);
	if (e->rev == 2) {
		uint16_t b = e->rtr == 1 ? XM_V2_B : 0;
		uint16_t cd = e->rtr == 2 ? XM_V2_C : e->rtr == 3 ? XM_V2_D : 0;

		EXPECT_EQ(e->rtr ? XM_V2_A | b : 0, req.ird & (XM_V2_A | XM_V2_B));
		EXPECT_EQ(cd, req.ord & (XM_V2_C | XM_V2_D));
		EXPECT_EQ(e->rtr ? XM_V2_A | b : 0, rep.ird & (XM_V2_A | XM_V2_B));
		EXPECT_EQ(cd, rep.ord & (XM_V2_C | XM_V2_D));
		if (e->rd >= 0) {
			EXPECT_EQ(e->rd, req.ird & XM_V2_MASK);
			EXPECT_EQ(e->rd, req.ord & XM_V2_MASK);
			EXPECT_EQ(e->rd, rep.ird & XM_V2_MASK);
			EXPECT_EQ(e->rd, rep.ord & XM_V2_MASK);
		}
	}

	/* Markers go where the receiver asked: M of the other frame. */
	ni = xw_check_fpdus(_metadata, &cap->ini, req.end, e->crc, e->rep_m,
			    "initiator", &fi, &mi, &wi);
	nr = xw_check_fpdus(_metadata, &cap->rsp, rep.end, e->crc, e->req_m,
			    "responder", &fr, &mr, &wr);
	TH_LOG("FPDUs: %d from the initiator (first: opcode %d, ULPDU %u bytes, CRC %08x), %d from the responder (first: opcode %d, CRC %08x)",
	       ni, fi.opcode, fi.ulpdu_len, fi.crc_wire, nr, fr.opcode,
	       fr.crc_wire);
	TH_LOG("markers from the initiator: %d before an FPDU, %d in a header, %d in a payload, %d in a pad, %d before a CRC, %d bad",
	       mi.at_start, mi.in_hdr, mi.in_payload, mi.in_pad, mi.before_crc,
	       mi.bad);
	TH_LOG("markers from the responder: %d before an FPDU, %d in a header, %d in a payload, %d in a pad, %d before a CRC, %d bad",
	       mr.at_start, mr.in_hdr, mr.in_payload, mr.in_pad, mr.before_crc,
	       mr.bad);
	EXPECT_EQ(0, mi.bad) TH_LOG("initiator: %s", mi.err);
	EXPECT_EQ(0, mr.bad) TH_LOG("responder: %s", mr.err);
	/* MPA-13: a marker leads full operation in a direction with them. */
	EXPECT_EQ(e->rep_m, e->rep_m && fi.markers && mi.at_start);
	EXPECT_EQ(e->req_m, e->req_m && fr.markers && mr.at_start);
	/* ULPDU_Length leaves markers out: the Write's bytes add up. */
	EXPECT_EQ(4096, wi);
	/*
	 * A pad starts right after the ULPDU, never four-aligned unless it
	 * is empty, and markers are four-aligned: none may fall in a pad.
	 */
	EXPECT_EQ(0, mi.in_pad + mr.in_pad);
	if (e->mrk_places) {
		EXPECT_LT(0, mi.at_start + mr.at_start);
		EXPECT_LT(0, mi.in_hdr + mr.in_hdr);
		EXPECT_LT(0, mi.in_payload + mr.in_payload);
		EXPECT_LT(0, mi.before_crc + mr.before_crc);
	}
	if (e->fit) {
		unsigned int emss = xm_cap_emss(cap);
		struct xw_fit ti, tr;

		ASSERT_LT(0, emss) TH_LOG("no MSS option in the captured handshake");
		xw_fpdu_fit(&cap->ini, req.end, req.end, e->rep_m, emss, &ti);
		xw_fpdu_fit(&cap->rsp, rep.end, rep.end, e->req_m, emss, &tr);
		TH_LOG("EMSS %u (MSS options %u/%u, timestamps %d/%d): longest FPDU %zu bytes (ULPDU %u) from the initiator, %zu (ULPDU %u) from the responder",
		       emss, cap->syn_mss[0], cap->syn_mss[1], cap->syn_ts[0],
		       cap->syn_ts[1], ti.longest, ti.max_ulpdu, tr.longest,
		       tr.max_ulpdu);
		EXPECT_EQ(0, ti.over) TH_LOG("initiator: %s", ti.err);
		EXPECT_EQ(0, tr.over) TH_LOG("responder: %s", tr.err);
	}
	/* A 100-byte Send and a 4096-byte Write at MULPDU 1442: 4 or more. */
	ASSERT_LE(4, ni);
	ASSERT_LE(1, nr);
	want = e->rev == 2 ? xw_rtr_opcode[e->rtr] : -1;
	if (want >= 0) {
		EXPECT_EQ(want, fi.opcode);
		/* Headers only: 18 untagged, 14 tagged, 18 + 28 Read Request. */
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

/* For a failed test: the opcodes of the first FPDUs each way, as captured. */
static void __attribute__((unused))
xw_log_wire(struct __test_metadata *_metadata, struct xm_cap *cap)
{
	struct xm_stream *st[2] = { &cap->ini, &cap->rsp };
	const char *key[2] = { "MPA ID Req Frame", "MPA ID Rep Frame" };
	bool mrk[2];
	char line[256];
	struct xm_fpdu f;
	struct xm_frame fr;
	size_t off, k;
	int d, n;

	if (!cap || cap->fd < 0)
		return;
	usleep(50000);
	xm_cap_drain(cap);
	/* Markers in a direction when the other side's frame has M. */
	mrk[0] = xm_frame(st[1], key[1]).flags & XM_F_M;
	mrk[1] = xm_frame(st[0], key[0]).flags & XM_F_M;
	for (d = 0; d < 2; d++) {
		fr = xm_frame(st[d], key[d]);
		k = (size_t)snprintf(line, sizeof(line), "%s sent %zu bytes; FPDU opcodes:",
				     d ? "responder" : "initiator", st[d]->len);
		off = fr.end;
		for (n = 0; fr.ok && n < 24 &&
		     xm_fpdu(st[d], fr.end, mrk[d], &off, &f, NULL) &&
		     k < sizeof(line) - 8; n++)
			k += (size_t)snprintf(line + k, sizeof(line) - k, " %d", f.opcode);
		TH_LOG("%s", line);
	}
}

#endif /* XIW_WIRE_CHECKS_H */
