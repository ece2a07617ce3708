/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * For the libraries scripts/guest/tcg-prof.sh preloads into a program:
 * ask the tbprof plugin for a snapshot, the way the guest script does
 * (scripts/tcg-prof/tbprof.c), and wait until it is written.
 * TCG_PROF_SNAP names the run (the snapshot is WHAT-TAG), TCG_PROF_DIR
 * is the share the plugin watches; without both, nothing is asked.
 */
#ifndef TCG_PROF_SNAPSHOT_H
#define TCG_PROF_SNAPSHOT_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Ask for snapshot WHAT-TAG and wait (up to a minute) until it is written. */
static inline void ask_snapshot(const char *who, const char *what)
{
	const char *tag = getenv("TCG_PROF_SNAP");
	const char *dir = getenv("TCG_PROF_DIR");
	char name[256], path[4096], req[4096];
	FILE *f;
	int i;

	if (!tag || !dir)
		return;
	snprintf(name, sizeof(name), "%s-%s", what, tag);
	snprintf(path, sizeof(path), "%s/snap-%s.tsv", dir, name);
	snprintf(req, sizeof(req), "%s/snap", dir);
	unlink(path);
	f = fopen(req, "w");
	if (!f) {
		fprintf(stderr, "%s: snapshot request: ", who);
		perror(req);
		return;
	}
	fprintf(f, "%s\n", name);
	fclose(f);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
	if (i == 600)
		fprintf(stderr, "%s: no snapshot %s\n", who, name);
	/* The guest removes the request, not the host (see tbprof.c). */
	unlink(req);
}

#endif
