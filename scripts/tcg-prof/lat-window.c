// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Preloaded into both ends of a perftest latency program by
 * scripts/guest/tcg-prof.sh, so that the tbprof plugin's counts can
 * cover a stretch of steady round trips and nothing else: no process
 * start, no connection, no clock calibration, no exit, whose counts vary
 * from run to run by more than a round trip's work. (The server asks for
 * nothing; it loads this only to map every object where the client does.)
 *
 * Both providers ring the send doorbell with a write() of the uverbs
 * POST_SEND command, xiw's only when its kernel side is not busy with the
 * SQ. This counts those writes and asks for snapshot "from-TAG" just
 * before doorbell TCG_PROF_FROM and "to-TAG" just before doorbell
 * TCG_PROF_TO (scripts/tcg-prof/snapshot.h): with TO the client's last
 * post, between them lie exactly TO - FROM posts, each one round trip;
 * a skipped doorbell leaves no "to-TAG". The providers call write()
 * through the PLT, so this definition comes first; it passes every call
 * on to libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "snapshot.h"

static long env_count(const char *name)
{
	const char *v = getenv(name);

	return v ? strtol(v, NULL, 10) : -1;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	static ssize_t (*next)(int, const void *, size_t);
	static long doorbells, from = -2, to = -2;
	uint32_t command;

	if (!next)
		next = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT,
								     "write");
	if (!next)
		abort();
	if (from == -2) {
		from = env_count("TCG_PROF_FROM");
		to = env_count("TCG_PROF_TO");
	}
	if (count >= sizeof(struct ib_uverbs_cmd_hdr) && buf) {
		memcpy(&command, buf, sizeof(command));
		if (command == IB_USER_VERBS_CMD_POST_SEND) {
			doorbells++;
			if (doorbells == from)
				ask_snapshot("lat-window", "from");
			else if (doorbells == to)
				ask_snapshot("lat-window", "to");
		}
	}
	return next(fd, buf, count);
}
