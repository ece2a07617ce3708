// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Extended QPs: ibv_create_qp_ex() and the ibv_wr_*() batch, through
 * libibverbs' inline entry points against the fake kernel (fake_kernel.h),
 * which looks at the SQ ring from the kernel's side: nothing of a batch is
 * visible before ibv_wr_complete(), all of it after, nothing after an
 * error or ibv_wr_abort().
 */
#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <thread>
#include <vector>

#include <arpa/inet.h>

#include <gtest/gtest.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "fake_kernel.h"
#include "ring.h"
#include "xiw.h"

namespace {

using xiw_test::FakeRing;
using xiw_test::kernel;

class QpEx : public xiw_test::FakeContext {
protected:
	void SetUp() override
	{
		FakeContext::SetUp();
		if (HasFatalFailure()) {
			return;
		}
		cq_ = ibv_create_cq(ctx_, 64, nullptr, nullptr, 0);
		ASSERT_NE(cq_, nullptr) << std::strerror(errno);
	}

	void TearDown() override
	{
		for (ibv_qp *qp : qps_) {
			EXPECT_EQ(ibv_destroy_qp(qp), 0);
		}
		if (cq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_cq(cq_), 0);
		}
		FakeContext::TearDown();
	}

	/* Extended attributes for an RC QP that asks for every xiw opcode. */
	[[nodiscard]] ibv_qp_init_attr_ex ex_attr() const
	{
		const ibv_qp_init_attr base = rc_attr(cq_);
		ibv_qp_init_attr_ex attr{};

		attr.send_cq = base.send_cq;
		attr.recv_cq = base.recv_cq;
		attr.cap = base.cap;
		attr.qp_type = IBV_QPT_RC;
		attr.comp_mask = IBV_QP_INIT_ATTR_PD |
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.pd = pd_;
		attr.send_ops_flags = xiw::kSendOpsFlags;
		return attr;
	}

	/* Creates a QP (kept for TearDown), null with errno set. */
	ibv_qp *create(ibv_qp_init_attr_ex attr)
	{
		ibv_qp *qp = ibv_create_qp_ex(ctx_, &attr);

		if (qp != nullptr) {
			qps_.push_back(qp);
		}
		return qp;
	}

	/* An extended QP in RTS, for the batch tests. */
	ibv_qp_ex *ready_qpx(ibv_qp_init_attr_ex attr)
	{
		ibv_qp *qp = create(attr);

		if (qp == nullptr) {
			ADD_FAILURE() << std::strerror(errno);
			return nullptr;
		}
		xiw_test::set_qp_state(kernel.qps.at(qp->handle), IBV_QPS_RTS);
		return ibv_qp_to_qp_ex(qp);
	}

	static FakeRing &sq_of(ibv_qp_ex *qpx)
	{
		return *kernel.qps.at(qpx->qp_base.handle).sq;
	}

	/* How many slots of the SQ the kernel would take right now. */
	static std::uint32_t valid_slots(ibv_qp_ex *qpx)
	{
		FakeRing &sq = sq_of(qpx);
		std::uint32_t valid = 0;

		for (std::uint32_t i = 0; i < sq.num(); ++i) {
			if ((sq.flags<xiw_sqe>(i) & XIW_SLOT_VALID) != 0) {
				++valid;
			}
		}
		return valid;
	}

	/* One signaled Send of an SGE, built in the current batch. */
	static void add_send(ibv_qp_ex *qpx, std::uint64_t wr_id)
	{
		qpx->wr_id = wr_id;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 0x11, 0x10000 + wr_id, 16);
	}

	ibv_cq *cq_ = nullptr;
	std::vector<ibv_qp *> qps_;
};

/* ---- ibv_create_qp_ex() ---------------------------------------------- */

TEST_F(QpEx, CreatesAnExtendedQpWithEveryWrEntryPoint)
{
	ibv_qp_init_attr_ex attr = ex_attr();
	attr.cap.max_send_sge = 1;
	ibv_qp *qp = ibv_create_qp_ex(ctx_, &attr);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);
	qps_.push_back(qp);

	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	ASSERT_NE(qpx, nullptr) << "libibverbs does not see an extended QP";
	EXPECT_EQ(qpx, &xiw::Qp::from(qp)->qpx());
	EXPECT_EQ(&qpx->qp_base, qp);
	EXPECT_EQ(qp->state, IBV_QPS_RESET);
	EXPECT_EQ(qp->pd, pd_);
	EXPECT_EQ(qp->send_cq, cq_);
	EXPECT_EQ(attr.cap.max_send_sge, 1U) << "cap is what was granted";
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_CREATE_QP), 1U);
	ASSERT_EQ(kernel.qps.size(), 1U);
	EXPECT_EQ(kernel.qps.begin()->second.pd_handle, pd_->handle);

	/* Even what xiw refuses has an entry point: none may be null. */
	for (const void *op : {
		     reinterpret_cast<const void *>(qpx->wr_send),
		     reinterpret_cast<const void *>(qpx->wr_send_imm),
		     reinterpret_cast<const void *>(qpx->wr_send_inv),
		     reinterpret_cast<const void *>(qpx->wr_send_tso),
		     reinterpret_cast<const void *>(qpx->wr_rdma_write),
		     reinterpret_cast<const void *>(qpx->wr_rdma_write_imm),
		     reinterpret_cast<const void *>(qpx->wr_rdma_read),
		     reinterpret_cast<const void *>(qpx->wr_atomic_cmp_swp),
		     reinterpret_cast<const void *>(qpx->wr_atomic_fetch_add),
		     reinterpret_cast<const void *>(qpx->wr_atomic_write),
		     reinterpret_cast<const void *>(qpx->wr_bind_mw),
		     reinterpret_cast<const void *>(qpx->wr_local_inv),
		     reinterpret_cast<const void *>(qpx->wr_set_ud_addr),
		     reinterpret_cast<const void *>(qpx->wr_set_xrc_srqn),
		     reinterpret_cast<const void *>(qpx->wr_set_sge),
		     reinterpret_cast<const void *>(qpx->wr_set_sge_list),
		     reinterpret_cast<const void *>(qpx->wr_set_inline_data),
		     reinterpret_cast<const void *>(
			     qpx->wr_set_inline_data_list),
		     reinterpret_cast<const void *>(qpx->wr_start),
		     reinterpret_cast<const void *>(qpx->wr_complete),
		     reinterpret_cast<const void *>(qpx->wr_abort)}) {
		EXPECT_NE(op, nullptr);
	}
}

TEST_F(QpEx, AQpWithoutSendOpsIsAPlainOne)
{
	/* PD alone: libibverbs takes ibv_create_qp()'s way. */
	ibv_qp_init_attr_ex attr = ex_attr();
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	ibv_qp *plain = create(attr);
	ASSERT_NE(plain, nullptr) << std::strerror(errno);
	EXPECT_EQ(ibv_qp_to_qp_ex(plain), nullptr);

	/* Create flags, none set: through xiw's create_qp_ex, still plain. */
	attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	attr.create_flags = 0;
	ibv_qp *flagged = create(attr);
	ASSERT_NE(flagged, nullptr) << std::strerror(errno);
	EXPECT_EQ(ibv_qp_to_qp_ex(flagged), nullptr);
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_CREATE_QP), 2U);
}

TEST_F(QpEx, RefusesWhatXiwCannotServe)
{
	struct Case {
		const char *what;
		void (*edit)(ibv_qp_init_attr_ex &attr);
		int err;
	};
	const std::array cases{
		Case{"Send with Immediate",
		     [](ibv_qp_init_attr_ex &a) {
			     a.send_ops_flags |= IBV_QP_EX_WITH_SEND_WITH_IMM;
		     },
		     EOPNOTSUPP},
		Case{"TSO",
		     [](ibv_qp_init_attr_ex &a) {
			     a.send_ops_flags = IBV_QP_EX_WITH_TSO;
		     },
		     EOPNOTSUPP},
		Case{"a create flag",
		     [](ibv_qp_init_attr_ex &a) {
			     a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
			     a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
		     },
		     EOPNOTSUPP},
		Case{"an XRC domain",
		     [](ibv_qp_init_attr_ex &a) {
			     a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
		     },
		     EOPNOTSUPP},
		Case{"a TSO header",
		     [](ibv_qp_init_attr_ex &a) {
			     a.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
			     a.max_tso_header = 64;
		     },
		     EOPNOTSUPP},
		Case{"a UD QP",
		     [](ibv_qp_init_attr_ex &a) { a.qp_type = IBV_QPT_UD; },
		     EOPNOTSUPP},
		/* What xiw lacks comes first: pyverbs skips on EOPNOTSUPP. */
		Case{"an XRC receive QP, with no PD and no CQ",
		     [](ibv_qp_init_attr_ex &a) {
			     a.qp_type = IBV_QPT_XRC_RECV;
			     a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
			     a.send_cq = nullptr;
			     a.recv_cq = nullptr;
		     },
		     EOPNOTSUPP},
		Case{"no PD",
		     [](ibv_qp_init_attr_ex &a) {
			     a.comp_mask &= ~IBV_QP_INIT_ATTR_PD;
		     },
		     EINVAL},
		Case{"a null PD",
		     [](ibv_qp_init_attr_ex &a) { a.pd = nullptr; },
		     EINVAL},
		Case{"no send CQ",
		     [](ibv_qp_init_attr_ex &a) { a.send_cq = nullptr; },
		     EINVAL},
		Case{"too many SGEs",
		     [](ibv_qp_init_attr_ex &a) {
			     a.cap.max_send_sge = XIW_MAX_SGE + 1;
		     },
		     EINVAL},
	};
	for (const Case &c : cases) {
		ibv_qp_init_attr_ex attr = ex_attr();
		c.edit(attr);
		errno = 0;
		EXPECT_EQ(create(attr), nullptr) << c.what;
		EXPECT_EQ(errno, c.err) << c.what;
	}
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_CREATE_QP), 0U);
}

TEST_F(QpEx, LibibverbsFindsTheExtendedQpAndOnlyThat)
{
	ibv_qp *ex = create(ex_attr());
	ASSERT_NE(ex, nullptr) << std::strerror(errno);
	ibv_qp_init_attr_ex attr = ex_attr();
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	ibv_qp *plain = create(attr);
	ASSERT_NE(plain, nullptr) << std::strerror(errno);

	/* The check create makes: comp_mask where this libibverbs reads it. */
	EXPECT_TRUE(xiw::libibverbs_finds_qp_ex(*xiw::Qp::from(ex)));
	EXPECT_FALSE(xiw::libibverbs_finds_qp_ex(*xiw::Qp::from(plain)));
}

TEST_F(QpEx, UndoesAnExtendedQpWhoseRingsCannotBeMapped)
{
	kernel.mmap_errno = ENOMEM;
	errno = 0;
	EXPECT_EQ(create(ex_attr()), nullptr);
	EXPECT_EQ(errno, ENOMEM);
	EXPECT_TRUE(kernel.qps.empty());
	EXPECT_EQ(count_seen(IB_USER_VERBS_CMD_DESTROY_QP), 1U);
}

TEST_F(QpEx, ReportsAFailedCreation)
{
	kernel.create_errno = ENOSPC;
	errno = 0;
	EXPECT_EQ(create(ex_attr()), nullptr);
	EXPECT_EQ(errno, ENOSPC);
	EXPECT_TRUE(kernel.qps.empty());
}

/* ---- The batch ------------------------------------------------------- */

TEST_F(QpEx, ABatchReachesTheRingOnlyAtComplete)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	std::array<ibv_sge, 2> sges{{{0x20000, 200, 0x22}, {0x30000, 300, 0x33}}};
	std::array<char, 6> hello{"hello"};
	std::array<char, 4> more{"abc"};
	const std::array<ibv_data_buf, 2> bufs{
		{{hello.data(), 5}, {more.data(), 3}}};

	ibv_wr_start(qpx);
	add_send(qpx, 1);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_FENCE;
	ibv_wr_rdma_write(qpx, 0xbeef, 0x123456789000ULL);
	ibv_wr_set_sge_list(qpx, sges.size(), sges.data());
	qpx->wr_id = 3;
	qpx->wr_flags = 0;
	ibv_wr_rdma_read(qpx, 0xcafe, 0x5000);
	ibv_wr_set_sge(qpx, 0x44, 0x40000, 64);
	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SOLICITED;
	ibv_wr_send_inv(qpx, 0x4242);
	ibv_wr_set_sge(qpx, 0x55, 0x50000, 8);
	qpx->wr_id = 5;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(qpx, 0xf00d, 0x6000, htonl(0x01020304));
	ibv_wr_set_inline_data_list(qpx, bufs.size(), bufs.data());
	/* Copied by the setter: the buffer is free again at once. */
	hello[0] = 'j';
	qpx->wr_id = 6;
	qpx->wr_flags = 0;
	ibv_wr_atomic_cmp_swp(qpx, 0xa1, 0x7008, 11, 22);
	ibv_wr_set_sge(qpx, 0x66, 0x60000, 8);
	qpx->wr_id = 7;
	ibv_wr_atomic_fetch_add(qpx, 0xa2, 0x8010, 33);
	ibv_wr_set_sge(qpx, 0x77, 0x70000, 8);

	EXPECT_EQ(valid_slots(qpx), 0U) << "the kernel saw part of a batch";
	EXPECT_TRUE(kernel.doorbells.empty());
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(valid_slots(qpx), 7U);
	ASSERT_EQ(kernel.doorbells.size(), 1U) << "one doorbell per batch";
	EXPECT_EQ(kernel.doorbells[0].qp_handle, qpx->qp_base.handle);

	FakeRing &sq = sq_of(qpx);
	const xiw_sqe &send = sq.slot<xiw_sqe>(0);
	EXPECT_EQ(send.flags, XIW_SLOT_VALID | XIW_WQE_SIGNALED);
	EXPECT_EQ(send.opcode, IB_UVERBS_WR_SEND);
	EXPECT_EQ(send.wr_id, 1U);
	EXPECT_EQ(send.num_sge, 1);
	EXPECT_EQ(send.sge[0].addr, 0x10001U);
	EXPECT_EQ(send.sge[0].length, 16U);
	EXPECT_EQ(send.sge[0].lkey, 0x11U);

	const xiw_sqe &write = sq.slot<xiw_sqe>(1);
	EXPECT_EQ(write.flags, XIW_SLOT_VALID | XIW_WQE_FENCE);
	EXPECT_EQ(write.opcode, IB_UVERBS_WR_RDMA_WRITE);
	EXPECT_EQ(write.rkey, 0xbeefU);
	EXPECT_EQ(write.raddr, 0x123456789000ULL);
	EXPECT_EQ(write.num_sge, 2);
	EXPECT_EQ(write.sge[1].addr, 0x30000U);
	EXPECT_EQ(write.sge[1].lkey, 0x33U);

	const xiw_sqe &read = sq.slot<xiw_sqe>(2);
	EXPECT_EQ(read.flags, XIW_SLOT_VALID);
	EXPECT_EQ(read.opcode, IB_UVERBS_WR_RDMA_READ);
	EXPECT_EQ(read.wr_id, 3U);
	EXPECT_EQ(read.rkey, 0xcafeU);
	EXPECT_EQ(read.raddr, 0x5000U);
	EXPECT_EQ(read.sge[0].length, 64U);

	const xiw_sqe &inv = sq.slot<xiw_sqe>(3);
	EXPECT_EQ(inv.flags, XIW_SLOT_VALID | XIW_WQE_SOLICITED);
	EXPECT_EQ(inv.opcode, IB_UVERBS_WR_SEND_WITH_INV);
	EXPECT_EQ(inv.ex, 0x4242U);
	EXPECT_EQ(inv.rkey, 0U);

	const xiw_sqe &imm = sq.slot<xiw_sqe>(4);
	EXPECT_EQ(imm.flags,
		  XIW_SLOT_VALID | XIW_WQE_SIGNALED | XIW_WQE_INLINE);
	EXPECT_EQ(imm.opcode, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(imm.ex, htonl(0x01020304));
	EXPECT_EQ(imm.rkey, 0xf00dU);
	EXPECT_EQ(imm.num_sge, 0);
	EXPECT_EQ(imm.inline_len, 8);
	EXPECT_EQ(std::string_view(reinterpret_cast<const char *>(&imm.sge[0]),
				   8),
		  "helloabc");

	const xiw_sqe &cas = sq.slot<xiw_sqe>(5);
	EXPECT_EQ(cas.flags, XIW_SLOT_VALID);
	EXPECT_EQ(cas.opcode, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
	EXPECT_EQ(cas.wr_id, 6U);
	EXPECT_EQ(cas.rkey, 0xa1U);
	EXPECT_EQ(cas.raddr, 0x7008U);
	EXPECT_EQ(cas.compare_add, 11U);
	EXPECT_EQ(cas.swap, 22U);
	EXPECT_EQ(cas.num_sge, 1);
	EXPECT_EQ(cas.sge[0].lkey, 0x66U);

	const xiw_sqe &faa = sq.slot<xiw_sqe>(6);
	EXPECT_EQ(faa.opcode, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
	EXPECT_EQ(faa.rkey, 0xa2U);
	EXPECT_EQ(faa.raddr, 0x8010U);
	EXPECT_EQ(faa.compare_add, 33U);
	EXPECT_EQ(faa.swap, 0U);
	EXPECT_EQ(faa.sge[0].addr, 0x70000U);

	EXPECT_EQ(sq.flags<xiw_sqe>(7), 0U);
}

TEST_F(QpEx, TheLastSetterWinsAndSqSigAllSignalsAll)
{
	ibv_qp_init_attr_ex attr = ex_attr();
	attr.sq_sig_all = 1;
	ibv_qp_ex *qpx = ready_qpx(attr);
	ASSERT_NE(qpx, nullptr);
	std::array<char, 3> data{"hi"};

	ibv_wr_start(qpx);
	qpx->wr_id = 7;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, data.data(), 2);
	ibv_wr_set_sge(qpx, 0x9, 0x9000, 90);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);

	const xiw_sqe &sqe = sq_of(qpx).slot<xiw_sqe>(0);
	EXPECT_EQ(sqe.flags, XIW_SLOT_VALID | XIW_WQE_SIGNALED);
	EXPECT_EQ(sqe.inline_len, 0);
	EXPECT_EQ(sqe.num_sge, 1);
	EXPECT_EQ(sqe.sge[0].length, 90U);
}

TEST_F(QpEx, AbortPostsNothingAndFreesTheSlots)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);

	ibv_wr_start(qpx);
	add_send(qpx, 1);
	add_send(qpx, 2);
	add_send(qpx, 3);
	ibv_wr_abort(qpx);
	EXPECT_EQ(valid_slots(qpx), 0U);
	for (std::uint32_t i = 0; i < 3; ++i) {
		EXPECT_EQ(sq_of(qpx).flags<xiw_sqe>(i), 0U) << i;
	}
	EXPECT_TRUE(kernel.doorbells.empty());

	/* The lock was released, and the next batch starts at slot 0. */
	ibv_wr_start(qpx);
	add_send(qpx, 4);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(valid_slots(qpx), 1U);
	EXPECT_EQ(sq_of(qpx).slot<xiw_sqe>(0).wr_id, 4U);

	/* An empty batch posts nothing and rings nothing. */
	ibv_wr_start(qpx);
	EXPECT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(kernel.doorbells.size(), 1U);
}

TEST_F(QpEx, AnErrorAnywhereDropsTheWholeBatch)
{
	std::vector<char> big(XIW_MAX_INLINE + 1);
	std::array<ibv_sge, 3> three{};
	std::array<char, 4> data{"abc"};
	struct Case {
		const char *what;
		std::function<void(ibv_qp_ex *)> bad;
		int err;
	};
	const std::vector<Case> cases{
		{"a setter before any builder",
		 [](ibv_qp_ex *q) {
			 ibv_wr_abort(q);
			 ibv_wr_start(q);
			 ibv_wr_set_sge(q, 1, 2, 3);
		 },
		 EINVAL},
		{"more SGEs than the QP has",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_send(q);
			 ibv_wr_set_sge_list(q, three.size(), three.data());
		 },
		 EINVAL},
		{"an SGE list that is not there",
		 [](ibv_qp_ex *q) {
			 ibv_wr_send(q);
			 ibv_wr_set_sge_list(q, 1, nullptr);
		 },
		 EINVAL},
		{"inline data on a Read",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_rdma_read(q, 1, 2);
			 ibv_wr_set_inline_data(q, data.data(), 3);
		 },
		 EINVAL},
		{"inline data on a Send with Invalidate",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_send_inv(q, 5);
			 ibv_wr_set_inline_data(q, data.data(), 3);
		 },
		 EINVAL},
		{"more inline data than xiw takes",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_send(q);
			 ibv_wr_set_inline_data(q, big.data(), big.size());
		 },
		 EINVAL},
		{"an inline list that is not there",
		 [](ibv_qp_ex *q) {
			 ibv_wr_send(q);
			 ibv_wr_set_inline_data_list(q, 2, nullptr);
		 },
		 EINVAL},
		{"a UD address",
		 [](ibv_qp_ex *q) {
			 ibv_wr_send(q);
			 ibv_wr_set_ud_addr(q, nullptr, 1, 2);
		 },
		 EINVAL},
		{"an XRC SRQ number",
		 [](ibv_qp_ex *q) {
			 ibv_wr_send(q);
			 ibv_wr_set_xrc_srqn(q, 1);
		 },
		 EINVAL},
		{"Send with Immediate",
		 [](ibv_qp_ex *q) { ibv_wr_send_imm(q, htonl(1)); },
		 EOPNOTSUPP},
		{"an atomic's buffer not one 8-byte word",
		 [](ibv_qp_ex *q) {
			 ibv_wr_atomic_fetch_add(q, 1, 8, 1);
			 ibv_wr_set_sge(q, 1, 0x1000, 4);
		 },
		 EINVAL},
		{"inline data for an atomic",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_atomic_cmp_swp(q, 1, 8, 0, 1);
			 ibv_wr_set_inline_data(q, data.data(), 8);
		 },
		 EINVAL},
		{"a window bind without a window",
		 [](ibv_qp_ex *q) {
			 const ibv_mw_bind_info info{};
			 ibv_wr_bind_mw(q, nullptr, 1, &info);
		 },
		 EINVAL},
		{"a window bind without bind information",
		 [](ibv_qp_ex *q) {
			 ibv_mw mw{};
			 ibv_wr_bind_mw(q, &mw, 1, nullptr);
		 },
		 EINVAL},
		{"a window bind with a length and no MR",
		 [](ibv_qp_ex *q) {
			 ibv_mw mw{};
			 const ibv_mw_bind_info info{nullptr, 0x1000, 8, 0};
			 ibv_wr_bind_mw(q, &mw, 1, &info);
		 },
		 EINVAL},
		{"an SGE for a local invalidate",
		 [](ibv_qp_ex *q) {
			 ibv_wr_local_inv(q, 1);
			 ibv_wr_set_sge(q, 1, 0x1000, 8);
		 },
		 EINVAL},
		{"TSO",
		 [](ibv_qp_ex *q) { ibv_wr_send_tso(q, nullptr, 0, 0); },
		 EOPNOTSUPP},
		{"an atomic write",
		 [](ibv_qp_ex *q) { q->wr_atomic_write(q, 1, 8, nullptr); },
		 EOPNOTSUPP},
		{"inline data before any builder",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_abort(q);
			 ibv_wr_start(q);
			 ibv_wr_set_inline_data(q, data.data(), 3);
		 },
		 EINVAL},
		{"setters after a failed builder",
		 [&](ibv_qp_ex *q) {
			 ibv_wr_send_tso(q, nullptr, 0, 0);
			 ibv_wr_set_inline_data(q, data.data(), 3);
			 ibv_wr_set_sge(q, 1, 2, 3);
		 },
		 EOPNOTSUPP},
	};
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);

	for (const Case &c : cases) {
		ibv_wr_start(qpx);
		add_send(qpx, 1);
		c.bad(qpx);
		/* Later requests do not clear the error. */
		add_send(qpx, 2);
		EXPECT_EQ(ibv_wr_complete(qpx), c.err) << c.what;
		EXPECT_EQ(valid_slots(qpx), 0U) << c.what;
		EXPECT_EQ(sq_of(qpx).flags<xiw_sqe>(0), 0U) << c.what;
	}
	EXPECT_TRUE(kernel.doorbells.empty());

	/* Nothing of it stays behind: the next batch is whole. */
	ibv_wr_start(qpx);
	add_send(qpx, 9);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(valid_slots(qpx), 1U);
	EXPECT_EQ(sq_of(qpx).slot<xiw_sqe>(0).wr_id, 9U);
}

TEST_F(QpEx, AbortDropsAFailedOrOverfullBatch)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	const std::uint32_t num = sq_of(qpx).num();

	ibv_wr_start(qpx);
	add_send(qpx, 1);
	ibv_wr_local_inv(qpx, 1);
	ibv_wr_abort(qpx);

	/* The request being built when abort comes finds the ring full. */
	ibv_wr_start(qpx);
	for (std::uint32_t i = 0; i <= num; ++i) {
		add_send(qpx, i);
	}
	ibv_wr_abort(qpx);
	EXPECT_EQ(valid_slots(qpx), 0U);
	for (std::uint32_t i = 0; i < num; ++i) {
		EXPECT_EQ(sq_of(qpx).flags<xiw_sqe>(i), 0U) << i;
	}

	/* No error carried over, the lock free. */
	ibv_wr_start(qpx);
	add_send(qpx, 7);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(valid_slots(qpx), 1U);
	EXPECT_TRUE(kernel.doorbells.size() == 1U);
}

TEST_F(QpEx, AnSgeListLongerThanAnSqeHoldsIsRefused)
{
	ibv_qp_init_attr_ex attr = ex_attr();
	attr.cap.max_send_sge = XIW_MAX_SGE;
	ibv_qp_ex *qpx = ready_qpx(attr);
	ASSERT_NE(qpx, nullptr);
	std::vector<ibv_sge> sges(XIW_MAX_SGE + 1, ibv_sge{0x1000, 8, 1});

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, sges.size(), sges.data());
	EXPECT_EQ(ibv_wr_complete(qpx), EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, XIW_MAX_SGE, sges.data());
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(sq_of(qpx).slot<xiw_sqe>(0).num_sge, XIW_MAX_SGE);
}

TEST_F(QpEx, ABatchLargerThanTheFreeSlotsIsRefusedWhole)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	FakeRing &sq = sq_of(qpx);
	const std::uint32_t num = sq.num();

	ibv_wr_start(qpx);
	for (std::uint32_t i = 0; i <= num; ++i) {
		add_send(qpx, i);
	}
	EXPECT_EQ(ibv_wr_complete(qpx), ENOMEM);
	EXPECT_EQ(valid_slots(qpx), 0U);

	/* Exactly the ring's size fits; then one held slot is too many. */
	ibv_wr_start(qpx);
	for (std::uint32_t i = 0; i < num; ++i) {
		add_send(qpx, 100 + i);
	}
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(valid_slots(qpx), num);

	sq.consume<xiw_sqe>(0);
	sq.consume<xiw_sqe>(1);
	ibv_wr_start(qpx);
	add_send(qpx, 200);
	add_send(qpx, 201);
	add_send(qpx, 202);
	EXPECT_EQ(ibv_wr_complete(qpx), ENOMEM);
	EXPECT_EQ(valid_slots(qpx), num - 2);
	EXPECT_EQ(sq.flags<xiw_sqe>(num), 0U) << "slot 0 was published";

	ibv_wr_start(qpx);
	add_send(qpx, 300);
	add_send(qpx, 301);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(sq.slot<xiw_sqe>(num).wr_id, 300U);
	EXPECT_EQ(sq.slot<xiw_sqe>(num + 1).wr_id, 301U);
	EXPECT_EQ(sq.slot<xiw_sqe>(2).wr_id, 102U) << "a held slot changed";
}

TEST_F(QpEx, InlineDataIsHeldToTheLimitTheKernelGranted)
{
	kernel.max_inline = 16;
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	std::array<char, 17> data{};

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, data.data(), 17);
	EXPECT_EQ(ibv_wr_complete(qpx), EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_rdma_write(qpx, 1, 2);
	ibv_wr_set_inline_data(qpx, data.data(), 16);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(sq_of(qpx).slot<xiw_sqe>(0).inline_len, 16);
}

/* ibv_wr_start() holds the SQ: ibv_post_send() waits for the batch. */
TEST_F(QpEx, ABatchIsNotInterleavedWithPostSend)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	std::atomic<bool> posted{false};

	ibv_wr_start(qpx);
	add_send(qpx, 1);
	add_send(qpx, 2);
	std::thread poster([&] {
		ibv_send_wr wr{};
		ibv_send_wr *bad = nullptr;
		wr.wr_id = 3;
		wr.opcode = IBV_WR_SEND;
		EXPECT_EQ(ibv_post_send(&qpx->qp_base, &wr, &bad), 0);
		posted = true;
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	EXPECT_FALSE(posted.load()) << "posted inside another's batch";
	add_send(qpx, 4);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	poster.join();

	FakeRing &sq = sq_of(qpx);
	const std::array<std::uint64_t, 4> order{1, 2, 4, 3};
	for (std::uint32_t i = 0; i < order.size(); ++i) {
		EXPECT_EQ(sq.flags<xiw_sqe>(i) & XIW_SLOT_VALID,
			  XIW_SLOT_VALID)
			<< i;
		EXPECT_EQ(sq.slot<xiw_sqe>(i).wr_id, order.at(i)) << i;
	}
}

TEST_F(QpEx, CompleteRefusesAQpNotReadyToSend)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	auto &fake = kernel.qps.at(qpx->qp_base.handle);

	for (const ibv_qp_state state :
	     {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR}) {
		xiw_test::set_qp_state(fake, state);
		ibv_wr_start(qpx);
		add_send(qpx, 1);
		EXPECT_EQ(ibv_wr_complete(qpx), EINVAL) << state;
		EXPECT_EQ(valid_slots(qpx), 0U) << state;
	}
	EXPECT_TRUE(kernel.doorbells.empty());

	/* In the error state it is posted, and the doorbell has it flushed. */
	xiw_test::set_qp_state(fake, IBV_QPS_ERR);
	ibv_wr_start(qpx);
	add_send(qpx, 2);
	EXPECT_EQ(ibv_wr_complete(qpx), 0);
	EXPECT_EQ(valid_slots(qpx), 1U);
	EXPECT_EQ(kernel.doorbells.size(), 1U);
}

TEST_F(QpEx, CompleteReportsAFailedDoorbellAfterPosting)
{
	ibv_qp_ex *qpx = ready_qpx(ex_attr());
	ASSERT_NE(qpx, nullptr);
	kernel.doorbell_errno = EBADF;

	ibv_wr_start(qpx);
	add_send(qpx, 1);
	EXPECT_EQ(ibv_wr_complete(qpx), EBADF);
	/* Posted all the same: the next doorbell will tell the kernel. */
	EXPECT_EQ(valid_slots(qpx), 1U);
}

} // namespace
