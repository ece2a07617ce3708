// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receive: placement. Each DDP segment's header checked against the
 * QP's state (MSNs, STags, the ORQ and IRQ, receive WQEs from the RQ
 * or SRQ) before its payload is placed; where the payload goes; what a
 * complete segment delivers (completions, invalidations, Reads queued
 * for tx).
 */
#include <linux/highmem.h>
#include <linux/spinlock.h>

#include "xiw_rx.h"
#include "xiw_tx.h"

/* Receives complete normally only in RTS and SQD. */
static bool xiw_rx_live(const struct xiw_qp *qp)
{
	enum ib_qp_state st = READ_ONCE(qp->state);

	return st == IB_QPS_RTS || st == IB_QPS_SQD;
}

/* Take a receive WQE for a new Send (copied once, then checked). */
static int xiw_rx_take_rqe(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_rqe *slot;
	unsigned long irqflags;
	u64 total = 0;
	int i;

	if (qp->srq) {
		struct xiw_srq *srq = qp->srq;
		bool event = false;

		spin_lock_irqsave(&srq->lock, irqflags);
		slot = xiw_ring_slot(&srq->ring, srq->ring.cons);
		/* Acquire: pairs with the producer's release of the slot. */
		if (!(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID)) {
			spin_unlock_irqrestore(&srq->lock, irqflags);
			return -ENOBUFS;
		}
		xiw_rqe_copy(&rx->rqe, slot);
		/* Release: our copy is complete before the slot is reused. */
		smp_store_release(&slot->flags, 0);
		srq->ring.cons++;
		if (srq->limit) {
			u32 n;

			for (n = 0; n < srq->limit; n++) {
				slot = xiw_ring_slot(&srq->ring,
						     srq->ring.cons + n);
				if (!(READ_ONCE(slot->flags) & XIW_SLOT_VALID))
					break;
			}
			if (n < srq->limit) {
				srq->limit = 0;
				event = true;
			}
		}
		spin_unlock_irqrestore(&srq->lock, irqflags);
		if (event && srq->ibsrq.event_handler) {
			struct ib_event ev = {
				.device = srq->ibsrq.device,
				.element.srq = &srq->ibsrq,
				.event = IB_EVENT_SRQ_LIMIT_REACHED,
			};

			srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		}
	} else {
		spin_lock_irqsave(&qp->rq_lock, irqflags);
		slot = xiw_ring_slot(&qp->rq, qp->rq.cons);
		if (!xiw_rx_live(qp) ||
		    /* Acquire: pairs with the producer's release. */
		    !(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID)) {
			spin_unlock_irqrestore(&qp->rq_lock, irqflags);
			return -ENOBUFS;
		}
		/* The slot stays ours until the Send completes. */
		xiw_rqe_copy(&rx->rqe, slot);
		spin_unlock_irqrestore(&qp->rq_lock, irqflags);
	}
	rx->rq_active = true;
	xiw_tx_note_recv(qp->tx);
	rx->msg_got = 0;
	rx->rq_len = 0;
	if (rx->rqe.num_sge > XIW_MAX_RECV_SGE)
		return -EINVAL;
	for (i = 0; i < rx->rqe.num_sge; i++) {
		const struct xiw_sge *s = &rx->rqe.sge[i];

		total += s->length;
		if (!s->length)
			continue;
		rx->rmr[i] = xiw_mr_get(qp->xdev, s->lkey);
		rx->rmr_n = i + 1;
		if (!rx->rmr[i] ||
		    xiw_mr_check(rx->rmr[i], qp, s->addr, s->length,
				 IB_ACCESS_LOCAL_WRITE))
			return -EACCES;
	}
	if (total > U32_MAX)
		return -EINVAL;
	rx->rq_len = total;
	return 0;
}

/*
 * Start an untagged message that consumes a receive WQE. Returns 0, or
 * -EIO after raising the error: no WQE (V-05: iWARP has no RNR retry)
 * or one whose buffers are not ours to write.
 */
static int xiw_rx_start_rqe(struct xiw_rx *rx)
{
	int rv = xiw_rx_take_rqe(rx);

	if (rv == -ENOBUFS) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x02, true);
		return -EIO;
	}
	if (rv) {
		xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_LOC_PROT_ERR, 0);
		xiw_rx_error(rx, TERM_RDMAP_LOCAL, 0x00, true);
		return -EIO;
	}
	rx->inval = 0;
	return 0;
}

/* Complete the current receive WQE; the slot goes back to the producer. */
void xiw_rx_complete_rqe(struct xiw_rx *rx, u8 opcode, u8 status,
			 u32 flags)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_cqe cqe = {
		.opcode = opcode,
		.status = status,
		.wr_id = rx->rqe.wr_id,
		.qp_num = qp->ibqp.qp_num,
		.byte_len = rx->msg_got,
		.flags = flags,
		.ex = rx->inval,
	};
	unsigned long irqflags;

	if (!rx->rq_active)
		return;
	rx->rq_active = false;
	xiw_rx_put_rq_mrs(rx);
	if (qp->srq) {
		/* Taken from the SRQ: this QP's to complete, flushed if not live. */
		if (!xiw_rx_live(qp))
			cqe.status = IB_WC_WR_FLUSH_ERR;
		xiw_cq_add(qp->rcq, &cqe);
		return;
	}
	spin_lock_irqsave(&qp->rq_lock, irqflags);
	/*
	 * Out of RTS and SQD (ERR, or a RESET in mid-message) the WQE is the
	 * flush's: it stays at the head of the RQ, and xiw_qp_stop_wire
	 * flushes or discards it with the rest, in order.
	 */
	if (xiw_rx_live(qp)) {
		struct xiw_rqe *slot = xiw_ring_slot(&qp->rq, qp->rq.cons);

		/* Release: hand the slot back once we are done with it. */
		smp_store_release(&slot->flags, 0);
		qp->rq.cons++;
		xiw_cq_add(qp->rcq, &cqe);
	}
	spin_unlock_irqrestore(&qp->rq_lock, irqflags);
}

/* Check an untagged Send segment and find its buffer (DDP-07). */
static void xiw_rx_send_hdr(struct xiw_rx *rx)
{
	struct iwarp_untagged *u = (struct iwarp_untagged *)rx->hdr;
	struct xiw_qp *qp = rx->qp;
	u32 msn = be32_to_cpu(u->msn), mo = be32_to_cpu(u->mo);

	if (be32_to_cpu(u->qn) != DDP_QN_SEND) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x01, true);
		return;
	}
	/* The initiator's zero-length Send RTR consumes no buffer (E-06). */
	if (qp->wire.mpa.responder && !rx->first_seen &&
	    qp->wire.mpa.rtr == RDMAP_SEND + 1 && !rx->data_len &&
	    rx->last && msn == rx->msn[DDP_QN_SEND]) {
		rx->msn[DDP_QN_SEND]++;
		rx->tgt = XIW_TGT_NONE;
		return;
	}
	if (!rx->rq_active && xiw_rx_start_rqe(rx))
		return;
	if (mo != rx->msg_got) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x04, true);
		return;
	}
	if ((u64)mo + rx->data_len > rx->rq_len) {
		/* V-03 */
		xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_LOC_LEN_ERR, 0);
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x05, true);
		return;
	}
	if (msn != rx->msn[DDP_QN_SEND]) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x03, true);
		return;
	}
	if (rx->op == RDMAP_SEND_INV || rx->op == RDMAP_SEND_SE_INV)
		rx->inval = be32_to_cpu(u->inval);
	rx->tgt = XIW_TGT_SEND;
}

/*
 * An untagged message that must be one whole segment of len payload
 * bytes on queue qn, the next in that queue's MSN order. Returns 0, or
 * -EIO after raising the error: another queue (0x12/0x01), not one
 * segment of len bytes (0x02/0x06), out of order (0x12/0x03).
 */
static int xiw_rx_one_segment(struct xiw_rx *rx, u32 qn, u32 len)
{
	struct iwarp_untagged *u = (struct iwarp_untagged *)rx->hdr;

	if (be32_to_cpu(u->qn) != qn) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x01, true);
		return -EIO;
	}
	if (rx->data_len != len || !rx->last || be32_to_cpu(u->mo)) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return -EIO;
	}
	if (be32_to_cpu(u->msn) != rx->msn[qn]) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x03, true);
		return -EIO;
	}
	return 0;
}

/*
 * RFC 7306 Immediate Data (EXT-08): exactly 8 bytes in one segment on
 * QN 0; it consumes a receive WQE but places nothing in it.
 */
static void xiw_rx_immdt_hdr(struct xiw_rx *rx)
{
	if (xiw_rx_one_segment(rx, DDP_QN_SEND, RDMAP_IMMDT_LEN))
		return;
	/* Not inside a Send still arriving. */
	if (rx->rq_active) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	if (xiw_rx_start_rqe(rx))
		return;
	rx->tgt = XIW_TGT_IMMDT;
}

/* Check a tagged RDMA Write segment (DDP-08, RFC 5040 section 6.4). */
static void xiw_rx_write_hdr(struct xiw_rx *rx)
{
	struct iwarp_tagged *t = (struct iwarp_tagged *)rx->hdr;
	struct xiw_qp *qp = rx->qp;
	u32 stag = be32_to_cpu(t->stag);
	u64 to = be64_to_cpu(t->to);
	int rv;

	rx->tgt = XIW_TGT_NONE;
	if (!rx->data_len)
		return;		/* DDP-05: nothing to check */
	if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_WRITE)) {
		xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
		return;
	}
	if (to + rx->data_len < to) {
		xiw_rx_error(rx, TERM_DDP_TAGGED, 0x03, true);
		return;
	}
	rx->mr = xiw_mr_get(qp->xdev, stag);
	if (!rx->mr) {
		xiw_rx_error(rx, TERM_DDP_TAGGED, 0x00, true);
		return;
	}
	rv = xiw_mr_check(rx->mr, qp, to, rx->data_len,
			  IB_ACCESS_REMOTE_WRITE);
	if (rv) {
		xiw_rx_put_mr(rx);
		if (rv == -EINVAL)
			xiw_rx_error(rx, TERM_DDP_TAGGED, 0x01, true);
		else if (rv == -ENOENT)
			xiw_rx_error(rx, TERM_DDP_TAGGED, 0x00, true);
		else
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
		return;
	}
	rx->to = to;
	rx->tgt = XIW_TGT_WRITE;
}

/* A Read Response: it must continue the oldest outstanding Read. */
static void xiw_rx_resp_hdr(struct xiw_rx *rx)
{
	struct iwarp_tagged *t = (struct iwarp_tagged *)rx->hdr;
	struct xiw_wire *w = &rx->qp->wire;
	struct xiw_orq_entry *o;
	bool ok;

	spin_lock_bh(&w->lock);
	o = &w->orq[w->orq_head & w->orq_mask];
	ok = w->orq_head != w->orq_tail && !o->atomic &&
	     be32_to_cpu(t->stag) == o->sink_stag &&
	     be64_to_cpu(t->to) == o->sink_to + o->got &&
	     (u64)o->got + rx->data_len <= o->len;
	spin_unlock_bh(&w->lock);
	if (!ok) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	rx->tgt = rx->data_len ? XIW_TGT_READ_RESP : XIW_TGT_NONE;
}

/* An RDMA Read Request: check the source now, answer from tx. */
static void xiw_rx_read_req(struct xiw_rx *rx)
{
	struct iwarp_read_req *r = (struct iwarp_read_req *)rx->hdr;
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	u32 len = be32_to_cpu(r->size), stag = be32_to_cpu(r->src_stag);
	u64 to = be64_to_cpu(r->src_to);
	struct xiw_irq_entry *e;
	struct xiw_mr *mr = NULL;
	int rv;

	rx->tgt = XIW_TGT_NONE;
	/* The header is all of it: no payload. */
	if (xiw_rx_one_segment(rx, DDP_QN_READ_REQ, 0))
		return;
	if (READ_ONCE(w->irq_tail) - READ_ONCE(w->irq_head) >= w->mpa.ird) {
		/* RDMAP-04: more Reads than our IRD (0: none at all). */
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x07, true);
		return;
	}
	if (len) {		/* RDMAP-02: zero length checks nothing */
		if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_READ)) {
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
			return;
		}
		if (to + len < to) {
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x04, true);
			return;
		}
		mr = xiw_mr_get(qp->xdev, stag);
		if (!mr) {
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x00, true);
			return;
		}
		rv = xiw_mr_check(mr, qp, to, len,
				  IB_ACCESS_REMOTE_READ);
		if (rv) {
			xiw_mr_put(mr);
			xiw_rx_error(rx, TERM_RDMAP_PROT,
				     rv == -EINVAL ? 0x01 : rv == -ENOENT ?
				     0x00 : 0x02, true);
			return;
		}
	}
	rx->msn[DDP_QN_READ_REQ]++;
	spin_lock_bh(&w->lock);
	e = &w->irq[w->irq_tail & w->irq_mask];
	e->mr = mr;
	e->src_to = to;
	e->len = len;
	e->sink_stag = be32_to_cpu(r->sink_stag);
	e->sink_to = be64_to_cpu(r->sink_to);
	e->atomic = false;
	w->irq_tail++;
	spin_unlock_bh(&w->lock);
}

/*
 * An Atomic Request (RFC 7306 section 5.2.1): one whole segment of 52
 * bytes on QN 1, numbered with the Read Requests, within the IRD the two
 * share. Its body is checked once it arrived whole and its CRC matched
 * (xiw_rx_atomic_req()).
 */
static void xiw_rx_atomic_req_hdr(struct xiw_rx *rx)
{
	struct xiw_wire *w = &rx->qp->wire;

	if (xiw_rx_one_segment(rx, DDP_QN_READ_REQ,
			       sizeof(struct rdmap_atomic_req)))
		return;
	if (READ_ONCE(w->irq_tail) - READ_ONCE(w->irq_head) >= w->mpa.ird) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x07, true);
		return;
	}
	rx->tgt = XIW_TGT_ATOMIC_REQ;
}

/*
 * An Atomic Response (RFC 7306 section 5.2.2): one whole segment of 12
 * bytes on QN 3, for the oldest outstanding request, which must be an
 * atomic one; its Request Identifier is checked with the body.
 */
static void xiw_rx_atomic_resp_hdr(struct xiw_rx *rx)
{
	struct xiw_wire *w = &rx->qp->wire;
	bool ok;

	if (xiw_rx_one_segment(rx, DDP_QN_ATOMIC_RESP,
			       sizeof(struct rdmap_atomic_resp)))
		return;
	spin_lock_bh(&w->lock);
	ok = w->orq_head != w->orq_tail &&
	     w->orq[w->orq_head & w->orq_mask].atomic;
	spin_unlock_bh(&w->lock);
	if (!ok) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	rx->tgt = XIW_TGT_ATOMIC_RESP;
}

/*
 * A whole Atomic Request arrived: check what it asks (RFC 7306 section
 * 5.2.1, Terminates as RFC 5040 section 4.8 and RFC 7306 section 8), then
 * queue it behind the Reads already in the IRQ. Memory is touched only
 * when tx carries it out, in order.
 */
static void xiw_rx_atomic_req(struct xiw_rx *rx)
{
	struct rdmap_atomic_req a;
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	struct xiw_irq_entry *e;
	struct xiw_mr *mr;
	struct bio_vec bv;
	u8 aop;
	u64 to;
	int rv;

	memcpy(&a, rx->scratch, sizeof(a));
	aop = be32_to_cpu(a.aopcode) & RDMAP_AOP_MASK;
	to = be64_to_cpu(a.to);
	rx->msn[DDP_QN_READ_REQ]++;
	if (aop != RDMAP_AOP_FETCH_ADD && aop != RDMAP_AOP_CMP_SWAP) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_ATOMIC)) {
		xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
		return;
	}
	if (to + sizeof(u64) < to) {
		xiw_rx_error(rx, TERM_RDMAP_PROT, 0x04, true);
		return;
	}
	mr = xiw_mr_get(qp->xdev, be32_to_cpu(a.stag));
	if (!mr) {
		xiw_rx_error(rx, TERM_RDMAP_PROT, 0x00, true);
		return;
	}
	rv = xiw_mr_check(mr, qp, to, sizeof(u64),
			  IB_ACCESS_REMOTE_ATOMIC);
	/* The word itself, aligned: within xiw_rx_read()'s RCU section. */
	if (!rv)
		rv = (to & (sizeof(u64) - 1)) ? -EFAULT :
		     xiw_mr_word(mr, to, &bv);
	if (rv) {
		xiw_mr_put(mr);
		if (rv == -EFAULT)	/* RFC 7306 section 8.2 */
			xiw_rx_error(rx, TERM_RDMAP_OP, 0x07, true);
		else
			xiw_rx_error(rx, TERM_RDMAP_PROT,
				     rv == -EINVAL ? 0x01 : rv == -ENOENT ?
				     0x00 : 0x02, true);
		return;
	}
	spin_lock_bh(&w->lock);
	e = &w->irq[w->irq_tail & w->irq_mask];
	e->mr = mr;
	e->src_to = to;
	e->len = sizeof(u64);
	e->atomic = true;
	e->aop = aop;
	e->req_id = be32_to_cpu(a.req_id);
	e->add_swap = be64_to_cpu(a.add_swap);
	e->add_swap_mask = be64_to_cpu(a.add_swap_mask);
	e->compare = be64_to_cpu(a.compare);
	e->compare_mask = be64_to_cpu(a.compare_mask);
	w->irq_tail++;
	spin_unlock_bh(&w->lock);
	xiw_tx_kick(qp);
}

/*
 * A whole Atomic Response arrived for the ORQ head: the old value goes to
 * the request's 8-byte local buffer, then the request completes.
 */
static void xiw_rx_atomic_resp(struct xiw_rx *rx)
{
	struct rdmap_atomic_resp r;
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	struct xiw_orq_entry *o;
	struct bio_vec bv[2];
	struct xiw_mr *mr;
	u64 value;
	int n, i, at = 0;
	u32 idx;

	memcpy(&r, rx->scratch, sizeof(r));
	rx->msn[DDP_QN_ATOMIC_RESP]++;
	/* Only rx moves the ORQ head: o stays put while we read. */
	o = &w->orq[w->orq_head & w->orq_mask];
	if (be32_to_cpu(r.req_id) != o->msn) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	value = be64_to_cpu(r.value);
	mr = xiw_mr_get(qp->xdev, o->sqe.sge[0].lkey);
	n = !mr ? -EACCES :
	    xiw_mr_check(mr, qp, o->sqe.sge[0].addr, sizeof(u64),
			 IB_ACCESS_LOCAL_WRITE);
	if (!n)
		n = xiw_mr_bvec(mr, o->sqe.sge[0].addr, sizeof(u64), bv, 2);
	for (i = 0; i < n; i++) {
		memcpy_to_page(bv[i].bv_page, bv[i].bv_offset,
			       (u8 *)&value + at, bv[i].bv_len);
		at += bv[i].bv_len;
	}
	if (mr)
		xiw_mr_put(mr);
	spin_lock_bh(&w->lock);
	idx = o->sq_idx;
	w->orq_head++;
	spin_unlock_bh(&w->lock);
	if (n < 0) {
		/* Our own sink vanished: as for a Read Response's. */
		xiw_sq_done(qp, idx, IB_WC_LOC_PROT_ERR);
		xiw_rx_error(rx, TERM_RDMAP_LOCAL, 0x00, true);
		return;
	}
	xiw_sq_done(qp, idx, IB_WC_SUCCESS);
	/* A Read or atomic waiting for ORD room may go now. */
	xiw_tx_kick(qp);
}

/* The header is complete: check it and set up placement. */
void xiw_rx_header(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;

	rx->data_len = rx->ulpdu_len - (rx->hdr_len - MPA_HDR_LEN);
	rx->data_got = 0;
	rx->trl_len = (-(MPA_HDR_LEN + rx->ulpdu_len) & 3) + MPA_CRC_LEN;
	rx->trl_got = 0;
	rx->tgt = XIW_TGT_NONE;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		ibdev_dbg(qp->ibqp.device, "qp %u: FPDU in state %d\n",
			  qp->ibqp.qp_num, qp->state);
		rx->dead = true;
		return;
	}
	switch (rx->op) {
	case RDMAP_WRITE:
		xiw_rx_write_hdr(rx);
		break;
	case RDMAP_READ_RESP:
		xiw_rx_resp_hdr(rx);
		break;
	case RDMAP_READ_REQ:
		xiw_rx_read_req(rx);
		break;
	case RDMAP_IMMDT:
	case RDMAP_IMMDT_SE:
		xiw_rx_immdt_hdr(rx);
		break;
	case RDMAP_ATOMIC_REQ:
		xiw_rx_atomic_req_hdr(rx);
		break;
	case RDMAP_ATOMIC_RESP:
		xiw_rx_atomic_resp_hdr(rx);
		break;
	case RDMAP_TERMINATE:
		if (rx->data_len > sizeof(rx->scratch)) {
			/* Longer than any Terminate: just tear down. */
			rx->dead = true;
			xiw_qp_error_defer(qp, IB_EVENT_QP_FATAL);
			return;
		}
		rx->tgt = XIW_TGT_TERM;
		break;
	default:
		xiw_rx_send_hdr(rx);
		break;
	}
}

/* The pieces of the target for payload bytes [off, off + len). */
int xiw_rx_target(struct xiw_rx *rx, u32 len, struct xiw_mr **held)
{
	struct xiw_qp *qp = rx->qp;
	int n = 0, rv, i;
	u32 off;

	switch (rx->tgt) {
	case XIW_TGT_WRITE:
		return xiw_mr_bvec(rx->mr, rx->to + rx->data_got, len,
				   rx->bv, XIW_RX_BVECS);
	case XIW_TGT_IMMDT:
	case XIW_TGT_TERM:
	case XIW_TGT_ATOMIC_REQ:
	case XIW_TGT_ATOMIC_RESP:
		rx->bv[0].bv_page = virt_to_page(rx->scratch + rx->data_got);
		rx->bv[0].bv_offset = offset_in_page(rx->scratch +
						     rx->data_got);
		rx->bv[0].bv_len = min_t(u32, len, PAGE_SIZE -
					 rx->bv[0].bv_offset);
		return 1;
	case XIW_TGT_SEND:
		/* The FPDU's payload may come in several reads. */
		off = rx->msg_got + rx->data_got;
		for (i = 0; i < rx->rqe.num_sge && len; i++) {
			const struct xiw_sge *s = &rx->rqe.sge[i];
			u32 l;

			if (off >= s->length) {
				off -= s->length;
				continue;
			}
			l = min(len, s->length - off);
			rv = xiw_mr_bvec(rx->rmr[i], s->addr + off, l,
					 rx->bv + n, XIW_RX_BVECS - n);
			if (rv < 0)
				return n ? n : rv;
			n += rv;
			len -= l;
			off = 0;
		}
		return n ? n : -EINVAL;
	case XIW_TGT_READ_RESP: {
		struct xiw_wire *w = &qp->wire;
		struct xiw_orq_entry *o = &w->orq[w->orq_head & w->orq_mask];

		/* Only rx moves the ORQ head: o stays put while we read. */
		off = o->got + rx->data_got;
		for (i = 0; i < o->sqe.num_sge && len; i++) {
			const struct xiw_sge *s = &o->sqe.sge[i];
			struct xiw_mr *mr;
			u32 l;

			if (off >= s->length) {
				off -= s->length;
				continue;
			}
			l = min(len, s->length - off);
			mr = xiw_mr_get(qp->xdev, s->lkey);
			if (!mr)
				return -EACCES;
			if (xiw_mr_check(mr, qp, s->addr + off, l,
					 IB_ACCESS_LOCAL_WRITE)) {
				xiw_mr_put(mr);
				return -EACCES;
			}
			rv = xiw_mr_bvec(mr, s->addr + off, l, rx->bv,
					 XIW_RX_BVECS);
			if (rv < 0) {
				xiw_mr_put(mr);
				return rv;
			}
			/* One SGE at a time keeps one reference. */
			*held = mr;
			return rv;
		}
		return -EINVAL;
	}
	default:
		return -EINVAL;
	}
}

/* A whole FPDU arrived with a good CRC: deliver what it ends. */
void xiw_rx_segment_done(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;

	if (!rx->first_seen) {
		rx->first_seen = true;
		spin_lock_bh(&w->lock);
		WRITE_ONCE(w->hold, false);	/* MPA-12 satisfied */
		spin_unlock_bh(&w->lock);
		xiw_tx_kick(qp);
	}
	switch (rx->tgt) {
	case XIW_TGT_WRITE:
		xiw_rx_put_mr(rx);
		break;
	case XIW_TGT_SEND:
		rx->msg_got += rx->data_len;
		if (rx->last) {
			u32 flags = 0;

			rx->msn[DDP_QN_SEND]++;
			if (rx->op == RDMAP_SEND_SE ||
			    rx->op == RDMAP_SEND_SE_INV)
				flags |= XIW_CQE_SOLICITED;
			if (rx->op == RDMAP_SEND_INV ||
			    rx->op == RDMAP_SEND_SE_INV) {
				if (xiw_mr_invalidate(qp, rx->inval, true)) {
					/* RDMAP-06 */
					xiw_rx_complete_rqe(rx, IB_WC_RECV,
							    IB_WC_LOC_PROT_ERR, 0);
					xiw_rx_error(rx, TERM_RDMAP_PROT,
						     0x09, true);
					return;
				}
				flags |= XIW_CQE_WITH_INV;
			}
			xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_SUCCESS, flags);
		}
		break;
	case XIW_TGT_READ_RESP:
	case XIW_TGT_NONE:
		if (rx->op == RDMAP_READ_RESP) {
			struct xiw_orq_entry *o;
			u32 idx = U32_MAX;
			bool inv = false;
			u32 inv_stag = 0;

			spin_lock_bh(&w->lock);
			o = &w->orq[w->orq_head & w->orq_mask];
			o->got += rx->data_len;
			if (rx->last) {
				if (o->got != o->len) {
					spin_unlock_bh(&w->lock);
					xiw_rx_error(rx, TERM_RDMAP_OP, 0x06,
						     true);
					return;
				}
				idx = o->sq_idx;
				inv = o->sqe.opcode ==
				      IB_UVERBS_WR_RDMA_READ_WITH_INV &&
				      o->sqe.num_sge;
				inv_stag = o->sink_stag;
				w->orq_head++;
			}
			spin_unlock_bh(&w->lock);
			/*
			 * Read with Invalidate: the sink's STag (its first
			 * SGE's, as siw and cxgb4 take it: rdma_rw moves the
			 * key on after filling ex.invalidate_rkey) is invalid
			 * before the completion says the Read is done.
			 */
			if (inv && xiw_mr_invalidate(qp, inv_stag, false)) {
				xiw_sq_done(qp, idx, IB_WC_LOC_PROT_ERR);
				xiw_qp_error_defer(qp, IB_EVENT_QP_FATAL);
				return;
			}
			if (idx != U32_MAX)
				xiw_sq_done(qp, idx, IB_WC_SUCCESS);
			/* A Read waiting for ORD room may go now. */
			xiw_tx_kick(qp);
		} else if (rx->op == RDMAP_READ_REQ) {
			xiw_tx_kick(qp);
		}
		break;
	case XIW_TGT_TERM:
		xiw_rx_terminate(rx);
		break;
	case XIW_TGT_ATOMIC_REQ:
		xiw_rx_atomic_req(rx);
		break;
	case XIW_TGT_ATOMIC_RESP:
		xiw_rx_atomic_resp(rx);
		break;
	case XIW_TGT_IMMDT: {
		u32 flags = XIW_CQE_WITH_IMM;

		rx->msn[DDP_QN_SEND]++;
		if (rx->op == RDMAP_IMMDT_SE)
			flags |= XIW_CQE_SOLICITED;
		/* The immediate value as the peer posted it (wire order). */
		memcpy(&rx->inval, rx->scratch, sizeof(rx->inval));
		xiw_rx_complete_rqe(rx, IB_WC_RECV_RDMA_WITH_IMM,
				    IB_WC_SUCCESS, flags);
		break;
	}
	}
}
