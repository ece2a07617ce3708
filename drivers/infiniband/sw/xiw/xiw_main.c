// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw: software iWARP RDMA over the kernel's TCP. Module entry points.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "xiw.h"
#include "xiw_fault.h"

/*
 * /sys/kernel/debug/xiw: fault injection (xiw_fault.c) on kernels that
 * have it, which CRC32c runs and how fast each was, and what the
 * transmit path's page rings hold. Without it (a
 * failed creation, an error pointer) the files are simply not there.
 */
static struct dentry *xiw_debugfs;

static int __init xiw_init(void)
{
	int rv;

	xiw_debugfs = debugfs_create_dir("xiw", NULL);
	xiw_fault_init(xiw_debugfs);
	xiw_mpa_crc_init(xiw_debugfs);
	xiw_tx_own_pages_debugfs(xiw_debugfs);
	rv = xiw_tx_own_pages_init();
	if (rv)
		goto err;
	rv = xiw_cm_init();
	if (rv)
		goto err_own;
	rv = xiw_dev_init();
	if (rv)
		goto err_cm;
	return 0;

err_cm:
	xiw_cm_exit();
err_own:
	xiw_tx_own_pages_free();
err:
	debugfs_remove_recursive(xiw_debugfs);
	return rv;
}

static void __exit xiw_exit(void)
{
	xiw_dev_exit();
	xiw_cm_exit();
	xiw_tx_sets_free();
	xiw_tx_own_pages_free();
	debugfs_remove_recursive(xiw_debugfs);
}

module_init(xiw_init);
module_exit(xiw_exit);

MODULE_DESCRIPTION("Software iWARP RDMA (RDMAP/DDP/MPA over kernel TCP)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("xiw");
