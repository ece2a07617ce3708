// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RDMA data transfer through librdmacm and libibverbs, server and client
 * in this one process over 10.99.0.1 on a dummy netdev: Send/Receive,
 * solicited events, RDMA Write, RDMA Read, scatter/gather lists,
 * zero-length messages, ordering, a Send with no receive posted,
 * disconnect and flush, connection churn and many connections at once,
 * and zero-copy transmit (completion on acknowledgement, retransmission
 * from the application's pages).
 * Requirement IDs (DDP-05, RDMAP-02, ORD-01..03, V-01, V-05, MPA-01,
 * MPA-23) are defined in Documentation/requirements.rst.
 *
 * XIW_TEST_LINK_TYPE=siw runs the same tests against the kernel's siw
 * (build/siw/siw.ko) to validate them; the default is xiw.
 *
 * Message sizes (fixture xfer): 0, 1, a page and a byte less, and sizes
 * around one FPDU. The xfer fixture sets the loopback MTU to 1500 (the
 * TCP stream between two local addresses runs over lo), so the effective
 * MSS is 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps) = 1448 bytes, and by
 * MPA-23 the MULPDU is EMSS - (6 + EMSS mod 4) = 1442: a Send carries at
 * most 1442 - 18 (DDP untagged header incl. RDMAP) = 1424 payload bytes
 * per FPDU, a Write 1442 - 14 = 1428. 1447/1448/1449 sit on the MSS edge,
 * 1424/1425 on the Send FPDU payload edge: one byte more forces one more
 * segment or FPDU. 64 KiB and 1 MiB span many FPDUs; one test moves
 * 64 MiB (slow under TCG, so only once).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"
#include "xiw_mpa_util.h"
#include "xiw_bulk.h"

/* SCALE-02: 1000 connection cycles (XIW_TEST_CHURN overrides). */
#define XR_CHURN_CYCLES	1000
/*
 * SCALE-01: 256 simultaneous connections (XIW_TEST_CONNS overrides). siw
 * handles 16 but not 32 (ibv_create_cq fails with errno ENOSPC, two CQs
 * per connection), so on siw the test uses XR_CONNS_SIW unless
 * XIW_TEST_CONNS is set.
 */
#define XR_CONNS	256
#define XR_CONNS_SIW	16

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

/* Data at buf equals the pattern of seed over len bytes. */
#define ASSERT_PATTERN(buf, len, seed) do {				\
	long __bad = xr_check((buf), (len), (seed));			\
	ASSERT_EQ(-1, __bad) TH_LOG("first wrong byte at offset %ld of %zu", \
				    __bad, (size_t)(len));		\
} while (0)

#define CANARY 0xa5

static size_t half_of(size_t size)
{
	return size < 4096 ? 4096 : (size + 4095) & ~(size_t)4095;
}

/* Everything that can fail in set-up, as one status with a reason. */
static int open_pairs(struct xr_link *l, struct xr_net *n, struct xr_pair *p,
		      int count, const struct xr_opts *o, char *why, size_t len)
{
	long long t0 = now_ms(), t1;

	xr_unlimit_memlock();
	if (xr_link_add(l)) {
		snprintf(why, len, "cannot create %s on %s", l->ibdev, l->netdev);
		return -1;
	}
	t1 = now_ms();
	if (xr_net_init(n) || (count && xr_connect(n, p, count, o))) {
		snprintf(why, len, "%s: %s", l->ibdev, n->err);
		return -1;
	}
	xr_trace("link %lld ms, connect %lld ms", t1 - t0, now_ms() - t1);
	return 0;
}

/*
 * Send 64 bytes at off from client to server and check they arrive: the
 * connection lives. 0, or which step failed.
 */
static int exchange(struct xr_side *c, struct xr_side *s, size_t off,
		    uint64_t seed)
{
	struct ibv_wc wc[2];

	xr_fill(c->buf + off, 64, seed);
	if (xr_recv(s, 0xa11fe, off, 64) ||
	    xr_post(c, IBV_WR_SEND, 0xa11fe, off, 64, 0, NULL, 0))
		return -1;
	if (xr_poll(s->cq, wc, 1, XR_WAIT_MS) != 1 ||
	    xr_poll(c->cq, wc + 1, 1, XR_WAIT_MS) != 1)
		return -2;
	if (wc[0].status || wc[1].status || wc[0].byte_len != 64)
		return -3;
	return xr_check(s->buf + off, 64, seed) == -1 ? 0 : -4;
}

/* ---- the extended CQ: ibv_start_poll() and the ibv_wc_read_*() readers ---- */

FIXTURE(cqex) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
};

/*
 * One connected pair whose CQs or QPs are made by the extended verbs: 0,
 * 1 when siw, which has none of them, refused one (why says which), or
 * -1 with why.
 */
static int open_ex_pair(struct xr_link *l, struct xr_net *n,
			struct xr_pair *p, const struct xr_opts *o, char *why,
			size_t len)
{
	int rc;

	xr_lo_mtu(65536);
	rc = open_pairs(l, n, p, 1, o, why, len);
	if (rc && xr_is_siw() && strstr(why, "_ex:"))
		return 1;
	return rc;
}

FIXTURE_SETUP(cqex)
{
	struct xr_opts o = { .buflen = 65536, .wr = 16, .sge = 2,
			     .rd_atom = 4, .cq_ex = true };
	char why[320] = "";
	int rc = open_ex_pair(&self->link, &self->net, &self->p, &o, why,
			      sizeof(why));

	if (rc == 1)
		XSKIP_SETUP("siw has no extended CQ (%s)", why);
	ASSERT_EQ(0, rc) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(cqex)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

struct cqex_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, src_qp;
	unsigned int wc_flags;
	__be32 imm;
};

/* Up to n completions read with the extended poll, within XR_WAIT_MS. */
static int poll_ex(struct ibv_cq *cq, struct cqex_wc *w, int n)
{
	struct ibv_cq_ex *cx = (struct ibv_cq_ex *)cq;
	struct ibv_poll_cq_attr attr = {};
	long long end = now_ms() + XR_WAIT_MS;
	int got = 0, rc;

	while (got < n && now_ms() < end) {
		rc = ibv_start_poll(cx, &attr);
		if (rc == ENOENT) {
			usleep(1000);
			continue;
		}
		if (rc)
			return -rc;
		do {
			w[got] = (struct cqex_wc){
				.wr_id = cx->wr_id, .status = cx->status,
				.opcode = ibv_wc_read_opcode(cx),
				.byte_len = ibv_wc_read_byte_len(cx),
				.qp_num = ibv_wc_read_qp_num(cx),
				.src_qp = ibv_wc_read_src_qp(cx),
				.wc_flags = ibv_wc_read_wc_flags(cx),
			};
			if (w[got].wc_flags & IBV_WC_WITH_IMM)
				w[got].imm = ibv_wc_read_imm_data(cx);
			got++;
		} while (got < n && !(rc = ibv_next_poll(cx)));
		ibv_end_poll(cx);
		if (rc && rc != ENOENT)
			return -rc;
	}
	return got;
}

/*
 * A Send and a Write with Immediate Data (RFC 7306) arrive; the extended
 * poll reports each as ibv_poll_cq() would, and the requester's own
 * extended CQ serves ibv_poll_cq() as well.
 */
TEST_F(cqex, start_next_end_poll)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	struct ibv_sge g = xr_sge(c, 4096, 64);
	struct ibv_send_wr wr = {
		.wr_id = 12, .sg_list = &g, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(0x12345678),
	}, *bad = NULL;
	struct cqex_wc w[3] = {};
	struct ibv_wc wc;

	xr_fill(c->buf, 100, 7);
	xr_fill(c->buf + 4096, 64, 8);
	ASSERT_EQ(0, xr_recv(s, 1, 0, 100));
	ASSERT_EQ(0, xr_recv(s, 2, 0, 0));
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 11, 0, 100, 0, NULL, 0));
	wr.wr.rdma.remote_addr = (uintptr_t)(s->buf + 4096);
	wr.wr.rdma.rkey = s->mr->rkey;
	ASSERT_EQ(0, ibv_post_send(c->qp, &wr, &bad));

	ASSERT_EQ(2, poll_ex(s->cq, w, 2));
	EXPECT_EQ(1, w[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, w[0].status);
	EXPECT_EQ(IBV_WC_RECV, w[0].opcode);
	EXPECT_EQ(100, w[0].byte_len);
	EXPECT_EQ(s->qp->qp_num, w[0].qp_num);
	EXPECT_EQ(0, w[0].src_qp);
	EXPECT_EQ(0, w[0].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(2, w[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, w[1].status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, w[1].opcode);
	/* The Immediate Data message does not say how long the Write was. */
	EXPECT_EQ(0, w[1].byte_len);
	EXPECT_EQ(IBV_WC_WITH_IMM, w[1].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0x12345678), w[1].imm);
	ASSERT_PATTERN(s->buf, 100, 7);
	ASSERT_PATTERN(s->buf + 4096, 64, 8);
	/* Nothing more, and the poll lock was let go: ibv_poll_cq() works. */
	EXPECT_EQ(0, ibv_poll_cq(s->cq, 1, &wc));

	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(11, wc.wr_id);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll_ex(c->cq, w + 2, 1));
	EXPECT_EQ(12, w[2].wr_id);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, w[2].opcode);
	EXPECT_EQ(IBV_WC_SUCCESS, w[2].status);
}

/* What a software RNIC has no value for is refused, not left unfilled. */
TEST_F(cqex, unsupported_fields_refused)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};

	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->p.srv.id->verbs, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->p.srv.id->verbs, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

/* ---- the extended QP: ibv_wr_start() to ibv_wr_complete() ---- */

FIXTURE(qpex) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct ibv_qp_ex *cx;	/* the client's */
};

FIXTURE_SETUP(qpex)
{
	struct xr_opts o = { .buflen = 65536, .wr = 16, .sge = 2,
			     .rd_atom = 4, .qp_ex = true, .inline_data = 64 };
	char why[320] = "";
	int rc = open_ex_pair(&self->link, &self->net, &self->p, &o, why,
			      sizeof(why));

	if (rc == 1)
		XSKIP_SETUP("siw has no extended QP (%s)", why);
	ASSERT_EQ(0, rc) TH_LOG("%s", why);
	self->cx = ibv_qp_to_qp_ex(self->p.cli.qp);
	ASSERT_NE(NULL, self->cx);
}

FIXTURE_TEARDOWN(qpex)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

/* Nothing completes on cq within ms: the kernel was given nothing. */
static bool cq_stays_empty(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;

	return xr_poll(cq, &wc, 1, ms) == 0;
}

/* A Send of the first 64 bytes of c's buffer, built in cx's batch. */
static void wr_send_64(struct ibv_qp_ex *cx, struct xr_side *c,
		       uint64_t wr_id)
{
	cx->wr_id = wr_id;
	ibv_wr_send(cx);
	ibv_wr_set_sge(cx, c->mr->lkey, (uintptr_t)c->buf, 64);
}

/*
 * One batch of every opcode, with an SGE, an SGE list and inline data:
 * each arrives, completes in order, and the inline source may change as
 * soon as its setter returns.
 */
TEST_F(qpex, batch_of_every_opcode)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	struct ibv_qp_ex *cx = self->cx;
	struct ibv_sge two[2] = { xr_sge(c, 8192, 32), xr_sge(c, 12288, 32) };
	char hello[] = "hello, iwarp";
	uint64_t *word = aligned_alloc(4096, 4096);
	struct ibv_wc wc[6];
	struct ibv_mr *amr;
	int i;

	ASSERT_NE(NULL, word);
	*word = 40;
	amr = ibv_reg_mr(s->pd, word, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC);
	ASSERT_NE(NULL, amr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	xr_fill(c->buf, 100, 21);
	xr_fill(c->buf + 8192, 32, 22);
	xr_fill(c->buf + 12288, 32, 23);
	xr_fill(s->buf + 20480, 128, 24);
	ASSERT_EQ(0, xr_recv(s, 1, 0, 100));
	ASSERT_EQ(0, xr_recv(s, 2, 0, 0));

	ibv_wr_start(cx);
	cx->wr_id = 11;
	cx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(cx);
	ibv_wr_set_sge(cx, c->mr->lkey, (uintptr_t)c->buf, 100);
	cx->wr_id = 12;
	ibv_wr_rdma_write(cx, s->mr->rkey, (uintptr_t)(s->buf + 4096));
	ibv_wr_set_sge_list(cx, 2, two);
	cx->wr_id = 13;
	ibv_wr_rdma_write_imm(cx, s->mr->rkey, (uintptr_t)(s->buf + 16384),
			      htobe32(0xfeedf00d));
	ibv_wr_set_inline_data(cx, hello, sizeof(hello));
	memset(hello, 'x', sizeof(hello));
	cx->wr_id = 14;
	ibv_wr_rdma_read(cx, s->mr->rkey, (uintptr_t)(s->buf + 20480));
	ibv_wr_set_sge(cx, c->mr->lkey, (uintptr_t)(c->buf + 24576), 128);
	cx->wr_id = 15;
	ibv_wr_atomic_fetch_add(cx, amr->rkey, (uintptr_t)word, 5);
	ibv_wr_set_sge(cx, c->mr->lkey, (uintptr_t)(c->buf + 28672), 8);
	cx->wr_id = 16;
	ibv_wr_atomic_cmp_swp(cx, amr->rkey, (uintptr_t)word, 45, 77);
	ibv_wr_set_sge(cx, c->mr->lkey, (uintptr_t)(c->buf + 28680), 8);
	ASSERT_EQ(0, ibv_wr_complete(cx));

	ASSERT_EQ(6, xr_poll(c->cq, wc, 6, XR_WAIT_MS));
	for (i = 0; i < 6; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("wr %d", i);
		EXPECT_EQ(11 + i, wc[i].wr_id);
	}
	EXPECT_EQ(IBV_WC_SEND, wc[0].opcode);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc[1].opcode);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc[2].opcode);
	EXPECT_EQ(IBV_WC_RDMA_READ, wc[3].opcode);
	EXPECT_EQ(128, wc[3].byte_len);
	EXPECT_EQ(IBV_WC_FETCH_ADD, wc[4].opcode);
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc[5].opcode);
	EXPECT_EQ(40, *(uint64_t *)(c->buf + 28672));
	EXPECT_EQ(45, *(uint64_t *)(c->buf + 28680));
	EXPECT_EQ(77, *word);
	ibv_dereg_mr(amr);
	free(word);

	ASSERT_EQ(2, xr_poll(s->cq, wc, 2, XR_WAIT_MS));
	EXPECT_EQ(1, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc[0].opcode);
	EXPECT_EQ(100, wc[0].byte_len);
	EXPECT_EQ(2, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc[1].opcode);
	EXPECT_EQ(htobe32(0xfeedf00d), wc[1].imm_data);
	ASSERT_PATTERN(s->buf, 100, 21);
	ASSERT_PATTERN(s->buf + 4096, 32, 22);
	ASSERT_PATTERN(s->buf + 4096 + 32, 32, 23);
	EXPECT_EQ(0, memcmp(s->buf + 16384, "hello, iwarp", 13));
	ASSERT_PATTERN(c->buf + 24576, 128, 24);
}

/*
 * ibv_wr_abort() and a batch with an error both send nothing: the server
 * sees only the batch after them, and the QP goes on working.
 */
TEST_F(qpex, abort_and_error_send_nothing)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	struct ibv_qp_ex *cx = self->cx;
	struct ibv_wc wc;

	xr_fill(c->buf, 64, 31);
	ASSERT_EQ(0, xr_recv(s, 1, 4096, 64));
	ASSERT_EQ(0, xr_recv(s, 2, 8192, 64));
	cx->wr_flags = IBV_SEND_SIGNALED;

	ibv_wr_start(cx);
	wr_send_64(cx, c, 21);
	ibv_wr_abort(cx);

	ibv_wr_start(cx);
	wr_send_64(cx, c, 22);
	cx->wr_id = 23;
	ibv_wr_rdma_read(cx, s->mr->rkey, (uintptr_t)s->buf);
	ibv_wr_set_inline_data(cx, c->buf, 8);	/* a Read has no inline data */
	EXPECT_EQ(EINVAL, ibv_wr_complete(cx));

	ibv_wr_start(cx);
	wr_send_64(cx, c, 24);
	ibv_wr_send_imm(cx, htonl(7));	/* iWARP has no Send with Immediate */
	EXPECT_EQ(EOPNOTSUPP, ibv_wr_complete(cx));

	EXPECT_TRUE(cq_stays_empty(s->cq, 300));
	EXPECT_TRUE(cq_stays_empty(c->cq, 0));

	ibv_wr_start(cx);
	wr_send_64(cx, c, 25);
	ASSERT_EQ(0, ibv_wr_complete(cx));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(25, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, xr_poll(s->cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(64, wc.byte_len);
	ASSERT_PATTERN(s->buf + 4096, 64, 31);
	EXPECT_TRUE(cq_stays_empty(s->cq, 100));
}

/* What xiw cannot carry is refused when the QP is made. */
TEST_F(qpex, unsupported_send_ops_refused)
{
	struct ibv_qp_init_attr_ex qx = {
		.send_cq = self->p.srv.cq, .recv_cq = self->p.srv.cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->p.srv.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_qp *qp;

	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->p.srv.id->verbs, &qx));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* Window binds and local invalidation it carries. */
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_BIND_MW;
	qp = ibv_create_qp_ex(self->p.srv.id->verbs, &qx);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp_ex: %s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * A type 2 window bound by ibv_wr_bind_mw() and freed by
 * ibv_wr_local_inv(): the server Reads through it in between, and is
 * refused after.
 */
TEST_F(qpex, window_bind_and_local_invalidate)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	struct ibv_qp_ex *cx = self->cx;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_mw_bind_info info = {
		.addr = (uintptr_t)c->buf + 4096, .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_sge g = xr_sge(s, 0, 64);
	uint32_t rkey;
	struct ibv_wc wc;

	mr = ibv_reg_mr(c->pd, c->buf, 65536,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	mw = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw) TH_LOG("ibv_alloc_mw: %s", strerror(errno));
	info.mr = mr;
	rkey = ibv_inc_rkey(mw->rkey);
	xr_fill(c->buf + 4096, 64, 41);

	ibv_wr_start(cx);
	cx->wr_id = 41;
	cx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(cx, mw, rkey, &info);
	ASSERT_EQ(0, ibv_wr_complete(cx));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_EQ(IBV_WC_BIND_MW, wc.opcode);
	ASSERT_EQ(41, wc.wr_id);

	ASSERT_EQ(0, xr_send_sgl(s, IBV_WR_RDMA_READ, 42, &g, 1,
				 IBV_SEND_SIGNALED, info.addr, rkey));
	ASSERT_EQ(1, xr_poll(s->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_PATTERN(s->buf, 64, 41);

	ibv_wr_start(cx);
	cx->wr_id = 43;
	ibv_wr_local_inv(cx, rkey);
	ASSERT_EQ(0, ibv_wr_complete(cx));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_EQ(IBV_WC_LOCAL_INV, wc.opcode);

	ASSERT_EQ(0, xr_send_sgl(s, IBV_WR_RDMA_READ, 44, &g, 1,
				 IBV_SEND_SIGNALED, info.addr, rkey));
	ASSERT_EQ(1, xr_poll(s->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(mr);
}

/*
 * An atomic in a batch given no buffer for its old value: the builders
 * cannot refuse it, so it reaches the kernel, which fails it locally and
 * takes the QP to ERR; the server's memory is untouched.
 */
TEST_F(qpex, atomic_without_buffer_fails_locally)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	struct ibv_qp_ex *cx = self->cx;
	struct ibv_wc wc;

	memset(s->buf, 0, 8);
	cx->wr_id = 31;
	cx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_start(cx);
	ibv_wr_atomic_fetch_add(cx, s->mr->rkey, (uintptr_t)s->buf, 1);
	ASSERT_EQ(0, ibv_wr_complete(cx));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(31, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ibv_wr_start(cx);
	wr_send_64(cx, c, 32);
	ASSERT_EQ(0, ibv_wr_complete(cx));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(32, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	EXPECT_EQ(0, *(uint64_t *)s->buf);
}

/* ---- one connection, several message sizes ---- */

FIXTURE(xfer) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;	/* client, server */
	size_t half;		/* offset of each buffer's second area */
	uint64_t seed;
};

FIXTURE_VARIANT(xfer) {
	size_t size;
};

FIXTURE_VARIANT_ADD(xfer, len_0) { .size = 0 };
FIXTURE_VARIANT_ADD(xfer, len_1) { .size = 1 };
FIXTURE_VARIANT_ADD(xfer, len_1424_send_fpdu) { .size = 1424 };
FIXTURE_VARIANT_ADD(xfer, len_1425) { .size = 1425 };
FIXTURE_VARIANT_ADD(xfer, len_1447_mss_less_1) { .size = 1447 };
FIXTURE_VARIANT_ADD(xfer, len_1448_mss) { .size = 1448 };
FIXTURE_VARIANT_ADD(xfer, len_1449_mss_plus_1) { .size = 1449 };
FIXTURE_VARIANT_ADD(xfer, len_4095) { .size = 4095 };
FIXTURE_VARIANT_ADD(xfer, len_4096) { .size = 4096 };
FIXTURE_VARIANT_ADD(xfer, len_64k) { .size = 65536 };
FIXTURE_VARIANT_ADD(xfer, len_1m) { .size = 1 << 20 };

FIXTURE_SETUP(xfer)
{
	struct xr_opts o = { .wr = 16, .sge = 1, .rd_atom = 4 };
	char why[320];

	self->half = half_of(variant->size);
	o.buflen = 2 * self->half;
	xr_lo_mtu(1500);
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
	/* Sinks start as canaries, to catch writes past the message. */
	memset(self->c->buf + self->half, CANARY, self->half);
	memset(self->s->buf + self->half, CANARY, self->half);
}

FIXTURE_TEARDOWN(xfer)
{
	long long t0 = now_ms();

	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xr_trace("teardown: %lld ms", now_ms() - t0);
}

/* Bytes after a message of size in a canary-filled area are untouched. */
static bool canary_intact(const uint8_t *area, size_t size, size_t half)
{
	return size == half || area[size] == CANARY;
}

/* Send/Receive: data byte for byte, byte_len, wr_ids both ways. */
TEST_F(xfer, send_recv)
{
	size_t sz = variant->size;

	xr_fill(self->c->buf, sz, self->seed);
	ASSERT_EQ(0, xr_recv(self->s, 0x5ec0000 + sz, self->half, sz));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 0xc0de000 + sz, 0, sz, 0,
			     NULL, 0));
	EXPECT_ONE_WC(self->c, 0xc0de000 + sz, IBV_WC_SEND, -1);
	EXPECT_ONE_WC(self->s, 0x5ec0000 + sz, IBV_WC_RECV, sz);
	ASSERT_PATTERN(self->s->buf + self->half, sz, self->seed);
	ASSERT_TRUE(canary_intact(self->s->buf + self->half, sz, self->half));
}

/*
 * A CQ armed for solicited events only sleeps through a plain Send and
 * wakes for a Send with SE (RDMAP opcode 5).
 */
TEST_F(xfer, send_solicited_event)
{
	struct pollfd pf = { .fd = self->s->cc->fd, .events = POLLIN };
	size_t sz = variant->size;

	if (xr_is_siw())
		SKIP(return, "siw never raises solicited-only CQ events for receives");
	xr_fill(self->c->buf, sz, self->seed);
	ASSERT_EQ(0, ibv_req_notify_cq(self->s->cq, 1));
	ASSERT_EQ(0, xr_recv(self->s, 5, 0, 64));
	ASSERT_EQ(0, xr_recv(self->s, 7, self->half, sz));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 6, 0, 64, 0, NULL, 0));
	EXPECT_ONE_WC(self->s, 5, IBV_WC_RECV, 64);
	ASSERT_EQ(0, poll(&pf, 1, 200)) TH_LOG("a Send without SE raised an event");
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 8, 0, sz,
			     IBV_SEND_SOLICITED, NULL, 0));
	ASSERT_TRUE(xr_wait_cq_event(self->s, XR_WAIT_MS))
		TH_LOG("no completion event for a solicited Send");
	EXPECT_ONE_WC(self->s, 7, IBV_WC_RECV, sz);
	ASSERT_PATTERN(self->s->buf + self->half, sz, self->seed);
	ASSERT_EQ(2, xr_poll(self->c->cq, (struct ibv_wc[2]){}, 2, XR_WAIT_MS));
}

/* ORD-02: a Write's data is at the sink once a later Send is delivered. */
TEST_F(xfer, write_then_send)
{
	size_t sz = variant->size;
	struct ibv_wc wc[2];

	xr_fill(self->c->buf, sz, self->seed);
	ASSERT_EQ(0, xr_recv(self->s, 1, 0, 8));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 2, 0, sz, 0,
			     self->s, self->half));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 3, self->half, 8, 0,
			     NULL, 0));
	EXPECT_ONE_WC(self->s, 1, IBV_WC_RECV, 8);
	ASSERT_PATTERN(self->s->buf + self->half, sz, self->seed);
	ASSERT_TRUE(canary_intact(self->s->buf + self->half, sz, self->half));
	ASSERT_EQ(2, xr_poll(self->c->cq, wc, 2, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
	ASSERT_EQ(IBV_WC_RDMA_WRITE, wc[0].opcode);
	ASSERT_EQ(2, wc[0].wr_id);
	ASSERT_EQ(IBV_WC_SEND, wc[1].opcode);
	ASSERT_EQ(3, wc[1].wr_id);
}

/* RDMAP-04: a Read completes when its data is in the local sink. */
TEST_F(xfer, rdma_read)
{
	size_t sz = variant->size;

	xr_fill(self->s->buf, sz, self->seed);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 0x4ead, self->half, sz,
			     0, self->s, 0));
	EXPECT_ONE_WC(self->c, 0x4ead, IBV_WC_RDMA_READ, -1);
	ASSERT_PATTERN(self->c->buf + self->half, sz, self->seed);
	ASSERT_TRUE(canary_intact(self->c->buf + self->half, sz, self->half));
}

/* ---- one connection, 64 KiB buffers, deeper queues, 4 SGEs ---- */

FIXTURE(conn) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;
	uint64_t seed;
};

FIXTURE_SETUP(conn)
{
	struct xr_opts o = { .buflen = 65536, .wr = 128, .sge = 4,
			     .rd_atom = 4 };
	char why[320];

	xr_lo_mtu(65536);
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(conn)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

/* Copy the bytes an SGE list covers, in order, into out (up to max). */
static size_t gather(const struct ibv_sge *sg, int n, uint8_t *out, size_t max)
{
	size_t k = 0, m;
	int i;

	for (i = 0; i < n && k < max; i++) {
		m = sg[i].length < max - k ? sg[i].length : max - k;
		memcpy(out + k, (void *)(uintptr_t)sg[i].addr, m);
		k += m;
	}
	return k;
}

/* 4 odd-length send SGEs land across 4 differently cut receive SGEs. */
TEST_F(conn, multi_sge_send_recv)
{
	struct ibv_sge tx[4] = {
		xr_sge(self->c, 0, 1), xr_sge(self->c, 101, 13),
		xr_sge(self->c, 1003, 4095), xr_sge(self->c, 9001, 7),
	};
	struct ibv_sge rx[4] = {
		xr_sge(self->s, 20000, 5), xr_sge(self->s, 30001, 3001),
		xr_sge(self->s, 40003, 1111), xr_sge(self->s, 50005, 2001),
	};
	static uint8_t want[8192], got[8192];
	size_t total = 1 + 13 + 4095 + 7;

	xr_fill(self->c->buf, 16384, self->seed);
	ASSERT_EQ(total, gather(tx, 4, want, sizeof(want)));
	ASSERT_EQ(0, xr_recv_sgl(self->s, 0x77, rx, 4));
	ASSERT_EQ(0, xr_send_sgl(self->c, IBV_WR_SEND, 0x78, tx, 4,
				 IBV_SEND_SIGNALED, 0, 0));
	EXPECT_ONE_WC(self->s, 0x77, IBV_WC_RECV, total);
	EXPECT_ONE_WC(self->c, 0x78, IBV_WC_SEND, -1);
	ASSERT_EQ(total, gather(rx, 4, got, total));
	ASSERT_EQ(0, memcmp(want, got, total)) TH_LOG("scattered data differs");
}

/* An RDMA Read scatters its response over 3 local SGEs. */
TEST_F(conn, multi_sge_read_sink)
{
	struct ibv_sge sink[3] = {
		xr_sge(self->c, 30001, 7), xr_sge(self->c, 40003, 2001),
		xr_sge(self->c, 50005, 1000),
	};
	static uint8_t got[4096];
	struct ibv_device_attr da;

	if (xr_is_siw())
		SKIP(return, "siw advertises max_sge_rd 1 (and silently fills only the first sink SGE)");
	ASSERT_EQ(0, ibv_query_device(self->c->id->verbs, &da));
	ASSERT_GE(da.max_sge_rd, 3) TH_LOG("max_sge_rd %d", da.max_sge_rd);
	xr_fill(self->s->buf, 3008, self->seed);
	ASSERT_EQ(0, xr_send_sgl(self->c, IBV_WR_RDMA_READ, 0x99, sink, 3,
				 IBV_SEND_SIGNALED,
				 (uintptr_t)self->s->buf, self->s->mr->rkey));
	EXPECT_ONE_WC(self->c, 0x99, IBV_WC_RDMA_READ, -1);
	ASSERT_EQ(3008, gather(sink, 3, got, sizeof(got)));
	ASSERT_PATTERN(got, 3008, self->seed);
}


/* DDP-05, RDMAP-02: zero-length Send, Write and Read each complete. */
/* Read len bytes of rkey's raddr into c->buf + off; the status. */
static int xc_read(struct xr_side *c, size_t off, size_t len, uint64_t raddr,
		   uint32_t rkey)
{
	struct ibv_sge g = xr_sge(c, off, len);
	struct ibv_wc wc;

	if (xr_send_sgl(c, IBV_WR_RDMA_READ, 0x4e4e, &g, 1, IBV_SEND_SIGNALED,
			raddr, rkey) ||
	    xr_poll(c->cq, &wc, 1, XR_WAIT_MS) != 1)
		return -1;
	return wc.status;
}

/*
 * ibv_rereg_mr(): a new translation, new rights, another PD and back,
 * each under new keys that work at once; a refused rereg leaves the MR
 * as it was; the first keys are refused at the end (which ends the
 * connection, so it comes last).
 */
TEST_F(conn, rereg_mr)
{
	struct xr_side *c = self->c, *s = self->s;
	uint8_t *a = aligned_alloc(4096, 8192), *b = aligned_alloc(4096, 8192);
	struct ibv_pd *pd2 = ibv_alloc_pd(s->id->verbs);
	uint32_t first, keys;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, pd2);
	xr_fill(a, 8192, self->seed);
	xr_fill(b, 8192, self->seed + 1);
	mr = ibv_reg_mr(s->pd, a, 8192, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	first = mr->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, xc_read(c, 0, 8192, (uintptr_t)a, mr->rkey));
	ASSERT_PATTERN(c->buf, 8192, self->seed);

	/* Another translation: b, new keys. */
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  b, 8192, 0));
	EXPECT_NE(first, mr->rkey);
	EXPECT_EQ(b, mr->addr);
	ASSERT_EQ(IBV_WC_SUCCESS, xc_read(c, 0, 8192, (uintptr_t)b, mr->rkey));
	ASSERT_PATTERN(c->buf, 8192, self->seed + 1);

	/* Refused rights (remote write without local write): nothing moves. */
	keys = mr->rkey;
	EXPECT_NE(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(keys, mr->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, xc_read(c, 0, 64, (uintptr_t)b, mr->rkey));

	/* New rights: remote write too; a Write through the new keys. */
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_WRITE));
	EXPECT_NE(keys, mr->rkey);
	xr_fill(c->buf, 4096, self->seed + 2);
	{
		struct ibv_sge g = xr_sge(c, 0, 4096);

		ASSERT_EQ(0, xr_send_sgl(c, IBV_WR_RDMA_WRITE, 0x3e3e, &g, 1,
					 IBV_SEND_SIGNALED, (uintptr_t)b,
					 mr->rkey));
		EXPECT_ONE_WC(c, 0x3e3e, IBV_WC_RDMA_WRITE, 4096);
	}
	ASSERT_EQ(IBV_WC_SUCCESS, xc_read(c, 8192, 4096, (uintptr_t)b,
					  mr->rkey));
	ASSERT_PATTERN(c->buf + 8192, 4096, self->seed + 2);

	/* To another PD and back: the keys work again in the QP's own. */
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0));
	EXPECT_EQ(pd2, mr->pd);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, s->pd, NULL, 0,
				  0));
	ASSERT_EQ(IBV_WC_SUCCESS, xc_read(c, 0, 64, (uintptr_t)b, mr->rkey));

	/* The first keys name nothing now. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  xc_read(c, 0, 64, (uintptr_t)a, first));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	free(a);
	free(b);
}

TEST_F(conn, zero_length_send_write_read)
{
	int rc = xr_recv_sgl(self->s, 10, NULL, 0);

	if (rc && xr_is_siw()) {
		TH_LOG("siw refuses a receive with no SGE (%d): posting an empty SGE", rc);
		rc = xr_recv(self->s, 10, 0, 0);
	}
	ASSERT_EQ(0, rc) TH_LOG("receive with no SGE: %s", strerror(rc));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 11, 0, 0, 0, NULL, 0));
	EXPECT_ONE_WC(self->s, 10, IBV_WC_RECV, 0);
	EXPECT_ONE_WC(self->c, 11, IBV_WC_SEND, -1);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 12, 0, 0, 0,
			     self->s, 0));
	EXPECT_ONE_WC(self->c, 12, IBV_WC_RDMA_WRITE, -1);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 13, 0, 0, 0,
			     self->s, 0));
	EXPECT_ONE_WC(self->c, 13, IBV_WC_RDMA_READ, -1);
	ASSERT_EQ(0, exchange(self->c, self->s, 60000, self->seed));
}

/* DDP-05, RDMAP-02: the STag of a zero-length Write or Read is not checked. */
TEST_F(conn, zero_length_write_read_stag_not_checked)
{
	ASSERT_EQ(0, xr_send_sgl(self->c, IBV_WR_RDMA_WRITE, 21, NULL, 0,
				 IBV_SEND_SIGNALED, 0x1000, 0xdeadbe00));
	EXPECT_ONE_WC(self->c, 21, IBV_WC_RDMA_WRITE, -1);
	ASSERT_EQ(0, xr_send_sgl(self->c, IBV_WR_RDMA_READ, 22, NULL, 0,
				 IBV_SEND_SIGNALED, 0x1000, 0xdeadbe00));
	EXPECT_ONE_WC(self->c, 22, IBV_WC_RDMA_READ, -1);
	ASSERT_EQ(0, exchange(self->c, self->s, 60000, self->seed))
		TH_LOG("connection broken after zero-length ops on a bad STag");
}

/*
 * ORD-01, ORD-03: 100 Sends posted back to back are delivered in order
 * and complete at the sender in posting order.
 */
TEST_F(conn, order_100_sends)
{
	static struct ibv_wc wc[100];
	uint32_t *out = (uint32_t *)self->c->buf;
	uint32_t *in = (uint32_t *)self->s->buf;
	int i;

	for (i = 0; i < 100; i++) {
		out[i] = 0x1000 + i;
		in[i] = 0;
		ASSERT_EQ(0, xr_recv(self->s, i, i * 4, 4));
	}
	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 1000 + i, i * 4, 4,
				     0, NULL, 0)) TH_LOG("send %d", i);
	ASSERT_EQ(100, xr_poll(self->s->cq, wc, 100, XR_WAIT_MS));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));
		ASSERT_EQ((uint64_t)i, wc[i].wr_id) TH_LOG("receive %d out of order", i);
		ASSERT_EQ(0x1000U + i, in[i]) TH_LOG("receive %d got %#x", i, in[i]);
	}
	ASSERT_EQ(100, xr_poll(self->c->cq, wc, 100, XR_WAIT_MS));
	for (i = 0; i < 100; i++)
		ASSERT_EQ(1000U + i, wc[i].wr_id) TH_LOG("send completion %d", i);
}

/*
 * V-05: a Send with no receive posted is fatal for the connection
 * (iWARP has no RNR retry): the sender's QP must end up in error, seen
 * here as its posted receive flushing, and RNR_RETRY_EXC_ERR never shows.
 */
TEST_F(conn, send_without_receive_breaks_connection)
{
	struct ibv_wc wc[4];
	int n, i;

	ASSERT_EQ(0, xr_recv(self->c, 0xf1, 0, 64));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 0xf2, 0, 64, 0, NULL, 0));
	n = xr_poll(self->c->cq, wc, 2, XR_WAIT_MS);
	ASSERT_EQ(2, n) TH_LOG("sender's receive did not flush: connection lives on");
	for (i = 0; i < n; i++) {
		ASSERT_NE(IBV_WC_RNR_RETRY_EXC_ERR, wc[i].status);
		if (wc[i].wr_id == 0xf1)
			ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status)
				TH_LOG("%s", xr_wc_str(&wc[i]));
	}
}

/* V-01: after rdma_disconnect both ends see DISCONNECTED; receives flush. */
TEST_F(conn, disconnect_flushes_peer)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_wc wc[4];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, xr_recv(self->s, 0xd0 + i, i * 64, 64));
	ASSERT_EQ(0, rdma_disconnect(self->c->id)) TH_LOG("%s", strerror(errno));
	ASSERT_TRUE(xr_wait_cm(self->net.sch, self->s->id,
			       RDMA_CM_EVENT_DISCONNECTED, XR_WAIT_MS, NULL));
	ASSERT_EQ(4, xr_poll(self->s->cq, wc, 4, XR_WAIT_MS));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));
		ASSERT_EQ(0xd0U + i, wc[i].wr_id);
	}
	ASSERT_TRUE(xr_wait_cm(self->net.cch, self->c->id,
			       RDMA_CM_EVENT_DISCONNECTED, XR_WAIT_MS, NULL));
	ASSERT_EQ(0, ibv_query_qp(self->s->qp, &qa, IBV_QP_STATE, &init));
	if (xr_is_siw())	/* siw's query_qp does not report the state */
		TH_LOG("siw: query_qp says state %d, not checked", qa.qp_state);
	else
		ASSERT_EQ(IBV_QPS_ERR, qa.qp_state);
}

/*
 * Remote rights a consumer gives its QP hold for the connection. rdma_cm
 * sets none on an active QP (and none later, for iWARP), so a QP nobody
 * gave rights gets the iw_cm's, remote read and write; rights set on the
 * client's QP before it connects are kept as they are, and the server's
 * Write or Read into the client is allowed or refused by them.
 */
FIXTURE(access) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
};

FIXTURE_VARIANT(access) {
	bool set;
	int access;
	enum ibv_wr_opcode op;
	enum ibv_wc_status want;
};

FIXTURE_VARIANT_ADD(access, unset_write_allowed) {
	.op = IBV_WR_RDMA_WRITE, .want = IBV_WC_SUCCESS,
};
FIXTURE_VARIANT_ADD(access, unset_read_allowed) {
	.op = IBV_WR_RDMA_READ, .want = IBV_WC_SUCCESS,
};
FIXTURE_VARIANT_ADD(access, read_only_write_refused) {
	.set = true, .access = IBV_ACCESS_REMOTE_READ,
	.op = IBV_WR_RDMA_WRITE, .want = IBV_WC_REM_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(access, read_only_read_allowed) {
	.set = true, .access = IBV_ACCESS_REMOTE_READ,
	.op = IBV_WR_RDMA_READ, .want = IBV_WC_SUCCESS,
};
FIXTURE_VARIANT_ADD(access, write_only_read_refused) {
	.set = true, .access = IBV_ACCESS_REMOTE_WRITE,
	.op = IBV_WR_RDMA_READ, .want = IBV_WC_REM_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(access, none_write_refused) {
	.set = true, .access = 0,
	.op = IBV_WR_RDMA_WRITE, .want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_SETUP(access)
{
	struct xr_opts o = { .buflen = 8192, .wr = 8, .sge = 1, .rd_atom = 1,
			     .cli_access_set = variant->set,
			     .cli_access = variant->access };
	char why[320];

	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(access)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

TEST_F(access, remote_op_into_client)
{
	/* A CM's rights: read and write, and atomics as over IB. */
	int want = variant->set ? variant->access :
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;

	if (xr_is_siw())	/* siw records a QP's rights, never checks them */
		SKIP(return, "siw does not enforce QP access rights");
	ASSERT_EQ(0, ibv_query_qp(self->p.cli.qp, &qa, IBV_QP_ACCESS_FLAGS,
				  &init));
	ASSERT_EQ(want, (int)qa.qp_access_flags);
	xr_fill(self->p.cli.buf, 4096, 7);
	xr_fill(self->p.srv.buf, 4096, 9);
	ASSERT_EQ(0, xr_post(&self->p.srv, variant->op, 0xacc, 0, 4096, 0,
			     &self->p.cli, 0));
	ASSERT_EQ(1, xr_poll(self->p.srv.cq, &wc, 1, XR_WAIT_MS));
	if (variant->op == IBV_WR_RDMA_READ) {
		ASSERT_EQ(variant->want, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		if (variant->want == IBV_WC_SUCCESS)
			ASSERT_EQ(-1, xr_check(self->p.srv.buf, 4096, 7));
		return;
	}
	/*
	 * A Write completes at its requester once sent; a refusal comes
	 * back as a Terminate, which ends the connection: a Read posted
	 * after it then fails.
	 */
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_EQ(0, xr_post(&self->p.srv, IBV_WR_RDMA_READ, 0xacd, 0, 1, 0,
			     &self->p.cli, 0));
	ASSERT_EQ(1, xr_poll(self->p.srv.cq, &wc, 1, XR_WAIT_MS));
	if (variant->want == IBV_WC_SUCCESS) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_EQ(-1, xr_check(self->p.cli.buf, 4096, 9));
	} else {
		ASSERT_NE(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		/* Refused: the client's memory is as it was. */
		ASSERT_EQ(-1, xr_check(self->p.cli.buf, 4096, 7));
	}
}

/*
 * ---- RFC 7306 atomics (EXT-02..EXT-06) ----
 * XA_PAIRS connections whose servers all register one page of words, in
 * each server's PD, for remote atomics (and Reads): the clients' atomics
 * meet on the same words through different QPs.
 */
#define XA_PAIRS	3
#define XA_EACH		200	/* contention: atomics per client */

FIXTURE(atomic) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p[XA_PAIRS];
	uint64_t *word;
	struct ibv_mr *mr[XA_PAIRS];
};

FIXTURE_SETUP(atomic)
{
	struct xr_opts o = { .buflen = 65536, .wr = 64, .sge = 1,
			     .rd_atom = 4 };
	char why[320];
	int i;

	if (xr_is_siw())
		XSKIP_SETUP("siw has no RFC 7306 atomics");
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, self->p, XA_PAIRS,
				&o, why, sizeof(why))) TH_LOG("%s", why);
	self->word = aligned_alloc(4096, 8192);
	ASSERT_NE(NULL, self->word);
	memset(self->word, 0, 8192);
	for (i = 0; i < XA_PAIRS; i++) {
		self->mr[i] = ibv_reg_mr(self->p[i].srv.pd, self->word, 8192,
					 IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_ATOMIC |
					 IBV_ACCESS_REMOTE_READ);
		ASSERT_NE(NULL, self->mr[i]) TH_LOG("ibv_reg_mr: %s",
						    strerror(errno));
	}
}

FIXTURE_TEARDOWN(atomic)
{
	int i;

	for (i = 0; i < XA_PAIRS; i++)
		if (self->mr[i])
			ibv_dereg_mr(self->mr[i]);
	xr_pairs_fini(self->p, XA_PAIRS);
	xr_net_fini(&self->net);
	free(self->word);
}

/* The address of word i of the target page, as the peer names it. */
static uint64_t xa_at(FIXTURE_DATA(atomic) *self, size_t i)
{
	return (uintptr_t)(self->word + i);
}

TEST_F(atomic, fetch_add_and_cmp_swap)
{
	struct xr_side *c = &self->p[0].cli;
	uint64_t *old = (uint64_t *)c->buf;
	uint32_t rk = self->mr[0]->rkey;

	self->word[0] = 5;
	self->word[1] = ~0ULL;
	ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, rk,
			       xa_at(self, 0), 3, 0));
	EXPECT_ONE_WC(c, 1, IBV_WC_FETCH_ADD, 8);
	EXPECT_EQ(5, old[0]);
	EXPECT_EQ(8, self->word[0]);
	/* A hit swaps, a miss leaves the word; both return what was there. */
	ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, 2, 8, rk,
			       xa_at(self, 0), 8, 100));
	EXPECT_ONE_WC(c, 2, IBV_WC_COMP_SWAP, 8);
	EXPECT_EQ(8, old[1]);
	EXPECT_EQ(100, self->word[0]);
	ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, 3, 16, rk,
			       xa_at(self, 0), 7, 1));
	EXPECT_ONE_WC(c, 3, IBV_WC_COMP_SWAP, 8);
	EXPECT_EQ(100, old[2]);
	EXPECT_EQ(100, self->word[0]);
	/* 64 bits wide: the add wraps; the word beside it stays. */
	ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 24, rk,
			       xa_at(self, 1), 2, 0));
	EXPECT_ONE_WC(c, 4, IBV_WC_FETCH_ADD, 8);
	EXPECT_EQ(~0ULL, old[3]);
	EXPECT_EQ(1, self->word[1]);
	EXPECT_EQ(0, self->word[2]);
	/* Carried out by the responder's RNIC: its consumer sees nothing. */
	EXPECT_TRUE(cq_stays_empty(self->p[0].srv.cq, 100));
}

struct xa_cpu {
	uint64_t *word;
	int n;
};

static void *xa_cpu_adds(void *arg)
{
	struct xa_cpu *x = arg;
	int i;

	for (i = 0; i < x->n; i++) {
		__atomic_fetch_add(x->word, 1, __ATOMIC_SEQ_CST);
		if (!(i & 15))
			usleep(100);
	}
	return NULL;
}

/*
 * RFC 7306 section 5.3: atomics from several QPs, and the CPU's own, on
 * one word. Every increment counts, and each atomic saw a value no other
 * one saw.
 */
TEST_F_TIMEOUT(atomic, contention, 300)
{
	const int total = XA_PAIRS * XA_EACH + XA_EACH;
	int posted[XA_PAIRS] = { 0 }, done[XA_PAIRS] = { 0 };
	struct xa_cpu cpu = { .word = self->word, .n = XA_EACH };
	uint8_t *seen = calloc(total, 1);
	long long end = now_ms() + 120000;
	bool busy = true;
	pthread_t th;
	int i, j;

	ASSERT_NE(NULL, seen);
	ASSERT_EQ(0, pthread_create(&th, NULL, xa_cpu_adds, &cpu));
	while (busy && now_ms() < end) {
		busy = false;
		for (i = 0; i < XA_PAIRS; i++) {
			struct xr_side *c = &self->p[i].cli;
			struct ibv_wc wc[4];
			int n;

			while (posted[i] < XA_EACH && posted[i] - done[i] < 4) {
				ASSERT_EQ(0, xr_atomic(c,
					IBV_WR_ATOMIC_FETCH_AND_ADD, posted[i],
					posted[i] * 8, self->mr[i]->rkey,
					xa_at(self, 0), 1, 0));
				posted[i]++;
			}
			n = ibv_poll_cq(c->cq, 4, wc);
			ASSERT_LE(0, n);
			for (j = 0; j < n; j++) {
				ASSERT_EQ(IBV_WC_SUCCESS, wc[j].status)
					TH_LOG("pair %d: %s", i,
					       xr_wc_str(&wc[j]));
				ASSERT_EQ((uint64_t)done[i], wc[j].wr_id);
				done[i]++;
			}
			busy |= done[i] < XA_EACH;
		}
	}
	pthread_join(th, NULL);
	for (i = 0; i < XA_PAIRS; i++)
		ASSERT_EQ(XA_EACH, done[i]) TH_LOG("pair %d stalled", i);
	ASSERT_EQ((uint64_t)total, self->word[0]);
	for (i = 0; i < XA_PAIRS; i++) {
		const uint64_t *old = (const uint64_t *)self->p[i].cli.buf;

		for (j = 0; j < XA_EACH; j++) {
			ASSERT_GT((uint64_t)total, old[j]);
			ASSERT_EQ(0, seen[old[j]])
				TH_LOG("value %llu returned twice",
				       (unsigned long long)old[j]);
			seen[old[j]] = 1;
		}
	}
	free(seen);
}

/*
 * RFC 7306 section 7: a Read after an atomic on the same connection sees
 * its result, and requests complete in posting order; Reads and atomics
 * share the ORD (4 here), so ten of each wait for room on the way.
 */
TEST_F(atomic, reads_and_atomics_in_order)
{
	struct xr_side *c = &self->p[0].cli;
	const uint64_t *got = (const uint64_t *)c->buf;
	struct ibv_sge g;
	struct ibv_wc wc[20];
	int i, n = 0;

	self->word[3] = 1000;
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, 2 * i,
				       16 * i, self->mr[0]->rkey,
				       xa_at(self, 3), 1, 0));
		g = xr_sge(c, 16 * i + 8, 8);
		ASSERT_EQ(0, xr_send_sgl(c, IBV_WR_RDMA_READ, 2 * i + 1, &g,
					 1, IBV_SEND_SIGNALED, xa_at(self, 3),
					 self->mr[0]->rkey));
	}
	while (n < 20) {
		int k = xr_poll(c->cq, wc + n, 20 - n, XR_WAIT_MS);

		ASSERT_LT(0, k) TH_LOG("%d of 20 completed", n);
		n += k;
	}
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status)
			TH_LOG("%s", xr_wc_str(&wc[i]));
		ASSERT_EQ((uint64_t)i, wc[i].wr_id);
		ASSERT_EQ(i & 1 ? IBV_WC_RDMA_READ : IBV_WC_FETCH_ADD,
			  wc[i].opcode);
	}
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(1000 + i, got[2 * i]);
		EXPECT_EQ(1001 + i, got[2 * i + 1]);
	}
	EXPECT_EQ(1010, self->word[3]);
}

/*
 * Teardown with atomics in flight: 60 fetch-and-adds posted at once (ORD
 * 4, the rest queued), then either the connection goes (disconnect) or
 * the target MR does (dereg, while requests wait in the responder's
 * IRQ). Every atomic completes, done or flushed (or refused once, for
 * the MR); the word counts at least the ones done and no more than were
 * sent (RFC 7306 5.4: one executed whose Response was lost is unknown
 * to the requester). The kernel log and, on the debug kernel, kmemleak
 * check the rest.
 */
static void xa_in_flight(struct __test_metadata *_metadata,
			 FIXTURE_DATA(atomic) *self, bool dereg)
{
	struct xr_side *c = &self->p[0].cli;
	int i, n = 0, done = 0, refused = 0;
	struct ibv_wc wc[60];

	for (i = 0; i < 60; i++)
		ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, i,
				       8 * i, self->mr[0]->rkey,
				       xa_at(self, 6), 1, 0));
	if (dereg) {
		ASSERT_EQ(0, ibv_dereg_mr(self->mr[0]));
		self->mr[0] = NULL;
	} else {
		ASSERT_EQ(0, rdma_disconnect(c->id));
	}
	while (n < 60) {
		int k = xr_poll(c->cq, wc + n, 60 - n, XR_WAIT_MS);

		ASSERT_LT(0, k) TH_LOG("%d of 60 completed", n);
		n += k;
	}
	for (i = 0; i < 60; i++) {
		ASSERT_EQ((uint64_t)i, wc[i].wr_id);
		if (wc[i].status == IBV_WC_SUCCESS)
			done++;
		else if (dereg && wc[i].status == IBV_WC_REM_ACCESS_ERR)
			refused++;
		else
			ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status)
				TH_LOG("%s", xr_wc_str(&wc[i]));
	}
	ASSERT_GE(1, refused);
	if (!dereg) {
		ASSERT_LE((uint64_t)done, self->word[6]);
		ASSERT_GE(60, self->word[6]);
	}
	TH_LOG("%d done, %d refused, %d flushed; the word says %llu", done,
	       refused, 60 - done - refused,
	       (unsigned long long)self->word[6]);
}

TEST_F(atomic, disconnect_with_atomics_in_flight)
{
	xa_in_flight(_metadata, self, false);
}

TEST_F(atomic, dereg_with_atomics_in_flight)
{
	xa_in_flight(_metadata, self, true);
}

/*
 * A refused atomic: the requester's completion says why (the responder's
 * Terminate names the request), its later work flushes, and the target
 * word is as it was.
 */
static void xa_refused(struct __test_metadata *_metadata,
		       FIXTURE_DATA(atomic) *self, uint32_t rkey,
		       uint64_t at, enum ibv_wc_status want)
{
	struct xr_side *c = &self->p[0].cli;
	struct ibv_wc wc;

	self->word[4] = 77;
	ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, rkey, at,
			       77, 5));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(want, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_EQ(1, wc.wr_id);
	ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, 2, 8, 8, 0,
			     &self->p[0].srv, 0));
	ASSERT_EQ(1, xr_poll(c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	EXPECT_EQ(77, self->word[4]);
	EXPECT_EQ(0, self->word[5]);
}

/* RFC 7306 sections 5.1 and 8.2: the target must be 64-bit aligned. */
TEST_F(atomic, unaligned_target_refused)
{
	xa_refused(_metadata, self, self->mr[0]->rkey, xa_at(self, 4) + 4,
		   IBV_WC_REM_INV_REQ_ERR);
}

/* The MR grants reads and writes but no atomics. */
TEST_F(atomic, mr_without_atomic_right_refused)
{
	memcpy(self->p[0].srv.buf, &(uint64_t){ 77 }, 8);
	xa_refused(_metadata, self, self->p[0].srv.mr->rkey,
		   (uintptr_t)self->p[0].srv.buf, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(77, *(uint64_t *)self->p[0].srv.buf);
}

/* The responder's QP was given read and write rights only. */
TEST_F(atomic, qp_without_atomic_right_refused)
{
	struct ibv_qp_attr qa = {
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};

	ASSERT_EQ(0, ibv_modify_qp(self->p[0].srv.qp, &qa,
				   IBV_QP_ACCESS_FLAGS));
	xa_refused(_metadata, self, self->mr[0]->rkey, xa_at(self, 4),
		   IBV_WC_REM_ACCESS_ERR);
}

/* A word past the MR's end, and an STag that names no MR. */
TEST_F(atomic, out_of_bounds_refused)
{
	xa_refused(_metadata, self, self->mr[0]->rkey, xa_at(self, 1024),
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F(atomic, unknown_stag_refused)
{
	xa_refused(_metadata, self, self->mr[0]->rkey ^ 0x80,
		   xa_at(self, 4), IBV_WC_REM_ACCESS_ERR);
}

/*
 * ---- Memory windows (MW-01..05) ----
 * The server registers its buffer for window binding only (no remote
 * rights of its own) and hands the client a window on its second page;
 * the client reaches the buffer through the window alone.
 */
#define XW_PAGE		4096

FIXTURE(mw) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;
	struct ibv_mr *mr;	/* the server's buffer, for binding */
	struct ibv_mw *mw;
};

FIXTURE_SETUP(mw)
{
	struct xr_opts o = { .buflen = 4 * XW_PAGE, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	char why[320];

	if (xr_is_siw())
		XSKIP_SETUP("siw has no memory windows");
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->mr = ibv_reg_mr(self->s->pd, self->s->buf, 4 * XW_PAGE,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, self->mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
}

FIXTURE_TEARDOWN(mw)
{
	if (self->mw)
		ibv_dealloc_mw(self->mw);
	if (self->mr)
		ibv_dereg_mr(self->mr);
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

/* The server's buffer at offset off, as an address the peer names. */
static uint64_t xw_at(FIXTURE_DATA(mw) *self, size_t off)
{
	return (uintptr_t)(self->s->buf + off);
}

/* Bind info for [off, off + len) of the server's buffer. */
static struct ibv_mw_bind_info xw_info(FIXTURE_DATA(mw) *self, size_t off,
				       size_t len, unsigned int access)
{
	struct ibv_mw_bind_info i = {
		.mr = self->mr, .addr = xw_at(self, off), .length = len,
		.mw_access_flags = access,
	};

	return i;
}

/* The server's next completion: wr_id, opcode and status as given. */
static void xw_wc(struct __test_metadata *_metadata, struct xr_side *side,
		  uint64_t wr_id, enum ibv_wc_opcode op,
		  enum ibv_wc_status status)
{
	struct ibv_wc wc;

	ASSERT_EQ(1, xr_poll(side->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(status, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_EQ(wr_id, wc.wr_id);
	if (status == IBV_WC_SUCCESS)
		ASSERT_EQ(op, wc.opcode) TH_LOG("%s", xr_wc_str(&wc));
}

/* ibv_bind_mw() of a type 1 window, and its completion's status. */
static void xw_bind1(struct __test_metadata *_metadata,
		     FIXTURE_DATA(mw) *self, struct ibv_mw_bind_info info,
		     enum ibv_wc_status want)
{
	struct ibv_mw_bind b = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = info,
	};

	ASSERT_EQ(0, ibv_bind_mw(self->s->qp, self->mw, &b));
	xw_wc(_metadata, self->s, 0xb1, IBV_WC_BIND_MW, want);
}

/* IBV_WR_BIND_MW of a type 2 window to the next key; its status. */
static void xw_bind2(struct __test_metadata *_metadata,
		     FIXTURE_DATA(mw) *self, struct ibv_mw_bind_info info,
		     enum ibv_wc_status want)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	wr.bind_mw.mw = self->mw;
	wr.bind_mw.rkey = ibv_inc_rkey(self->mw->rkey);
	wr.bind_mw.bind_info = info;
	ASSERT_EQ(0, ibv_post_send(self->s->qp, &wr, &bad));
	xw_wc(_metadata, self->s, 0xb2, IBV_WC_BIND_MW, want);
	if (want == IBV_WC_SUCCESS)
		self->mw->rkey = wr.bind_mw.rkey;
}

/* The server's LOCAL_INV of rkey, and its completion's status. */
static void xw_local_inv(struct __test_metadata *_metadata,
			 FIXTURE_DATA(mw) *self, uint32_t rkey,
			 enum ibv_wc_status want)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x1a, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	wr.invalidate_rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(self->s->qp, &wr, &bad));
	xw_wc(_metadata, self->s, 0x1a, IBV_WC_LOCAL_INV, want);
}

/* The client Reads len bytes at raddr of rkey into its buffer. */
static void xw_read(struct __test_metadata *_metadata,
		    FIXTURE_DATA(mw) *self, uint32_t rkey, uint64_t raddr,
		    size_t len, enum ibv_wc_status want)
{
	struct ibv_sge g = xr_sge(self->c, 0, len);
	struct ibv_wc wc;

	ASSERT_EQ(0, xr_send_sgl(self->c, IBV_WR_RDMA_READ, 0x4ead, &g, 1,
				 IBV_SEND_SIGNALED, raddr, rkey));
	ASSERT_EQ(1, xr_poll(self->c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(want, wc.status) TH_LOG("%s", xr_wc_str(&wc));
}

/*
 * The client Writes len bytes at raddr of rkey; a Write completes once
 * sent, so a refusal shows as the Read after it failing (the Terminate
 * ended the connection).
 */
static void xw_write(struct __test_metadata *_metadata,
		     FIXTURE_DATA(mw) *self, uint32_t rkey, uint64_t raddr,
		     size_t len, bool refused)
{
	struct ibv_sge g = xr_sge(self->c, 0, len);
	struct ibv_wc wc;

	ASSERT_EQ(0, xr_send_sgl(self->c, IBV_WR_RDMA_WRITE, 0x1417e, &g, 1,
				 IBV_SEND_SIGNALED, raddr, rkey));
	ASSERT_EQ(1, xr_poll(self->c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	if (!refused)
		return;
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 0x4eae, 0, 1, 0,
			     self->s, 0));
	ASSERT_EQ(1, xr_poll(self->c->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_NE(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
}

static void xw_alloc(struct __test_metadata *_metadata,
		     FIXTURE_DATA(mw) *self, enum ibv_mw_type type)
{
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->s->id->verbs, &a));
	ASSERT_NE(0, a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	ASSERT_NE(0, a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	ASSERT_LT(0, a.max_mw);
	self->mw = ibv_alloc_mw(self->s->pd, type);
	ASSERT_NE(NULL, self->mw) TH_LOG("ibv_alloc_mw: %s", strerror(errno));
	ASSERT_EQ(type, self->mw->type);
}

/*
 * Type 1: the window grants what it says over its range, Reads, Writes
 * and atomics, though the MR grants no remote access at all; a rebind
 * moves it (the old key is refused from then on, see the next test).
 */
TEST_F(mw, type1_window_grants_its_range)
{
	uint64_t *word = (uint64_t *)(self->s->buf + XW_PAGE + 8);
	uint32_t key0;

	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	key0 = self->mw->rkey;
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE,
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC), IBV_WC_SUCCESS);
	ASSERT_EQ(ibv_inc_rkey(key0), self->mw->rkey);
	xr_fill(self->c->buf, XW_PAGE, 11);
	xw_write(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE),
		 XW_PAGE, false);
	memset(self->c->buf, 0, XW_PAGE);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE),
		XW_PAGE, IBV_WC_SUCCESS);
	ASSERT_EQ(-1, xr_check(self->c->buf, XW_PAGE, 11));
	ASSERT_EQ(-1, xr_check(self->s->buf + XW_PAGE, XW_PAGE, 11));

	*word = 40;
	ASSERT_EQ(0, xr_atomic(self->c, IBV_WR_ATOMIC_FETCH_AND_ADD, 0xa7, 0,
			       self->mw->rkey, (uintptr_t)word, 2, 0));
	xw_wc(_metadata, self->c, 0xa7, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS);
	EXPECT_EQ(40, *(uint64_t *)self->c->buf);
	EXPECT_EQ(42, *word);

	/* Rebound to the third page, read-only: there it reads. */
	xr_fill(self->s->buf + 2 * XW_PAGE, XW_PAGE, 12);
	xw_bind1(_metadata, self,
		 xw_info(self, 2 * XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, 2 * XW_PAGE),
		XW_PAGE, IBV_WC_SUCCESS);
	ASSERT_EQ(-1, xr_check(self->c->buf, XW_PAGE, 12));
}

/* RFC 5040 section 6.1: a rebind gives a new STag; the old one is dead. */
TEST_F(mw, type1_old_key_refused_after_rebind)
{
	uint32_t old;

	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	old = self->mw->rkey;
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	ASSERT_NE(old, self->mw->rkey);
	xw_read(_metadata, self, old, xw_at(self, XW_PAGE), 8,
		IBV_WC_REM_ACCESS_ERR);
}

/* A zero-length bind unbinds a type 1 window. */
TEST_F(mw, type1_unbind_refuses_access)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	xw_bind1(_metadata, self, (struct ibv_mw_bind_info){ 0 },
		 IBV_WC_SUCCESS);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE), 8,
		IBV_WC_REM_ACCESS_ERR);
}

/* One byte past the window, though inside the MR. */
TEST_F(mw, access_outside_window_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, 2 * XW_PAGE - 7),
		8, IBV_WC_REM_ACCESS_ERR);
}

/* The window's rights, not the MR's: a read-only window refuses Writes. */
TEST_F(mw, write_into_read_only_window_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	memset(self->s->buf + XW_PAGE, 0x5a, 64);
	xr_fill(self->c->buf, 64, 13);
	xw_write(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE), 64,
		 true);
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, *(uint64_t *)(self->s->buf + XW_PAGE));
}

/* A window is an rkey, never an lkey. */
TEST_F(mw, window_as_lkey_refused)
{
	struct ibv_sge g = {
		.addr = xw_at(self, XW_PAGE), .length = 8,
	};
	struct ibv_wc wc;

	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_WRITE), IBV_WC_SUCCESS);
	g.lkey = self->mw->rkey;
	ASSERT_EQ(0, xr_recv(self->c, 1, 0, 64));
	ASSERT_EQ(0, xr_send_sgl(self->s, IBV_WR_SEND, 0x5e, &g, 1,
				 IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, xr_poll(self->s->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_LOC_PROT_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
}

/*
 * Deregistering the MR (allowed with windows bound) or deallocating the
 * window leaves the window's STag refused.
 */
TEST_F(mw, dereg_mr_under_bound_window)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	ASSERT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE), 8,
		IBV_WC_REM_ACCESS_ERR);
}

TEST_F(mw, dealloc_bound_window)
{
	uint32_t rkey;

	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	rkey = self->mw->rkey;
	ASSERT_EQ(0, ibv_dealloc_mw(self->mw));
	self->mw = NULL;
	xw_read(_metadata, self, rkey, xw_at(self, XW_PAGE), 8,
		IBV_WC_REM_ACCESS_ERR);
}

/* Type 2: bound by IBV_WR_BIND_MW, usable until the QP's LOCAL_INV. */
TEST_F(mw, type2_bind_use_local_invalidate)
{
	uint32_t first;

	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, 0, 2 * XW_PAGE,
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE),
		 IBV_WC_SUCCESS);
	first = self->mw->rkey;
	xr_fill(self->c->buf, 2 * XW_PAGE, 14);
	xw_write(_metadata, self, first, xw_at(self, 0), 2 * XW_PAGE, false);
	xw_read(_metadata, self, first, xw_at(self, 0), 8, IBV_WC_SUCCESS);
	ASSERT_EQ(-1, xr_check(self->s->buf, 2 * XW_PAGE, 14));

	/* The QP's own LOCAL_INV frees it: the peer's key is dead. */
	xw_local_inv(_metadata, self, first, IBV_WC_SUCCESS);
	xw_read(_metadata, self, first, xw_at(self, 0), 8,
		IBV_WC_REM_ACCESS_ERR);
}

/*
 * MW-04: a type 2 window is reachable only through the QP that bound it.
 * A second connection whose server QP is in the same PD: its client's
 * Read through the window's STag is refused (the STag is valid in that
 * PD, so only the binding QP's number can refuse it), while the binding
 * QP's client still reads through it.
 */
TEST_F(mw, type2_refused_through_another_qp)
{
	struct xr_opts o = { .buflen = XW_PAGE, .wr = 4, .sge = 1,
			     .rd_atom = 4, .srv_pd = self->s->pd };
	struct xr_pair q = { 0 };
	struct ibv_sge g;
	struct ibv_wc wc;

	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	ASSERT_EQ(0, xr_connect(&self->net, &q, 1, &o))
		TH_LOG("%s", self->net.err);
	EXPECT_EQ(self->s->pd, q.srv.pd);
	EXPECT_NE(self->s->qp->qp_num, q.srv.qp->qp_num);
	g = xr_sge(&q.cli, 0, 8);
	EXPECT_EQ(0, xr_send_sgl(&q.cli, IBV_WR_RDMA_READ, 0x2b, &g, 1,
				 IBV_SEND_SIGNALED, xw_at(self, 0),
				 self->mw->rkey));
	EXPECT_EQ(1, xr_poll(q.cli.cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	xr_pairs_fini(&q, 1);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, 0), 8,
		IBV_WC_SUCCESS);
}

/* Freed by LOCAL_INV, a type 2 window binds again under a new key. */
TEST_F(mw, type2_rebinds_after_invalidate)
{
	uint32_t first;

	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	first = self->mw->rkey;
	xw_local_inv(_metadata, self, first, IBV_WC_SUCCESS);
	xr_fill(self->s->buf + XW_PAGE, XW_PAGE, 15);
	xw_bind2(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	ASSERT_NE(first, self->mw->rkey);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE),
		XW_PAGE, IBV_WC_SUCCESS);
	ASSERT_EQ(-1, xr_check(self->c->buf, XW_PAGE, 15));
	xw_read(_metadata, self, first, xw_at(self, XW_PAGE), 8,
		IBV_WC_REM_ACCESS_ERR);
}

/* RFC 5040 section 6.10: the peer's Send with Invalidate frees it. */
TEST_F(mw, type2_send_with_invalidate)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x51, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	struct ibv_wc wc;

	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, XW_PAGE, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE), 8,
		IBV_WC_SUCCESS);
	ASSERT_EQ(0, xr_recv(self->s, 0x5ec, 0, 64));
	wr.invalidate_rkey = self->mw->rkey;
	ASSERT_EQ(0, ibv_post_send(self->c->qp, &wr, &bad));
	xw_wc(_metadata, self->c, 0x51, IBV_WC_SEND, IBV_WC_SUCCESS);
	ASSERT_EQ(1, xr_poll(self->s->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_NE(0, wc.wc_flags & IBV_WC_WITH_INV);
	ASSERT_EQ(self->mw->rkey, wc.invalidated_rkey);
	xw_read(_metadata, self, self->mw->rkey, xw_at(self, XW_PAGE), 8,
		IBV_WC_REM_ACCESS_ERR);
}

/*
 * Binds the rules refuse: each completes with IBV_WC_MW_BIND_ERR, a
 * local error, which takes the QP to error.
 */
TEST_F(mw, bind_beyond_mr_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, 3 * XW_PAGE, 2 * XW_PAGE,
			 IBV_ACCESS_REMOTE_READ), IBV_WC_MW_BIND_ERR);
}

/* The fixture's own MR was registered without IBV_ACCESS_MW_BIND. */
TEST_F(mw, bind_to_mr_without_bind_right_refused)
{
	struct ibv_mw_bind_info i = xw_info(self, 0, XW_PAGE,
					    IBV_ACCESS_REMOTE_READ);

	i.mr = self->s->mr;
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self, i, IBV_WC_MW_BIND_ERR);
}

/* Remote writes need the MR locally writable, through a window too. */
TEST_F(mw, write_window_on_read_only_mr_refused)
{
	struct ibv_mw_bind_info i = xw_info(self, 0, XW_PAGE,
					    IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(self->s->pd, self->s->buf, XW_PAGE,
				       IBV_ACCESS_MW_BIND);

	ASSERT_NE(NULL, ro) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	i.mr = ro;
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self, i, IBV_WC_MW_BIND_ERR);
	ibv_dereg_mr(ro);
}

/* xiw has no zero-based windows. */
TEST_F(mw, zero_based_bind_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_ZERO_BASED), IBV_WC_MW_BIND_ERR);
}

/* A type 2 window binds only when free. */
TEST_F(mw, type2_bind_of_bound_window_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_2);
	xw_bind2(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	xw_bind2(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_MW_BIND_ERR);
}

/* A bind naming the window by a key it no longer has. */
TEST_F(mw, bind_with_stale_key_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	self->mw->rkey = ibv_inc_rkey(self->mw->rkey);
	xw_bind1(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_MW_BIND_ERR);
}

/*
 * A type 1 window is never invalidated, nor is a user MR; a user QP's
 * LOCAL_INV of either is a protection error.
 */
TEST_F(mw, type1_local_invalidate_refused)
{
	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	xw_local_inv(_metadata, self, self->mw->rkey, IBV_WC_LOC_PROT_ERR);
}

TEST_F(mw, mr_local_invalidate_refused)
{
	xw_local_inv(_metadata, self, self->mr->rkey, IBV_WC_LOC_PROT_ERR);
}

/* Send with Invalidate of a type 1 window: the receiver refuses it. */
TEST_F(mw, type1_remote_invalidate_refused)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x52, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	struct ibv_wc wc;

	xw_alloc(_metadata, self, IBV_MW_TYPE_1);
	xw_bind1(_metadata, self,
		 xw_info(self, 0, XW_PAGE, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	ASSERT_EQ(0, xr_recv(self->s, 0x5ed, 0, 64));
	wr.invalidate_rkey = self->mw->rkey;
	ASSERT_EQ(0, ibv_post_send(self->c->qp, &wr, &bad));
	ASSERT_EQ(1, xr_poll(self->s->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_LOC_PROT_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
}
/*
 * RDMA Reads at IRD and ORD 1, each posted as soon as the previous one
 * completed (qperf -cm1 rc_rdma_read_lat): the responder must have
 * counted the previous Read as answered by the time its requester has
 * the whole Response, or the next one looks like an IRD overrun.
 */
FIXTURE(ird1) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
};

FIXTURE_SETUP(ird1)
{
	struct xr_opts o = { .buflen = 8192, .wr = 8, .sge = 1, .rd_atom = 1 };
	char why[320];

	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(ird1)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

TEST_F_TIMEOUT(ird1, reads_back_to_back, 300)
{
	static const size_t sizes[] = { 0, 1, 64, 4096, 8192 };
	struct ibv_wc wc;
	int i;

	xr_fill(self->p.srv.buf, 8192, 3);
	for (i = 0; i < 2000; i++) {
		size_t len = sizes[i % 5];

		ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_RDMA_READ, i, 0, len,
				     0, &self->p.srv, 0));
		ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1, XR_WAIT_MS))
			TH_LOG("Read %d: no completion", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
			TH_LOG("Read %d of %zu bytes: %s", i, len, xr_wc_str(&wc));
	}
	ASSERT_EQ(-1, xr_check(self->p.cli.buf, 8192, 3));
}

/*
 * RDMAP-04 at ORD 0: both ends connect with no Reads either way; a Read
 * posted anyway fails locally (siw does the same) and the QP goes to
 * ERR, flushing what follows. Nothing reaches the peer. With a Read as
 * the RTR message (p2p_rtr 3) the responder's IRD must still take that
 * one zero-length Read (E-06, RFC 6581 section 9.1), or the connection
 * never comes up.
 */
FIXTURE(ord0) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
};

FIXTURE_VARIANT(ord0) {
	int rtr;
};

FIXTURE_VARIANT_ADD(ord0, rtr_write) { .rtr = 2 };
FIXTURE_VARIANT_ADD(ord0, rtr_read) { .rtr = 3 };

FIXTURE_SETUP(ord0)
{
	struct xr_opts o = { .buflen = 8192, .wr = 8, .sge = 1, .rd_atom = 0 };
	char why[320];

	ASSERT_EQ(0, xr_load_modules());
	if (!xr_is_siw())
		ASSERT_EQ(0, xm_params(1, 2, variant->rtr));
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(ord0)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	if (!xr_is_siw())
		xm_params_default();
}

TEST_F_TIMEOUT(ord0, read_fails_locally, 120)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_query_qp(self->p.cli.qp, &attr,
				  IBV_QP_MAX_QP_RD_ATOMIC, &init));
	ASSERT_EQ(0, attr.max_rd_atomic);
	ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_RDMA_READ, 1, 0, 64,
			     IBV_SEND_SIGNALED,
			     &self->p.srv, 0));
	ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_SEND, 2, 0, 64,
			     IBV_SEND_SIGNALED, NULL, 0));
	ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1, XR_WAIT_MS));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	/* The server's receives flush as the connection ends; none succeeds. */
	while (xr_poll(self->p.srv.cq, &wc, 1, 2000) == 1)
		EXPECT_NE(IBV_WC_SUCCESS, wc.status);
}

/*
 * Arm, poll, sleep, across threads: a sender thread streams 20000 small
 * Sends with irregular gaps while the receiver polls its CQ dry, arms
 * it, polls once more and only then waits for the event. Placing a CQE
 * and reading the arm word race with arming and polling; a missing full
 * barrier on either side lets both miss, and the receiver then sleeps
 * with a CQE in its CQ.
 */
#define XA_MSGS		20000
#define XA_WINDOW	64

struct xa_sender {
	struct xr_side *c;
	int msgs;		/* to send; 0 for XA_MSGS */
	volatile int received;	/* the receiver's count, for credit */
	int err;
};

static void *xa_send_loop(void *arg)
{
	struct xa_sender *x = arg;
	int i, n, done = 0, msgs = x->msgs ? x->msgs : XA_MSGS;
	struct ibv_wc wc[16];

	for (i = 0; i < msgs; i++) {
		/* A Send needs a posted receive: stay within the window. */
		while (i - x->received >= XA_WINDOW)
			sched_yield();
		if (xr_post(x->c, IBV_WR_SEND, i, 0, 8, 0, NULL, 0)) {
			x->err = -1;
			return NULL;
		}
		if (i % 7 == 0)
			usleep(i % 5 * 20);
		while ((n = ibv_poll_cq(x->c->cq, 16, wc)) > 0)
			done += n;
		while (i + 1 - done >= 100) {
			n = ibv_poll_cq(x->c->cq, 16, wc);
			if (n < 0) {
				x->err = -2;
				return NULL;
			}
			done += n;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(conn, arm_poll_sleep_no_lost_event, 300)
{
	struct xa_sender x = { .c = self->c };
	struct ibv_wc wc[16];
	int i, n, got = 0, sleeps = 0;
	pthread_t th;

	for (i = 0; i < XA_WINDOW; i++)
		ASSERT_EQ(0, xr_recv(self->s, i, 64 * (i % 128), 64));
	ASSERT_EQ(0, pthread_create(&th, NULL, xa_send_loop, &x));
	while (got < XA_MSGS) {
		n = ibv_poll_cq(self->s->cq, 16, wc);
		if (!n) {
			ASSERT_EQ(0, ibv_req_notify_cq(self->s->cq, 0));
			n = ibv_poll_cq(self->s->cq, 16, wc);
		}
		if (!n) {
			sleeps++;
			if (!xr_wait_cq_event(self->s, 5000)) {
				n = ibv_poll_cq(self->s->cq, 16, wc);
				ASSERT_EQ(0, n)
					TH_LOG("lost event: %d CQEs waited 5 s in an armed CQ (after %d of %d)",
					       n, got, XA_MSGS);
				ASSERT_EQ(0, x.err);
				ASSERT_EQ(XA_MSGS, got) TH_LOG("the sender stalled");
			}
			continue;
		}
		ASSERT_LT(0, n);
		for (i = 0; i < n; i++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));
			got++;
			if (got + XA_WINDOW - 1 < XA_MSGS)
				ASSERT_EQ(0, xr_recv(self->s, got, 64 * (got % 128), 64));
		}
		x.received = got;
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, x.err);
	TH_LOG("%d messages, %d sleeps on the completion channel", got, sleeps);
}

/*
 * ibv_resize_cq: the CQEs not yet polled survive a resize, in order,
 * whether the CQ grows or shrinks; fewer slots than CQEs pending is
 * EINVAL and changes nothing; an armed CQ stays armed through resizes.
 */
TEST_F(conn, resize_cq_keeps_pending_completions)
{
	struct ibv_cq *cq = self->s->cq;
	struct ibv_wc wc[41];
	int i, cqe = cq->cqe;

	if (xr_is_siw())
		SKIP(return, "siw cannot resize a CQ");
	for (i = 0; i < 42; i++)
		ASSERT_EQ(0, xr_recv(self->s, i, 64 * i, 64));
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 1000 + i, 0, 8, 0,
				     NULL, 0));
	/*
	 * The server answers the Read after it placed the 40 Sends before
	 * it, so all 40 receive CQEs are in its CQ once the Read is done.
	 */
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 2000, 8192, 64, 0,
			     self->s, 0));
	ASSERT_EQ(41, xr_poll(self->c->cq, wc, 41, XR_WAIT_MS));
	for (i = 0; i < 41; i++)
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));

	ASSERT_EQ(10, xr_poll(cq, wc, 10, XR_WAIT_MS));
	for (i = 0; i < 10; i++)
		ASSERT_EQ((uint64_t)i, wc[i].wr_id);
	/* 30 pending: 16 slots are too few, and nothing changes. */
	ASSERT_EQ(EINVAL, ibv_resize_cq(cq, 16));
	ASSERT_EQ(cqe, cq->cqe);
	ASSERT_EQ(0, ibv_resize_cq(cq, 4096));
	ASSERT_LE(4096, cq->cqe);
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	/* Exactly enough room is enough. */
	ASSERT_EQ(0, ibv_resize_cq(cq, 30));
	ASSERT_LE(30, cq->cqe);
	ASSERT_GT(cqe, cq->cqe);
	ASSERT_EQ(30, xr_poll(cq, wc, 41, 500));
	for (i = 0; i < 30; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));
		ASSERT_EQ(10U + i, wc[i].wr_id) TH_LOG("CQE %d", i);
		ASSERT_EQ(8U, wc[i].byte_len);
	}

	/* The arm made before the two resizes raises the next event. */
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 1040, 0, 8, 0, NULL, 0));
	ASSERT_TRUE(xr_wait_cq_event(self->s, 5000))
		TH_LOG("no event: the arm was lost in the resize");
	ASSERT_EQ(1, xr_poll(cq, wc, 1, XR_WAIT_MS));
	ASSERT_EQ(40U, wc[0].wr_id);
	ASSERT_EQ(1, xr_poll(self->c->cq, wc, 1, XR_WAIT_MS));

	/* Down to one slot with nothing pending, and the CQ still works. */
	ASSERT_EQ(0, ibv_resize_cq(cq, 1));
	ASSERT_EQ(1, cq->cqe);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 1041, 0, 8, 0, NULL, 0));
	ASSERT_EQ(1, xr_poll(cq, wc, 1, XR_WAIT_MS));
	ASSERT_EQ(41U, wc[0].wr_id);
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(&wc[0]));
	ASSERT_EQ(1, xr_poll(self->c->cq, wc, 1, XR_WAIT_MS));
	ASSERT_EQ(0, ibv_resize_cq(cq, cqe));
	ASSERT_EQ(0, exchange(self->c, self->s, 60000, self->seed));
}

/*
 * Resizing while CQEs arrive: a sender streams Sends while the receiver
 * polls and resizes its CQ every few dozen CQEs, growing and shrinking
 * it. Every message is received exactly once, in order. The receiver
 * keeps 64 receives posted, so no size here is below what is pending.
 */
#define XR_RESIZE_MSGS	3000

TEST_F_TIMEOUT(conn, resize_cq_under_traffic, 300)
{
	static const int sizes[] = { 64, 4096, 100, 1024, 65, 257, 2048 };
	struct xa_sender x = { .c = self->c, .msgs = XR_RESIZE_MSGS };
	struct ibv_cq *cq = self->s->cq;
	int i, n, got = 0, resizes = 0;
	struct ibv_wc wc[16];
	long long end;
	pthread_t th;

	if (xr_is_siw())
		SKIP(return, "siw cannot resize a CQ");
	for (i = 0; i < XA_WINDOW; i++)
		ASSERT_EQ(0, xr_recv(self->s, i, 64 * (i % 128), 64));
	ASSERT_EQ(0, pthread_create(&th, NULL, xa_send_loop, &x));
	end = now_ms() + 240000;
	while (got < XR_RESIZE_MSGS && now_ms() < end) {
		n = ibv_poll_cq(cq, got % 3 + 1, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));
			ASSERT_EQ((uint64_t)got, wc[i].wr_id)
				TH_LOG("CQE %d after %d resizes", got, resizes);
			got++;
			if (got + XA_WINDOW - 1 < XR_RESIZE_MSGS)
				ASSERT_EQ(0, xr_recv(self->s, got + XA_WINDOW - 1,
						     64 * ((got + XA_WINDOW - 1) % 128),
						     64));
			if (got % 37 == 0) {
				int want = sizes[resizes % 7];

				ASSERT_EQ(0, ibv_resize_cq(cq, want))
					TH_LOG("resize %d to %d", resizes, want);
				ASSERT_LE(want, cq->cqe);
				resizes++;
			}
		}
		x.received = got;
		if (!n)
			sched_yield();
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, x.err);
	ASSERT_EQ(XR_RESIZE_MSGS, got) TH_LOG("after %d resizes", resizes);
	ASSERT_EQ(0, xr_poll(cq, wc, 1, 200)) TH_LOG("a CQE came twice");
	TH_LOG("%d messages, %d resizes", got, resizes);
}

/*
 * Writes answered in place (qperf's rc_rdma_write_poll_lat): each side
 * spins on the last byte of its buffer, and the moment the peer's value
 * is there it stores its own over the first and last byte and Writes
 * the buffer back. The receiver's CRC must be over the bytes received,
 * not over the target that the application is already changing.
 */
#define XW_LEN		4096
#define XW_ROUNDS	2000

struct xw_end {
	struct xr_side *me, *peer;
	uint8_t id, peer_id;
	bool starts;
	int err;
};

static void *xw_loop(void *arg)
{
	struct xw_end *e = arg;
	volatile uint8_t *first = e->me->buf, *last = e->me->buf + XW_LEN - 1;
	struct ibv_wc wc[8];
	long long end;
	int i, n;

	for (i = 0; i < XW_ROUNDS; i++) {
		if (i || !e->starts) {
			end = now_ms() + XR_WAIT_MS;
			while (*last != e->peer_id || *first != e->peer_id) {
				if (now_ms() > end) {
					e->err = i + 1;
					return NULL;
				}
			}
		}
		*first = e->id;
		*last = e->id;
		if (xr_send_sgl(e->me, IBV_WR_RDMA_WRITE, i,
				&(struct ibv_sge){ (uintptr_t)e->me->buf, XW_LEN,
						   e->me->mr->lkey }, 1,
				i % 32 == 31 ? IBV_SEND_SIGNALED : 0,
				(uintptr_t)e->peer->buf, e->peer->mr->rkey)) {
			e->err = -1;
			return NULL;
		}
		while ((n = ibv_poll_cq(e->me->cq, 8, wc)) > 0)
			if (wc[0].status != IBV_WC_SUCCESS) {
				e->err = -2;
				return NULL;
			}
	}
	return NULL;
}

TEST_F_TIMEOUT(conn, write_poll_in_place, 300)
{
	struct xw_end a = { .me = self->c, .peer = self->s, .id = 0x55,
			    .peer_id = 0xaa, .starts = true };
	struct xw_end b = { .me = self->s, .peer = self->c, .id = 0xaa,
			    .peer_id = 0x55 };
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	pthread_t ta, tb;

	memset(self->c->buf, 0, XW_LEN);
	memset(self->s->buf, 0, XW_LEN);
	ASSERT_EQ(0, pthread_create(&tb, NULL, xw_loop, &b));
	ASSERT_EQ(0, pthread_create(&ta, NULL, xw_loop, &a));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	if (a.err || b.err) {
		char out[8192];

		xsh(out, sizeof(out), "rdma res show qp link %s -dd",
		    self->link.ibdev);
		TH_LOG("client %d, server %d; %s: rx_crc_errors %lld, Terminates sent %lld/%lld/%lld; a.buf %02x..%02x b.buf %02x..%02x\n%s",
		       a.err, b.err, self->link.ibdev,
		       xr_port_counter(self->link.ibdev, "rx_crc_errors"),
		       xr_port_counter(self->link.ibdev, "tx_terminate_llp"),
		       xr_port_counter(self->link.ibdev, "tx_terminate_ddp"),
		       xr_port_counter(self->link.ibdev, "tx_terminate_rdmap"),
		       self->c->buf[0], self->c->buf[XW_LEN - 1],
		       self->s->buf[0], self->s->buf[XW_LEN - 1], out);
	}
	ASSERT_EQ(0, a.err) TH_LOG("client: round %d", a.err);
	ASSERT_EQ(0, b.err) TH_LOG("server: round %d", b.err);
	ASSERT_EQ(0, ibv_query_qp(self->s->qp, &qa, IBV_QP_STATE, &init));
	if (!xr_is_siw())
		ASSERT_EQ(IBV_QPS_RTS, qa.qp_state);
}

/* One RDMA Write of 64 MiB, then a Send; the sink is checked in full. */
TEST_F_TIMEOUT(conn, write_64mib, 180)
{
	xb_write(_metadata, self->c, self->s, self->seed);
}

/* One Send of 64 MiB into one 64 MiB receive, checked in full. */
TEST_F_TIMEOUT(conn, send_64mib, 180)
{
	xb_send(_metadata, self->c, self->s, self->seed);
}

/* One RDMA Read of 64 MiB from the server's memory, checked in full. */
TEST_F_TIMEOUT(conn, read_64mib, 180)
{
	xb_read(_metadata, self->c, self->s, self->seed);
}

/* ---- a link and a listener; connections made by the tests ---- */

FIXTURE(many) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair *p;
	int count;
};

FIXTURE_SETUP(many)
{
	char why[320];

	xr_lo_mtu(65536);
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, NULL, 0, NULL,
				why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(many)
{
	if (self->p)
		xr_pairs_fini(self->p, self->count);
	free(self->p);
	xr_net_fini(&self->net);
}

/* Receives through an SRQ, and an RDMA Write with Immediate (RFC 7306). */
FIXTURE(srq)
{
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;
	uint64_t seed;
};

FIXTURE_SETUP(srq)
{
	struct xr_opts o = { .buflen = 65536, .wr = 16, .sge = 2,
			     .rd_atom = 4, .srq = true };
	char why[320];

	xr_lo_mtu(65536);
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(srq)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

/* Wait for one async event of the wanted type (10 s). */
static bool async_event(struct ibv_context *ctx, enum ibv_event_type want)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	long long end = now_ms() + 10000;
	struct ibv_async_event ev;

	xr_nonblock(ctx->async_fd);
	while (now_ms() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		ibv_ack_async_event(&ev);
		if (ev.event_type == want)
			return true;
	}
	return false;
}

/* Sends land in SRQ buffers in order; the armed limit fires once (V-07). */
TEST_F(srq, receives_and_limit_event)
{
	struct ibv_srq_attr a = { .srq_limit = 3 };
	int i;

	if (xr_is_siw())
		SKIP(return, "siw: SRQ limit events untested here");
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, xr_recv(self->s, 100 + i, i * 4096, 4096));
	ASSERT_EQ(0, ibv_modify_srq(self->s->srq, &a, IBV_SRQ_LIMIT));
	xr_fill(self->c->buf, 5 * 4096, self->seed);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 200 + i, i * 4096,
				     1000 + i, 0, NULL, 0));
		EXPECT_ONE_WC(self->c, 200 + i, IBV_WC_SEND, -1);
		EXPECT_ONE_WC(self->s, 100 + i, IBV_WC_RECV, 1000 + i);
		ASSERT_EQ(0, memcmp(self->c->buf + i * 4096,
				    self->s->buf + i * 4096, 1000 + i));
	}
	/* 2 left, below the limit of 3: the event, and the limit disarmed. */
	EXPECT_TRUE(async_event(self->s->id->verbs,
				IBV_EVENT_SRQ_LIMIT_REACHED));
	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(0, ibv_query_srq(self->s->srq, &a));
	EXPECT_EQ(0, a.srq_limit);
}

/*
 * RDMA Write with Immediate: the data is placed, then the immediate value
 * consumes a receive and arrives bit for bit as posted (EXT-08).
 */
TEST_F(srq, write_with_immediate)
{
	struct ibv_sge g = xr_sge(self->c, 0, 3000);
	struct ibv_send_wr wr = {
		.wr_id = 0x51, .sg_list = &g, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(0xfeedf00d),
	}, *bad = NULL;
	struct ibv_wc wc;

	if (xr_is_siw())
		SKIP(return, "siw: no RFC 7306 Immediate Data");
	xr_fill(self->c->buf, 3000, self->seed);
	ASSERT_EQ(0, xr_recv(self->s, 0x52, 60000, 16));
	wr.wr.rdma.remote_addr = (uintptr_t)(self->s->buf + 8192);
	wr.wr.rdma.rkey = self->s->mr->rkey;
	ASSERT_EQ(0, ibv_post_send(self->c->qp, &wr, &bad));
	EXPECT_ONE_WC(self->c, 0x51, IBV_WC_RDMA_WRITE, -1);
	ASSERT_EQ(1, xr_poll(self->s->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	EXPECT_EQ(0x52, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0xfeedf00d), wc.imm_data);
	ASSERT_EQ(0, memcmp(self->c->buf, self->s->buf + 8192, 3000));
}

/* Connect, move 64 bytes, disconnect (both ends told), free: N times. */
TEST_F_TIMEOUT(many, churn_connect_send_disconnect, 600)
{
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 1 };
	const char *env = getenv("XIW_TEST_CHURN");
	int cycles = env ? atoi(env) : XR_CHURN_CYCLES;
	long long t = now_ms();
	int i;

	self->p = calloc(1, sizeof(*self->p));
	self->count = 1;
	for (i = 0; i < cycles; i++) {
		struct xr_side *c = &self->p->cli, *s = &self->p->srv;

		ASSERT_EQ(0, xr_connect(&self->net, self->p, 1, &o))
			TH_LOG("cycle %d: %s", i, self->net.err);
		ASSERT_EQ(0, exchange(c, s, 0, i)) TH_LOG("cycle %d", i);
		ASSERT_EQ(0, rdma_disconnect(c->id)) TH_LOG("cycle %d", i);
		ASSERT_TRUE(xr_wait_cm(self->net.sch, s->id,
				       RDMA_CM_EVENT_DISCONNECTED, XR_WAIT_MS,
				       NULL)) TH_LOG("cycle %d: server", i);
		ASSERT_TRUE(xr_wait_cm(self->net.cch, c->id,
				       RDMA_CM_EVENT_DISCONNECTED, XR_WAIT_MS,
				       NULL)) TH_LOG("cycle %d: client", i);
		xr_pairs_fini(self->p, 1);
	}
	TH_LOG("%d cycles in %lld ms", cycles, now_ms() - t);
}

/*
 * ORD and IRD of 128 (the default max_ord/max_ird, siw's too): 128 RDMA
 * Reads of 4 KiB posted at once are all in flight together and each
 * lands its own page.
 */
TEST_F_TIMEOUT(many, reads_128_in_flight, 120)
{
	struct xr_opts o = { .buflen = 2 * 128 * 4096, .wr = 128, .sge = 1,
			     .rd_atom = 128 };
	struct xr_side *c, *s;
	uint64_t seed = (uint64_t)now_ms();
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc[16];
	int i, n = 0;

	self->p = calloc(1, sizeof(*self->p));
	self->count = 1;
	ASSERT_EQ(0, xr_connect(&self->net, self->p, 1, &o)) TH_LOG("%s", self->net.err);
	c = &self->p->cli;
	s = &self->p->srv;
	if (!xr_is_siw()) {
		ASSERT_EQ(0, ibv_query_qp(c->qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC, &qi));
		EXPECT_EQ(128, qa.max_rd_atomic);
	}
	for (i = 0; i < 128; i++)
		xr_fill(s->buf + i * 4096, 4096, seed + i);
	for (i = 0; i < 128; i++)
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, i, 128 * 4096 + i * 4096,
				     4096, 0, s, i * 4096)) TH_LOG("Read %d", i);
	while (n < 128) {
		int got = xr_poll(c->cq, wc, 16, XR_WAIT_MS), k;

		ASSERT_LT(0, got) TH_LOG("%d of 128 Reads never completed", 128 - n);
		for (k = 0; k < got; k++, n++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[k].status) TH_LOG("%s", xr_wc_str(&wc[k]));
			ASSERT_EQ((uint64_t)n, wc[k].wr_id);
		}
	}
	for (i = 0; i < 128; i++)
		ASSERT_PATTERN(c->buf + 128 * 4096 + i * 4096, 4096, seed + i);
}

/*
 * ORD-03: completions of one send queue come in the order of its posts.
 * A Read of 2 MiB, then a Send of 64 bytes: the Send goes out behind the
 * Read Request and is placed at the peer long before the Read's last
 * byte is back, yet its completion must wait for the Read's. Once the
 * peer has the Send, the Read still in flight at the requester must
 * hold the Send's completion back: the first completion is the Read.
 */
TEST_F_TIMEOUT(many, read_holds_back_later_send, 120)
{
	const size_t big = 2 << 20;
	struct xr_opts o = { .buflen = 2 * big + 4096, .wr = 4, .sge = 1,
			     .rd_atom = 1 };
	uint64_t seed = (uint64_t)now_ms();
	struct xr_side *c, *s;
	struct ibv_wc wc[2];
	int n = 0, got;

	self->p = calloc(1, sizeof(*self->p));
	self->count = 1;
	ASSERT_EQ(0, xr_connect(&self->net, self->p, 1, &o))
		TH_LOG("%s", self->net.err);
	c = &self->p->cli;
	s = &self->p->srv;
	xr_fill(s->buf, big, seed);
	xr_fill(c->buf + 2 * big, 64, seed + 1);
	ASSERT_EQ(0, xr_recv(s, 7, 2 * big, 64));
	ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, 1, big, big, 0, s, 0));
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 2, 2 * big, 64, 0, NULL, 0));
	ASSERT_EQ(1, xr_poll(s->cq, wc, 1, XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(&wc[0]));
	EXPECT_EQ(7, wc[0].wr_id);
	while (n < 2) {
		got = xr_poll(c->cq, wc + n, 2 - n, XR_WAIT_MS);
		ASSERT_LT(0, got) TH_LOG("%d of 2 completions never came", 2 - n);
		n += got;
	}
	EXPECT_EQ(1, wc[0].wr_id) TH_LOG("the Send completed before the Read");
	EXPECT_EQ(2, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(&wc[0]));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[1].status) TH_LOG("%s", xr_wc_str(&wc[1]));
	ASSERT_PATTERN(c->buf + big, big, seed);
	ASSERT_PATTERN(s->buf + 2 * big, 64, seed + 1);
}

/* XR_CONNS connections set up at once; each moves 64 KiB each way. */
TEST_F_TIMEOUT(many, concurrent_connections, 600)
{
	struct xr_opts o = { .buflen = 2 * 65536, .wr = 4, .sge = 1,
			     .rd_atom = 4 };
	const char *env = getenv("XIW_TEST_CONNS");
	int conns = env ? atoi(env) : XR_CONNS;
	uint64_t seed = (uint64_t)now_ms();
	long long t = now_ms();
	struct ibv_wc wc;
	int i;

	if (!env && xr_is_siw() && conns > XR_CONNS_SIW) {
		TH_LOG("siw: %d connections, not %d (ibv_create_cq fails beyond)",
		       XR_CONNS_SIW, conns);
		conns = XR_CONNS_SIW;
	}

	self->count = conns;
	self->p = calloc(conns, sizeof(*self->p));
	ASSERT_EQ(0, xr_connect(&self->net, self->p, conns, &o))
		TH_LOG("%d connections: %s", conns, self->net.err);
	TH_LOG("%d connections in %lld ms", conns, now_ms() - t);
	for (i = 0; i < conns; i++) {
		ASSERT_EQ(0, xr_recv(&self->p[i].srv, i, 0, 65536));
		xr_fill(self->p[i].cli.buf, 65536, seed + i);
		ASSERT_EQ(0, xr_post(&self->p[i].cli, IBV_WR_SEND, i, 0, 65536,
				     0, NULL, 0));
	}
	for (i = 0; i < conns; i++) {
		struct xr_side *c = &self->p[i].cli, *s = &self->p[i].srv;

		EXPECT_ONE_WC(s, i, IBV_WC_RECV, 65536);
		EXPECT_ONE_WC(c, i, IBV_WC_SEND, -1);
		/* The server's copy comes back by RDMA Read. */
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, i, 65536, 65536, 0,
				     s, 0));
	}
	for (i = 0; i < conns; i++) {
		ASSERT_EQ(1, xr_poll(self->p[i].cli.cq, &wc, 1, XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("conn %d: %s", i, xr_wc_str(&wc));
		ASSERT_PATTERN(self->p[i].cli.buf + 65536, 65536, seed + i);
	}
	TH_LOG("%d connections, 2 x 64 KiB each: %lld ms", conns, now_ms() - t);
}

/*
 * ---- zero-copy transmit ----
 *
 * tx_zcopy=2 sends zero-copy on lo too (the default 1 only on routes out
 * of the host), tx_zcopy_min=4096 from one page up; the loopback MTU is
 * 1500, so every message is many FPDUs and skbs. netem on lo delays or
 * drops segments of both directions.
 */
#define XZ_PARAMS	"/sys/module/xiw/parameters/"
#define XZ_CPU1		"/sys/devices/system/cpu/cpu1/"
#define XZ_OWN_PAGES	"/sys/kernel/debug/xiw/own_pages"
#define XZ_MIN		4096
#define XZ_HALF		(2 << 20)

FIXTURE(zcopy) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;
	uint64_t seed;
};

static int xz_param(const char *name, int val)
{
	return sh("echo %d > " XZ_PARAMS "%s", val, name);
}

/* netem on lo's root with ARGS (delay, loss); 0, or a failed shell. */
static int xz_netem(const char *args)
{
	return sh("modprobe sch_netem && tc qdisc add dev lo root netem %s",
		  args);
}

/* Post one signalled 8 KiB Write and wait for it; its time, or -1. */
static long long xz_timed_write(struct xr_side *c, struct xr_side *s,
				uint64_t id, struct ibv_wc *wc)
{
	long long t0 = now_ms();

	if (xr_post(c, IBV_WR_RDMA_WRITE, id, 0, 8192, 0, s, XZ_HALF) ||
	    xr_poll(c->cq, wc, 1, XR_WAIT_MS) != 1)
		return -1;
	return now_ms() - t0;
}

/* The xiw module's reference count; -1 if unreadable. */
static long xz_module_refs(void)
{
	char buf[32];

	if (read_text("/sys/module/xiw/refcnt", buf, sizeof(buf)) <= 0)
		return -1;
	return atol(buf);
}

/*
 * The module's reference count once unchanged for half a second (an
 * earlier test's zero-copy skbs may still be letting go), or -1 if it
 * does not settle within ten seconds.
 */
static long xz_module_refs_settled(void)
{
	long r = xz_module_refs(), n;
	int i, stable = 0;

	for (i = 0; i < 100 && stable < 5; i++) {
		usleep(100 * 1000);
		n = xz_module_refs();
		stable = n == r ? stable + 1 : 0;
		r = n;
	}
	return stable >= 5 ? r : -1;
}

/* A counter of Tcp: in /proc/net/snmp; -1 if not found. */
static long long xz_tcp_stat(const char *name)
{
	char head[1024], vals[1024], *hs, *vs, *h, *v;
	long long r = -1;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return -1;
	while (fgets(head, sizeof(head), f)) {
		if (strncmp(head, "Tcp:", 4) || !fgets(vals, sizeof(vals), f))
			continue;
		h = strtok_r(head, " \n", &hs);
		v = strtok_r(vals, " \n", &vs);
		while (h && v) {
			if (!strcmp(h, name))
				r = atoll(v);
			h = strtok_r(NULL, " \n", &hs);
			v = strtok_r(NULL, " \n", &vs);
		}
		break;
	}
	fclose(f);
	return r;
}

FIXTURE_SETUP(zcopy)
{
	struct xr_opts o = { .buflen = 2 * XZ_HALF, .wr = 64, .sge = 1,
			     .rd_atom = 4 };
	char why[320];

	if (xr_is_siw())
		XSKIP_SETUP("xiw's zero-copy transmit; siw has no such knob");
	/* A test that ended before its teardown may have left it offline. */
	if (path_exists(XZ_CPU1 "online"))
		sh("echo 1 > " XZ_CPU1 "online");
	xr_lo_mtu(1500);
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, xz_param("tx_zcopy", 2));
	ASSERT_EQ(0, xz_param("tx_zcopy_min", XZ_MIN));
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(zcopy)
{
	sh("tc qdisc del dev lo root >/dev/null 2>&1");
	if (path_exists(XZ_CPU1 "online"))
		sh("echo 1 > " XZ_CPU1 "online");
	if (path_exists(XZ_PARAMS "tx_zcopy")) {
		xz_param("tx_zcopy", 1);		/* the defaults */
		xz_param("tx_zcopy_min", 16384);
		xz_param("tx_own_pages", 1);
	}
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

/* A Write of len from the client's offset 0 to the server's XZ_HALF. */
static int xz_write_fenced(struct xr_side *c, struct xr_side *s, size_t len,
			   uint64_t id)
{
	struct ibv_wc wc;

	if (xr_recv(s, id, 0, 8) ||
	    xr_post(c, IBV_WR_RDMA_WRITE, id, 0, len, 0, s, XZ_HALF) ||
	    xr_post(c, IBV_WR_SEND, id + 1, XZ_HALF, 8, 0, NULL, 0))
		return -1;
	if (xr_poll(s->cq, &wc, 1, XR_WAIT_MS) != 1 || wc.status)
		return -2;
	return 0;
}

/*
 * Send, Write and Read at sizes around tx_zcopy_min: the data arrives
 * intact, and every message of at least XZ_MIN bytes (Send, Write, Read
 * Response) counts in tx_zcopy_messages/bytes, the smaller one not.
 * Each zero-copy message holds a module reference until TCP lets go of
 * its pages: the module's count comes back to where it was.
 */
TEST_F_TIMEOUT(zcopy, sizes_and_counters, 300)
{
	static const size_t sizes[] = { XZ_MIN - 1, XZ_MIN, XZ_MIN + 1,
					65536, 1 << 20 };
	const char *ib = self->link.ibdev;
	long long m0 = xr_port_counter(ib, "tx_zcopy_messages");
	long long b0 = xr_port_counter(ib, "tx_zcopy_bytes");
	long long want_m = 0, want_b = 0;
	struct ibv_wc wc[2];
	unsigned int i;

	long refs0 = xz_module_refs();

	ASSERT_LE(0, m0);
	ASSERT_LE(0, b0);
	ASSERT_LE(0, refs0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t sz = sizes[i];
		uint64_t seed = self->seed + 3 * i;

		xr_fill(self->c->buf, sz, seed);
		ASSERT_EQ(0, xr_recv(self->s, 0x100 + i, XZ_HALF, sz));
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 0x200 + i, 0, sz, 0,
				     NULL, 0));
		EXPECT_ONE_WC(self->s, 0x100 + i, IBV_WC_RECV, sz);
		EXPECT_ONE_WC(self->c, 0x200 + i, IBV_WC_SEND, -1);
		ASSERT_PATTERN(self->s->buf + XZ_HALF, sz, seed);

		xr_fill(self->c->buf, sz, seed + 1);
		ASSERT_EQ(0, xz_write_fenced(self->c, self->s, sz, 0x300 + 2 * i))
			TH_LOG("size %zu", sz);
		ASSERT_PATTERN(self->s->buf + XZ_HALF, sz, seed + 1);
		ASSERT_EQ(2, xr_poll(self->c->cq, wc, 2, XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[1].status) TH_LOG("%s", xr_wc_str(wc + 1));

		xr_fill(self->s->buf, sz, seed + 2);
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 0x400 + i,
				     XZ_HALF, sz, 0, self->s, 0));
		EXPECT_ONE_WC(self->c, 0x400 + i, IBV_WC_RDMA_READ, -1);
		ASSERT_PATTERN(self->c->buf + XZ_HALF, sz, seed + 2);
		if (sz >= XZ_MIN) {
			want_m += 3;
			want_b += 3 * (long long)sz;
		}
	}
	EXPECT_EQ(m0 + want_m, xr_port_counter(ib, "tx_zcopy_messages"));
	EXPECT_EQ(b0 + want_b, xr_port_counter(ib, "tx_zcopy_bytes"));
	EXPECT_TRUE(WAIT_UNTIL(xz_module_refs() == refs0, 5000))
		TH_LOG("module references %ld, %ld before", xz_module_refs(),
		       refs0);
}

/* A Read of len into the client's XZ_HALF from the server's 0; 0 or -1. */
static int xz_read(struct xr_side *c, struct xr_side *s, size_t len,
		   uint64_t id, struct ibv_wc *wc)
{
	if (xr_post(c, IBV_WR_RDMA_READ, id, XZ_HALF, len, 0, s, 0) ||
	    xr_poll(c->cq, wc, 1, 6 * XR_WAIT_MS) != 1 || wc->wr_id != id)
		return -1;
	return 0;
}

/*
 * With the default tx_zcopy=1, lo (which gathers and checksums) carries
 * Read Responses of at least tx_zcopy_min by reference (MSG_SPLICE_PAGES
 * on 6.12, sendpage on 6.1), with no ubuf_info
 * and no module reference: they count in tx_zcopy_messages/bytes, the
 * data arrives intact, a smaller Response and the Sends and Writes (which
 * would be copied on delivery) do not count. tx_zcopy=0 copies them too.
 */
TEST_F_TIMEOUT(zcopy, read_response_by_reference, 300)
{
	static const size_t sizes[] = { XZ_MIN - 1, XZ_MIN, 65536, 1 << 20 };
	const char *ib = self->link.ibdev;
	long long m0, b0, want_m = 0, want_b = 0;
	long refs0 = xz_module_refs();
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_LE(0, refs0);
	ASSERT_EQ(0, xz_param("tx_zcopy", 1));
	m0 = xr_port_counter(ib, "tx_zcopy_messages");
	b0 = xr_port_counter(ib, "tx_zcopy_bytes");
	ASSERT_LE(0, m0);
	ASSERT_LE(0, b0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t sz = sizes[i];
		uint64_t seed = self->seed + 5 * i;

		xr_fill(self->s->buf, sz, seed);
		memset(self->c->buf + XZ_HALF, 0xee, sz);
		ASSERT_EQ(0, xz_read(self->c, self->s, sz, 0x500 + i, &wc));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_PATTERN(self->c->buf + XZ_HALF, sz, seed);
		if (sz >= XZ_MIN) {
			want_m++;
			want_b += (long long)sz;
		}
	}
	/* A Write and a Send of 64 KiB from the client: copied on lo. */
	xr_fill(self->c->buf, 65536, self->seed + 1);
	ASSERT_EQ(0, xz_write_fenced(self->c, self->s, 65536, 0x510));
	ASSERT_PATTERN(self->s->buf + XZ_HALF, 65536, self->seed + 1);
	EXPECT_ONE_WC(self->c, 0x510, IBV_WC_RDMA_WRITE, -1);
	EXPECT_ONE_WC(self->c, 0x511, IBV_WC_SEND, -1);
	EXPECT_EQ(m0 + want_m, xr_port_counter(ib, "tx_zcopy_messages"));
	EXPECT_EQ(b0 + want_b, xr_port_counter(ib, "tx_zcopy_bytes"));

	ASSERT_EQ(0, xz_param("tx_zcopy", 0));
	xr_fill(self->s->buf, 1 << 20, self->seed + 2);
	memset(self->c->buf + XZ_HALF, 0xee, 1 << 20);
	ASSERT_EQ(0, xz_read(self->c, self->s, 1 << 20, 0x520, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_PATTERN(self->c->buf + XZ_HALF, 1 << 20, self->seed + 2);
	EXPECT_EQ(m0 + want_m, xr_port_counter(ib, "tx_zcopy_messages"));
	EXPECT_TRUE(WAIT_UNTIL(xz_module_refs() == refs0, 5000))
		TH_LOG("module references %ld, %ld before", xz_module_refs(),
		       refs0);
}

/*
 * Read Responses sent by reference with lo dropping 5% of the segments:
 * each Read's data is the source as it was when posted, although the
 * responder rewrites the source as soon as the Read completes (a
 * retransmission the requester needed came before its completion), and
 * the responder deregisters the source MR at once after the last one,
 * with segments perhaps still unacknowledged: the skbs' page references
 * keep the pages, and nothing warns. Four rounds of 1 MiB; some segment
 * must have been retransmitted, or the test proved nothing.
 */
TEST_F_TIMEOUT(zcopy, read_response_by_reference_under_loss, 300)
{
	const char *ib = self->link.ibdev;
	long long r0, m0 = xr_port_counter(ib, "tx_zcopy_messages");
	struct ibv_wc wc;
	int round;

	ASSERT_EQ(0, xz_param("tx_zcopy", 1));
	if (xz_netem("loss 5%"))
		SKIP(return, "no netem on lo");
	r0 = xz_tcp_stat("RetransSegs");
	ASSERT_LE(0, r0);
	ASSERT_LE(0, m0);
	for (round = 0; round < 4; round++) {
		uint64_t seed = self->seed + 7 * round;

		xr_fill(self->s->buf, 1 << 20, seed);
		ASSERT_EQ(0, xz_read(self->c, self->s, 1 << 20, 0x600 + round,
				     &wc)) TH_LOG("round %d", round);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		memset(self->s->buf, 0xa5, 1 << 20);
		ASSERT_PATTERN(self->c->buf + XZ_HALF, 1 << 20, seed);
	}
	ASSERT_EQ(0, ibv_dereg_mr(self->s->mr));
	self->s->mr = NULL;
	TH_LOG("%lld segments retransmitted", xz_tcp_stat("RetransSegs") - r0);
	ASSERT_GT(xz_tcp_stat("RetransSegs"), r0);
	ASSERT_EQ(m0 + 4, xr_port_counter(ib, "tx_zcopy_messages"));
}

/* Pages of xiw's own taken for payload (tx_own_pages), or -1. */
static long long xz_pages(const char *ib)
{
	long long r = xr_port_counter(ib, "tx_page_reuses");
	long long a = xr_port_counter(ib, "tx_page_allocs");

	return r < 0 || a < 0 ? -1 : r + a;
}

/*
 * tx_own_pages (on by default) with tx_zcopy=1: lo gathers and
 * checksums, so a Send or Write of at least tx_zcopy_min is copied into
 * pages of xiw's own, which TCP references. At this MTU an FPDU carries
 * about a third of a page; each one's payload goes on in the page the
 * last one's ended in, so 40 Writes of 64 KiB take 640 pages, not one
 * per FPDU (about 1,800). A page comes back into use once no skb holds
 * it, so over many Writes some are reused. A Read Response goes by its
 * own pages (no page of ours) unless tx_zcopy=0; tx_own_pages=0 lets
 * TCP copy. The data is whole every time.
 */
TEST_F_TIMEOUT(zcopy, own_pages, 300)
{
	const char *ib = self->link.ibdev;
	long long p0, r0, m0;
	struct ibv_wc wc;
	int i;

	ASSERT_EQ(0, xz_param("tx_zcopy", 1));
	p0 = xz_pages(ib);
	r0 = xr_port_counter(ib, "tx_page_reuses");
	m0 = xr_port_counter(ib, "tx_zcopy_messages");
	ASSERT_LE(0, p0);
	ASSERT_LE(0, m0);
	for (i = 0; i < 40; i++) {
		uint64_t seed = self->seed + 3 * i;

		xr_fill(self->c->buf, 65536, seed);
		ASSERT_EQ(0, xz_write_fenced(self->c, self->s, 65536,
					     0x700 + 2 * i)) TH_LOG("Write %d", i);
		ASSERT_PATTERN(self->s->buf + XZ_HALF, 65536, seed);
		EXPECT_ONE_WC(self->c, 0x700 + 2 * i, IBV_WC_RDMA_WRITE, -1);
		EXPECT_ONE_WC(self->c, 0x701 + 2 * i, IBV_WC_SEND, -1);
	}
	/* 16 pages per Write, FPDUs sharing them; and some reused. */
	EXPECT_EQ(p0 + 40 * 16, xz_pages(ib));
	EXPECT_LT(r0, xr_port_counter(ib, "tx_page_reuses"));
	EXPECT_EQ(m0, xr_port_counter(ib, "tx_zcopy_messages"));

	/* A Read Response goes by reference: no page of ours. */
	p0 = xz_pages(ib);
	xr_fill(self->s->buf, 65536, self->seed + 1);
	ASSERT_EQ(0, xz_read(self->c, self->s, 65536, 0x760, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_PATTERN(self->c->buf + XZ_HALF, 65536, self->seed + 1);
	EXPECT_EQ(p0, xz_pages(ib));
	EXPECT_EQ(m0 + 1, xr_port_counter(ib, "tx_zcopy_messages"));
	/* Without that (tx_zcopy=0), in pages of ours. */
	ASSERT_EQ(0, xz_param("tx_zcopy", 0));
	xr_fill(self->s->buf, 65536, self->seed + 2);
	ASSERT_EQ(0, xz_read(self->c, self->s, 65536, 0x761, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_PATTERN(self->c->buf + XZ_HALF, 65536, self->seed + 2);
	EXPECT_LE(p0 + 16, xz_pages(ib));
	EXPECT_EQ(m0 + 1, xr_port_counter(ib, "tx_zcopy_messages"));

	/* tx_own_pages=0: TCP copies, no page of ours. */
	ASSERT_EQ(0, xz_param("tx_own_pages", 0));
	p0 = xz_pages(ib);
	xr_fill(self->c->buf, 65536, self->seed + 3);
	ASSERT_EQ(0, xz_write_fenced(self->c, self->s, 65536, 0x770));
	ASSERT_PATTERN(self->s->buf + XZ_HALF, 65536, self->seed + 3);
	EXPECT_ONE_WC(self->c, 0x770, IBV_WC_RDMA_WRITE, -1);
	EXPECT_ONE_WC(self->c, 0x771, IBV_WC_SEND, -1);
	EXPECT_EQ(p0, xz_pages(ib));
}

/*
 * Writes from pages of xiw's own with lo dropping 5% of the segments:
 * the client rewrites its buffer as soon as each Write of 1 MiB
 * completes, and the server still gets the data as it was posted. The
 * copy was made before the completion, and a page an skb still holds
 * for a retransmission is never taken again (the ring wraps many times
 * over 1 MiB at this MTU). Some segment must have been retransmitted,
 * or the test proved nothing.
 */
TEST_F_TIMEOUT(zcopy, own_pages_under_loss, 300)
{
	const char *ib = self->link.ibdev;
	long long r0, p0 = xz_pages(ib);
	long long u0 = xr_port_counter(ib, "tx_page_reuses");
	struct ibv_wc wc;
	int round;

	ASSERT_EQ(0, xz_param("tx_zcopy", 1));
	ASSERT_LE(0, p0);
	if (xz_netem("loss 5%"))
		SKIP(return, "no netem on lo");
	r0 = xz_tcp_stat("RetransSegs");
	ASSERT_LE(0, r0);
	for (round = 0; round < 4; round++) {
		uint64_t seed = self->seed + 11 * round;
		uint64_t id = 0x780 + 2 * round;

		xr_fill(self->c->buf, 1 << 20, seed);
		ASSERT_EQ(0, xr_recv(self->s, id, 0, 8));
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, id, 0,
				     1 << 20, 0, self->s, XZ_HALF));
		ASSERT_EQ(1, xr_poll(self->c->cq, &wc, 1, XR_WAIT_MS))
			TH_LOG("round %d", round);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_EQ(id, wc.wr_id);
		memset(self->c->buf, 0xa5, 1 << 20);
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, id + 1, 1 << 20, 8,
				     0, NULL, 0));
		ASSERT_EQ(1, xr_poll(self->s->cq, &wc, 1, XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		EXPECT_ONE_WC(self->c, id + 1, IBV_WC_SEND, -1);
		ASSERT_PATTERN(self->s->buf + XZ_HALF, 1 << 20, seed);
	}
	TH_LOG("%lld segments retransmitted", xz_tcp_stat("RetransSegs") - r0);
	ASSERT_GT(xz_tcp_stat("RetransSegs"), r0);
	EXPECT_LE(p0 + 4 * 256, xz_pages(ib));
	/* Pages were taken again meanwhile: only ones no skb held. */
	TH_LOG("%lld pages reused", xr_port_counter(ib, "tx_page_reuses") - u0);
	EXPECT_LT(u0, xr_port_counter(ib, "tx_page_reuses"));
}

/*
 * The pages xiw's rings of own pages hold (debugfs own_pages), on CPU
 * cpu or, with cpu -1, on all; -1 if unreadable.
 */
static long xz_own_held(int cpu)
{
	char want[24], name[24], buf[65536], *line, *save = NULL;
	long n;

	if (cpu < 0)
		snprintf(want, sizeof(want), "total");
	else
		snprintf(want, sizeof(want), "cpu%d", cpu);
	if (read_text(XZ_OWN_PAGES, buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%23s %ld", name, &n) == 2 &&
		    !strcmp(name, want))
			return n;
	return -1;
}

/* Run this thread on CPU cpu only, or with cpu -1 on any; 0 or -1. */
static int xz_pin(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Four Writes of 64 KiB posted from CPU cpu; 0, or which one failed. */
static int xz_writes_on(struct xr_side *c, struct xr_side *s, uint64_t seed,
			int cpu, uint64_t id)
{
	struct ibv_wc wc;
	int i;

	if (xz_pin(cpu))
		return -1;
	for (i = 0; i < 4; i++, id += 2) {
		xr_fill(c->buf, 65536, seed + i);
		if (xz_write_fenced(c, s, 65536, id) ||
		    xr_check(s->buf + XZ_HALF, 65536, seed + i) != -1 ||
		    xr_poll(c->cq, &wc, 1, XR_WAIT_MS) != 1 || wc.status ||
		    xr_poll(c->cq, &wc, 1, XR_WAIT_MS) != 1 || wc.status)
			return i + 1;
	}
	return xz_pin(-1);
}

/*
 * Copied Writes on lo into pages of xiw's own (tx_zcopy=1, tx_own_pages),
 * with debugfs mounted to see the rings: 0, or -1 if that cannot be.
 */
static int xz_own_pages_on(void)
{
	sh("mountpoint -q /sys/kernel/debug || "
	   "mount -t debugfs none /sys/kernel/debug >/dev/null 2>&1");
	if (!path_exists(XZ_OWN_PAGES) || xz_param("tx_zcopy", 1) ||
	    xz_param("tx_own_pages", 1))
		return -1;
	return 0;
}

/*
 * The rings of own pages hold pages only while QPs exist. Writes posted
 * from CPU 0 and from CPU 1 leave pages in both CPUs' rings; CPU 1 goes
 * offline and keeps its pages while the QPs are there. Once the last QP
 * is gone, within the driver's delay (two seconds) every ring is empty,
 * the offline CPU's too. CPU 1 comes back.
 */
TEST_F_TIMEOUT(zcopy, own_pages_emptied_when_idle, 300)
{
	bool cpu1 = path_exists(XZ_CPU1 "online");

	ASSERT_EQ(0, xz_own_pages_on());
	ASSERT_EQ(0, xz_writes_on(self->c, self->s, self->seed, 0, 0x7a0));
	TH_LOG("CPU 0's ring holds %ld pages", xz_own_held(0));
	ASSERT_LT(0, xz_own_held(0));
	if (cpu1) {
		ASSERT_EQ(0, xz_writes_on(self->c, self->s, self->seed + 8, 1,
					  0x7b0));
		TH_LOG("CPU 1's ring holds %ld pages", xz_own_held(1));
		ASSERT_LT(0, xz_own_held(1));
		ASSERT_EQ(0, sh("echo 0 > " XZ_CPU1 "online"));
		ASSERT_LT(0, xz_own_held(1));
	} else {
		TH_LOG("one CPU: no offline CPU's ring to see emptied");
	}
	xr_pairs_fini(&self->p, 1);
	ASSERT_TRUE(WAIT_UNTIL(xz_own_held(-1) == 0, 20000))
		TH_LOG("%ld pages still held", xz_own_held(-1));
	if (cpu1)
		ASSERT_EQ(0, sh("echo 1 > " XZ_CPU1 "online"));
}

/*
 * The rings are a cache the kernel may take back: with the QPs still
 * there, pages held after Writes from CPU 0 all go when the shrinkers
 * run (echo 2 > drop_caches), and the next Writes fill the ring again
 * and still arrive intact.
 */
TEST_F_TIMEOUT(zcopy, own_pages_shrunk, 300)
{
	long before;

	ASSERT_EQ(0, xz_own_pages_on());
	ASSERT_EQ(0, xz_writes_on(self->c, self->s, self->seed, 0, 0x7c0));
	before = xz_own_held(-1);
	TH_LOG("the rings hold %ld pages", before);
	ASSERT_LT(0, before);
	ASSERT_EQ(0, sh("echo 2 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, xz_own_held(-1))
		TH_LOG("%ld of %ld pages still held", xz_own_held(-1), before);
	ASSERT_EQ(0, xz_writes_on(self->c, self->s, self->seed + 8, 0,
				  0x7d0));
	ASSERT_LT(0, xz_own_held(0));
}

/*
 * Reclaim while transmit passes take pages: a thread drops caches (the
 * shrinker empties the rings from whatever CPU it runs on) while Writes
 * posted from CPU 0 and CPU 1 in turn copy into them, a round from each
 * and more until the thread has dropped caches three more times (at
 * most 32 rounds). Every Write must arrive intact and complete.
 */
struct xz_dropper {
	atomic_long drops;	/* done so far */
	atomic_bool stop;
	long long first_ms;	/* how long the first took */
};

static void *xz_drop_loop(void *arg)
{
	struct xz_dropper *d = arg;
	long long t0 = now_ms();

	while (!atomic_load(&d->stop)) {
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

		if (fd < 0 || write(fd, "2", 1) != 1) {
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
		if (!atomic_load(&d->drops))
			d->first_ms = now_ms() - t0;
		atomic_fetch_add(&d->drops, 1);
	}
	return NULL;
}

TEST_F_TIMEOUT(zcopy, own_pages_shrunk_under_traffic, 300)
{
	int cpus = path_exists(XZ_CPU1 "online") ? 2 : 1, round, w = 0;
	struct xz_dropper d = { 0 };
	pthread_t th;
	long d0, d1;

	ASSERT_EQ(0, xz_own_pages_on());
	ASSERT_EQ(0, pthread_create(&th, NULL, xz_drop_loop, &d));
	WAIT_UNTIL(atomic_load(&d.drops) > 0, 60000);
	d0 = atomic_load(&d.drops);
	for (round = 0; round < 32 && !w &&
	     (round < cpus || atomic_load(&d.drops) < d0 + 3); round++)
		w = xz_writes_on(self->c, self->s, self->seed + 8 * round,
				 round % cpus, 0x7e0 + 8 * round);
	d1 = atomic_load(&d.drops);
	atomic_store(&d.stop, true);
	pthread_join(th, NULL);
	xz_pin(-1);
	TH_LOG("first drop %lld ms; %d rounds of Writes, %ld drops meanwhile",
	       d.first_ms, round, d1 - d0);
	ASSERT_EQ(0, w) TH_LOG("round %d: Write %d failed", round - 1, w);
	ASSERT_LT(0, d0) TH_LOG("no drop_caches went through");
	ASSERT_LT(d0, d1) TH_LOG("no drop while the Writes ran");
}

/*
 * A zero-copy Write completes only once the peer acknowledged it: with
 * every segment on lo delayed by XZ_DELAY, not before a round trip. The
 * same Write copied (tx_zcopy=0) completes as soon as TCP has it: the
 * control that shows the measure tells the two apart.
 */
#define XZ_DELAY	400
TEST_F(zcopy, completion_waits_for_ack)
{
	long long zc_ms, copy_ms;
	struct ibv_wc wc;
	char delay[32];

	snprintf(delay, sizeof(delay), "delay %dms", XZ_DELAY);
	if (xz_netem(delay))
		SKIP(return, "no netem on lo");
	xr_fill(self->c->buf, 8192, self->seed);
	zc_ms = xz_timed_write(self->c, self->s, 1, &wc);
	ASSERT_LE(0, zc_ms) TH_LOG("the zero-copy Write never completed");
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));

	ASSERT_EQ(0, xz_param("tx_zcopy", 0));
	copy_ms = xz_timed_write(self->c, self->s, 2, &wc);
	ASSERT_LE(0, copy_ms) TH_LOG("the copied Write never completed");
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	TH_LOG("zero-copy Write completed after %lld ms, copied after %lld ms (delay %d ms each way)",
	       zc_ms, copy_ms, XZ_DELAY);
	ASSERT_GE(zc_ms, 2 * XZ_DELAY - 10)
		TH_LOG("completed before the acknowledgement could be back");
	ASSERT_LT(copy_ms, 2 * XZ_DELAY)
		TH_LOG("the copied Write waited a round trip too");
}

/*
 * Rewrite the source as soon as a zero-copy Write completes, with lo
 * dropping 5% of the segments: whatever TCP retransmits must still be
 * what was posted (MPA CRC on: a changed byte would end the connection
 * with a Terminate). Four rounds of 1 MiB; some segment must have been
 * retransmitted, or the test proved nothing.
 */
TEST_F_TIMEOUT(zcopy, rewrite_after_completion_under_loss, 300)
{
	const char *ib = self->link.ibdev;
	long long r0, m0 = xr_port_counter(ib, "tx_zcopy_messages");
	struct ibv_wc wc[2];
	int round;

	if (xz_netem("loss 5%"))
		SKIP(return, "no netem on lo");
	r0 = xz_tcp_stat("RetransSegs");
	ASSERT_LE(0, r0);
	for (round = 0; round < 4; round++) {
		uint64_t seed = self->seed + round;

		xr_fill(self->c->buf, 1 << 20, seed);
		ASSERT_EQ(0, xr_recv(self->s, 0x10 + round, 0, 8));
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 0x20 + round,
				     0, 1 << 20, 0, self->s, XZ_HALF));
		ASSERT_EQ(1, xr_poll(self->c->cq, wc, 1, 6 * XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
		memset(self->c->buf, 0x5a, 1 << 20);
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 0x30 + round, XZ_HALF,
				     8, 0, NULL, 0));
		ASSERT_EQ(1, xr_poll(self->s->cq, wc, 1, 6 * XR_WAIT_MS))
			TH_LOG("round %d: the fencing Send never arrived", round);
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
		ASSERT_PATTERN(self->s->buf + XZ_HALF, 1 << 20, seed);
		ASSERT_EQ(1, xr_poll(self->c->cq, wc, 1, 6 * XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", xr_wc_str(wc));
	}
	TH_LOG("%lld segments retransmitted", xz_tcp_stat("RetransSegs") - r0);
	ASSERT_GT(xz_tcp_stat("RetransSegs"), r0);
	ASSERT_LE(m0 + 4, xr_port_counter(ib, "tx_zcopy_messages"));
}

/*
 * Disconnect with eight zero-copy Writes unacknowledged (lo delays every
 * segment): each still completes, in order, successfully or flushed, and
 * the teardown that follows finds nothing stuck.
 */
TEST_F(zcopy, disconnect_with_writes_in_flight)
{
	struct ibv_wc wc[8];
	int i, n = 0;

	if (xz_netem("delay 300ms"))
		SKIP(return, "no netem on lo");
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 0x70 + i,
				     i * 131072, 131072, 0, self->s, XZ_HALF));
	ASSERT_EQ(0, rdma_disconnect(self->c->id));
	while (n < 8) {
		int got = xr_poll(self->c->cq, wc + n, 8 - n, 3 * XR_WAIT_MS);

		ASSERT_LT(0, got) TH_LOG("%d of 8 Writes never completed", 8 - n);
		n += got;
	}
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0x70U + i, wc[i].wr_id);
		ASSERT_TRUE(wc[i].status == IBV_WC_SUCCESS ||
			    wc[i].status == IBV_WC_WR_FLUSH_ERR)
			TH_LOG("%s", xr_wc_str(&wc[i]));
	}
	ASSERT_TRUE(xr_wait_cm(self->net.cch, self->c->id,
			       RDMA_CM_EVENT_DISCONNECTED, 3 * XR_WAIT_MS, NULL));
}

/*
 * The requester disconnects while the responder is still sending a 2 MiB
 * Read Response (lo delays every segment, so it takes seconds): the
 * responder's connection ends with the Response half sent. The MR it
 * reads from must then deregister cleanly: the reference the Response
 * held is dropped once, not once by the message and again with the
 * emptied inbound Read queue (a refcount warning, fatal in the VM).
 * With tx_zcopy=2 the Response goes zero-copy (a ubuf_info); with 1 it
 * goes by reference without one (lo gathers and checksums, but does not
 * leave the host). Either way it counts in tx_zcopy_messages; only a
 * zero-copy message holds a reference to the module while in flight.
 */
static void xz_cut_response(struct __test_metadata *_metadata,
			    FIXTURE_DATA(zcopy) *self, int zcopy)
{
	const char *ib = self->link.ibdev;
	long refs0 = xz_module_refs_settled();
	long long m0;
	struct ibv_wc wc;

	if (xz_netem("delay 200ms"))
		SKIP(return, "no netem on lo");
	ASSERT_LE(0, refs0) TH_LOG("the module's references did not settle");
	ASSERT_EQ(0, xz_param("tx_zcopy", zcopy));
	m0 = xr_port_counter(ib, "tx_zcopy_messages");
	ASSERT_LE(0, m0);
	xr_fill(self->s->buf, XZ_HALF, self->seed);
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_READ, 0x4d, XZ_HALF,
			     XZ_HALF, 0, self->s, 0));
	usleep(700 * 1000);
	ASSERT_EQ(0, xr_poll(self->c->cq, &wc, 1, 0))
		TH_LOG("the Read completed already: the test proves nothing");
	ASSERT_EQ(m0 + 1, xr_port_counter(ib, "tx_zcopy_messages"))
		TH_LOG("the Response did not go by reference");
	ASSERT_EQ(refs0 + (zcopy == 2), xz_module_refs())
		TH_LOG("zero-copy (a module reference) %s",
		       zcopy == 2 ? "expected" : "not expected");
	ASSERT_EQ(0, rdma_disconnect(self->c->id));
	ASSERT_EQ(1, xr_poll(self->c->cq, &wc, 1, 3 * XR_WAIT_MS));
	ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	ASSERT_TRUE(xr_wait_cm(self->net.sch, self->s->id,
			       RDMA_CM_EVENT_DISCONNECTED, 3 * XR_WAIT_MS, NULL));
	ASSERT_EQ(0, ibv_dereg_mr(self->s->mr));
	self->s->mr = NULL;
}

TEST_F(zcopy, disconnect_during_read_response)
{
	xz_cut_response(_metadata, self, 2);
}

TEST_F(zcopy, disconnect_during_read_response_by_ref)
{
	xz_cut_response(_metadata, self, 1);
}

/*
 * A completion hands a buffer back to its owner: after it, nothing may
 * write there (a kernel ULP frees its buffers once ib_drain_qp returns).
 * The receiver moves its QP to ERR in the middle of an inbound 4 MiB
 * Send slowed down on lo, or in the middle of its own 4 MiB Read's
 * Response; the flush completion must come only once placement has
 * stopped, so the sink must not change after it.
 */
FIXTURE(errflush) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
};

FIXTURE_VARIANT(errflush) {
	bool read;	/* the client's Read, else the server's Send */
};

FIXTURE_VARIANT_ADD(errflush, receive) { .read = false };
FIXTURE_VARIANT_ADD(errflush, read_sink) { .read = true };

#define XF_LEN	(4u << 20)

/* Eight bytes of the pattern (never all zero) are in at p. */
static bool xf_arrived(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, (const void *)p, sizeof(v));
	return v != 0;
}

FIXTURE_SETUP(errflush)
{
	struct xr_opts o = { .buflen = 2 * XF_LEN, .wr = 4, .sge = 1,
			     .rd_atom = 1 };
	char why[320];

	sh("tc qdisc del dev lo root >/dev/null 2>&1");
	ASSERT_EQ(0, open_pairs(&self->link, &self->net, &self->p, 1, &o,
				why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, xz_netem("rate 40mbit"));
}

FIXTURE_TEARDOWN(errflush)
{
	sh("tc qdisc del dev lo root >/dev/null 2>&1");
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

TEST_F_TIMEOUT(errflush, sink_quiet_after_flush, 120)
{
	struct xr_side *c = &self->p.cli, *s = &self->p.srv;
	struct xr_side *sink = variant->read ? c : s;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	uint8_t *snap = malloc(XF_LEN);
	struct ibv_wc wc;
	long long t0;

	ASSERT_NE(NULL, snap);
	xr_fill(variant->read ? s->buf : c->buf + XF_LEN, XF_LEN, 5);
	if (variant->read) {
		ASSERT_EQ(0, xr_post(c, IBV_WR_RDMA_READ, 0xe1, 0, XF_LEN, 0,
				     s, 0));
	} else {
		ASSERT_EQ(0, xr_recv(s, 0xe1, 0, XF_LEN));
		ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0xe2, XF_LEN, XF_LEN, 0,
				     NULL, 0));
	}
	/* Mid-message: the sink's first 64 KiB are in, not yet its last. */
	t0 = now_ms();
	while (!xf_arrived(sink->buf + 65528) && now_ms() - t0 < XR_WAIT_MS)
		usleep(1000);
	ASSERT_TRUE(xf_arrived(sink->buf + 65528)) TH_LOG("the message never started");
	ASSERT_EQ(0, ibv_modify_qp(sink->qp, &qa, IBV_QP_STATE));
	ASSERT_EQ(1, xr_poll(sink->cq, &wc, 1, XR_WAIT_MS));
	memcpy(snap, sink->buf, XF_LEN);
	EXPECT_EQ(0xe1, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status) TH_LOG("%s", xr_wc_str(&wc));
	usleep(500 * 1000);
	ASSERT_EQ(0, memcmp(snap, sink->buf, XF_LEN))
		TH_LOG("the sink changed after its flush completion");
	free(snap);
}

/* The last fixture's link, once every test process is gone. */
static void __attribute__((destructor)) purge(void)
{
	xr_link_purge();
}

TEST_HARNESS_MAIN
