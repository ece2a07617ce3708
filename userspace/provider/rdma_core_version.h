// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Which libibverbs releases the private-ABI layout in ibverbs_private.h is
 * right for.
 *
 * PABI 34 covers rdma-core v34.0 to v56.x, but struct verbs_context_ops
 * gained slots inside it: import_dm/unimport_dm in v35 and
 * query_qp_data_in_order in v36. The 76-slot layout is therefore valid from
 * v36; v57 moved to PABI 57 (another symbol version and file suffix).
 *
 * This file is the one place the range is written down. CMake reads the two
 * constants below (cmake/LibibverbsVersion.cmake) and refuses to configure
 * against a libibverbs outside it, so keep each on one line in the form
 * "inline constexpr std::uint32_t kName = N;".
 */
#ifndef XIW_RDMA_CORE_VERSION_H
#define XIW_RDMA_CORE_VERSION_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "parse.h"

namespace xiw {

inline constexpr std::uint32_t kRdmaCoreMajorMin = 36;
inline constexpr std::uint32_t kRdmaCoreMajorMax = 56;

constexpr bool rdma_core_major_supported(std::uint32_t major) noexcept
{
	return major >= kRdmaCoreMajorMin && major <= kRdmaCoreMajorMax;
}

/*
 * libibverbs is versioned 1.<library ABI minor>.<rdma-core major>[.<minor>]:
 * pkg-config says "1.14.44.0" and the library file is libibverbs.so.1.14.44.0
 * for rdma-core 44.0. Returns the rdma-core major, or nothing if the text is
 * not of that form.
 */
constexpr std::optional<std::uint32_t>
rdma_core_major_from_libibverbs_version(std::string_view version) noexcept
{
	constexpr std::size_t kMinFields = 3;
	constexpr std::size_t kMaxFields = 4;
	constexpr std::size_t kMajorField = 2;

	std::optional<std::uint32_t> major;
	std::size_t fields = 0;
	for (;;) {
		const std::size_t dot = version.find('.');
		const std::optional<std::uint32_t> value =
			parse_u32(version.substr(0, dot));
		if (!value || fields == kMaxFields) {
			return std::nullopt;
		}
		if (fields == 0 && *value != 1) {
			return std::nullopt;
		}
		if (fields == kMajorField) {
			major = value;
		}
		++fields;
		if (dot == std::string_view::npos) {
			break;
		}
		version.remove_prefix(dot + 1);
	}
	if (fields < kMinFields) {
		return std::nullopt;
	}
	return major;
}

constexpr bool libibverbs_version_supported(std::string_view version) noexcept
{
	const std::optional<std::uint32_t> major =
		rdma_core_major_from_libibverbs_version(version);
	return major.has_value() && rdma_core_major_supported(*major);
}

} // namespace xiw

#endif // XIW_RDMA_CORE_VERSION_H
