// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device life cycle: "rdma link add" creates an xiw device on a netdev,
 * the netdev's events drive its port, and it goes away with "rdma link
 * delete", with its netdev, or with the module.
 *
 * Lifetime rules:
 *  - xiw_devices holds every registered device from the end of
 *    ib_register_device() until dealloc_driver. Additions and removals
 *    happen under RTNL and xiw_devices_lock; readers hold either.
 *  - A device found on the list may already be unregistering; whoever
 *    acts on it must first win ib_device_try_get().
 *  - The netdev is pinned by xdev->netdev_tracker until dealloc_driver, so
 *    xdev->netdev is valid for every verb the core can still call.
 */
#include <linux/if_arp.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_netlink.h>

#include "xiw.h"

static LIST_HEAD(xiw_devices);
static DEFINE_SPINLOCK(xiw_devices_lock);

/* Serialises "rdma link add" so two links cannot race onto one netdev. */
static DEFINE_MUTEX(xiw_link_mutex);

/* Caller holds RTNL or xiw_devices_lock. */
static struct xiw_device *xiw_find(const struct net_device *ndev)
{
	struct xiw_device *xdev;

	list_for_each_entry(xdev, &xiw_devices, list)
		if (xdev->netdev == ndev)
			return xdev;
	return NULL;
}

/*
 * Called by the core as the last step of unregistration, and by
 * ib_dealloc_device() when registration failed.
 */
void xiw_dealloc_driver(struct ib_device *ibdev)
{
	struct xiw_device *xdev = to_xdev(ibdev);

	rtnl_lock();
	spin_lock(&xiw_devices_lock);
	list_del_init(&xdev->list);
	spin_unlock(&xiw_devices_lock);
	rtnl_unlock();
	xiw_cm_dev_stop(xdev);
	netdev_put(xdev->netdev, &xdev->netdev_tracker);
	xiw_counters_free(xdev);
}

static void xiw_port_event(struct xiw_device *xdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &xdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* Must hold RTNL: xdev->reported is only touched from netdev events. */
static void xiw_port_update(struct xiw_device *xdev)
{
	enum ib_port_state now = xiw_port_state(xdev);

	ASSERT_RTNL();
	if (now == xdev->reported)
		return;
	xdev->reported = now;
	xiw_port_event(xdev, now == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						     IB_EVENT_PORT_ERR);
}

static int xiw_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct xiw_device *xdev;

	ASSERT_RTNL();
	xdev = xiw_find(ndev);
	if (!xdev || !ib_device_try_get(&xdev->ibdev))
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		xiw_port_update(xdev);
		break;
	case NETDEV_CHANGEADDR:
		/*
		 * Makes the core refresh its GID cache from query_gid. (The
		 * 6.1 core does not pass GID_CHANGE on to clients of non-RoCE
		 * ports, so user space sees the new GID but no event.)
		 */
		xiw_port_event(xdev, IB_EVENT_GID_CHANGE);
		break;
	case NETDEV_CHANGENAME:
		strscpy(xdev->ibdev.iw_ifname, ndev->name,
			sizeof(xdev->ibdev.iw_ifname));
		break;
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(&xdev->ibdev);
		break;
	default:
		break;
	}
	ib_device_put(&xdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block xiw_netdev_nb = {
	.notifier_call = xiw_netdev_event,
};

static struct xiw_device *xiw_alloc(struct net_device *ndev)
{
	struct xiw_device *xdev;
	struct ib_device *ibdev;

	xdev = ib_alloc_device(xiw_device, ibdev);
	if (!xdev)
		return NULL;
	ibdev = &xdev->ibdev;
	/* Before any ops are set: a failure here frees nothing else. */
	if (xiw_counters_alloc(xdev)) {
		ib_dealloc_device(ibdev);
		return NULL;
	}
	INIT_LIST_HEAD(&xdev->list);
	/* The core caches the device's attributes: fixed from here on. */
	xdev->max_ird = xiw_max_ird();
	xdev->max_ord = xiw_max_ord();
	netdev_hold(ndev, &xdev->netdev_tracker, GFP_KERNEL);
	xdev->netdev = ndev;

	xa_init_flags(&xdev->qp_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&xdev->mr_xa, XA_FLAGS_ALLOC1);
	/* The doorbells of user posts: a post with no work request. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	ibdev->node_type = RDMA_NODE_RNIC;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	strscpy(ibdev->node_desc, XIW_NODE_DESC, sizeof(ibdev->node_desc));
	strscpy(ibdev->iw_ifname, ndev->name, sizeof(ibdev->iw_ifname));
	/* The TCP port is the one rdma_cm chose; iwpmd is not involved. */
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	ib_set_device_ops(ibdev, &xiw_dev_ops);
	ib_set_device_ops(ibdev, &xiw_cm_ops);
	ib_set_device_ops(ibdev, &xiw_counter_ops);
	return xdev;
}

/*
 * Publish a registered device, unless its netdev started to unregister
 * while we registered: its NETDEV_UNREGISTER event has then passed
 * without finding us, so we must undo the registration ourselves.
 */
static bool xiw_publish(struct xiw_device *xdev)
{
	bool live;

	rtnl_lock();
	live = xdev->netdev->reg_state == NETREG_REGISTERED;
	if (live) {
		spin_lock(&xiw_devices_lock);
		list_add_tail(&xdev->list, &xiw_devices);
		spin_unlock(&xiw_devices_lock);
		xdev->reported = xiw_port_state(xdev);
	}
	rtnl_unlock();
	return live;
}

static int xiw_newlink(const char *name, struct net_device *ndev)
{
	struct xiw_device *xdev;
	int rv;

	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		netdev_info(ndev, "xiw: link type %u is not Ethernet, not supported\n",
			    ndev->type);
		return -EOPNOTSUPP;
	}

	mutex_lock(&xiw_link_mutex);
	spin_lock(&xiw_devices_lock);
	xdev = xiw_find(ndev);
	spin_unlock(&xiw_devices_lock);
	if (xdev) {
		netdev_info(ndev, "xiw: already has device %s\n",
			    dev_name(&xdev->ibdev.dev));
		rv = -EEXIST;
		goto out;
	}

	xdev = xiw_alloc(ndev);
	if (!xdev) {
		rv = -ENOMEM;
		goto out;
	}
	rv = ib_device_set_netdev(&xdev->ibdev, ndev, 1);
	if (rv)
		goto err_free;
	rv = ib_register_device(&xdev->ibdev, name, NULL);
	if (rv)
		goto err_free;
	if (!xiw_publish(xdev)) {
		ib_unregister_device(&xdev->ibdev);
		rv = -ENODEV;
	}
	goto out;

err_free:
	/* Calls dealloc_driver, which drops the netdev reference. */
	ib_dealloc_device(&xdev->ibdev);
out:
	mutex_unlock(&xiw_link_mutex);
	return rv;
}

static struct rdma_link_ops xiw_link_ops = {
	.type = "xiw",
	.newlink = xiw_newlink,
};

int xiw_dev_init(void)
{
	int rv;

	rv = register_netdevice_notifier(&xiw_netdev_nb);
	if (rv)
		return rv;
	rdma_link_register(&xiw_link_ops);
	return 0;
}

/*
 * Unregister every device. One may be mid-unregistration on the core's
 * workqueue (its netdev went away); ib_unregister_device() then waits
 * for that to finish, and dealloc_driver takes it off the list.
 */
static void xiw_remove_all(void)
{
	struct xiw_device *xdev;

	for (;;) {
		spin_lock(&xiw_devices_lock);
		xdev = list_first_entry_or_null(&xiw_devices,
						struct xiw_device, list);
		if (xdev)
			get_device(&xdev->ibdev.dev);
		spin_unlock(&xiw_devices_lock);
		if (!xdev)
			return;
		ib_unregister_device(&xdev->ibdev);
		put_device(&xdev->ibdev.dev);
	}
}

void xiw_dev_exit(void)
{
	/* No new links once this returns; a newlink in flight has finished. */
	rdma_link_unregister(&xiw_link_ops);
	unregister_netdevice_notifier(&xiw_netdev_nb);
	xiw_remove_all();
}
