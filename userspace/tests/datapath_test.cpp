// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The data path, through libibverbs's inline verbs (ibv_post_send,
 * ibv_poll_cq, ...) against the fake kernel (fake_kernel.h), which looks
 * at and writes into the same ring memory from its side: the slots posted,
 * the errors and bad_wr, exactly when a doorbell rings, and the completions
 * polled.
 */
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "deadline.h"
#include "fake_kernel.h"
#include "ibverbs_private.h"
#include "ring.h"
#include "xiw.h"

namespace {

using xiw_test::FakeRing;
using xiw_test::kernel;

std::uint64_t address_of(const void *p)
{
	return reinterpret_cast<std::uintptr_t>(p);
}

ibv_send_wr send_wr(std::uint64_t wr_id, ibv_wr_opcode opcode = IBV_WR_SEND,
		    unsigned int flags = 0)
{
	ibv_send_wr wr{};
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = flags;
	return wr;
}

/* Links wrs into one chain, in order. */
template <typename Wr, std::size_t N> Wr *chain(std::array<Wr, N> &wrs)
{
	Wr *next = nullptr;

	for (auto it = wrs.rbegin(); it != wrs.rend(); ++it) {
		it->next = next;
		next = &*it;
	}
	return next;
}

class DataPath : public xiw_test::FakeContext {
protected:
	void SetUp() override
	{
		FakeContext::SetUp();
		if (HasFatalFailure()) {
			return;
		}
		cq_ = ibv_create_cq(ctx_, 64, nullptr, nullptr, 0);
		ASSERT_NE(cq_, nullptr) << std::strerror(errno);
		qp_ = make_qp(rc_attr(cq_));
		ASSERT_NE(qp_, nullptr) << std::strerror(errno);
		xiw_test::set_qp_state(fake_qp(qp_), IBV_QPS_RTS);
	}

	void TearDown() override
	{
		for (ibv_qp *qp : {qp_, other_qp_}) {
			if (qp != nullptr) {
				EXPECT_EQ(ibv_destroy_qp(qp), 0);
			}
		}
		if (srq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_srq(srq_), 0);
		}
		if (cq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_cq(cq_), 0);
		}
		FakeContext::TearDown();
	}

	ibv_qp *make_qp(ibv_qp_init_attr attr)
	{
		return ibv_create_qp(pd_, &attr);
	}

	static xiw_test::FakeQp &fake_qp(ibv_qp *qp)
	{
		return kernel.qps.at(qp->handle);
	}
	[[nodiscard]] FakeRing &sq() const { return *fake_qp(qp_).sq; }
	[[nodiscard]] FakeRing &rq() const { return *fake_qp(qp_).rq; }
	[[nodiscard]] FakeRing &cq_ring() const
	{
		return *kernel.cqs.at(cq_->handle).ring;
	}

	static void set_sq_busy(FakeRing &sq, std::uint32_t busy)
	{
		xiw::shared_word(sq.ctrl().sq_busy).store(busy);
	}

	/* Posts one WR; returns the error, with bad_wr checked if it fails. */
	int post_one(ibv_send_wr wr)
	{
		ibv_send_wr *bad = nullptr;
		const int err = ibv_post_send(qp_, &wr, &bad);
		EXPECT_EQ(bad, err == 0 ? nullptr : &wr);
		return err;
	}

	/* The kernel places a CQE, as its side of the protocol does. */
	void kernel_completes(std::uint32_t index, const xiw_cqe &cqe)
	{
		kernel_completes(cq_ring(), index, cqe);
	}
	static void kernel_completes(FakeRing &ring, std::uint32_t index,
				     const xiw_cqe &cqe)
	{
		auto &slot = ring.slot<xiw_cqe>(index);
		const std::uint32_t flags = cqe.flags;

		std::memcpy(reinterpret_cast<std::byte *>(&slot) + 4,
			    reinterpret_cast<const std::byte *>(&cqe) + 4,
			    sizeof(cqe) - 4);
		xiw::shared_word(slot.flags)
			.store(flags | XIW_SLOT_VALID,
			       std::memory_order_release);
	}

	ibv_cq *cq_ = nullptr;
	ibv_qp *qp_ = nullptr;
	ibv_qp *other_qp_ = nullptr;
	ibv_srq *srq_ = nullptr;
};

/* ---- post_send ------------------------------------------------------- */

TEST_F(DataPath, PostSendWritesTheSqe)
{
	std::array<ibv_sge, 2> sges{
		{{0x10000, 100, 0x11}, {0x20000, 200, 0x22}}};
	ibv_send_wr wr = send_wr(0xabcdef, IBV_WR_SEND,
				 IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	wr.sg_list = sges.data();
	wr.num_sge = 2;

	ASSERT_EQ(post_one(wr), 0);

	xiw_sqe expected{};
	expected.flags = XIW_SLOT_VALID | XIW_WQE_SIGNALED | XIW_WQE_SOLICITED;
	expected.opcode = IB_UVERBS_WR_SEND;
	expected.num_sge = 2;
	expected.wr_id = 0xabcdef;
	expected.sge[0] = {0x10000, 100, 0x11};
	expected.sge[1] = {0x20000, 200, 0x22};
	EXPECT_EQ(std::memcmp(&sq().slot<xiw_sqe>(0), &expected,
			      sizeof(expected)),
		  0);
	EXPECT_EQ(sq().flags<xiw_sqe>(1), 0U);
}

TEST_F(DataPath, PostSendFillsEachOpcodesFields)
{
	ibv_sge sge{0x1000, 8, 5};
	ibv_send_wr write = send_wr(1, IBV_WR_RDMA_WRITE, IBV_SEND_FENCE);
	write.sg_list = &sge;
	write.num_sge = 1;
	write.wr.rdma.remote_addr = 0x123456789000ULL;
	write.wr.rdma.rkey = 0xbeef;
	ibv_send_wr read = write;
	read.wr_id = 2;
	read.opcode = IBV_WR_RDMA_READ;
	read.send_flags = 0;
	ibv_send_wr inv = send_wr(3, IBV_WR_SEND_WITH_INV);
	inv.invalidate_rkey = 0x4242;

	ASSERT_EQ(post_one(write), 0);
	ASSERT_EQ(post_one(read), 0);
	ASSERT_EQ(post_one(inv), 0);

	const xiw_sqe &w = sq().slot<xiw_sqe>(0);
	EXPECT_EQ(w.opcode, IB_UVERBS_WR_RDMA_WRITE);
	EXPECT_EQ(w.flags, XIW_SLOT_VALID | XIW_WQE_FENCE);
	EXPECT_EQ(w.raddr, 0x123456789000ULL);
	EXPECT_EQ(w.rkey, 0xbeefU);
	const xiw_sqe &r = sq().slot<xiw_sqe>(1);
	EXPECT_EQ(r.opcode, IB_UVERBS_WR_RDMA_READ);
	EXPECT_EQ(r.wr_id, 2U);
	EXPECT_EQ(r.flags, XIW_SLOT_VALID);
	EXPECT_EQ(r.rkey, 0xbeefU);
	const xiw_sqe &i = sq().slot<xiw_sqe>(2);
	EXPECT_EQ(i.opcode, IB_UVERBS_WR_SEND_WITH_INV);
	EXPECT_EQ(i.ex, 0x4242U);
	EXPECT_EQ(i.rkey, 0U);
}

TEST_F(DataPath, PostSendSignalsEverythingOnASqSigAllQp)
{
	ibv_qp_init_attr attr = rc_attr(cq_);
	attr.sq_sig_all = 1;
	other_qp_ = make_qp(attr);
	ASSERT_NE(other_qp_, nullptr) << std::strerror(errno);
	xiw_test::set_qp_state(fake_qp(other_qp_), IBV_QPS_RTS);
	ibv_send_wr wr = send_wr(9);
	ibv_send_wr *bad = nullptr;

	ASSERT_EQ(ibv_post_send(other_qp_, &wr, &bad), 0);
	EXPECT_EQ(fake_qp(other_qp_).sq->flags<xiw_sqe>(0),
		  XIW_SLOT_VALID | XIW_WQE_SIGNALED);
}

TEST_F(DataPath, PostSendCopiesInlineData)
{
	std::array<char, 6> data{"hello"};
	ibv_sge sge{address_of(data.data()), 5, 0};
	ibv_send_wr wr = send_wr(4, IBV_WR_SEND, IBV_SEND_INLINE);
	wr.sg_list = &sge;
	wr.num_sge = 1;

	ASSERT_EQ(post_one(wr), 0);
	/* The buffer is free again as soon as the post returns. */
	data[0] = 'j';

	const xiw_sqe &sqe = sq().slot<xiw_sqe>(0);
	EXPECT_EQ(sqe.flags, XIW_SLOT_VALID | XIW_WQE_INLINE);
	EXPECT_EQ(sqe.num_sge, 0);
	EXPECT_EQ(sqe.inline_len, 5);
	EXPECT_EQ(std::string_view(reinterpret_cast<const char *>(&sqe.sge[0]),
				   5),
		  "hello");
}

TEST_F(DataPath, PostSendRefusesWhatXiwCannotCarry)
{
	std::vector<char> big(XIW_MAX_INLINE + 1);
	std::array<ibv_sge, 3> sges{};
	/* One byte more than the kernel granted (the fake grants all). */
	ibv_sge inline_sge{address_of(big.data()), XIW_MAX_INLINE + 1, 0};

	std::vector<ibv_send_wr> refused;
	for (const ibv_wr_opcode opcode :
	     {IBV_WR_SEND_WITH_IMM, IBV_WR_BIND_MW, IBV_WR_TSO}) {
		refused.push_back(send_wr(1, opcode));
	}
	ibv_send_wr too_many = send_wr(2); /* the QP has max_send_sge 2 */
	too_many.sg_list = sges.data();
	too_many.num_sge = 3;
	refused.push_back(too_many);
	ibv_send_wr too_long = send_wr(3, IBV_WR_SEND, IBV_SEND_INLINE);
	too_long.sg_list = &inline_sge;
	too_long.num_sge = 1;
	refused.push_back(too_long);
	refused.push_back(send_wr(4, IBV_WR_RDMA_READ, IBV_SEND_INLINE));
	/* An atomic's one buffer is the 8 bytes of the old value. */
	ibv_send_wr atomic = send_wr(5, IBV_WR_ATOMIC_FETCH_AND_ADD);
	atomic.sg_list = sges.data();
	atomic.num_sge = 1;
	sges[0].length = 4;
	refused.push_back(atomic);

	for (const ibv_send_wr &wr : refused) {
		EXPECT_EQ(post_one(wr), EINVAL) << wr.wr_id << " " << wr.opcode;
	}
	EXPECT_EQ(sq().flags<xiw_sqe>(0), 0U) << "a refused WR was posted";
	EXPECT_TRUE(kernel.doorbells.empty());

	inline_sge.length = XIW_MAX_INLINE;
	EXPECT_EQ(post_one(too_long), 0);
}

TEST_F(DataPath, PostSendTakesTheInlineLimitTheKernelGranted)
{
	kernel.max_inline = 32;
	other_qp_ = make_qp(rc_attr(cq_)); /* asks for 64 */
	ASSERT_NE(other_qp_, nullptr) << std::strerror(errno);
	xiw_test::set_qp_state(fake_qp(other_qp_), IBV_QPS_RTS);
	std::array<char, 33> data{};
	ibv_sge sge{address_of(data.data()), 33, 0};
	ibv_send_wr wr = send_wr(1, IBV_WR_RDMA_WRITE, IBV_SEND_INLINE);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(ibv_post_send(other_qp_, &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);
	sge.length = 32;
	EXPECT_EQ(ibv_post_send(other_qp_, &wr, &bad), 0);
}

/* ---- memory windows ------------------------------------------------- */

TEST_F(DataPath, AType1WindowBindsThroughTheSendQueueWithTheNextKey)
{
	std::array<char, 64> buf{};
	ibv_mr *mr = ibv_reg_mr(pd_, buf.data(), buf.size(),
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(mr, nullptr) << std::strerror(errno);
	ibv_mw *mw = ibv_alloc_mw(pd_, IBV_MW_TYPE_1);
	ASSERT_NE(mw, nullptr) << std::strerror(errno);
	ASSERT_EQ(kernel.mws.count(mw->handle), 1U);
	EXPECT_EQ(kernel.mws.at(mw->handle).type, IBV_MW_TYPE_1);
	EXPECT_EQ(kernel.mws.at(mw->handle).pd_handle, pd_->handle);
	const std::uint32_t first = mw->rkey;
	EXPECT_EQ(first, kernel.mws.at(mw->handle).rkey);

	ibv_mw_bind bind{};
	bind.wr_id = 7;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info = {mr, address_of(buf.data()) + 8, 16,
			  IBV_ACCESS_REMOTE_WRITE};
	ASSERT_EQ(ibv_bind_mw(qp_, mw, &bind), 0);
	EXPECT_EQ(mw->rkey, ibv_inc_rkey(first));
	EXPECT_EQ(mw->rkey >> 8, first >> 8) << "the index is the window's";
	const xiw_sqe &sqe = sq().slot<xiw_sqe>(0);
	EXPECT_EQ(sq().flags<xiw_sqe>(0), XIW_SLOT_VALID | XIW_WQE_SIGNALED);
	EXPECT_EQ(sqe.opcode, IB_UVERBS_WR_BIND_MW);
	EXPECT_EQ(sqe.wr_id, 7U);
	EXPECT_EQ(sqe.ex, first);
	EXPECT_EQ(sqe.rkey, mw->rkey);
	EXPECT_EQ(sqe.raddr, address_of(buf.data()) + 8);
	EXPECT_EQ(sqe.compare_add, 16U);
	EXPECT_EQ(sqe.mw_lkey, mr->lkey);
	EXPECT_EQ(sqe.mw_access,
		  static_cast<std::uint32_t>(IB_UVERBS_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(kernel.doorbells.size(), 1U);

	/* A second bind names the window by the key the first gave it. */
	ASSERT_EQ(ibv_bind_mw(qp_, mw, &bind), 0);
	EXPECT_EQ(sq().slot<xiw_sqe>(1).ex, ibv_inc_rkey(first));

	EXPECT_EQ(ibv_dealloc_mw(mw), 0);
	EXPECT_TRUE(kernel.mws.empty());
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(DataPath, WindowCallsTheProviderRefusesChangeNothing)
{
	std::array<char, 64> buf{};
	ibv_mr *mr = ibv_reg_mr(pd_, buf.data(), buf.size(),
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(mr, nullptr) << std::strerror(errno);
	ibv_pd *other_pd = ibv_alloc_pd(ctx_);
	ASSERT_NE(other_pd, nullptr) << std::strerror(errno);
	ibv_mr *other_mr = ibv_reg_mr(other_pd, buf.data(), buf.size(),
				      IBV_ACCESS_MW_BIND);
	ASSERT_NE(other_mr, nullptr) << std::strerror(errno);
	ibv_mw *mw2 = ibv_alloc_mw(pd_, IBV_MW_TYPE_2);
	ASSERT_NE(mw2, nullptr) << std::strerror(errno);
	ibv_mw *mw1 = ibv_alloc_mw(pd_, IBV_MW_TYPE_1);
	ASSERT_NE(mw1, nullptr) << std::strerror(errno);
	const std::uint32_t key1 = mw1->rkey;

	ibv_mw_bind bind{};
	bind.bind_info = {mr, address_of(buf.data()), 8,
			  IBV_ACCESS_REMOTE_READ};
	EXPECT_EQ(ibv_bind_mw(qp_, mw2, &bind), EINVAL)
		<< "type 2 binds by IBV_WR_BIND_MW";
	bind.bind_info.mr = other_mr;
	/* libibverbs checks this one itself, with EPERM. */
	EXPECT_EQ(ibv_bind_mw(qp_, mw1, &bind), EPERM) << "another PD";
	bind.bind_info.mr = nullptr;
	EXPECT_EQ(ibv_bind_mw(qp_, mw1, &bind), EINVAL) << "a length, no MR";
	EXPECT_EQ(mw1->rkey, key1);
	EXPECT_EQ(sq().flags<xiw_sqe>(0), 0U) << "a refused bind was posted";
	EXPECT_TRUE(kernel.doorbells.empty());

	/* The kernel refuses: the application still has what it had. */
	kernel.destroy_errno = EBUSY;
	EXPECT_EQ(ibv_dealloc_mw(mw1), EBUSY);
	kernel.destroy_errno = 0;
	EXPECT_EQ(ibv_dealloc_mw(mw1), 0);
	kernel.create_errno = ENOMEM;
	errno = 0;
	EXPECT_EQ(ibv_alloc_mw(pd_, IBV_MW_TYPE_1), nullptr);
	EXPECT_EQ(errno, ENOMEM);
	kernel.create_errno = 0;

	EXPECT_EQ(ibv_dealloc_mw(mw2), 0);
	EXPECT_EQ(ibv_dereg_mr(other_mr), 0);
	EXPECT_EQ(ibv_dealloc_pd(other_pd), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(DataPath, PostSendKeepsTheRequestsBeforeABadOne)
{
	std::array<ibv_send_wr, 3> wrs{send_wr(1), send_wr(2, IBV_WR_TSO),
				       send_wr(3)};
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(ibv_post_send(qp_, chain(wrs), &bad), EINVAL);
	EXPECT_EQ(bad, &wrs[1]);
	EXPECT_EQ(sq().flags<xiw_sqe>(0), XIW_SLOT_VALID);
	EXPECT_EQ(sq().slot<xiw_sqe>(0).wr_id, 1U);
	EXPECT_EQ(sq().flags<xiw_sqe>(1), 0U);
	/* The one posted still reaches the kernel. */
	EXPECT_EQ(kernel.doorbells.size(), 1U);
}

TEST_F(DataPath, PostSendReportsAFullSqWithEnomem)
{
	const std::uint32_t num = sq().num();
	for (std::uint32_t i = 0; i < num; ++i) {
		ASSERT_EQ(post_one(send_wr(i)), 0) << i;
	}
	EXPECT_EQ(post_one(send_wr(num)), ENOMEM);
	EXPECT_EQ(sq().slot<xiw_sqe>(0).wr_id, 0U)
		<< "a valid slot was overwritten";

	sq().consume<xiw_sqe>(0); /* the kernel takes one */
	EXPECT_EQ(post_one(send_wr(num)), 0);
	EXPECT_EQ(sq().slot<xiw_sqe>(0).wr_id, num);
}

TEST_F(DataPath, PostSendOnAFullSqRefusesABadRequestFirst)
{
	const std::uint32_t num = sq().num();
	for (std::uint32_t i = 0; i < num; ++i) {
		ASSERT_EQ(post_one(send_wr(i)), 0) << i;
	}
	EXPECT_EQ(post_one(send_wr(num, IBV_WR_TSO)), EINVAL);
	EXPECT_EQ(post_one(send_wr(num)), ENOMEM);
	EXPECT_EQ(sq().slot<xiw_sqe>(0).wr_id, 0U)
		<< "a valid slot was overwritten";
}

TEST_F(DataPath, PostSendRefusedLeavesItsSlotUnpublished)
{
	std::array<ibv_sge, 3> sges{};
	ibv_send_wr wide = send_wr(1, IBV_WR_SEND, IBV_SEND_SIGNALED);
	wide.sg_list = sges.data();
	wide.num_sge = static_cast<int>(sges.size()) + 8; /* over max_sge */

	EXPECT_EQ(post_one(wide), EINVAL);
	EXPECT_EQ(sq().flags<xiw_sqe>(0) & XIW_SLOT_VALID, 0U);
	EXPECT_TRUE(kernel.doorbells.empty());
	/* The next request takes the slot. */
	EXPECT_EQ(post_one(send_wr(2)), 0);
	EXPECT_EQ(sq().flags<xiw_sqe>(0), XIW_SLOT_VALID);
	EXPECT_EQ(sq().slot<xiw_sqe>(0).wr_id, 2U);
}

TEST_F(DataPath, PostSendRefusesAQpNotReadyToSend)
{
	for (const ibv_qp_state state :
	     {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR}) {
		xiw_test::set_qp_state(fake_qp(qp_), state);
		std::array<ibv_send_wr, 2> wrs{send_wr(1), send_wr(2)};
		ibv_send_wr *bad = nullptr;

		EXPECT_EQ(ibv_post_send(qp_, chain(wrs), &bad), EINVAL)
			<< state;
		EXPECT_EQ(bad, wrs.data()) << state;
	}
	EXPECT_EQ(sq().flags<xiw_sqe>(0), 0U);
	EXPECT_TRUE(kernel.doorbells.empty());

	std::uint32_t index = 0;
	for (const ibv_qp_state state :
	     {IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR}) {
		xiw_test::set_qp_state(fake_qp(qp_), state);
		EXPECT_EQ(post_one(send_wr(index)), 0) << state;
		EXPECT_EQ(sq().flags<xiw_sqe>(index++), XIW_SLOT_VALID)
			<< state;
	}
}

TEST_F(DataPath, PostSendRingsTheDoorbellOnlyWhenTheSqIsIdle)
{
	set_sq_busy(sq(), 1);
	ASSERT_EQ(post_one(send_wr(1)), 0);
	EXPECT_TRUE(kernel.doorbells.empty());

	set_sq_busy(sq(), 0);
	std::array<ibv_send_wr, 3> wrs{send_wr(2), send_wr(3), send_wr(4)};
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(qp_, chain(wrs), &bad), 0);

	ASSERT_EQ(kernel.doorbells.size(), 1U) << "one doorbell per call";
	const xiw_test::Doorbell &db = kernel.doorbells[0];
	EXPECT_EQ(db.command, IB_USER_VERBS_CMD_POST_SEND);
	EXPECT_EQ(db.bytes, sizeof(struct ibv_post_send));
	EXPECT_EQ(db.in_words * 4U, sizeof(struct ibv_post_send));
	EXPECT_EQ(db.out_words * 4U, sizeof(ib_uverbs_post_send_resp));
	EXPECT_EQ(db.qp_handle, qp_->handle);
	EXPECT_EQ(db.wr_count, 0U);
	EXPECT_EQ(db.sge_count, 0U);
	EXPECT_EQ(db.wqe_size, sizeof(ib_uverbs_send_wr));

	ASSERT_EQ(post_one(send_wr(5)), 0);
	EXPECT_EQ(kernel.doorbells.size(), 2U);
	/* Nothing else went to the kernel. */
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_POST_SEND), 2U);
}

TEST_F(DataPath, PostSendReportsAFailedDoorbell)
{
	kernel.doorbell_errno = EBADF;
	std::array<ibv_send_wr, 2> wrs{send_wr(1), send_wr(2)};
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(ibv_post_send(qp_, chain(wrs), &bad), EBADF);
	EXPECT_EQ(bad, wrs.data());
	/* Posted all the same: the next doorbell will tell the kernel. */
	EXPECT_EQ(sq().flags<xiw_sqe>(0), XIW_SLOT_VALID);
	EXPECT_EQ(sq().flags<xiw_sqe>(1), XIW_SLOT_VALID);
}

TEST_F(DataPath, PostSendWrapsAroundTheSq)
{
	const std::uint32_t num = sq().num();
	set_sq_busy(sq(), 1);

	for (std::uint32_t i = 0; i < num * 5; ++i) {
		ASSERT_EQ(post_one(send_wr(1000 + i)), 0) << i;
		ASSERT_EQ(sq().flags<xiw_sqe>(i), XIW_SLOT_VALID);
		ASSERT_EQ(sq().slot<xiw_sqe>(i).wr_id, 1000U + i);
		sq().consume<xiw_sqe>(i);
	}
}

TEST_F(DataPath, PostSendFromSeveralThreads)
{
	constexpr std::uint32_t kThreads = 4;
	constexpr std::uint32_t kEach = 256;
	ibv_qp_init_attr attr = rc_attr(cq_);
	attr.cap.max_send_wr = kThreads * kEach;
	other_qp_ = make_qp(attr);
	ASSERT_NE(other_qp_, nullptr) << std::strerror(errno);
	FakeRing &ring = *fake_qp(other_qp_).sq;
	ASSERT_EQ(ring.num(), kThreads * kEach);
	xiw_test::set_qp_state(fake_qp(other_qp_), IBV_QPS_RTS);
	set_sq_busy(ring, 1); /* the fake kernel is not thread-safe */
	std::atomic<int> failures{0};

	std::vector<std::thread> threads;
	for (std::uint32_t t = 0; t < kThreads; ++t) {
		threads.emplace_back([&, t] {
			for (std::uint32_t i = 0; i < kEach; ++i) {
				ibv_send_wr wr = send_wr(t * kEach + i);
				ibv_send_wr *bad = nullptr;
				if (ibv_post_send(other_qp_, &wr, &bad) != 0) {
					failures.fetch_add(1);
				}
			}
		});
	}
	for (std::thread &thread : threads) {
		thread.join();
	}
	EXPECT_EQ(failures.load(), 0);
	std::vector<std::uint64_t> ids;
	for (std::uint32_t i = 0; i < ring.num(); ++i) {
		EXPECT_EQ(ring.flags<xiw_sqe>(i), XIW_SLOT_VALID) << i;
		ids.push_back(ring.slot<xiw_sqe>(i).wr_id);
	}
	std::sort(ids.begin(), ids.end());
	for (std::uint32_t i = 0; i < ids.size(); ++i) {
		ASSERT_EQ(ids[i], i) << "a request was lost or posted twice";
	}
}

/* ---- post_recv ------------------------------------------------------- */

TEST_F(DataPath, PostRecvWritesTheRqeWithoutEnteringTheKernel)
{
	std::array<ibv_sge, 2> sges{{{0x3000, 64, 7}, {0x4000, 32, 8}}};
	ibv_recv_wr wr{};
	wr.wr_id = 0x777;
	wr.sg_list = sges.data();
	wr.num_sge = 2;
	const std::size_t commands = kernel.seen.size();

	for (const ibv_qp_state state :
	     {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
		xiw_test::set_qp_state(fake_qp(qp_), state);
		ibv_recv_wr *bad = nullptr;
		ASSERT_EQ(ibv_post_recv(qp_, &wr, &bad), 0) << state;
	}
	EXPECT_EQ(kernel.seen.size(), commands);

	xiw_rqe expected{};
	expected.flags = XIW_SLOT_VALID;
	expected.num_sge = 2;
	expected.wr_id = 0x777;
	expected.sge[0] = {0x3000, 64, 7};
	expected.sge[1] = {0x4000, 32, 8};
	for (std::uint32_t i = 0; i < 3; ++i) {
		EXPECT_EQ(std::memcmp(&rq().slot<xiw_rqe>(i), &expected,
				      sizeof(expected)),
			  0)
			<< i;
	}
}

TEST_F(DataPath, PostRecvRefusesResetTooManySgesAndAFullRq)
{
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;

	xiw_test::set_qp_state(fake_qp(qp_), IBV_QPS_RESET);
	EXPECT_EQ(ibv_post_recv(qp_, &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);

	xiw_test::set_qp_state(fake_qp(qp_), IBV_QPS_INIT);
	std::array<ibv_sge, 3> sges{};
	ibv_recv_wr wide{};
	wide.sg_list = sges.data();
	wide.num_sge = 3; /* the QP has max_recv_sge 2 */
	bad = nullptr;
	EXPECT_EQ(ibv_post_recv(qp_, &wide, &bad), EINVAL);
	EXPECT_EQ(bad, &wide);
	EXPECT_EQ(rq().flags<xiw_rqe>(0), 0U);

	for (std::uint32_t i = 0; i < rq().num(); ++i) {
		ASSERT_EQ(ibv_post_recv(qp_, &wr, &bad), 0) << i;
	}
	bad = nullptr;
	EXPECT_EQ(ibv_post_recv(qp_, &wr, &bad), ENOMEM);
	EXPECT_EQ(bad, &wr);
	/* A request refused either way is refused for what it is. */
	EXPECT_EQ(ibv_post_recv(qp_, &wide, &bad), EINVAL);
	EXPECT_EQ(bad, &wide);
}

TEST_F(DataPath, PostRecvInTheErrorStateRingsTheReceiveDoorbell)
{
	xiw_test::set_qp_state(fake_qp(qp_), IBV_QPS_ERR);
	std::array<ibv_recv_wr, 2> wrs{};
	ibv_recv_wr *bad = nullptr;

	ASSERT_EQ(ibv_post_recv(qp_, chain(wrs), &bad), 0);
	ASSERT_EQ(kernel.doorbells.size(), 1U);
	const xiw_test::Doorbell &db = kernel.doorbells[0];
	EXPECT_EQ(db.command, IB_USER_VERBS_CMD_POST_RECV);
	EXPECT_EQ(db.bytes, sizeof(struct ibv_post_recv));
	EXPECT_EQ(db.in_words * 4U, sizeof(struct ibv_post_recv));
	EXPECT_EQ(db.out_words * 4U, sizeof(ib_uverbs_post_recv_resp));
	EXPECT_EQ(db.qp_handle, qp_->handle);
	EXPECT_EQ(db.wr_count, 0U);
	EXPECT_EQ(db.sge_count, 0U);
	EXPECT_EQ(db.wqe_size, sizeof(ib_uverbs_recv_wr));
	EXPECT_EQ(rq().flags<xiw_rqe>(1), XIW_SLOT_VALID);

	kernel.doorbell_errno = EIO;
	bad = nullptr;
	EXPECT_EQ(ibv_post_recv(qp_, chain(wrs), &bad), EIO);
	EXPECT_EQ(bad, wrs.data());
	EXPECT_EQ(rq().flags<xiw_rqe>(3), XIW_SLOT_VALID);
}

TEST_F(DataPath, PostRecvOnAQpWithAnSrqIsRefused)
{
	ibv_srq_init_attr srq_attr{};
	srq_attr.attr.max_wr = 4;
	srq_attr.attr.max_sge = 1;
	srq_ = ibv_create_srq(pd_, &srq_attr);
	ASSERT_NE(srq_, nullptr) << std::strerror(errno);
	other_qp_ = make_qp(rc_attr(cq_, srq_));
	ASSERT_NE(other_qp_, nullptr) << std::strerror(errno);
	xiw_test::set_qp_state(fake_qp(other_qp_), IBV_QPS_RTS);
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;

	EXPECT_EQ(ibv_post_recv(other_qp_, &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);
}

/* ---- post_srq_recv --------------------------------------------------- */

TEST_F(DataPath, PostSrqRecvWritesRqesAndNeverRings)
{
	ibv_srq_init_attr srq_attr{};
	srq_attr.attr.max_wr = 4;
	srq_attr.attr.max_sge = 2;
	srq_ = ibv_create_srq(pd_, &srq_attr);
	ASSERT_NE(srq_, nullptr) << std::strerror(errno);
	FakeRing &ring = *kernel.srqs.at(srq_->handle).ring;
	const std::size_t commands = kernel.seen.size();

	std::array<ibv_sge, 3> sges{{{0x5000, 16, 1}, {0x6000, 32, 2}, {}}};
	std::array<ibv_recv_wr, 4> wrs{};
	std::uint64_t wr_id = 50;
	for (ibv_recv_wr &wr : wrs) {
		wr.wr_id = wr_id++;
		wr.sg_list = sges.data();
		wr.num_sge = 2;
	}
	ibv_recv_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_srq_recv(srq_, chain(wrs), &bad), 0);

	xiw_rqe expected{};
	expected.flags = XIW_SLOT_VALID;
	expected.num_sge = 2;
	expected.wr_id = 53;
	expected.sge[0] = {0x5000, 16, 1};
	expected.sge[1] = {0x6000, 32, 2};
	EXPECT_EQ(std::memcmp(&ring.slot<xiw_rqe>(3), &expected,
			      sizeof(expected)),
		  0);

	ibv_recv_wr more{};
	EXPECT_EQ(ibv_post_srq_recv(srq_, &more, &bad), ENOMEM);
	EXPECT_EQ(bad, &more);
	ring.consume<xiw_rqe>(0);
	more.num_sge = 3;
	more.sg_list = sges.data();
	EXPECT_EQ(ibv_post_srq_recv(srq_, &more, &bad), EINVAL);
	EXPECT_EQ(bad, &more);
	more.num_sge = 1;
	EXPECT_EQ(ibv_post_srq_recv(srq_, &more, &bad), 0);
	EXPECT_EQ(kernel.seen.size(), commands)
		<< "an SRQ post entered the kernel";
}

/* ---- poll_cq and req_notify_cq --------------------------------------- */

TEST_F(DataPath, PollTranslatesEveryFieldAndFlag)
{
	xiw_cqe cqe{};
	cqe.flags = XIW_CQE_WITH_IMM;
	cqe.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	cqe.status = IBV_WC_SUCCESS;
	cqe.wr_id = 0x1234567890ULL;
	cqe.qp_num = qp_->qp_num;
	cqe.byte_len = 1500;
	cqe.ex = 0xa1b2c3d4;
	cqe.vendor_err = 0;
	kernel_completes(0, cqe);
	cqe.flags = XIW_CQE_WITH_INV | XIW_CQE_SOLICITED;
	cqe.opcode = IBV_WC_RECV;
	cqe.status = IBV_WC_LOC_PROT_ERR;
	cqe.vendor_err = 0x99;
	kernel_completes(1, cqe);
	const std::size_t commands = kernel.seen.size();

	std::array<ibv_wc, 4> wc{};
	std::memset(wc.data(), 0xff, sizeof(wc));
	ASSERT_EQ(ibv_poll_cq(cq_, 4, wc.data()), 2);

	EXPECT_EQ(wc[0].wr_id, 0x1234567890ULL);
	EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(wc[0].qp_num, qp_->qp_num);
	EXPECT_EQ(wc[0].byte_len, 1500U);
	EXPECT_EQ(wc[0].wc_flags, unsigned{IBV_WC_WITH_IMM});
	EXPECT_EQ(wc[0].imm_data, 0xa1b2c3d4U);
	EXPECT_EQ(wc[0].vendor_err, 0U);
	EXPECT_EQ(wc[0].src_qp, 0U);
	EXPECT_EQ(wc[0].pkey_index, 0);
	EXPECT_EQ(wc[0].slid, 0);
	EXPECT_EQ(wc[0].sl, 0);
	EXPECT_EQ(wc[0].dlid_path_bits, 0);

	EXPECT_EQ(wc[1].status, IBV_WC_LOC_PROT_ERR);
	EXPECT_EQ(wc[1].opcode, IBV_WC_RECV);
	EXPECT_EQ(wc[1].wc_flags, unsigned{IBV_WC_WITH_INV});
	EXPECT_EQ(wc[1].invalidated_rkey, 0xa1b2c3d4U);
	EXPECT_EQ(wc[1].vendor_err, 0x99U);

	/* Handed back to the kernel; the rest of wc untouched. */
	EXPECT_EQ(cq_ring().flags<xiw_cqe>(0), 0U);
	EXPECT_EQ(cq_ring().flags<xiw_cqe>(1), 0U);
	EXPECT_EQ(wc[2].wr_id, ~std::uint64_t{0});
	EXPECT_EQ(kernel.seen.size(), commands) << "polling entered the kernel";
}

/* The extended CQ's readers give what ibv_poll_cq() gives, entry by entry. */
TEST_F(DataPath, ExtendedPollReadsWhatPollCqWould)
{
	for (const std::uint32_t flags :
	     {0U, std::uint32_t{IBV_CREATE_CQ_ATTR_SINGLE_THREADED}}) {
		ibv_cq_init_attr_ex attr{};
		attr.cqe = 8;
		attr.wc_flags = IBV_WC_STANDARD_FLAGS;
		attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		attr.flags = flags;
		ibv_cq_ex *cq = ibv_create_cq_ex(ctx_, &attr);
		ASSERT_NE(cq, nullptr) << std::strerror(errno);
		FakeRing &ring = *kernel.cqs.at(ibv_cq_ex_to_cq(cq)->handle).ring;
		const std::size_t commands = kernel.seen.size();
		ibv_poll_cq_attr poll{};

		EXPECT_EQ(ibv_start_poll(cq, &poll), ENOENT);
		/* No poll attribute is known: any is refused, no lock kept. */
		poll.comp_mask = 1;
		EXPECT_EQ(ibv_start_poll(cq, &poll), EINVAL);
		poll.comp_mask = 0;
		xiw_cqe cqe{};
		cqe.flags = XIW_CQE_WITH_IMM;
		cqe.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		cqe.wr_id = 0x1234567890ULL;
		cqe.qp_num = 77;
		cqe.byte_len = 1500;
		cqe.ex = 0xa1b2c3d4;
		kernel_completes(ring, 0, cqe);
		cqe.flags = XIW_CQE_WITH_INV;
		cqe.opcode = IBV_WC_RECV;
		cqe.status = IBV_WC_LOC_PROT_ERR;
		cqe.wr_id = 9;
		cqe.vendor_err = 0x99;
		kernel_completes(ring, 1, cqe);

		ASSERT_EQ(ibv_start_poll(cq, &poll), 0);
		EXPECT_EQ(cq->wr_id, 0x1234567890ULL);
		EXPECT_EQ(cq->status, IBV_WC_SUCCESS);
		EXPECT_EQ(ibv_wc_read_opcode(cq), IBV_WC_RECV_RDMA_WITH_IMM);
		EXPECT_EQ(ibv_wc_read_qp_num(cq), 77U);
		EXPECT_EQ(ibv_wc_read_byte_len(cq), 1500U);
		EXPECT_EQ(ibv_wc_read_wc_flags(cq), unsigned{IBV_WC_WITH_IMM});
		EXPECT_EQ(ibv_wc_read_imm_data(cq), 0xa1b2c3d4U);
		EXPECT_EQ(ibv_wc_read_vendor_err(cq), 0U);
		EXPECT_EQ(ibv_wc_read_src_qp(cq), 0U);
		EXPECT_EQ(ibv_wc_read_slid(cq), 0U);
		EXPECT_EQ(ibv_wc_read_sl(cq), 0);
		EXPECT_EQ(ibv_wc_read_dlid_path_bits(cq), 0);
		/* Each slot goes back to the kernel as it is taken. */
		EXPECT_EQ(ring.flags<xiw_cqe>(0), 0U);
		EXPECT_NE(ring.flags<xiw_cqe>(1) & XIW_SLOT_VALID, 0U);

		ASSERT_EQ(ibv_next_poll(cq), 0);
		EXPECT_EQ(cq->wr_id, 9U);
		EXPECT_EQ(cq->status, IBV_WC_LOC_PROT_ERR);
		EXPECT_EQ(ibv_wc_read_opcode(cq), IBV_WC_RECV);
		EXPECT_EQ(ibv_wc_read_wc_flags(cq), unsigned{IBV_WC_WITH_INV});
		/* The STag in host order, as ibv_wc's invalidated_rkey. */
		EXPECT_EQ(ibv_wc_read_invalidated_rkey(cq), 0xa1b2c3d4U);
		EXPECT_EQ(ibv_wc_read_vendor_err(cq), 0x99U);
		EXPECT_EQ(ibv_next_poll(cq), ENOENT);
		ibv_end_poll(cq);

		/* The poll lock was given back: ibv_poll_cq() takes it. */
		std::array<ibv_wc, 2> wc{};
		EXPECT_EQ(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 2, wc.data()), 0);
		EXPECT_EQ(kernel.seen.size(), commands)
			<< "polling entered the kernel";
		EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	}
}

TEST_F(DataPath, PollTakesNoMoreThanAskedAndNothingFromAnEmptyCq)
{
	std::array<ibv_wc, 8> wc{};
	EXPECT_EQ(ibv_poll_cq(cq_, 8, wc.data()), 0);

	for (std::uint32_t i = 0; i < 5; ++i) {
		xiw_cqe cqe{};
		cqe.wr_id = i;
		kernel_completes(i, cqe);
	}
	EXPECT_EQ(ibv_poll_cq(cq_, 0, wc.data()), 0);
	ASSERT_EQ(ibv_poll_cq(cq_, 2, wc.data()), 2);
	EXPECT_EQ(wc[0].wr_id, 0U);
	EXPECT_EQ(wc[1].wr_id, 1U);
	EXPECT_EQ(cq_ring().flags<xiw_cqe>(2), XIW_SLOT_VALID);
	ASSERT_EQ(ibv_poll_cq(cq_, 8, wc.data()), 3);
	EXPECT_EQ(wc[0].wr_id, 2U);
	EXPECT_EQ(wc[2].wr_id, 4U);
	EXPECT_EQ(ibv_poll_cq(cq_, 8, wc.data()), 0);
}

TEST_F(DataPath, PollWrapsAroundTheCq)
{
	const std::uint32_t num = cq_ring().num();
	std::uint32_t produced = 0;
	std::uint32_t polled = 0;

	while (polled < num * 4) {
		for (std::uint32_t i = 0; i < 7; ++i) {
			xiw_cqe cqe{};
			cqe.wr_id = produced;
			kernel_completes(produced++, cqe);
		}
		std::array<ibv_wc, 7> wc{};
		ASSERT_EQ(ibv_poll_cq(cq_, 7, wc.data()), 7);
		for (const ibv_wc &one : wc) {
			ASSERT_EQ(one.wr_id, polled++);
		}
	}
}

TEST_F(DataPath, PollFromSeveralThreads)
{
	constexpr std::uint32_t kPollers = 3;
	constexpr std::uint64_t kCount = 200000;
	const xiw_test::Deadline deadline;
	FakeRing &ring = cq_ring();
	xiw::RingProducer<xiw_cqe> kernel_side(ring.slots<xiw_cqe>(),
					       ring.num());
	std::vector<std::atomic<std::uint8_t>> seen(kCount);
	std::atomic<std::uint64_t> polled{0};
	std::atomic<int> disorder{0};

	auto poller = [&] {
		std::uint64_t last = 0;
		bool first = true;
		while (polled.load(std::memory_order_relaxed) < kCount &&
		       !deadline.passed()) {
			std::array<ibv_wc, 4> wc{};
			const int n = ibv_poll_cq(cq_, 4, wc.data());
			if (n <= 0) {
				std::this_thread::yield();
				continue;
			}
			for (const ibv_wc &one :
			     std::span(wc).first(static_cast<std::size_t>(n))) {
				const std::uint64_t id = one.wr_id;
				if (id >= kCount || (!first && id <= last)) {
					disorder.fetch_add(1);
				} else {
					seen[id].fetch_add(1);
				}
				first = false;
				last = id;
			}
			polled.fetch_add(static_cast<std::uint64_t>(n));
		}
	};
	std::vector<std::thread> pollers;
	for (std::uint32_t i = 0; i < kPollers; ++i) {
		pollers.emplace_back(poller);
	}
	for (std::uint64_t id = 0; id < kCount && !deadline.passed();) {
		xiw_cqe cqe{};
		cqe.wr_id = id;
		if (kernel_side.push(cqe, 0)) {
			++id;
		} else {
			std::this_thread::yield();
		}
	}
	for (std::thread &thread : pollers) {
		thread.join();
	}
	EXPECT_EQ(disorder.load(), 0);
	EXPECT_EQ(polled.load(), kCount);
	EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](const auto &n) {
		return n.load() == 1;
	})) << "a completion was lost or delivered twice";
}

TEST_F(DataPath, ReqNotifyArmsTheCqInTheRing)
{
	const std::size_t commands = kernel.seen.size();
	std::uint32_t &notify = cq_ring().ctrl().cq_notify;

	EXPECT_EQ(ibv_req_notify_cq(cq_, 0), 0);
	EXPECT_EQ(xiw::shared_word(notify).load(), XIW_CQ_NOTIFY_NEXT);
	EXPECT_EQ(ibv_req_notify_cq(cq_, 1), 0);
	EXPECT_EQ(xiw::shared_word(notify).load(), XIW_CQ_NOTIFY_SOLICITED);
	xiw::shared_word(notify).store(0); /* the kernel raised the event */
	EXPECT_EQ(ibv_req_notify_cq(cq_, 0), 0);
	EXPECT_EQ(xiw::shared_word(notify).load(), XIW_CQ_NOTIFY_NEXT);
	EXPECT_EQ(kernel.seen.size(), commands) << "arming entered the kernel";
}

} // namespace
