// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Connection management: the life of a struct xiw_conn (see xiw_cm.c
 * for its rules). References, the work item that makes every state
 * change and the events that queue it, the start-up timer, the end of
 * a connection, the list of all conns and the teardown of those a
 * device or a network namespace leaves behind.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <rdma/iw_cm.h>

#include "xiw_cm.h"
#include "xiw_fault.h"

static uint mpa_timeout_ms = 10000;
module_param(mpa_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_timeout_ms, "Time allowed for MPA start-up, in ms (default 10000)");

static struct workqueue_struct *xiw_cm_wq;
struct workqueue_struct *xiw_data_wq;
struct workqueue_struct *xiw_tx_wq;

static LIST_HEAD(xiw_conns);
static DEFINE_SPINLOCK(xiw_conns_lock);	/* xiw_conns; BH-safe: a last put
					 * may come from a socket callback
					 */

static void xiw_conn_release(struct kref *ref)
{
	struct xiw_conn *conn = container_of(ref, struct xiw_conn, ref);
	struct xiw_device *xdev = conn->xdev;

	spin_lock_bh(&xiw_conns_lock);
	list_del(&conn->all);
	spin_unlock_bh(&xiw_conns_lock);
	kfree(conn->frame);
	kfree(conn);
	if (atomic_dec_and_test(&xdev->num_conn))
		wake_up_var(&xdev->num_conn);
}

void xiw_conn_put(struct xiw_conn *conn)
{
	kref_put(&conn->ref, xiw_conn_release);
}

void xiw_cm_conn_get(struct xiw_conn *conn)
{
	kref_get(&conn->ref);
}

void xiw_cm_conn_put(struct xiw_conn *conn)
{
	xiw_conn_put(conn);
}

static void xiw_conn_work(struct work_struct *work);
static void xiw_conn_timeout(struct work_struct *work);

/*
 * A conn, and unless it listens the buffer for its MPA start-up, which
 * goes once the connection is in RTS (xiw_conn_free_frame()): of a
 * conn's kilobyte and a half, a connection in use keeps a third. site is
 * the fault-injection site that fails both allocations.
 */
struct xiw_conn *xiw_conn_alloc(struct xiw_device *xdev, bool listen,
				enum xiw_fault_site site)
{
	struct xiw_conn *conn;
	u8 *frame;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	frame = listen ? NULL : kzalloc(XIW_CONN_FRAME_LEN, GFP_KERNEL);
	if (xiw_fault(site) || !conn || (!listen && !frame)) {
		kfree(frame);
		kfree(conn);
		return NULL;
	}
	conn->frame = frame;
	kref_init(&conn->ref);
	mutex_init(&conn->lock);
	conn->xdev = xdev;
	INIT_LIST_HEAD(&conn->entry);
	INIT_WORK(&conn->work, xiw_conn_work);
	INIT_DELAYED_WORK(&conn->timer, xiw_conn_timeout);
	atomic_set(&conn->nwait, 0);
	atomic_inc(&xdev->num_conn);
	spin_lock_bh(&xiw_conns_lock);
	list_add_tail(&conn->all, &xiw_conns);
	spin_unlock_bh(&xiw_conns_lock);
	return conn;
}

/* The start-up is over: its frame's contents were used or copied. */
void xiw_conn_free_frame(struct xiw_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	kfree(conn->frame);
	conn->frame = NULL;
}

/* Queue the work; the queued run owns a reference. */
static void xiw_conn_queue(struct xiw_conn *conn)
{
	kref_get(&conn->ref);
	if (!queue_work(xiw_cm_wq, &conn->work))
		xiw_conn_put(conn);
}

/* Queue the work with an event. */
void xiw_conn_event(struct xiw_conn *conn, int ev)
{
	set_bit(ev, &conn->events);
	xiw_conn_queue(conn);
}

static void xiw_conn_timeout(struct work_struct *work)
{
	struct xiw_conn *conn = container_of(to_delayed_work(work),
					     struct xiw_conn, timer);

	xiw_conn_event(conn, XIW_EV_TIMEOUT);
	xiw_conn_put(conn);	/* the timer's own reference */
}

void xiw_conn_arm_timer(struct xiw_conn *conn)
{
	kref_get(&conn->ref);
	if (!mod_delayed_work(xiw_cm_wq, &conn->timer,
			      msecs_to_jiffies(mpa_timeout_ms)))
		return;
	xiw_conn_put(conn);	/* it was pending and kept its reference */
}

void xiw_conn_stop_timer(struct xiw_conn *conn)
{
	if (cancel_delayed_work(&conn->timer))
		xiw_conn_put(conn);
}

/* Raise an event on the cm_id; returns the handler's verdict. */
int xiw_cm_upcall(struct xiw_conn *conn, struct iw_cm_id *cm_id,
		  enum iw_cm_event_type type, int status,
		  const void *pd, u8 pd_len)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.private_data = (void *)pd,
		.private_data_len = pd_len,
	};

	if (type == IW_CM_EVENT_CONNECT_REQUEST) {
		/*
		 * The peer's limits, as the iw_cm's users read them: rdma_cm
		 * makes ird the listener's initiator_depth (at most as many
		 * Reads as the peer takes in) and ord its responder_resources
		 * (the peer's ORD), as siw, cxgb4 and the IB CM do. Bounded by
		 * ours: the event's fields are u8.
		 */
		ev.provider_data = conn;
		ev.ird = min_t(u32, conn->peer_ird, conn->xdev->max_ord);
		ev.ord = min_t(u32, conn->peer_ord, conn->xdev->max_ird);
	} else if (type == IW_CM_EVENT_CONNECT_REPLY ||
		   type == IW_CM_EVENT_ESTABLISHED) {
		ev.ird = conn->mpa.ird;
		ev.ord = conn->mpa.ord;
	}
	if (conn->sock && type != IW_CM_EVENT_CLOSE) {
		kernel_getsockname(conn->sock, (struct sockaddr *)&ev.local_addr);
		kernel_getpeername(conn->sock, (struct sockaddr *)&ev.remote_addr);
		xiw_sockaddr_unmap((union xiw_sockaddr *)&ev.local_addr);
		xiw_sockaddr_unmap((union xiw_sockaddr *)&ev.remote_addr);
	}
	return cm_id->event_handler(cm_id, &ev);
}

void xiw_conn_drop_cm_id(struct xiw_conn *conn)
{
	if (conn->cm_id) {
		conn->cm_id->provider_data = NULL;
		conn->cm_id->rem_ref(conn->cm_id);
		conn->cm_id = NULL;
	}
}

/*
 * A passive conn of lconn left the wait for its MPA Request: room for
 * the next one in TCP's accept queue.
 */
void xiw_conn_unwait(struct xiw_conn *lconn)
{
	if (atomic_dec_return(&lconn->nwait) == lconn->backlog - 1)
		xiw_conn_event(lconn, XIW_EV_ACCEPT);
}

/*
 * The end of a connection, in the conn's work. Stops the data path,
 * releases the socket (abortively: with a reset; a graceful close has
 * already exchanged FINs), moves the QP to ERR and raises CLOSE if the
 * iw_cm saw the connection established. With drain (the peer ended the
 * connection) the data path first takes in what the peer sent before
 * its FIN or reset. Must hold conn->lock.
 */
static void xiw_conn_end(struct xiw_conn *conn, bool abort, bool drain)
{
	struct xiw_qp *qp = conn->qp;
	enum xiw_conn_state old = conn->state;

	lockdep_assert_held(&conn->lock);
	if (old == XIW_CONN_CLOSED)
		return;
	ibdev_dbg(&conn->xdev->ibdev, "conn %p: end in state %d%s%s\n", conn,
		  old, abort ? ", abort" : "", drain ? ", drain" : "");
	conn->state = XIW_CONN_CLOSED;
	xiw_count_if(conn->xdev, CONN_FAILED,
		     old > XIW_CONN_LISTEN && old < XIW_CONN_RTS);
	xiw_conn_stop_timer(conn);
	if (conn->sock) {
		xiw_sk_detach(conn);
		if (qp)
			xiw_qp_stop_wire(qp, drain);
		if (abort)
			sock_no_linger(conn->sock->sk);
		sock_release(conn->sock);
		conn->sock = NULL;
	}
	if (qp) {
		xiw_qp_conn_lost(qp, conn);
		conn->qp = NULL;
		xiw_qp_put(qp);
	}
	if (conn->cm_id && old == XIW_CONN_RTS)
		xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CLOSE,
			      abort ? -ECONNRESET : 0, NULL, 0);
	xiw_conn_drop_cm_id(conn);
	if (conn->listener) {
		if (old == XIW_CONN_REQ_WAIT)
			xiw_conn_unwait(conn->listener);
		xiw_conn_put(conn->listener);
		conn->listener = NULL;
	}
	/* The creator's reference. */
	xiw_conn_put(conn);
}

void xiw_conn_close(struct xiw_conn *conn, bool abort)
{
	xiw_conn_end(conn, abort, false);
}

/* An active start-up failed: one CONNECT_REPLY with the error, then gone. */
void xiw_conn_fail(struct xiw_conn *conn, int status,
		   const void *pd, u8 pd_len)
{
	lockdep_assert_held(&conn->lock);
	if (conn->active && conn->cm_id)
		xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CONNECT_REPLY,
			      status, pd, pd_len);
	/* A passive one before CONNECT_REQUEST has nobody to tell. */
	xiw_conn_close(conn, true);
}

static void xiw_conn_tcp_state(struct xiw_conn *conn)
{
	int st = conn->sock->sk->sk_state;

	ibdev_dbg(&conn->xdev->ibdev, "conn %p: state %d tcp %d\n", conn,
		  conn->state, st);
	switch (conn->state) {
	case XIW_CONN_CONNECTING:
		if (st == TCP_ESTABLISHED)
			xiw_conn_connected(conn);
		else if (st == TCP_CLOSE)
			xiw_conn_fail(conn, sock_error(conn->sock->sk) ==
				      -ETIMEDOUT ? -ETIMEDOUT : -ECONNREFUSED,
				      NULL, 0);
		break;
	case XIW_CONN_REQ_SENT:
	case XIW_CONN_REQ_WAIT:
	case XIW_CONN_REQ_RCVD:
		if (st != TCP_ESTABLISHED && conn->state != XIW_CONN_REQ_RCVD)
			xiw_conn_fail(conn, -ECONNRESET, NULL, 0);
		break;
	case XIW_CONN_RTS:
		if (st == TCP_CLOSE_WAIT && !conn->peer_closed) {
			/* The peer's FIN: a graceful disconnect. */
			conn->peer_closed = true;
			if (conn->cm_id)
				xiw_cm_upcall(conn, conn->cm_id,
					      IW_CM_EVENT_DISCONNECT, 0,
					      NULL, 0);
			xiw_conn_end(conn, false, true);
		} else if (st == TCP_CLOSE) {
			xiw_conn_end(conn, !conn->fin_sent, true);
		}
		break;
	default:
		break;
	}
}

/* SQD: what was posted before goes out ahead of the FIN. */
static void xiw_conn_shutdown(struct xiw_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	if (conn->state != XIW_CONN_RTS || conn->fin_sent)
		return;
	xiw_tx_flush(conn->qp);
	conn->fin_sent = true;
	kernel_sock_shutdown(conn->sock, SHUT_WR);
}

static void xiw_conn_work(struct work_struct *work)
{
	struct xiw_conn *conn = container_of(work, struct xiw_conn, work);

	mutex_lock(&conn->lock);
	if (test_and_clear_bit(XIW_EV_ACCEPT, &conn->events))
		xiw_conn_accept_tcp(conn);
	if (test_and_clear_bit(XIW_EV_ABORT, &conn->events)) {
		ibdev_dbg(&conn->xdev->ibdev, "conn %p: abort\n", conn);
		xiw_conn_close(conn, true);
	}
	if (test_and_clear_bit(XIW_EV_SHUTDOWN, &conn->events))
		xiw_conn_shutdown(conn);
	if (test_and_clear_bit(XIW_EV_TIMEOUT, &conn->events)) {
		/* MPA-14: a start-up that does not finish in time. */
		xiw_count_if(conn->xdev, MPA_TIMEOUTS,
			     conn->state > XIW_CONN_LISTEN &&
			     conn->state < XIW_CONN_REQ_RCVD);
		if (conn->state == XIW_CONN_CONNECTING ||
		    conn->state == XIW_CONN_REQ_SENT)
			xiw_conn_fail(conn, -ETIMEDOUT, NULL, 0);
		else if (conn->state == XIW_CONN_REQ_WAIT)
			xiw_conn_close(conn, true);
	}
	if (test_and_clear_bit(XIW_EV_DATA, &conn->events)) {
		if (conn->state == XIW_CONN_REQ_SENT)
			xiw_conn_reply(conn);
		else if (conn->state == XIW_CONN_REQ_WAIT)
			xiw_conn_request(conn);
	}
	if (test_and_clear_bit(XIW_EV_STATE, &conn->events) && conn->sock)
		xiw_conn_tcp_state(conn);
	mutex_unlock(&conn->lock);
	xiw_conn_put(conn);	/* this run's reference */
}

/*
 * From the QP state machine: the QP entered ERR (abort) or SQD (close).
 * With queue false the caller is a verb that does the close itself right
 * after (xiw_cm_qp_closing_now()), or queues it (xiw_cm_qp_closing_kick())
 * where it may not: the event is only marked, so no worker is woken to
 * contend with the verb for the conn's lock.
 */
void xiw_cm_qp_closing(struct xiw_conn *conn, bool abort, bool queue)
{
	int ev = abort ? XIW_EV_ABORT : XIW_EV_SHUTDOWN;

	if (queue)
		xiw_conn_event(conn, ev);
	else
		set_bit(ev, &conn->events);
}

/*
 * The work, for what xiw_cm_qp_closing() marked without queueing it. The
 * caller holds a reference of its own; the queued run takes another.
 */
void xiw_cm_qp_closing_kick(struct xiw_conn *conn)
{
	xiw_conn_queue(conn);
}

/*
 * From modify_qp and destroy_qp, which may sleep and hold no QP lock
 * here: do what xiw_cm_qp_closing() marked in the caller's context, so
 * that the reset or FIN is out and, on an abort, CLOSE raised and the
 * conn's hold on the QP dropped before the verb returns. A disconnect
 * followed at once by destroy_qp, as rdma_cm's users do, thus waits in
 * destroy_qp for the iw_cm alone, not for our work too. A run of the
 * work in between (for another event) may have taken the event first.
 */
void xiw_cm_qp_closing_now(struct xiw_conn *conn)
{
	mutex_lock(&conn->lock);
	if (test_and_clear_bit(XIW_EV_ABORT, &conn->events))
		xiw_conn_close(conn, true);
	if (test_and_clear_bit(XIW_EV_SHUTDOWN, &conn->events))
		xiw_conn_shutdown(conn);
	mutex_unlock(&conn->lock);
}

/*
 * End every conn match() selects (abortively), each found on xiw_conns,
 * referenced under its lock, and asked again under its own lock. Conns
 * in IDLE belong to a verb still setting them up.
 */
void xiw_conns_end(bool (*match)(const struct xiw_conn *conn,
				 const void *arg),
		   const void *arg)
{
	struct xiw_conn *conn;
	enum xiw_conn_state st;

again:
	spin_lock_bh(&xiw_conns_lock);
	list_for_each_entry(conn, &xiw_conns, all) {
		st = READ_ONCE(conn->state);
		if (st == XIW_CONN_IDLE || st == XIW_CONN_CLOSED ||
		    !match(conn, arg) || !kref_get_unless_zero(&conn->ref))
			continue;
		spin_unlock_bh(&xiw_conns_lock);
		mutex_lock(&conn->lock);
		if (conn->state != XIW_CONN_CLOSED && match(conn, arg))
			xiw_conn_close(conn, true);
		mutex_unlock(&conn->lock);
		xiw_conn_put(conn);
		goto again;
	}
	spin_unlock_bh(&xiw_conns_lock);
}

static bool xiw_conn_of_dev(const struct xiw_conn *conn, const void *xdev)
{
	return conn->xdev == xdev;
}

/*
 * The device is going (dealloc_driver: its clients, rdma_cm and the
 * iw_cm among them, are gone): end what is left of its conns, then wait
 * until every one is released, since each uses the device's counters
 * and netdev until then.
 */
void xiw_cm_dev_stop(struct xiw_device *xdev)
{
	xiw_conns_end(xiw_conn_of_dev, xdev);
	wait_var_event(&xdev->num_conn, !atomic_read(&xdev->num_conn));
}

static bool xiw_conn_in_net(const struct xiw_conn *conn, const void *net)
{
	return conn->net == net;
}

/* A namespace is going: its sockets must not outlive it. */
static void __net_exit xiw_cm_net_pre_exit(struct net *net)
{
	xiw_conns_end(xiw_conn_in_net, net);
}

static struct pernet_operations xiw_cm_net_ops = {
	.pre_exit = xiw_cm_net_pre_exit,
};

int xiw_cm_init(void)
{
	int rv;

	xiw_cm_wq = alloc_workqueue("xiw_cm", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!xiw_cm_wq)
		return -ENOMEM;
	xiw_data_wq = alloc_workqueue("xiw_data",
				      WQ_MEM_RECLAIM, 0);
	if (!xiw_data_wq) {
		rv = -ENOMEM;
		goto err_cm_wq;
	}
	xiw_tx_wq = alloc_workqueue("xiw_tx", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!xiw_tx_wq) {
		rv = -ENOMEM;
		goto err_data_wq;
	}
	rv = register_pernet_subsys(&xiw_cm_net_ops);
	if (rv)
		goto err_tx_wq;
	return 0;

err_tx_wq:
	destroy_workqueue(xiw_tx_wq);
err_data_wq:
	destroy_workqueue(xiw_data_wq);
err_cm_wq:
	destroy_workqueue(xiw_cm_wq);
	return rv;
}

/* After xiw_dev_exit: no device, so no conn, is left. */
void xiw_cm_exit(void)
{
	unregister_pernet_subsys(&xiw_cm_net_ops);
	destroy_workqueue(xiw_tx_wq);
	destroy_workqueue(xiw_data_wq);
	destroy_workqueue(xiw_cm_wq);
}
