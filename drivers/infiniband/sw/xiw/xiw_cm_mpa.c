// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Connection management: MPA start-up (RFC 5044 section 7, RFC 6581).
 * The Request and Reply frames sent and read on both sides, the
 * negotiation of CRC, markers, IRD/ORD and the RTR message, accept
 * and reject (which answer a Request), and the step into RTS.
 */
#include <linux/crc32c.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <rdma/iw_cm.h>

#include "xiw_cm.h"
#include "xiw_fault.h"

static bool mpa_crc = true;
module_param(mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc,
		 "Ask for MPA CRC32c (default Y); a peer asking for it always gets it");

static bool mpa_markers;
module_param(mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers,
		 "Ask for MPA markers in what the peer sends us (default N); a peer asking for them always gets them");

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
 * E-04, E-06, E-08: an initiator that cannot go on after an enhanced
 * Reply tells the responder with an LLP Terminate (0x2/0x0/ecode, no
 * headers: RFC 5040 Figure 10), framed as the Reply set it up: the
 * leading marker of full operation if the responder asked for markers
 * (MPA-13), CRC if in force. Then the ULP hears status (a refusal, or
 * the local error) and the close is graceful, so the Terminate goes out
 * before the FIN. Must hold conn->lock.
 */
static void xiw_conn_fail_terminate(struct xiw_conn *conn, u8 ecode,
				    int status)
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
		crc = ~xiw_crc32c(~0U, buf, p - buf);
	put_unaligned_le32(crc, p);
	p += MPA_CRC_LEN;
	if (!xiw_send_all(conn->sock, buf, p - buf))
		xiw_count(conn->xdev, TX_TERMINATE_LLP);
	if (conn->cm_id)
		xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CONNECT_REPLY,
			      status, NULL, 0);
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
void xiw_conn_connected(struct xiw_conn *conn)
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
	memset(conn->frame, 0, XIW_CONN_FRAME_LEN);
	if (rv) {
		xiw_conn_fail(conn, -ECONNRESET, NULL, 0);
		return;
	}
	conn->state = XIW_CONN_REQ_SENT;
}

/* Active side: the MPA Reply arrived. */
void xiw_conn_reply(struct xiw_conn *conn)
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
			xiw_conn_fail_terminate(conn, MPA_TERM_IRD_SHORT,
						-ECONNREFUSED);
			return;
		}
		if (conn->rtr_offer) {
			u16 pick = conn->rtr_offer & conn->mpa.rtr_offered;

			if (!pick) {
				/* E-06: no RTR we offered was picked. */
				xiw_conn_fail_terminate(conn, MPA_TERM_NO_RTR,
							-ECONNREFUSED);
				return;
			}
			conn->mpa.rtr = __ffs(pick) + 1;
		}
	}
	rv = xiw_conn_go_rts(conn);
	if (rv) {
		/*
		 * E-08: the QP could not take the connection (no memory for
		 * its rings, or its ULP moved it on meanwhile). Its ULP hears
		 * the error itself.
		 */
		if (conn->v2)
			xiw_conn_fail_terminate(conn,
						MPA_TERM_LOCAL_CATASTROPHIC, rv);
		else
			xiw_conn_fail(conn, rv, NULL, 0);
		return;
	}
	xiw_cm_upcall(conn, conn->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0,
		      pd, pd_len);
	xiw_conn_free_frame(conn);	/* pd was in it */
	xiw_rx_catch_up(conn->qp);
}

/* Passive side: the MPA Request arrived; tell the listener's ULP. */
void xiw_conn_request(struct xiw_conn *conn)
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
	xiw_conn_free_frame(conn);	/* the Request's pd was delivered */
	xiw_cm_upcall(conn, cm_id, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	/*
	 * Anything that arrived meanwhile is the data path's now. Taken in
	 * under conn->lock: once it is dropped the connection may end and
	 * take the QP's wire down.
	 */
	xiw_rx_catch_up(to_xqp(ibqp));
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
