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

/* A received Terminate: report it, end the connection (TERM-*). */
void xiw_rx_terminate(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	u8 le = rx->data_got >= 2 ? rx->scratch[0] : 0xff;
	u32 idx = U32_MAX;
	bool prot = (le == TERM_RDMAP_PROT || le == TERM_DDP_TAGGED);

	ibdev_dbg(&qp->xdev->ibdev, "qp %u: peer terminated %02x/%02x\n",
		  qp->ibqp.qp_num, le, rx->data_got >= 2 ? rx->scratch[1] : 0);
	rx->dead = true;
	xiw_count_term(qp, false, le, rx->data_got >= 2 ? rx->scratch[1] : 0);
	/* V-04: a Read the peer refused fails as a remote access error. */
	spin_lock_bh(&w->lock);
	if (prot && w->orq_head != w->orq_tail) {
		idx = w->orq[w->orq_head & w->orq_mask].sq_idx;
		w->orq_head++;
	}
	w->term_sent = true;	/* answer a Terminate with none */
	spin_unlock_bh(&w->lock);
	if (idx != U32_MAX)
		xiw_sq_done(qp, idx, IB_WC_REM_ACCESS_ERR);
	xiw_qp_error_defer(qp, prot ? IB_EVENT_QP_ACCESS_ERR :
			   IB_EVENT_QP_FATAL);
}
