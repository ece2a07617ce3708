// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Transmit: the messages. What the next one is (Terminate, RTR, Read
 * Response, SQ entry, Immediate Data), its RDMAP/DDP header and
 * payload, and what happens once it went to TCP; the Terminate is
 * queued here too.
 */
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/tcp.h>

#include "xiw_tx.h"

void xiw_tx_msg_release(struct xiw_txmsg *m)
{
	u32 i;

	for (i = 0; i < m->nsge; i++)
		if (m->mr[i])
			xiw_mr_put(m->mr[i]);
	m->nsge = 0;
	m->active = false;
	if (m->zc) {
		/* Ours: the skbs keep theirs until they let go. */
		xiw_zc_callback(NULL, &m->zc->u, true);
		m->zc = NULL;
	}
}

static inline void xiw_tx_untagged(struct xiw_txmsg *m, u8 op, u32 qn,
				   u32 msn, u32 inval)
{
	struct iwarp_untagged *u = (struct iwarp_untagged *)m->hdr;

	memset(u, 0, sizeof(*u));
	u->ctrl.ddp = DDP_VERSION;
	u->ctrl.rdmap = RDMAP_VERSION | op;
	u->inval = cpu_to_be32(inval);
	u->qn = cpu_to_be32(qn);
	u->msn = cpu_to_be32(msn);
	m->hdr_len = sizeof(*u);
	m->tagged = false;
}

static void xiw_tx_tagged(struct xiw_txmsg *m, u8 op, u32 stag, u64 to)
{
	struct iwarp_tagged *t = (struct iwarp_tagged *)m->hdr;

	memset(t, 0, sizeof(*t));
	t->ctrl.ddp = DDP_VERSION | DDP_FLAG_TAGGED;
	t->ctrl.rdmap = RDMAP_VERSION | op;
	t->stag = cpu_to_be32(stag);
	m->to = to;
	m->hdr_len = sizeof(*t);
	m->tagged = true;
}

/* Resolve and check the local SGEs of a copied SQE (V-02). */
static int xiw_tx_sges(struct xiw_qp *qp, struct xiw_txmsg *m,
		       const struct xiw_sqe *sqe, int access, u32 max_sge)
{
	u64 total = 0;
	u32 i;

	if (sqe->num_sge > max_sge)
		return -EINVAL;
	for (i = 0; i < sqe->num_sge; i++) {
		const struct xiw_sge *s = &sqe->sge[i];
		struct xiw_mr *mr;

		m->addr[i] = s->addr;
		m->slen[i] = s->length;
		m->mr[i] = NULL;
		m->nsge = i + 1;
		total += s->length;
		if (!s->length)
			continue;
		mr = xiw_mr_get(qp->xdev, s->lkey);
		if (!mr)
			return -EACCES;
		m->mr[i] = mr;
		if (xiw_mr_check(mr, qp, s->addr, s->length, access))
			return -EACCES;
	}
	if (total > S32_MAX)
		return -EMSGSIZE;
	m->len = total;
	m->src = XIW_SRC_SGE;
	return 0;
}

/* The payload of a Send or Write: inline bytes or checked SGEs. */
static __always_inline int xiw_tx_source(struct xiw_qp *qp,
					 struct xiw_txmsg *m,
					 const struct xiw_sqe *sqe)
{
	if (!(sqe->flags & XIW_WQE_INLINE))
		return xiw_tx_sges(qp, m, sqe, 0, qp->cap.max_send_sge);
	if (sqe->inline_len > XIW_MAX_INLINE)
		return -EMSGSIZE;
	memcpy(m->inl, sqe->sge, sqe->inline_len);
	m->len = sqe->inline_len;
	m->src = XIW_SRC_INLINE;
	return 0;
}

/* Local error on a work request: its status, V-02. */
static u8 xiw_tx_local_status(int err)
{
	switch (err) {
	case -EACCES:
		return IB_WC_LOC_PROT_ERR;
	case -EMSGSIZE:
		return IB_WC_LOC_LEN_ERR;
	case -EKEYREJECTED:
		return IB_WC_MW_BIND_ERR;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

static bool xiw_sqe_atomic(u8 opcode)
{
	return opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * An Atomic Request (RFC 7306 section 5.2.1): the untagged header on
 * QN 1, numbered with the Read Requests, then the request's own header
 * as the segment's 52 bytes of payload. The local sink is one 8-byte
 * SGE, looked up again when the Response brings the old value; the
 * ORQ entry, as for a Read, is where that Response is expected.
 */
static int xiw_tx_atomic_req(struct xiw_qp *qp, struct xiw_sqe *sqe, u32 idx)
{
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;
	struct xiw_wire *w = &qp->wire;
	struct rdmap_atomic_req *a = (struct rdmap_atomic_req *)m->inl;
	bool cas = sqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	u32 msn = tx->msn[DDP_QN_READ_REQ];
	struct xiw_orq_entry *o;
	int rv;

	/* ORD 0: the connection agreed that we send no requests. */
	if ((sqe->flags & XIW_WQE_INLINE) || !w->mpa.ord)
		return -EINVAL;
	if (sqe->num_sge != 1 || sqe->sge[0].length != sizeof(u64))
		return -EMSGSIZE;
	rv = xiw_tx_sges(qp, m, sqe, IB_ACCESS_LOCAL_WRITE, 1);
	if (rv)
		return rv;
	xiw_tx_msg_release(m);
	spin_lock_bh(&w->lock);
	o = &w->orq[w->orq_tail & w->orq_mask];
	memset(o, 0, sizeof(*o));
	o->sqe = *sqe;
	o->sq_idx = idx;
	o->len = sizeof(u64);
	o->atomic = true;
	o->msn = msn;
	w->orq_tail++;
	spin_unlock_bh(&w->lock);
	tx->msn[DDP_QN_READ_REQ]++;
	xiw_tx_untagged(m, RDMAP_ATOMIC_REQ, DDP_QN_READ_REQ, msn, 0);
	memset(a, 0, sizeof(*a));
	/* The Request Identifier is the MSN: a Terminate names both. */
	a->aopcode = cpu_to_be32(cas ? RDMAP_AOP_CMP_SWAP :
				 RDMAP_AOP_FETCH_ADD);
	a->req_id = cpu_to_be32(msn);
	a->stag = cpu_to_be32(sqe->rkey);
	a->to = cpu_to_be64(sqe->raddr);
	a->add_swap = cpu_to_be64(cas ? sqe->swap : sqe->compare_add);
	if (cas) {
		/* Unmasked: every bit compared, every bit swapped. */
		a->add_swap_mask = cpu_to_be64(U64_MAX);
		a->compare = cpu_to_be64(sqe->compare_add);
		a->compare_mask = cpu_to_be64(U64_MAX);
	} else {
		/* A zero Add Mask is one 64-bit add (section 5.1.1). */
		a->compare_mask = cpu_to_be64(U64_MAX);
	}
	m->len = sizeof(*a);
	m->src = XIW_SRC_INLINE;
	m->fin = XIW_FIN_NONE;	/* completes with its Response */
	return 1;
}

/*
 * Turn the SQ entry just taken into tx->msg. Returns 1 when a message
 * is ready to send, 0 when the entry finished without one (local
 * invalidate, registration), or a negative errno for a local error.
 */
static int xiw_tx_from_sqe(struct xiw_qp *qp, struct xiw_sqe *sqe, u32 idx)
{
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;
	struct xiw_wire *w = &qp->wire;
	bool se = sqe->flags & XIW_WQE_SOLICITED;
	int rv;

	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	m->fin = XIW_FIN_SQ;
	m->sq_idx = idx;

	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_INV: {
		bool inv = sqe->opcode == IB_UVERBS_WR_SEND_WITH_INV;
		u8 op = inv ? (se ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV) :
			      (se ? RDMAP_SEND_SE : RDMAP_SEND);

		rv = xiw_tx_source(qp, m, sqe);
		if (rv)
			return rv;
		xiw_tx_untagged(m, op, DDP_QN_SEND, tx->msn[DDP_QN_SEND]++,
				inv ? sqe->ex : 0);
		return 1;
	}
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (sqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM) {
			/* RFC 7306: the Write, then Immediate Data. */
			m->fin = XIW_FIN_IMMDT;
			m->se = se;
			m->imm = sqe->ex;
		}
		rv = xiw_tx_source(qp, m, sqe);
		if (rv)
			return rv;
		xiw_tx_tagged(m, RDMAP_WRITE, sqe->rkey, sqe->raddr);
		return 1;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_RDMA_READ_WITH_INV: {
		struct iwarp_read_req *rr = (struct iwarp_read_req *)m->hdr;
		struct xiw_orq_entry *o;
		u32 sink_stag = 0;
		u64 sink_to = 0;

		/* ORD 0: the connection agreed that we send no Reads. */
		if ((sqe->flags & XIW_WQE_INLINE) || !qp->wire.mpa.ord)
			return -EINVAL;
		if (sqe->opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV &&
		    !qp->kernel)
			return -EINVAL;
		rv = xiw_tx_sges(qp, m, sqe, IB_ACCESS_LOCAL_WRITE,
				 XIW_MAX_SGE_RD);
		if (rv)
			return rv;
		/*
		 * The peer tags its Response with the first SGE's STag and
		 * address; xiw_rx_place.c places by offset into all the SGEs.
		 */
		if (sqe->num_sge) {
			sink_stag = sqe->sge[0].lkey;
			sink_to = sqe->sge[0].addr;
		}
		spin_lock_bh(&w->lock);
		o = &w->orq[w->orq_tail & w->orq_mask];
		o->sqe = *sqe;
		o->sq_idx = idx;
		o->len = m->len;
		o->got = 0;
		o->sink_stag = sink_stag;
		o->sink_to = sink_to;
		o->atomic = false;
		o->msn = tx->msn[DDP_QN_READ_REQ];
		w->orq_tail++;
		spin_unlock_bh(&w->lock);
		/* The local MRs are looked up again when the data comes. */
		xiw_tx_msg_release(m);
		xiw_tx_untagged(m, RDMAP_READ_REQ, DDP_QN_READ_REQ,
				tx->msn[DDP_QN_READ_REQ]++, 0);
		rr->sink_stag = cpu_to_be32(sink_stag);
		rr->sink_to = cpu_to_be64(sink_to);
		rr->size = cpu_to_be32(m->len);
		rr->src_stag = cpu_to_be32(sqe->rkey);
		rr->src_to = cpu_to_be64(sqe->raddr);
		m->hdr_len = sizeof(*rr);
		m->len = 0;
		m->src = XIW_SRC_NONE;
		m->fin = XIW_FIN_NONE;	/* completes with its Response */
		return 1;
	}
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return xiw_tx_atomic_req(qp, sqe, idx);
	case IB_UVERBS_WR_LOCAL_INV:
		rv = xiw_mr_invalidate(qp, sqe->ex, false);
		return rv ? -EACCES : 0;
	case IB_UVERBS_WR_BIND_MW:
		/* Windows are user space's (kernel consumers have none). */
		if (qp->kernel)
			return -EINVAL;
		return xiw_mw_bind(qp, sqe) ? -EKEYREJECTED : 0;
	case XIW_WR_REG_MR:
		if (!qp->kernel)
			return -EINVAL;
		rv = xiw_mr_fastreg(qp->xdev, qp->ibqp.pd, sqe->ex, sqe->rkey,
				    (int)sqe->compare_add);
		return rv ? -EACCES : 0;
	default:
		return -EINVAL;
	}
}

/*
 * May the SQ entry go now? Fence and ORD rules (RDMAP-04; atomics count
 * against the ORD as Reads do). With ORD 0 a Read or atomic is let
 * through to fail in xiw_tx_from_sqe() once the RTR's Read (sent outside
 * the ORD) is done.
 */
bool xiw_tx_may_start(struct xiw_qp *qp, u32 flags, u8 opcode)
{
	struct xiw_wire *w = &qp->wire;
	u32 reads = READ_ONCE(w->orq_tail) - READ_ONCE(w->orq_head);

	if ((flags & XIW_WQE_FENCE) && reads)
		return false;
	if ((opcode == IB_UVERBS_WR_RDMA_READ ||
	     opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV ||
	     xiw_sqe_atomic(opcode)) &&
	    reads >= max_t(u32, w->mpa.ord, 1))
		return false;
	return true;
}

/*
 * Take the next SQ entry: copy it once, check it, keep the slot until
 * it completes. Returns 1 with tx->msg ready, 0 if the SQ is empty, or
 * -EAGAIN if the next entry must wait (fence, ORD, QP state): whoever
 * ends the wait kicks us.
 */
static int xiw_tx_next_sqe(struct xiw_qp *qp)
{
	struct xiw_sqe *sqe = &qp->tx->sqe, *slot;
	struct xiw_sq_pend *p;
	unsigned long irqflags;
	u32 idx;
	int rv;

	for (;;) {
		/*
		 * Most passes end on an empty SQ: see it without sq_lock. A
		 * slot published after this look comes with a doorbell, or
		 * xiw_tx_pass_run() sees it when it looks again. Nothing of
		 * the slot is read on this way out, so no acquire.
		 */
		idx = READ_ONCE(qp->sq.cons);
		slot = xiw_ring_slot(&qp->sq, idx);
		if (idx - READ_ONCE(qp->sq_comp) < qp->sq.num &&
		    !(READ_ONCE(slot->flags) & XIW_SLOT_VALID))
			return 0;
		spin_lock_irqsave(&qp->sq_lock, irqflags);
		/* SQD still sends what was posted before it. */
		if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return -EAGAIN;
		}
		idx = qp->sq.cons;
		/*
		 * Every slot taken and not yet completed: the one at cons is
		 * an earlier entry still in flight, not a new one.
		 */
		if (idx - qp->sq_comp >= qp->sq.num) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return -EAGAIN;
		}
		slot = xiw_ring_slot(&qp->sq, idx);
		/* Acquire: pairs with the producer's release of the slot. */
		if (!(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID)) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return 0;
		}
		xiw_sqe_copy(sqe, slot);
		if (!xiw_tx_may_start(qp, sqe->flags, sqe->opcode)) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return -EAGAIN;
		}
		qp->sq.cons++;
		p = &qp->sq_pend[idx & (qp->sq.num - 1)];
		p->wr_id = sqe->wr_id;
		p->opcode = xiw_sq_wc_opcode(sqe->opcode, qp->kernel);
		p->signaled = qp->sig_all || (sqe->flags & XIW_WQE_SIGNALED);
		p->done = false;
		p->status = IB_WC_SUCCESS;
		p->byte_len = 0;
		spin_unlock_irqrestore(&qp->sq_lock, irqflags);

		rv = xiw_tx_from_sqe(qp, sqe, idx);
		if (rv == 1) {
			p->byte_len = qp->tx->msg.len;
			if (qp->tx->msg.hdr_len == sizeof(struct iwarp_read_req))
				p->byte_len = be32_to_cpu(((struct iwarp_read_req *)
					qp->tx->msg.hdr)->size);
			else if (xiw_sqe_atomic(sqe->opcode))
				p->byte_len = sizeof(u64);
			qp->tx->msg.active = true;
			xiw_tx_ref_begin(qp, &qp->tx->msg);
			return 1;
		}
		xiw_tx_msg_release(&qp->tx->msg);
		if (rv == 0) {
			xiw_sq_done(qp, idx, IB_WC_SUCCESS);
			continue;
		}
		/* V-02: this one fails, always reported; the rest flush. */
		spin_lock_irqsave(&qp->sq_lock, irqflags);
		p->signaled = true;
		spin_unlock_irqrestore(&qp->sq_lock, irqflags);
		xiw_sq_done(qp, idx, xiw_tx_local_status(rv));
		xiw_qp_error(qp, IB_EVENT_QP_FATAL);
		return -EAGAIN;
	}
}

static int xiw_tx_next_term(struct xiw_qp *qp);

/*
 * Carry out the atomic operation at the IRQ head and answer it (RFC 7306
 * section 5.2.2): now, not on receipt, so it sees every earlier request
 * done and the next waits for its Response (section 7). Its target was
 * checked on receipt; if the MR went since, the operation is not done
 * and a Terminate goes instead (RFC 5040 section 8.1: the Response can
 * no longer be given).
 */
static int xiw_tx_atomic_resp(struct xiw_qp *qp, struct xiw_irq_entry *e)
{
	struct xiw_txmsg *m = &qp->tx->msg;
	struct rdmap_atomic_resp *r = (struct rdmap_atomic_resp *)m->inl;
	struct bio_vec bv;
	u64 old = 0;
	int rv;

	rcu_read_lock();
	rv = xiw_mr_word(e->mr, e->src_to, &bv);
	if (!rv)
		old = xiw_atomic_exec(&bv, e->aop, e->add_swap,
				      e->add_swap_mask, e->compare,
				      e->compare_mask);
	rcu_read_unlock();
	xiw_mr_put(e->mr);
	if (rv) {
		xiw_tx_terminate(qp, TERM_RDMAP_PROT, 0x00, NULL, 0, 0);
		return xiw_tx_next_term(qp);
	}
	xiw_tx_untagged(m, RDMAP_ATOMIC_RESP, DDP_QN_ATOMIC_RESP,
			qp->tx->msn[DDP_QN_ATOMIC_RESP]++, 0);
	r->req_id = cpu_to_be32(e->req_id);
	r->value = cpu_to_be64(old);
	m->len = sizeof(*r);
	m->src = XIW_SRC_INLINE;
	m->fin = XIW_FIN_IRQ;
	m->active = true;
	return 1;
}

/*
 * Answer the oldest inbound Read with a Read Response (RFC 5040 4.5),
 * or the oldest atomic with its Response.
 */
static int xiw_tx_next_response(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_txmsg *m = &qp->tx->msg;
	struct xiw_irq_entry e;

	spin_lock_bh(&w->lock);
	if (w->irq_head == w->irq_tail) {
		spin_unlock_bh(&w->lock);
		return 0;
	}
	e = w->irq[w->irq_head & w->irq_mask];
	/*
	 * The entry's MR reference moves to the message: the entry stays
	 * in the IRQ until the Response is out, and whoever empties the
	 * IRQ (xiw_qp_stop_wire) must not drop that reference again.
	 */
	w->irq[w->irq_head & w->irq_mask].mr = NULL;
	spin_unlock_bh(&w->lock);

	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	if (e.atomic)
		return xiw_tx_atomic_resp(qp, &e);
	xiw_tx_tagged(m, RDMAP_READ_RESP, e.sink_stag, e.sink_to);
	m->len = e.len;
	m->src = XIW_SRC_SGE;
	if (e.len) {
		m->nsge = 1;
		m->mr[0] = e.mr;
		m->addr[0] = e.src_to;
		m->slen[0] = e.len;
	}
	m->fin = XIW_FIN_IRQ;
	m->active = true;
	xiw_tx_ref_begin(qp, m);
	return 1;
}

/* The initiator's peer-to-peer ready-to-receive message (E-06). */
static int xiw_tx_next_rtr(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_txmsg *m = &qp->tx->msg;
	u8 op = w->mpa.rtr - 1;

	WRITE_ONCE(w->rtr_pending, false);	/* see xiw_tx_kick_queued() */
	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	m->fin = XIW_FIN_NONE;
	m->active = true;
	if (op == RDMAP_WRITE) {
		xiw_tx_tagged(m, RDMAP_WRITE, 0, 0);
	} else if (op == RDMAP_SEND) {
		xiw_tx_untagged(m, RDMAP_SEND, DDP_QN_SEND,
				qp->tx->msn[DDP_QN_SEND]++, 0);
	} else {
		struct xiw_orq_entry *o;

		spin_lock_bh(&w->lock);
		o = &w->orq[w->orq_tail & w->orq_mask];
		memset(o, 0, sizeof(*o));
		o->sq_idx = U32_MAX;
		o->msn = qp->tx->msn[DDP_QN_READ_REQ];
		w->orq_tail++;
		spin_unlock_bh(&w->lock);
		xiw_tx_untagged(m, RDMAP_READ_REQ, DDP_QN_READ_REQ,
				qp->tx->msn[DDP_QN_READ_REQ]++, 0);
		/* Sink and source all zero: a zero-length Read (RDMAP-02). */
		m->hdr_len = sizeof(struct iwarp_read_req);
	}
	return 1;
}

/* The Terminate (TERM-01), the last message of the connection. */
static int xiw_tx_next_term(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;

	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	spin_lock_bh(&w->lock);
	WRITE_ONCE(w->term_pending, false);
	WRITE_ONCE(w->term_sent, true);
	memcpy(m->inl, tx->term, tx->term_len);
	m->len = tx->term_len;
	spin_unlock_bh(&w->lock);
	xiw_count_term(qp, true, m->inl[0], m->inl[1]);
	xiw_tx_untagged(m, RDMAP_TERMINATE, DDP_QN_TERMINATE, 1, 0);
	m->src = XIW_SRC_INLINE;
	m->fin = XIW_FIN_TERM;
	m->active = true;
	return 1;
}

/* The Write of a Write with Immediate is out: now its Immediate Data. */
void xiw_tx_immdt(struct xiw_qp *qp)
{
	struct xiw_txmsg *m = &qp->tx->msg;
	u32 idx = m->sq_idx, imm = m->imm;
	bool se = m->se;

	xiw_tx_msg_release(m);
	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	memset(m->inl, 0, RDMAP_IMMDT_LEN);
	memcpy(m->inl, &imm, sizeof(imm));
	xiw_tx_untagged(m, se ? RDMAP_IMMDT_SE : RDMAP_IMMDT, DDP_QN_SEND,
			qp->tx->msn[DDP_QN_SEND]++, 0);
	m->len = RDMAP_IMMDT_LEN;
	m->src = XIW_SRC_INLINE;
	m->fin = XIW_FIN_SQ;
	m->sq_idx = idx;
	m->active = true;
}

/* The current message went to TCP entirely. */
void xiw_tx_finish(struct xiw_qp *qp)
{
	struct xiw_txmsg *m = &qp->tx->msg;
	struct xiw_wire *w = &qp->wire;

	if (m->zc) {
		/*
		 * It completes when the skbs let go of its pages; the TCP
		 * sequence after it tells whether the peer had it all.
		 */
		m->zc->end_seq = READ_ONCE(tcp_sk(w->sock->sk)->write_seq);
		m->zc->sent = true;
	}
	switch (m->fin) {
	case XIW_FIN_SQ:
		if (!m->zc)
			xiw_sq_done(qp, m->sq_idx, IB_WC_SUCCESS);
		break;
	default:
		break;
	}
	xiw_tx_msg_release(m);
}

/*
 * Pick the next message: Terminate, RTR, Read Responses, then the SQ.
 * Returns as xiw_tx_next_sqe().
 */
int xiw_tx_next(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;

	/*
	 * The flags are set under w->lock, each followed by a kick; a look
	 * under the lock would see no more than this one, a moment later.
	 * xiw_tx_next_term() takes the Terminate itself under the lock.
	 */
	if (READ_ONCE(w->term_pending))
		return xiw_tx_next_term(qp);
	if (READ_ONCE(w->hold) || READ_ONCE(w->term_sent))
		return -EAGAIN;
	if (w->rtr_pending)
		return xiw_tx_next_rtr(qp);
	/*
	 * Most passes find the IRQ empty: look without the lock first (and
	 * before xiw_tx_next_response(), whose entry copy a kernel that
	 * zeroes locals would clear first). An entry added after this look
	 * kicks another pass.
	 */
	if (READ_ONCE(w->irq_head) != READ_ONCE(w->irq_tail) &&
	    xiw_tx_next_response(qp))
		return 1;
	return xiw_tx_next_sqe(qp);
}

/*
 * Queue a Terminate (RFC 5040 section 4.8) for the first error only
 * (TERM-05) and let tx send it; hdr is the terminated DDP segment's
 * header (without the MPA length), Read Request included if any.
 */
void xiw_tx_terminate(struct xiw_qp *qp, u8 layer_etype, u8 ecode,
		      const void *hdr, u32 hdr_len, u32 seg_len)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_tx *tx = qp->tx;
	u16 flags = 0;
	u8 *body;

	spin_lock_bh(&w->lock);
	if (w->term_pending || w->term_sent) {
		spin_unlock_bh(&w->lock);
		return;
	}
	/* What follows the untagged header of struct iwarp_terminate. */
	body = tx->term;
	memset(body, 0, sizeof(tx->term));
	body[0] = layer_etype;
	body[1] = ecode;
	if (hdr && hdr_len) {
		hdr_len = min_t(u32, hdr_len, sizeof(tx->term) - 6);
		flags |= TERM_FLAG_M | TERM_FLAG_D;
		if (hdr_len == sizeof(struct iwarp_read_req) - MPA_HDR_LEN)
			flags |= TERM_FLAG_R;
		put_unaligned_be16(seg_len, body + 4);
		memcpy(body + 6, hdr, hdr_len);
		tx->term_len = 6 + hdr_len;
	} else {
		tx->term_len = 4;
	}
	put_unaligned_be16(flags, body + 2);
	WRITE_ONCE(w->term_pending, true);
	spin_unlock_bh(&w->lock);
	xiw_tx_kick(qp);
}
