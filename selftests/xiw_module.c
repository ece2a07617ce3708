// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Module life cycle: autoload by "rdma link add", unload with devices
 * present, repeated load/link/unlink/unload, and a parameter given at
 * load (crc_impl, which init applies: a value it refuses fails the load).
 */
#include "kselftest_harness.h"
#include "xiw_util.h"

FIXTURE(module) {
	char out[4096];
};

FIXTURE_SETUP(module)
{
	ASSERT_EQ(0, dummy_add("xm0", "02:00:00:00:10:01"));
	ASSERT_EQ(0, dummy_add("xm1", "02:00:00:00:10:02"));
}

FIXTURE_TEARDOWN(module)
{
	sh("rdma link delete xm0dev 2>/dev/null; rdma link delete xm1dev 2>/dev/null");
	sh("ip link del xm0 2>/dev/null; ip link del xm1 2>/dev/null");
	/* Leave the module loaded for the next test file. */
	sh("modprobe xiw");
}

TEST_F(module, link_add_autoloads)
{
	if (xiw_loaded())
		ASSERT_EQ(0, sh("rmmod xiw"));
	ASSERT_FALSE(xiw_loaded());
	ASSERT_EQ(0, sh("rdma link add xm0dev type xiw netdev xm0"));
	EXPECT_TRUE(xiw_loaded());
	EXPECT_TRUE(ibdev_exists("xm0dev"));
}

TEST_F(module, unload_removes_devices)
{
	ASSERT_EQ(0, sh("modprobe xiw"));
	ASSERT_EQ(0, sh("rdma link add xm0dev type xiw netdev xm0"));
	ASSERT_EQ(0, sh("rdma link add xm1dev type xiw netdev xm1"));
	ASSERT_EQ(0, sh("rmmod xiw"));
	EXPECT_FALSE(xiw_loaded());
	EXPECT_FALSE(ibdev_exists("xm0dev"));
	EXPECT_FALSE(ibdev_exists("xm1dev"));
	/* The netdevs were released: they can go away at once. */
	EXPECT_EQ(0, sh("ip link del xm0 && ip link del xm1"));
}

/* Slow under emulation: each round loads and unloads the module. */
TEST_F_TIMEOUT(module, unload_races_netdev_removal, 180)
{
	int i;

	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, sh("modprobe xiw"));
		ASSERT_EQ(0, dummy_add("xm0", "02:00:00:00:10:01"));
		ASSERT_EQ(0, sh("rdma link add xm0dev type xiw netdev xm0"));
		/* The netdev's removal queues an unregistration; rmmod
		 * must wait for it rather than race it.
		 */
		ASSERT_EQ(0, sh("ip link del xm0 & rmmod xiw; wait"));
		EXPECT_FALSE(xiw_loaded());
		EXPECT_FALSE(ibdev_exists("xm0dev"));
	}
}

/*
 * A netdev removed while "rdma link add" registers on it: whichever wins,
 * no device may outlive the netdev (newlink's publish check, or the
 * notifier, removes it) and the netdev's removal must not hang.
 */
TEST_F_TIMEOUT(module, link_add_races_netdev_removal, 180)
{
	int i;

	ASSERT_EQ(0, sh("modprobe xiw"));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, dummy_add("xm0", "02:00:00:00:10:01"));
		sh("rdma link add xm0dev type xiw netdev xm0 2>/dev/null & "
		   "ip link del xm0; wait");
		EXPECT_TRUE(WAIT_UNTIL(!ibdev_exists("xm0dev"), 5000))
			TH_LOG("round %d", i);
	}
}

/* Done means: 20 rounds in one guest, no warning, nothing left behind. */
TEST_F_TIMEOUT(module, churn_20_rounds, 300)
{
	int i;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, sh("modprobe xiw")) TH_LOG("round %d", i);
		ASSERT_EQ(0, sh("rdma link add xm0dev type xiw netdev xm0"));
		ASSERT_EQ(0, sh("rdma link add xm1dev type xiw netdev xm1"));
		ASSERT_TRUE(ibdev_exists("xm0dev"));
		ASSERT_EQ(0, sh("rdma link delete xm0dev"));
		ASSERT_EQ(0, sh("rdma link delete xm1dev"));
		ASSERT_EQ(0, sh("rmmod xiw")) TH_LOG("round %d", i);
	}
	EXPECT_FALSE(xiw_loaded());
	ASSERT_EQ(0, xsh(self->out, sizeof(self->out), "rdma link show"));
	EXPECT_EQ(NULL, strstr(self->out, "xm0")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, sh("ip link del xm0 && ip link del xm1"));
}

/*
 * crc_impl given to modprobe is parsed before init runs; init applies
 * it without timing anything (only auto times), and a value the
 * parameter refuses fails the load. Reloaded plain afterwards, so the
 * next programs get the default.
 */
TEST_F(module, crc_impl_at_load)
{
	char buf[256];

	if (xiw_loaded())
		ASSERT_EQ(0, sh("rmmod xiw"));
	EXPECT_NE(0, sh("modprobe xiw crc_impl=fastest 2>/dev/null"));
	ASSERT_FALSE(xiw_loaded());
	ASSERT_EQ(0, sh("modprobe xiw crc_impl=generic"));
	ASSERT_LT(0, read_text("/sys/module/xiw/parameters/crc_impl", buf,
			       sizeof(buf)));
	EXPECT_STREQ("generic", buf);
	sh("mountpoint -q /sys/kernel/debug || "
	   "mount -t debugfs none /sys/kernel/debug >/dev/null 2>&1");
	ASSERT_EQ(0, xsh(buf, sizeof(buf), "cat /sys/kernel/debug/xiw/crc32c"));
	EXPECT_NE(NULL, strstr(buf, "mode generic\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "crypto_ns 0\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "using generic\n")) TH_LOG("%s", buf);
	ASSERT_EQ(0, sh("rmmod xiw && modprobe xiw"));
	ASSERT_EQ(0, xsh(buf, sizeof(buf), "cat /sys/kernel/debug/xiw/crc32c"));
	EXPECT_NE(NULL, strstr(buf, "mode auto\n")) TH_LOG("%s", buf);
	EXPECT_EQ(NULL, strstr(buf, "crypto_ns 0\n")) TH_LOG("%s", buf);
}

TEST_HARNESS_MAIN
