// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw: software iWARP RDMA over the kernel's TCP. Module entry points.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "xiw.h"

static int __init xiw_init(void)
{
	int rv;

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
	return rv;
}

static void __exit xiw_exit(void)
{
	xiw_dev_exit();
	xiw_cm_exit();
}

module_init(xiw_init);
module_exit(xiw_exit);

MODULE_DESCRIPTION("Software iWARP RDMA (RDMAP/DDP/MPA over kernel TCP)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("xiw");
