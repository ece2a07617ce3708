// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The provider's entry points, end to end through libibverbs, against a
 * fake kernel.
 *
 * Without the xiw module there is no uverbs device, so this test plays the
 * kernel. The command fd is /dev/null: ioctl() on it fails with ENOTTY,
 * which libibverbs takes for a kernel without the ioctl interface, so it
 * falls back to the legacy write() commands. This binary defines write(),
 * which libibverbs's calls bind to ahead of libc's, and answers commands
 * written to that fd the way the kernel's uverbs write handlers do: the
 * response goes to the user address given in the command. Every other fd
 * goes to the real system call.
 */
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"
#include "match.h"
#include "xiw.h"

namespace {

struct SeenCommand {
	std::uint32_t command;
	std::uint16_t in_words;
	std::uint16_t out_words;
	std::size_t bytes;
};

struct FakeKernel {
	int cmd_fd = -1;
	int async_fd = -1; /* handed out by GET_CONTEXT */

	/* What GET_CONTEXT answers. */
	int get_context_errno = 0;
	bool write_driver_resp = true;
	std::uint32_t abi_version = XIW_ABI_VERSION;

	int alloc_pd_errno = 0;
	int dealloc_pd_errno = 0;
	std::uint32_t next_pd_handle = 42;
	std::vector<std::uint32_t> live_pds;

	std::uint8_t queried_port = 0;
	std::vector<SeenCommand> seen;
};
FakeKernel kernel;

/* Copies the answer to the user address the command names. */
void put_response(std::uint64_t response, const void *data, std::size_t len)
{
	auto *dst = reinterpret_cast<void *>( // NOLINT(performance-no-int-to-ptr)
		static_cast<std::uintptr_t>(response));
	std::memcpy(dst, data, len);
}

template <typename T> T read_at(const std::byte *cmd, std::size_t offset)
{
	T value{};
	std::memcpy(&value, cmd + offset, sizeof(value));
	return value;
}

ssize_t fail(int err)
{
	errno = err;
	return -1;
}

ssize_t fake_ex_command(const std::byte *cmd, std::size_t len,
			const ib_uverbs_cmd_hdr &hdr)
{
	const auto ex = read_at<ib_uverbs_ex_cmd_hdr>(cmd, sizeof(hdr));
	const std::uint32_t command =
		hdr.command & ~IB_USER_VERBS_CMD_FLAG_EXTENDED;

	if (command != IB_USER_VERBS_EX_CMD_QUERY_DEVICE) {
		return fail(EOPNOTSUPP);
	}
	ib_uverbs_ex_query_device_resp resp{};
	const std::size_t out = std::min(std::size_t{hdr.out_words} * 8,
					 sizeof(resp));
	resp.base.max_qp = 77;
	resp.base.phys_port_cnt = 1;
	resp.response_length = static_cast<std::uint32_t>(out);
	put_response(ex.response, &resp, out);
	return static_cast<ssize_t>(len);
}

ssize_t fake_uverbs_write(const void *buf, std::size_t len)
{
	const auto *cmd = static_cast<const std::byte *>(buf);
	ib_uverbs_cmd_hdr hdr{};

	if (len < sizeof(hdr)) {
		return fail(EINVAL);
	}
	std::memcpy(&hdr, cmd, sizeof(hdr));
	kernel.seen.push_back({hdr.command, hdr.in_words, hdr.out_words, len});

	if ((hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) != 0) {
		return fake_ex_command(cmd, len, hdr);
	}
	if (std::size_t{hdr.in_words} * 4 != len) {
		return fail(EINVAL);
	}
	const std::size_t out = std::size_t{hdr.out_words} * 4;
	/* Every core command below starts with the response address. */
	const auto response = read_at<std::uint64_t>(cmd, sizeof(hdr));

	switch (hdr.command) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: {
		/* The kernel's core response, then the driver's, back to back. */
		ib_uverbs_get_context_resp core{};
		xiw_alloc_ucontext_resp drv{};
		std::array<std::byte, sizeof(core) + sizeof(drv)> resp{};

		if (kernel.get_context_errno != 0) {
			return fail(kernel.get_context_errno);
		}
		if (out < sizeof(core)) {
			return fail(ENOSPC);
		}
		kernel.async_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		core.async_fd = static_cast<std::uint32_t>(kernel.async_fd);
		core.num_comp_vectors = 1;
		drv.abi_version = kernel.abi_version;
		std::memcpy(resp.data(), &core, sizeof(core));
		std::memcpy(resp.data() + sizeof(core), &drv, sizeof(drv));
		put_response(response, resp.data(),
			     kernel.write_driver_resp ?
				     std::min(out, resp.size()) :
				     sizeof(core));
		break;
	}
	case IB_USER_VERBS_CMD_QUERY_DEVICE: {
		ib_uverbs_query_device_resp resp{};

		resp.max_qp = 77;
		resp.phys_port_cnt = 1;
		put_response(response, &resp, std::min(out, sizeof(resp)));
		break;
	}
	case IB_USER_VERBS_CMD_QUERY_PORT: {
		ib_uverbs_query_port_resp resp{};

		kernel.queried_port = read_at<std::uint8_t>(
			cmd, sizeof(hdr) + offsetof(ib_uverbs_query_port, port_num));
		resp.state = IBV_PORT_ACTIVE;
		resp.max_mtu = IBV_MTU_4096;
		resp.active_mtu = IBV_MTU_1024;
		resp.gid_tbl_len = 1;
		resp.pkey_tbl_len = 1;
		put_response(response, &resp, std::min(out, sizeof(resp)));
		break;
	}
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		ib_uverbs_alloc_pd_resp resp{};

		if (kernel.alloc_pd_errno != 0) {
			return fail(kernel.alloc_pd_errno);
		}
		resp.pd_handle = kernel.next_pd_handle++;
		kernel.live_pds.push_back(resp.pd_handle);
		put_response(response, &resp, std::min(out, sizeof(resp)));
		break;
	}
	case IB_USER_VERBS_CMD_DEALLOC_PD: {
		const auto handle = read_at<std::uint32_t>(cmd, sizeof(hdr));
		auto it = std::find(kernel.live_pds.begin(),
				    kernel.live_pds.end(), handle);

		if (kernel.dealloc_pd_errno != 0) {
			return fail(kernel.dealloc_pd_errno);
		}
		if (it == kernel.live_pds.end()) {
			return fail(EINVAL);
		}
		kernel.live_pds.erase(it);
		break;
	}
	default:
		return fail(EOPNOTSUPP);
	}
	return static_cast<ssize_t>(len);
}

bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

template <typename Fn> const void *addr(Fn fn)
{
	return reinterpret_cast<const void *>(fn);
}

} // namespace

/* Interposes libc's write() for libibverbs; see the top of the file. */
extern "C" ssize_t write(int fd, const void *buf, std::size_t count)
{
	if (fd >= 0 && fd == kernel.cmd_fd) {
		return fake_uverbs_write(buf, count);
	}
	return syscall(SYS_write, fd, buf, count);
}

namespace {

class Provider : public ::testing::Test {
protected:
	void SetUp() override
	{
		kernel = FakeKernel{};

		// What libibverbs does with a device the provider claimed.
		vdev_ = xiw::kDeviceOps.alloc_device(&sysfs_);
		ASSERT_NE(vdev_, nullptr);
		vdev_->ops = &xiw::kDeviceOps;
		vdev_->refcount = 1;
		vdev_->sysfs = &sysfs_;
		sysfs_.num_ports = kSysfsPorts;
		constexpr std::string_view kName = "xiw_test0";
		kName.copy(static_cast<char *>(vdev_->device.name), kName.size());

		kernel.cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		ASSERT_GE(kernel.cmd_fd, 0);
	}

	void TearDown() override
	{
		kernel.cmd_fd = -1;
		if (vdev_ == nullptr) {
			return;
		}
		EXPECT_EQ(vdev_->refcount, 1) << "a context was leaked";
		xiw::kDeviceOps.uninit_device(vdev_);
	}

	/* ibv_open_device() without the sysfs lookup. */
	ibv_context *open_context()
	{
		verbs_context *vctx = xiw::kDeviceOps.alloc_context(
			&vdev_->device, kernel.cmd_fd, nullptr);
		return vctx == nullptr ? nullptr : &vctx->context;
	}

	[[nodiscard]] static const SeenCommand *last_seen(std::uint32_t command)
	{
		auto it = std::find_if(kernel.seen.rbegin(), kernel.seen.rend(),
				       [command](const SeenCommand &seen) {
					       return seen.command == command;
				       });
		return it == kernel.seen.rend() ? nullptr : &*it;
	}

	/* Distinct from the kernel's phys_port_cnt, to tell the two apart. */
	static constexpr std::uint32_t kSysfsPorts = 3;

	verbs_sysfs_dev sysfs_{};
	verbs_device *vdev_ = nullptr;
};

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
