// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Fault injection at xiw's allocation sites (see xiw_fault.h). The
 * kernel's failslab and fail_page_alloc reach allocations made in a
 * test's own system calls (fail-nth); the connection manager's work
 * items, the data path and device creation through netlink allocate
 * elsewhere, and a site number aims a failure at exactly one of them.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/seq_file.h>

#include "xiw_fault.h"

static DECLARE_FAULT_ATTR(xiw_fail_alloc);
static u32 xiw_fail_site;
static atomic_t xiw_site_reached[XIW_FAULT_NR];
static atomic_t xiw_site_failed[XIW_FAULT_NR];

static const char *const xiw_site_names[XIW_FAULT_NR] = {
	[XIW_FAULT_ANY] = "any",
	[XIW_FAULT_CONN_CONNECT] = "conn_connect",
	[XIW_FAULT_CONN_LISTEN] = "conn_listen",
	[XIW_FAULT_CONN_ACCEPT] = "conn_accept",
	[XIW_FAULT_LISTEN] = "listen",
	[XIW_FAULT_SOCK] = "sock",
	[XIW_FAULT_MPA_FRAME] = "mpa_frame",
	[XIW_FAULT_WIRE_RINGS] = "wire_rings",
	[XIW_FAULT_DEV_COUNTERS] = "dev_counters",
	[XIW_FAULT_QP_COUNTER] = "qp_counter",
	[XIW_FAULT_QP_COUNTER_ID] = "qp_counter_id",
	[XIW_FAULT_MR] = "mr",
	[XIW_FAULT_MR_ID] = "mr_id",
	[XIW_FAULT_MR_UMEM] = "mr_umem",
	[XIW_FAULT_MR_PAGES] = "mr_pages",
	[XIW_FAULT_MR_FRMR_LIST] = "mr_frmr_list",
	[XIW_FAULT_MW] = "mw",
	[XIW_FAULT_QP_SQ_PEND] = "qp_sq_pend",
	[XIW_FAULT_QP_ID] = "qp_id",
	[XIW_FAULT_RX] = "rx",
	[XIW_FAULT_TX] = "tx",
	[XIW_FAULT_RING] = "ring",
	[XIW_FAULT_RING_MMAP] = "ring_mmap",
	[XIW_FAULT_ZC_CTX] = "zc_ctx",
	[XIW_FAULT_ZC_MSG] = "zc_msg",
	[XIW_FAULT_ZC_PAGE] = "zc_page",
	[XIW_FAULT_TX_MARKERS] = "tx_markers",
	[XIW_FAULT_TX_SET] = "tx_set",
	[XIW_FAULT_TX_OWN_PAGE] = "tx_own_page",
	[XIW_FAULT_CRC_PROBE] = "crc_probe",
};

bool xiw_fault(enum xiw_fault_site site)
{
	u32 sel = READ_ONCE(xiw_fail_site);

	if (WARN_ON_ONCE(site <= XIW_FAULT_ANY || site >= XIW_FAULT_NR))
		return false;
	atomic_inc(&xiw_site_reached[site]);
	if (sel != XIW_FAULT_ANY && sel != site)
		return false;
	if (!should_fail(&xiw_fail_alloc, 1))
		return false;
	atomic_inc(&xiw_site_failed[site]);
	return true;
}

static int xiw_sites_show(struct seq_file *m, void *v)
{
	int i;

	for (i = XIW_FAULT_ANY + 1; i < XIW_FAULT_NR; i++)
		seq_printf(m, "%d %s %d %d\n", i, xiw_site_names[i],
			   atomic_read(&xiw_site_reached[i]),
			   atomic_read(&xiw_site_failed[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xiw_sites);

/* The files in the module's debugfs directory d (xiw_main.c). */
void xiw_fault_init(struct dentry *d)
{
	/* Nothing to fail with: the tests that need it say so. */
	if (IS_ERR_OR_NULL(d))
		return;
	/* Off until a test sets probability (and times, fail_site). */
	fault_create_debugfs_attr("fail_alloc", d, &xiw_fail_alloc);
	debugfs_create_u32("fail_site", 0600, d, &xiw_fail_site);
	debugfs_create_file("sites", 0400, d, NULL, &xiw_sites_fops);
}
