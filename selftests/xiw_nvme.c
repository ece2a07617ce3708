// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * NVMe over RDMA on the device under test, both ends in this guest: an
 * nvmet target (configfs) exporting a memory-backed null_blk device on
 * 10.99.0.1:4420 over nvmet-rdma, and the kernel's nvme-rdma host
 * connected to it with nvme-cli. This is the first kernel ULP on xiw: it
 * needs fast registration (REG_MR, LOCAL_INV), Send with Invalidate and
 * RDMA Read into registered sinks (the target fetches write data).
 *
 * Every command runs under timeout(1); the guest's hung-task detector
 * (30 s, panicking) catches a kernel thread stuck where no timeout can
 * reach it. After each test the target is taken down, the device must
 * hold no RDMA resource any more (rdma res show) and the kernel log must
 * show no transport error since the test began: nvme-rdma hides a QP
 * error by reconnecting and retrying, so the data would still match.
 *
 * XIW_TEST_LINK_TYPE selects the device type as for xiw_rdma ("xiw" by
 * default, "siw" to validate the test).
 */
#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"

#define NQN		"nqn.2024-01.org.xiw:selftest"
#define CFS		"/sys/kernel/config/nvmet"
#define SUBSYS		CFS "/subsystems/" NQN
#define PORT		CFS "/ports/1"
#define NULLB		"/dev/nullb0"
#define PAT		"/tmp/xiw_nvme.pat"
#define BACK		"/tmp/xiw_nvme.back"
#define IO_MB		64
/* Seconds for one command: connect, disconnect, one dd. */
#define CMD_S		120

FIXTURE(nvme) {
	struct xr_link link;
	char mark[64];
	bool target;
	bool connected;
	char dev[300];
	char out[16384];
};

/* Write s to a configfs attribute; 0 or -errno. */
static int cfs_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}


/*
 * Kernel log lines that mean the transport failed even though the I/O
 * may still succeed: nvme-rdma recovers by reconnecting and requeues the
 * I/O (native multipath), so data checks alone would not notice.
 */
#define KLOG_BAD "QP fatal|QP event|failed with status|error recovery|" \
		 "Reconnecting|timeout|failed to connect|Terminate"

/* Transport errors logged since mark; 0 when there are none. */
static int klog_errors(FIXTURE_DATA(nvme) *self)
{
	return xr_klog_since(self->out, sizeof(self->out), self->mark,
			     KLOG_BAD);
}

/* nvme-rdma, nvmet-rdma and a 1 GiB memory-backed null_blk, once. */
static int load_modules(void)
{
	if (!path_exists("/sys/module/null_blk") &&
	    sh("modprobe null_blk nr_devices=1 gb=1 memory_backed=1 bs=4096"))
		return -1;
	if (!WAIT_UNTIL(path_exists(NULLB), 5000))
		return -1;
	if (!path_exists("/sys/module/nvmet_rdma") ||
	    !path_exists("/sys/module/nvme_rdma"))
		if (sh("modprobe -a nvmet nvmet-rdma nvme-rdma"))
			return -1;
	if (!path_exists("/sys/kernel/config/nvmet") &&
	    mount("configfs", "/sys/kernel/config", "configfs", 0, NULL))
		return -1;
	return path_exists(CFS) ? 0 : -1;
}

/* Undo whatever of the target configuration exists; quiet. */
static void target_down(void)
{
	unlink(PORT "/subsystems/" NQN);
	rmdir(PORT);
	if (path_exists(SUBSYS "/namespaces/1"))
		cfs_write(SUBSYS "/namespaces/1/enable", "0");
	rmdir(SUBSYS "/namespaces/1");
	rmdir(SUBSYS);
}

/* Subsystem NQN, any host, namespace 1 on null_blk, RDMA port 4420. */
static int target_up(struct __test_metadata *_metadata)
{
	int err;

	target_down();
	if (mkdir(SUBSYS, 0755) || mkdir(SUBSYS "/namespaces/1", 0755) ||
	    mkdir(PORT, 0755)) {
		TH_LOG("mkdir in %s: %s", CFS, strerror(errno));
		return -1;
	}
	err = cfs_write(SUBSYS "/attr_allow_any_host", "1") ?:
	      cfs_write(SUBSYS "/namespaces/1/device_path", NULLB) ?:
	      cfs_write(SUBSYS "/namespaces/1/enable", "1") ?:
	      cfs_write(PORT "/addr_trtype", "rdma") ?:
	      cfs_write(PORT "/addr_adrfam", "ipv4") ?:
	      cfs_write(PORT "/addr_traddr", XR_ADDR) ?:
	      cfs_write(PORT "/addr_trsvcid", "4420");
	if (err) {
		TH_LOG("configfs attribute: %s", strerror(-err));
		return -1;
	}
	/* Linking enables the port: nvmet-rdma listens through rdma_cm. */
	if (symlink(SUBSYS, PORT "/subsystems/" NQN)) {
		TH_LOG("enabling the port (rdma_listen on " XR_ADDR
		       ":4420): %s", strerror(errno));
		show_dmesg();
		return -1;
	}
	return 0;
}

FIXTURE_SETUP(nvme)
{
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	ASSERT_EQ(0, load_modules())
		TH_LOG("cannot load null_blk, nvmet-rdma, nvme-rdma or mount configfs");
	xr_klog_mark(self->mark, sizeof(self->mark), "xiw_nvme",
		     _metadata->name);
	ASSERT_EQ(0, target_up(_metadata));
	self->target = true;
}

static int host_disconnect(FIXTURE_DATA(nvme) *self)
{
	int rc = RUN(self, CMD_S, "nvme disconnect -n " NQN);

	self->connected = false;
	self->dev[0] = '\0';
	return rc;
}

FIXTURE_TEARDOWN(nvme)
{
	if (self->connected)
		host_disconnect(self);
	if (self->target)
		target_down();
	unlink(PAT);
	unlink(BACK);
}

/*
 * The block device of namespace 1 of our subsystem: a /sys/block/nvme*
 * whose device (controller, or subsystem with native multipath) has our
 * NQN. Copies "/dev/<name>" into dev; true when found.
 */
static bool find_ns(char *dev, size_t len)
{
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	char p[512], nqn[256];
	bool hit = false;

	while (d && !hit && (e = readdir(d))) {
		if (strncmp(e->d_name, "nvme", 4))
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/device/subsysnqn",
			 e->d_name);
		if (read_text(p, nqn, sizeof(nqn)) <= 0 || strcmp(nqn, NQN))
			continue;
		snprintf(dev, len, "/dev/%s", e->d_name);
		hit = path_exists(dev);
	}
	if (d)
		closedir(d);
	return hit;
}

static bool ns_gone(void)
{
	char dev[300];

	return !find_ns(dev, sizeof(dev));
}

/* nvme connect, then wait for the namespace's block device. */
static void host_connect(struct __test_metadata *_metadata,
			 FIXTURE_DATA(nvme) *self)
{
	long long t0 = now_ms();
	int rc;

	rc = RUN(self, CMD_S, "nvme connect -t rdma -a " XR_ADDR
		 " -s 4420 -n " NQN " -l 5 -c 1");
	self->connected = rc == 0;
	ASSERT_EQ(0, rc) TH_LOG("nvme connect failed");
	ASSERT_TRUE(WAIT_UNTIL(find_ns(self->dev, sizeof(self->dev)), 20000)) {
		TH_LOG("no block device with subsysnqn " NQN);
		sh("ls -l /sys/block /sys/class/nvme >&2; nvme list >&2");
		show_dmesg();
	}
	xr_trace("connected %s in %lld ms", self->dev, now_ms() - t0);
}

/*
 * Nothing of nvme or nvmet is left on the device: no PD, QP, cm_id, MR,
 * context or SRQ. CQs may stay: nvme-rdma and nvmet-rdma take theirs
 * from the core's per-device CQ pool (ib_cq_pool_get), which keeps them
 * until the device goes; each must have no user left.
 */
static bool res_clean(const char *ibdev, char *line, size_t len)
{
	char out[8192], *s;

	if (!xr_res_zero_but(ibdev, "cq", line, len))
		return false;
	/* Pool CQs: "... users 0 poll-ctx ..."; any other count is a user. */
	if (xsh(out, sizeof(out), "rdma res show cq dev %s", ibdev) != 0)
		return false;
	for (s = out; (s = strstr(s, " users ")); s++)
		if (strtol(s + 7, NULL, 10))
			return false;
	return true;
}

/* Take the target down, then the device must be empty. */
static void expect_clean(struct __test_metadata *_metadata,
			 FIXTURE_DATA(nvme) *self)
{
	char line[512] = "";
	bool ok;

	target_down();
	self->target = false;
	ok = WAIT_UNTIL(res_clean(self->link.ibdev, line, sizeof(line)), 15000);
	if (!ok) {
		fflush(NULL);
		sh("(rdma res show; rdma res show qp; rdma res show cq; "
		   "rdma res show cm_id; rdma res show mr) | sed 's/^/# /' >&2");
	}
	ASSERT_TRUE(ok) TH_LOG("resources left: %s", line);
	ASSERT_EQ(0, klog_errors(self))
		TH_LOG("transport errors in the kernel log:\n%s", self->out);
}

/* Discovery: the host reaches the discovery controller and its log. */
TEST_F_TIMEOUT(nvme, discover, 300)
{
	ASSERT_EQ(0, RUN(self, CMD_S, "nvme discover -t rdma -a " XR_ADDR
			 " -s 4420"));
	ASSERT_NE(NULL, strstr(self->out, NQN))
		TH_LOG("discovery log lacks " NQN ":\n%s", self->out);
	expect_clean(_metadata, self);
}

/* Connect, identify the namespace, disconnect. */
TEST_F_TIMEOUT(nvme, connect, 300)
{
	char sz[32];

	host_connect(_metadata, self);
	ASSERT_EQ(0, RUN(self, 60, "blockdev --getsize64 %s", self->dev));
	snprintf(sz, sizeof(sz), "%llu", 1ULL << 30);
	ASSERT_EQ(0, strncmp(self->out, sz, strlen(sz)))
		TH_LOG("%s: size %s, expected %s", self->dev, self->out, sz);
	ASSERT_EQ(0, host_disconnect(self));
	ASSERT_TRUE(WAIT_UNTIL(ns_gone(), 10000));
	expect_clean(_metadata, self);
}

/* 64 MiB of a pseudo-random pattern written and read back, O_DIRECT. */
TEST_F_TIMEOUT(nvme, io_64m, 600)
{
	long long t0;

	ASSERT_EQ(0, xr_pattern_file(PAT, (size_t)IO_MB << 20));

	host_connect(_metadata, self);
	t0 = now_ms();
	ASSERT_EQ(0, RUN(self, 300, "dd if=" PAT " of=%s bs=1M count=%d "
			 "oflag=direct status=none", self->dev, IO_MB));
	xr_trace("write %d MiB: %lld ms", IO_MB, now_ms() - t0);
	t0 = now_ms();
	ASSERT_EQ(0, RUN(self, 300, "dd if=%s of=" BACK " bs=1M count=%d "
			 "iflag=direct status=none", self->dev, IO_MB));
	xr_trace("read %d MiB: %lld ms", IO_MB, now_ms() - t0);
	ASSERT_EQ(0, RUN(self, 60, "cmp " PAT " " BACK))
		TH_LOG("data read back differs");
	ASSERT_EQ(0, host_disconnect(self));
	ASSERT_TRUE(WAIT_UNTIL(ns_gone(), 10000));
	expect_clean(_metadata, self);
}

/* Five rounds of connect, a 1 MiB write and read back, disconnect. */
TEST_F_TIMEOUT(nvme, churn_5, 600)
{
	int i;

	for (i = 0; i < 5; i++) {
		host_connect(_metadata, self);
		ASSERT_EQ(0, RUN(self, 60, "dd if=/dev/urandom of=" PAT
				 " bs=1M count=1 status=none && "
				 "dd if=" PAT " of=%s bs=1M seek=%d "
				 "oflag=direct status=none && "
				 "dd if=%s of=" BACK " bs=1M skip=%d count=1 "
				 "iflag=direct status=none && cmp " PAT " " BACK,
				 self->dev, i, self->dev, i))
			TH_LOG("round %d", i);
		ASSERT_EQ(0, host_disconnect(self)) TH_LOG("round %d", i);
		ASSERT_TRUE(WAIT_UNTIL(ns_gone(), 10000))
			TH_LOG("round %d: namespace still there", i);
	}
	expect_clean(_metadata, self);
}

/* The last fixture's link, once every test process is gone. */
static void __attribute__((destructor)) purge(void)
{
	xr_link_purge();
}

TEST_HARNESS_MAIN
