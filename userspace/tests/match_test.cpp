// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Which devices the provider claims: the attribute parser, and
 * match_device() end to end through libibverbs's own sysfs reader, on a
 * temporary directory standing in for /sys/class/infiniband/<ibdev>.
 */
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <gtest/gtest.h>

#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"
#include "match.h"

namespace {

using xiw::parse_abi_attr;

/* The attribute as an xiw kernel of this ABI writes it. */
std::string our_attr()
{
	return std::to_string(XIW_ABI_VERSION) + "\n";
}

TEST(ParseAbiAttr, AcceptsWhatTheKernelWrites)
{
	EXPECT_EQ(parse_abi_attr("1\n"), std::optional<std::uint32_t>(1));
	EXPECT_EQ(parse_abi_attr("1"), std::optional<std::uint32_t>(1));
	EXPECT_EQ(parse_abi_attr("2\n"), std::optional<std::uint32_t>(2));
	EXPECT_EQ(parse_abi_attr("4294967295\n"),
		  std::optional<std::uint32_t>(4294967295U));
}

TEST(ParseAbiAttr, RefusesAnythingButOneNumber)
{
	for (const std::string_view text :
	     {"", "\n", "x", "x\n", "99999999999999999999", "4294967296\n",
	      "1\n\n", "\n1", " 1", "1 \n", "-1", "0x1", "1.0", "one"}) {
		EXPECT_EQ(parse_abi_attr(text), std::nullopt)
			<< '"' << text << '"';
	}
}

/* A directory that plays /sys/class/infiniband/<ibdev>. */
class FakeIbdev : public ::testing::Test {
protected:
	void SetUp() override
	{
		std::string tmpl =
			(std::filesystem::temp_directory_path() / "xiw-match-XXXXXX")
				.string();
		ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
		dir_ = tmpl;

		// A node_type file, as every ib device has, so that the directory
		// is not trivially empty.
		write_attr("node_type", "4: RNIC\n");

		const std::string path = dir_.string();
		ASSERT_LT(path.size(), sizeof(sysfs_.ibdev_path));
		path.copy(static_cast<char *>(sysfs_.ibdev_path), path.size());
	}

	void TearDown() override
	{
		std::error_code ec;
		std::filesystem::remove_all(dir_, ec);
	}

	void write_attr(const char *name, std::string_view content) const
	{
		std::ofstream out(dir_ / name, std::ios::binary);
		out << content;
		ASSERT_TRUE(out.good());
	}

	bool matches() { return xiw::match_device(&sysfs_); }

	std::filesystem::path dir_;
	verbs_sysfs_dev sysfs_{};
};

TEST_F(FakeIbdev, ClaimsADeviceWithTheAttribute)
{
	write_attr(XIW_SYSFS_ABI_ATTR, our_attr());
	EXPECT_TRUE(matches());
}

TEST_F(FakeIbdev, ClaimsWithoutTrailingNewline)
{
	write_attr(XIW_SYSFS_ABI_ATTR, std::to_string(XIW_ABI_VERSION));
	EXPECT_TRUE(matches());
}

/*
 * Another ABI version is still an xiw device: libibverbs's range check
 * then reports the mismatch.
 */
TEST_F(FakeIbdev, ClaimsAnotherAbiVersion)
{
	write_attr(XIW_SYSFS_ABI_ATTR, "7\n");
	EXPECT_TRUE(matches());
}

/* rxe, siw, mlx5 and the rest have no such attribute. */
TEST_F(FakeIbdev, LeavesOtherDriversDevicesAlone)
{
	write_attr("fw_ver", "1.0.0\n");
	EXPECT_FALSE(matches());
}

TEST_F(FakeIbdev, RefusesAnEmptyAttribute)
{
	write_attr(XIW_SYSFS_ABI_ATTR, "");
	EXPECT_FALSE(matches());
}

TEST_F(FakeIbdev, RefusesANonNumber)
{
	write_attr(XIW_SYSFS_ABI_ATTR, "x\n");
	EXPECT_FALSE(matches());
}

TEST_F(FakeIbdev, RefusesAnOverlongNumber)
{
	write_attr(XIW_SYSFS_ABI_ATTR, "99999999999999999999\n");
	EXPECT_FALSE(matches());
}

TEST_F(FakeIbdev, RefusesAnAttributeThatIsADirectory)
{
	std::filesystem::create_directory(dir_ / XIW_SYSFS_ABI_ATTR);
	EXPECT_FALSE(matches());
}

/* The attribute is read from ibdev_path, not from anywhere else. */
TEST_F(FakeIbdev, ReadsFromIbdevPath)
{
	write_attr(XIW_SYSFS_ABI_ATTR, our_attr());
	ASSERT_TRUE(matches());
	sysfs_.ibdev_path[0] = '\0';
	EXPECT_FALSE(matches());
}

TEST(MatchDevice, RefusesANullDevice)
{
	EXPECT_FALSE(xiw::match_device(nullptr));
}

} // namespace
