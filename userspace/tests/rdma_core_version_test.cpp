// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The supported libibverbs range (rdma_core_version.h) and the strict
 * decimal parser under it (parse.h).
 */
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "parse.h"
#include "rdma_core_version.h"

namespace {

using xiw::libibverbs_version_supported;
using xiw::parse_u32;
using xiw::rdma_core_major_from_libibverbs_version;
using xiw::rdma_core_major_supported;

// The functions are constexpr so that they can be used in static_asserts.
static_assert(libibverbs_version_supported("1.14.44.0"));
static_assert(!libibverbs_version_supported("1.14.57.0"));

TEST(ParseU32, AcceptsPlainDecimals)
{
	EXPECT_EQ(parse_u32("0"), std::optional<std::uint32_t>(0));
	EXPECT_EQ(parse_u32("1"), std::optional<std::uint32_t>(1));
	EXPECT_EQ(parse_u32("007"), std::optional<std::uint32_t>(7));
	EXPECT_EQ(parse_u32("4294967295"),
		  std::optional<std::uint32_t>(
			  std::numeric_limits<std::uint32_t>::max()));
}

TEST(ParseU32, RefusesEverythingElse)
{
	for (const std::string_view text :
	     {"", "x", "-1", "+1", " 1", "1 ", "0x10", "1.0", "4294967296",
	      "99999999999999999999"}) {
		EXPECT_EQ(parse_u32(text), std::nullopt) << '"' << text << '"';
	}
	// An embedded NUL ends nothing: the length is what counts.
	EXPECT_EQ(parse_u32(std::string_view("1\0", 2)), std::nullopt);
}

TEST(RdmaCoreVersion, ParsesTheRdmaCoreMajor)
{
	EXPECT_EQ(rdma_core_major_from_libibverbs_version("1.14.44.0"),
		  std::optional<std::uint32_t>(44));
	EXPECT_EQ(rdma_core_major_from_libibverbs_version("1.14.56.4"),
		  std::optional<std::uint32_t>(56));
	EXPECT_EQ(rdma_core_major_from_libibverbs_version("1.14.44"),
		  std::optional<std::uint32_t>(44));
	EXPECT_EQ(rdma_core_major_from_libibverbs_version("1.15.57.0"),
		  std::optional<std::uint32_t>(57));
}

TEST(RdmaCoreVersion, RefusesMalformedVersions)
{
	for (const std::string_view text :
	     {"", "garbage", "1", "1.14", "1.14.", "1.14.44.", ".1.14.44",
	      "1..44.0", "1.14.44.0.0", "2.14.44.0", "0.14.44.0", "1.14.x.0",
	      "1.14.44.0\n", "v1.14.44.0", "1.14.-44.0"}) {
		EXPECT_EQ(rdma_core_major_from_libibverbs_version(text),
			  std::nullopt)
			<< '"' << text << '"';
		EXPECT_FALSE(libibverbs_version_supported(text))
			<< '"' << text << '"';
	}
}

TEST(RdmaCoreVersion, RangeIs36To56)
{
	EXPECT_EQ(xiw::kRdmaCoreMajorMin, 36U);
	EXPECT_EQ(xiw::kRdmaCoreMajorMax, 56U);
	EXPECT_FALSE(rdma_core_major_supported(35));
	EXPECT_TRUE(rdma_core_major_supported(36));
	EXPECT_TRUE(rdma_core_major_supported(44));
	EXPECT_TRUE(rdma_core_major_supported(56));
	EXPECT_FALSE(rdma_core_major_supported(57));
	EXPECT_FALSE(rdma_core_major_supported(0));
}

TEST(RdmaCoreVersion, AcceptsOnlyVersionsInTheRange)
{
	EXPECT_TRUE(libibverbs_version_supported("1.14.44.0"));
	EXPECT_TRUE(libibverbs_version_supported("1.14.36.0"));
	EXPECT_TRUE(libibverbs_version_supported("1.14.56.9"));
	EXPECT_FALSE(libibverbs_version_supported("1.14.35.0"));
	EXPECT_FALSE(libibverbs_version_supported("1.14.57.0"));
	EXPECT_FALSE(libibverbs_version_supported("1.14.34.17"));
}

TEST(RdmaCoreVersion, EveryMajorAroundTheRange)
{
	for (std::uint32_t major = 0; major < 100; ++major) {
		const std::string version =
			"1.14." + std::to_string(major) + ".0";
		EXPECT_EQ(libibverbs_version_supported(version),
			  major >= 36 && major <= 56)
			<< version;
	}
}

} // namespace
