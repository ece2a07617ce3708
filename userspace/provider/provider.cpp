// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What libibverbs learns about the provider when it registers: how to
 * recognise an xiw device, and how to make and free the per-device object.
 */
#include <array>
#include <memory>
#include <new>

#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"
#include "match.h"
#include "xiw.h"

namespace xiw {

std::unique_ptr<Device> Device::create() noexcept
{
	return std::unique_ptr<Device>(new (std::nothrow) Device{});
}

verbs_device *alloc_device(verbs_sysfs_dev * /*sysfs_dev*/) noexcept
{
	std::unique_ptr<Device> dev = Device::create();

	if (!dev) {
		return nullptr;
	}
	return &dev.release()->vdev;
}

/* Called when the last context and the device list let go of the device. */
void uninit_device(verbs_device *vdev) noexcept
{
	const std::unique_ptr<Device> dev(Device::from(vdev));
}

/*
 * An empty table, not a null one: libibverbs 44 walks the table of every
 * provider for every device whose kernel driver has a driver id (rxe,
 * mlx5, ...) without checking for null, and crashed on ours. With only
 * the sentinel, every walk ends at once and match_device decides.
 */
constexpr std::array<verbs_match_ent, 1> kNoMatchTable{};

const verbs_device_ops kDeviceOps = {
	.name = "xiw",
	/* libibverbs compares these with the kernel's uverbs_abi_ver. */
	.match_min_abi_version = XIW_ABI_VERSION,
	.match_max_abi_version = XIW_ABI_VERSION,
	/* No entries: every unclaimed device goes to match_device. */
	.match_table = kNoMatchTable.data(),
	.static_providers = nullptr,
	.match_device = match_device,
	.alloc_context = alloc_context,
	.import_context = nullptr,
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
};

} // namespace xiw
