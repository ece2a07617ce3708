// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The provider's entry points, end to end through libibverbs, against a
 * fake kernel.
 *
 * Without the xiw module there is no uverbs device, so the test plays the
 * kernel (fake_kernel.h). The queues and the data path have tests of their
 * own (queues_test.cpp, datapath_test.cpp).
 */
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <fcntl.h>

#include <gtest/gtest.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "fake_kernel.h"
#include "ibverbs_private.h"
#include "match.h"
#include "xiw.h"

namespace {

using xiw_test::kernel;
using xiw_test::SeenCommand;

bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

template <typename Fn> const void *addr(Fn fn)
{
	return reinterpret_cast<const void *>(fn);
}

using Provider = xiw_test::FakeDevice;

TEST_F(Provider, OpensAndClosesAContext)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	EXPECT_EQ(ctx->device, &vdev_->device);
	EXPECT_EQ(ctx->cmd_fd, kernel.cmd_fd);
	EXPECT_EQ(ctx->async_fd, kernel.async_fd);
	EXPECT_EQ(ctx->num_comp_vectors, 1);
	EXPECT_EQ(vdev_->refcount, 2);

	EXPECT_EQ(addr(ctx->ops._compat_alloc_pd), addr(&xiw::alloc_pd));
	EXPECT_EQ(addr(ctx->ops._compat_dealloc_pd), addr(&xiw::dealloc_pd));
	EXPECT_EQ(addr(verbs_get_ctx(ctx)->query_device_ex),
		  addr(&xiw::query_device_ex));

	const int cmd_fd = kernel.cmd_fd;
	const int async_fd = kernel.async_fd;
	EXPECT_EQ(ibv_close_device(ctx), 0);
	EXPECT_FALSE(fd_is_open(cmd_fd));
	EXPECT_FALSE(fd_is_open(async_fd));
}

TEST_F(Provider, PublishesTheQueueAndDataPathOps)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	/* The data path, which libibverbs's inline verbs call directly. */
	EXPECT_EQ(addr(ctx->ops.poll_cq), addr(&xiw::poll_cq));
	EXPECT_EQ(addr(ctx->ops.post_send), addr(&xiw::post_send));
	EXPECT_EQ(addr(ctx->ops.post_recv), addr(&xiw::post_recv));
	EXPECT_EQ(addr(ctx->ops.post_srq_recv), addr(&xiw::post_srq_recv));
	EXPECT_EQ(addr(ctx->ops.req_notify_cq), addr(&xiw::req_notify_cq));
	/* The rest, seen through libibverbs's compatibility pointers. */
	EXPECT_EQ(addr(ctx->ops._compat_create_cq), addr(&xiw::create_cq));
	EXPECT_EQ(addr(ctx->ops._compat_destroy_cq), addr(&xiw::destroy_cq));
	EXPECT_EQ(addr(ctx->ops._compat_create_qp), addr(&xiw::create_qp));
	EXPECT_EQ(addr(ctx->ops._compat_modify_qp), addr(&xiw::modify_qp));
	EXPECT_EQ(addr(ctx->ops._compat_query_qp), addr(&xiw::query_qp));
	EXPECT_EQ(addr(ctx->ops._compat_destroy_qp), addr(&xiw::destroy_qp));
	EXPECT_EQ(addr(ctx->ops._compat_create_srq), addr(&xiw::create_srq));
	EXPECT_EQ(addr(ctx->ops._compat_modify_srq), addr(&xiw::modify_srq));
	EXPECT_EQ(addr(ctx->ops._compat_query_srq), addr(&xiw::query_srq));
	EXPECT_EQ(addr(ctx->ops._compat_destroy_srq), addr(&xiw::destroy_srq));
	EXPECT_EQ(addr(ctx->ops._compat_reg_mr), addr(&xiw::reg_mr));
	EXPECT_EQ(addr(ctx->ops._compat_dereg_mr), addr(&xiw::dereg_mr));
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

/* The kernel sees the core command alone, and room for its xiw response. */
TEST_F(Provider, SendsGetContextWithRoomForTheDriverResponse)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	const SeenCommand *seen = last_seen(IB_USER_VERBS_CMD_GET_CONTEXT);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_get_context));
	EXPECT_EQ(seen->out_words * 4U, sizeof(ib_uverbs_get_context_resp) +
						 sizeof(xiw_alloc_ucontext_resp));
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST_F(Provider, RefusesAKernelOfAnotherAbi)
{
	kernel.abi_version = XIW_ABI_VERSION + 1;
	const int cmd_fd = kernel.cmd_fd;

	errno = 0;
	EXPECT_EQ(open_context(), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_FALSE(fd_is_open(cmd_fd));
	EXPECT_FALSE(fd_is_open(kernel.async_fd));
}

TEST_F(Provider, RefusesAKernelWithoutTheDriverResponse)
{
	kernel.write_driver_resp = false;

	errno = 0;
	EXPECT_EQ(open_context(), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(Provider, PassesOnTheKernelsError)
{
	kernel.get_context_errno = EPERM;
	const int cmd_fd = kernel.cmd_fd;

	errno = 0;
	EXPECT_EQ(open_context(), nullptr);
	EXPECT_EQ(errno, EPERM);
	EXPECT_FALSE(fd_is_open(cmd_fd));
}

TEST_F(Provider, AllocatesAndDeallocatesAPd)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	ibv_pd *pd = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr) << std::strerror(errno);
	EXPECT_EQ(pd->context, ctx);
	EXPECT_EQ(pd->handle, 42U);
	const SeenCommand *seen = last_seen(IB_USER_VERBS_CMD_ALLOC_PD);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_alloc_pd));
	EXPECT_EQ(seen->out_words * 4U, sizeof(ib_uverbs_alloc_pd_resp));

	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_TRUE(kernel.live_pds.empty());
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST_F(Provider, KeepsAPdTheKernelRefusesToFree)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr) << std::strerror(errno);

	kernel.dealloc_pd_errno = EBUSY;
	EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
	EXPECT_EQ(pd->handle, 42U); /* still ours, still valid */

	kernel.dealloc_pd_errno = 0;
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST_F(Provider, ReportsAFailedPdAllocation)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	kernel.alloc_pd_errno = ENOSPC;
	errno = 0;
	EXPECT_EQ(ibv_alloc_pd(ctx), nullptr);
	EXPECT_EQ(errno, ENOSPC);
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST_F(Provider, QueriesAPort)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	ibv_port_attr attr{};
	EXPECT_EQ(ibv_query_port(ctx, 1, &attr), 0);
	EXPECT_EQ(kernel.queried_port, 1);
	EXPECT_EQ(attr.state, IBV_PORT_ACTIVE);
	EXPECT_EQ(attr.max_mtu, IBV_MTU_4096);
	EXPECT_EQ(attr.active_mtu, IBV_MTU_1024);
	EXPECT_EQ(attr.gid_tbl_len, 1);
	const SeenCommand *seen = last_seen(IB_USER_VERBS_CMD_QUERY_PORT);
	ASSERT_NE(seen, nullptr);
	EXPECT_EQ(seen->in_words * 4U, sizeof(struct ibv_query_port));
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST_F(Provider, QueriesTheDevice)
{
	ibv_context *ctx = open_context();
	ASSERT_NE(ctx, nullptr) << std::strerror(errno);

	ibv_device_attr_ex attr_ex{};
	EXPECT_EQ(ibv_query_device_ex(ctx, nullptr, &attr_ex), 0);
	EXPECT_EQ(attr_ex.orig_attr.max_qp, 77);
	EXPECT_EQ(attr_ex.orig_attr.phys_port_cnt, 1);
	/* libibverbs takes this one from our verbs_device's sysfs entry. */
	EXPECT_EQ(attr_ex.phys_port_cnt_ex, kSysfsPorts);
	EXPECT_NE(last_seen(IB_USER_VERBS_CMD_FLAG_EXTENDED |
			    IB_USER_VERBS_EX_CMD_QUERY_DEVICE),
		  nullptr);

	ibv_device_attr attr{};
	EXPECT_EQ(ibv_query_device(ctx, &attr), 0);
	EXPECT_EQ(attr.max_qp, 77);
	EXPECT_NE(last_seen(IB_USER_VERBS_CMD_QUERY_DEVICE), nullptr);
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

/* ---- Pieces that need no kernel at all ------------------------------- */

TEST(DeviceOps, DescribeTheXiwProvider)
{
	const verbs_device_ops &ops = xiw::kDeviceOps;

	EXPECT_STREQ(ops.name, "xiw");
	EXPECT_EQ(ops.match_min_abi_version, XIW_ABI_VERSION);
	EXPECT_EQ(ops.match_max_abi_version, XIW_ABI_VERSION);
	/* Non-null and empty: libibverbs 44 walks it without a null check. */
	ASSERT_NE(ops.match_table, nullptr);
	EXPECT_EQ(ops.match_table[0].kind, 0 /* VERBS_MATCH_SENTINEL */);
	EXPECT_EQ(ops.static_providers, nullptr);
	EXPECT_EQ(addr(ops.match_device), addr(&xiw::match_device));
	EXPECT_EQ(addr(ops.alloc_context), addr(&xiw::alloc_context));
	EXPECT_EQ(ops.import_context, nullptr);
	EXPECT_EQ(addr(ops.alloc_device), addr(&xiw::alloc_device));
	EXPECT_EQ(addr(ops.uninit_device), addr(&xiw::uninit_device));
}

TEST(DeviceOps, AllocateAZeroedDevice)
{
	verbs_sysfs_dev sysfs{};
	verbs_device *vdev = xiw::alloc_device(&sysfs);
	ASSERT_NE(vdev, nullptr);

	const auto *bytes = reinterpret_cast<const std::byte *>(vdev);
	EXPECT_TRUE(std::all_of(bytes, bytes + sizeof(*vdev),
				[](std::byte b) { return b == std::byte{0}; }));
	EXPECT_EQ(xiw::Device::from(vdev), reinterpret_cast<xiw::Device *>(vdev));
	xiw::uninit_device(vdev);
}

TEST(UcontextResp, AcceptsOnlyOurAbiVersion)
{
	EXPECT_EQ(xiw::check_ucontext_resp({XIW_ABI_VERSION, 0}), 0);
	EXPECT_EQ(xiw::check_ucontext_resp({0, 0}), EINVAL);
	EXPECT_EQ(xiw::check_ucontext_resp({XIW_ABI_VERSION + 1, 0}), EINVAL);
}

TEST(Objects, ConvertBackFromTheLibibverbsPointers)
{
	xiw::Context ctx{};
	EXPECT_EQ(xiw::Context::from(&ctx.vctx.context), &ctx);

	xiw::Pd pd{};
	EXPECT_EQ(xiw::Pd::from(&pd.ibpd), &pd);
}

} // namespace
