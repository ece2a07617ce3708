// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The standard RDMA programs against the device under test, server and
 * client in this guest over 10.99.0.1 on a dummy netdev: rping,
 * ucmatose, rdma_server/rdma_client (librdmacm examples), the perftest
 * bandwidth and latency tests over rdma_cm (-R), qperf with -cm1 and
 * rstream over rsockets.
 *
 * Each program runs under timeout(1); the server is started first in its
 * own process group, the client runs to completion, then the server is
 * waited for (or, for servers that never exit, killed) and always killed
 * in teardown: a latency client killed by its timeout can otherwise
 * leave its server waiting forever.
 *
 * XIW_TEST_LINK_TYPE selects the device type as for xiw_rdma ("xiw" by
 * default, "siw" to validate the tests).
 */
#include <signal.h>
#include <sys/types.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"

/* Client run time limit, seconds (TCG emulation is slow). */
#define CLIENT_S	60

/* One server and its client, whichever fixture runs them. */
struct run {
	pid_t srv;
	char log[64];
	char out[65536];
};

FIXTURE(tool) {
	struct xr_link link;
	struct run r;
};

static void run_init(struct run *self)
{
	snprintf(self->log, sizeof(self->log), "/tmp/xiw_tools.%d.log",
		 getpid());
}

FIXTURE_SETUP(tool)
{
	xr_lo_mtu(65536);
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	run_init(&self->r);
}

static void kill_server(struct run *self)
{
	if (self->srv > 0) {
		kill(-self->srv, SIGKILL);
		waitpid(self->srv, NULL, 0);
		self->srv = 0;
	}
}

static void run_fini(struct run *self)
{
	kill_server(self);
	unlink(self->log);
}

FIXTURE_TEARDOWN(tool)
{
	run_fini(&self->r);
}

/* Is a TCP socket (a kernel one too) listening on port? */
static bool listening(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	unsigned int i, lport, st;
	char line[512];
	bool hit = false;
	FILE *f;

	for (i = 0; i < 2 && !hit; i++) {
		f = fopen(files[i], "r");
		if (!f)
			continue;
		while (!hit && fgets(line, sizeof(line), f))
			hit = sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x",
				     &lport, &st) == 2 &&
			      lport == (unsigned int)port && st == 0x0a;
		fclose(f);
	}
	return hit;
}

/*
 * Start cmd under timeout(1) in its own process group, output to the log
 * file; wait until something listens on port (at most 10 s: a device with
 * no connection manager never listens, and the client then fails).
 */
static pid_t start_server(struct run *self, int secs, int port,
			  const char *fmt, ...)
{
	char cmd[768], full[1024];
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "exec timeout -k 2 %d %s >%s 2>&1 </dev/null",
		 secs, cmd, self->log);
	pid = xsh_spawn(full);
	self->srv = pid;
	if (pid > 0)
		WAIT_UNTIL(listening(port) || waitpid(pid, NULL, WNOHANG) == pid,
			   10000);
	return pid;
}

/* Wait up to ms for the server to exit; its status, or -1 (killed). */
static int server_status(struct run *self, int ms)
{
	long long end = now_ms() + ms;
	int st;

	while (now_ms() < end) {
		if (waitpid(self->srv, &st, WNOHANG) == self->srv) {
			self->srv = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(20000);
	}
	kill_server(self);
	return -1;
}

static void show_server_log(struct run *self)
{
	char buf[4096];

	if (read_text(self->log, buf, sizeof(buf)) > 0)
		fprintf(stderr, "# server output:\n%s\n", buf);
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	for (; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		n += !strncmp(s, prefix, strlen(prefix));
	return n;
}

/* Run rn's client; on failure show both sides' output. */
#define RUN_CLIENT_OK(rn, fmt, ...) do {				\
	struct run *__r = (rn);					\
	int __rc = xsh(__r->out, sizeof(__r->out),			\
		       "timeout -k 2 %d " fmt, CLIENT_S, ##__VA_ARGS__);	\
	if (__rc) {							\
		fprintf(stderr, "# client output:\n%s\n", __r->out);	\
		kill_server(__r);					\
		show_server_log(__r);					\
	}								\
	ASSERT_EQ(0, __rc) TH_LOG("client exit status %d", __rc);	\
} while (0)

/* rn's server exits by itself after its one run, with status 0. */
#define RUN_SERVER_OK(rn) do {						\
	struct run *__r = (rn);					\
	int __st = server_status(__r, 15000);				\
	if (__st)							\
		show_server_log(__r);					\
	ASSERT_EQ(0, __st) TH_LOG("server exit status %d (-1: killed)", __st); \
} while (0)

/* rping with n pings verified: a server on saddr, a client to caddr. */
#define RPING_OK(rn, saddr, caddr, port, n) do {			\
	ASSERT_LT(0, start_server((rn), CLIENT_S + 10, (port),		\
				  "rping -s -a %s -p %d -C %d -v",	\
				  (saddr), (port), (n)));		\
	RUN_CLIENT_OK((rn), "rping -c -a %s -p %d -C %d -v", (caddr),	\
		      (port), (n));					\
	ASSERT_EQ((n), count_lines((rn)->out, "ping data: rdma-ping-"))	\
		TH_LOG("client output:\n%s", (rn)->out);		\
	RUN_SERVER_OK(rn);						\
} while (0)

#define CLIENT_OK(fmt, ...)	RUN_CLIENT_OK(&self->r, fmt, ##__VA_ARGS__)
#define SERVER_OK()		RUN_SERVER_OK(&self->r)

TEST_F_TIMEOUT(tool, rping_100, 120)
{
	ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, 7174,
				  "rping -s -a " XR_ADDR " -p 7174 -C 100 -v"));
	CLIENT_OK("rping -c -a " XR_ADDR " -p 7174 -C 100 -v");
	ASSERT_EQ(100, count_lines(self->r.out, "ping data: rdma-ping-"))
		TH_LOG("client output:\n%s", self->r.out);
	ASSERT_NE(NULL, strstr(self->r.out, "ping data: rdma-ping-99: "));
	SERVER_OK();
}

TEST_F_TIMEOUT(tool, ucmatose_4_connections, 120)
{
	ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, 7471,
				  "ucmatose -b " XR_ADDR " -p 7471 -c 4"));
	CLIENT_OK("ucmatose -s " XR_ADDR " -p 7471 -c 4");
	ASSERT_NE(NULL, strstr(self->r.out, "test complete"))
		TH_LOG("client output:\n%s", self->r.out);
	SERVER_OK();
}

TEST_F_TIMEOUT(tool, rdma_server_client, 120)
{
	ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, 7472,
				  "rdma_server -s " XR_ADDR " -p 7472"));
	CLIENT_OK("rdma_client -s " XR_ADDR " -p 7472");
	ASSERT_NE(NULL, strstr(self->r.out, "rdma_client: end 0"))
		TH_LOG("client output:\n%s", self->r.out);
	SERVER_OK();
}

/*
 * IPv6. Every other test here runs over IPv4; a user's fabric may be
 * IPv6 only. An address of its own on the device's netdev (nodad: usable
 * at once), then rping over it, 100 pings verified, and 10 to a server
 * listening on the IPv6 wildcard address. With xiw, a third pair that
 * runs until stopped shows, in "rdma res show qp -dd", each QP's peer in
 * IPv6 form: the client's is the server's address and port, the
 * server's the client's address (same host) with another port.
 */
#define XT_ADDR6	"fd00:99::1"

/*
 * Both QPs of a connection on ibdev name their peer at addr (as shown:
 * "[...]" for IPv6), the client's with port.
 */
static bool peers_shown(const char *ibdev, const char *addr, int port,
			char *out, size_t len)
{
	char want[80], any[80];
	const char *p;
	int n = 0;

	if (xsh(out, len, "rdma -dd res show qp link %s/1", ibdev))
		return false;
	snprintf(want, sizeof(want), "drv_peer %s:%d ", addr, port);
	snprintf(any, sizeof(any), "drv_peer %s:", addr);
	if (!strstr(out, want))
		return false;
	for (p = out; (p = strstr(p, any)); p++)
		n++;
	return n >= 2;
}

/*
 * A server listening on saddr and a client to caddr, both pinging until
 * stopped (-C 0), until peers_shown(shown, port) holds (at most 20 s);
 * then both are killed. Whether it held.
 */
static bool pair_shows_peers(struct run *r, const char *ibdev,
			     const char *saddr, const char *caddr,
			     const char *shown, int port, char *out,
			     size_t len)
{
	char cmd[256];
	bool ok;
	pid_t cli;

	if (start_server(r, CLIENT_S + 10, port, "rping -s -a %s -p %d -C 0",
			 saddr, port) <= 0)
		return false;
	snprintf(cmd, sizeof(cmd),
		 "exec timeout -k 2 %d rping -c -a %s -p %d -C 0 >/dev/null 2>&1 </dev/null",
		 CLIENT_S, caddr, port);
	cli = xsh_spawn(cmd);
	ok = cli > 0 && WAIT_UNTIL(peers_shown(ibdev, shown, port, out, len),
				   20000);
	if (cli > 0) {
		kill(-cli, SIGKILL);
		waitpid(cli, NULL, 0);
	}
	kill_server(r);
	return ok;
}

TEST_F_TIMEOUT(tool, rping_ipv6, 120)
{
	char out[8192];

	ASSERT_EQ(0, sh("ip -6 addr replace " XT_ADDR6 "/64 dev %s nodad",
			self->link.netdev));
	RPING_OK(&self->r, XT_ADDR6, XT_ADDR6, 7175, 100);
	/* A wildcard IPv6 listener (what a server given no address has). */
	RPING_OK(&self->r, "::", XT_ADDR6, 7178, 10);
	if (xr_is_siw())
		return;	/* siw has no per-QP driver details */
	ASSERT_TRUE(pair_shows_peers(&self->r, self->link.ibdev, XT_ADDR6,
				     XT_ADDR6, "[" XT_ADDR6 "]", 7176, out,
				     sizeof(out)))
		TH_LOG("rdma res show qp -dd:\n%s", out);
}

/*
 * An rdma_cm listener on the IPv6 wildcard address takes IPv4 clients as
 * well, as a TCP socket does, unless the id is IPv6-only: rdma_cm's
 * default is the net.ipv6.bindv6only sysctl (rdma_set_afonly() sets it
 * per id). xiw follows it and gives such a connection's addresses in
 * their IPv4 form, to rdma_cm and in the QP's details; with bindv6only
 * 1 the IPv4 client is refused. (siw makes its listener IPv6-only too,
 * but accepts the connection over TCP and then rejects it: an IPv4
 * client of siw's IPv6 wildcard listener fails either way.)
 */
TEST_F_TIMEOUT(tool, ipv6_wildcard_takes_ipv4, 120)
{
	char out[8192], v6only[16];
	int rc;

	if (xr_is_siw())
		SKIP(return, "siw refuses IPv4 clients of an IPv6 listener");
	ASSERT_LT(0, read_text("/proc/sys/net/ipv6/bindv6only", v6only,
			       sizeof(v6only)));
	ASSERT_EQ('0', v6only[0]) TH_LOG("the guest's bindv6only is %s", v6only);
	RPING_OK(&self->r, "::", XR_ADDR, 7179, 10);
	/* Not "[::ffff:10.99.0.1]": rdma_cm gets IPv4 addresses. */
	ASSERT_TRUE(pair_shows_peers(&self->r, self->link.ibdev, "::", XR_ADDR,
				     XR_ADDR, 7180, out, sizeof(out)))
		TH_LOG("rdma res show qp -dd:\n%s", out);

	/* IPv6-only by the sysctl: nothing listens for IPv4 on the port. */
	ASSERT_EQ(0, sh("echo 1 > /proc/sys/net/ipv6/bindv6only"));
	if (start_server(&self->r, CLIENT_S + 10, 7181,
			 "rping -s -a :: -p 7181 -C 1 -v") > 0)
		rc = xsh(self->r.out, sizeof(self->r.out),
			 "timeout -k 2 %d rping -c -a " XR_ADDR " -p 7181 -C 1 -v",
			 CLIENT_S);
	else
		rc = -1;
	sh("echo 0 > /proc/sys/net/ipv6/bindv6only");
	kill_server(&self->r);
	ASSERT_NE(-1, rc) TH_LOG("the IPv6-only server did not start");
	ASSERT_NE(0, rc) TH_LOG("an IPv4 client reached an IPv6-only listener:\n%s",
				self->r.out);
	ASSERT_NE(NULL, strstr(self->r.out, "RDMA_CM_EVENT_REJECTED"))
		TH_LOG("client output:\n%s", self->r.out);
}

/*
 * perftest's -R handshake and qperf have a race of their own, the listen
 * race: the server does not listen for a moment between the connections
 * of one run, and a client that connects then is refused. What marks it
 * and how many more runs it earns is scripts/lib.sh's: the client runs
 * under "scripts/lib.sh listen-race ATTEMPT WHAT --", which exits with
 * LISTEN_RACE_EXIT after a "# RERUN:" line (scripts/check.sh counts it)
 * when the run lost the race and may run again.
 */
#define LISTEN_RACE_EXIT	75

static void lib_path(char *p, size_t len)
{
	xr_beside_exe(p, len, "XIW_SCRIPTS_LIB", "../../scripts/lib.sh");
}

/* Did the client's run ask to be run again? Then pass its RERUN line on. */
static bool listen_race_rerun(const struct run *r, int rc)
{
	const char *note;

	if (rc != LISTEN_RACE_EXIT)
		return false;
	note = strstr(r->out, "# RERUN: ");
	if (note) {
		fwrite(note, 1, strcspn(note, "\n"), stdout);
		putchar('\n');
		fflush(stdout);
	}
	return true;
}

/* A perftest program over rdma_cm, size-byte messages, n iterations. */
static void perftest_size(struct __test_metadata *_metadata,
			  FIXTURE_DATA(tool) *self, const char *prog,
			  int port, int iters, int size)
{
	int attempt, rc = -1;
	char lib[256], row[16];

	lib_path(lib, sizeof(lib));
	for (attempt = 1;; attempt++) {
		ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, port,
					  "%s -R -F -d %s -p %d -n %d -s %d",
					  prog, self->link.ibdev, port, iters,
					  size));
		rc = xsh(self->r.out, sizeof(self->r.out),
			 "bash '%s' listen-race %d %s -- timeout -k 2 %d %s -R -F -d %s -p %d -n %d -s %d "
			 XR_ADDR, lib, attempt, prog, CLIENT_S, prog,
			 self->link.ibdev, port, iters, size);
		if (!listen_race_rerun(&self->r, rc))
			break;
		kill_server(&self->r);
	}
	if (rc) {
		fprintf(stderr, "# client output:\n%s\n", self->r.out);
		kill_server(&self->r);
		show_server_log(&self->r);
	}
	ASSERT_EQ(0, rc) TH_LOG("client exit status %d", rc);
	ASSERT_NE(NULL, strstr(self->r.out, "#bytes"))
		TH_LOG("no result table:\n%s", self->r.out);
	snprintf(row, sizeof(row), " %d ", size);
	ASSERT_NE(NULL, strstr(self->r.out, row))
		TH_LOG("no %d-byte result:\n%s", size, self->r.out);
	SERVER_OK();
}

static void perftest(struct __test_metadata *_metadata,
		     FIXTURE_DATA(tool) *self, const char *prog, int port,
		     int iters)
{
	perftest_size(_metadata, self, prog, port, iters, 4096);
}

TEST_F_TIMEOUT(tool, ib_send_bw, 120)
{
	perftest(_metadata, self, "ib_send_bw", 18515, 200);
}

TEST_F_TIMEOUT(tool, ib_write_bw, 120)
{
	perftest(_metadata, self, "ib_write_bw", 18516, 200);
}

TEST_F_TIMEOUT(tool, ib_read_bw, 120)
{
	perftest(_metadata, self, "ib_read_bw", 18517, 200);
}

TEST_F_TIMEOUT(tool, ib_send_lat, 120)
{
	perftest(_metadata, self, "ib_send_lat", 18518, 100);
}

TEST_F_TIMEOUT(tool, ib_write_lat, 120)
{
	perftest(_metadata, self, "ib_write_lat", 18519, 100);
}

TEST_F_TIMEOUT(tool, ib_read_lat, 120)
{
	perftest(_metadata, self, "ib_read_lat", 18520, 100);
}

/* RFC 7306 atomics: 8-byte fetch-and-add and compare-and-swap. */
TEST_F_TIMEOUT(tool, ib_atomic_bw, 120)
{
	if (xr_is_siw())
		SKIP(return, "siw has no atomics");
	perftest_size(_metadata, self, "ib_atomic_bw", 18521, 200, 8);
}

TEST_F_TIMEOUT(tool, ib_atomic_lat, 120)
{
	if (xr_is_siw())
		SKIP(return, "siw has no atomics");
	perftest_size(_metadata, self, "ib_atomic_lat", 18522, 100, 8);
}

/*
 * qperf's server never exits: it is killed once the client is done.
 * rc_rdma_read_lat moves Reads one at a time at IRD/ORD 1 (-cm1): each
 * must find the responder done with the previous one. rc_bi_bw posts
 * 1024 Sends (64 KiB by default) at each end before either polls: each
 * end must get back to reposting its receives before the other's Sends
 * use them up (the transmit worker takes large messages off the poster
 * of a QP that takes receives; the long allowance of a one-way sender
 * must end at the first). With 4 KiB Sends that race is lost in one
 * guest on siw too (design.rst, Transmit), so rc_bi_bw runs at qperf's
 * default size.
 */
TEST_F_TIMEOUT(tool, qperf_rc, 300)
{
	/* rc_bi_bw at qperf's own size; see above. */
	static const struct { const char *name, *size; } tests[] = {
		{ "rc_bw", "-m 4096" }, { "rc_bi_bw", "" },
		{ "rc_lat", "-m 4096" }, { "rc_rdma_read_bw", "-m 4096" },
		{ "rc_rdma_write_bw", "-m 4096" },
		{ "rc_rdma_read_lat", "-m 4096" },
		{ "rc_rdma_write_lat", "-m 4096" },
		/* RFC 7306 atomics; siw has none (see below). */
		{ "rc_compare_swap_mr", "" }, { "rc_fetch_add_mr", "" },
	};
	unsigned int i;
	int rc, attempt;
	char lib[256];

	lib_path(lib, sizeof(lib));
	ASSERT_LT(0, start_server(&self->r, 9 * CLIENT_S, 19765, "qperf"));
	/*
	 * qperf's server sends the client its rdma_cm port before it calls
	 * rdma_listen, for every test: a client that connects at once may
	 * find no listener, the listen race (see LISTEN_RACE_EXIT). One
	 * client per test; the server keeps running.
	 */
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (xr_is_siw() && strstr(tests[i].name, "_mr"))
			continue;
		for (attempt = 1;; attempt++) {
			rc = xsh(self->r.out, sizeof(self->r.out),
				 "bash '%s' listen-race %d 'qperf %s' -- timeout -k 2 %d qperf -cm1 -t 2 %s "
				 XR_ADDR " %s", lib, attempt, tests[i].name,
				 CLIENT_S, tests[i].size, tests[i].name);
			if (!listen_race_rerun(&self->r, rc))
				break;
		}
		if (rc && xr_is_siw() &&
		    strstr(self->r.out, "failed to create QP")) {
			kill_server(&self->r);
			SKIP(return, "qperf cannot create its RC QP on siw (EINVAL)");
		}
		ASSERT_EQ(0, rc) TH_LOG("%s: client exit status %d:\n%s",
					tests[i].name, rc, self->r.out);
		ASSERT_NE(NULL, strstr(self->r.out, tests[i].name))
			TH_LOG("no result:\n%s", self->r.out);
		ASSERT_FALSE(strstr(self->r.out, "failed") != NULL)
			TH_LOG("client output:\n%s", self->r.out);
	}
	kill_server(&self->r);
}

TEST_F_TIMEOUT(tool, rstream_rsockets, 120)
{
	ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, 7473,
				  "rstream -b " XR_ADDR " -p 7473 -S 4096 -C 20 -I 5 -T v"));
	CLIENT_OK("rstream -s " XR_ADDR " -p 7473 -S 4096 -C 20 -I 5 -T v");
	ASSERT_NE(NULL, strstr(self->r.out, "4k"))
		TH_LOG("no result line:\n%s", self->r.out);
	SERVER_OK();
}

/*
 * ---- across drivers: xiw and the kernel's siw (scripts/siw-build.sh) ----
 *
 * xiw on xr0 (10.99.0.1, xiwT0) and siw on xr1 (10.99.1.1, siwT1), as in
 * xiw_interop.c. The server listens on its own driver's address and the
 * client binds its source address to the other driver's (rping -a, -I):
 * rdma_cm picks each end's device by its address, so the two ends are on
 * different drivers.
 *
 * Not here: the programs whose server can only listen on the wildcard
 * address (perftest, qperf). A wildcard rdma_listen listens on every
 * RDMA device; siw ties that listener to its netdev as xiw does (its
 * socket is bound to the netdev's ifindex), but the earlier one-host runs
 * against siw failed in ways not yet sorted out (refused: perftest's own
 * listen race, see LISTEN_RACE_EXIT; EINVAL from ib_read_bw, then
 * put down to siw's IRD/ORD of 128 against xiw's limit of the time, 32;
 * xiw's default is now 128, max_ird/max_ord, 1 to 128, and one-host runs
 * have not been tried again). scripts/guest/xiw_pair.sh runs
 * those programs between xiw and siw in two guests instead.
 */
#define XC_XIW_NETDEV	"xr0"
#define XC_XIW_DEV	"xiwT0"
#define XC_SIW_NETDEV	"xr1"
#define XC_SIW_DEV	"siwT1"
#define XC_SIW_ADDR	"10.99.1.1"

FIXTURE(cross) {
	struct xr_link xl, sl;
	struct run r;
	const char *sdev, *cdev, *saddr, *caddr;
};

FIXTURE_VARIANT(cross) {
	bool xiw_client;
};

FIXTURE_VARIANT_ADD(cross, xiw_to_siw) { .xiw_client = true };
FIXTURE_VARIANT_ADD(cross, siw_to_xiw) { .xiw_client = false };

FIXTURE_SETUP(cross)
{
	xr_lo_mtu(65536);
	ASSERT_EQ(0, xr_link_make(&self->xl, "xiw", XC_XIW_NETDEV, XC_XIW_DEV,
				  XR_ADDR)) TH_LOG("cannot create " XC_XIW_DEV);
	ASSERT_EQ(0, xr_link_make(&self->sl, "siw", XC_SIW_NETDEV, XC_SIW_DEV,
				  XC_SIW_ADDR))
		TH_LOG("cannot create " XC_SIW_DEV " (scripts/siw-build.sh builds build/siw/siw.ko)");
	self->cdev = variant->xiw_client ? XC_XIW_DEV : XC_SIW_DEV;
	self->caddr = variant->xiw_client ? XR_ADDR : XC_SIW_ADDR;
	self->sdev = variant->xiw_client ? XC_SIW_DEV : XC_XIW_DEV;
	self->saddr = variant->xiw_client ? XC_SIW_ADDR : XR_ADDR;
	run_init(&self->r);
}

FIXTURE_TEARDOWN(cross)
{
	run_fini(&self->r);
}

TEST_F_TIMEOUT(cross, rping_100, 120)
{
	ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, 7174,
				  "rping -s -a %s -p 7174 -C 100 -v -V",
				  self->saddr));
	CLIENT_OK("rping -c -a %s -I %s -p 7174 -C 100 -v -V", self->saddr,
		  self->caddr);
	ASSERT_EQ(100, count_lines(self->r.out, "ping data: rdma-ping-"))
		TH_LOG("client output:\n%s", self->r.out);
	SERVER_OK();
}

/* The same over IPv6, each netdev with an address of its own. */
TEST_F_TIMEOUT(cross, rping_ipv6, 120)
{
	const char *s6 = variant->xiw_client ? "fd00:99:1::1" : "fd00:99::1";
	const char *c6 = variant->xiw_client ? "fd00:99::1" : "fd00:99:1::1";

	ASSERT_EQ(0, sh("ip -6 addr replace fd00:99::1/64 dev " XC_XIW_NETDEV
			" nodad && ip -6 addr replace fd00:99:1::1/64 dev "
			XC_SIW_NETDEV " nodad"));
	ASSERT_LT(0, start_server(&self->r, CLIENT_S + 10, 7177,
				  "rping -s -a %s -p 7177 -C 100 -v -V", s6));
	CLIENT_OK("rping -c -a %s -I %s -p 7177 -C 100 -v -V", s6, c6);
	ASSERT_EQ(100, count_lines(self->r.out, "ping data: rdma-ping-"))
		TH_LOG("client output:\n%s", self->r.out);
	SERVER_OK();
}

/* The links, once every test process is gone. */
static void __attribute__((destructor)) purge(void)
{
	xr_link_purge();
	if (!ibdev_exists(XC_SIW_DEV) && !ibdev_exists(XC_XIW_DEV))
		return;
	sh("flock -w 60 " XR_LOCK " sh -c 'rdma link delete " XC_SIW_DEV
	   "; ip link del " XC_SIW_NETDEV "; rdma link delete " XC_XIW_DEV
	   "; ip link del " XC_XIW_NETDEV "' >/dev/null 2>&1");
}

TEST_HARNESS_MAIN
