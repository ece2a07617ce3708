// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Work requests into ring slots and CQEs into work completions (wr.h), and
 * the checks on the kernel's create responses, without any kernel.
 */
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <endian.h>
#include <span>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "ring.h"
#include "wr.h"
#include "xiw.h"

namespace {

constexpr xiw::SendLimits kLimits{.max_sge = 4,
				  .max_inline = 64,
				  .sig_all = false};

std::uint64_t address_of(const void *p)
{
	return reinterpret_cast<std::uintptr_t>(p);
}

ibv_send_wr send_wr(ibv_wr_opcode opcode, std::span<ibv_sge> sges,
		    unsigned int flags = 0)
{
	ibv_send_wr wr{};
	wr.wr_id = 0x1122334455667788ULL;
	wr.opcode = opcode;
	wr.sg_list = sges.data();
	wr.num_sge = static_cast<int>(sges.size());
	wr.send_flags = flags;
	return wr;
}

TEST(BuildSqe, FillsASend)
{
	std::array<ibv_sge, 2> sges{{{0x1000, 10, 0xaa}, {0x2000, 20, 0xbb}}};
	const ibv_send_wr wr = send_wr(IBV_WR_SEND, sges,
				       IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
					       IBV_SEND_FENCE);
	xiw_sqe sqe{};
	/* What the kernel reads is written; the rest is left as it was. */
	std::memset(&sqe, 0xff, sizeof(sqe));

	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	xiw_sqe expected{};
	std::memset(&expected, 0xff, sizeof(expected));
	std::memset(&expected, 0, offsetof(xiw_sqe, sge));
	expected.flags = XIW_WQE_SIGNALED | XIW_WQE_SOLICITED | XIW_WQE_FENCE;
	expected.opcode = IB_UVERBS_WR_SEND;
	expected.num_sge = 2;
	expected.wr_id = 0x1122334455667788ULL;
	expected.sge[0] = {0x1000, 10, 0xaa};
	expected.sge[1] = {0x2000, 20, 0xbb};
	EXPECT_EQ(std::memcmp(&sqe, &expected, sizeof(sqe)), 0);
}

TEST(BeginSqe, ClearsTheWholeSlot)
{
	xiw_sqe sqe{};
	std::memset(&sqe, 0xff, sizeof(sqe));

	ASSERT_EQ(xiw::begin_sqe({IBV_WR_SEND, 5, 0}, kLimits, sqe), 0);
	xiw_sqe expected{};
	expected.opcode = IB_UVERBS_WR_SEND;
	expected.wr_id = 5;
	EXPECT_EQ(std::memcmp(&sqe, &expected, sizeof(sqe)), 0);
}

TEST(BuildSqe, MapsEachSupportedOpcode)
{
	struct Case {
		ibv_wr_opcode verb;
		std::uint8_t wire;
		bool remote;
		bool invalidates;
	};
	const std::array cases{
		Case{IBV_WR_SEND, IB_UVERBS_WR_SEND, false, false},
		Case{IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV, false,
		     true},
		Case{IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE, true, false},
		Case{IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ, true, false},
	};
	for (const Case &c : cases) {
		ibv_sge sge{0x1000, 8, 1};
		ibv_send_wr wr = send_wr(c.verb, {&sge, 1});
		wr.imm_data = 0x5a5a5a5a; /* only the _WITH_IMM opcode uses it */
		if (c.invalidates) {
			wr.invalidate_rkey = 0xc0ffee;
		} else {
			wr.wr.rdma.remote_addr = 0xfeed0000;
			wr.wr.rdma.rkey = 0x77;
		}
		xiw_sqe sqe{};

		ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0) << c.verb;
		EXPECT_EQ(sqe.opcode, c.wire) << c.verb;
		EXPECT_EQ(sqe.ex, c.invalidates ? 0xc0ffeeU : 0U) << c.verb;
		EXPECT_EQ(sqe.rkey, c.remote ? 0x77U : 0U) << c.verb;
		EXPECT_EQ(sqe.raddr, c.remote ? 0xfeed0000U : 0U) << c.verb;
	}
}

TEST(BuildSqe, WriteWithImmediateCarriesTheValueAsPosted)
{
	ibv_sge sge{0x1000, 8, 1};
	ibv_send_wr wr = send_wr(IBV_WR_RDMA_WRITE_WITH_IMM, {&sge, 1});
	wr.wr.rdma.remote_addr = 0xfeed0000;
	wr.wr.rdma.rkey = 0x77;
	wr.imm_data = htobe32(0x01020304);
	xiw_sqe sqe{};

	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(sqe.ex, htobe32(0x01020304));
	EXPECT_EQ(sqe.rkey, 0x77U);
	EXPECT_EQ(sqe.raddr, 0xfeed0000U);
}

TEST(BuildSqe, LocalInvalidateCarriesTheStagAndNoData)
{
	ibv_send_wr wr = send_wr(IBV_WR_LOCAL_INV, {});
	wr.invalidate_rkey = 0x123456;
	xiw_sqe sqe{};

	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, IB_UVERBS_WR_LOCAL_INV);
	EXPECT_EQ(sqe.ex, 0x123456U);
	EXPECT_EQ(sqe.num_sge, 0);

	ibv_sge sge{0x1000, 8, 1};
	wr = send_wr(IBV_WR_LOCAL_INV, {&sge, 1});
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
}

TEST(BuildSqe, AWindowBindCarriesWindowMrRangeAndRights)
{
	ibv_mr mr{};
	ibv_mw mw{};
	mr.lkey = 0x4411;
	mw.rkey = 0x2233;
	ibv_send_wr wr = send_wr(IBV_WR_BIND_MW, {});
	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = 0x2234;
	wr.bind_mw.bind_info = {&mr, 0x7000, 0x1000000000ULL,
				IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_WRITE};
	xiw_sqe sqe{};

	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, IB_UVERBS_WR_BIND_MW);
	EXPECT_EQ(sqe.ex, 0x2233U);
	EXPECT_EQ(sqe.rkey, 0x2234U);
	EXPECT_EQ(sqe.raddr, 0x7000U);
	EXPECT_EQ(sqe.compare_add, 0x1000000000ULL);
	EXPECT_EQ(sqe.mw_lkey, 0x4411U);
	EXPECT_EQ(sqe.mw_access, static_cast<std::uint32_t>(
					 IB_UVERBS_ACCESS_REMOTE_READ |
					 IB_UVERBS_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(sqe.num_sge, 0);

	/* A type 1 unbind: no length, no MR. */
	wr.bind_mw.bind_info = {nullptr, 0, 0, 0};
	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.mw_lkey, 0U);
	EXPECT_EQ(sqe.compare_add, 0U);
}

TEST(BuildSqe, RefusesAWindowBindItCannotName)
{
	ibv_mw mw{};
	ibv_sge sge{0x1000, 8, 1};
	ibv_send_wr wr = send_wr(IBV_WR_BIND_MW, {});
	xiw_sqe sqe{};

	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL) << "no window";
	wr.bind_mw.mw = &mw;
	wr.bind_mw.bind_info = {nullptr, 0x1000, 8, 0};
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL)
		<< "a length and no MR";
	wr = send_wr(IBV_WR_BIND_MW, {&sge, 1});
	wr.bind_mw.mw = &mw;
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL) << "an SGE";
}

TEST(BuildSqe, RefusesOpcodesXiwDoesNotCarryYet)
{
	const std::array refused{
		IBV_WR_SEND_WITH_IMM,
		IBV_WR_TSO,
		IBV_WR_DRIVER1,
		IBV_WR_ATOMIC_WRITE,
		static_cast<ibv_wr_opcode>(42),
	};
	for (const ibv_wr_opcode opcode : refused) {
		const ibv_send_wr wr = send_wr(opcode, {});
		xiw_sqe sqe{};

		EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL) << opcode;
	}
}

TEST(BuildSqe, AtomicsCarryTheirOperandsAndOneWordForTheOldValue)
{
	ibv_sge sge{0x1000, 8, 5};
	ibv_send_wr wr = send_wr(IBV_WR_ATOMIC_CMP_AND_SWP, {&sge, 1});
	wr.wr.atomic.remote_addr = 0xfeed0008;
	wr.wr.atomic.rkey = 0x77;
	wr.wr.atomic.compare_add = 0x1111222233334444ULL;
	wr.wr.atomic.swap = 0x5555666677778888ULL;
	xiw_sqe sqe{};

	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
	EXPECT_EQ(sqe.rkey, 0x77U);
	EXPECT_EQ(sqe.raddr, 0xfeed0008U);
	EXPECT_EQ(sqe.compare_add, 0x1111222233334444ULL);
	EXPECT_EQ(sqe.swap, 0x5555666677778888ULL);
	EXPECT_EQ(sqe.num_sge, 1);
	EXPECT_EQ(sqe.sge[0].addr, 0x1000U);
	EXPECT_EQ(sqe.sge[0].lkey, 5U);

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.swap = 0;
	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
	EXPECT_EQ(sqe.compare_add, 0x1111222233334444ULL);

	/* Anything but one 8-byte buffer, and inline data, is refused. */
	std::array<ibv_sge, 2> two{{{0x1000, 8, 5}, {0x2000, 8, 5}}};
	for (const std::uint32_t length : {0U, 4U, 7U, 9U, 16U}) {
		sge.length = length;
		EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL) << length;
	}
	sge.length = 8;
	wr.num_sge = 0;
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
	wr = send_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, two);
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
	wr = send_wr(IBV_WR_ATOMIC_CMP_AND_SWP, {&sge, 1}, IBV_SEND_INLINE);
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
}

TEST(BuildSqe, SignalsEveryRequestWithSqSigAll)
{
	xiw::SendLimits limits = kLimits;
	limits.sig_all = true;
	const ibv_send_wr wr = send_wr(IBV_WR_SEND, {});
	xiw_sqe sqe{};

	ASSERT_EQ(xiw::build_sqe(wr, limits, sqe), 0);
	EXPECT_EQ(sqe.flags, XIW_WQE_SIGNALED);
	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.flags, 0U);
}

TEST(BuildSqe, TakesAtMostTheSgesTheQueueWasCreatedWith)
{
	std::array<ibv_sge, XIW_MAX_SGE + 1> sges{};
	xiw_sqe sqe{};

	ibv_send_wr wr = send_wr(IBV_WR_SEND, std::span(sges).first(4));
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	wr.num_sge = 5;
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
	wr.num_sge = -1;
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
	wr = send_wr(IBV_WR_SEND, {});
	wr.num_sge = 1; /* with no list */
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);

	/* Never more than a slot holds, whatever the QP claims. */
	const xiw::SendLimits lavish{
		.max_sge = 100, .max_inline = 0, .sig_all = false};
	wr = send_wr(IBV_WR_SEND, std::span(sges).first(XIW_MAX_SGE));
	EXPECT_EQ(xiw::build_sqe(wr, lavish, sqe), 0);
	wr.num_sge = XIW_MAX_SGE + 1;
	EXPECT_EQ(xiw::build_sqe(wr, lavish, sqe), EINVAL);
}

TEST(BuildSqe, CopiesInlineData)
{
	std::string_view hello = "hello";
	std::string_view world = ", world";
	std::array<ibv_sge, 3> sges{{
		{address_of(hello.data()), 5, 0},
		{0, 0, 0}, /* empty, skipped */
		{address_of(world.data()), 7, 0},
	}};
	ibv_send_wr wr = send_wr(IBV_WR_RDMA_WRITE, sges,
				 IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = 0xabc000;
	wr.wr.rdma.rkey = 9;
	xiw_sqe sqe{};

	ASSERT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.flags, XIW_WQE_INLINE | XIW_WQE_SIGNALED);
	EXPECT_EQ(sqe.num_sge, 0);
	EXPECT_EQ(sqe.inline_len, 12);
	EXPECT_EQ(std::string_view(reinterpret_cast<const char *>(&sqe.sge[0]),
				   12),
		  "hello, world");
	EXPECT_EQ(sqe.raddr, 0xabc000U);
	EXPECT_EQ(sqe.rkey, 9U);
}

TEST(BuildSqe, LimitsInlineDataToWhatTheQpGranted)
{
	std::vector<char> data(XIW_MAX_INLINE + 1, 'x');
	ibv_sge sge{address_of(data.data()), 64, 0};
	ibv_send_wr wr = send_wr(IBV_WR_SEND, {&sge, 1}, IBV_SEND_INLINE);
	xiw_sqe sqe{};

	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	sge.length = 65;
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL);
	sge.length = 0;
	EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.inline_len, 0);

	/* And to what a slot holds. */
	const xiw::SendLimits lavish{
		.max_sge = 1, .max_inline = 4096, .sig_all = false};
	sge.length = XIW_MAX_INLINE;
	EXPECT_EQ(xiw::build_sqe(wr, lavish, sqe), 0);
	sge.length = XIW_MAX_INLINE + 1;
	EXPECT_EQ(xiw::build_sqe(wr, lavish, sqe), EINVAL);
}

TEST(BuildSqe, RefusesInlineOnReadAndSendWithInvalidate)
{
	for (const ibv_wr_opcode opcode :
	     {IBV_WR_RDMA_READ, IBV_WR_SEND_WITH_INV}) {
		const ibv_send_wr wr = send_wr(opcode, {}, IBV_SEND_INLINE);
		xiw_sqe sqe{};

		EXPECT_EQ(xiw::build_sqe(wr, kLimits, sqe), EINVAL) << opcode;
	}
}

TEST(BuildRqe, FillsAnRqe)
{
	std::array<ibv_sge, 3> sges{{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}};
	ibv_recv_wr wr{};
	wr.wr_id = 77;
	wr.sg_list = sges.data();
	wr.num_sge = 3;
	xiw_rqe rqe{};
	std::memset(&rqe, 0xff, sizeof(rqe));

	ASSERT_EQ(xiw::build_rqe(wr, 3, rqe), 0);
	xiw_rqe expected{};
	std::memset(&expected, 0xff, sizeof(expected));
	std::memset(&expected, 0, offsetof(xiw_rqe, sge));
	expected.num_sge = 3;
	expected.wr_id = 77;
	expected.sge[0] = {1, 2, 3};
	expected.sge[1] = {4, 5, 6};
	expected.sge[2] = {7, 8, 9};
	EXPECT_EQ(std::memcmp(&rqe, &expected, sizeof(rqe)), 0);

	EXPECT_EQ(xiw::build_rqe(wr, 2, rqe), EINVAL);
	wr.num_sge = 0;
	EXPECT_EQ(xiw::build_rqe(wr, 0, rqe), 0);
	wr.num_sge = -3;
	EXPECT_EQ(xiw::build_rqe(wr, 3, rqe), EINVAL);
}

/* A receive slot has room for XIW_MAX_RECV_SGE, whatever the caller allows. */
TEST(BuildRqe, NoMoreSgesThanTheSlotHolds)
{
	std::array<ibv_sge, XIW_MAX_RECV_SGE + 1> sges{};
	std::uint64_t addr = 0;
	for (ibv_sge &sge : sges) {
		addr += 0x1000;
		sge = ibv_sge{addr, 64, 7};
	}
	ibv_recv_wr wr{};
	wr.wr_id = 5;
	wr.sg_list = sges.data();
	wr.num_sge = XIW_MAX_RECV_SGE + 1;
	xiw_rqe rqe{};

	EXPECT_EQ(xiw::build_rqe(wr, XIW_MAX_SGE, rqe), EINVAL);
	wr.num_sge = XIW_MAX_RECV_SGE;
	ASSERT_EQ(xiw::build_rqe(wr, XIW_MAX_SGE, rqe), 0);
	EXPECT_EQ(rqe.num_sge, XIW_MAX_RECV_SGE);
	EXPECT_EQ(rqe.sge[XIW_MAX_RECV_SGE - 1].addr, 0x1000U * XIW_MAX_RECV_SGE);
}

xiw_cqe sample_cqe(std::uint32_t flags)
{
	xiw_cqe cqe{};
	cqe.flags = XIW_SLOT_VALID | flags;
	cqe.opcode = IBV_WC_RECV;
	cqe.status = IBV_WC_REM_ACCESS_ERR;
	cqe.wr_id = 0xdeadbeefcafeULL;
	cqe.qp_num = 0x123456;
	cqe.byte_len = 4096;
	cqe.ex = 0x01020304;
	cqe.vendor_err = 0x55;
	return cqe;
}

TEST(TranslateCqe, CopiesEveryField)
{
	ibv_wc wc{};
	std::memset(&wc, 0xff, sizeof(wc));

	xiw::translate_cqe(sample_cqe(0), wc);
	EXPECT_EQ(wc.wr_id, 0xdeadbeefcafeULL);
	EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV);
	EXPECT_EQ(wc.vendor_err, 0x55U);
	EXPECT_EQ(wc.byte_len, 4096U);
	EXPECT_EQ(wc.qp_num, 0x123456U);
	EXPECT_EQ(wc.wc_flags, 0U);
	EXPECT_EQ(wc.imm_data, 0U);
	EXPECT_EQ(wc.src_qp, 0U);
	EXPECT_EQ(wc.pkey_index, 0);
	EXPECT_EQ(wc.slid, 0);
	EXPECT_EQ(wc.sl, 0);
	EXPECT_EQ(wc.dlid_path_bits, 0);
}

TEST(TranslateCqe, CarriesImmediateDataAndInvalidatedKeys)
{
	ibv_wc wc{};

	xiw::translate_cqe(sample_cqe(XIW_CQE_WITH_IMM), wc);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_WITH_IMM});
	EXPECT_EQ(wc.imm_data, 0x01020304U); /* verbatim, network order */

	xiw::translate_cqe(sample_cqe(XIW_CQE_WITH_INV), wc);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_WITH_INV});
	EXPECT_EQ(wc.invalidated_rkey, 0x01020304U);

	/* The verbs have no flag for a solicited completion. */
	xiw::translate_cqe(sample_cqe(XIW_CQE_SOLICITED), wc);
	EXPECT_EQ(wc.wc_flags, 0U);
}

TEST(TranslateCqe, PassesStatusAndOpcodeThrough)
{
	for (const ibv_wc_status status :
	     {IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR, IBV_WC_GENERAL_ERR}) {
		for (const ibv_wc_opcode opcode :
		     {IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
		      IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM}) {
			xiw_cqe cqe = sample_cqe(0);
			cqe.status = static_cast<std::uint8_t>(status);
			cqe.opcode = static_cast<std::uint8_t>(opcode);
			ibv_wc wc{};

			xiw::translate_cqe(cqe, wc);
			EXPECT_EQ(wc.status, status);
			EXPECT_EQ(wc.opcode, opcode);
		}
	}
}

TEST(PushChain, StopsAtTheFirstRequestThatCannotGo)
{
	std::vector<xiw_sqe> slots(2);
	xiw::RingProducer<xiw_sqe> sq(slots.data(), 2);
	std::array<ibv_send_wr, 3> wrs{send_wr(IBV_WR_SEND, {}),
				       send_wr(IBV_WR_SEND, {}),
				       send_wr(IBV_WR_SEND, {})};
	wrs[0].next = &wrs[1];
	wrs[1].next = &wrs[2];
	ibv_send_wr *wr = wrs.data();
	std::uint32_t posted = 99;

	EXPECT_EQ(xiw::push_send_chain(sq, kLimits, wr, posted), ENOMEM);
	EXPECT_EQ(wr, &wrs[2]);
	EXPECT_EQ(posted, 2U);

	std::vector<xiw_rqe> rslots(4);
	xiw::RingProducer<xiw_rqe> rq(rslots.data(), 4);
	std::array<ibv_recv_wr, 3> rwrs{};
	rwrs[0].next = &rwrs[1];
	rwrs[1].next = &rwrs[2];
	rwrs[1].num_sge = 1; /* with no list */
	ibv_recv_wr *rwr = rwrs.data();

	EXPECT_EQ(xiw::push_recv_chain(rq, 1, rwr, posted), EINVAL);
	EXPECT_EQ(rwr, &rwrs[1]);
	EXPECT_EQ(posted, 1U);

	rwr = &rwrs[2];
	EXPECT_EQ(xiw::push_recv_chain(rq, 1, rwr, posted), 0);
	EXPECT_EQ(rwr, nullptr);
	EXPECT_EQ(posted, 1U);
}

TEST(CreateResponses, NeedRingsOfAPowerOfTwoSlots)
{
	EXPECT_EQ(xiw::check_create_cq_resp({0x1000, 1, 256}), 0);
	EXPECT_EQ(xiw::check_create_cq_resp({0x1000, 1, 0}), EPROTO);
	EXPECT_EQ(xiw::check_create_cq_resp({0x1000, 1, 100}), EPROTO);
	EXPECT_EQ(xiw::check_create_srq_resp({0x1000, 64, 0}), 0);
	EXPECT_EQ(xiw::check_create_srq_resp({0x1000, 65, 0}), EPROTO);
	EXPECT_EQ(
		xiw::check_create_srq_resp({0x1000, xiw::kMaxRingSlots * 2, 0}),
		EPROTO);
}

TEST(CreateResponses, NeedAnRqExactlyWithoutAnSrq)
{
	const xiw_create_qp_resp good{.sq_key = 0x1000,
				      .rq_key = 0x2000,
				      .qp_id = 1,
				      .num_sqe = 64,
				      .num_rqe = 32,
				      .max_inline = XIW_MAX_INLINE};
	EXPECT_EQ(xiw::check_create_qp_resp(good, false), 0);
	EXPECT_EQ(xiw::check_create_qp_resp(good, true), EPROTO);

	xiw_create_qp_resp on_srq = good;
	on_srq.rq_key = XIW_INVALID_MMAP_KEY;
	on_srq.num_rqe = 0;
	EXPECT_EQ(xiw::check_create_qp_resp(on_srq, true), 0);
	EXPECT_EQ(xiw::check_create_qp_resp(on_srq, false), EPROTO);

	xiw_create_qp_resp bad = good;
	bad.num_sqe = 0;
	EXPECT_EQ(xiw::check_create_qp_resp(bad, false), EPROTO);
	bad = good;
	bad.num_rqe = 3;
	EXPECT_EQ(xiw::check_create_qp_resp(bad, false), EPROTO);
	bad = good;
	bad.max_inline = XIW_MAX_INLINE + 1;
	EXPECT_EQ(xiw::check_create_qp_resp(bad, false), EPROTO);
}

} // namespace
