// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw: software iWARP RDMA over the kernel's TCP. Module entry points.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "xiw.h"

static int __init xiw_init(void)
{
	return xiw_dev_init();
}

static void __exit xiw_exit(void)
{
	xiw_dev_exit();
}

module_init(xiw_init);
module_exit(xiw_exit);

MODULE_DESCRIPTION("Software iWARP RDMA (RDMAP/DDP/MPA over kernel TCP)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("xiw");
