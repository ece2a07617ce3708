// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device, port and context verbs, and the ib_device_ops table.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/xiw-abi.h>

#include "xiw.h"

/*
 * The port state is derived from the netdev at every query rather than
 * cached: an administratively down or carrier-less netdev is a down port.
 */
enum ib_port_state xiw_port_state(const struct xiw_device *xdev)
{
	if (netif_running(xdev->netdev) && netif_carrier_ok(xdev->netdev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

static int xiw_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *attr,
			    struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibdev);

	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	/*
	 * Fast registration, LOCAL_INV and Send with Invalidate (xiw_mem.c);
	 * memory windows of type 1 and 2B (xiw_mw.c).
	 */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
		IB_DEVICE_MEM_WINDOW | IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = XIW_VENDOR_ID;
	attr->max_mr_size = XIW_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = XIW_MAX_QP;
	attr->max_qp_wr = XIW_MAX_QP_WR;
	attr->max_send_sge = XIW_MAX_SGE;
	attr->max_recv_sge = XIW_MAX_RECV_SGE;
	attr->max_sge_rd = XIW_MAX_SGE_RD;
	attr->max_cq = XIW_MAX_CQ;
	attr->max_cqe = XIW_MAX_CQE;
	attr->max_mr = XIW_MAX_MR;
	attr->max_mw = XIW_MAX_MW;
	attr->max_pd = XIW_MAX_PD;
	attr->max_qp_rd_atom = xdev->max_ird;
	attr->max_qp_init_rd_atom = xdev->max_ord;
	attr->max_res_rd_atom = XIW_MAX_QP * xdev->max_ird;
	attr->max_srq = XIW_MAX_SRQ;
	attr->max_srq_wr = XIW_MAX_SRQ_WR;
	attr->max_srq_sge = XIW_MAX_RECV_SGE;
	attr->max_fast_reg_page_list_len = XIW_MAX_FRMR_PAGES;
	/* RFC 7306 atomics, atomic among all of xiw's QPs (and the CPUs'). */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	return 0;
}

/*
 * Express the netdev's link speed as an IB speed and width whose product
 * is the nearest rate not above it. Virtual netdevs (dummy, veth, virtio)
 * report no speed; they are shown as 10 Gb/s rather than logging about it
 * at every query as ib_get_eth_speed() does.
 */
static void xiw_port_speed(struct net_device *ndev, struct ib_port_attr *attr)
{
	static const struct {
		u32 mbps;
		u16 speed;
		u8 width;
	} rates[] = {
		{ 400000, IB_SPEED_NDR, IB_WIDTH_4X },
		{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
		{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
		{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
		{ 40000, IB_SPEED_FDR10, IB_WIDTH_4X },
		{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
		{ 20000, IB_SPEED_DDR, IB_WIDTH_4X },
		{ 10000, IB_SPEED_FDR10, IB_WIDTH_1X },
		{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
		{ 0, IB_SPEED_SDR, IB_WIDTH_1X },
	};
	struct ethtool_link_ksettings ks;
	u32 mbps = SPEED_10000;
	int i;

	rtnl_lock();
	if (!__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN && ks.base.speed)
		mbps = ks.base.speed;
	rtnl_unlock();

	for (i = 0; mbps < rates[i].mbps; i++)
		;
	attr->active_speed = rates[i].speed;
	attr->active_width = rates[i].width;
}

static int xiw_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	struct xiw_device *xdev = to_xdev(ibdev);
	struct net_device *ndev = xdev->netdev;

	/* The core zeroes *attr before calling. */
	xiw_port_speed(ndev, attr);
	attr->state = xiw_port_state(xdev);
	if (!netif_running(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	else if (!netif_carrier_ok(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	/* max_mtu 0 means the netdev sets no upper bound (dummy, veth). */
	attr->max_mtu = ndev->max_mtu ? ib_mtu_int_to_enum(ndev->max_mtu) :
					IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(READ_ONCE(ndev->mtu));
	attr->gid_tbl_len = 1;
	attr->max_vl_num = 1;	/* one lane; 0 reads as invalid to tools */
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	/*
	 * A DDP message offset is 32 bits wide (RFC 5041 section 5), but the
	 * send path refuses a message over 2^31 - 1 bytes (LOC_LEN_ERR,
	 * errors.rst): say so here rather than promise more.
	 */
	attr->max_msg_sz = S32_MAX;
	return 0;
}

static int xiw_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *immutable)
{
	immutable->gid_tbl_len = 1;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/*
 * iWARP has no GID routing; the core and rdma_cm use GID 0 only as the
 * port's identity, which is its Ethernet address.
 */
static int xiw_query_gid(struct ib_device *ibdev, u32 port, int index,
			 union ib_gid *gid)
{
	struct net_device *ndev = to_xdev(ibdev)->netdev;

	if (index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	ether_addr_copy(gid->raw, ndev->dev_addr);
	return 0;
}

static int xiw_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct xiw_alloc_ucontext_resp resp = {
		.abi_version = XIW_ABI_VERSION,
	};

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

static void xiw_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The device is going away while a process still has it open. Before
 * calling this, uverbs has destroyed the context's objects and zapped its
 * mappings, and it raises IB_EVENT_DEVICE_FATAL to the process; a
 * software device has nothing of its own left to stop. Having this op
 * lets unregistration finish now instead of waiting for the process to
 * close the device (and pinning the netdev meanwhile).
 */
static void xiw_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/* Count one more object against limit; false (and no count) if full. */
bool xiw_count_get(atomic_t *count, int limit)
{
	if (atomic_inc_return(count) > limit) {
		atomic_dec(count);
		return false;
	}
	return true;
}

static int xiw_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct xiw_pd *pd = container_of(ibpd, struct xiw_pd, ibpd);

	if (!xiw_count_get(&to_xdev(ibpd->device)->num_pd, XIW_MAX_PD))
		return -ENOMEM;
	pd->db_multi_at = jiffies - HZ;	/* no two QPs' doorbells yet */
	return 0;
}

static int xiw_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_xdev(ibpd->device)->num_pd);
	return 0;
}

static ssize_t xiw_abi_version_show(struct device *device,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", XIW_ABI_VERSION);
}
static DEVICE_ATTR_RO(xiw_abi_version);

static struct attribute *xiw_dev_attrs[] = {
	&dev_attr_xiw_abi_version.attr,
	NULL,
};

static const struct attribute_group xiw_dev_attr_group = {
	.attrs = xiw_dev_attrs,
};

/*
 * With poll_cq, req_notify_cq and get_dma_mr the core counts xiw as a
 * kernel verbs provider and offers its devices to kernel clients
 * (rdma_cm, ULPs) too; those also need the iw_* connection ops, which
 * come with the connection manager.
 */
const struct ib_device_ops xiw_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = XIW_ABI_VERSION,
	.device_group = &xiw_dev_attr_group,

	.alloc_mr = xiw_alloc_mr,
	.alloc_mw = xiw_alloc_mw,
	.alloc_pd = xiw_alloc_pd,
	.alloc_ucontext = xiw_alloc_ucontext,
	.create_cq = XIW_CREATE_CQ,
	.create_qp = xiw_create_qp,
	.create_srq = xiw_create_srq,
	.dealloc_driver = xiw_dealloc_driver,
	.dealloc_mw = xiw_dealloc_mw,
	.dealloc_pd = xiw_dealloc_pd,
	.dealloc_ucontext = xiw_dealloc_ucontext,
	.dereg_mr = xiw_dereg_mr,
	.destroy_cq = xiw_destroy_cq,
	.destroy_qp = xiw_destroy_qp,
	.destroy_srq = xiw_destroy_srq,
	.disassociate_ucontext = xiw_disassociate_ucontext,
	.get_dma_mr = xiw_get_dma_mr,
	.get_port_immutable = xiw_get_port_immutable,
	.map_mr_sg = xiw_map_mr_sg,
	.mmap = xiw_mmap,
	.mmap_free = xiw_mmap_free,
	.modify_qp = xiw_modify_qp,
	.modify_srq = xiw_modify_srq,
	.poll_cq = xiw_poll_cq,
	.post_recv = xiw_post_recv,
	.post_send = xiw_post_send,
	.post_srq_recv = xiw_post_srq_recv,
	.query_device = xiw_query_device,
	.query_gid = xiw_query_gid,
	.query_port = xiw_query_port,
	.query_qp = xiw_query_qp,
	.query_srq = xiw_query_srq,
	.reg_user_mr = xiw_reg_user_mr,
	.rereg_user_mr = xiw_rereg_user_mr,
	.req_notify_cq = xiw_req_notify_cq,
	.resize_cq = xiw_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, xiw_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, xiw_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, xiw_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, xiw_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, xiw_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, xiw_ucontext, ibuc),
};
