// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A TCG plugin for QEMU 7.2 (Debian 12's; plugin API version 1) that
 * counts how many times each translated block of the guest ran, and how
 * many of its instructions are of the kinds that cost more than their
 * count under emulation: those that may enable interrupts (popf, sti: the
 * block ends there and QEMU goes back to its main loop), cli, locked
 * read-modify-writes (a lock prefix, or xchg with memory).
 *
 * Nothing is written until asked: when the file DIR/snap names a
 * snapshot (its first line; the guest writes it through its writable
 * share) that DIR/snap-NAME.tsv does not hold yet, every block that ran
 * is written there, one line each,
 *
 *	vaddr  insns  runs  irq-enables  clis  locked
 *
 * under a temporary name renamed when complete. The guest waits for that
 * file and removes DIR/snap itself: a file the host removed under it can
 * stay in the guest's 9p dentry cache, and creating it again then fails.
 * Two snapshots taken around a workload give what it ran.
 * scripts/tcg-prof.sh drives it.
 *
 *	qemu-system-x86_64 ... -plugin tbprof.so,dir=DIR
 *
 * Debian does not package qemu-plugin.h: the few entry points used are
 * declared here as QEMU 7.2 exports them. The counters are added to by
 * every vCPU without atomics (QEMU's inline add); a lost update now and
 * then is noise next to the thousands of runs a block makes.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;

enum { K_IRQON, K_CLI, K_LOCKED, K_NR };

/* One block, by guest address and length (a block may be translated again). */
struct block {
	uint64_t vaddr;		/* 0: free slot */
	uint64_t insns;
	uint64_t runs;
	uint32_t kinds[K_NR];
};

#define NBLOCKS (1u << 22)	/* open addressing, at most half full */
static struct block *blocks;
static unsigned long nused;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[512];

static struct block *block_get(uint64_t vaddr, uint64_t insns)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ull) ^ insns;
	uint32_t i = (uint32_t)(h >> 20) & (NBLOCKS - 1);

	for (;; i = (i + 1) & (NBLOCKS - 1)) {
		struct block *b = &blocks[i];

		if (b->vaddr == vaddr && b->insns == insns)
			return b;
		if (b->vaddr)
			continue;
		if (nused >= NBLOCKS / 2)
			return NULL;
		nused++;
		b->insns = insns;
		/* The snapshot thread reads vaddr first, without the lock. */
		__atomic_store_n(&b->vaddr, vaddr, __ATOMIC_RELEASE);
		return b;
	}
}

/* What kind of instruction is at b[0..len): one of K_*, or K_NR. */
static int insn_kind(const uint8_t *b, size_t len)
{
	size_t j = 0;
	int locked = 0;

	for (; j < len; j++) {		/* legacy prefixes */
		if (b[j] == 0xf0)
			locked = 1;
		else if (!memchr("\xf2\xf3\x2e\x3e\x26\x36\x64\x65\x66\x67",
				 b[j], 10))
			break;
	}
	if (j < len && (b[j] & 0xf0) == 0x40)	/* REX */
		j++;
	if (j >= len)
		return K_NR;
	if (b[j] == 0x9d || b[j] == 0xfb)
		return K_IRQON;
	if (b[j] == 0xfa)
		return K_CLI;
	/* xchg locks when an operand is memory (mod != 3) */
	if (locked || ((b[j] == 0x86 || b[j] == 0x87) && j + 1 < len &&
		       (b[j + 1] >> 6) != 3))
		return K_LOCKED;
	return K_NR;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t insns = qemu_plugin_tb_n_insns(tb);
	uint32_t kinds[K_NR + 1] = { 0 };
	struct block *b;
	size_t i;

	(void)id;
	for (i = 0; i < insns; i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);

		kinds[insn_kind(qemu_plugin_insn_data(in),
				qemu_plugin_insn_size(in))]++;
	}
	pthread_mutex_lock(&blocks_lock);
	b = block_get(qemu_plugin_tb_vaddr(tb), insns);
	if (b)
		memcpy(b->kinds, kinds, sizeof(b->kinds));
	pthread_mutex_unlock(&blocks_lock);
	if (b)
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
			QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
}

static void snapshot(const char *name)
{
	char path[700], tmp[710];
	uint32_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/snap-%s.tsv", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (i = 0; i < NBLOCKS; i++) {
		const struct block *b = &blocks[i];
		uint64_t va = __atomic_load_n(&b->vaddr, __ATOMIC_ACQUIRE);
		uint64_t runs = __atomic_load_n(&b->runs, __ATOMIC_RELAXED);

		if (va && runs)
			fprintf(f, "%llx\t%llu\t%llu\t%u\t%u\t%u\n",
				(unsigned long long)va,
				(unsigned long long)b->insns,
				(unsigned long long)runs, b->kinds[K_IRQON],
				b->kinds[K_CLI], b->kinds[K_LOCKED]);
	}
	if (fclose(f) == 0)
		rename(tmp, path);
}

/* Watches for DIR/snap every 50 ms: QEMU gives a plugin no other clock. */
static void *watcher(void *arg)
{
	const struct timespec period = { 0, 50 * 1000 * 1000 };
	char trigger[600], name[128], done[700];

	(void)arg;
	snprintf(trigger, sizeof(trigger), "%s/snap", dir);
	for (;; nanosleep(&period, NULL)) {
		FILE *f = fopen(trigger, "r");

		if (!f)
			continue;
		name[0] = 0;
		if (fgets(name, sizeof(name), f))
			name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")] = 0;
		fclose(f);
		if (!name[0] || name[0] == '.')
			continue;
		snprintf(done, sizeof(done), "%s/snap-%s.tsv", dir, name);
		if (access(done, F_OK))
			snapshot(name);
	}
	return NULL;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	pthread_t thread;
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "dir=", 4))
			snprintf(dir, sizeof(dir), "%s", argv[i] + 4);
	if (!dir[0]) {
		fprintf(stderr, "tbprof: needs dir=DIR\n");
		return -1;
	}
	blocks = calloc(NBLOCKS, sizeof(*blocks));
	if (!blocks || pthread_create(&thread, NULL, watcher, NULL)) {
		fprintf(stderr, "tbprof: out of memory or threads\n");
		return -1;
	}
	pthread_detach(thread);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
