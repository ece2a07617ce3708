// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device matching: see match.h.
 */
#include "match.h"

#include <array>
#include <cstddef>
#include <string_view>

#include <rdma/xiw-abi.h>

namespace xiw {

bool match_device(verbs_sysfs_dev *sysfs_dev) noexcept
{
	/*
	 * Room for any u32 and its newline. Longer content makes libibverbs
	 * fail the read rather than truncate it, which is a refusal too.
	 */
	std::array<char, 16> buf{};

	const int len = ibv_read_ibdev_sysfs_file(buf.data(), buf.size(),
						  sysfs_dev, "%s",
						  XIW_SYSFS_ABI_ATTR);
	/* Absent (rxe, siw, mlx5, ...), unreadable or empty. */
	if (len <= 0) {
		return false;
	}
	const std::string_view content(buf.data(),
				       static_cast<std::size_t>(len));
	return parse_abi_attr(content).has_value();
}

} // namespace xiw
