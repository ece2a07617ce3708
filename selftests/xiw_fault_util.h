/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * xiw's fault-injection sites from user space (drivers/.../xiw_fault.h):
 * /sys/kernel/debug/xiw/ on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS
 * (the debug kernel of make check-debug). Include after
 * kselftest_harness.h and xiw_util.h.
 */
#ifndef XIW_FAULT_UTIL_H
#define XIW_FAULT_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XF_DIR		"/sys/kernel/debug/xiw/"

static __attribute__((unused)) int xf_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), rv;

	if (fd < 0)
		return -1;
	rv = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return rv;
}

static __attribute__((unused)) int xf_attr(const char *name, const char *val)
{
	char p[256];

	snprintf(p, sizeof(p), XF_DIR "fail_alloc/%s", name);
	return xf_write(p, val);
}

/* A site's number, and how often it was reached and failed; -1: none. */
static __attribute__((unused)) int xf_site(const char *name, long *reached, long *failed)
{
	char line[128], n[64];
	long r, f;
	FILE *fp = fopen(XF_DIR "sites", "r");
	int id, found = -1;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%d %63s %ld %ld", &id, n, &r, &f) == 4 &&
		    !strcmp(n, name)) {
			found = id;
			if (reached)
				*reached = r;
			if (failed)
				*failed = f;
		}
	fclose(fp);
	return found;
}

static __attribute__((unused)) long xf_failed(const char *name)
{
	long f = -1;

	xf_site(name, NULL, &f);
	return f;
}

/* The next allocation at the site fails, once. */
static __attribute__((unused)) int xf_arm(const char *name)
{
	char v[16];
	int id = xf_site(name, NULL, NULL);

	if (id < 0)
		return -1;
	snprintf(v, sizeof(v), "%d", id);
	if (xf_write(XF_DIR "fail_site", v))
		return -1;
	return xf_attr("times", "1");
}

static __attribute__((unused)) void xf_disarm(void)
{
	xf_attr("times", "0");
	xf_write(XF_DIR "fail_site", "0");
}

/* Is there fault injection? Mounts debugfs first if need be. */
static bool __attribute__((unused)) xf_present(void)
{
	sh("mount -t debugfs none /sys/kernel/debug >/dev/null 2>&1");
	return path_exists(XF_DIR "fail_site");
}

/* Disarmed, every armed failure certain, quiet, any task. 0 or -1. */
static int __attribute__((unused)) xf_prepare(void)
{
	xf_disarm();
	if (xf_attr("probability", "100") || xf_attr("interval", "1") ||
	    xf_attr("verbose", "0") || xf_attr("task-filter", "N"))
		return -1;
	return 0;
}

/*
 * fail-nth: the Nth fault-injection point reached by this thread from
 * now on fails. xf_nth_left() then says how many points were still to
 * go (0: the Nth was reached) and switches it off; -1 on error.
 * xf_nth_fired(): whether the Nth was reached, after the call made in
 * between.
 */
static __attribute__((unused)) int xf_nth_set(int n)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", n);
	return xf_write("/proc/thread-self/fail-nth", v);
}

static long __attribute__((unused)) xf_nth_left(void)
{
	char v[24] = "";
	int fd = open("/proc/thread-self/fail-nth", O_RDWR);
	long left;

	if (fd < 0)
		return -1;
	left = read(fd, v, sizeof(v) - 1) > 0 ? atol(v) : -1;
	/* Not reached: switch it off for what follows. */
	if (write(fd, "0", 1) < 0)
		left = -1;
	close(fd);
	return left;
}

static bool __attribute__((unused)) xf_nth_fired(void)
{
	return xf_nth_left() == 0;
}

/* fail-nth and failslab (a kernel with fault injection)? Mounts debugfs. */
static bool __attribute__((unused)) xf_nth_present(void)
{
	sh("mount -t debugfs none /sys/kernel/debug >/dev/null 2>&1");
	return path_exists("/proc/thread-self/fail-nth") &&
	       path_exists("/sys/kernel/debug/failslab");
}

/*
 * GFP_KERNEL allocations are the ones that matter: they may fail too,
 * and no failure logs its stack. 0 or the shell's status.
 */
static int __attribute__((unused)) xf_nth_prepare(void)
{
	return sh("echo N > /sys/kernel/debug/failslab/ignore-gfp-wait && "
		  "echo N > /sys/kernel/debug/fail_page_alloc/ignore-gfp-wait && "
		  "echo 0 > /sys/kernel/debug/failslab/verbose && "
		  "echo 0 > /sys/kernel/debug/fail_page_alloc/verbose");
}

#endif /* XIW_FAULT_UTIL_H */
