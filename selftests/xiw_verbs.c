// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw through libibverbs and the xiw provider: discovery whatever the
 * device's name, device and port attributes, port events, PDs.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "xiw_util.h"

#define DEV "rnic7"	/* deliberately not "xiw<N>" */
#define MAC "02:00:00:00:20:01"

static struct ibv_device *find_dev(struct ibv_device **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

FIXTURE(verbs) {
	struct ibv_device **list;
	struct ibv_context *ctx;
};

FIXTURE_SETUP(verbs)
{
	struct ibv_device *dev;

	ASSERT_EQ(0, sh("modprobe xiw"));
	ASSERT_EQ(0, dummy_add("xv0", MAC));
	ASSERT_EQ(0, sh("rdma link add " DEV " type xiw netdev xv0"));
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	dev = find_dev(self->list, DEV);
	ASSERT_NE(NULL, dev) TH_LOG("the xiw provider did not claim " DEV);
	self->ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("ibv_open_device: %s", strerror(errno));
}

FIXTURE_TEARDOWN(verbs)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
	sh("rdma link delete " DEV " 2>/dev/null; rdma link delete rxe7 2>/dev/null");
	sh("ip link del xv0 2>/dev/null; ip link del xv1 2>/dev/null");
	sh("rdma link delete xiwlim0 2>/dev/null; rdma link delete xiwlim1 2>/dev/null;"
	   " ip link del xv2 2>/dev/null; ip link del xv3 2>/dev/null");
	/* The defaults, whatever a failed test left (admin-guide.rst). */
	sh("echo 128 > /sys/module/xiw/parameters/max_ird 2>/dev/null;"
	   " echo 128 > /sys/module/xiw/parameters/max_ord 2>/dev/null");
}

TEST_F(verbs, listed_as_iwarp_rnic)
{
	struct ibv_device *dev = find_dev(self->list, DEV);

	ASSERT_NE(NULL, dev);
	EXPECT_EQ(IBV_NODE_RNIC, dev->node_type);
	EXPECT_EQ(IBV_TRANSPORT_IWARP, dev->transport_type);
	EXPECT_STREQ("iWARP NIC", ibv_node_type_str(dev->node_type));
}

/* The limits of Documentation/limits.rst, as the device reports them. */
TEST_F(verbs, device_limits)
{
	struct ibv_device_attr a;
	char guid[64], want[64];
	uint64_t g;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_EQ(4096, a.max_qp);
	EXPECT_EQ(16384, a.max_qp_wr);
	/* uverbs reports the lesser of the send and receive SGE limits. */
	EXPECT_EQ(6, a.max_sge);
	EXPECT_EQ(8, a.max_sge_rd);
	EXPECT_EQ(4096, a.max_cq);
	EXPECT_EQ(1 << 20, a.max_cqe);
	EXPECT_EQ(65536, a.max_mr);
	EXPECT_EQ(1ULL << 40, a.max_mr_size);
	EXPECT_EQ(65536, a.max_pd);
	/* max_ird/max_ord, default 128 (see ird_ord_limits_follow_params) */
	EXPECT_EQ(128, a.max_qp_rd_atom);
	EXPECT_EQ(128, a.max_qp_init_rd_atom);
	EXPECT_EQ(4096LL * 128, a.max_res_rd_atom);
	EXPECT_EQ(1024, a.max_srq);
	EXPECT_EQ(16384, a.max_srq_wr);
	EXPECT_EQ(6, a.max_srq_sge);
	EXPECT_EQ(65536, a.max_mw);
	/* Memory windows of type 1 and 2B */
	EXPECT_NE(0, a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	EXPECT_NE(0, a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	/* RFC 7306 atomics, atomic among all of the device's QPs */
	EXPECT_EQ(IBV_ATOMIC_HCA, a.atomic_cap);
	EXPECT_EQ(1, a.phys_port_cnt);
	EXPECT_EQ(0xffffffu, a.vendor_id);

	g = be64toh(a.node_guid);
	snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x",
		 (unsigned int)(g >> 48), (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
	ASSERT_LT(0, ibdev_attr(DEV, "node_guid", guid, sizeof(guid)));
	EXPECT_STREQ(guid, want);
}

static int param_set(const char *name, int val)
{
	return sh("echo %d > /sys/module/xiw/parameters/%s", val, name);
}

/* Query a fresh xiw device on a fresh dummy netdev; 0 or -1. */
static int limits_of_new_device(const char *ib, const char *nd,
				struct ibv_device_attr *a,
				struct ibv_context **ctxp)
{
	struct ibv_context *ctx;

	if (sh("ip link add %s type dummy && ip link set %s up && "
	       "rdma link add %s type xiw netdev %s", nd, nd, ib, nd))
		return -1;
	ctx = open_dev(ib);
	if (!ctx)
		return -1;
	if (ibv_query_device(ctx, a)) {
		ibv_close_device(ctx);
		return -1;
	}
	if (ctxp)
		*ctxp = ctx;
	else
		ibv_close_device(ctx);
	return 0;
}

/*
 * The module parameters max_ird and max_ord set the IRD/ORD limits of
 * the devices created after them (the core caches device attributes):
 * query_device reports them, modify_qp refuses more, values out of 1..128
 * are held to it, and a device made before keeps its own.
 */
TEST_F(verbs, ird_ord_limits_follow_params)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT,
				  .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr a;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ASSERT_EQ(0, param_set("max_ird", 8));
	ASSERT_EQ(0, param_set("max_ord", 4));
	ASSERT_EQ(0, limits_of_new_device("xiwlim0", "xv2", &a, &ctx));
	EXPECT_EQ(8, a.max_qp_rd_atom);
	EXPECT_EQ(4, a.max_qp_init_rd_atom);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_EQ(128, a.max_qp_rd_atom) TH_LOG("a device made before changed");

	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS));
	qa.max_dest_rd_atomic = 9;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &qa, IBV_QP_MAX_DEST_RD_ATOMIC));
	qa.max_rd_atomic = 5;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC));
	qa.max_dest_rd_atomic = 8;
	qa.max_rd_atomic = 4;
	EXPECT_EQ(0, ibv_modify_qp(qp, &qa, IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MAX_QP_RD_ATOMIC));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);

	ASSERT_EQ(0, param_set("max_ird", 0));
	ASSERT_EQ(0, param_set("max_ord", 1000));
	ASSERT_EQ(0, limits_of_new_device("xiwlim1", "xv3", &a, NULL));
	EXPECT_EQ(1, a.max_qp_rd_atom);
	EXPECT_EQ(128, a.max_qp_init_rd_atom);
}

TEST_F(verbs, port_attributes)
{
	struct ibv_port_attr p;
	union ibv_gid gid;
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0x20, 0x01 };

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &p));
	EXPECT_EQ(IBV_PORT_ACTIVE, p.state);
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, p.link_layer);
	EXPECT_EQ(IBV_MTU_1024, p.active_mtu);	/* netdev MTU 1500 */
	EXPECT_EQ(1, p.gid_tbl_len);
	EXPECT_EQ(0x7fffffffu, p.max_msg_sz);	/* what the send path takes */
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &gid));
	EXPECT_EQ(0, memcmp(gid.raw, mac, sizeof(mac)));
	EXPECT_NE(0, ibv_query_gid(self->ctx, 1, 1, &gid));
	EXPECT_NE(0, ibv_query_port(self->ctx, 2, &p));
}

TEST_F(verbs, active_mtu_follows_netdev)
{
	static const struct { int mtu; enum ibv_mtu want; } t[] = {
		{ 9000, IBV_MTU_4096 }, { 2500, IBV_MTU_2048 },
		{ 600, IBV_MTU_512 }, { 1500, IBV_MTU_1024 },
	};
	struct ibv_port_attr p;
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ASSERT_EQ(0, sh("ip link set xv0 mtu %d", t[i].mtu));
		ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &p));
		EXPECT_EQ(t[i].want, p.active_mtu) TH_LOG("mtu %d", t[i].mtu);
	}
}

TEST_F(verbs, port_events_follow_admin_state)
{
	ASSERT_EQ(0, sh("ip link set xv0 down"));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_PORT_ERR, 5000));
	ASSERT_EQ(0, sh("ip link set xv0 up"));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_PORT_ACTIVE, 5000));
}

TEST_F(verbs, port_events_follow_carrier)
{
	ASSERT_EQ(0, sh("ip link set xv0 carrier off"));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_PORT_ERR, 5000));
	ASSERT_EQ(0, sh("ip link set xv0 carrier on"));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_PORT_ACTIVE, 5000));
}

TEST_F(verbs, no_event_without_state_change)
{
	/* An MTU change is no port state change: no PORT_ERR/ACTIVE. */
	ASSERT_EQ(0, sh("ip link set xv0 mtu 1400"));
	EXPECT_FALSE(wait_async(self->ctx, IBV_EVENT_PORT_ERR, 500));
	EXPECT_FALSE(wait_async(self->ctx, IBV_EVENT_PORT_ACTIVE, 100));
}

static bool gid_is_mac(struct ibv_context *ctx, const uint8_t *mac)
{
	union ibv_gid gid;

	return !ibv_query_gid(ctx, 1, 0, &gid) && !memcmp(gid.raw, mac, 6);
}

/* The 6.1 core raises no GID_CHANGE to user space for iWARP ports. */
TEST_F(verbs, gid_follows_mac)
{
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0x20, 0x99 };

	ASSERT_EQ(0, sh("ip link set xv0 address 02:00:00:00:20:99"));
	EXPECT_TRUE(WAIT_UNTIL(gid_is_mac(self->ctx, mac), 5000));
}

TEST_F(verbs, pd_alloc_dealloc)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);

	ASSERT_NE(NULL, pd) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
	EXPECT_EQ(self->ctx, pd->context);
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F_TIMEOUT(verbs, pd_limit_enforced, 300)
{
	enum { LIMIT = 65536 };
	struct ibv_pd **pds = calloc(LIMIT + 1, sizeof(*pds));
	int n, i;

	ASSERT_NE(NULL, pds);
	for (n = 0; n <= LIMIT; n++) {
		pds[n] = ibv_alloc_pd(self->ctx);
		if (!pds[n])
			break;
	}
	EXPECT_EQ(LIMIT, n);
	EXPECT_EQ(ENOMEM, errno);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, ibv_dealloc_pd(pds[i]));
	/* The count went back down: one more fits again. */
	pds[0] = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pds[0]);
	EXPECT_EQ(0, ibv_dealloc_pd(pds[0]));
	free(pds);
}

/*
 * Removing a device that a process has open does not wait for the
 * process: its objects are destroyed, it gets DEVICE_FATAL, and verbs on
 * it fail from then on. Both ways a device goes away are covered.
 */
static void removal_while_open(struct __test_metadata *_metadata,
			       FIXTURE_DATA(verbs) *self, const char *cmd)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_port_attr p;

	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, sh("%s", cmd));
	EXPECT_TRUE(WAIT_UNTIL(!ibdev_exists(DEV), 5000));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_DEVICE_FATAL, 5000));
	EXPECT_NE(0, ibv_query_port(self->ctx, 1, &p));
	EXPECT_EQ(NULL, ibv_alloc_pd(self->ctx));
	/* Freeing what the kernel already destroyed is not an error. */
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(verbs, link_delete_while_open)
{
	removal_while_open(_metadata, self, "rdma link delete " DEV);
}

TEST_F(verbs, netdev_delete_while_open)
{
	removal_while_open(_metadata, self, "ip link del xv0");
}

/*
 * With xiw's driver file as the only one libibverbs reads, an rxe device
 * must stay unclaimed: matching is by xiw's own sysfs attribute. (With
 * all providers, rxe7 would be listed, claimed by librxe.)
 */
TEST_F(verbs, does_not_claim_other_drivers)
{
	char dir[] = "/tmp/xiw-drivers-XXXXXX";
	char path[128], out[4096];
	FILE *f;

	if (sh("modprobe rdma_rxe 2>/dev/null"))
		SKIP(return, "rdma_rxe is not available in this kernel");
	ASSERT_EQ(0, dummy_add("xv1", "02:00:00:00:20:02"));
	ASSERT_EQ(0, sh("rdma link add rxe7 type rxe netdev xv1"));

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/xiw.driver", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("driver xiw\n", f);
	fclose(f);
	/* This test runs in its own process: a private mount namespace
	 * hides the other providers from it alone.
	 */
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_EQ(0, mount(dir, "/etc/libibverbs.d", NULL, MS_BIND, NULL));

	/* A new process, since this one loaded every provider already. */
	ASSERT_EQ(0, xsh(out, sizeof(out), "ibv_devices"));
	EXPECT_NE(NULL, strstr(out, DEV)) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "rxe7")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
