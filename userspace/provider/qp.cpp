// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs (RC only). Posting writes slots into the mapped SQ and RQ
 * rings; the kernel is told only when it might otherwise not look: a send
 * doorbell when it is not already busy with the SQ, a receive doorbell
 * when the QP is in the error state and the new RQEs must be flushed.
 */
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>

#include <sys/types.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "cmd.h"
#include "ibverbs_private.h"
#include "mapping.h"
#include "ring.h"
#include "wr.h"
#include "xiw.h"

namespace xiw {
namespace {

/*
 * A legacy POST_SEND or POST_RECV command with no work requests: the
 * kernel passes a null list to the driver, which then looks at the ring.
 * 0, or the errno value of the failed write().
 */
template <typename Cmd, typename Resp, std::uint32_t kCommand,
	  std::uint32_t kWqeSize>
int write_doorbell(const ibv_qp &ibqp) noexcept
{
	static_assert(sizeof(Cmd) % 4 == 0 && sizeof(Resp) % 4 == 0);
	Resp resp{};
	Cmd cmd{};

	cmd.hdr.command = kCommand;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = reinterpret_cast<std::uintptr_t>(&resp);
	cmd.qp_handle = ibqp.handle;
	cmd.wr_count = 0;
	cmd.sge_count = 0;
	/* The kernel checks it even with no work request to size. */
	cmd.wqe_size = kWqeSize;

	const ssize_t written = write(ibqp.context->cmd_fd, &cmd, sizeof(cmd));
	if (written == static_cast<ssize_t>(sizeof(cmd))) {
		return 0;
	}
	return written < 0 ? errno : EIO;
}

/* After publishing RQEs in the error state, so that the kernel flushes them. */
int kick_rq(Qp &qp) noexcept
{
	return write_doorbell<struct ibv_post_recv, ib_uverbs_post_recv_resp,
			      IB_USER_VERBS_CMD_POST_RECV,
			      sizeof(ib_uverbs_recv_wr)>(qp.ibqp());
}

/* The QP's state as the kernel last published it in a ring's control block. */
std::uint32_t qp_state(xiw_ring_ctrl &ctrl) noexcept
{
	return shared_word(ctrl.qp_state).load(std::memory_order_acquire);
}

/* The ring format's limits on what a QP may ask for. */
bool caps_fit_the_rings(const ibv_qp_cap &cap) noexcept
{
	return cap.max_send_sge <= XIW_MAX_SGE &&
	       cap.max_recv_sge <= XIW_MAX_RECV_SGE &&
	       cap.max_inline_data <= XIW_MAX_INLINE;
}

/* Maps the rings the kernel described; 0 or an errno value. */
int map_rings(Qp &qp, int cmd_fd, const xiw_create_qp_resp &resp,
	      bool has_srq) noexcept
{
	const int err = check_create_qp_resp(resp, has_srq);

	if (err != 0) {
		return err;
	}
	qp.sq_ring =
		MappedRing<xiw_sqe>::map(cmd_fd, resp.sq_key, resp.num_sqe);
	if (!qp.sq_ring) {
		return errno;
	}
	qp.sq = RingProducer<xiw_sqe>(qp.sq_ring.slots(), qp.sq_ring.num());
	if (has_srq) {
		return 0;
	}
	qp.rq_ring =
		MappedRing<xiw_rqe>::map(cmd_fd, resp.rq_key, resp.num_rqe);
	if (!qp.rq_ring) {
		return errno;
	}
	qp.rq = RingProducer<xiw_rqe>(qp.rq_ring.slots(), qp.rq_ring.num());
	return 0;
}

/*
 * What xiw makes of ibv_create_qp_ex()'s attributes: 0, EINVAL for what
 * libibverbs would trip over, EOPNOTSUPP for what xiw does not offer.
 */
int check_qp_init_attr(const ibv_qp_init_attr_ex &attr) noexcept
{
	constexpr std::uint32_t kCompMask = IBV_QP_INIT_ATTR_PD |
					    IBV_QP_INIT_ATTR_CREATE_FLAGS |
					    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	const bool send_ops =
		(attr.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
	const bool create_flags =
		(attr.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) != 0;

	/* First what xiw lacks: rdma-core's tests skip on EOPNOTSUPP. */
	if (attr.qp_type != IBV_QPT_RC || (attr.comp_mask & ~kCompMask) != 0 ||
	    (create_flags && attr.create_flags != 0) ||
	    (send_ops && (attr.send_ops_flags & ~kSendOpsFlags) != 0)) {
		return EOPNOTSUPP;
	}
	/* libibverbs would dereference them. */
	if ((attr.comp_mask & IBV_QP_INIT_ATTR_PD) == 0 || attr.pd == nullptr ||
	    attr.send_cq == nullptr || attr.recv_cq == nullptr) {
		return EINVAL;
	}
	return caps_fit_the_rings(attr.cap) ? 0 : EINVAL;
}

} // namespace

bool libibverbs_finds_qp_ex(Qp &qp) noexcept
{
	return ibv_qp_to_qp_ex(&qp.ibqp()) == &qp.qpx();
}

std::uint32_t Qp::sq_state() const noexcept
{
	return shared_word(sq_ring.ctrl().qp_state)
		.load(std::memory_order_acquire);
}

int Qp::kick_sq() noexcept
{
	/*
	 * The kernel clears sq_busy, issues a full barrier, then looks at
	 * the ring once more before it stops. With a full barrier between
	 * our release of the slots and our read of sq_busy, one of the two
	 * sees the other's store: the kernel finds the slots, or we find
	 * sq_busy clear and ring.
	 */
	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (shared_word(sq_ring.ctrl().sq_busy)
		    .load(std::memory_order_acquire) != 0) {
		return 0;
	}
	return write_doorbell<struct ibv_post_send, ib_uverbs_post_send_resp,
			      IB_USER_VERBS_CMD_POST_SEND,
			      sizeof(ib_uverbs_send_wr)>(ibqp());
}

int check_create_qp_resp(const xiw_create_qp_resp &resp, bool has_srq) noexcept
{
	if (!valid_ring_slots(resp.num_sqe) ||
	    resp.max_inline > XIW_MAX_INLINE) {
		return EPROTO;
	}
	/* An RQ exactly when there is no SRQ. */
	if (has_srq) {
		return resp.rq_key == XIW_INVALID_MMAP_KEY ? 0 : EPROTO;
	}
	return resp.rq_key != XIW_INVALID_MMAP_KEY &&
			       valid_ring_slots(resp.num_rqe) ?
		       0 :
		       EPROTO;
}

std::unique_ptr<Qp> Qp::create(ibv_context *ibctx,
			       ibv_qp_init_attr_ex &attr) noexcept
{
	const int attr_err = check_qp_init_attr(attr);

	if (attr_err != 0) {
		errno = attr_err;
		return nullptr;
	}
	std::unique_ptr<Qp> qp(new (std::nothrow) Qp{});
	struct ibv_create_qp cmd {};
	CreateQpResp resp{};
	/* What the kernel is told of: no create flags (there are none). */
	ibv_qp_init_attr_ex cmd_attr = attr;
	cmd_attr.comp_mask &=
		IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

	if (!qp) {
		errno = ENOMEM;
		return nullptr;
	}
	const int err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &cmd_attr, &cmd,
					     sizeof(cmd), &resp.ibv_resp,
					     sizeof(resp));
	if (err != 0) {
		qp.reset();
		errno = err;
		return nullptr;
	}
	attr.cap = cmd_attr.cap;
	const bool has_srq = attr.srq != nullptr;
	int map_err = map_rings(*qp, ibctx->cmd_fd, resp.drv, has_srq);
	if (map_err == 0 &&
	    (attr.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) {
		set_wr_ops(qp->qpx());
		qp->vqp.comp_mask |= VERBS_QP_EX;
		if (!libibverbs_finds_qp_ex(*qp)) {
			map_err = EOPNOTSUPP;
		}
	}
	if (map_err != 0) {
		/* A new QP has reported no event: the destroy does not wait. */
		ibv_cmd_destroy_qp(&qp->ibqp());
		qp.reset(); /* unmaps; before errno, which it may clobber */
		errno = map_err;
		return nullptr;
	}
	/* What the kernel granted, as ibv_cmd_create_qp_ex() left it. */
	qp->send_limits = SendLimits{
		.max_sge = std::min<std::uint32_t>(attr.cap.max_send_sge,
						   XIW_MAX_SGE),
		.max_inline = resp.drv.max_inline,
		.sig_all = attr.sq_sig_all != 0,
	};
	qp->max_recv_sge = std::min<std::uint32_t>(attr.cap.max_recv_sge,
						   XIW_MAX_RECV_SGE);
	return qp;
}

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr) noexcept
{
	ibv_qp_init_attr_ex attr_ex{};

	attr_ex.qp_context = attr->qp_context;
	attr_ex.send_cq = attr->send_cq;
	attr_ex.recv_cq = attr->recv_cq;
	attr_ex.srq = attr->srq;
	attr_ex.cap = attr->cap;
	attr_ex.qp_type = attr->qp_type;
	attr_ex.sq_sig_all = attr->sq_sig_all;
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;

	std::unique_ptr<Qp> qp = Qp::create(pd->context, attr_ex);
	if (!qp) {
		return nullptr;
	}
	attr->cap = attr_ex.cap;
	return &qp.release()->ibqp();
}

ibv_qp *create_qp_ex(ibv_context *ibctx, ibv_qp_init_attr_ex *attr) noexcept
{
	std::unique_ptr<Qp> qp = Qp::create(ibctx, *attr);

	if (!qp) {
		return nullptr;
	}
	return &qp.release()->ibqp();
}

int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask) noexcept
{
	struct ibv_modify_qp cmd {};

	/* The kernel publishes the new state in the rings itself. */
	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask,
	     ibv_qp_init_attr *init_attr) noexcept
{
	struct ibv_query_qp cmd {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int destroy_qp(ibv_qp *ibqp) noexcept
{
	const int err = ibv_cmd_destroy_qp(ibqp);

	/* If the kernel still holds the QP, the rings stay mapped. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<Qp> qp(Qp::from(ibqp));
	return 0;
}

/*
 * Errors: EINVAL for the first request if the QP is in RESET, INIT or RTR;
 * EINVAL or ENOMEM for the first request that cannot be posted (see
 * push_send_chain()), the ones before it posted. If the doorbell fails
 * after requests were posted, its errno is returned with *bad_wr at the
 * first request of the call although all up to the failed one (or all)
 * were posted: the kernel may not have seen them, and will when the next
 * doorbell rings. A request error takes precedence over a doorbell error.
 */
int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	Qp *qp = Qp::from(ibqp);
	ibv_send_wr *const first = wr;
	std::uint32_t posted = 0;
	int err = 0;

	if (wr == nullptr) {
		return 0;
	}
	{
		const std::lock_guard<QueueLock> lock(qp->sq_lock);

		if (qp->sq_state() < IBV_QPS_RTS) {
			err = EINVAL;
		} else {
			err = push_send_chain(qp->sq, qp->send_limits, wr,
					      posted);
		}
	}
	if (err != 0 && bad_wr != nullptr) {
		*bad_wr = wr;
	}
	if (posted == 0) {
		return err;
	}
	const int kick_err = qp->kick_sq();
	if (kick_err != 0 && err == 0) {
		if (bad_wr != nullptr) {
			*bad_wr = first;
		}
		err = kick_err;
	}
	return err;
}

/*
 * Errors: EINVAL for the first request if the QP uses an SRQ or is in
 * RESET; EINVAL or ENOMEM for the first request that cannot be posted (see
 * push_recv_chain()), the ones before it posted. In the error state the
 * receive doorbell rings after posting, so that the kernel flushes the new
 * requests; its failure is reported as post_send() reports its own.
 */
int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	Qp *qp = Qp::from(ibqp);
	ibv_recv_wr *const first = wr;
	std::uint32_t posted = 0;
	int err = 0;

	if (wr == nullptr) {
		return 0;
	}
	if (!qp->rq_ring) {
		err = EINVAL; /* attached to an SRQ: post there */
	} else {
		const std::lock_guard<QueueLock> lock(qp->rq_lock);

		if (qp_state(qp->rq_ring.ctrl()) == IBV_QPS_RESET) {
			err = EINVAL;
		} else {
			err = push_recv_chain(qp->rq, qp->max_recv_sge, wr,
					      posted);
		}
	}
	if (err != 0 && bad_wr != nullptr) {
		*bad_wr = wr;
	}
	if (posted == 0) {
		return err;
	}
	/*
	 * The state is read again after publishing, past a full barrier: the
	 * kernel stores ERR, issues a full barrier, then flushes the RQ. One
	 * of the two sees the other's store: the flush finds our RQEs, or we
	 * find ERR here and ring, even if the QP failed while we posted.
	 */
	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (qp_state(qp->rq_ring.ctrl()) != IBV_QPS_ERR) {
		return err;
	}
	const int kick_err = kick_rq(*qp);
	if (kick_err != 0 && err == 0) {
		if (bad_wr != nullptr) {
			*bad_wr = first;
		}
		err = kick_err;
	}
	return err;
}

} // namespace xiw
