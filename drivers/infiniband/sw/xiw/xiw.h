/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * xiw: software iWARP (RFC 5040/5041/5044/6581/7306) over kernel TCP.
 * Private declarations shared by the driver's files.
 */
#ifndef XIW_H
#define XIW_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#define XIW_NODE_DESC "xiw software iWARP"

/*
 * Device limits, published by query_device. They are chosen, not
 * inherited: each one is the bound that object creation enforces (see
 * Documentation/limits.rst, which must change with them).
 */
#define XIW_MAX_QP		4096
#define XIW_MAX_QP_WR		16384
#define XIW_MAX_SGE		8
#define XIW_MAX_SGE_RD		8
#define XIW_MAX_CQ		4096
#define XIW_MAX_CQE		65536
#define XIW_MAX_MR		65536
#define XIW_MAX_MR_SIZE		BIT_ULL(40)
#define XIW_MAX_PD		65536
#define XIW_MAX_SRQ		1024
#define XIW_MAX_SRQ_WR		16384
#define XIW_MAX_IRD		32
#define XIW_MAX_ORD		32
#define XIW_MAX_FRMR_PAGES	4096
#define XIW_MAX_INLINE		256

struct xiw_device {
	struct ib_device ibdev;		/* first: ib_alloc_device() contract */
	struct net_device *netdev;	/* held by netdev_tracker until dealloc */
	netdevice_tracker netdev_tracker;
	struct list_head list;		/* on xiw_devices, see xiw_dev.c */
	enum ib_port_state reported;	/* last port state raised as an event;
					 * written under RTNL only
					 */
	atomic_t num_pd;
};

struct xiw_ucontext {
	struct ib_ucontext ibuc;
};

struct xiw_pd {
	struct ib_pd ibpd;
};

static inline struct xiw_device *to_xdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct xiw_device, ibdev);
}

/* xiw_dev.c */
int xiw_dev_init(void);
void xiw_dealloc_driver(struct ib_device *ibdev);
void xiw_dev_exit(void);

/* xiw_verbs.c */
extern const struct ib_device_ops xiw_dev_ops;
enum ib_port_state xiw_port_state(const struct xiw_device *xdev);

#endif /* XIW_H */
