// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Preloaded into rdmacm-utils' cmtime by scripts/guest/tcg-prof.sh, so
 * that the tbprof plugin's counts of a connection run read as work:
 *
 * - cmtime's client waits for the end of each step by calling
 *   sched_yield() in a loop, which under the plugin counts elapsed time,
 *   not work (the scheduler's functions filled the top of the report).
 *   Here the call sleeps for 200 us instead.
 *
 * - With TCG_PROF_SNAP set, it asks the plugin for two snapshots more,
 *   the way the guest script does: "mid-TAG" when the client first calls
 *   rdma_disconnect (the connect step is over, the disconnect step
 *   starts), and "end-TAG" when it first calls rdma_destroy_id after
 *   that, a second later, before that call runs (the disconnect step is
 *   over at both ends; the server's teardown has run, the client's has
 *   not). The report then counts the two steps apart. TAG is
 *   TCG_PROF_SNAP's value, TCG_PROF_DIR the share the plugin watches.
 *
 * Only the client is run with it. cmtime calls rdma_disconnect and
 * rdma_destroy_id through the PLT, so these definitions come first; each
 * passes on to librdmacm's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "snapshot.h"

struct rdma_cm_id;

int sched_yield(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000 };

	nanosleep(&ts, NULL);
	return 0;
}

static int disconnecting;

int rdma_disconnect(struct rdma_cm_id *id)
{
	static int (*next)(struct rdma_cm_id *);

	if (!next)
		next = (int (*)(struct rdma_cm_id *))dlsym(RTLD_NEXT,
							   "rdma_disconnect");
	if (!next)
		abort();
	if (!disconnecting) {
		disconnecting = 1;
		ask_snapshot("cmtime-steps", "mid");
	}
	return next(id);
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	static int (*next)(struct rdma_cm_id *);
	static int ended;

	if (!next)
		next = (int (*)(struct rdma_cm_id *))dlsym(RTLD_NEXT,
							   "rdma_destroy_id");
	if (!next)
		abort();
	if (disconnecting && !ended && getenv("TCG_PROF_SNAP")) {
		ended = 1;
		sleep(1);
		ask_snapshot("cmtime-steps", "end");
	}
	return next(id);
}
