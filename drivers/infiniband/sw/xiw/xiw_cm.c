// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Connection management: the iw_cm device operations over kernel TCP
 * sockets, and MPA start-up (RFC 5044 section 7, RFC 6581).
 *
 * A struct xiw_conn is one TCP connection (or one listening socket). Its
 * state changes under conn->lock: in its work item, on xiw_cm_wq, in the
 * iw_cm's calls, and in modify_qp and destroy_qp, which close it
 * themselves (xiw_cm_qp_closing_now()); socket callbacks (softirq) only
 * record an event bit and queue the work. So a slow peer stalls nobody
 * but its own connection, and a connect never blocks the caller: the
 * TCP connect is non-blocking and MPA runs in the work item.
 *
 * Events to the iw_cm follow its contract (see iwcm.c): after a
 * successful iw_connect exactly one CONNECT_REPLY; after a successful
 * iw_accept exactly one ESTABLISHED; after either of those succeeded,
 * at most one DISCONNECT and then exactly one CLOSE.
 *
 * References: a conn is referenced by its creator until closed, by each
 * queued run of its work, by its pending timer, by an attached QP
 * (qp->conn), by a listener's list (struct xiw_listen) and, from
 * CONNECT_REQUEST to accept or reject, by the iw_cm's new cm_id. The conn
 * holds the iw_cm_id (cm_id->add_ref) while it may still raise events,
 * the QP (xiw_qp_get) while attached to it, and its listener while it is
 * a passive connection in start-up.
 *
 * Teardown: every conn is on xiw_conns from allocation to release, so
 * one that nobody else would end is still found: a passive one waiting
 * for its MPA Request when its listener goes (xiw_listen_free), any one
 * left when its device goes (xiw_cm_dev_stop, which then waits until the
 * device has no conn left), and any one whose socket lives in a network
 * namespace that is going away (pernet pre_exit). Kernel sockets hold no
 * reference on their namespace.
 *
 * Locks: conn->lock of a passive conn in start-up nests the listener's
 * (taken to raise CONNECT_REQUEST on the listener's cm_id), never the
 * other way round; listeners have their own lock class for lockdep.
 *
 * Files: this one holds the iw_cm's entry points (connect, listen,
 * and the ops table; accept and reject answer an MPA Request, so they
 * are in xiw_cm_mpa.c with the rest of MPA start-up). The life of a
 * conn, its work, events and teardown are in xiw_cm_conn.c, the
 * socket callbacks and listening sockets in xiw_cm_sock.c; xiw_cm.h
 * is what these files share.
 */
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/net.h>
#include <net/addrconf.h>
#include <rdma/iw_cm.h>

#include "xiw_cm.h"
#include "xiw_fault.h"

static uint mpa_rev = 2;
module_param(mpa_rev, uint, 0644);
MODULE_PARM_DESC(mpa_rev, "MPA revision to request: 1 or 2 (RFC 6581, default)");

static uint p2p_rtr = 2;
module_param(p2p_rtr, uint, 0644);
MODULE_PARM_DESC(p2p_rtr,
		 "Peer-to-peer ready-to-receive message offered as initiator (MPA rev 2): 0 none, 1 zero-length Send, 2 Write (default), 3 Read");

static uint max_ird = XIW_MAX_IRD;
module_param(max_ird, uint, 0644);
MODULE_PARM_DESC(max_ird,
		 "Most inbound RDMA Reads a QP may have queued (IRD, max_qp_rd_atom), 1 to 128 (default 128), for devices created after");

static uint max_ord = XIW_MAX_ORD;
module_param(max_ord, uint, 0644);
MODULE_PARM_DESC(max_ord,
		 "Most outbound RDMA Reads a QP may have in flight (ORD, max_qp_init_rd_atom), 1 to 128 (default 128), for devices created after");

/* The limits a device being created takes: the parameters, in 1..128. */
u32 xiw_max_ird(void)
{
	return clamp_t(u32, READ_ONCE(max_ird), 1, XIW_MAX_IRD);
}

u32 xiw_max_ord(void)
{
	return clamp_t(u32, READ_ONCE(max_ord), 1, XIW_MAX_ORD);
}

static bool xiw_addr_ok(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET || a->ss_family == AF_INET6;
}

int xiw_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct xiw_device *xdev = to_xdev(cm_id->device);
	struct sockaddr_storage *laddr = &cm_id->m_local_addr;
	struct sockaddr_storage *raddr = &cm_id->m_remote_addr;
	struct mpa_frame *f;
	struct xiw_conn *conn;
	struct ib_qp *ibqp;
	int rv;

	if (!xiw_addr_ok(laddr) || raddr->ss_family != laddr->ss_family)
		return -EAFNOSUPPORT;
	if (param->private_data_len > MPA_MAX_PD - sizeof(struct mpa_v2_data))
		return -EINVAL;
	if (param->ird > xdev->max_ird || param->ord > xdev->max_ord)
		return -EINVAL;
	ibqp = xiw_get_qp(cm_id->device, param->qpn);
	if (!ibqp)
		return -EINVAL;
	conn = xiw_conn_alloc(xdev, false, XIW_FAULT_CONN_CONNECT);
	if (!conn)
		return -ENOMEM;
	conn->active = true;
	conn->mpa.rev = mpa_rev == 1 ? 1 : 2;
	conn->mpa.ird = param->ird;
	conn->mpa.ord = param->ord;
	if (conn->mpa.rev == 2 && p2p_rtr >= 1 && p2p_rtr <= 3) {
		static const u8 rtr_op[] = { RDMAP_SEND, RDMAP_WRITE,
					     RDMAP_READ_REQ };

		conn->rtr_offer = BIT(rtr_op[p2p_rtr - 1]);
		conn->mpa.rtr_offered = conn->rtr_offer;
	}
	/* Keep the private data for the Request, sent once TCP is up. */
	f = (struct mpa_frame *)conn->frame;
	if (param->private_data_len)
		memcpy(f + 1, param->private_data, param->private_data_len);
	conn->got = param->private_data_len;

	rv = xiw_sock_create(xdev, laddr->ss_family, &conn->sock);
	if (rv)
		goto err_free;
	conn->net = xiw_net(xdev);
	rv = kernel_bind(conn->sock, (struct sockaddr *)laddr,
			 laddr->ss_family == AF_INET ?
			 sizeof(struct sockaddr_in) :
			 sizeof(struct sockaddr_in6));
	if (rv == -EADDRINUSE) {
		/*
		 * rdma_cm picks ports in its own space; TCP may hold the same
		 * one (another application's connection, or one of ours in
		 * TIME_WAIT without reuse). Let TCP pick: the iw_cm learns
		 * the real one from CONNECT_REPLY, as with a port mapper.
		 */
		struct sockaddr_storage any = *laddr;

		if (any.ss_family == AF_INET)
			((struct sockaddr_in *)&any)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&any)->sin6_port = 0;
		rv = kernel_bind(conn->sock, (struct sockaddr *)&any,
				 any.ss_family == AF_INET ?
				 sizeof(struct sockaddr_in) :
				 sizeof(struct sockaddr_in6));
	}
	if (rv) {
		ibdev_dbg(cm_id->device, "connect: bind %pISpc: %d\n", laddr,
			  rv);
		goto err_sock;
	}

	mutex_lock(&conn->lock);
	xiw_qp_get(to_xqp(ibqp));
	conn->qp = to_xqp(ibqp);
	cm_id->add_ref(cm_id);
	conn->cm_id = cm_id;
	cm_id->provider_data = conn;
	conn->state = XIW_CONN_CONNECTING;
	xiw_sk_attach(conn, NULL);
	xiw_conn_arm_timer(conn);
	rv = kernel_connect(conn->sock, (struct sockaddr *)raddr,
			    raddr->ss_family == AF_INET ?
			    sizeof(struct sockaddr_in) :
			    sizeof(struct sockaddr_in6), O_NONBLOCK);
	if (rv && rv != -EINPROGRESS) {
		ibdev_dbg(cm_id->device, "connect: %pISpc -> %pISpc: %d\n",
			  laddr, raddr, rv);
		/* No event may follow a failed iw_connect. */
		xiw_conn_drop_cm_id(conn);
		/* The close drops the creator's reference, maybe the last. */
		kref_get(&conn->ref);
		xiw_conn_close(conn, true);
		mutex_unlock(&conn->lock);
		xiw_conn_put(conn);
		return rv;
	}
	/*
	 * Connected at once (loopback): the state callback may have run.
	 * Queued under the lock: once it is dropped a reset may end the
	 * conn and drop the last reference we could count on.
	 */
	xiw_conn_event(conn, XIW_EV_STATE);
	mutex_unlock(&conn->lock);
	return 0;

err_sock:
	sock_release(conn->sock);
err_free:
	xiw_conn_put(conn);
	return rv;
}

static bool xiw_addr_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

/*
 * A wildcard listen (rdma_cm asks every RDMA device for one) is tied to
 * the device's netdev, so that other devices, siw on another netdev
 * included, can listen on the same port.
 */
int xiw_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	struct xiw_device *xdev = to_xdev(cm_id->device);
	struct sockaddr_storage *laddr = &cm_id->m_local_addr;
	int ifindex = 0;
	struct xiw_listen *l;
	int rv;

	if (!xiw_addr_ok(laddr))
		return -EAFNOSUPPORT;
	if (xiw_addr_any(laddr))
		ifindex = READ_ONCE(xdev->netdev->ifindex);
	l = xiw_fault(XIW_FAULT_LISTEN) ? NULL : kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	INIT_LIST_HEAD(&l->conns);
	rv = xiw_listen_one(xdev, cm_id, l, (struct sockaddr *)laddr,
			    laddr->ss_family == AF_INET ?
			    sizeof(struct sockaddr_in) :
			    sizeof(struct sockaddr_in6), backlog, ifindex);
	if (rv) {
		xiw_listen_free(l);
		return rv;
	}
	cm_id->provider_data = l;
	return 0;
}

int xiw_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct xiw_listen *l = cm_id->provider_data;

	if (!l)
		return 0;
	cm_id->provider_data = NULL;
	xiw_listen_free(l);
	return 0;
}

/* The iw_cm's entry points, merged into the device's ops (xiw_dev.c). */
const struct ib_device_ops xiw_cm_ops = {
	.iw_accept = xiw_iw_accept,
	.iw_add_ref = xiw_qp_add_ref,
	.iw_connect = xiw_iw_connect,
	.iw_create_listen = xiw_iw_create_listen,
	.iw_destroy_listen = xiw_iw_destroy_listen,
	.iw_get_qp = xiw_get_qp,
	.iw_reject = xiw_iw_reject,
	.iw_rem_ref = xiw_qp_rem_ref,
};
