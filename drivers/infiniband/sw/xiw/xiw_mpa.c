// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MPA framing arithmetic shared by transmit and receive (RFC 5044
 * section 4): the MULPDU, where markers fall, CRC32c over page pieces,
 * and which CRC32c implementation runs. Nothing here touches a socket
 * or a QP.
 */
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "xiw.h"
#include "xiw_fault.h"

/* CRC32c, continued from crc, over the first len bytes of bv. */
u32 xiw_mpa_crc_bvec(u32 crc, const struct bio_vec *bv, u32 len)
{
	int i;

	for (i = 0; len; i++) {
		u32 l = min(len, bv[i].bv_len);
		void *p = kmap_local_page(bv[i].bv_page);

		crc = xiw_crc32c(crc, p + bv[i].bv_offset, l);
		kunmap_local(p);
		len -= l;
	}
	return crc;
}

/*
 * Which CRC32c computes MPA's CRC (module parameter crc_impl):
 *
 * - crypto: crc32c(), which asks the crypto API for the implementation
 *   of highest priority (on x86 with SSE4.2, crc32c-intel: the CPU's
 *   crc32 instruction, with PCLMULQDQ for long buffers);
 * - generic: __crc32c_le(), the kernel's own table-driven code;
 * - auto (the default): time both at load, and at each write of "auto",
 *   and take the faster, as the kernel's xor and raid6 code time their
 *   candidates rather than trust a fixed ranking. The priorities assume
 *   the instruction runs in hardware; where the CPU is emulated (QEMU
 *   without KVM runs crc32 and PCLMULQDQ a bit at a time) the table is
 *   several times faster.
 *
 * Both compute the same function, so a change while connections run
 * changes nothing but the speed. xiw_crc_table is what the data path
 * reads (xiw_crc32c()); the rest is under xiw_crc_lock.
 */
bool xiw_crc_table __read_mostly;

enum { XIW_CRC_AUTO, XIW_CRC_CRYPTO, XIW_CRC_GENERIC };
static const char * const xiw_crc_names[] = { "auto", "crypto", "generic" };
static DEFINE_MUTEX(xiw_crc_lock);
static int xiw_crc_mode = XIW_CRC_AUTO;
static bool xiw_crc_live;	/* module init has run */
/* The last timing, ns per XIW_CRC_PROBE bytes: crypto, generic; 0 none. */
static u64 xiw_crc_ns[2];

#define XIW_CRC_PROBE	4096
#define XIW_CRC_TRIES	5

/* The fastest of a few runs over buf: one interrupt does not decide. */
static u64 xiw_crc_time(bool table, const u8 *buf)
{
	u64 best = U64_MAX, t;
	u32 crc;
	int i;

	for (i = 0; i < XIW_CRC_TRIES; i++) {
		preempt_disable();
		t = ktime_get_ns();
		crc = table ? __crc32c_le(~0U, buf, XIW_CRC_PROBE) :
			      crc32c(~0U, buf, XIW_CRC_PROBE);
		/*
		 * __crc32c_le() is pure: a result unused is a call dropped.
		 * Make it used, and done before the clock is read again.
		 */
		barrier_data(&crc);
		t = ktime_get_ns() - t;
		preempt_enable();
		best = min(best, t);
	}
	/* 0 means "not timed" (debugfs): a coarse clock still gives 1. */
	return max_t(u64, best, 1);
}

/*
 * Time both on the same bytes. Without a buffer keep the crypto API's
 * choice, as a kernel without this parameter would have.
 */
static bool xiw_crc_probe(void)
{
	u8 *buf;
	u32 i;

	xiw_crc_ns[0] = 0;
	xiw_crc_ns[1] = 0;
	buf = xiw_fault(XIW_FAULT_CRC_PROBE) ? NULL :
		kmalloc(XIW_CRC_PROBE, GFP_KERNEL);
	if (!buf)
		return false;
	for (i = 0; i < XIW_CRC_PROBE; i++)	/* bytes without a pattern */
		buf[i] = (i * 2654435761U) >> 24;
	xiw_crc_ns[0] = xiw_crc_time(false, buf);
	xiw_crc_ns[1] = xiw_crc_time(true, buf);
	kfree(buf);
	return xiw_crc_ns[1] < xiw_crc_ns[0];
}

/* Make the asked mode the one in use. xiw_crc_lock held. */
static void xiw_crc_apply(void)
{
	bool table = xiw_crc_mode == XIW_CRC_GENERIC;

	if (xiw_crc_mode == XIW_CRC_AUTO)
		table = xiw_crc_probe();
	WRITE_ONCE(xiw_crc_table, table);
}

static int xiw_crc_set(const char *val, const struct kernel_param *kp)
{
	int mode = sysfs_match_string(xiw_crc_names, val);

	if (mode < 0)
		return -EINVAL;
	mutex_lock(&xiw_crc_lock);
	WRITE_ONCE(xiw_crc_mode, mode);	/* xiw_crc_get() reads it bare */
	/* At load the parameter is parsed before init: init applies it. */
	if (xiw_crc_live)
		xiw_crc_apply();
	mutex_unlock(&xiw_crc_lock);
	return 0;
}

static int xiw_crc_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 xiw_crc_names[READ_ONCE(xiw_crc_mode)]);
}

static const struct kernel_param_ops xiw_crc_ops = {
	.set = xiw_crc_set,
	.get = xiw_crc_get,
};
module_param_cb(crc_impl, &xiw_crc_ops, NULL, 0644);
MODULE_PARM_DESC(crc_impl,
		 "MPA CRC32c: auto (time both at load, the default), crypto, generic");

/* The name of what runs, as crc_impl spells it. */
static const char *xiw_crc_name(bool table)
{
	return xiw_crc_names[table ? XIW_CRC_GENERIC : XIW_CRC_CRYPTO];
}

/* What was timed and what runs (debugfs: crc32c). */
static int xiw_crc_show(struct seq_file *m, void *v)
{
	mutex_lock(&xiw_crc_lock);
	seq_printf(m, "mode %s\n", xiw_crc_names[xiw_crc_mode]);
	seq_printf(m, "crypto_ns %llu\n", xiw_crc_ns[0]);
	seq_printf(m, "generic_ns %llu\n", xiw_crc_ns[1]);
	seq_printf(m, "using %s\n", xiw_crc_name(xiw_crc_table));
	mutex_unlock(&xiw_crc_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xiw_crc);

void xiw_mpa_crc_init(struct dentry *dir)
{
	mutex_lock(&xiw_crc_lock);
	xiw_crc_live = true;
	xiw_crc_apply();
	if (xiw_crc_mode == XIW_CRC_AUTO && xiw_crc_ns[0])
		pr_info("xiw: crc32c: using %s (%llu ns per 4 KiB; %s %llu ns)\n",
			xiw_crc_name(xiw_crc_table), xiw_crc_ns[xiw_crc_table],
			xiw_crc_name(!xiw_crc_table),
			xiw_crc_ns[!xiw_crc_table]);
	mutex_unlock(&xiw_crc_lock);
	debugfs_create_file("crc32c", 0400, dir, NULL, &xiw_crc_fops);
}
