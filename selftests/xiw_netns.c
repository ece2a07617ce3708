// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw in network namespaces: two namespaces joined by a veth pair, an xiw
 * device on each end, rdma_cm programs across, and the namespaces deleted
 * under traffic.
 *
 * Two variants. "exclusive": the RDMA subsystem's exclusive netns mode
 * (rdma system set netns exclusive), each device moved into its
 * namespace (rdma dev set DEV netns NS), where alone it is seen and
 * serves. "shared": the default, every device seen from every namespace.
 * xiw's sockets live in its netdev's namespace either way.
 *
 * The RDMA core of 6.1 and 6.12 registers every new device in the initial
 * namespace, also one made by "rdma link add" run inside another: the
 * move is what puts it there. The mode can change only while no other
 * namespace exists, so a namespace another program left behind fails the
 * set-up (with the reason), and the teardown waits for ours to be gone
 * before it restores the shared mode.
 *
 * The time limits are generous for the debug kernel under emulation,
 * where each of the many ip and rdma commands takes seconds.
 */
#include <signal.h>
#include <sys/types.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"

#define XN_A		"xiwnsA"
#define XN_B		"xiwnsB"
#define XN_INIT		"xiwnsInit"	/* a name for the initial namespace */
#define XN_DEVA		"xiwnA"
#define XN_DEVB		"xiwnB"
#define XN_ADDR_A	"10.77.0.1"
#define XN_ADDR_B	"10.77.0.2"
#define XN_PORT		7181
#define XN_WAIT_MS	60000

FIXTURE(ns) {
	pid_t srv;		/* server in XN_A, its own process group */
	pid_t cli;		/* long-running client in XN_B, likewise */
	char out[16384];
};

FIXTURE_VARIANT(ns) {
	bool exclusive;
};

FIXTURE_VARIANT_ADD(ns, exclusive) {
	.exclusive = true,
};

FIXTURE_VARIANT_ADD(ns, shared) {
	.exclusive = false,
};

/* Is DEV seen by rdma (netlink) from namespace NS (NULL: this one)? */
static bool xn_dev_seen(const char *ns, const char *dev)
{
	return sh("%s%s rdma dev show %s >/dev/null 2>&1",
		  ns ? "ip netns exec " : "", ns ? ns : "", dev) == 0;
}

/* ... and by libibverbs (sysfs, which follows the namespace too)? */
static bool xn_verbs_sees(const char *ns, const char *dev)
{
	return sh("%s%s ibv_devices 2>/dev/null | grep -qw %s",
		  ns ? "ip netns exec " : "", ns ? ns : "", dev) == 0;
}

static bool xn_listening(const char *ns, int port)
{
	return sh("ip netns exec %s ss -Hltn 'sport = :%d' | grep -q .",
		  ns, port) == 0;
}

/* Start "exec CMD" in namespace ns, in a process group of its own. */
static pid_t xn_start(const char *ns, const char *log, const char *fmt, ...)
{
	char cmd[512], full[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full),
		 "exec ip netns exec %s timeout -k 2 120 %s >%s 2>&1 </dev/null",
		 ns, cmd, log);
	return xsh_spawn(full);
}

static void xn_kill(pid_t *pid)
{
	if (*pid > 0) {
		kill(-*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

/* Exit status of *pid within ms (it is then reaped), else -1. */
static int xn_status(pid_t *pid, int ms)
{
	int st;

	if (!WAIT_UNTIL(waitpid(*pid, &st, WNOHANG) == *pid, ms))
		return -1;
	*pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void xn_show(const char *log)
{
	char buf[4096];

	if (read_text(log, buf, sizeof(buf)) > 0)
		fprintf(stderr, "# %s:\n%s\n", log, buf);
}

/* Our namespaces and devices gone; what another run may have left too. */
static void xn_clean(void)
{
	sh("ip netns pids " XN_A " 2>/dev/null | xargs -r kill -9;"
	   " ip netns pids " XN_B " 2>/dev/null | xargs -r kill -9;"
	   " ip netns del " XN_A " 2>/dev/null; ip netns del " XN_B " 2>/dev/null;"
	   " ip netns del " XN_INIT " 2>/dev/null;"
	   " ip link del xnva 2>/dev/null; true");
}

static bool xn_shared_again(void)
{
	return sh("rdma system set netns shared >/dev/null 2>&1") == 0;
}

/*
 * A set-up that fails has no teardown (kselftest's harness): the main
 * process cleans up at exit too, so that no later program finds our
 * namespaces or the exclusive mode. Test processes end in _exit() and
 * do not run this.
 */
static void __attribute__((destructor)) xn_purge(void)
{
	xn_clean();
	WAIT_UNTIL(xn_shared_again(), XN_WAIT_MS);
}

FIXTURE_SETUP(ns)
{
	char out[4096];

	ASSERT_EQ(0, xr_load_modules());
	xn_clean();
	/* Namespace exit is asynchronous: the mode may be busy a moment. */
	ASSERT_TRUE(WAIT_UNTIL(xn_shared_again(), XN_WAIT_MS))
		TH_LOG("cannot return to the shared netns mode");
	if (variant->exclusive) {
		ASSERT_EQ(0, xsh(out, sizeof(out),
				 "rdma system set netns exclusive"))
			TH_LOG("exclusive netns mode refused (another namespace left?): %s; "
			       "ip netns: %s", out,
			       xsh(out, sizeof(out), "ip netns") ? "?" : out);
	}
	ASSERT_EQ(0, sh("ip netns add " XN_A " && ip netns add " XN_B " && "
			"ip link add xnva type veth peer name xnvb && "
			"ip link set xnva netns " XN_A " && "
			"ip link set xnvb netns " XN_B " && "
			"ip -n " XN_A " addr add " XN_ADDR_A "/24 dev xnva && "
			"ip -n " XN_B " addr add " XN_ADDR_B "/24 dev xnvb && "
			"ip -n " XN_A " link set xnva up && ip -n " XN_A " link set lo up && "
			"ip -n " XN_B " link set xnvb up && ip -n " XN_B " link set lo up && "
			"ip netns exec " XN_A " rdma link add " XN_DEVA " type xiw netdev xnva && "
			"ip netns exec " XN_B " rdma link add " XN_DEVB " type xiw netdev xnvb"));
	if (variant->exclusive)
		ASSERT_EQ(0, sh("rdma dev set " XN_DEVA " netns " XN_A " && "
				"rdma dev set " XN_DEVB " netns " XN_B));
	ASSERT_TRUE(WAIT_UNTIL(xn_dev_seen(XN_A, XN_DEVA) &&
			       xn_dev_seen(XN_B, XN_DEVB), 10000));
}

FIXTURE_TEARDOWN(ns)
{
	xn_kill(&self->cli);
	xn_kill(&self->srv);
	xn_clean();
	/* The next program expects the default mode. */
	if (!WAIT_UNTIL(xn_shared_again(), XN_WAIT_MS))
		TH_LOG("netns mode still exclusive after %d ms", XN_WAIT_MS);
	if (!xiw_loaded())
		sh("modprobe xiw");
}

/*
 * Exclusive: each device is seen from its namespace only, by rdma's
 * netlink and by libibverbs. Shared: from everywhere.
 */
TEST_F_TIMEOUT(ns, devices_seen_where_the_mode_says, 400)
{
	bool all = !variant->exclusive;

	EXPECT_TRUE(xn_dev_seen(XN_A, XN_DEVA));
	EXPECT_TRUE(xn_verbs_sees(XN_A, XN_DEVA));
	EXPECT_EQ(all, xn_dev_seen(XN_A, XN_DEVB));
	EXPECT_EQ(all, xn_verbs_sees(XN_A, XN_DEVB));
	EXPECT_EQ(all, xn_dev_seen(XN_B, XN_DEVA));
	EXPECT_EQ(all, xn_dev_seen(NULL, XN_DEVA));
	EXPECT_EQ(all, xn_verbs_sees(NULL, XN_DEVB));
}

/*
 * rping across the veth pair, server in A, client in B, 50 pings checked:
 * 0, or which step failed (with what the programs said).
 */
static int xn_rping(pid_t *srv, char *out, size_t len)
{
	const char *log = "/tmp/xiw_netns.rping.log";

	*srv = xn_start(XN_A, log, "rping -s -a " XN_ADDR_A " -p %d -C 50 -v",
			XN_PORT);
	if (*srv <= 0)
		return 1;
	if (!WAIT_UNTIL(xn_listening(XN_A, XN_PORT), XN_WAIT_MS)) {
		xn_show(log);
		return 2;
	}
	if (xsh(out, len, "ip netns exec " XN_B " timeout -k 2 120 rping -c -a "
		XN_ADDR_A " -p %d -C 50 -v", XN_PORT)) {
		fprintf(stderr, "# client:\n%s\n", out);
		return 3;
	}
	/* -v prints each ping's payload: all 50 arrived. */
	if (!strstr(out, "ping data: rdma-ping-49: ")) {
		fprintf(stderr, "# client:\n%s\n", out);
		return 4;
	}
	if (xn_status(srv, 15000)) {
		xn_show(log);
		return 5;
	}
	return 0;
}

TEST_F_TIMEOUT(ns, rping_across, 400)
{
	ASSERT_EQ(0, xn_rping(&self->srv, self->out, sizeof(self->out)));
}

/*
 * Exclusive: a device moved out of its namespace into the initial one
 * (named for rdma with "ip netns attach", which makes no namespace) is
 * seen there and no longer in its own; moved back, it serves rping again
 * (the RDMA core unregisters and registers it at each move). Shared: a
 * device cannot be moved at all.
 */
TEST_F_TIMEOUT(ns, moved_out_and_back, 400)
{
	if (!variant->exclusive) {
		EXPECT_NE(0, sh("rdma dev set " XN_DEVA " netns " XN_A
				" >/dev/null 2>&1"));
		EXPECT_TRUE(xn_dev_seen(NULL, XN_DEVA));
		return;
	}
	/* rdma names a namespace by its file: give ours (the initial) one. */
	ASSERT_EQ(0, sh("ip netns attach " XN_INIT " %d", (int)getpid()));
	ASSERT_EQ(0, sh("ip netns exec " XN_A " rdma dev set " XN_DEVA
			" netns " XN_INIT));
	ASSERT_TRUE(WAIT_UNTIL(xn_dev_seen(NULL, XN_DEVA) &&
			       !xn_dev_seen(XN_A, XN_DEVA), 10000));
	EXPECT_TRUE(xn_verbs_sees(NULL, XN_DEVA));
	EXPECT_FALSE(xn_verbs_sees(XN_A, XN_DEVA));

	ASSERT_EQ(0, sh("rdma dev set " XN_DEVA " netns " XN_A));
	ASSERT_TRUE(WAIT_UNTIL(xn_dev_seen(XN_A, XN_DEVA) &&
			       !xn_dev_seen(NULL, XN_DEVA), 10000));
	ASSERT_EQ(0, xn_rping(&self->srv, self->out, sizeof(self->out)));
}

/*
 * perftest's result line: "#bytes #iterations BW-peak BW-average
 * MsgRate", here 65536 and all 200 iterations. The rates are not
 * checked: under emulation perftest's estimate of the CPU's clock can
 * fail (-F goes on regardless) and it then prints 0.00.
 */
static bool xn_bw_result(const char *out)
{
	unsigned long bytes, iters;
	const char *l;

	for (l = out; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (sscanf(l, " %lu %lu", &bytes, &iters) == 2 &&
		    bytes == 65536 && iters == 200)
			return true;
	return false;
}

/* perftest over rdma_cm across, 64 KiB Writes; a result line at the end. */
TEST_F_TIMEOUT(ns, write_bw_across, 400)
{
	const char *log = "/tmp/xiw_netns.bw.log";
	int rc;

	self->srv = xn_start(XN_A, log, "ib_write_bw -R -F -d " XN_DEVA
			     " -p %d -s 65536 -n 200", XN_PORT);
	ASSERT_LT(0, self->srv);
	ASSERT_TRUE(WAIT_UNTIL(xn_listening(XN_A, XN_PORT), XN_WAIT_MS))
		xn_show(log);
	rc = xsh(self->out, sizeof(self->out),
		 "ip netns exec " XN_B " timeout -k 2 120 ib_write_bw -R -F -d " XN_DEVB
		 " -p %d -s 65536 -n 200 " XN_ADDR_A, XN_PORT);
	if (rc)
		fprintf(stderr, "# client:\n%s\n", self->out);
	ASSERT_EQ(0, rc);
	ASSERT_TRUE(xn_bw_result(self->out))
		TH_LOG("no bandwidth result:\n%s", self->out);
	rc = xn_status(&self->srv, 15000);
	if (rc)
		xn_show(log);
	ASSERT_EQ(0, rc);
}

/*
 * Writes flowing from B to A, then namespace A deleted and its processes
 * killed: A's exit takes the veth pair, so both devices go (their netdevs
 * are unregistered). Nothing may be left: no device, no resource, and the
 * module unloads (a connection or socket still held would keep it).
 */
TEST_F_TIMEOUT(ns, netns_delete_under_traffic, 500)
{
	const char *slog = "/tmp/xiw_netns.del-s.log";
	const char *clog = "/tmp/xiw_netns.del-c.log";

	self->srv = xn_start(XN_A, slog, "ib_write_bw -R -F -d " XN_DEVA
			     " -p %d -s 65536 -D 100", XN_PORT);
	ASSERT_LT(0, self->srv);
	ASSERT_TRUE(WAIT_UNTIL(xn_listening(XN_A, XN_PORT), XN_WAIT_MS))
		xn_show(slog);
	self->cli = xn_start(XN_B, clog, "ib_write_bw -R -F -d " XN_DEVB
			     " -p %d -s 65536 -D 100 " XN_ADDR_A, XN_PORT);
	ASSERT_LT(0, self->cli);
	/* Connected: the client's QP is in RTS. */
	ASSERT_TRUE(WAIT_UNTIL(sh("ip netns exec " XN_B " rdma res show qp 2>/dev/null"
				  " | grep -q 'state RTS'") == 0, 20000)) {
		xn_show(slog);
		xn_show(clog);
	}
	sleep(2);
	ASSERT_EQ(0, sh("ip netns pids " XN_A " | xargs -r kill -9; "
			"ip netns del " XN_A));
	ASSERT_TRUE(WAIT_UNTIL(!ibdev_exists(XN_DEVA) && !ibdev_exists(XN_DEVB),
			       XN_WAIT_MS))
		TH_LOG("a device outlived its namespace's deletion");
	/* B's client saw its device go; it is killed if it has not ended. */
	xn_kill(&self->cli);
	xn_kill(&self->srv);
	sh("ip netns del " XN_B);
	/* Namespace exit, and with it xiw's pernet exit, is asynchronous. */
	ASSERT_TRUE(WAIT_UNTIL(sh("rmmod xiw 2>/dev/null") == 0, XN_WAIT_MS))
		TH_LOG("xiw still in use after both namespaces were deleted");
}

TEST_HARNESS_MAIN
