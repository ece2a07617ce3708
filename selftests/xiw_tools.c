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

FIXTURE(tool) {
	struct xr_link link;
	pid_t srv;
	char log[64];
	char out[65536];
};

FIXTURE_SETUP(tool)
{
	xr_lo_mtu(65536);
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	snprintf(self->log, sizeof(self->log), "/tmp/xiw_tools.%d.log",
		 getpid());
}

static void kill_server(FIXTURE_DATA(tool) *self)
{
	if (self->srv > 0) {
		kill(-self->srv, SIGKILL);
		waitpid(self->srv, NULL, 0);
		self->srv = 0;
	}
}

FIXTURE_TEARDOWN(tool)
{
	kill_server(self);
	unlink(self->log);
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
static pid_t start_server(FIXTURE_DATA(tool) *self, int secs, int port,
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
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", full, (char *)NULL);
		_exit(127);
	}
	self->srv = pid;
	if (pid > 0)
		WAIT_UNTIL(listening(port) || waitpid(pid, NULL, WNOHANG) == pid,
			   10000);
	return pid;
}

/* Wait up to ms for the server to exit; its status, or -1 (killed). */
static int server_status(FIXTURE_DATA(tool) *self, int ms)
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

static void show_server_log(FIXTURE_DATA(tool) *self)
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

/* Run the client; on failure show both sides' output. */
#define CLIENT_OK(fmt, ...) do {					\
	int __rc = xsh(self->out, sizeof(self->out),			\
		       "timeout -k 2 %d " fmt, CLIENT_S, ##__VA_ARGS__);	\
	if (__rc) {							\
		fprintf(stderr, "# client output:\n%s\n", self->out);	\
		kill_server(self);					\
		show_server_log(self);					\
	}								\
	ASSERT_EQ(0, __rc) TH_LOG("client exit status %d", __rc);	\
} while (0)

/* The server exits by itself after its one run, with status 0. */
#define SERVER_OK() do {						\
	int __st = server_status(self, 15000);				\
	if (__st)							\
		show_server_log(self);					\
	ASSERT_EQ(0, __st) TH_LOG("server exit status %d (-1: killed)", __st); \
} while (0)

TEST_F_TIMEOUT(tool, rping_100, 120)
{
	ASSERT_LT(0, start_server(self, CLIENT_S + 10, 7174,
				  "rping -s -a " XR_ADDR " -p 7174 -C 100 -v"));
	CLIENT_OK("rping -c -a " XR_ADDR " -p 7174 -C 100 -v");
	ASSERT_EQ(100, count_lines(self->out, "ping data: rdma-ping-"))
		TH_LOG("client output:\n%s", self->out);
	ASSERT_NE(NULL, strstr(self->out, "ping data: rdma-ping-99: "));
	SERVER_OK();
}

TEST_F_TIMEOUT(tool, ucmatose_4_connections, 120)
{
	ASSERT_LT(0, start_server(self, CLIENT_S + 10, 7471,
				  "ucmatose -b " XR_ADDR " -p 7471 -c 4"));
	CLIENT_OK("ucmatose -s " XR_ADDR " -p 7471 -c 4");
	ASSERT_NE(NULL, strstr(self->out, "test complete"))
		TH_LOG("client output:\n%s", self->out);
	SERVER_OK();
}

TEST_F_TIMEOUT(tool, rdma_server_client, 120)
{
	ASSERT_LT(0, start_server(self, CLIENT_S + 10, 7472,
				  "rdma_server -s " XR_ADDR " -p 7472"));
	CLIENT_OK("rdma_client -s " XR_ADDR " -p 7472");
	ASSERT_NE(NULL, strstr(self->out, "rdma_client: end 0"))
		TH_LOG("client output:\n%s", self->out);
	SERVER_OK();
}

/* A perftest program over rdma_cm, 4096-byte messages, n iterations. */
static void perftest(struct __test_metadata *_metadata,
		     FIXTURE_DATA(tool) *self, const char *prog, int port,
		     int iters)
{
	ASSERT_LT(0, start_server(self, CLIENT_S + 10, port,
				  "%s -R -F -d %s -p %d -n %d -s 4096", prog,
				  self->link.ibdev, port, iters));
	CLIENT_OK("%s -R -F -d %s -p %d -n %d -s 4096 " XR_ADDR, prog,
		  self->link.ibdev, port, iters);
	ASSERT_NE(NULL, strstr(self->out, "#bytes"))
		TH_LOG("no result table:\n%s", self->out);
	ASSERT_NE(NULL, strstr(self->out, " 4096 "))
		TH_LOG("no 4096-byte result:\n%s", self->out);
	SERVER_OK();
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

/* qperf's server never exits: it is killed once the client is done. */
TEST_F_TIMEOUT(tool, qperf_rc, 120)
{
	static const char *const tests[] = {
		"rc_bw", "rc_lat", "rc_rdma_read_bw", "rc_rdma_write_bw",
	};
	unsigned int i;

	int rc;

	ASSERT_LT(0, start_server(self, CLIENT_S + 10, 19765, "qperf"));
	rc = xsh(self->out, sizeof(self->out), "timeout -k 2 %d qperf -cm1 -t 2 "
		 "-m 4096 " XR_ADDR " rc_bw rc_lat rc_rdma_read_bw "
		 "rc_rdma_write_bw", CLIENT_S);
	if (rc && xr_is_siw() && strstr(self->out, "failed to create QP"))
		SKIP(return, "qperf cannot create its RC QP on siw (EINVAL)");
	ASSERT_EQ(0, rc) TH_LOG("client exit status %d:\n%s", rc, self->out);
	for (i = 0; i < 4; i++)
		if (!strstr(self->out, tests[i]))
			break;
	ASSERT_EQ(4, i) TH_LOG("a result is missing:\n%s", self->out);
	ASSERT_FALSE(strstr(self->out, "failed") != NULL)
		TH_LOG("client output:\n%s", self->out);
	kill_server(self);
}

TEST_F_TIMEOUT(tool, rstream_rsockets, 120)
{
	ASSERT_LT(0, start_server(self, CLIENT_S + 10, 7473,
				  "rstream -b " XR_ADDR " -p 7473 -S 4096 -C 20 -I 5 -T v"));
	CLIENT_OK("rstream -s " XR_ADDR " -p 7473 -S 4096 -C 20 -I 5 -T v");
	ASSERT_NE(NULL, strstr(self->out, "4k"))
		TH_LOG("no result line:\n%s", self->out);
	SERVER_OK();
}

/* The last fixture's link, once every test process is gone. */
static void __attribute__((destructor)) purge(void)
{
	xr_link_purge();
}

TEST_HARNESS_MAIN
