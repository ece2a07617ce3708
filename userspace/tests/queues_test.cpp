// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Creating, changing and destroying CQs, QPs, SRQs and MRs, end to end
 * through libibverbs against the fake kernel (fake_kernel.h): the commands
 * the kernel sees, the rings the provider maps and unmaps, and how each
 * failure is undone.
 */
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "cmd.h"
#include "fake_kernel.h"
#include "ibverbs_private.h"
#include "ring.h"
#include "xiw.h"

namespace {

using xiw_test::expected_ring_len;
using xiw_test::kernel;

class Queues : public xiw_test::FakeContext {};

/* ---- CQ -------------------------------------------------------------- */

TEST_F(Queues, CreatesACqAndMapsItsRing)
{
	ibv_cq *cq = ibv_create_cq(ctx_, 10, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);

	ASSERT_EQ(kernel.cqs.size(), 1U);
	const auto &[handle, fake] = *kernel.cqs.begin();
	EXPECT_EQ(cq->handle, handle);
	EXPECT_EQ(cq->cqe, 16); /* what the kernel made of 10 */
	EXPECT_EQ(cq->context, ctx_);
	ASSERT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(kernel.user_mappings[0].key, fake.ring->key());
	EXPECT_EQ(kernel.user_mappings[0].len, expected_ring_len<xiw_cqe>(16));
	EXPECT_EQ(xiw::Cq::from(cq)->ring.num(), 16U);

	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_CREATE_CQ);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_create_cq));
	EXPECT_EQ(seen->out_words * 4U, sizeof(xiw::CreateCqResp));

	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_TRUE(kernel.cqs.empty());
	/* The kernel let go first; then the ring was unmapped. */
	EXPECT_EQ(kernel.mappings_at_destroy, std::vector<std::size_t>{1});
	EXPECT_TRUE(kernel.user_mappings.empty());
}

TEST_F(Queues, CreatesAnExtendedCqAndMapsItsRing)
{
	ibv_cq_init_attr_ex attr{};
	attr.cqe = 10;
	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	ibv_cq_ex *cq = ibv_create_cq_ex(ctx_, &attr);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);

	ASSERT_EQ(kernel.cqs.size(), 1U);
	const auto &[handle, fake] = *kernel.cqs.begin();
	EXPECT_EQ(ibv_cq_ex_to_cq(cq)->handle, handle);
	EXPECT_EQ(ibv_cq_ex_to_cq(cq)->cqe, 16);
	ASSERT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(kernel.user_mappings[0].key, fake.ring->key());
	EXPECT_EQ(xiw::Cq::from(cq), xiw::Cq::from(ibv_cq_ex_to_cq(cq)));
	EXPECT_NE(cq->start_poll, nullptr);
	EXPECT_NE(cq->read_dlid_path_bits, nullptr);

	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	EXPECT_TRUE(kernel.cqs.empty());
	EXPECT_TRUE(kernel.user_mappings.empty());
}

TEST_F(Queues, RefusesExtendedCqsWithWhatItCannotReport)
{
	const std::size_t commands = kernel.seen.size();
	ibv_cq_init_attr_ex attr{};
	attr.cqe = 4;

	for (const std::uint64_t wc_flags :
	     {std::uint64_t{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP},
	      std::uint64_t{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK},
	      std::uint64_t{IBV_WC_EX_WITH_CVLAN},
	      std::uint64_t{IBV_WC_EX_WITH_FLOW_TAG},
	      std::uint64_t{IBV_WC_EX_WITH_TM_INFO}}) {
		attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | wc_flags;
		errno = 0;
		EXPECT_EQ(ibv_create_cq_ex(ctx_, &attr), nullptr) << wc_flags;
		EXPECT_EQ(errno, EOPNOTSUPP) << wc_flags;
	}
	attr.wc_flags = 0;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	EXPECT_EQ(ibv_create_cq_ex(ctx_, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	attr.flags = 0;
	EXPECT_EQ(ibv_create_cq_ex(ctx_, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	EXPECT_EQ(kernel.seen.size(), commands);
	EXPECT_TRUE(kernel.cqs.empty());
}

TEST_F(Queues, SharesTheCqRingWithTheKernel)
{
	ibv_cq *cq = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);
	xiw_test::FakeRing &ring = *kernel.cqs.begin()->second.ring;

	ring.slot<xiw_cqe>(3).wr_id = 0x5151;
	EXPECT_EQ(xiw::Cq::from(cq)->ring.slots()[3].wr_id, 0x5151U);
	xiw::Cq::from(cq)->ring.ctrl().cq_notify = 7;
	EXPECT_EQ(ring.ctrl().cq_notify, 7U);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(Queues, ReportsAFailedCqCreation)
{
	kernel.create_errno = ENOSPC;

	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, ENOSPC);
	EXPECT_TRUE(kernel.user_mappings.empty());
}

TEST_F(Queues, DestroysTheKernelCqIfItsRingCannotBeMapped)
{
	kernel.mmap_errno = ENOMEM;

	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, ENOMEM);
	EXPECT_TRUE(kernel.cqs.empty());
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_DESTROY_CQ), 1U);
}

TEST_F(Queues, RefusesACqResponseWithAnUnusableRing)
{
	kernel.tweak_cq_resp = [](xiw_create_cq_resp &resp) {
		resp.num_cqe = 12;
	};
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, EPROTO);
	EXPECT_TRUE(kernel.cqs.empty());
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_DESTROY_CQ), 1U);

	/* A ring of another length than the kernel's: its mmap refuses. */
	kernel.tweak_cq_resp = [](xiw_create_cq_resp &resp) {
		resp.num_cqe *= 1024;
	};
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_TRUE(kernel.cqs.empty());
	EXPECT_TRUE(kernel.user_mappings.empty());
}

TEST_F(Queues, KeepsACqTheKernelRefusesToDestroy)
{
	ibv_cq *cq = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);

	kernel.destroy_errno = EBUSY;
	EXPECT_EQ(ibv_destroy_cq(cq), EBUSY);
	EXPECT_EQ(kernel.user_mappings.size(), 1U);

	kernel.destroy_errno = 0;
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

/* Produces a CQE as the kernel would: slot prod, then prod + 1. */
void produce_cqe(xiw_test::FakeCq &cq, std::uint64_t wr_id)
{
	auto &slot = cq.ring->slot<xiw_cqe>(cq.prod);
	slot.wr_id = wr_id;
	slot.opcode = IBV_WC_SEND;
	xiw::shared_word(slot.flags).store(XIW_SLOT_VALID,
					   std::memory_order_release);
	++cq.prod;
}

std::vector<std::uint64_t> poll_wr_ids(ibv_cq *cq)
{
	std::vector<std::uint64_t> ids;
	ibv_wc wc{};

	while (ibv_poll_cq(cq, 1, &wc) == 1) {
		ids.push_back(wc.wr_id);
	}
	return ids;
}

TEST_F(Queues, ResizesACqKeepingTheCompletionsNotYetPolled)
{
	ibv_cq *cq = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);
	xiw_test::FakeCq &fake = kernel.cqs.begin()->second;
	const std::uint64_t old_key = fake.ring->key();

	produce_cqe(fake, 1);
	produce_cqe(fake, 2);
	produce_cqe(fake, 3);
	std::array<ibv_wc, 1> wc{};
	ASSERT_EQ(ibv_poll_cq(cq, 1, wc.data()), 1);
	EXPECT_EQ(wc[0].wr_id, 1U);

	ASSERT_EQ(ibv_resize_cq(cq, 10), 0);
	EXPECT_EQ(cq->cqe, 16);
	EXPECT_EQ(xiw::Cq::from(cq)->ring.num(), 16U);
	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_RESIZE_CQ);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_resize_cq));
	EXPECT_EQ(seen->out_words * 4U, sizeof(xiw::ResizeCqResp));
	/* The new ring is mapped, the old one unmapped. */
	ASSERT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(kernel.user_mappings[0].key, fake.ring->key());
	EXPECT_NE(fake.ring->key(), old_key);
	EXPECT_EQ(kernel.bad_unmaps, 0);

	/* The two pending come first, then what the kernel adds. */
	produce_cqe(fake, 4);
	EXPECT_EQ(poll_wr_ids(cq), (std::vector<std::uint64_t>{2, 3, 4}));
	/* Arming reaches the new ring. */
	EXPECT_EQ(ibv_req_notify_cq(cq, 0), 0);
	EXPECT_EQ(fake.ring->ctrl().cq_notify, XIW_CQ_NOTIFY_NEXT);

	/* Smaller again: everything was polled, so 1 is enough. */
	ASSERT_EQ(ibv_resize_cq(cq, 1), 0);
	EXPECT_EQ(cq->cqe, 1);
	EXPECT_EQ(fake.ring->ctrl().cq_notify, XIW_CQ_NOTIFY_NEXT);
	produce_cqe(fake, 5);
	EXPECT_EQ(poll_wr_ids(cq), std::vector<std::uint64_t>{5});
	EXPECT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_TRUE(kernel.user_mappings.empty());
}

TEST_F(Queues, ARefusedResizeLeavesTheCqAsItWas)
{
	ibv_cq *cq = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);
	xiw_test::FakeCq &fake = kernel.cqs.begin()->second;
	const std::uint64_t key = fake.ring->key();

	produce_cqe(fake, 1);
	produce_cqe(fake, 2);
	/* Fewer slots than completions pending. */
	EXPECT_EQ(ibv_resize_cq(cq, 1), EINVAL);
	kernel.resize_errno = ENOMEM;
	EXPECT_EQ(ibv_resize_cq(cq, 64), ENOMEM);
	EXPECT_EQ(cq->cqe, 4);
	ASSERT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(kernel.user_mappings[0].key, key);
	EXPECT_EQ(poll_wr_ids(cq), (std::vector<std::uint64_t>{1, 2}));
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(Queues, KeepsTheOldCqRingIfTheNewOneCannotBeMapped)
{
	ibv_cq *cq = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << std::strerror(errno);
	xiw_test::FakeCq &fake = kernel.cqs.begin()->second;

	produce_cqe(fake, 7);
	kernel.mmap_errno = ENOMEM;
	EXPECT_EQ(ibv_resize_cq(cq, 8), ENOMEM);
	kernel.mmap_errno = 0;
	/* Still the old mapping: what was pending is polled from it. */
	ASSERT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(xiw::Cq::from(cq)->ring.num(), 4U);
	EXPECT_EQ(cq->cqe, 4);
	EXPECT_EQ(poll_wr_ids(cq), std::vector<std::uint64_t>{7});
	EXPECT_EQ(ibv_req_notify_cq(cq, 1), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_TRUE(kernel.user_mappings.empty());
}

/* ---- QP -------------------------------------------------------------- */

class QueuePairs : public Queues {
protected:
	void SetUp() override
	{
		Queues::SetUp();
		if (HasFatalFailure()) {
			return;
		}
		cq_ = ibv_create_cq(ctx_, 16, nullptr, nullptr, 0);
		ASSERT_NE(cq_, nullptr) << std::strerror(errno);
	}

	void TearDown() override
	{
		if (cq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_cq(cq_), 0);
		}
		Queues::TearDown();
	}

	/* Mappings other than the CQ's. */
	static std::size_t qp_mappings()
	{
		return kernel.user_mappings.size() - 1;
	}

	ibv_cq *cq_ = nullptr;
};

TEST_F(QueuePairs, CreatesAnRcQpWithBothRings)
{
	ibv_qp_init_attr attr = rc_attr(cq_);
	ibv_qp *qp = ibv_create_qp(pd_, &attr);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);

	ASSERT_EQ(kernel.qps.size(), 1U);
	const xiw_test::FakeQp &fake = kernel.qps.begin()->second;
	EXPECT_EQ(qp->handle, kernel.qps.begin()->first);
	EXPECT_EQ(qp->qp_num, fake.qpn);
	/*
	 * iWARP's Idle, INIT on an RNIC, is in the rings (and what a query
	 * returns); ibv_qp's own field keeps libibverbs' RESET until a modify
	 * or query, as rdma-core's tests expect.
	 */
	EXPECT_EQ(qp->state, IBV_QPS_RESET);
	EXPECT_EQ(xiw::Qp::from(qp)->sq_ring.ctrl().qp_state, IBV_QPS_INIT);
	EXPECT_EQ(qp->qp_type, IBV_QPT_RC);
	EXPECT_EQ(qp->pd, pd_);
	EXPECT_EQ(fake.pd_handle, pd_->handle);
	EXPECT_EQ(fake.send_cq_handle, cq_->handle);
	EXPECT_EQ(fake.recv_cq_handle, cq_->handle);
	EXPECT_FALSE(fake.is_srq);
	EXPECT_EQ(fake.user_handle, reinterpret_cast<std::uintptr_t>(qp));
	/* A plain QP: libibverbs must not take it for an extended one. */
	EXPECT_EQ(ibv_qp_to_qp_ex(qp), nullptr);

	ASSERT_EQ(qp_mappings(), 2U);
	EXPECT_EQ(kernel.user_mappings[1].key, fake.sq->key());
	EXPECT_EQ(kernel.user_mappings[1].len, expected_ring_len<xiw_sqe>(8));
	EXPECT_EQ(kernel.user_mappings[2].key, fake.rq->key());
	EXPECT_EQ(kernel.user_mappings[2].len, expected_ring_len<xiw_rqe>(8));

	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_CREATE_QP);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_create_qp));

	kernel.mappings_at_destroy.clear();
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_TRUE(kernel.qps.empty());
	EXPECT_EQ(kernel.mappings_at_destroy, std::vector<std::size_t>{3});
	EXPECT_EQ(qp_mappings(), 0U);
}

TEST_F(QueuePairs, RefusesQpTypesOtherThanRc)
{
	for (const ibv_qp_type type :
	     {IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
	      IBV_QPT_DRIVER}) {
		ibv_qp_init_attr attr = rc_attr(cq_);
		attr.qp_type = type;

		errno = 0;
		EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr) << type;
		EXPECT_EQ(errno, EOPNOTSUPP) << type;
	}
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_CREATE_QP), 0U);
}

TEST_F(QueuePairs, RefusesWhatTheRingsCannotHold)
{
	ibv_qp_init_attr attr = rc_attr(cq_);
	attr.cap.max_send_sge = XIW_MAX_SGE + 1;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	attr = rc_attr(cq_);
	attr.cap.max_recv_sge = XIW_MAX_RECV_SGE + 1;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	attr = rc_attr(cq_);
	attr.cap.max_inline_data = XIW_MAX_INLINE + 1;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	attr = rc_attr(cq_);
	attr.recv_cq = nullptr;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_CREATE_QP), 0U);
}

TEST_F(QueuePairs, MapsOnlyTheSqOfAQpOnAnSrq)
{
	ibv_srq_init_attr srq_attr{};
	srq_attr.attr.max_wr = 16;
	srq_attr.attr.max_sge = 1;
	ibv_srq *srq = ibv_create_srq(pd_, &srq_attr);
	ASSERT_NE(srq, nullptr) << std::strerror(errno);
	const std::size_t before = kernel.user_mappings.size();

	ibv_qp_init_attr attr = rc_attr(cq_, srq);
	ibv_qp *qp = ibv_create_qp(pd_, &attr);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);
	const xiw_test::FakeQp &fake = kernel.qps.begin()->second;
	EXPECT_TRUE(fake.is_srq);
	EXPECT_EQ(fake.srq_handle, srq->handle);
	EXPECT_EQ(fake.rq, nullptr);
	ASSERT_EQ(kernel.user_mappings.size(), before + 1);
	EXPECT_EQ(kernel.user_mappings.back().key, fake.sq->key());
	EXPECT_FALSE(xiw::Qp::from(qp)->rq_ring);

	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

TEST_F(QueuePairs, DestroysTheKernelQpIfARingCannotBeMapped)
{
	ibv_qp_init_attr attr = rc_attr(cq_);

	kernel.mmap_errno = ENOMEM;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, ENOMEM);
	EXPECT_TRUE(kernel.qps.empty());
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_DESTROY_QP), 1U);

	/* The SQ maps, the RQ does not: the SQ is unmapped again. */
	kernel.mmap_errno = 0;
	kernel.tweak_qp_resp = [](xiw_create_qp_resp &resp) {
		resp.rq_key += 0x1000000;
	};
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_TRUE(kernel.qps.empty());
	EXPECT_EQ(qp_mappings(), 0U);
}

TEST_F(QueuePairs, RefusesQpResponsesThatDoNotFit)
{
	using Tweak = void (*)(xiw_create_qp_resp &);
	const std::array<Tweak, 4> tweaks{
		[](xiw_create_qp_resp &resp) {
			resp.rq_key = XIW_INVALID_MMAP_KEY;
		},
		[](xiw_create_qp_resp &resp) { resp.num_sqe = 0; },
		[](xiw_create_qp_resp &resp) { resp.num_rqe = 6; },
		[](xiw_create_qp_resp &resp) {
			resp.max_inline = XIW_MAX_INLINE * 2;
		},
	};
	for (const Tweak tweak : tweaks) {
		ibv_qp_init_attr attr = rc_attr(cq_);
		kernel.tweak_qp_resp = tweak;

		errno = 0;
		EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
		EXPECT_EQ(errno, EPROTO);
		EXPECT_TRUE(kernel.qps.empty());
		EXPECT_EQ(qp_mappings(), 0U);
	}
}

TEST_F(QueuePairs, ReportsAFailedQpCreation)
{
	ibv_qp_init_attr attr = rc_attr(cq_);

	kernel.create_errno = ENOMEM;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd_, &attr), nullptr);
	EXPECT_EQ(errno, ENOMEM);
	EXPECT_EQ(qp_mappings(), 0U);
}

TEST_F(QueuePairs, ModifiesAQpThroughTheKernel)
{
	ibv_qp_init_attr init = rc_attr(cq_);
	ibv_qp *qp = ibv_create_qp(pd_, &init);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);
	/* From RESET, so that the kernel's publication is seen to change. */
	xiw_test::set_qp_state(kernel.qps.at(qp->handle), IBV_QPS_RESET);

	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_ACCESS_FLAGS;
	EXPECT_EQ(ibv_modify_qp(qp, &attr, mask), 0);

	EXPECT_EQ(kernel.modify_qp_mask, static_cast<std::uint32_t>(mask));
	EXPECT_EQ(kernel.qps.at(qp->handle).state, IBV_QPS_INIT);
	EXPECT_EQ(qp->state, IBV_QPS_INIT);
	/* The kernel published the state where the data path reads it. */
	EXPECT_EQ(xiw::Qp::from(qp)->sq_ring.ctrl().qp_state, IBV_QPS_INIT);
	EXPECT_EQ(xiw::Qp::from(qp)->rq_ring.ctrl().qp_state, IBV_QPS_INIT);
	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_MODIFY_QP);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_modify_qp));
	EXPECT_EQ(seen->out_words, 0);

	EXPECT_EQ(ibv_destroy_qp(qp), 0);
}

TEST_F(QueuePairs, QueriesAQp)
{
	ibv_qp_init_attr init = rc_attr(cq_);
	init.sq_sig_all = 1;
	ibv_qp *qp = ibv_create_qp(pd_, &init);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);
	xiw_test::set_qp_state(kernel.qps.at(qp->handle), IBV_QPS_RTS);

	ibv_qp_attr attr{};
	ibv_qp_init_attr got{};
	EXPECT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &got), 0);
	EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
	EXPECT_EQ(attr.cap.max_send_wr, 8U);
	EXPECT_EQ(got.sq_sig_all, 1);
	EXPECT_EQ(got.send_cq, cq_);
	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_QUERY_QP);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_query_qp));

	EXPECT_EQ(ibv_destroy_qp(qp), 0);
}

TEST_F(QueuePairs, KeepsAQpTheKernelRefusesToDestroy)
{
	ibv_qp_init_attr init = rc_attr(cq_);
	ibv_qp *qp = ibv_create_qp(pd_, &init);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);

	kernel.destroy_errno = EBUSY;
	EXPECT_EQ(ibv_destroy_qp(qp), EBUSY);
	EXPECT_EQ(qp_mappings(), 2U);

	kernel.destroy_errno = 0;
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(qp_mappings(), 0U);
}

/* ---- SRQ ------------------------------------------------------------- */

ibv_srq_init_attr srq_init(const ibv_srq_attr &attr)
{
	ibv_srq_init_attr init{};

	init.attr = attr;
	return init;
}

TEST_F(Queues, CreatesAnSrqAndMapsItsRing)
{
	ibv_srq_init_attr attr =
		srq_init({.max_wr = 20, .max_sge = 3, .srq_limit = 0});
	ibv_srq *srq = ibv_create_srq(pd_, &attr);
	ASSERT_NE(srq, nullptr) << std::strerror(errno);

	ASSERT_EQ(kernel.srqs.size(), 1U);
	const xiw_test::FakeSrq &fake = kernel.srqs.begin()->second;
	EXPECT_EQ(srq->handle, kernel.srqs.begin()->first);
	EXPECT_EQ(srq->pd, pd_);
	EXPECT_EQ(fake.pd_handle, pd_->handle);
	EXPECT_EQ(fake.max_sge, 3U);
	ASSERT_EQ(kernel.user_mappings.size(), 1U);
	EXPECT_EQ(kernel.user_mappings[0].key, fake.ring->key());
	EXPECT_EQ(kernel.user_mappings[0].len, expected_ring_len<xiw_rqe>(32));
	EXPECT_EQ(xiw::Srq::from(srq)->max_sge, 3U);
	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_CREATE_SRQ);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_create_srq));

	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(kernel.mappings_at_destroy, std::vector<std::size_t>{1});
	EXPECT_TRUE(kernel.user_mappings.empty());
}

TEST_F(Queues, ModifiesAndQueriesAnSrq)
{
	ibv_srq_init_attr init =
		srq_init({.max_wr = 16, .max_sge = 2, .srq_limit = 0});
	ibv_srq *srq = ibv_create_srq(pd_, &init);
	ASSERT_NE(srq, nullptr) << std::strerror(errno);

	ibv_srq_attr attr{};
	attr.srq_limit = 5;
	EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	EXPECT_EQ(kernel.modify_srq_mask, unsigned{IBV_SRQ_LIMIT});
	const xiw_test::SeenCommand *seen =
		last_seen(IB_USER_VERBS_CMD_MODIFY_SRQ);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_modify_srq));

	ibv_srq_attr got{};
	EXPECT_EQ(ibv_query_srq(srq, &got), 0);
	EXPECT_EQ(got.srq_limit, 5U);
	EXPECT_EQ(got.max_wr, 16U);
	EXPECT_EQ(got.max_sge, 2U);
	seen = last_seen(IB_USER_VERBS_CMD_QUERY_SRQ);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_query_srq));

	EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

TEST_F(Queues, RefusesAnSrqWithMoreSgesThanAnRqeHolds)
{
	ibv_srq_init_attr attr = srq_init(
		{.max_wr = 16, .max_sge = XIW_MAX_RECV_SGE + 1, .srq_limit = 0});

	errno = 0;
	EXPECT_EQ(ibv_create_srq(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_CREATE_SRQ), 0U);
}

TEST_F(Queues, UndoesAnSrqWhoseRingIsUnusable)
{
	ibv_srq_init_attr attr =
		srq_init({.max_wr = 16, .max_sge = 1, .srq_limit = 0});

	kernel.tweak_srq_resp = [](xiw_create_srq_resp &resp) {
		resp.num_rqe = 0;
	};
	errno = 0;
	EXPECT_EQ(ibv_create_srq(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EPROTO);
	EXPECT_TRUE(kernel.srqs.empty());

	kernel.tweak_srq_resp = nullptr;
	kernel.mmap_errno = EAGAIN;
	errno = 0;
	EXPECT_EQ(ibv_create_srq(pd_, &attr), nullptr);
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_TRUE(kernel.srqs.empty());
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_DESTROY_SRQ), 2U);

	kernel.mmap_errno = 0;
	kernel.create_errno = ENOSPC;
	errno = 0;
	EXPECT_EQ(ibv_create_srq(pd_, &attr), nullptr);
	EXPECT_EQ(errno, ENOSPC);
}

TEST_F(Queues, KeepsAnSrqTheKernelRefusesToDestroy)
{
	ibv_srq_init_attr attr =
		srq_init({.max_wr = 16, .max_sge = 1, .srq_limit = 0});
	ibv_srq *srq = ibv_create_srq(pd_, &attr);
	ASSERT_NE(srq, nullptr) << std::strerror(errno);

	kernel.destroy_errno = EBUSY;
	EXPECT_EQ(ibv_destroy_srq(srq), EBUSY);
	EXPECT_EQ(kernel.user_mappings.size(), 1U);
	kernel.destroy_errno = 0;
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

/* ---- MR -------------------------------------------------------------- */

TEST_F(Queues, RegistersAndDeregistersAnMr)
{
	std::vector<char> buf(8192);
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

	ibv_mr *mr =
		ibv_reg_mr_iova(pd_, buf.data(), buf.size(), 0x7000, access);
	ASSERT_NE(mr, nullptr) << std::strerror(errno);

	ASSERT_EQ(kernel.mrs.size(), 1U);
	const xiw_test::FakeMr &fake = kernel.mrs.begin()->second;
	EXPECT_EQ(mr->handle, kernel.mrs.begin()->first);
	EXPECT_EQ(mr->lkey, fake.lkey);
	EXPECT_EQ(mr->rkey, fake.rkey);
	EXPECT_EQ(mr->addr, buf.data());
	EXPECT_EQ(mr->length, buf.size());
	EXPECT_EQ(mr->pd, pd_);
	EXPECT_EQ(fake.start, reinterpret_cast<std::uintptr_t>(buf.data()));
	EXPECT_EQ(fake.length, buf.size());
	EXPECT_EQ(fake.hca_va, 0x7000U);
	EXPECT_EQ(fake.access, static_cast<std::uint32_t>(access));
	EXPECT_EQ(fake.pd_handle, pd_->handle);
	const xiw_test::SeenCommand *seen = last_seen(IB_USER_VERBS_CMD_REG_MR);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_reg_mr));
	EXPECT_EQ(seen->out_words * 4U, sizeof(ibv_reg_mr_resp));

	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_TRUE(kernel.mrs.empty());
}

TEST_F(Queues, ReportsAFailedRegistration)
{
	std::vector<char> buf(64);

	kernel.create_errno = EFAULT;
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(pd_, buf.data(), buf.size(),
			     IBV_ACCESS_LOCAL_WRITE),
		  nullptr);
	EXPECT_EQ(errno, EFAULT);
}

TEST_F(Queues, KeepsAnMrTheKernelRefusesToDeregister)
{
	std::vector<char> buf(64);
	ibv_mr *mr = ibv_reg_mr(pd_, buf.data(), buf.size(), 0);
	ASSERT_NE(mr, nullptr) << std::strerror(errno);

	kernel.destroy_errno = EBUSY;
	EXPECT_EQ(ibv_dereg_mr(mr), EBUSY);
	EXPECT_EQ(kernel.mrs.size(), 1U);
	kernel.destroy_errno = 0;
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

} // namespace
