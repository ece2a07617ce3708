// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw: software iWARP RDMA over the kernel's TCP. Module entry points.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "xiw.h"
#include "xiw_fault.h"

static int __init xiw_init(void)
{
	int rv;

	xiw_fault_init();
	rv = xiw_cm_init();
	if (rv)
		goto err;
	rv = xiw_dev_init();
	if (rv)
		goto err_cm;
	return 0;

err_cm:
	xiw_cm_exit();
err:
	xiw_fault_exit();
	return rv;
}

static void __exit xiw_exit(void)
{
	xiw_dev_exit();
	xiw_cm_exit();
	xiw_tx_sets_free();
	xiw_tx_own_pages_free();
	xiw_fault_exit();
}

module_init(xiw_init);
module_exit(xiw_exit);

MODULE_DESCRIPTION("Software iWARP RDMA (RDMAP/DDP/MPA over kernel TCP)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("xiw");
