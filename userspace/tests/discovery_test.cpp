// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device discovery, end to end, with the provider as shipped: libibverbs
 * loads libxiw-rdmav34.so from the build tree (RDMAV_DRIVERS), which
 * registers itself from its constructor; ibv_get_device_list() then scans a
 * fake sysfs tree and offers each device to it. It must claim the xiw
 * device and no other. Nothing of the provider is linked into this binary.
 *
 * libibverbs reads sysfs below $SYSFS_PATH, but also insists that
 * /dev/infiniband/uverbsN exists; this binary defines stat(), which
 * libibverbs's call binds to ahead of libc's, to make those device nodes
 * appear. Every other path goes to the real system call. When the kernel
 * has RDMA netlink (ib_core loaded), libibverbs asks it instead of sysfs and
 * the fake tree would be ignored, so the test skips.
 */
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <gtest/gtest.h>

#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"

namespace {

constexpr std::string_view kCdevPrefix = "/dev/infiniband/uverbs";
constexpr unsigned int kUverbsMajor = 231;
constexpr unsigned int kUverbsFirstMinor = 192;

} // namespace

/* Interposes libc's stat() for libibverbs; see the top of the file. */
extern "C" int stat(const char *__restrict path,
		    struct stat *__restrict buf) noexcept
{
	const std::string_view name(path);

	if (name.substr(0, kCdevPrefix.size()) == kCdevPrefix) {
		*buf = {};
		buf->st_mode = S_IFCHR | 0666;
		buf->st_rdev = makedev(kUverbsMajor, kUverbsFirstMinor);
		return 0;
	}
	return static_cast<int>(
		syscall(SYS_newfstatat, AT_FDCWD, path, buf, 0));
}

namespace {

bool kernel_has_rdma_netlink()
{
	const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);

	if (fd < 0) {
		return false;
	}
	close(fd);
	return true;
}

class Discovery : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		std::string tmpl = (std::filesystem::temp_directory_path() /
				    "xiw-sysfs-XXXXXX")
					   .string();
		if (mkdtemp(tmpl.data()) == nullptr) {
			return;
		}
		root() = tmpl;
		write(root() / "class/infiniband_verbs/abi_version", "6\n");

		const std::string ours = std::to_string(XIW_ABI_VERSION) + "\n";
		const std::string other =
			std::to_string(XIW_ABI_VERSION + 1) + "\n";
		/* Ours. */
		add_device(0, "myxiw", XIW_ABI_VERSION, ours.c_str());
		/* Some other driver's. */
		add_device(1, "roce0", XIW_ABI_VERSION, nullptr);
		/* Ours, but of another ABI. */
		add_device(2, "oldxiw", XIW_ABI_VERSION + 1, other.c_str());

		// Both read once, at libibverbs's first device scan.
		setenv("SYSFS_PATH", root().c_str(), 1);
		setenv("RDMAV_DRIVERS", XIW_PROVIDER_STEM, 1);
	}

	static void TearDownTestSuite()
	{
		if (!root().empty()) {
			std::error_code ec;
			std::filesystem::remove_all(root(), ec);
		}
	}

	static void write(const std::filesystem::path &file,
			  std::string_view content)
	{
		std::filesystem::create_directories(file.parent_path());
		std::ofstream(file) << content;
	}

	/* A uverbs device and its ib device, as the kernel lays them out. */
	static void add_device(unsigned int index, const std::string &ibdev,
			       unsigned int uverbs_abi, const char *xiw_attr)
	{
		const std::filesystem::path uverbs =
			root() / "class/infiniband_verbs" /
			("uverbs" + std::to_string(index));
		const std::filesystem::path dev = root() / "class/infiniband" / ibdev;

		write(uverbs / "ibdev", ibdev + "\n");
		write(uverbs / "dev",
		      std::to_string(kUverbsMajor) + ":" +
			      std::to_string(kUverbsFirstMinor + index) + "\n");
		write(uverbs / "abi_version", std::to_string(uverbs_abi) + "\n");
		write(dev / "node_type", "4: RNIC\n");
		if (xiw_attr != nullptr) {
			write(dev / XIW_SYSFS_ABI_ATTR, xiw_attr);
		}
	}

	void SetUp() override
	{
		if (kernel_has_rdma_netlink()) {
			GTEST_SKIP() << "RDMA netlink present: libibverbs would "
					"not read the fake sysfs";
		}
		ASSERT_FALSE(root().empty());
		int num = 0;
		list_ = ibv_get_device_list(&num);
		ASSERT_NE(list_, nullptr) << std::strerror(errno);
	}

	void TearDown() override
	{
		if (list_ != nullptr) {
			ibv_free_device_list(list_);
		}
	}

	/* The listed device of that name, or null. */
	[[nodiscard]] verbs_device *find(std::string_view name) const
	{
		for (ibv_device **dev = list_; *dev != nullptr; ++dev) {
			if (name == ibv_get_device_name(*dev)) {
				return reinterpret_cast<verbs_device *>(*dev);
			}
		}
		return nullptr;
	}

	/* Whether the device was claimed by the provider built here. */
	static bool claimed_by_us(const verbs_device *vdev)
	{
		Dl_info info{};

		if (dladdr(vdev->ops, &info) == 0 || info.dli_fname == nullptr) {
			return false;
		}
		return std::filesystem::equivalent(info.dli_fname,
						   XIW_PROVIDER_FILE);
	}

	/* The fake sysfs root, shared by the suite. */
	static std::filesystem::path &root()
	{
		static std::filesystem::path path;
		return path;
	}

	ibv_device **list_ = nullptr;
};

TEST_F(Discovery, ClaimsTheXiwDevice)
{
	verbs_device *vdev = find("myxiw");
	ASSERT_NE(vdev, nullptr);

	EXPECT_TRUE(claimed_by_us(vdev));
	ASSERT_NE(vdev->ops, nullptr);
	EXPECT_EQ(std::string_view(vdev->ops->name), "xiw");
	EXPECT_EQ(vdev->ops->match_min_abi_version, XIW_ABI_VERSION);
	EXPECT_EQ(vdev->ops->match_max_abi_version, XIW_ABI_VERSION);
	EXPECT_EQ(vdev->device.node_type, IBV_NODE_RNIC);
	EXPECT_EQ(vdev->device.transport_type, IBV_TRANSPORT_IWARP);
	EXPECT_EQ(std::string_view(
			  static_cast<const char *>(vdev->device.dev_name)),
		  "uverbs0");
	EXPECT_EQ(std::filesystem::path(
			  static_cast<const char *>(vdev->device.ibdev_path)),
		  root() / "class/infiniband/myxiw");
	ASSERT_NE(vdev->sysfs, nullptr);
	EXPECT_EQ(std::string_view(
			  static_cast<const char *>(vdev->sysfs->ibdev_name)),
		  "myxiw");
	EXPECT_EQ(vdev->sysfs->abi_ver, unsigned{XIW_ABI_VERSION});
	EXPECT_EQ(vdev->sysfs->node_type, IBV_NODE_RNIC);
}

/*
 * A device no provider claims is not listed at all, so its absence alone
 * proves nothing: the scan must have read the fake tree (it listed
 * myxiw), and then another driver's device must be absent, or listed
 * by another provider.
 */
TEST_F(Discovery, LeavesOtherDevicesAlone)
{
	ASSERT_NE(find("myxiw"), nullptr) << "the scan did not read the fake sysfs";
	const verbs_device *vdev = find("roce0");

	EXPECT_TRUE(vdev == nullptr || !claimed_by_us(vdev))
		<< "roce0 was claimed by the xiw provider";
}

/*
 * libibverbs's ABI gate refuses it after match_device accepted it: it is
 * not listed (no other provider takes an xiw device), while myxiw, of
 * the same tree and scan, is.
 */
TEST_F(Discovery, RefusesAnXiwDeviceOfAnotherAbi)
{
	ASSERT_NE(find("myxiw"), nullptr) << "the scan did not read the fake sysfs";
	EXPECT_EQ(find("oldxiw"), nullptr)
		<< "oldxiw (ABI " << XIW_ABI_VERSION + 1 << ") was listed";
}

} // namespace
