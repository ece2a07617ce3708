// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Which RDMA devices are xiw's.
 *
 * The kernel driver reports RDMA_DRIVER_UNKNOWN, so libibverbs cannot match
 * it by driver id, and its ib_device is named by whoever ran
 * "rdma link add", so a name pattern would claim too much or too little.
 * Instead every xiw device publishes XIW_SYSFS_ABI_ATTR next to its other
 * sysfs attributes, and only xiw devices have it.
 */
#ifndef XIW_MATCH_H
#define XIW_MATCH_H

#include <cstdint>
#include <optional>
#include <string_view>

#include "ibverbs_private.h"
#include "parse.h"

namespace xiw {

/*
 * The attribute's content, either as the kernel writes it ("1\n") or as
 * libibverbs hands it over (the newline already stripped). Returns the ABI
 * version it names, or nothing if it is not a plain decimal number.
 */
constexpr std::optional<std::uint32_t>
parse_abi_attr(std::string_view content) noexcept
{
	if (!content.empty() && content.back() == '\n') {
		content.remove_suffix(1);
	}
	return parse_u32(content);
}

/*
 * verbs_device_ops::match_device. Claims a device when its sysfs directory
 * holds the attribute with a number in it, whatever the number: the ABI
 * range check that follows in libibverbs then explains a version mismatch
 * instead of the device silently going missing.
 */
bool match_device(verbs_sysfs_dev *sysfs_dev) noexcept;

} // namespace xiw

#endif // XIW_MATCH_H
