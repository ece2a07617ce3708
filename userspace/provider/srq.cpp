// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Shared receive queues: a ring of RQEs the kernel takes from whenever a
 * QP attached to the SRQ receives. Posting never enters the kernel.
 */
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>

#include <rdma/xiw-abi.h>

#include "cmd.h"
#include "ibverbs_private.h"
#include "mapping.h"
#include "ring.h"
#include "wr.h"
#include "xiw.h"

namespace xiw {

int check_create_srq_resp(const xiw_create_srq_resp &resp) noexcept
{
	return valid_ring_slots(resp.num_rqe) ? 0 : EPROTO;
}

std::unique_ptr<Srq> Srq::create(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept
{
	if (attr->attr.max_sge > XIW_MAX_RECV_SGE) {
		errno = EINVAL; /* more than an RQE holds */
		return nullptr;
	}
	std::unique_ptr<Srq> srq(new (std::nothrow) Srq{});
	struct ibv_create_srq cmd {};
	CreateSrqResp resp{};

	if (!srq) {
		errno = ENOMEM;
		return nullptr;
	}
	int err = ibv_cmd_create_srq(pd, &srq->ibsrq, attr, &cmd, sizeof(cmd),
				     &resp.ibv_resp, sizeof(resp));
	if (err != 0) {
		srq.reset();
		errno = err;
		return nullptr;
	}
	err = check_create_srq_resp(resp.drv);
	if (err == 0) {
		srq->ring = MappedRing<xiw_rqe>::map(pd->context->cmd_fd,
						     resp.drv.srq_key,
						     resp.drv.num_rqe);
		if (!srq->ring) {
			err = errno;
		}
	}
	if (err != 0) {
		/* A new SRQ has reported no event: the destroy won't wait. */
		ibv_cmd_destroy_srq(&srq->ibsrq);
		srq.reset(); /* unmaps; before errno, which it may clobber */
		errno = err;
		return nullptr;
	}
	srq->rqes = RingProducer<xiw_rqe>(srq->ring.slots(), srq->ring.num());
	/* What the kernel granted, as ibv_cmd_create_srq() left it in attr. */
	srq->max_sge =
		std::min<std::uint32_t>(attr->attr.max_sge, XIW_MAX_RECV_SGE);
	return srq;
}

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept
{
	std::unique_ptr<Srq> srq = Srq::create(pd, attr);

	if (!srq) {
		return nullptr;
	}
	return &srq.release()->ibsrq;
}

int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept
{
	struct ibv_modify_srq cmd {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr) noexcept
{
	struct ibv_query_srq cmd {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int destroy_srq(ibv_srq *ibsrq) noexcept
{
	const int err = ibv_cmd_destroy_srq(ibsrq);

	/* If the kernel still holds the SRQ, the ring stays mapped. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<Srq> srq(Srq::from(ibsrq));
	return 0;
}

/*
 * Errors: EINVAL or ENOMEM for the first request that cannot be posted (see
 * push_recv_chain()), the ones before it posted.
 */
int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr,
		  ibv_recv_wr **bad_wr) noexcept
{
	Srq *srq = Srq::from(ibsrq);
	std::uint32_t posted = 0;
	int err = 0;

	{
		const std::lock_guard<QueueLock> lock(srq->lock);

		err = push_recv_chain(srq->rqes, srq->max_sge, wr, posted);
	}
	if (err != 0 && bad_wr != nullptr) {
		*bad_wr = wr;
	}
	return err;
}

} // namespace xiw
