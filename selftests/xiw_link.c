// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdma link add/delete for xiw, and the port following its netdev.
 */
#include <rdma/xiw-abi.h>

#include "kselftest_harness.h"
#include "xiw_util.h"

#define MAC0 "02:11:22:33:44:55"
#define MAC1 "02:11:22:33:44:66"

FIXTURE(link) {
	char out[4096];
};

FIXTURE_SETUP(link)
{
	ASSERT_EQ(0, sh("modprobe xiw"));
	ASSERT_EQ(0, dummy_add("xd0", MAC0));
	ASSERT_EQ(0, dummy_add("xd1", MAC1));
	ASSERT_EQ(0, sh("rdma link add xiw0 type xiw netdev xd0"));
}

FIXTURE_TEARDOWN(link)
{
	sh("rdma link delete xiw0 2>/dev/null; rdma link delete xiw1 2>/dev/null");
	sh("ip link del xd0 2>/dev/null; ip link del xd1 2>/dev/null");
	sh("ip link del xt0 2>/dev/null");
	EXPECT_FALSE(ibdev_exists("xiw0"));
	EXPECT_FALSE(ibdev_exists("xiw1"));
}

TEST_F(link, creates_rnic)
{
	char buf[128], abi[16];

	ASSERT_LT(0, ibdev_attr("xiw0", "node_type", buf, sizeof(buf)));
	EXPECT_STREQ("4: RNIC", buf);
	ASSERT_LT(0, ibdev_attr("xiw0", XIW_SYSFS_ABI_ATTR, buf, sizeof(buf)));
	snprintf(abi, sizeof(abi), "%d", XIW_ABI_VERSION);
	EXPECT_STREQ(abi, buf);
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/link_layer", buf, sizeof(buf)));
	EXPECT_STREQ("Ethernet", buf);
	EXPECT_FALSE(path_exists("/sys/class/infiniband/xiw0/ports/2"));
	ASSERT_LT(0, ibdev_attr("xiw0", "node_desc", buf, sizeof(buf)));
	EXPECT_STREQ("xiw software iWARP", buf);
}

TEST_F(link, shown_by_rdma_tool)
{
	ASSERT_EQ(0, xsh(self->out, sizeof(self->out), "rdma link show xiw0/1"));
	EXPECT_NE(NULL, strstr(self->out, "netdev xd0"));
	EXPECT_NE(NULL, strstr(self->out, "state ACTIVE"));
	EXPECT_NE(NULL, strstr(self->out, "physical_state LINK_UP"));
}

TEST_F(link, delete_removes_device)
{
	ASSERT_EQ(0, sh("rdma link delete xiw0"));
	EXPECT_FALSE(ibdev_exists("xiw0"));
	/* The netdev is free again: a new link on it works. */
	ASSERT_EQ(0, sh("rdma link add xiw1 type xiw netdev xd0"));
	EXPECT_TRUE(ibdev_exists("xiw1"));
}

TEST_F(link, second_link_on_netdev_refused)
{
	EXPECT_NE(0, xsh(self->out, sizeof(self->out),
			 "rdma link add xiw1 type xiw netdev xd0"));
	EXPECT_NE(NULL, strstr(self->out, "File exists")) TH_LOG("%s", self->out);
	EXPECT_FALSE(ibdev_exists("xiw1"));
	EXPECT_TRUE(ibdev_exists("xiw0"));
}

TEST_F(link, name_in_use_refused)
{
	EXPECT_NE(0, sh("rdma link add xiw0 type xiw netdev xd1 2>/dev/null"));
	/* The failed attempt left nothing on xd1: a link there still works. */
	ASSERT_EQ(0, sh("rdma link add xiw1 type xiw netdev xd1"));
	ASSERT_EQ(0, xsh(self->out, sizeof(self->out), "rdma link show xiw1/1"));
	EXPECT_NE(NULL, strstr(self->out, "netdev xd1"));
}

TEST_F(link, unknown_netdev_refused)
{
	EXPECT_NE(0, xsh(self->out, sizeof(self->out),
			 "rdma link add xiw1 type xiw netdev nosuchdev"));
	EXPECT_NE(NULL, strstr(self->out, "No such device")) TH_LOG("%s", self->out);
	EXPECT_FALSE(ibdev_exists("xiw1"));
}

TEST_F(link, loopback_refused)
{
	EXPECT_NE(0, xsh(self->out, sizeof(self->out),
			 "rdma link add xiw1 type xiw netdev lo"));
	EXPECT_NE(NULL, strstr(self->out, "Operation not supported"))
		TH_LOG("%s", self->out);
	EXPECT_FALSE(ibdev_exists("xiw1"));
}

TEST_F(link, tun_refused)
{
	ASSERT_EQ(0, sh("ip tuntap add xt0 mode tun"));
	EXPECT_NE(0, xsh(self->out, sizeof(self->out),
			 "rdma link add xiw1 type xiw netdev xt0"));
	EXPECT_NE(NULL, strstr(self->out, "Operation not supported"))
		TH_LOG("%s", self->out);
	EXPECT_FALSE(ibdev_exists("xiw1"));
}

TEST_F(link, port_follows_admin_state)
{
	char st[64], ph[64];

	ASSERT_EQ(0, sh("ip link set xd0 down"));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/state", st, sizeof(st)));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/phys_state", ph, sizeof(ph)));
	EXPECT_STREQ("1: DOWN", st);
	EXPECT_STREQ("3: Disabled", ph);

	ASSERT_EQ(0, sh("ip link set xd0 up"));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/state", st, sizeof(st)));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/phys_state", ph, sizeof(ph)));
	EXPECT_STREQ("4: ACTIVE", st);
	EXPECT_STREQ("5: LinkUp", ph);
}

TEST_F(link, port_follows_carrier)
{
	char st[64], ph[64];

	ASSERT_EQ(0, sh("ip link set xd0 carrier off"));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/state", st, sizeof(st)));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/phys_state", ph, sizeof(ph)));
	EXPECT_STREQ("1: DOWN", st);
	EXPECT_STREQ("2: Polling", ph);
	ASSERT_EQ(0, sh("ip link set xd0 carrier on"));
	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/state", st, sizeof(st)));
	EXPECT_STREQ("4: ACTIVE", st);
}

TEST_F(link, gid_and_guid_from_mac)
{
	char buf[128];

	ASSERT_LT(0, ibdev_attr("xiw0", "ports/1/gids/0", buf, sizeof(buf)));
	EXPECT_STREQ("0211:2233:4455:0000:0000:0000:0000:0000", buf);
	/* EUI-64 from the MAC, universal/local bit inverted. */
	ASSERT_LT(0, ibdev_attr("xiw0", "node_guid", buf, sizeof(buf)));
	EXPECT_STREQ("0011:22ff:fe33:4455", buf);
}

static bool gid_is(const char *dev, const char *want)
{
	char buf[128];

	return ibdev_attr(dev, "ports/1/gids/0", buf, sizeof(buf)) > 0 &&
	       !strcmp(buf, want);
}

TEST_F(link, gid_follows_mac_change)
{
	ASSERT_EQ(0, sh("ip link set xd0 address 02:aa:bb:cc:dd:ee"));
	/* The core refreshes its GID cache from a work item. */
	EXPECT_TRUE(WAIT_UNTIL(gid_is("xiw0",
			"02aa:bbcc:ddee:0000:0000:0000:0000:0000"), 5000));
}

TEST_F(link, netdev_unregister_removes_device)
{
	ASSERT_EQ(0, sh("ip link del xd0"));
	EXPECT_TRUE(WAIT_UNTIL(!ibdev_exists("xiw0"), 5000));
	/* Nothing of xiw0 is left to pin the name. */
	ASSERT_EQ(0, sh("rdma link add xiw0 type xiw netdev xd1"));
}

TEST_F(link, netdev_rename_followed)
{
	ASSERT_EQ(0, sh("ip link set xd0 down && ip link set xd0 name xd9 && ip link set xd9 up"));
	ASSERT_EQ(0, xsh(self->out, sizeof(self->out), "rdma link show xiw0/1"));
	EXPECT_NE(NULL, strstr(self->out, "netdev xd9")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "state ACTIVE")) TH_LOG("%s", self->out);
	sh("ip link set xd9 down && ip link set xd9 name xd0");
}

TEST_HARNESS_MAIN
