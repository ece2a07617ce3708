// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: the state machine behind modify_qp, the flushing of
 * work queues in the error state, and the binding of a QP to its
 * connection (RTS, the end of the wire, fatal errors).
 *
 * Verbs states and the iWARP QP states of RFC 5040 section 10.1:
 *   RESET, INIT, RTR  -> IDLE
 *   RTS               -> RTS (requires an established connection)
 *   SQD               -> CLOSING
 *   SQE               -> TERMINATE
 *   ERR               -> ERROR
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "xiw_fault.h"
#include "xiw_qp.h"

#define XIW_QP_ATTR_MASK (IB_QP_STATE | IB_QP_CUR_STATE | \
			  IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | \
			  IB_QP_PORT | IB_QP_MAX_QP_RD_ATOMIC | \
			  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_EN_SQD_ASYNC_NOTIFY)

#define XIW_QP_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/* The remote rights the iw_cm sets at INIT (iw_cm_init_qp_attr). */
#define XIW_IWCM_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ)

/*
 * Take every published entry off a work queue, completing each with a
 * flush error on cq (or silently with cq NULL, for a reset). Only wr_id
 * and the opcode are read from a slot, each once: an entry's other
 * fields do not matter to a flush. At most one lap of the ring per call,
 * so a process that keeps re-publishing slots cannot hold us here.
 * Caller holds the queue's lock.
 */
static void xiw_wq_drain(struct xiw_qp *qp, struct xiw_ring *ring,
			 struct xiw_cq *cq, bool sq)
{
	struct xiw_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
		.opcode = IB_WC_RECV,
	};

	u32 n;

	for (n = 0; n < ring->num; n++) {
		/* wr_id sits at the same offset in SQEs and RQEs. */
		struct xiw_rqe *slot = xiw_ring_slot(ring, ring->cons);
		struct xiw_sqe *sqe = (struct xiw_sqe *)slot;

		/* Acquire: pairs with the producer's release of the slot. */
		if (!(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID))
			break;
		cqe.wr_id = READ_ONCE(slot->wr_id);
		if (sq) {
			u8 op = READ_ONCE(sqe->opcode);

			cqe.opcode = xiw_sq_wc_opcode(op, qp->kernel);
		}
		/* Release: our reads are done before the slot is reused. */
		smp_store_release(&slot->flags, 0);
		ring->cons++;
		if (cq)
			xiw_cq_add(cq, &cqe);
	}
}

/*
 * Retire finished SQ entries in posting order: signaled ones (and every
 * failed one) become completions, and each slot goes back to the
 * producer. Must hold sq_lock.
 */
void xiw_sq_retire(struct xiw_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	while (qp->sq_comp != qp->sq.cons) {
		struct xiw_sq_pend *p = &qp->sq_pend[qp->sq_comp &
						     (qp->sq.num - 1)];
		struct xiw_sqe *slot = xiw_ring_slot(&qp->sq, qp->sq_comp);
		struct xiw_cqe cqe = {
			.opcode = p->opcode,
			.status = p->status,
			.wr_id = p->wr_id,
			.qp_num = qp->ibqp.qp_num,
			.byte_len = p->byte_len,
		};

		if (!p->done)
			break;
		/* Release: our copy was taken long ago; hand it back. */
		smp_store_release(&slot->flags, 0);
		qp->sq_comp++;
		if (p->signaled || p->status != IB_WC_SUCCESS)
			xiw_cq_add(qp->scq, &cqe);
	}
}

/*
 * Flush the SQ: entries already taken by the transmit path complete from
 * what was copied when they were taken; the rest straight from the ring.
 */
void xiw_sq_drain(struct xiw_qp *qp, bool complete)
{
	lockdep_assert_held(&qp->sq_lock);
	while (qp->sq_comp != qp->sq.cons) {
		struct xiw_sq_pend *p = &qp->sq_pend[qp->sq_comp &
						     (qp->sq.num - 1)];
		struct xiw_sqe *slot = xiw_ring_slot(&qp->sq, qp->sq_comp);
		struct xiw_cqe cqe = {
			.opcode = p->opcode,
			.status = p->done && p->status ? p->status :
				  IB_WC_WR_FLUSH_ERR,
			.wr_id = p->wr_id,
			.qp_num = qp->ibqp.qp_num,
		};

		/* Release: the slot goes back to the producer. */
		smp_store_release(&slot->flags, 0);
		qp->sq_comp++;
		if (complete)
			xiw_cq_add(qp->scq, &cqe);
	}
	xiw_wq_drain(qp, &qp->sq, complete ? qp->scq : NULL, true);
	qp->sq_comp = qp->sq.cons;
}

void xiw_rq_drain(struct xiw_qp *qp, bool complete)
{
	lockdep_assert_held(&qp->rq_lock);
	if (!qp->srq)
		xiw_wq_drain(qp, &qp->rq, complete ? qp->rcq : NULL, false);
}

void xiw_qp_event(struct xiw_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * ERR flushes both queues, RESET empties them without completions; but
 * while the wire holds them (qp->wq_held: from RTS until
 * xiw_qp_stop_wire) the transmit and receive paths may still be reading
 * an SQ entry's buffers or writing a receive's or a Read's sink, so the
 * flush waits for xiw_qp_stop_wire. A completion tells the consumer the
 * buffer is its own again (ib_drain_qp and then free, for a kernel
 * ULP): none may come while we still touch it. Must hold both queue
 * locks.
 */
static void xiw_qp_flush(struct xiw_qp *qp)
{
	bool complete = qp->state == IB_QPS_ERR;

	lockdep_assert_held(&qp->sq_lock);
	lockdep_assert_held(&qp->rq_lock);
	if (qp->wq_held ||
	    (qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET))
		return;
	xiw_sq_drain(qp, complete);
	xiw_rq_drain(qp, complete);
}

/*
 * A post in ERR is flushed at its doorbell, unless the wire still holds
 * the queues: xiw_qp_stop_wire's flush then takes it, in order. Must
 * hold the queue's lock.
 */
bool xiw_qp_flush_posts(const struct xiw_qp *qp)
{
	return qp->state == IB_QPS_ERR && !qp->wq_held;
}

/*
 * The wire takes the queues (RTS) or lets go of them, flushing what an
 * ERR or RESET left for it. Must hold state_lock.
 */
static void xiw_qp_hold_queues(struct xiw_qp *qp, bool hold)
{
	unsigned long irqflags;

	lockdep_assert_held(&qp->state_lock);
	spin_lock_irqsave(&qp->sq_lock, irqflags);
	spin_lock(&qp->rq_lock);
	qp->wq_held = hold;
	xiw_qp_flush(qp);
	spin_unlock(&qp->rq_lock);
	spin_unlock_irqrestore(&qp->sq_lock, irqflags);
}

/* Must hold state_lock. queue_close: see xiw_cm_qp_closing(). */
static void xiw_qp_change_state(struct xiw_qp *qp, enum ib_qp_state state,
				bool queue_close)
{
	unsigned long irqflags;

	lockdep_assert_held(&qp->state_lock);
	/* IRQ-safe like every sq_lock taker: kernel posts come from anywhere. */
	spin_lock_irqsave(&qp->sq_lock, irqflags);
	spin_lock(&qp->rq_lock);
	qp->state = state;
	WRITE_ONCE(qp->sq.ctrl->qp_state, state);
	if (qp->rq.mem)
		WRITE_ONCE(qp->rq.ctrl->qp_state, state);
	/*
	 * Full barrier: the state store must be visible before we look at
	 * the slots. The provider publishes a slot, fences, then rings, and
	 * the doorbell looks at the state without sq_lock; so either we
	 * see its slot, or the doorbell sees ERR (xiw_post_send()).
	 */
	smp_mb();
	/*
	 * Entering ERR flushes what is queued (later posts are flushed at
	 * their doorbell); RESET empties the queues without completions.
	 * Both once the wire lets go of them.
	 */
	xiw_qp_flush(qp);
	spin_unlock(&qp->rq_lock);
	spin_unlock_irqrestore(&qp->sq_lock, irqflags);
	/*
	 * The connection follows: ERR aborts it (RST), SQD closes it
	 * gracefully (FIN); the CM's work does it, or the verb that made the
	 * change (xiw_qp_closing_finish()), and reports CLOSE.
	 */
	if (qp->conn && (state == IB_QPS_ERR || state == IB_QPS_RESET))
		xiw_cm_qp_closing(qp->conn, true, queue_close);
	else if (qp->conn && state == IB_QPS_SQD)
		xiw_cm_qp_closing(qp->conn, false, queue_close);
	/*
	 * A QP on an SRQ takes no more receives once in ERR: tell the
	 * consumer it may now destroy it without losing SRQ entries.
	 */
	if (state == IB_QPS_ERR && qp->srq)
		xiw_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* Must hold state_lock. */
void xiw_qp_set_state(struct xiw_qp *qp, enum ib_qp_state state)
{
	xiw_qp_change_state(qp, state, true);
}

/*
 * As xiw_qp_set_state(), for modify_qp and destroy_qp under state_lock,
 * which close the conn themselves: the close is only marked, and the
 * conn returned, referenced, for xiw_qp_closing_finish() once state_lock
 * is dropped; NULL if there is none. A QP with a conn is in RTS, SQD or
 * (after a data-path error, until the CM ends the conn) ERR, so every
 * change the verbs make to it is to ERR, RESET or SQD, each of which
 * asks the conn to close.
 */
struct xiw_conn *xiw_qp_verb_set_state(struct xiw_qp *qp,
				       enum ib_qp_state state)
{
	struct xiw_conn *conn = qp->conn;

	lockdep_assert_held(&qp->state_lock);
	if (conn)
		xiw_cm_conn_get(conn);
	xiw_qp_change_state(qp, state, false);
	return conn;
}

/*
 * In a verb's own context, which may sleep; takes the conn's lock. Not
 * from a work item, nor while a transmit pass runs: a kernel consumer's
 * QP event handler (raised by a pass, under pass_lock) or completion
 * handler that calls a verb would wait here for its own pass or work
 * (xiw_qp_stop_wire()). The CM's work, queued, does it then.
 */
void xiw_qp_closing_finish(struct xiw_qp *qp, struct xiw_conn *conn)
{
	if (!conn)
		return;
	if (!current_work() && !xiw_tx_busy(qp))
		xiw_cm_qp_closing_now(conn);
	else
		xiw_cm_qp_closing_kick(conn);
	xiw_cm_conn_put(conn);
}

/* The transitions modify_qp accepts, from the verbs state diagram. */
static bool xiw_transition_ok(enum ib_qp_state cur, enum ib_qp_state new)
{
	if (new == IB_QPS_RESET || new == IB_QPS_ERR)
		return true;
	switch (cur) {
	case IB_QPS_RESET:
		return new == IB_QPS_INIT;
	case IB_QPS_INIT:
		return new == IB_QPS_INIT || new == IB_QPS_RTR;
	case IB_QPS_RTS:
		return new == IB_QPS_RTS || new == IB_QPS_SQD;
	case IB_QPS_SQD:
		return new == IB_QPS_SQD;
	default:
		return false;
	}
	/*
	 * No path leads to RTS here: an iWARP QP enters RTS when its TCP
	 * connection and MPA negotiation complete, through the connection
	 * manager, never by a bare modify_qp.
	 */
}

int xiw_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	struct xiw_conn *conn = NULL;
	enum ib_qp_state cur, new;
	int rv = -EINVAL;

	if (mask & ~XIW_QP_ATTR_MASK)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~XIW_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > qp->xdev->max_ord)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > qp->xdev->max_ird)
		return -EINVAL;

	mutex_lock(&qp->state_lock);
	cur = qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out;
	/*
	 * rdma_disconnect asks for SQD even when the connection has already
	 * failed: nothing to do then.
	 */
	if ((mask & IB_QP_STATE) && cur == IB_QPS_ERR && new == IB_QPS_SQD) {
		rv = 0;
		goto out;
	}
	/* Without IB_QP_STATE only attributes change (rdma_cm does this). */
	if ((mask & IB_QP_STATE) &&
	    (new > IB_QPS_ERR || !xiw_transition_ok(cur, new))) {
		ibdev_dbg(ibqp->device, "qp %u: %d -> %d refused\n",
			  ibqp->qp_num, cur, new);
		goto out;
	}

	if (mask & IB_QP_ACCESS_FLAGS) {
		WRITE_ONCE(qp->access, attr->qp_access_flags);
		/*
		 * No rights on the way into INIT is what rdma_cm sets when it
		 * knows none yet (an active side before its iw_cm id exists),
		 * remote read and write on the way into INIT or RTR what the
		 * iw_cm sets (a passive side, both steps): the connection then
		 * brings the CM's rights, see xiw_qp_conn_established(). Any
		 * other setting is the consumer's own and is kept as it is.
		 */
		qp->access_set = !((mask & IB_QP_STATE) &&
				   ((attr->qp_access_flags == 0 &&
				     new == IB_QPS_INIT) ||
				    (attr->qp_access_flags == XIW_IWCM_ACCESS &&
				     (new == IB_QPS_INIT ||
				      new == IB_QPS_RTR))));
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->ord = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->ird = attr->max_dest_rd_atomic;
	if (new != cur || new == IB_QPS_ERR)
		conn = xiw_qp_verb_set_state(qp, new);
	rv = 0;
out:
	mutex_unlock(&qp->state_lock);
	xiw_qp_closing_finish(qp, conn);
	return rv;
}

/*
 * From the CM, with MPA done: attach the connection and enter RTS. The
 * iWARP idle state covers RESET, INIT and RTR: a QP is created in INIT
 * and rdma_cm's INIT modify of an accepted user connection carries no
 * state for an iWARP cm_id, but a consumer may have reset it since, so
 * RESET is accepted too, with the access rights the iw_cm hands out at
 * INIT.
 */
int xiw_qp_conn_established(struct xiw_qp *qp, struct xiw_conn *conn,
			    struct socket *sock,
			    const struct xiw_mpa_params *mpa)
{
	struct xiw_wire *w = &qp->wire;
	u32 norq = roundup_pow_of_two(clamp_t(u32, mpa->ord, 1, XIW_MAX_ORD));
	u32 nirq = roundup_pow_of_two(clamp_t(u32, mpa->ird, 1, XIW_MAX_IRD));
	struct xiw_orq_entry *orq = NULL;
	struct xiw_irq_entry *irq = NULL;
	struct xiw_tx_arrays txa;
	int rv = 0;

	if (!xiw_fault(XIW_FAULT_WIRE_RINGS)) {
		orq = kcalloc(norq, sizeof(*orq), GFP_KERNEL);
		irq = kcalloc(nirq, sizeof(*irq), GFP_KERNEL);
	}
	rv = xiw_tx_arrays_alloc(qp, mpa->mrk_tx, &txa);
	mutex_lock(&qp->state_lock);
	if (!orq || !irq || rv) {
		rv = -ENOMEM;
		goto out;
	}
	if ((qp->state != IB_QPS_RESET && qp->state != IB_QPS_INIT &&
	     qp->state != IB_QPS_RTR) || qp->conn) {
		rv = -EINVAL;
		goto out;
	}
	/*
	 * rdma_cm sets no remote rights on a QP it moves to INIT before its
	 * iw_cm id exists (every active side), and never again for iWARP;
	 * the iw_cm's own INIT rights are remote read and write, where the
	 * IB CM grants remote atomics along with reads (no iWARP device had
	 * atomics). A QP whose rights only a CM chose gets read, write and,
	 * as over IB, atomics: the MR's rights still decide what a peer may
	 * touch. Rights a consumer set stay as set.
	 */
	if (!qp->access_set)
		WRITE_ONCE(qp->access, XIW_IWCM_ACCESS |
				       IB_ACCESS_REMOTE_ATOMIC);
	spin_lock_bh(&w->lock);
	w->sock = sock;
	w->mpa = *mpa;
	w->hold = mpa->responder;
	w->rtr_pending = !mpa->responder && mpa->rtr;
	w->orq_head = 0;
	w->orq_tail = 0;
	w->irq_head = 0;
	w->irq_tail = 0;
	/* A QP connects once: no older rings, unless a start-up failed. */
	swap(w->orq, orq);
	swap(w->irq, irq);
	w->orq_mask = norq - 1;
	w->irq_mask = nirq - 1;
	w->term_pending = false;
	w->term_sent = false;
	spin_unlock_bh(&w->lock);
	qp->ird = mpa->ird;
	qp->ord = mpa->ord;
	xiw_diag_conn(qp, sock);
	xiw_cm_conn_get(conn);
	qp->conn = conn;
	xiw_tx_arrays_use(qp, &txa);
	xiw_rx_start(qp);
	xiw_tx_start(qp);
	WRITE_ONCE(qp->err_ev, XIW_NO_EVENT);
	xiw_qp_hold_queues(qp, true);
	xiw_qp_set_state(qp, IB_QPS_RTS);
	xiw_tx_kick_queued(qp);
out:
	mutex_unlock(&qp->state_lock);
	xiw_tx_arrays_free(&txa);
	kfree(orq);
	kfree(irq);
	return rv;
}

/*
 * From the CM, with the socket callbacks gone: stop both directions (with
 * drain, after taking in what the peer sent before its FIN) and forget
 * outstanding inbound Reads.
 */
void xiw_qp_stop_wire(struct xiw_qp *qp, bool drain)
{
	struct xiw_wire *w = &qp->wire;

	xiw_rx_stop(qp, drain);
	xiw_tx_stop(qp);
	spin_lock_bh(&w->lock);
	while (w->irq_head != w->irq_tail) {
		struct xiw_irq_entry *e = &w->irq[w->irq_head++ & w->irq_mask];

		if (e->mr)
			xiw_mr_put(e->mr);
		e->mr = NULL;
	}
	w->orq_head = w->orq_tail;
	spin_unlock_bh(&w->lock);
	/* Nothing reads or writes a work request's buffers any more. */
	mutex_lock(&qp->state_lock);
	xiw_qp_hold_queues(qp, false);
	mutex_unlock(&qp->state_lock);
}

/*
 * From the CM: the connection is gone; the QP ends in ERR. If the data
 * path found an error first and its err_work has not run yet (the peer's
 * reset after its Terminate can overtake it), the event it deferred is
 * raised here: err_work will find the QP in ERR already.
 */
void xiw_qp_conn_lost(struct xiw_qp *qp, struct xiw_conn *conn)
{
	int ev = XIW_NO_EVENT;

	mutex_lock(&qp->state_lock);
	if (qp->conn == conn) {
		qp->conn = NULL;
		qp->wire.sock = NULL;
		xiw_cm_conn_put(conn);
		if (qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET &&
		    qp->state != IB_QPS_INIT && qp->state != IB_QPS_RTR) {
			xiw_qp_set_state(qp, IB_QPS_ERR);
			ev = READ_ONCE(qp->err_ev);
		}
	}
	mutex_unlock(&qp->state_lock);
	if (ev != XIW_NO_EVENT)
		xiw_qp_event(qp, ev);
}

/* From the data path: a fatal error; flush and tear the connection down. */
void xiw_qp_error(struct xiw_qp *qp, enum ib_event_type ev)
{
	bool raise = false;
	int first;

	mutex_lock(&qp->state_lock);
	/*
	 * An error the receive path found first, still on its way through
	 * err_work, names the event: say a Terminate reporting a protection
	 * error arrived and the reset that followed it then failed a send.
	 */
	first = READ_ONCE(qp->err_ev);
	if (first != XIW_NO_EVENT)
		ev = first;
	ibdev_dbg(qp->ibqp.device, "qp %u: error in state %d\n",
		  qp->ibqp.qp_num, qp->state);
	if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) {
		xiw_qp_set_state(qp, IB_QPS_ERR);
		raise = true;
	}
	mutex_unlock(&qp->state_lock);
	if (raise)
		xiw_qp_event(qp, ev);
}

void xiw_qp_err_work(struct work_struct *work)
{
	struct xiw_qp *qp = container_of(work, struct xiw_qp, err_work);

	xiw_qp_error(qp, IB_EVENT_QP_FATAL);	/* err_ev names the event */
	clear_bit(0, &qp->err_pending);
	xiw_qp_put(qp);		/* the queued work's reference */
}

/*
 * xiw_qp_error() for the receive path, which runs in softirq or inside
 * another thread's release_sock(): entering ERR takes the state mutex and
 * the teardown it starts waits for the data path, so it is done from a
 * work item. The first error's event is the one raised; the work holds a
 * QP reference, so destroy_qp waits for it.
 */
void xiw_qp_error_defer(struct xiw_qp *qp, enum ib_event_type ev)
{
	/* Only the first error since RTS names the event. */
	cmpxchg(&qp->err_ev, XIW_NO_EVENT, (int)ev);
	if (test_and_set_bit(0, &qp->err_pending))
		return;
	xiw_qp_get(qp);
	if (!queue_work(xiw_data_wq, &qp->err_work))
		xiw_qp_put(qp);
}
