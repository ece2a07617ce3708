/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Small helpers shared by the xiw selftests: run a command, read a sysfs
 * file, wait for a condition. The tests run as root inside the test VM
 * (scripts/vm-run.sh), where xiw is installed and may be loaded and
 * unloaded at will.
 */
#ifndef XIW_SELFTEST_UTIL_H
#define XIW_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/*
 * Run a shell command built from fmt; its combined output goes to out
 * (truncated to len) when out is not NULL, else to our stdout. Returns
 * the exit status, or -1 if it did not exit normally.
 */
static int __attribute__((format(printf, 3, 4), unused))
xsh(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024];
	size_t used = 0;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	if (!out) {
		st = system(cmd);
	} else {
		strcat(cmd, " 2>&1");
		f = popen(cmd, "r");
		if (!f)
			return -1;
		while (used + 1 < len) {
			size_t n = fread(out + used, 1, len - 1 - used, f);

			if (!n)
				break;
			used += n;
		}
		out[used] = '\0';
		st = pclose(f);
	}
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

#define sh(...) xsh(NULL, 0, __VA_ARGS__)

/* Start "sh -c CMD" in a process group of its own: its pid, or -1. */
static pid_t __attribute__((unused)) xsh_spawn(const char *cmd)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Read a small text file, without its trailing newline. -errno on error. */
static int __attribute__((unused))
read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

static bool __attribute__((unused)) path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static bool __attribute__((unused)) ibdev_exists(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s", name);
	return path_exists(p);
}

/* Read /sys/class/infiniband/<dev>/<attr> into buf; -errno on error. */
static int __attribute__((unused))
ibdev_attr(const char *dev, const char *attr, char *buf, size_t len)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/%s", dev, attr);
	return read_text(p, buf, len);
}

static long long __attribute__((unused)) now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Evaluate cond every 10 ms until it holds or ms have passed. */
#define WAIT_UNTIL(cond, ms) ({					\
	long long __end = now_ms() + (ms);			\
	bool __ok;						\
	while (!(__ok = (cond)) && now_ms() < __end)		\
		usleep(10000);					\
	__ok;							\
})

/* Create an up dummy netdev with a fixed MAC; 0 on success. */
static int __attribute__((unused))
dummy_add(const char *name, const char *mac)
{
	sh("ip link del %s >/dev/null 2>&1", name);
	return sh("ip link add %s address %s type dummy && ip link set %s up",
		  name, mac, name);
}

static bool __attribute__((unused)) xiw_loaded(void)
{
	return path_exists("/sys/module/xiw");
}

/* Open the RDMA device called name through libibverbs; NULL if absent. */
static __attribute__((unused)) struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/*
 * Wait up to ms for an async event of the given type, acknowledging
 * everything read. Returns true when it arrived.
 */
static bool __attribute__((unused))
wait_async(struct ibv_context *ctx, enum ibv_event_type type, int ms)
{
	long long end = now_ms() + ms;
	struct ibv_async_event ev;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (now_ms() < end) {
		if (poll(&p, 1, (int)(end - now_ms())) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type)
			return true;
	}
	return false;
}

/*
 * Skip from a FIXTURE_SETUP. The 6.1 harness runs the test body after a
 * SKIP() in the setup (it stops only when the setup failed, and SKIP marks
 * the test passed), so the body would run on a fixture never set up.
 * This jumps back to the harness's wrapper as a failed ASSERT does, but
 * with the test marked skipped and not aborted: neither the body nor the
 * teardown runs, and the test reports as a skip with the reason.
 */
#define XSKIP_SETUP(fmt, ...) do {					\
	SKIP(, fmt, ##__VA_ARGS__);					\
	longjmp(_metadata->env, 1);					\
} while (0)

#endif /* XIW_SELFTEST_UTIL_H */
