// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Connection management: the sockets. Kernel TCP sockets made and
 * tuned, their callbacks taken over and given back, and listening
 * sockets with the connections they accept.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/addrconf.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <rdma/iw_cm.h>

#include "xiw_cm.h"
#include "xiw_fault.h"

static uint ka_idle_s = 30;
module_param(ka_idle_s, uint, 0644);
MODULE_PARM_DESC(ka_idle_s,
		 "Idle seconds before TCP keepalive probes a connection (default 30); a peer that stays silent for 3 more probes 5 s apart is declared dead");

static struct lock_class_key xiw_listen_lock_key;

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
		xiw_tx_continue(conn->qp);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * FIN_WAIT1 and FIN_WAIT2 follow a FIN of ours, which only an SQD close
 * or a Terminate sends, both in RTS, where the work acts on CLOSE_WAIT
 * and CLOSE alone: no work item for them (two per graceful close).
 */
static void xiw_sk_state_change(struct sock *sk)
{
	int st = READ_ONCE(sk->sk_state);
	struct xiw_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = xiw_sk_conn(sk);
	if (conn && st != TCP_FIN_WAIT1 && st != TCP_FIN_WAIT2)
		xiw_conn_event(conn, XIW_EV_STATE);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Take over the socket's callbacks. An accepted socket inherited its
 * listener's, which are ours: it gets back the ones the listener had
 * before us, so that nothing of this module stays on a socket that
 * outlives the conn (an orphan in FIN_WAIT, after rmmod).
 */
void xiw_sk_attach(struct xiw_conn *conn, const struct xiw_conn *parent)
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
void xiw_sk_detach(struct xiw_conn *conn)
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

void xiw_sock_tune(struct socket *sock)
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

/*
 * A listening socket has connections to accept: take them while fewer
 * than the listen backlog wait for their MPA Request; the others wait in
 * TCP's accept queue, whose own limit then applies to new ones. The new
 * conn is not locked (that would nest a child's lock inside its
 * listener's, the reverse of xiw_conn_request): nothing reaches it before
 * xiw_sk_attach, and from then on it may end at any time, so a reference
 * of our own keeps it until its first event is queued.
 */
void xiw_conn_accept_tcp(struct xiw_conn *lconn)
{
	struct socket *sock;
	struct xiw_conn *conn;

	lockdep_assert_held(&lconn->lock);
	while (lconn->state == XIW_CONN_LISTEN &&
	       atomic_read(&lconn->nwait) < lconn->backlog &&
	       !kernel_accept(lconn->sock, &sock, O_NONBLOCK)) {
		conn = xiw_conn_alloc(lconn->xdev, false,
				      XIW_FAULT_CONN_ACCEPT);
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

struct net *xiw_net(struct xiw_device *xdev)
{
	return dev_net(xdev->netdev);
}

int xiw_sock_create(struct xiw_device *xdev, int family,
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

int xiw_listen_one(struct xiw_device *xdev, struct iw_cm_id *cm_id,
		   struct xiw_listen *l, struct sockaddr *addr,
		   int addrlen, int backlog, int ifindex)
{
	struct xiw_conn *conn = xiw_conn_alloc(xdev, true,
						 XIW_FAULT_CONN_LISTEN);
	int rv;

	if (!conn)
		return -ENOMEM;
	lockdep_set_class(&conn->lock, &xiw_listen_lock_key);
	rv = xiw_sock_create(xdev, addr->sa_family, &conn->sock);
	if (rv)
		goto err;
	conn->net = xiw_net(xdev);
	conn->backlog = max(backlog, 1);
	/*
	 * An IPv6 listener takes IPv4 connections as well unless its id is
	 * IPv6-only (rdma_set_afonly(); by default the bindv6only sysctl, as
	 * for any socket). Their addresses go up as IPv4 (xiw_cm_upcall).
	 */
	if (addr->sa_family == AF_INET6 && cm_id->afonly)
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
void xiw_listen_free(struct xiw_listen *l)
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
