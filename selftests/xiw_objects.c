// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Verbs objects through libibverbs and the xiw provider: CQ, QP, SRQ and
 * MR life cycles, limits, bad attributes, the QP state machine, posting to
 * a QP that is not connected, flushes in the error state through the
 * shared rings, and clean-up after a killed process.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "kselftest_harness.h"
#include "xiw_util.h"

#define DEV "xiwo0"

FIXTURE(obj) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

FIXTURE_SETUP(obj)
{
	ASSERT_EQ(0, sh("modprobe xiw"));
	ASSERT_EQ(0, dummy_add("xo0", "02:00:00:00:40:01"));
	ASSERT_EQ(0, sh("rdma link add " DEV " type xiw netdev xo0"));
	self->ctx = open_dev(DEV);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq) TH_LOG("create_cq: %s", strerror(errno));
}

FIXTURE_TEARDOWN(obj)
{
	/* Closing the device destroys whatever a test left behind. */
	if (self->ctx)
		ibv_close_device(self->ctx);
	sh("rdma link delete " DEV " 2>/dev/null; ip link del xo0 2>/dev/null");
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      struct ibv_srq *srq, int swr, int rwr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = { .max_send_wr = swr, .max_recv_wr = rwr,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &a);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };
	int mask = IBV_QP_STATE;

	if (s == IBV_QPS_INIT) {
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ;
		mask |= IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

static int post_recv(struct ibv_qp *qp, uint64_t id)
{
	struct ibv_recv_wr wr = { .wr_id = id }, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, uint64_t id, unsigned int flags)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .opcode = IBV_WR_SEND, .send_flags = flags,
	}, *bad = NULL;

	return ibv_post_send(qp, &wr, &bad);
}

/* Poll until n completions arrived or ms passed; returns how many. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	long long end = now_ms() + ms;
	int got = 0, r;

	while (got < n && now_ms() < end) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (!r)
			usleep(1000);
	}
	return got;
}

TEST_F(obj, cq_sizes_and_limits)
{
	struct ibv_device_attr da;
	struct ibv_cq *cq;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	EXPECT_GE(self->cq->cqe, 256);
	cq = ibv_create_cq(self->ctx, da.max_cqe, NULL, NULL, 0);
	ASSERT_NE(NULL, cq) TH_LOG("max_cqe %d refused", da.max_cqe);
	EXPECT_GE(cq->cqe, da.max_cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, da.max_cqe + 1, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 0, NULL, NULL, 0));
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 16, NULL, NULL,
				      self->ctx->num_comp_vectors));
	EXPECT_EQ(EINVAL, errno);
}

/* ibv_resize_cq() takes 1 to max_cqe slots, like ibv_create_cq(). */
TEST_F(obj, cq_resize_limits)
{
	struct ibv_device_attr da;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 0));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, -1));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, da.max_cqe + 1));
	EXPECT_EQ(16, cq->cqe);
	ASSERT_EQ(0, ibv_resize_cq(cq, da.max_cqe));
	EXPECT_GE(cq->cqe, da.max_cqe);
	ASSERT_EQ(0, ibv_resize_cq(cq, 3));
	EXPECT_EQ(4, cq->cqe);
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* A RESIZE_CQ command as the provider writes it, for n slots. */
struct raw_resize {
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_resize_cq cmd;
	} req;
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct xiw_resize_cq_resp drv;
	} resp;
};

static int raw_resize(struct ibv_cq *cq, struct raw_resize *r, int n,
		      size_t out)
{
	memset(r, 0, sizeof(*r));
	r->req.hdr.command = IB_USER_VERBS_CMD_RESIZE_CQ;
	r->req.hdr.in_words = sizeof(r->req) / 4;
	r->req.hdr.out_words = out / 4;
	r->req.cmd.response = (uintptr_t)&r->resp;
	r->req.cmd.cq_handle = cq->handle;
	r->req.cmd.cqe = n;
	return write(cq->context->cmd_fd, &r->req, sizeof(r->req)) ==
	       sizeof(r->req) ? 0 : errno;
}

/*
 * The kernel's side of a resize with user space not playing by the
 * rules: a response with no room for the driver part is EINVAL and
 * leaves the CQ alone; a ring whose slots all claim to be valid (the
 * kernel cannot tell lies from CQEs) has that many pending, so a smaller
 * ring is EINVAL and a larger one takes them all. Nothing of this may
 * upset the kernel, and the CQ is destroyed as usual.
 */
TEST_F(obj, cq_resize_raw_and_scribbled)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 8, NULL, NULL, 0);
	struct raw_resize r;
	struct ibv_qp *qp;
	size_t len;
	uint8_t *ring;
	uint32_t i;

	ASSERT_NE(NULL, cq);
	EXPECT_EQ(EINVAL, raw_resize(cq, &r, 16, sizeof(r.resp.core)));
	/* The provider's ring is still the kernel's: a flush lands in it. */
	qp = make_qp(self->pd, cq, NULL, 4, 4);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	ASSERT_EQ(0, post_recv(qp, 5));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	{
		struct ibv_wc wc;

		ASSERT_EQ(1, poll_n(cq, &wc, 1, 5000));
		EXPECT_EQ(5U, wc.wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	}
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* Take the CQ over: a ring of 16 that this test maps itself. */
	ASSERT_EQ(0, raw_resize(cq, &r, 16, sizeof(r.resp)));
	ASSERT_EQ(16U, r.resp.drv.num_cqe);
	len = sizeof(struct xiw_ring_ctrl) + 16 * sizeof(struct xiw_cqe);
	len = (len + 4095) & ~(size_t)4095;
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    cq->context->cmd_fd, (off_t)r.resp.drv.cq_key);
	ASSERT_NE(MAP_FAILED, ring) TH_LOG("mmap: %s", strerror(errno));
	for (i = 0; i < len; i++)
		ring[i] = (uint8_t)(i * 37 + 11);
	for (i = 0; i < 16; i++) {
		struct xiw_cqe *c = (struct xiw_cqe *)(ring +
			sizeof(struct xiw_ring_ctrl)) + i;

		c->flags = XIW_SLOT_VALID | 0x7ffffff0;
	}
	EXPECT_EQ(EINVAL, raw_resize(cq, &r, 8, sizeof(r.resp)));
	EXPECT_EQ(0, raw_resize(cq, &r, 16, sizeof(r.resp)));
	EXPECT_EQ(0, raw_resize(cq, &r, 1024, sizeof(r.resp)));
	munmap(ring, len);
	/* The provider unmaps its own (old) ring; the kernel frees the CQ. */
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(obj, qp_caps_rounded_and_reported)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.cap = { .max_send_wr = 10, .max_recv_wr = 20,
			 .max_send_sge = 8, .max_recv_sge = 6,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(self->pd, &a);

	ASSERT_NE(NULL, qp) TH_LOG("create_qp: %s", strerror(errno));
	EXPECT_EQ(16, a.cap.max_send_wr);
	EXPECT_EQ(32, a.cap.max_recv_wr);
	EXPECT_EQ(128, a.cap.max_inline_data);
	/*
	 * iWARP's Idle, which an RNIC reports as INIT (not RESET). The
	 * struct's own field is libibverbs' RESET until a modify or query
	 * (rdma-core's tests expect both).
	 */
	EXPECT_EQ(IBV_QPS_RESET, qp->state);
	EXPECT_EQ(IBV_QPS_INIT, qp_state(qp));
	EXPECT_EQ(IBV_QPS_INIT, qp->state);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(obj, qp_bad_attributes_refused)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_init_attr b;

	b = a; b.cap.max_send_wr = 16385;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	EXPECT_EQ(EINVAL, errno);
	b = a; b.cap.max_recv_wr = 16385;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	b = a; b.cap.max_send_sge = 9;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	EXPECT_EQ(EINVAL, errno);
	b = a; b.cap.max_recv_sge = 7;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	b = a; b.cap.max_inline_data = 129;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	EXPECT_EQ(EINVAL, errno);
	b = a; b.qp_type = IBV_QPT_UD;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	EXPECT_EQ(EOPNOTSUPP, errno);
	b = a; b.qp_type = IBV_QPT_UC;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &b));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

TEST_F(obj, qp_state_machine)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 4, 4);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a = {};

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RESET));	/* INIT -> RESET */
	EXPECT_EQ(IBV_QPS_RESET, qp_state(qp));
	EXPECT_NE(0, to_state(qp, IBV_QPS_RTR));	/* RESET -> RTR */
	EXPECT_NE(0, to_state(qp, IBV_QPS_RTS));	/* RESET -> RTS */
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(qp));
	/* IRD/ORD up to the device limits, set in INIT (INIT -> INIT). */
	a.max_dest_rd_atomic = 129;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_MAX_DEST_RD_ATOMIC));
	a.max_rd_atomic = 129;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_MAX_QP_RD_ATOMIC));
	a.max_rd_atomic = 128;
	a.max_dest_rd_atomic = 16;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_MAX_QP_RD_ATOMIC |
				   IBV_QP_MAX_DEST_RD_ATOMIC));
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_MAX_QP_RD_ATOMIC |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP, &init));
	EXPECT_EQ(128, a.max_rd_atomic);
	EXPECT_EQ(16, a.max_dest_rd_atomic);
	EXPECT_EQ(4, init.cap.max_send_wr);
	EXPECT_EQ(IBV_QPT_RC, init.qp_type);
	/* Only an established connection moves an iWARP QP to RTS. */
	EXPECT_EQ(EINVAL, to_state(qp, IBV_QPS_RTS));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RTR));
	EXPECT_EQ(EINVAL, to_state(qp, IBV_QPS_RTS));
	EXPECT_EQ(EINVAL, to_state(qp, IBV_QPS_SQD));
	EXPECT_EQ(IBV_QPS_RTR, qp_state(qp));

	/*
	 * An attribute iWARP has no use for is refused. A modify without a
	 * state only changes attributes (rdma_cm does this in RTR), within
	 * the limits.
	 */
	a.path_mtu = IBV_MTU_1024;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_PATH_MTU));
	a.max_rd_atomic = 129;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_MAX_QP_RD_ATOMIC));
	a.max_rd_atomic = 8;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_MAX_QP_RD_ATOMIC));
	EXPECT_EQ(IBV_QPS_RTR, qp_state(qp));
	a.cur_qp_state = IBV_QPS_INIT;
	a.qp_state = IBV_QPS_ERR;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE));

	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	EXPECT_EQ(IBV_QPS_ERR, qp_state(qp));
	EXPECT_EQ(EINVAL, to_state(qp, IBV_QPS_INIT));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RESET));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(obj, post_to_unconnected_qp_refused)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 4, 4);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;

	ASSERT_NE(NULL, qp);
	/* Created in INIT: receives may be posted before the connection. */
	EXPECT_EQ(EINVAL, post_send(qp, 5, IBV_SEND_SIGNALED));
	EXPECT_EQ(0, post_recv(qp, 6));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RESET));	/* drops recv 6 */
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &wr, &bad));	/* RESET */
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(EINVAL, post_recv(qp, 1));			/* RESET */
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	EXPECT_EQ(EINVAL, post_send(qp, 2, IBV_SEND_SIGNALED));
	EXPECT_EQ(0, post_recv(qp, 3));			/* allowed */
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RTR));
	EXPECT_EQ(EINVAL, post_send(qp, 4, IBV_SEND_SIGNALED));
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 1, &wc));	/* nothing completed */
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * The legacy post commands carrying work requests would bypass the rings:
 * the kernel refuses them (a doorbell carries none).
 */
TEST_F(obj, legacy_post_with_work_requests_refused)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 4, 4);
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
		struct ib_uverbs_send_wr wr;
	} req = {};
	struct ib_uverbs_post_send_resp resp = {};
	struct ibv_wc wc;

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wr_count = 1;
	req.cmd.wqe_size = sizeof(req.wr);
	req.wr.wr_id = 77;
	req.wr.opcode = IB_UVERBS_WR_SEND;
	EXPECT_EQ(-1, write(self->ctx->cmd_fd, &req, sizeof(req)));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing was queued or completed by it. */
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 1, &wc));

	/* The doorbell form (no work request) is accepted. */
	req.cmd.wr_count = 0;
	req.hdr.in_words = (sizeof(req) - sizeof(req.wr)) / 4;
	EXPECT_EQ((ssize_t)(sizeof(req) - sizeof(req.wr)),
		  write(self->ctx->cmd_fd, &req, sizeof(req) - sizeof(req.wr)));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Entering ERR flushes what was posted, in order, as WR_FLUSH_ERR. */
TEST_F(obj, error_state_flushes_receives)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 4, 8);
	struct ibv_wc wc[8];
	int i;

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv(qp, 100 + i));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	ASSERT_EQ(3, poll_n(self->cq, wc, 3, 2000));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(100 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
		EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
		EXPECT_EQ(qp->qp_num, wc[i].qp_num);
	}
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* In ERR every post is flushed, signaled or not, at its doorbell. */
TEST_F(obj, posts_in_error_state_flush)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 8, 8);
	struct ibv_wc wc[8];
	int i;

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	ASSERT_EQ(0, post_send(qp, 1, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, post_send(qp, 2, 0));
	ASSERT_EQ(0, post_recv(qp, 3));
	ASSERT_EQ(3, poll_n(self->cq, wc, 3, 2000));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
	EXPECT_EQ(1, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_SEND, wc[0].opcode);
	EXPECT_EQ(2, wc[1].wr_id);
	EXPECT_EQ(3, wc[2].wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc[2].opcode);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Many laps around small rings: indices on both sides stay in step. */
TEST_F(obj, ring_wraparound)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 4, 4);
	struct ibv_wc wc[4];
	int lap, i;

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	for (lap = 0; lap < 500; lap++) {
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, post_recv(qp, lap * 8 + i));
			ASSERT_EQ(0, post_send(qp, lap * 8 + 4 + i, 0));
		}
		ASSERT_EQ(4, poll_n(self->cq, wc, 4, 2000)) TH_LOG("lap %d", lap);
		ASSERT_EQ(2, poll_n(self->cq, wc, 2, 2000)) TH_LOG("lap %d", lap);
	}
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(obj, receive_queue_full)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, NULL, 4, 8);
	int i;

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, post_recv(qp, i));
	EXPECT_EQ(ENOMEM, post_recv(qp, 8));
	/* RESET empties the queue without completions. */
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RESET));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	EXPECT_EQ(0, post_recv(qp, 9));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(obj, cq_overflow_raises_cq_error)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp;
	int i;

	ASSERT_NE(NULL, cq);
	qp = make_qp(self->pd, cq, NULL, 4, 8);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, post_recv(qp, i));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));	/* 8 flushes, 4 slots */
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_CQ_ERR, 5000));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(obj, completion_channel_event)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct pollfd p;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	void *ev_ctx;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 16, (void *)0x1234, ch, 0);
	ASSERT_NE(NULL, cq);
	qp = make_qp(self->pd, cq, NULL, 4, 4);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, post_recv(qp, 7));
	p.fd = ch->fd;
	p.events = POLLIN;
	ASSERT_EQ(1, poll(&p, 1, 5000)) TH_LOG("no completion event");
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	EXPECT_EQ(cq, ev_cq);
	EXPECT_EQ((void *)0x1234, ev_ctx);
	ibv_ack_cq_events(cq, 1);
	ASSERT_EQ(1, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(7, wc.wr_id);

	/* Not armed: a completion raises no event. */
	ASSERT_EQ(0, post_recv(qp, 8));
	ASSERT_EQ(1, poll_n(cq, &wc, 1, 2000));
	EXPECT_EQ(0, poll(&p, 1, 200));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(obj, srq_life_cycle_and_limits)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 100, .max_sge = 2 } };
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_srq_attr a;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int i;

	srq = ibv_create_srq(self->pd, &ia);
	ASSERT_NE(NULL, srq) TH_LOG("create_srq: %s", strerror(errno));
	EXPECT_EQ(128, ia.attr.max_wr);
	ASSERT_EQ(0, ibv_query_srq(srq, &a));
	EXPECT_EQ(128, a.max_wr);
	EXPECT_EQ(2, a.max_sge);

	a.srq_limit = 10;
	EXPECT_EQ(0, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &a));
	EXPECT_EQ(10, a.srq_limit);
	a.srq_limit = 129;
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	a.max_wr = 256;
	EXPECT_NE(0, ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR));

	qp = make_qp(self->pd, self->cq, srq, 4, 4);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	EXPECT_EQ(EINVAL, post_recv(qp, 1));	/* receives go to the SRQ */
	for (i = 0; i < 128; i++) {
		wr.wr_id = i;
		ASSERT_EQ(0, ibv_post_srq_recv(srq, &wr, &bad));
	}
	EXPECT_EQ(ENOMEM, ibv_post_srq_recv(srq, &wr, &bad));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_QP_LAST_WQE_REACHED, 5000));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));

	ia.attr.max_wr = 16385;
	EXPECT_EQ(NULL, ibv_create_srq(self->pd, &ia));
	ia.attr.max_wr = 0;
	EXPECT_EQ(NULL, ibv_create_srq(self->pd, &ia));
	ia.attr.max_wr = 16;
	ia.attr.max_sge = 7;
	EXPECT_EQ(NULL, ibv_create_srq(self->pd, &ia));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * The verbs only kernel consumers use are not user commands: a legacy
 * SRQ post, CQ poll or CQ arm would work on the rings behind the
 * provider's back. uverbs keeps them off (uverbs_cmd_mask); this guards
 * that, and that the refused commands left the rings alone.
 */
TEST_F(obj, kernel_only_verbs_not_user_commands)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_srq_recv cmd;
		struct ib_uverbs_recv_wr wr;
	} post = {};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_poll_cq cmd;
	} pollc = {};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_req_notify_cq cmd;
	} arm = {};
	struct {
		struct ib_uverbs_poll_cq_resp hdr;
		struct ib_uverbs_wc wc[1];
	} polled = {};
	struct ib_uverbs_post_srq_recv_resp resp = {};
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	int i;

	srq = ibv_create_srq(self->pd, &ia);
	ASSERT_NE(NULL, srq) TH_LOG("create_srq: %s", strerror(errno));
	post.hdr.command = IB_USER_VERBS_CMD_POST_SRQ_RECV;
	post.hdr.in_words = sizeof(post) / 4;
	post.hdr.out_words = sizeof(resp) / 4;
	post.cmd.response = (uintptr_t)&resp;
	post.cmd.srq_handle = srq->handle;
	post.cmd.wr_count = 1;
	post.cmd.wqe_size = sizeof(post.wr);
	post.wr.wr_id = 77;
	EXPECT_EQ(-1, write(self->ctx->cmd_fd, &post, sizeof(post)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* The SRQ ring is still empty: all of it can be posted. */
	for (i = 0; i < 8; i++) {
		wr.wr_id = i;
		ASSERT_EQ(0, ibv_post_srq_recv(srq, &wr, &bad));
	}
	EXPECT_EQ(ENOMEM, ibv_post_srq_recv(srq, &wr, &bad));
	EXPECT_EQ(0, ibv_destroy_srq(srq));

	/* One flushed receive in the CQ, which a kernel poll would steal. */
	qp = make_qp(self->pd, self->cq, NULL, 4, 4);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT));
	ASSERT_EQ(0, post_recv(qp, 1));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));

	pollc.hdr.command = IB_USER_VERBS_CMD_POLL_CQ;
	pollc.hdr.in_words = sizeof(pollc) / 4;
	pollc.hdr.out_words = sizeof(polled) / 4;
	pollc.cmd.response = (uintptr_t)&polled;
	pollc.cmd.cq_handle = self->cq->handle;
	pollc.cmd.ne = 1;
	EXPECT_EQ(-1, write(self->ctx->cmd_fd, &pollc, sizeof(pollc)));
	EXPECT_EQ(EOPNOTSUPP, errno);

	arm.hdr.command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
	arm.hdr.in_words = sizeof(arm) / 4;
	arm.cmd.cq_handle = self->cq->handle;
	EXPECT_EQ(-1, write(self->ctx->cmd_fd, &arm, sizeof(arm)));
	EXPECT_EQ(EOPNOTSUPP, errno);

	ASSERT_EQ(1, ibv_poll_cq(self->cq, 1, &wc));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(obj, mr_registration)
{
	size_t len = 1 << 20;
	void *buf = malloc(len);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, buf);
	mr = ibv_reg_mr(self->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("reg_mr: %s", strerror(errno));
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_EQ(buf, mr->addr);
	EXPECT_EQ(len, mr->length);
	EXPECT_EQ(0, ibv_dereg_mr(mr));

	/* Remote write needs local write. */
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, buf, len, IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, buf, 0, IBV_ACCESS_LOCAL_WRITE));
	free(buf);
}

TEST_F(obj, mr_of_unmapped_memory_refused)
{
	void *p = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	munmap(p, 8192);
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, p, 8192, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EFAULT, errno);
}

/* RFC 5040 8.1.1: the STag key byte is not predictable. */
TEST_F(obj, stag_keys_vary)
{
	char buf[4096];
	uint32_t keys[32];
	struct ibv_mr *mr;
	int i, same = 0;

	for (i = 0; i < 32; i++) {
		mr = ibv_reg_mr(self->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(NULL, mr);
		keys[i] = mr->lkey & 0xff;
		ASSERT_EQ(0, ibv_dereg_mr(mr));
	}
	for (i = 1; i < 32; i++)
		same += keys[i] == keys[0];
	EXPECT_LT(same, 31);
}

/*
 * Create objects of one kind until creation fails: it must fail exactly
 * at the device limit, with ENOMEM, and everything must go away again.
 */
#define COUNT_LIMIT(max, create, destroy) ({				\
	void **objs = calloc((max) + 1, sizeof(void *));		\
	int n, i;							\
									\
	ASSERT_NE(NULL, objs);						\
	for (n = 0; n <= (max); n++) {					\
		objs[n] = (create);					\
		if (!objs[n])						\
			break;						\
	}								\
	EXPECT_EQ((max), n);						\
	EXPECT_EQ(ENOMEM, errno);					\
	for (i = 0; i < n; i++)						\
		ASSERT_EQ(0, destroy(objs[i]));				\
	free(objs);							\
})

TEST_F_TIMEOUT(obj, qp_count_limit, 600)
{
	COUNT_LIMIT(4096, make_qp(self->pd, self->cq, NULL, 1, 1),
		    ibv_destroy_qp);
}

TEST_F_TIMEOUT(obj, cq_count_limit, 600)
{
	/* The fixture holds one CQ already. */
	COUNT_LIMIT(4096 - 1, ibv_create_cq(self->ctx, 1, NULL, NULL, 0),
		    ibv_destroy_cq);
}

TEST_F_TIMEOUT(obj, srq_count_limit, 600)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 1, .max_sge = 1 } };

	COUNT_LIMIT(1024, ibv_create_srq(self->pd, &ia), ibv_destroy_srq);
}

TEST_F_TIMEOUT(obj, mr_count_limit, 900)
{
	static char page[4096] __attribute__((aligned(4096)));

	COUNT_LIMIT(65536, ibv_reg_mr(self->pd, page, sizeof(page),
				      IBV_ACCESS_LOCAL_WRITE),
		    ibv_dereg_mr);
}

static int res_lines(const char *what)
{
	char out[8192];
	int n = 0;
	char *p;

	if (xsh(out, sizeof(out), "rdma res show %s", what))
		return -1;
	for (p = out; (p = strstr(p, DEV)); p++)
		n++;
	return n;
}

/* A process killed with objects open leaves nothing behind. */
TEST_F(obj, killed_process_leaves_nothing)
{
	int ready[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = open_dev(DEV);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
		size_t len = 4 << 20;
		void *buf = malloc(len);
		bool ok = cq && buf && make_qp(pd, cq, NULL, 16, 16) &&
			  ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);

		if (write(ready[1], ok ? "y" : "n", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ('y', c);
	EXPECT_EQ(1, res_lines("qp"));
	EXPECT_EQ(1, res_lines("mr"));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_TRUE(WAIT_UNTIL(res_lines("qp") == 0 && res_lines("mr") == 0,
			       5000));
	/* Only the fixture's own PD and CQ remain. */
	EXPECT_EQ(1, res_lines("pd"));
	EXPECT_EQ(1, res_lines("cq"));
}

/* Two processes use one device at once, each with its own objects. */
TEST_F(obj, two_processes_one_device)
{
	pid_t pid = fork();
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	int i, st;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = open_dev(DEV);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
		struct ibv_qp *cqp = cq ? make_qp(pd, cq, NULL, 4, 4) : NULL;

		if (!cqp || to_state(cqp, IBV_QPS_ERR))
			_exit(2);
		for (i = 0; i < 200; i++)
			if (post_recv(cqp, i) || poll_n(cq, wc, 1, 2000) != 1 ||
			    wc[0].wr_id != (uint64_t)i)
				_exit(3);
		_exit(ibv_close_device(ctx) ? 4 : 0);
	}
	qp = make_qp(self->pd, self->cq, NULL, 4, 4);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_ERR));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, post_recv(qp, 1000 + i));
		ASSERT_EQ(1, poll_n(self->cq, wc, 1, 2000));
		ASSERT_EQ(1000 + i, wc[0].wr_id);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_HARNESS_MAIN
