// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Strict decimal parsing, shared by the sysfs match (match.h) and the
 * rdma-core version check (rdma_core_version.h). constexpr so that both can
 * be checked at compile time; no locale, no errno, no exceptions.
 */
#ifndef XIW_PARSE_H
#define XIW_PARSE_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace xiw {

/*
 * One or more ASCII digits and nothing else (no sign, no blanks, no base
 * prefix), at most UINT32_MAX. Anything else is "no number": the callers
 * read text written by other programs and must not guess.
 */
constexpr std::optional<std::uint32_t> parse_u32(std::string_view text) noexcept
{
	constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
	constexpr std::uint64_t kBase = 10;

	if (text.empty()) {
		return std::nullopt;
	}
	std::uint64_t value = 0;
	for (const char c : text) {
		if (c < '0' || c > '9') {
			return std::nullopt;
		}
		value = value * kBase + static_cast<std::uint64_t>(c - '0');
		if (value > kMax) {
			return std::nullopt;
		}
	}
	return static_cast<std::uint32_t>(value);
}

} // namespace xiw

#endif // XIW_PARSE_H
