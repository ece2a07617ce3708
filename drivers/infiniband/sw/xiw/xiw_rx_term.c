// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receive: the Terminate. An error found in what arrived raises one
 * (tx sends it); one the peer sent ends the connection.
 */
#include <linux/spinlock.h>

#include "xiw_rx.h"

/* First error wins: Terminate it, stop placing (DDP-09, TERM-05). */
void xiw_rx_error(struct xiw_rx *rx, u8 layer_etype, u8 ecode,
		  bool with_hdr)
{
	struct xiw_qp *qp = rx->qp;

	if (rx->dead)
		return;
	rx->dead = true;
	ibdev_dbg(&qp->xdev->ibdev, "qp %u: terminate %02x/%02x\n",
		  qp->ibqp.qp_num, layer_etype, ecode);
	if (with_hdr)
		xiw_tx_terminate(qp, layer_etype, ecode,
				 rx->hdr + MPA_HDR_LEN,
				 rx->hdr_len - MPA_HDR_LEN, rx->ulpdu_len);
	else
		xiw_tx_terminate(qp, layer_etype, ecode, NULL, 0, 0);
}

/*
 * The outstanding Read or atomic a received Terminate names: the one
 * whose QN 1 MSN its DDP header (D) carries, else the oldest. Caller
 * holds the wire lock; NULL if none is outstanding.
 */
static struct xiw_orq_entry *xiw_rx_term_blame(struct xiw_rx *rx)
{
	const u8 *ddp = rx->scratch + 6;	/* after the Terminate fields */
	struct xiw_wire *w = &rx->qp->wire;
	u32 i, msn;

	if (w->orq_head == w->orq_tail)
		return NULL;
	if ((get_unaligned_be16(rx->scratch + 2) & TERM_FLAG_D) &&
	    rx->data_got >= 6 + sizeof(struct iwarp_untagged) - MPA_HDR_LEN &&
	    !(ddp[0] & DDP_FLAG_TAGGED) &&
	    get_unaligned_be32(ddp + 6) == DDP_QN_READ_REQ) {
		msn = get_unaligned_be32(ddp + 10);
		for (i = w->orq_head; i != w->orq_tail; i++)
			if (w->orq[i & w->orq_mask].msn == msn)
				return &w->orq[i & w->orq_mask];
	}
	return &w->orq[w->orq_head & w->orq_mask];
}

/* A received Terminate: report it, end the connection (TERM-*). */
void xiw_rx_terminate(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	u8 le = rx->data_got >= 2 ? rx->scratch[0] : 0xff;
	u8 ec = rx->data_got >= 2 ? rx->scratch[1] : 0;
	bool prot = (le == TERM_RDMAP_PROT || le == TERM_DDP_TAGGED);
	u8 status = IB_WC_REM_ACCESS_ERR;
	struct xiw_orq_entry *o;
	u32 idx = U32_MAX;

	ibdev_dbg(&qp->xdev->ibdev, "qp %u: peer terminated %02x/%02x\n",
		  qp->ibqp.qp_num, le, ec);
	rx->dead = true;
	xiw_count_term(qp, false, le, ec);
	/*
	 * V-04: a Read or atomic the peer refused for its rights fails as a
	 * remote access error; an atomic refused as an operation (RFC 7306
	 * section 8: a peer without atomics, an unaligned target) as an
	 * invalid request. The ones before it flush with the rest.
	 */
	spin_lock_bh(&w->lock);
	o = xiw_rx_term_blame(rx);
	if (o && le == TERM_RDMAP_OP && (ec == 0x06 || ec == 0x07) &&
	    o->atomic)
		status = IB_WC_REM_INV_REQ_ERR;
	if (o && (prot || status == IB_WC_REM_INV_REQ_ERR))
		idx = o->sq_idx;
	WRITE_ONCE(w->term_sent, true);	/* answer a Terminate with none */
	spin_unlock_bh(&w->lock);
	if (idx != U32_MAX)
		xiw_sq_done(qp, idx, status);
	xiw_qp_error_defer(qp, prot ? IB_EVENT_QP_ACCESS_ERR :
			   IB_EVENT_QP_FATAL);
}
