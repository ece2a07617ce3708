// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues. The kernel writes CQEs into a ring mapped into the
 * application, so polling and arming are plain memory accesses; only
 * creation and destruction are commands.
 */
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <new>

#include <rdma/xiw-abi.h>

#include "cmd.h"
#include "ibverbs_private.h"
#include "ring.h"
#include "wr.h"
#include "xiw.h"

namespace xiw {

int check_create_cq_resp(const xiw_create_cq_resp &resp) noexcept
{
	return valid_ring_slots(resp.num_cqe) ? 0 : EPROTO;
}

std::unique_ptr<Cq> Cq::create(ibv_context *ibctx, int cqe,
			       ibv_comp_channel *channel,
			       int comp_vector) noexcept
{
	std::unique_ptr<Cq> cq(new (std::nothrow) Cq{});
	struct ibv_create_cq cmd {};
	CreateCqResp resp{};

	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	int err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->ibcq,
				    &cmd, sizeof(cmd), &resp.ibv_resp,
				    sizeof(resp));
	if (err != 0) {
		cq.reset();
		errno = err;
		return nullptr;
	}
	err = check_create_cq_resp(resp.drv);
	if (err == 0) {
		cq->ring = MappedRing<xiw_cqe>::map(
			ibctx->cmd_fd, resp.drv.cq_key, resp.drv.num_cqe);
		if (!cq->ring) {
			err = errno;
		}
	}
	if (err != 0) {
		/*
		 * The kernel's CQ goes too. No event can have been reported
		 * for it, so the destroy does not wait on the (zeroed, not
		 * yet initialised) event fields.
		 */
		ibv_cmd_destroy_cq(&cq->ibcq);
		cq.reset(); /* unmaps; before errno, which it may clobber */
		errno = err;
		return nullptr;
	}
	cq->cqes = RingConsumer<xiw_cqe>(cq->ring.slots(), cq->ring.num());
	return cq;
}

ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector) noexcept
{
	std::unique_ptr<Cq> cq = Cq::create(ibctx, cqe, channel, comp_vector);

	if (!cq) {
		return nullptr;
	}
	return &cq.release()->ibcq;
}

int destroy_cq(ibv_cq *ibcq) noexcept
{
	const int err = ibv_cmd_destroy_cq(ibcq);

	/* If the kernel still holds the CQ, the ring stays mapped. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<Cq> cq(Cq::from(ibcq));
	return 0;
}

int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept
{
	Cq *cq = Cq::from(ibcq);
	const std::lock_guard<QueueLock> lock(cq->lock);
	int polled = 0;

	while (polled < num_entries) {
		xiw_cqe cqe{};

		if (!cq->cqes.pop(cqe)) {
			break;
		}
		translate_cqe(cqe, wc[polled]);
		++polled;
	}
	return polled;
}

int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept
{
	Cq *cq = Cq::from(ibcq);

	/*
	 * Arming races with a CQE being placed. The kernel (xiw_cq_add())
	 * publishes the CQE, issues smp_mb(), then reads cq_notify; here the
	 * arm is a store followed by a full fence, and the application's
	 * next poll reads the slot's flags with an acquire load. Either the
	 * kernel sees the CQ armed or that poll sees the CQE: the fence
	 * orders this store before that load (a seq_cst store alone would
	 * not, by the C++ memory model, against a later acquire load; on
	 * AArch64 an LDAPR may pass an earlier STLR). No lock: arming does
	 * not touch the consumer index.
	 */
	shared_word(cq->ring.ctrl().cq_notify)
		.store(solicited_only != 0 ? XIW_CQ_NOTIFY_SOLICITED :
					     XIW_CQ_NOTIFY_NEXT,
		       std::memory_order_relaxed);
	std::atomic_thread_fence(std::memory_order_seq_cst);
	return 0;
}

} // namespace xiw
