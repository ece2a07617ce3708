// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The private-ABI declarations (ibverbs_private.h) against the libibverbs
 * installed here.
 *
 * Sizes and offsets are asserted at compile time already; they are repeated
 * here so that a failure names the structure. The tests that matter more
 * hand our layouts to the real library: _verbs_init_and_alloc_context()
 * must find the verbs_context at the offset we say and the device
 * reference count where we put it, and verbs_set_ops() must read every one
 * of the 76 verbs_context_ops slots where we declared it.
 */
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ibverbs_private.h"
#include "xiw.h"

namespace {

constexpr std::size_t kPtr = sizeof(void *);

TEST(AbiLayout, PrivateStructSizes)
{
	EXPECT_EQ(sizeof(verbs_device_ops), 72U);
	EXPECT_EQ(sizeof(verbs_match_ent), 24U);
	EXPECT_EQ(sizeof(verbs_device), 712U);
	EXPECT_EQ(sizeof(verbs_sysfs_dev), 992U);
	EXPECT_EQ(sizeof(verbs_mr), 56U);
	EXPECT_EQ(sizeof(verbs_context_ops), 76 * kPtr);
	EXPECT_EQ(sizeof(verbs_context_ops), 608U);
}

TEST(AbiLayout, PublicStructsTheyEmbed)
{
	EXPECT_EQ(sizeof(ibv_device), 664U);
	EXPECT_EQ(sizeof(verbs_context), 648U);
	EXPECT_EQ(offsetof(verbs_context, context), 320U);
}

TEST(AbiLayout, CommandSizes)
{
	EXPECT_EQ(sizeof(struct ibv_get_context), 16U);
	EXPECT_EQ(sizeof(ibv_get_context_resp), 8U);
	EXPECT_EQ(sizeof(struct ibv_query_port), 24U);
	EXPECT_EQ(offsetof(struct ibv_query_port, port_num), 16U);
	EXPECT_EQ(sizeof(struct ibv_alloc_pd), 16U);
	EXPECT_EQ(sizeof(ibv_alloc_pd_resp), 4U);
}

/* The queue and MR commands, and the doorbells xiw writes itself. */
TEST(AbiLayout, QueueCommandSizes)
{
	EXPECT_EQ(sizeof(struct ibv_reg_mr), 48U);
	EXPECT_EQ(sizeof(ibv_reg_mr_resp), 12U);
	EXPECT_EQ(sizeof(struct ibv_create_cq), 40U);
	EXPECT_EQ(sizeof(ibv_create_cq_resp), 8U);
	EXPECT_EQ(sizeof(struct ibv_create_qp), 64U);
	EXPECT_EQ(sizeof(ibv_create_qp_resp), 32U);
	EXPECT_EQ(sizeof(struct ibv_modify_qp), 120U);
	EXPECT_EQ(sizeof(struct ibv_query_qp), 24U);
	EXPECT_EQ(sizeof(struct ibv_create_srq), 40U);
	EXPECT_EQ(sizeof(ibv_create_srq_resp), 16U);
	EXPECT_EQ(sizeof(struct ibv_modify_srq), 24U);
	EXPECT_EQ(sizeof(struct ibv_query_srq), 24U);
	EXPECT_EQ(sizeof(struct ibv_post_send), 32U);
	EXPECT_EQ(sizeof(struct ibv_post_recv), 32U);
}

/* ibv_qp_to_qp_ex() reads comp_mask behind every QP. */
TEST(AbiLayout, VerbsQp)
{
	EXPECT_EQ(offsetof(verbs_qp, comp_mask), sizeof(ibv_qp_ex));
	EXPECT_EQ(offsetof(xiw::Qp, vqp), 0U);
}

TEST(AbiLayout, OffsetsLibibverbsReads)
{
	EXPECT_EQ(offsetof(verbs_device, ops), 664U);
	EXPECT_EQ(offsetof(verbs_device, refcount), 672U);
	EXPECT_EQ(offsetof(verbs_device, sysfs), 696U);
	EXPECT_EQ(offsetof(verbs_sysfs_dev, ibdev_name), 112U);
	EXPECT_EQ(offsetof(verbs_sysfs_dev, ibdev_path), 176U);
	EXPECT_EQ(offsetof(verbs_sysfs_dev, abi_ver), 968U);
	EXPECT_EQ(offsetof(verbs_device_ops, match_device), 32U);
	EXPECT_EQ(offsetof(verbs_device_ops, alloc_context), 40U);
	EXPECT_EQ(offsetof(verbs_device_ops, alloc_device), 56U);
	EXPECT_EQ(offsetof(verbs_device_ops, uninit_device), 64U);
}

/* ---- Against the real libibverbs ------------------------------------- */

/* A distinct function for each slot index: its address tells the slot. */
template <std::size_t I> std::size_t slot_marker() noexcept
{
	return I;
}

using AnyFn = void (*)();
constexpr std::size_t kSlots = sizeof(verbs_context_ops) / kPtr;
using Markers = std::array<AnyFn, kSlots>;

template <std::size_t... I>
Markers make_markers(std::index_sequence<I...> /*unused*/) noexcept
{
	return {reinterpret_cast<AnyFn>(&slot_marker<I>)...};
}

const Markers &markers()
{
	static const Markers all = make_markers(std::make_index_sequence<kSlots>{});
	return all;
}

/* The marker that a slot at byte offset `offset` of our layout holds. */
const void *marker_at(std::size_t offset)
{
	return reinterpret_cast<const void *>(markers().at(offset / kPtr));
}

template <typename Fn> const void *addr(Fn fn)
{
	return reinterpret_cast<const void *>(fn);
}

/*
 * The ops that libibverbs keeps private (no copy in a public structure)
 * are reached through the public calls that dispatch to them; each of
 * these records that it was the one called.
 */
struct Calls {
	std::string_view last;
	std::uint32_t handle = 0;
	ibv_pd pd{};
	ibv_mr mr{};
	ibv_dm dm{};
};
Calls calls;

void rec_free_context(ibv_context *ibctx);

ibv_dm *rec_import_dm(ibv_context * /*ctx*/, std::uint32_t handle)
{
	calls.last = "import_dm";
	calls.handle = handle;
	return &calls.dm;
}

ibv_mr *rec_import_mr(ibv_pd * /*pd*/, std::uint32_t handle)
{
	calls.last = "import_mr";
	calls.handle = handle;
	return &calls.mr;
}

ibv_pd *rec_import_pd(ibv_context * /*ctx*/, std::uint32_t handle)
{
	calls.last = "import_pd";
	calls.handle = handle;
	return &calls.pd;
}

int rec_query_ece(ibv_qp * /*qp*/, ibv_ece * /*ece*/)
{
	calls.last = "query_ece";
	return 0;
}

int rec_query_port(ibv_context * /*ctx*/, std::uint8_t port,
		   ibv_port_attr * /*attr*/)
{
	calls.last = "query_port";
	calls.handle = port;
	return 0;
}

int rec_query_qp_data_in_order(ibv_qp * /*qp*/, ibv_wr_opcode /*op*/,
			       std::uint32_t flags)
{
	calls.last = "query_qp_data_in_order";
	calls.handle = flags;
	return 0;
}

ibv_mr *rec_reg_dmabuf_mr(ibv_pd * /*pd*/, std::uint64_t /*offset*/,
			  std::size_t /*length*/, std::uint64_t /*iova*/,
			  int fd, int /*access*/)
{
	calls.last = "reg_dmabuf_mr";
	calls.handle = static_cast<std::uint32_t>(fd);
	return &calls.mr;
}

int rec_set_ece(ibv_qp * /*qp*/, ibv_ece * /*ece*/)
{
	calls.last = "set_ece";
	return 0;
}

void rec_unimport_dm(ibv_dm * /*dm*/)
{
	calls.last = "unimport_dm";
}

void rec_unimport_mr(ibv_mr * /*mr*/)
{
	calls.last = "unimport_mr";
}

void rec_unimport_pd(ibv_pd * /*pd*/)
{
	calls.last = "unimport_pd";
}

/* A provider context with something in front of the verbs_context. */
struct PaddedContext {
	std::array<std::uint64_t, 3> before;
	verbs_context vctx;
};

PaddedContext *padded_from(ibv_context *ibctx)
{
	auto *bytes = reinterpret_cast<std::byte *>(ibctx);
	return reinterpret_cast<PaddedContext *>(
		bytes - offsetof(PaddedContext, vctx) -
		offsetof(verbs_context, context));
}

void rec_free_context(ibv_context *ibctx)
{
	calls.last = "free_context";
	PaddedContext *ctx = padded_from(ibctx);
	verbs_uninit_context(&ctx->vctx);
	std::free(ctx); // NOLINT(cppcoreguidelines-no-malloc,cppcoreguidelines-owning-memory)
}

/* Never released by these tests: the reference count stays above zero. */
const verbs_device_ops kTestDeviceOps = {
	.name = "xiw-abi-test",
	.match_min_abi_version = 0,
	.match_max_abi_version = 0,
	.match_table = nullptr,
	.static_providers = nullptr,
	.match_device = nullptr,
	.alloc_context = nullptr,
	.import_context = nullptr,
	.alloc_device = nullptr,
	.uninit_device = nullptr,
};

class RealLibibverbs : public ::testing::Test {
protected:
	void SetUp() override
	{
		dev_ = xiw::Device::create();
		ASSERT_NE(dev_, nullptr);
		dev_->vdev.ops = &kTestDeviceOps;
		dev_->vdev.refcount = 1;

		// ioctl() on /dev/null fails with ENOTTY, which libibverbs takes
		// for "no ioctl interface" and carries on.
		cmd_fd_ = open("/dev/null", O_RDWR | O_CLOEXEC);
		ASSERT_GE(cmd_fd_, 0);

		constexpr std::uintptr_t kOffset = offsetof(PaddedContext, vctx);
		void *mem = _verbs_init_and_alloc_context(
			&dev_->vdev.device, cmd_fd_, sizeof(PaddedContext),
			reinterpret_cast<verbs_context *>(kOffset), // NOLINT(performance-no-int-to-ptr)
			RDMA_DRIVER_UNKNOWN);
		ASSERT_NE(mem, nullptr) << std::strerror(errno);
		ctx_ = static_cast<PaddedContext *>(mem);
	}

	void TearDown() override
	{
		if (ctx_ != nullptr) {
			verbs_uninit_context(&ctx_->vctx);
			std::free(ctx_); // NOLINT(cppcoreguidelines-no-malloc,cppcoreguidelines-owning-memory)
		}
	}

	ibv_context *ibctx() { return &ctx_->vctx.context; }

	/* All 76 slots hold markers, except those reached by calls. */
	void set_marker_ops()
	{
		verbs_context_ops ops{};
		static_assert(sizeof(ops) == sizeof(Markers));
		std::memcpy(&ops, markers().data(), sizeof(ops));

		ops.free_context = rec_free_context;
		ops.import_dm = rec_import_dm;
		ops.import_mr = rec_import_mr;
		ops.import_pd = rec_import_pd;
		ops.query_ece = rec_query_ece;
		ops.query_port = rec_query_port;
		ops.query_qp_data_in_order = rec_query_qp_data_in_order;
		ops.reg_dmabuf_mr = rec_reg_dmabuf_mr;
		ops.set_ece = rec_set_ece;
		ops.unimport_dm = rec_unimport_dm;
		ops.unimport_mr = rec_unimport_mr;
		ops.unimport_pd = rec_unimport_pd;
		verbs_set_ops(&ctx_->vctx, &ops);
	}

	std::unique_ptr<xiw::Device> dev_;
	int cmd_fd_ = -1;
	PaddedContext *ctx_ = nullptr;
};

TEST_F(RealLibibverbs, InitialisesTheContextAtOurOffset)
{
	EXPECT_EQ(ctx_->before, (std::array<std::uint64_t, 3>{}));
	EXPECT_EQ(ctx_->vctx.context.device, &dev_->vdev.device);
	EXPECT_EQ(ctx_->vctx.context.cmd_fd, cmd_fd_);
	EXPECT_EQ(ctx_->vctx.context.async_fd, -1);
	EXPECT_EQ(ctx_->vctx.sz, sizeof(verbs_context));
	EXPECT_NE(ctx_->vctx.priv, nullptr);
}

TEST_F(RealLibibverbs, CountsItsDeviceReferenceWhereWePutIt)
{
	EXPECT_EQ(dev_->vdev.refcount, 2);
	verbs_uninit_context(&ctx_->vctx);
	std::free(ctx_); // NOLINT(cppcoreguidelines-no-malloc,cppcoreguidelines-owning-memory)
	ctx_ = nullptr;
	EXPECT_EQ(dev_->vdev.refcount, 1);
	EXPECT_EQ(fcntl(cmd_fd_, F_GETFD), -1) << "cmd_fd left open";
}

/* Ops that verbs_set_ops() also copies into public structures. */
TEST_F(RealLibibverbs, PublishesEveryMirroredSlotFromOurOffset)
{
	set_marker_ops();
	const verbs_context &v = ctx_->vctx;
	const ibv_context_ops &o = ctx_->vctx.context.ops;

	struct Mirror {
		const char *slot;
		std::size_t offset; /* in our verbs_context_ops */
		const void *published;
	};
	// Stringizing the slot name and taking its offset needs a macro.
	// NOLINTBEGIN(cppcoreguidelines-macro-usage)
#define XIW_MIRROR(slot, published)                                            \
	Mirror { #slot, offsetof(verbs_context_ops, slot), addr(published) }
	const std::array mirrors = {
		XIW_MIRROR(advise_mr, v.advise_mr),
		XIW_MIRROR(alloc_dm, v.alloc_dm),
		XIW_MIRROR(alloc_mw, o.alloc_mw),
		XIW_MIRROR(alloc_null_mr, v.alloc_null_mr),
		XIW_MIRROR(alloc_parent_domain, v.alloc_parent_domain),
		XIW_MIRROR(alloc_pd, o._compat_alloc_pd),
		XIW_MIRROR(alloc_td, v.alloc_td),
		XIW_MIRROR(async_event, o._compat_async_event),
		XIW_MIRROR(attach_counters_point_flow, v.attach_counters_point_flow),
		XIW_MIRROR(attach_mcast, o._compat_attach_mcast),
		XIW_MIRROR(bind_mw, o.bind_mw),
		XIW_MIRROR(close_xrcd, v.close_xrcd),
		XIW_MIRROR(cq_event, o._compat_cq_event),
		XIW_MIRROR(create_ah, o._compat_create_ah),
		XIW_MIRROR(create_counters, v.create_counters),
		XIW_MIRROR(create_cq, o._compat_create_cq),
		XIW_MIRROR(create_flow, v.ibv_create_flow),
		XIW_MIRROR(create_flow_action_esp, v.create_flow_action_esp),
		XIW_MIRROR(create_qp, o._compat_create_qp),
		XIW_MIRROR(create_qp_ex, v.create_qp_ex),
		XIW_MIRROR(create_rwq_ind_table, v.create_rwq_ind_table),
		XIW_MIRROR(create_srq, o._compat_create_srq),
		XIW_MIRROR(create_srq_ex, v.create_srq_ex),
		XIW_MIRROR(create_wq, v.create_wq),
		XIW_MIRROR(dealloc_mw, o.dealloc_mw),
		XIW_MIRROR(dealloc_pd, o._compat_dealloc_pd),
		XIW_MIRROR(dealloc_td, v.dealloc_td),
		XIW_MIRROR(dereg_mr, o._compat_dereg_mr),
		XIW_MIRROR(destroy_ah, o._compat_destroy_ah),
		XIW_MIRROR(destroy_counters, v.destroy_counters),
		XIW_MIRROR(destroy_cq, o._compat_destroy_cq),
		XIW_MIRROR(destroy_flow, v.ibv_destroy_flow),
		XIW_MIRROR(destroy_flow_action, v.destroy_flow_action),
		XIW_MIRROR(destroy_qp, o._compat_destroy_qp),
		XIW_MIRROR(destroy_rwq_ind_table, v.destroy_rwq_ind_table),
		XIW_MIRROR(destroy_srq, o._compat_destroy_srq),
		XIW_MIRROR(destroy_wq, v.destroy_wq),
		XIW_MIRROR(detach_mcast, o._compat_detach_mcast),
		XIW_MIRROR(free_dm, v.free_dm),
		XIW_MIRROR(get_srq_num, v.get_srq_num),
		XIW_MIRROR(modify_cq, v.modify_cq),
		XIW_MIRROR(modify_flow_action_esp, v.modify_flow_action_esp),
		XIW_MIRROR(modify_qp, o._compat_modify_qp),
		XIW_MIRROR(modify_qp_rate_limit, v.modify_qp_rate_limit),
		XIW_MIRROR(modify_srq, o._compat_modify_srq),
		XIW_MIRROR(modify_wq, v.modify_wq),
		XIW_MIRROR(open_qp, v.open_qp),
		XIW_MIRROR(open_xrcd, v.open_xrcd),
		XIW_MIRROR(poll_cq, o.poll_cq),
		XIW_MIRROR(post_recv, o.post_recv),
		XIW_MIRROR(post_send, o.post_send),
		XIW_MIRROR(post_srq_ops, v.post_srq_ops),
		XIW_MIRROR(post_srq_recv, o.post_srq_recv),
		XIW_MIRROR(query_device_ex, v.query_device_ex),
		XIW_MIRROR(query_qp, o._compat_query_qp),
		XIW_MIRROR(query_rt_values, v.query_rt_values),
		XIW_MIRROR(query_srq, o._compat_query_srq),
		XIW_MIRROR(read_counters, v.read_counters),
		XIW_MIRROR(reg_dm_mr, v.reg_dm_mr),
		XIW_MIRROR(reg_mr, o._compat_reg_mr),
		XIW_MIRROR(req_notify_cq, o.req_notify_cq),
		XIW_MIRROR(rereg_mr, o._compat_rereg_mr),
		XIW_MIRROR(resize_cq, o._compat_resize_cq),
	};
#undef XIW_MIRROR
	// NOLINTEND(cppcoreguidelines-macro-usage)

	/*
	 * 63 mirrored slots here, 12 reached by calls below, and create_cq_ex,
	 * which only libibverbs's internal wrapper reaches: with the other 75
	 * in place and 76 in all, it cannot be anywhere but its own.
	 */
	EXPECT_EQ(mirrors.size(), 63U);
	for (const Mirror &m : mirrors) {
		EXPECT_EQ(m.published, marker_at(m.offset))
			<< m.slot << " is not where libibverbs looks for it";
	}
}

TEST_F(RealLibibverbs, DispatchesPrivateSlotsFromOurOffsets)
{
	set_marker_ops();
	ibv_context *ctx = ibctx();

	calls = Calls{};
	calls.pd.context = ctx;
	calls.mr.context = ctx;
	calls.dm.context = ctx;

	EXPECT_EQ(ibv_import_pd(ctx, 7), &calls.pd);
	EXPECT_EQ(calls.last, "import_pd");
	EXPECT_EQ(calls.handle, 7U);

	ibv_unimport_pd(&calls.pd);
	EXPECT_EQ(calls.last, "unimport_pd");

	EXPECT_EQ(ibv_import_mr(&calls.pd, 9), &calls.mr);
	EXPECT_EQ(calls.last, "import_mr");
	EXPECT_EQ(calls.handle, 9U);

	ibv_unimport_mr(&calls.mr);
	EXPECT_EQ(calls.last, "unimport_mr");

	EXPECT_EQ(ibv_import_dm(ctx, 11), &calls.dm);
	EXPECT_EQ(calls.last, "import_dm");
	EXPECT_EQ(calls.handle, 11U);

	ibv_unimport_dm(&calls.dm);
	EXPECT_EQ(calls.last, "unimport_dm");

	EXPECT_EQ(ibv_reg_dmabuf_mr(&calls.pd, 0, 4096, 0, 13, 0), &calls.mr);
	EXPECT_EQ(calls.last, "reg_dmabuf_mr");
	EXPECT_EQ(calls.handle, 13U);

	ibv_qp qp{};
	qp.context = ctx;
	ibv_ece ece{};
	ece.vendor_id = 1;
	EXPECT_EQ(ibv_query_ece(&qp, &ece), 0);
	EXPECT_EQ(calls.last, "query_ece");
	EXPECT_EQ(ibv_set_ece(&qp, &ece), 0);
	EXPECT_EQ(calls.last, "set_ece");
	/*
	 * Flags 1 (IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS in rdma-core 46
	 * and later): newer libibverbs answers 0 without asking the
	 * provider for flags it does not know, so only a known one shows
	 * the call reached our slot.
	 */
	EXPECT_EQ(ibv_query_qp_data_in_order(&qp, IBV_WR_SEND, 1), 0);
	EXPECT_EQ(calls.last, "query_qp_data_in_order");
	EXPECT_EQ(calls.handle, 1U);

	ibv_port_attr port_attr{};
	EXPECT_EQ(ibv_query_port(ctx, 3, &port_attr), 0);
	EXPECT_EQ(calls.last, "query_port");
	EXPECT_EQ(calls.handle, 3U);

	EXPECT_EQ(ibv_close_device(ctx), 0);
	EXPECT_EQ(calls.last, "free_context");
	if (calls.last == "free_context") {
		ctx_ = nullptr; /* freed by rec_free_context */
		EXPECT_EQ(dev_->vdev.refcount, 1);
	}
}

} // namespace
