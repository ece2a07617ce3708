/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * 64 MiB transfers between the two ends of a connected pair, each checked
 * in full: one RDMA Write followed by a Send, one Send into one receive,
 * one RDMA Read. Shared by xiw_rdma (xiw to xiw) and xiw_interop (xiw and
 * siw). Each registers its own 64 MiB buffers on both ends.
 */
#ifndef XIW_BULK_H
#define XIW_BULK_H

#include "xiw_rdma_util.h"

#define XB_LEN		(64UL << 20)

/*
 * One completion on side's CQ, successful, with wr_id id and opcode op.
 * Waits up to eight minutes (xiw_interop gives its bulk tests ten): siw,
 * moving the data, has taken 60 s for 64 MiB under TCG on a loaded
 * host, and on the debug kernel 111 s for a Write and 206 s for a Read
 * it served. These tests are about the data, not the speed (that is
 * make bench).
 */
#define XB_WAIT_MS	(48 * XR_WAIT_MS)

static int xb_one_wc(struct __test_metadata *_metadata, struct xr_side *side,
		     uint64_t id, enum ibv_wc_opcode op, struct ibv_wc *wc)
{
	if (xr_poll(side->cq, wc, 1, XB_WAIT_MS) != 1) {
		TH_LOG("no completion for wr_id %#llx in %d s",
		       (unsigned long long)id, XB_WAIT_MS / 1000);
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != id ||
	    wc->opcode != op) {
		TH_LOG("%s", xr_wc_str(wc));
		return -1;
	}
	return 0;
}

/* The two 64 MiB buffers, source on from, sink on to; freed by xb_free. */
struct xb_bufs {
	uint8_t *src, *dst;
	struct ibv_mr *smr, *dmr;
};

static int xb_alloc(struct __test_metadata *_metadata, struct xb_bufs *b,
		    struct xr_side *from, struct xr_side *to, uint64_t seed)
{
	b->smr = xr_reg(from->pd, XB_LEN, &b->src);
	b->dmr = xr_reg(to->pd, XB_LEN, &b->dst);
	if (!b->smr || !b->dmr) {
		TH_LOG("reg_mr 64 MiB: %s", strerror(errno));
		return -1;
	}
	xr_fill(b->src, XB_LEN, seed);
	memset(b->dst, 0, XB_LEN);	/* nothing stale can pass the check */
	return 0;
}

static void xb_free(struct xb_bufs *b)
{
	if (b->smr)
		ibv_dereg_mr(b->smr);
	if (b->dmr)
		ibv_dereg_mr(b->dmr);
	free(b->src);
	free(b->dst);
}

static int xb_verify(struct __test_metadata *_metadata,
		     const struct xb_bufs *b, uint64_t seed)
{
	long bad = xr_check(b->dst, XB_LEN, seed);

	if (bad >= 0)
		TH_LOG("first wrong byte at offset %ld of %lu", bad, XB_LEN);
	return bad >= 0 ? -1 : 0;
}

/* c writes 64 MiB into s, then sends 8 bytes: s's data is then defined. */
static void __attribute__((unused))
xb_write(struct __test_metadata *_metadata, struct xr_side *c,
	 struct xr_side *s, uint64_t seed)
{
	struct xb_bufs b = {};
	struct ibv_sge g;
	struct ibv_wc wc;
	long long t = now_ms();
	int rc = -1;

	if (xb_alloc(_metadata, &b, c, s, seed))
		goto out;
	g = (struct ibv_sge){ (uintptr_t)b.src, (uint32_t)XB_LEN, b.smr->lkey };
	if (xr_recv(s, 1, 0, 8) ||
	    xr_send_sgl(c, IBV_WR_RDMA_WRITE, 2, &g, 1, IBV_SEND_SIGNALED,
			(uintptr_t)b.dst, b.dmr->rkey) ||
	    xr_post(c, IBV_WR_SEND, 3, 0, 8, 0, NULL, 0)) {
		TH_LOG("post: %s", strerror(errno));
		goto out;
	}
	if (xb_one_wc(_metadata, s, 1, IBV_WC_RECV, &wc) ||
	    xb_one_wc(_metadata, c, 2, IBV_WC_RDMA_WRITE, &wc) ||
	    xb_one_wc(_metadata, c, 3, IBV_WC_SEND, &wc))
		goto out;
	TH_LOG("64 MiB Write + Send: %lld ms", now_ms() - t);
	rc = xb_verify(_metadata, &b, seed);
out:
	xb_free(&b);
	ASSERT_EQ(0, rc);
}

/* c sends 64 MiB into one 64 MiB receive on s. */
static void __attribute__((unused))
xb_send(struct __test_metadata *_metadata, struct xr_side *c,
	struct xr_side *s, uint64_t seed)
{
	struct xb_bufs b = {};
	struct ibv_sge g, r;
	struct ibv_wc wc;
	long long t = now_ms();
	int rc = -1;

	if (xb_alloc(_metadata, &b, c, s, seed))
		goto out;
	g = (struct ibv_sge){ (uintptr_t)b.src, (uint32_t)XB_LEN, b.smr->lkey };
	r = (struct ibv_sge){ (uintptr_t)b.dst, (uint32_t)XB_LEN, b.dmr->lkey };
	if (xr_recv_sgl(s, 4, &r, 1) ||
	    xr_send_sgl(c, IBV_WR_SEND, 5, &g, 1, IBV_SEND_SIGNALED, 0, 0)) {
		TH_LOG("post: %s", strerror(errno));
		goto out;
	}
	if (xb_one_wc(_metadata, s, 4, IBV_WC_RECV, &wc))
		goto out;
	if (wc.byte_len != (uint32_t)XB_LEN) {
		TH_LOG("byte_len %u", wc.byte_len);
		goto out;
	}
	if (xb_one_wc(_metadata, c, 5, IBV_WC_SEND, &wc))
		goto out;
	TH_LOG("64 MiB Send: %lld ms", now_ms() - t);
	rc = xb_verify(_metadata, &b, seed);
out:
	xb_free(&b);
	ASSERT_EQ(0, rc);
}

/* c reads 64 MiB from s's memory. */
static void __attribute__((unused))
xb_read(struct __test_metadata *_metadata, struct xr_side *c,
	struct xr_side *s, uint64_t seed)
{
	struct xb_bufs b = {};
	struct ibv_sge g;
	struct ibv_wc wc;
	long long t = now_ms();
	int rc = -1;

	if (xb_alloc(_metadata, &b, s, c, seed))
		goto out;
	g = (struct ibv_sge){ (uintptr_t)b.dst, (uint32_t)XB_LEN, b.dmr->lkey };
	if (xr_send_sgl(c, IBV_WR_RDMA_READ, 6, &g, 1, IBV_SEND_SIGNALED,
			(uintptr_t)b.src, b.smr->rkey)) {
		TH_LOG("post: %s", strerror(errno));
		goto out;
	}
	if (xb_one_wc(_metadata, c, 6, IBV_WC_RDMA_READ, &wc))
		goto out;
	TH_LOG("64 MiB Read: %lld ms", now_ms() - t);
	rc = xb_verify(_metadata, &b, seed);
out:
	xb_free(&b);
	ASSERT_EQ(0, rc);
}

#endif /* XIW_BULK_H */
