// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Connection management: the iw_cm device operations over kernel TCP
 * sockets, and MPA start-up (RFC 5044 section 7, RFC 6581).
 *
 * A struct xiw_conn is one TCP connection (or one listening socket). All
 * of its state changes happen in its work item, on xiw_cm_wq, under
 * conn->lock; socket callbacks (softirq) only record an event bit and
 * queue that work. So a slow peer stalls nobody but its own connection,
 * and a connect never blocks the caller: the TCP connect is non-blocking
 * and MPA runs in the work item.
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
 */
#include <linux/crc32c.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <rdma/iw_cm.h>

#include "xiw.h"
#include "xiw_fault.h"
#include "xiw_wire.h"

static bool mpa_crc = true;
module_param(mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc,
		 "Ask for MPA CRC32c (default Y); a peer asking for it always gets it");

static bool mpa_markers;
module_param(mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers,
		 "Ask for MPA markers in what the peer sends us (default N); a peer asking for them always gets them");

static uint mpa_rev = 2;
module_param(mpa_rev, uint, 0644);
MODULE_PARM_DESC(mpa_rev, "MPA revision to request: 1 or 2 (RFC 6581, default)");

static uint p2p_rtr = 2;
module_param(p2p_rtr, uint, 0644);
MODULE_PARM_DESC(p2p_rtr,
		 "Peer-to-peer ready-to-receive message offered as initiator (MPA rev 2): 0 none, 1 zero-length Send, 2 Write (default), 3 Read");

static uint mpa_timeout_ms = 10000;
module_param(mpa_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_timeout_ms, "Time allowed for MPA start-up, in ms (default 10000)");

static uint ka_idle_s = 30;
module_param(ka_idle_s, uint, 0644);
MODULE_PARM_DESC(ka_idle_s,
		 "Idle seconds before TCP keepalive probes a connection (default 30); a peer that stays silent for 3 more probes 5 s apart is declared dead");

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

static struct workqueue_struct *xiw_cm_wq;
struct workqueue_struct *xiw_data_wq;

enum xiw_conn_state {
	XIW_CONN_IDLE,
	XIW_CONN_LISTEN,
	XIW_CONN_CONNECTING,	/* active: TCP connect under way */
	XIW_CONN_REQ_SENT,	/* active: waiting for the MPA Reply */
	XIW_CONN_REQ_WAIT,	/* passive: waiting for the MPA Request */
	XIW_CONN_REQ_RCVD,	/* passive: CONNECT_REQUEST raised */
	XIW_CONN_RTS,		/* full operation */
	XIW_CONN_CLOSED,
};

/* Event bits, set from socket callbacks and verbs, consumed by the work. */
enum {
	XIW_EV_DATA,		/* socket readable (start-up only) */
	XIW_EV_STATE,		/* TCP state changed */
	XIW_EV_TIMEOUT,
	XIW_EV_ABORT,		/* the QP entered ERR */
	XIW_EV_SHUTDOWN,	/* the QP entered SQD */
	XIW_EV_ACCEPT,		/* listening socket has a connection */
};

struct xiw_listen {
	struct list_head conns;	/* one xiw_conn per bound address, each
				 * referenced by the list
				 */
};

struct xiw_conn {
	struct kref ref;
	struct list_head all;		/* on xiw_conns, under its lock */
	struct net *net;		/* its socket's (not referenced) */
	struct mutex lock;		/* state and all below; see the top */
	struct xiw_device *xdev;
	struct iw_cm_id *cm_id;		/* referenced while set */
	struct xiw_conn *listener;	/* passive: referenced while set */
	struct list_head entry;		/* on struct xiw_listen */
	struct socket *sock;
	struct xiw_qp *qp;		/* referenced while set */
	enum xiw_conn_state state;
	bool active;
	bool peer_closed;		/* FIN seen: DISCONNECT raised */
	/* Listener: passive conns waiting for their MPA Request, at most
	 * 'backlog' of them; the rest wait in TCP's accept queue.
	 */
	int backlog;
	atomic_t nwait;
	bool fin_sent;			/* graceful close under way */
	unsigned long events;
	struct work_struct work;
	struct delayed_work timer;

	/* MPA start-up */
	struct xiw_mpa_params mpa;
	bool v2;			/* enhanced (RFC 6581) exchange */
	u16 peer_ird, peer_ord;
	u16 rtr_offer;			/* p2p flags offered or seen */
	u32 got;			/* bytes of the frame read so far */
	u8 frame[sizeof(struct mpa_frame) + MPA_MAX_PD];

	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
};

static LIST_HEAD(xiw_conns);
static DEFINE_SPINLOCK(xiw_conns_lock);	/* xiw_conns; BH-safe: a last put
					 * may come from a socket callback
					 */
static struct lock_class_key xiw_listen_lock_key;

static void xiw_conn_release(struct kref *ref)
{
	struct xiw_conn *conn = container_of(ref, struct xiw_conn, ref);
	struct xiw_device *xdev = conn->xdev;

	spin_lock_bh(&xiw_conns_lock);
	list_del(&conn->all);
	spin_unlock_bh(&xiw_conns_lock);
	kfree(conn);
	if (atomic_dec_and_test(&xdev->num_conn))
		wake_up_var(&xdev->num_conn);
}

static void xiw_conn_put(struct xiw_conn *conn)
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

static struct xiw_conn *xiw_conn_alloc(struct xiw_device *xdev,
				       enum xiw_fault_site site)
{
	struct xiw_conn *conn;

	conn = xiw_fault(site) ? NULL : kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
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

/* Queue the work with an event; the queued run owns a reference. */
static void xiw_conn_event(struct xiw_conn *conn, int ev)
{
	set_bit(ev, &conn->events);
	kref_get(&conn->ref);
	if (!queue_work(xiw_cm_wq, &conn->work))
		xiw_conn_put(conn);
}

static void xiw_conn_timeout(struct work_struct *work)
{
	struct xiw_conn *conn = container_of(to_delayed_work(work),
					     struct xiw_conn, timer);

	xiw_conn_event(conn, XIW_EV_TIMEOUT);
	xiw_conn_put(conn);	/* the timer's own reference */
}

static void xiw_conn_arm_timer(struct xiw_conn *conn)
{
	kref_get(&conn->ref);
	if (!mod_delayed_work(xiw_cm_wq, &conn->timer,
			      msecs_to_jiffies(mpa_timeout_ms)))
		return;
	xiw_conn_put(conn);	/* it was pending and kept its reference */
}

static void xiw_conn_stop_timer(struct xiw_conn *conn)
{
	if (cancel_delayed_work(&conn->timer))
		xiw_conn_put(conn);
}

/*
 * Socket callbacks: softirq context (or the socket owner's release_sock()),
 * under the socket's callback lock. xiw_sk_detach() takes that lock for
 * writing, so once it returns no callback is running or can start.
 */

/*
 * The conn of sk, or NULL. A socket accepted from a listener starts as a
 * clone of it, with its callbacks and sk_user_data, until xiw_sk_attach
 * makes it ours: the listener's conn is not that socket's.
 */
static struct xiw_conn *xiw_sk_conn(struct sock *sk)
{
	struct xiw_conn *conn = sk->sk_user_data;

	return conn && conn->sock && conn->sock->sk == sk ? conn : NULL;
}

static void xiw_sk_data_ready(struct sock *sk)
{
	struct xiw_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = xiw_sk_conn(sk);
	if (conn) {
		if (conn->state == XIW_CONN_LISTEN)
			xiw_conn_event(conn, XIW_EV_ACCEPT);
		else if (conn->qp && READ_ONCE(conn->state) == XIW_CONN_RTS)
			xiw_rx_data_ready(conn->qp, sk);	/* parses here */
		else
			xiw_conn_event(conn, XIW_EV_DATA);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void xiw_sk_write_space(struct sock *sk)
{
	struct xiw_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = xiw_sk_conn(sk);
	if (conn && conn->qp && READ_ONCE(conn->state) == XIW_CONN_RTS &&
	    sk_stream_is_writeable(sk)) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		xiw_tx_kick(conn->qp);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void xiw_sk_state_change(struct sock *sk)
{
	struct xiw_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = xiw_sk_conn(sk);
	if (conn)
		xiw_conn_event(conn, XIW_EV_STATE);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Take over the socket's callbacks. An accepted socket inherited its
 * listener's, which are ours: it gets back the ones the listener had
 * before us, so that nothing of this module stays on a socket that
 * outlives the conn (an orphan in FIN_WAIT, after rmmod).
 */
static void xiw_sk_attach(struct xiw_conn *conn, const struct xiw_conn *parent)
{
	struct sock *sk = conn->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (parent) {
		conn->saved_data_ready = parent->saved_data_ready;
		conn->saved_state_change = parent->saved_state_change;
		conn->saved_write_space = parent->saved_write_space;
	} else {
		conn->saved_data_ready = sk->sk_data_ready;
		conn->saved_state_change = sk->sk_state_change;
		conn->saved_write_space = sk->sk_write_space;
	}
	sk->sk_data_ready = xiw_sk_data_ready;
	sk->sk_state_change = xiw_sk_state_change;
	sk->sk_write_space = xiw_sk_write_space;
	sk->sk_user_data = conn;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* After this returns no callback can reach conn any more. */
static void xiw_sk_detach(struct xiw_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == conn) {
		sk->sk_data_ready = conn->saved_data_ready;
		sk->sk_state_change = conn->saved_state_change;
		sk->sk_write_space = conn->saved_write_space;
		sk->sk_user_data = NULL;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

static void xiw_sock_tune(struct socket *sock)
{
	struct sock *sk = sock->sk;

	tcp_sock_set_nodelay(sk);
	/* V-06: a vanished peer is noticed in bounded time. */
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, max_t(uint, ka_idle_s, 1));
	tcp_sock_set_keepintvl(sk, 5);
	tcp_sock_set_keepcnt(sk, 3);
	tcp_sock_set_user_timeout(sk, (max_t(uint, ka_idle_s, 1) + 15) * 1000);
}

/* Raise an event on the cm_id; returns the handler's verdict. */
static int xiw_cm_upcall(struct xiw_conn *conn, struct iw_cm_id *cm_id,
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
	}
	return cm_id->event_handler(cm_id, &ev);
}

static void xiw_conn_drop_cm_id(struct xiw_conn *conn)
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
static void xiw_conn_unwait(struct xiw_conn *lconn)
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

static void xiw_conn_close(struct xiw_conn *conn, bool abort)
{
	xiw_conn_end(conn, abort, false);
}

/* An active start-up failed: one CONNECT_REPLY with the error, then gone. */
static void xiw_conn_fail(struct xiw_conn *conn, int status,
			  const void *pd, u8 pd_len)
{
	lockdep_assert_held(&conn->lock);
	if (conn->active && conn->cm_id)
		xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CONNECT_REPLY,
			      status, pd, pd_len);
	/* A passive one before CONNECT_REQUEST has nobody to tell. */
	xiw_conn_close(conn, true);
}

static int xiw_send_all(struct socket *sock, const void *buf, size_t len)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	int rv;

	rv = kernel_sendmsg(sock, &msg, &kv, 1, len);
	if (rv < 0)
		return rv;
	return rv == len ? 0 : -EIO;
}

/*
 * E-04, E-06: an initiator that cannot go on after the Reply tells the
 * responder with an LLP Terminate (0x2/0x0/ecode, no headers: RFC 5040
 * Figure 10), framed as the Reply set it up: the leading marker of full
 * operation if the responder asked for markers (MPA-13), CRC if in
 * force. Then the ULP hears the refusal and the close is graceful, so
 * the Terminate goes out before the FIN. Must hold conn->lock.
 */
static void xiw_conn_fail_terminate(struct xiw_conn *conn, u8 ecode)
{
	u8 buf[MPA_MARKER_LEN + sizeof(struct iwarp_untagged) + 4 +
	       MPA_CRC_LEN] = {};
	struct iwarp_untagged *u;
	u8 *p = buf;
	u32 crc = 0;

	lockdep_assert_held(&conn->lock);
	if (conn->mpa.mrk_tx)
		p += MPA_MARKER_LEN;	/* FPDUPTR 0: an FPDU follows */
	u = (struct iwarp_untagged *)p;
	u->ctrl.mpa_len = cpu_to_be16(sizeof(*u) - MPA_HDR_LEN + 4);
	u->ctrl.ddp = DDP_VERSION | DDP_FLAG_LAST;
	u->ctrl.rdmap = RDMAP_VERSION | RDMAP_TERMINATE;
	u->qn = cpu_to_be32(DDP_QN_TERMINATE);
	u->msn = cpu_to_be32(1);
	p += sizeof(*u);
	p[0] = TERM_LLP_MPA;
	p[1] = ecode;
	p += 4;			/* the flags stay 0: no headers */
	if (conn->mpa.crc)
		crc = ~crc32c(~0U, buf, p - buf);
	put_unaligned_le32(crc, p);
	p += MPA_CRC_LEN;
	if (!xiw_send_all(conn->sock, buf, p - buf))
		xiw_count(conn->xdev, TX_TERMINATE_LLP);
	if (conn->cm_id)
		xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CONNECT_REPLY,
			      -ECONNREFUSED, NULL, 0);
	xiw_conn_close(conn, false);
}

static int xiw_mpa_send(struct xiw_conn *conn, const char *key, u8 flags,
			const struct mpa_v2_data *v2, const void *pd,
			u16 pd_len)
{
	u16 total = pd_len + (v2 ? sizeof(*v2) : 0);
	struct mpa_frame *f;
	int rv;

	if (total > MPA_MAX_PD)
		return -EINVAL;
	f = xiw_fault(XIW_FAULT_MPA_FRAME) ? NULL :
		kzalloc(sizeof(*f) + total, GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	memcpy(f->key, key, MPA_KEY_LEN);
	f->flags = flags | (v2 ? MPA_FLAG_S : 0);
	f->rev = conn->mpa.rev;
	f->pd_len = cpu_to_be16(total);
	if (v2)
		memcpy(f + 1, v2, sizeof(*v2));
	if (pd_len)
		memcpy((u8 *)(f + 1) + (v2 ? sizeof(*v2) : 0), pd, pd_len);
	rv = xiw_send_all(conn->sock, f, sizeof(*f) + total);
	kfree(f);
	return rv;
}

/*
 * Read the rest of an MPA frame without blocking: first its fixed part,
 * then exactly PD_Length bytes, never past it (what follows is the
 * peer's first FPDU). Returns 1 when complete, 0 to wait for data, or a
 * negative errno for a frame to refuse (MPA-03).
 */
static int xiw_mpa_read(struct xiw_conn *conn, const char *key)
{
	struct mpa_frame *f = (struct mpa_frame *)conn->frame;
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct kvec kv;
	u32 want = sizeof(*f);
	int rv;

	for (;;) {
		if (conn->got >= sizeof(*f)) {
			if (memcmp(f->key, key, MPA_KEY_LEN))
				return -EPROTO;
			if (be16_to_cpu(f->pd_len) > MPA_MAX_PD)
				return -EMSGSIZE;
			want = sizeof(*f) + be16_to_cpu(f->pd_len);
		}
		if (conn->got == want)
			return 1;
		kv.iov_base = conn->frame + conn->got;
		kv.iov_len = want - conn->got;
		rv = kernel_recvmsg(conn->sock, &msg, &kv, 1, kv.iov_len,
				    MSG_DONTWAIT);
		if (rv == -EAGAIN)
			return 0;
		if (rv == 0)
			return -ECONNRESET;
		if (rv < 0)
			return rv;
		conn->got += rv;
	}
}

/* The ULP's private data of a received frame, after RFC 6581 data. */
static void xiw_mpa_pd(struct xiw_conn *conn, const u8 **pd, u16 *len)
{
	struct mpa_frame *f = (struct mpa_frame *)conn->frame;
	u16 skip = conn->v2 ? sizeof(struct mpa_v2_data) : 0;

	*pd = (const u8 *)(f + 1) + skip;
	*len = be16_to_cpu(f->pd_len) - skip;
}

/* Parse the flags, revision and RFC 6581 data common to both frames. */
static int xiw_mpa_parse(struct xiw_conn *conn)
{
	struct mpa_frame *f = (struct mpa_frame *)conn->frame;
	struct mpa_v2_data v2;
	u16 pd_len = be16_to_cpu(f->pd_len);

	if (f->rev < 1 || f->rev > 2)
		return -EPROTO;
	conn->v2 = f->rev == 2 && (f->flags & MPA_FLAG_S);
	if (conn->v2) {
		if (pd_len < sizeof(v2))
			return -EPROTO;
		memcpy(&v2, f + 1, sizeof(v2));
		conn->peer_ird = be16_to_cpu(v2.ird) & MPA_V2_DEPTH;
		conn->peer_ord = be16_to_cpu(v2.ord) & MPA_V2_DEPTH;
		conn->rtr_offer = 0;
		if (be16_to_cpu(v2.ird) & MPA_V2_P2P) {
			if (be16_to_cpu(v2.ird) & MPA_V2_RTR_SEND)
				conn->rtr_offer |= BIT(RDMAP_SEND);
			if (be16_to_cpu(v2.ord) & MPA_V2_RTR_WRITE)
				conn->rtr_offer |= BIT(RDMAP_WRITE);
			if (be16_to_cpu(v2.ord) & MPA_V2_RTR_READ)
				conn->rtr_offer |= BIT(RDMAP_READ_REQ);
		}
		pd_len -= sizeof(v2);
	} else {
		/* Nothing negotiated: the ULP decides within our limits. */
		conn->peer_ird = conn->xdev->max_ird;
		conn->peer_ord = conn->xdev->max_ord;
	}
	/* The iw_cm hands at most 255 bytes to the ULP (MPA-03). */
	if (pd_len > U8_MAX)
		return -EMSGSIZE;
	return 0;
}

static struct mpa_v2_data xiw_mpa_v2(u16 ird, u16 ord, u16 rtr)
{
	struct mpa_v2_data v2;
	u16 i = ird & MPA_V2_DEPTH, o = ord & MPA_V2_DEPTH;

	if (rtr) {
		i |= MPA_V2_P2P;
		if (rtr & BIT(RDMAP_SEND))
			i |= MPA_V2_RTR_SEND;
		if (rtr & BIT(RDMAP_WRITE))
			o |= MPA_V2_RTR_WRITE;
		if (rtr & BIT(RDMAP_READ_REQ))
			o |= MPA_V2_RTR_READ;
	}
	v2.ird = cpu_to_be16(i);
	v2.ord = cpu_to_be16(o);
	return v2;
}

/*
 * Attach the connection to its QP and start full operation. The QP goes
 * to RTS; the data path takes over the socket's callbacks.
 */
static int xiw_conn_go_rts(struct xiw_conn *conn)
{
	int rv;

	lockdep_assert_held(&conn->lock);
	xiw_sock_tune(conn->sock);
	rv = xiw_qp_conn_established(conn->qp, conn, conn->sock, &conn->mpa);
	if (rv)
		return rv;
	WRITE_ONCE(conn->state, XIW_CONN_RTS);
	xiw_count(conn->xdev, CONN_ESTABLISHED);
	return 0;
}

/* Active side: the TCP connection is up; send the MPA Request. */
static void xiw_conn_connected(struct xiw_conn *conn)
{
	struct mpa_frame *f = (struct mpa_frame *)conn->frame;
	const void *pd = f + 1;		/* saved by iw_connect */
	u16 pd_len = conn->got;
	struct mpa_v2_data v2;
	int rv;

	conn->got = 0;
	v2 = xiw_mpa_v2(conn->mpa.ird, conn->mpa.ord, conn->rtr_offer);
	/* MPA-04: M in the Request asks for markers from the responder. */
	conn->mpa.mrk_rx = READ_ONCE(mpa_markers);
	rv = xiw_mpa_send(conn, MPA_KEY_REQ, (mpa_crc ? MPA_FLAG_C : 0) |
			  (conn->mpa.mrk_rx ? MPA_FLAG_M : 0),
			  conn->mpa.rev == 2 ? &v2 : NULL, pd, pd_len);
	memset(conn->frame, 0, sizeof(conn->frame));
	if (rv) {
		xiw_conn_fail(conn, -ECONNRESET, NULL, 0);
		return;
	}
	conn->state = XIW_CONN_REQ_SENT;
}

/* Active side: the MPA Reply arrived. */
static void xiw_conn_reply(struct xiw_conn *conn)
{
	struct mpa_frame *f = (struct mpa_frame *)conn->frame;
	const u8 *pd;
	u16 pd_len;
	int rv;

	rv = xiw_mpa_read(conn, MPA_KEY_REP);
	if (rv == 0)
		return;
	if (rv < 0 || xiw_mpa_parse(conn) || f->rev > conn->mpa.rev) {
		xiw_conn_fail(conn, -ECONNRESET, NULL, 0);
		return;
	}
	xiw_conn_stop_timer(conn);
	xiw_mpa_pd(conn, &pd, &pd_len);
	if (f->flags & MPA_FLAG_R) {
		/* MPA-06: the responder's ULP refused. */
		xiw_count(conn->xdev, MPA_REJECTS_RECEIVED);
		xiw_conn_fail(conn, -ECONNREFUSED, pd, pd_len);
		return;
	}
	conn->mpa.rev = f->rev;
	conn->mpa.crc = mpa_crc || (f->flags & MPA_FLAG_C);
	/* MPA-04: M in the Reply asks us for markers (RFC 5044 7.1.1). */
	conn->mpa.mrk_tx = f->flags & MPA_FLAG_M;
	conn->mpa.rtr = 0;
	if (conn->v2) {
		/* E-03/E-05: our ORD at most the responder's IRD. */
		if (conn->peer_ird != MPA_V2_NO_NEGOTIATE)
			conn->mpa.ord = min(conn->mpa.ord, conn->peer_ird);
		if (conn->peer_ord != MPA_V2_NO_NEGOTIATE &&
		    conn->peer_ord > conn->mpa.ird) {
			/* E-04: we cannot take that many Reads. */
			xiw_conn_fail_terminate(conn, 0x06);
			return;
		}
		if (conn->rtr_offer) {
			u16 pick = conn->rtr_offer & conn->mpa.rtr_offered;

			if (!pick) {
				/* E-06: no RTR we offered was picked. */
				xiw_conn_fail_terminate(conn, 0x07);
				return;
			}
			conn->mpa.rtr = __ffs(pick) + 1;
		}
	}
	rv = xiw_conn_go_rts(conn);
	if (rv) {
		xiw_conn_fail(conn, rv, NULL, 0);
		return;
	}
	xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0,
		      pd, pd_len);
	xiw_rx_kick(conn->qp);
}

/* Passive side: the MPA Request arrived; tell the listener's ULP. */
static void xiw_conn_request(struct xiw_conn *conn)
{
	struct mpa_frame *f = (struct mpa_frame *)conn->frame;
	struct iw_cm_id *lid;
	const u8 *pd;
	u16 pd_len;
	int rv;

	rv = xiw_mpa_read(conn, MPA_KEY_REQ);
	if (rv == 0)
		return;
	if (rv < 0 || xiw_mpa_parse(conn)) {
		xiw_conn_close(conn, true);
		return;
	}
	xiw_conn_stop_timer(conn);
	conn->mpa.rev = min_t(u8, f->rev, 2);
	conn->mpa.crc = mpa_crc || (f->flags & MPA_FLAG_C);
	/* MPA-04: the initiator's M asks for markers from us. */
	conn->mpa.mrk_tx = f->flags & MPA_FLAG_M;
	xiw_mpa_pd(conn, &pd, &pd_len);

	mutex_lock(&conn->listener->lock);
	lid = conn->listener->cm_id;
	if (lid && conn->listener->state == XIW_CONN_LISTEN) {
		conn->state = XIW_CONN_REQ_RCVD;
		xiw_conn_unwait(conn->listener);
		/* A reference for the iw_cm's new cm_id, until accept/reject. */
		kref_get(&conn->ref);
		rv = xiw_cm_upcall(conn, lid, IW_CM_EVENT_CONNECT_REQUEST, 0,
				   pd, pd_len);
		if (rv)
			xiw_conn_put(conn);
	} else {
		rv = -ENOTCONN;
	}
	mutex_unlock(&conn->listener->lock);
	if (rv)
		xiw_conn_close(conn, true);
}

/*
 * A listening socket has connections to accept: take them while fewer
 * than the listen backlog wait for their MPA Request; the others wait in
 * TCP's accept queue, whose own limit then applies to new ones. The new
 * conn is not locked (that would nest a child's lock inside its
 * listener's, the reverse of xiw_conn_request): nothing reaches it before
 * xiw_sk_attach, and from then on it may end at any time, so a reference
 * of our own keeps it until its first event is queued.
 */
static void xiw_conn_accept_tcp(struct xiw_conn *lconn)
{
	struct socket *sock;
	struct xiw_conn *conn;

	lockdep_assert_held(&lconn->lock);
	while (lconn->state == XIW_CONN_LISTEN &&
	       atomic_read(&lconn->nwait) < lconn->backlog &&
	       !kernel_accept(lconn->sock, &sock, O_NONBLOCK)) {
		conn = xiw_conn_alloc(lconn->xdev, XIW_FAULT_CONN_ACCEPT);
		if (!conn) {
			sock_release(sock);
			continue;
		}
		kref_get(&lconn->ref);
		atomic_inc(&lconn->nwait);
		conn->listener = lconn;
		conn->net = lconn->net;
		conn->sock = sock;
		conn->state = XIW_CONN_REQ_WAIT;
		kref_get(&conn->ref);
		xiw_sk_attach(conn, lconn);
		xiw_conn_arm_timer(conn);
		/* Data may have arrived before the callbacks were ours. */
		xiw_conn_event(conn, XIW_EV_DATA);
		xiw_conn_put(conn);
	}
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
	if (test_and_clear_bit(XIW_EV_SHUTDOWN, &conn->events) &&
	    conn->state == XIW_CONN_RTS && !conn->fin_sent) {
		/* SQD: what was posted before goes out ahead of the FIN. */
		xiw_tx_flush(conn->qp);
		conn->fin_sent = true;
		kernel_sock_shutdown(conn->sock, SHUT_WR);
	}
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

/* From the QP state machine: the QP entered ERR (abort) or SQD (close). */
void xiw_cm_qp_closing(struct xiw_conn *conn, bool abort)
{
	xiw_conn_event(conn, abort ? XIW_EV_ABORT : XIW_EV_SHUTDOWN);
}

static struct net *xiw_net(struct xiw_device *xdev)
{
	return dev_net(xdev->netdev);
}

static int xiw_sock_create(struct xiw_device *xdev, int family,
			   struct socket **sock)
{
	int rv;

	if (xiw_fault(XIW_FAULT_SOCK))
		return -ENOMEM;
	rv = sock_create_kern(xiw_net(xdev), family, SOCK_STREAM, IPPROTO_TCP,
			      sock);
	if (rv)
		return rv;
	(*sock)->sk->sk_reuse = SK_CAN_REUSE;
	return 0;
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
	conn = xiw_conn_alloc(xdev, XIW_FAULT_CONN_CONNECT);
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

/*
 * A failed accept: the iw_cm raises no event and calls neither accept
 * nor reject again for this cm_id, so the connection ends here (with a
 * reset) and the CONNECT_REQUEST's reference goes.
 */
static int xiw_iw_accept_refuse(struct iw_cm_id *cm_id,
				struct xiw_conn *conn, int rv)
{
	mutex_lock(&conn->lock);
	cm_id->provider_data = NULL;
	xiw_conn_close(conn, true);
	mutex_unlock(&conn->lock);
	xiw_conn_put(conn);
	return rv;
}

int xiw_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct xiw_conn *conn = cm_id->provider_data;
	struct mpa_v2_data v2;
	struct ib_qp *ibqp;
	u16 rtr = 0;
	int rv;

	if (!conn)
		return -EINVAL;
	if (param->ird > conn->xdev->max_ird ||
	    param->ord > conn->xdev->max_ord ||
	    param->private_data_len > MPA_MAX_PD - sizeof(v2)) {
		ibdev_dbg(cm_id->device, "accept: ird %u ord %u pd %u refused\n",
			  param->ird, param->ord, param->private_data_len);
		return xiw_iw_accept_refuse(cm_id, conn, -EINVAL);
	}
	ibqp = xiw_get_qp(cm_id->device, param->qpn);
	if (!ibqp)
		return xiw_iw_accept_refuse(cm_id, conn, -EINVAL);

	mutex_lock(&conn->lock);
	if (conn->state != XIW_CONN_REQ_RCVD) {
		/* The peer is gone already (the conn has ended). */
		mutex_unlock(&conn->lock);
		return xiw_iw_accept_refuse(cm_id, conn, -ECONNRESET);
	}
	xiw_qp_get(to_xqp(ibqp));
	conn->qp = to_xqp(ibqp);
	cm_id->add_ref(cm_id);
	conn->cm_id = cm_id;
	conn->mpa.ird = param->ird;
	conn->mpa.ord = param->ord;
	if (conn->v2) {
		/* E-03/E-05 */
		if (conn->peer_ird != MPA_V2_NO_NEGOTIATE)
			conn->mpa.ord = min(conn->mpa.ord, conn->peer_ird);
		if (conn->peer_ord != MPA_V2_NO_NEGOTIATE &&
		    conn->peer_ord > conn->mpa.ird)
			conn->mpa.ird = min_t(u16, conn->peer_ord,
					      conn->xdev->max_ird);
		/* E-06: pick one RTR message, Write first (cheapest). */
		if (conn->rtr_offer & BIT(RDMAP_WRITE))
			rtr = BIT(RDMAP_WRITE);
		else if (conn->rtr_offer & BIT(RDMAP_READ_REQ))
			rtr = BIT(RDMAP_READ_REQ);
		else if (conn->rtr_offer & BIT(RDMAP_SEND))
			rtr = BIT(RDMAP_SEND);
		conn->mpa.rtr = rtr ? __ffs(rtr) + 1 : 0;
		/*
		 * E-06: the RTR's zero-length Read needs room for one
		 * inbound Read even where the ULP wants none (RFC 6581
		 * section 9.1 raises the responder's IRD to 1 for it).
		 */
		if (rtr == BIT(RDMAP_READ_REQ) && !conn->mpa.ird)
			conn->mpa.ird = 1;
	}
	conn->mpa.responder = true;
	/* Our M, in the Reply, asks the initiator for markers. */
	conn->mpa.mrk_rx = READ_ONCE(mpa_markers);
	rv = xiw_conn_go_rts(conn);
	if (rv) {
		ibdev_dbg(cm_id->device, "accept: QP %u cannot enter RTS\n",
			  param->qpn);
		goto fail;
	}
	v2 = xiw_mpa_v2(conn->mpa.ird, conn->mpa.ord, rtr);
	rv = xiw_mpa_send(conn, MPA_KEY_REP, (conn->mpa.crc ? MPA_FLAG_C : 0) |
			  (conn->mpa.mrk_rx ? MPA_FLAG_M : 0),
			  conn->v2 ? &v2 : NULL, param->private_data,
			  param->private_data_len);
	if (rv)
		goto fail_rts;
	xiw_cm_upcall(conn, cm_id, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	/*
	 * Anything that arrived meanwhile is the data path's now. Kicked
	 * under conn->lock: once it is dropped the connection may end and
	 * take the QP's wire down.
	 */
	xiw_rx_kick(to_xqp(ibqp));
	mutex_unlock(&conn->lock);
	xiw_conn_put(conn);	/* the CONNECT_REQUEST's reference */
	return 0;

fail_rts:
	/* Established for the iw_cm after all: report it, then close. */
	xiw_cm_upcall(conn, cm_id, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	xiw_conn_close(conn, true);
	mutex_unlock(&conn->lock);
	xiw_conn_put(conn);
	return 0;
fail:
	/* Not RTS: the close raises no CLOSE for this cm_id. */
	xiw_conn_drop_cm_id(conn);
	mutex_unlock(&conn->lock);
	return xiw_iw_accept_refuse(cm_id, conn, rv);
}

int xiw_iw_reject(struct iw_cm_id *cm_id, const void *pd, u8 pd_len)
{
	struct xiw_conn *conn = cm_id->provider_data;
	struct mpa_v2_data v2 = {};

	if (!conn)
		return -EINVAL;
	mutex_lock(&conn->lock);
	if (conn->state == XIW_CONN_REQ_RCVD) {
		if (conn->v2)
			v2 = xiw_mpa_v2(0, 0, 0);
		xiw_mpa_send(conn, MPA_KEY_REP,
			     MPA_FLAG_R | (conn->mpa.crc ? MPA_FLAG_C : 0),
			     conn->v2 ? &v2 : NULL, pd, pd_len);
		xiw_count(conn->xdev, MPA_REJECTS_SENT);
		/* Let the Reply reach the peer before the FIN. */
		kernel_sock_shutdown(conn->sock, SHUT_WR);
		xiw_conn_close(conn, false);
	}
	cm_id->provider_data = NULL;
	mutex_unlock(&conn->lock);
	xiw_conn_put(conn);	/* the CONNECT_REQUEST's reference */
	return 0;
}

static int xiw_listen_one(struct xiw_device *xdev, struct iw_cm_id *cm_id,
			  struct xiw_listen *l, struct sockaddr *addr,
			  int addrlen, int backlog, int ifindex)
{
	struct xiw_conn *conn = xiw_conn_alloc(xdev, XIW_FAULT_CONN_LISTEN);
	int rv;

	if (!conn)
		return -ENOMEM;
	lockdep_set_class(&conn->lock, &xiw_listen_lock_key);
	rv = xiw_sock_create(xdev, addr->sa_family, &conn->sock);
	if (rv)
		goto err;
	conn->net = xiw_net(xdev);
	conn->backlog = max(backlog, 1);
	if (addr->sa_family == AF_INET6)
		ip6_sock_set_v6only(conn->sock->sk);
	if (ifindex) {
		rv = sock_bindtoindex(conn->sock->sk, ifindex, true);
		if (rv)
			goto err_sock;
	}
	rv = kernel_bind(conn->sock, addr, addrlen);
	if (rv)
		goto err_sock;
	rv = kernel_listen(conn->sock, backlog);
	if (rv)
		goto err_sock;
	mutex_lock(&conn->lock);
	cm_id->add_ref(cm_id);
	conn->cm_id = cm_id;
	conn->state = XIW_CONN_LISTEN;
	xiw_sk_attach(conn, NULL);
	kref_get(&conn->ref);	/* the list's */
	list_add_tail(&conn->entry, &l->conns);
	/* Connections queued before our callback was in place. */
	xiw_conn_event(conn, XIW_EV_ACCEPT);
	mutex_unlock(&conn->lock);
	return 0;

err_sock:
	sock_release(conn->sock);
	conn->sock = NULL;
err:
	xiw_conn_put(conn);
	return rv;
}

/*
 * End every conn match() selects (abortively), each found on xiw_conns,
 * referenced under its lock, and asked again under its own lock. Conns
 * in IDLE belong to a verb still setting them up.
 */
static void xiw_conns_end(bool (*match)(const struct xiw_conn *conn,
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

static bool xiw_conn_waits_on(const struct xiw_conn *conn, const void *lconn)
{
	return conn->listener == lconn &&
	       READ_ONCE(conn->state) == XIW_CONN_REQ_WAIT;
}

/*
 * Close the listening sockets, then the passive conns that were still
 * waiting for their MPA Request: nobody has heard of those yet, and
 * nothing else would end them before their timer.
 */
static void xiw_listen_free(struct xiw_listen *l)
{
	struct xiw_conn *conn, *next;

	list_for_each_entry_safe(conn, next, &l->conns, entry) {
		list_del_init(&conn->entry);
		mutex_lock(&conn->lock);
		xiw_conn_close(conn, false);
		mutex_unlock(&conn->lock);
		xiw_conns_end(xiw_conn_waits_on, conn);
		xiw_conn_put(conn);	/* the list's reference */
	}
	kfree(l);
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
	rv = register_pernet_subsys(&xiw_cm_net_ops);
	if (rv)
		goto err_data_wq;
	return 0;

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
	destroy_workqueue(xiw_data_wq);
	destroy_workqueue(xiw_cm_wq);
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
