/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Connection management: what xiw_cm.c, xiw_cm_conn.c, xiw_cm_sock.c
 * and xiw_cm_mpa.c share, struct xiw_conn first.
 */
#ifndef XIW_CM_H
#define XIW_CM_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/workqueue.h>
#include <rdma/iw_cm.h>

#include "xiw.h"
#include "xiw_fault.h"
#include "xiw_wire.h"

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

/* A whole MPA Request or Reply: what one start-up reads or keeps. */
#define XIW_CONN_FRAME_LEN (sizeof(struct mpa_frame) + MPA_MAX_PD)

struct xiw_conn {
	struct kref ref;
	struct list_head all;		/* on xiw_conns, under its lock */
	struct net *net;		/* its socket's (not referenced) */
	struct mutex lock;		/* state and all below; see xiw_cm.c */
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
	u8 *frame;			/* XIW_CONN_FRAME_LEN; only until RTS */

	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
};

/* xiw_cm_conn.c */
void xiw_conn_put(struct xiw_conn *conn);
struct xiw_conn *xiw_conn_alloc(struct xiw_device *xdev, bool listen,
				enum xiw_fault_site site);
void xiw_conn_event(struct xiw_conn *conn, int ev);
void xiw_conn_free_frame(struct xiw_conn *conn);
void xiw_conn_arm_timer(struct xiw_conn *conn);
void xiw_conn_stop_timer(struct xiw_conn *conn);
int xiw_cm_upcall(struct xiw_conn *conn, struct iw_cm_id *cm_id,
		  enum iw_cm_event_type type, int status,
		  const void *pd, u8 pd_len);
void xiw_conn_drop_cm_id(struct xiw_conn *conn);
void xiw_conn_unwait(struct xiw_conn *lconn);
void xiw_conn_close(struct xiw_conn *conn, bool abort);
void xiw_conn_fail(struct xiw_conn *conn, int status,
		   const void *pd, u8 pd_len);
void xiw_conns_end(bool (*match)(const struct xiw_conn *conn,
				 const void *arg),
		   const void *arg);

/* xiw_cm_sock.c */
void xiw_sk_attach(struct xiw_conn *conn, const struct xiw_conn *parent);
void xiw_sk_detach(struct xiw_conn *conn);
void xiw_sock_tune(struct socket *sock);
void xiw_conn_accept_tcp(struct xiw_conn *lconn);
struct net *xiw_net(struct xiw_device *xdev);
int xiw_sock_create(struct xiw_device *xdev, int family,
		    struct socket **sock);
int xiw_listen_one(struct xiw_device *xdev, struct iw_cm_id *cm_id,
		   struct xiw_listen *l, struct sockaddr *addr,
		   int addrlen, int backlog, int ifindex);
void xiw_listen_free(struct xiw_listen *l);

/* xiw_cm_mpa.c */
void xiw_conn_connected(struct xiw_conn *conn);
void xiw_conn_reply(struct xiw_conn *conn);
void xiw_conn_request(struct xiw_conn *conn);

#endif /* XIW_CM_H */
