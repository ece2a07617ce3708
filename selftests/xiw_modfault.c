// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Loading xiw.ko while each allocation of its init fails in turn
 * (fail-nth): its debugfs directory, its fault-site files and own_pages
 * (what the transmit path's page rings hold), the bytes crc_impl=auto
 * times its CRC32c over and its crc32c file, and its three workqueues
 * (each with a rescuer thread). Registering its netdev
 * notifier and per-namespace hooks, the last steps, allocates nothing
 * for xiw, so their error paths are not reached here. A failed load
 * must leave nothing behind: no module, no debugfs directory, no
 * rescuer thread; run_vm.sh's kernel checks after the program find any
 * leak (kmemleak) or kernel report. An allocation whose failure is
 * absorbed must give a module that unloads cleanly.
 *
 * Only init's allocations, not the loader's before it: the kernel
 * itself warns when one of those fails (jump_label_module_notify():
 * "Failed to allocate memory"), which panic_on_warn makes a panic. So
 * the sweep starts at the last fault point of a whole load and goes
 * down: through what follows init, through init, and stops a few points
 * below init's first allocation. That one is known by what its failure
 * leaves: the load succeeds with no debugfs directory (xiw runs without
 * its fault sites when debugfs refuses them), and only the allocations
 * of that first call, debugfs_create_dir(), do that. The few loader's
 * allocations the sweep fails below it (do_init_module()'s own, the
 * module's section attributes in sysfs) are checked the same way.
 *
 * Two loads do not always pass the same number of fault points (504 to
 * 510 in the boots tried here), so a sweep may step over a point; the
 * outcomes are logged, one letter each.
 *
 * Needs fault injection: the debug kernel.
 */
#include <dirent.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "xiw_util.h"
#include "xiw_fault_util.h"

#define XM_NETDEV	"xmf0"
#define XM_IBDEV	"xmf0dev"

FIXTURE(load) {
	bool have;
	int fd;
};

FIXTURE_SETUP(load)
{
	char path[512];

	self->fd = -1;
	self->have = xf_nth_present();
	if (!self->have)
		return;
	ASSERT_EQ(0, xf_nth_prepare());
	/* What xiw needs loaded (ib_core, ...), and xiw itself not. */
	ASSERT_EQ(0, sh("modprobe xiw && rmmod xiw"));
	ASSERT_EQ(0, xsh(path, sizeof(path), "modinfo -n xiw"));
	path[strcspn(path, "\n")] = '\0';
	self->fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", path, strerror(errno));
}

FIXTURE_TEARDOWN(load)
{
	if (self->fd >= 0)
		close(self->fd);
	sh("rdma link delete " XM_IBDEV " 2>/dev/null");
	sh("ip link del " XM_NETDEV " 2>/dev/null");
	/* Leave the module loaded for the next program. */
	sh("modprobe xiw");
}

/*
 * A rescuer thread of one of xiw's workqueues? Named after its
 * workqueue: "xiw_cm" on 6.1, "kworker/R-xiw_cm" (cut to the 15
 * characters of a task's name) on later kernels.
 */
static bool xm_rescuer_left(void)
{
	static const char *const names[] = { "xiw_cm", "xiw_data", "xiw_tx" };
	char path[300], comm[32], later[32];
	struct dirent *e;
	bool found = false;
	DIR *d = opendir("/proc");
	size_t i;

	if (!d)
		return true;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (read_text(path, comm, sizeof(comm)) < 0)
			continue;
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			snprintf(later, 16, "kworker/R-%s", names[i]);
			found |= !strcmp(comm, names[i]) ||
				 !strcmp(comm, later);
		}
	}
	closedir(d);
	return found;
}

/*
 * What a load that failed, or an unload, left behind: NULL if nothing.
 * A rescuer thread that kthread_stop() has ended may be listed a moment
 * longer, until it is reaped: it has a second to go.
 */
static const char *xm_leftover(void)
{
	int i;

	if (xiw_loaded())
		return "the module";
	if (path_exists("/sys/kernel/debug/xiw"))
		return "its debugfs directory";
	for (i = 0; i < 20 && xm_rescuer_left(); i++)
		usleep(50000);
	return i < 20 ? NULL : "a workqueue's rescuer thread";
}

static int xm_load(int fd)
{
	return syscall(SYS_finit_module, fd, "", 0);
}

static int xm_unload(void)
{
	return syscall(SYS_delete_module, "xiw", O_NONBLOCK);
}

#define XM_MANY		1000000

/*
 * The sweep's outcomes, from the top down, one letter each: '.' not
 * reached, 'a' absorbed, 'd' absorbed without the debugfs directory, 'F'
 * the load failed. Logged, so that a change in what init allocates shows.
 * It ends XM_BELOW points below the last 'd', or after XM_SWEEP points:
 * the first 'd' came 124 to 130 points down here. Were it missed, the
 * sweep would stop well above the loader's jump label allocation (a run
 * without this stop went 340 points down and did not reach it).
 */
#define XM_SWEEP	250
#define XM_BELOW	4

TEST_F_TIMEOUT(load, each_allocation_of_init_fails_cleanly, 1500)
{
	int n, top, rv, err, i = 0, failures = 0, below = -1;
	char trace[XM_SWEEP + 1] = "";
	bool fired, dir;
	const char *left;
	long rest;

	if (!self->have)
		SKIP(return, "no fail-nth or failslab (a kernel without fault injection)");
	ASSERT_FALSE(xiw_loaded());
	/*
	 * What a first load may set up once is not in the count. Loaded,
	 * the module has what the checks look for after a failed load.
	 */
	ASSERT_EQ(0, xm_load(self->fd));
	EXPECT_TRUE(path_exists("/sys/kernel/debug/xiw"));
	EXPECT_TRUE(xm_rescuer_left());
	ASSERT_EQ(0, xm_unload());
	/* How many fault points a whole load passes (and one read more). */
	ASSERT_EQ(0, xf_nth_set(XM_MANY));
	rv = xm_load(self->fd);
	rest = xf_nth_left();
	ASSERT_EQ(0, rv) TH_LOG("load: %s", strerror(errno));
	ASSERT_LT(0, rest);
	ASSERT_EQ(0, xm_unload());
	top = XM_MANY - rest;
	for (n = top; n > 0 && i < XM_SWEEP && below < XM_BELOW; n--, i++) {
		if (below >= 0)
			below++;
		ASSERT_EQ(0, xf_nth_set(n));
		rv = xm_load(self->fd);
		err = errno;
		fired = xf_nth_fired();
		if (!rv) {
			/* Absorbed (or not reached): loaded all the same. */
			dir = path_exists("/sys/kernel/debug/xiw");
			ASSERT_EQ(0, xm_unload()) TH_LOG("%s", strerror(errno));
			left = xm_leftover();
			ASSERT_EQ(NULL, left)
				TH_LOG("loaded with allocation %d failing; unloaded, it left %s",
				       n, left);
			trace[i] = !fired ? '.' : dir ? 'a' : 'd';
			/* Only debugfs_create_dir() fails like that. */
			if (fired && !dir)
				below = 0;
			continue;
		}
		trace[i] = 'F';
		ASSERT_TRUE(fired)
			TH_LOG("no fault at %d, yet the load failed: %s", n,
			       strerror(err));
		EXPECT_EQ(ENOMEM, err)
			TH_LOG("allocation %d failed the load with %s", n,
			       strerror(err));
		left = xm_leftover();
		ASSERT_EQ(NULL, left)
			TH_LOG("the load failed at allocation %d and left %s",
			       n, left);
		/* Init's own, each one of its error paths; not the loader's. */
		if (below < 0)
			failures++;
	}
	TH_LOG("a load passes %d fault points; %d of init's failed it; from %d down: %s",
	       top - 1, failures, top, trace);
	ASSERT_LE(0, below) TH_LOG("init's first allocation not found");
	ASSERT_LT(0, failures);
	/* And a load without faults gives a module that works. */
	ASSERT_EQ(0, xm_load(self->fd));
	ASSERT_EQ(0, dummy_add(XM_NETDEV, "02:00:00:00:1f:01"));
	ASSERT_EQ(0, sh("rdma link add " XM_IBDEV " type xiw netdev " XM_NETDEV));
	ASSERT_TRUE(ibdev_exists(XM_IBDEV));
}

TEST_HARNESS_MAIN
