// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Transmit: the SQ, Read Responses and the Terminate, turned into FPDUs
 * (RFC 5044 section 4) on the QP's TCP socket. This file holds the
 * transmit state and its passes: the work item, the doorbell, start
 * and stop. The messages are made in xiw_tx_msg.c, cut into FPDUs in
 * xiw_tx_frame.c, sent zero-copy by xiw_zc.c; xiw_tx.h is what these
 * files share.
 *
 * One work item per QP, so QPs never wait for each other: on
 * xiw_data_wq for the CPU that asks, or, for a poster's work it goes on
 * with, on xiw_tx_wq when that CPU has such work waiting already
 * (xiw_tx_continue()). It takes one message at a time and cuts it into
 * FPDUs no larger than the MULPDU of the current MSS (MPA-23), so each
 * FPDU fits a TCP segment (MPA-24 alignment), yet hands TCP a batch of
 * them in one sendmsg() so segmentation offload still builds large
 * packets. A full socket ends the run; write_space kicks it again.
 *
 * TCP copies the payload; the CRC is a pass over it just before. Large
 * messages from user memory regions may go zero-copy instead
 * (xiw_zc.c): the CRC pass is then the only time the CPU touches the
 * payload.
 *
 * SQ slots stay owned by the kernel from consumption to completion, so
 * completions retire in posting order (ORD-03) even though a Read ends
 * only when its Response arrives (xiw_rx_place.c).
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "xiw_fault.h"
#include "xiw_tx.h"

/*
 * A post sends in its own system call only while that is short: one
 * large message, or a loop of posts, sending from the poster's context
 * keeps the application from polling its CQ and reposting receives
 * while its peer's Sends use them up (iWARP has no RNR retry: a Send
 * that finds no receive ends the connection).
 */
static uint tx_post_bytes = 16384;
module_param(tx_post_bytes, uint, 0644);
MODULE_PARM_DESC(tx_post_bytes,
		 "Payload a user post sends in its own system call before the transmit worker takes over, in bytes (default 16384)");

/*
 * A QP that has taken no receive WQE for a second has none for its
 * application to repost: its posts may send more in their own system
 * calls, up to this much, rather than hand a long message to the worker,
 * which would share the poster's CPU with the poster's own polling. The
 * first receive taken ends that (xiw_tx_take_bytes). Not while other
 * QPs of its PD ring too (xiw_tx_may_post_long).
 */
static uint tx_post_bytes_idle = 262144;
module_param(tx_post_bytes_idle, uint, 0644);
MODULE_PARM_DESC(tx_post_bytes_idle,
		 "Payload a user post sends in its own system call while its QP has taken no receive WQE, and no other QP of its PD has posted, for a second, in bytes (default 262144; tx_post_bytes if that is more)");

/*
 * Batch arrays not in use, for the next pass of any QP. A set is held
 * only while a batch is built and handed to TCP, so a few serve every
 * QP. Each CPU keeps one in hand, taken and given back without a lock:
 * a pass on another CPU, such as the peer's reply in the same machine
 * arriving before this pass has given its set back, does not wait for
 * ours. Behind them a list under a lock keeps up to one more per
 * possible CPU; a burst of passes beyond that (many batches held back
 * by full sockets) takes new sets and frees them on return.
 */
static DEFINE_PER_CPU(struct xiw_tx_set *, xiw_tx_set_hand);
static DEFINE_SPINLOCK(xiw_tx_sets_lock);
static LIST_HEAD(xiw_tx_sets);
static unsigned int xiw_tx_sets_cached;

/* Borrow a set for the next batch, unless one is held. */
static bool xiw_tx_set_get(struct xiw_tx *tx)
{
	struct xiw_tx_set *set;

	if (tx->set)
		return true;
	/* Consulted for every set, cached or not: as if none could be had. */
	if (xiw_fault(XIW_FAULT_TX_SET))
		return false;
	set = this_cpu_xchg(xiw_tx_set_hand, NULL);
	if (!set) {
		spin_lock(&xiw_tx_sets_lock);
		set = list_first_entry_or_null(&xiw_tx_sets,
					       struct xiw_tx_set, node);
		if (set) {
			list_del(&set->node);
			xiw_tx_sets_cached--;
		}
		spin_unlock(&xiw_tx_sets_lock);
	}
	if (!set)
		set = kzalloc(sizeof(*set), GFP_KERNEL | __GFP_NOWARN);
	if (!set)
		return false;
	tx->set = set;
	tx->room = set->room;
	tx->piece = set->piece;
	tx->bv = tx->mbv ?: set->bv;
	tx->pinned = tx->mpinned ?: set->pinned;
	return true;
}

/* Give the set back: nothing of the last batch is left to hand over. */
static __always_inline void xiw_tx_set_put(struct xiw_tx *tx)
{
	struct xiw_tx_set *set = tx->set;

	if (!set)
		return;
	xiw_tx_unpin(tx);
	tx->set = NULL;
	tx->room = NULL;
	tx->piece = NULL;
	tx->bv = NULL;
	tx->pinned = NULL;
	/* Into this CPU's hand; what it held goes to the list. */
	set = this_cpu_xchg(xiw_tx_set_hand, set);
	if (!set)
		return;
	spin_lock(&xiw_tx_sets_lock);
	if (xiw_tx_sets_cached < num_possible_cpus()) {
		list_add(&set->node, &xiw_tx_sets);
		xiw_tx_sets_cached++;
		set = NULL;
	}
	spin_unlock(&xiw_tx_sets_lock);
	kfree(set);
}

/* Module exit: every QP is gone, and so every set is in the cache. */
void xiw_tx_sets_free(void)
{
	struct xiw_tx_set *set, *next;
	int cpu;

	for_each_possible_cpu(cpu) {
		kfree(per_cpu(xiw_tx_set_hand, cpu));
		per_cpu(xiw_tx_set_hand, cpu) = NULL;
	}
	list_for_each_entry_safe(set, next, &xiw_tx_sets, node)
		kfree(set);
	INIT_LIST_HEAD(&xiw_tx_sets);
	xiw_tx_sets_cached = 0;
}

/*
 * Continuations queued on each CPU's bound worker pool and not started
 * yet: see xiw_tx_continue().
 */
static DEFINE_PER_CPU(atomic_t, xiw_tx_waiting);

/* The queued continuation has started, or will not run: uncount it. */
static void xiw_tx_uncount(struct xiw_tx *tx)
{
	int cpu = xchg(&tx->cont_cpu, -1);

	if (cpu >= 0)
		atomic_dec(per_cpu_ptr(&xiw_tx_waiting, cpu));
}

static void xiw_tx_work(struct work_struct *work);

int xiw_tx_create(struct xiw_qp *qp)
{
	struct xiw_tx *tx;

	tx = xiw_fault(XIW_FAULT_TX) ? NULL : kzalloc(sizeof(*tx), GFP_KERNEL);
	if (!tx)
		return -ENOMEM;
	/* Sized for a connection without markers, by far the usual one. */
	tx->cap = XIW_TX_BVECS;
	tx->qp = qp;
	tx->cont_cpu = -1;
	mutex_init(&tx->pass_lock);
	INIT_WORK(&tx->work, xiw_tx_work);
	qp->tx = tx;
	return 0;
}

void xiw_tx_destroy(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (!tx)
		return;
	/*
	 * Nothing posts any more (user doorbells are over, a kernel consumer
	 * has stopped posting); no queued work may run on freed memory.
	 */
	cancel_work_sync(&tx->work);
	xiw_tx_uncount(tx);
	xiw_tx_msg_release(&tx->msg);
	xiw_tx_zc_detach(tx);
	xiw_tx_set_put(tx);
	if (tx->zpage)
		put_page(tx->zpage);
	if (tx->own_page)
		put_page(tx->own_page);
	kfree(tx->mpinned);
	kfree(tx->mrk);
	kfree(tx->mbv);
	kfree(tx);
	qp->tx = NULL;
}

/*
 * A connection with markers needs room for them in every batch (see
 * XIW_TX_BVECS_MRK): allocated before the QP's state lock is taken, and
 * swapped in by xiw_tx_arrays_use() only once the QP is known to be
 * idle, no pass running.
 */
int xiw_tx_arrays_alloc(struct xiw_qp *qp, bool markers,
			struct xiw_tx_arrays *a)
{
	memset(a, 0, sizeof(*a));
	if (!markers || qp->tx->cap >= XIW_TX_BVECS_MRK)
		return 0;
	if (xiw_fault(XIW_FAULT_TX_MARKERS))
		return -ENOMEM;
	a->bv = kcalloc(XIW_TX_BVECS_MRK, sizeof(*a->bv), GFP_KERNEL);
	a->pinned = kcalloc(XIW_TX_BVECS_MRK, sizeof(*a->pinned), GFP_KERNEL);
	a->mrk = kcalloc(XIW_TX_MARKERS, sizeof(*a->mrk), GFP_KERNEL);
	if (a->bv && a->pinned && a->mrk)
		return 0;
	xiw_tx_arrays_free(a);
	return -ENOMEM;
}

/* Under the state lock, tx not started: nothing refers to the arrays. */
void xiw_tx_arrays_use(struct xiw_qp *qp, struct xiw_tx_arrays *a)
{
	struct xiw_tx *tx = qp->tx;

	/* A started tx keeps its arrays; a marker batch then fails. */
	if (!a->bv || READ_ONCE(tx->started))
		return;
	xiw_tx_set_put(tx);
	swap(tx->mbv, a->bv);
	swap(tx->mpinned, a->pinned);
	swap(tx->mrk, a->mrk);
	tx->cap = XIW_TX_BVECS_MRK;
}

void xiw_tx_arrays_free(struct xiw_tx_arrays *a)
{
	kfree(a->mrk);
	kfree(a->pinned);
	kfree(a->bv);
	memset(a, 0, sizeof(*a));
}

void xiw_tx_kick(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (tx && READ_ONCE(tx->started))
		queue_work(xiw_data_wq, &tx->work);
}

/*
 * Go on with the poster's work in the worker: the rest of a message
 * larger than a doorbell sends, what a pass's budget left, what a full
 * socket held back. On this CPU while no other QP's continuation waits
 * for it: a lone stream then stays on one CPU, its transmit and (in one
 * machine) its receive with it. Once one waits, on the unbound pool, so
 * the streams of one poster spread over the CPUs instead of queueing
 * behind each other on the poster's.
 */
void xiw_tx_continue(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;
	int cpu, none = -1;

	if (!tx || !READ_ONCE(tx->started))
		return;
	cpu = get_cpu();
	if (!atomic_read(this_cpu_ptr(&xiw_tx_waiting)) &&
	    try_cmpxchg(&tx->cont_cpu, &none, cpu)) {
		atomic_inc(this_cpu_ptr(&xiw_tx_waiting));
		/* Pending already (a kick from the receive path): uncount. */
		if (!queue_work_on(cpu, xiw_data_wq, &tx->work) &&
		    cmpxchg(&tx->cont_cpu, cpu, -1) == cpu)
			atomic_dec(this_cpu_ptr(&xiw_tx_waiting));
		put_cpu();
		return;
	}
	put_cpu();
	queue_work(xiw_tx_wq, &tx->work);
}

/*
 * Mark SQ entry idx finished; retire what can be. Takes sq_lock, IRQ-safe
 * as every taker must: kernel consumers post from any context.
 */
void xiw_sq_done(struct xiw_qp *qp, u32 idx, u8 status)
{
	struct xiw_sq_pend *p;
	unsigned long irqflags;

	spin_lock_irqsave(&qp->sq_lock, irqflags);
	/* A flush may have retired it already (QP in ERR). */
	if (idx - qp->sq_comp < qp->sq.cons - qp->sq_comp) {
		p = &qp->sq_pend[idx & (qp->sq.num - 1)];
		p->done = true;
		p->status = status;
		xiw_sq_retire(qp);
	}
	spin_unlock_irqrestore(&qp->sq_lock, irqflags);
}

/*
 * Is more work queued? For the doorbell race: any entry published. For
 * MSG_MORE (@now): only work this pass can send next. An entry held back
 * by the ORD or a fence waits for a Response that cannot come before the
 * peer has our request, and TCP holds a short segment sent with MSG_MORE
 * until its probe timer fires (200 ms at least), so a Read posted behind
 * a full ORD would wait that long for the one before it to go out. The
 * slot is read without a copy: a hint, checked again when it is taken.
 */
static inline bool xiw_tx_more(struct xiw_qp *qp, bool now)
{
	struct xiw_wire *w = &qp->wire;
	u32 cons = READ_ONCE(qp->sq.cons);
	struct xiw_sqe *slot = xiw_ring_slot(&qp->sq, cons);
	u32 owed = READ_ONCE(w->irq_tail) - READ_ONCE(w->irq_head);
	u32 flags;

	/* The Response being sent stays in the IRQ until its last batch. */
	if (qp->tx->msg.active && qp->tx->msg.fin == XIW_FIN_IRQ)
		owed--;
	if (owed)
		return true;
	/* A full ring's next slot is an entry in flight, not a new one. */
	if (cons - READ_ONCE(qp->sq_comp) >= qp->sq.num)
		return false;
	flags = READ_ONCE(slot->flags);
	if (!(flags & XIW_SLOT_VALID))
		return false;
	return !now || xiw_tx_may_start(qp, flags, READ_ONCE(slot->opcode));
}

static void xiw_tx_set_busy(struct xiw_qp *qp, u32 busy)
{
	if (qp->sq.mmap) {
		WRITE_ONCE(qp->sq.ctrl->sq_busy, busy);
		/*
		 * Full barrier: the provider publishes a slot, fences, then
		 * reads sq_busy; we clear sq_busy, fence, then look at the
		 * slot. One of us sees the other.
		 */
		smp_mb();
	}
}

/*
 * The batch just built ends a Read Response: its Read leaves the IRQ now,
 * before the last FPDU reaches TCP. Over a fast path TCP can deliver it,
 * and the requester can complete its Read and send the next one, before
 * our push returns; with IRD 1 that next Read must find the IRQ free.
 */
static void xiw_tx_irq_retire(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;

	spin_lock_bh(&w->lock);
	w->irq_head++;
	spin_unlock_bh(&w->lock);
	qp->tx->msg.fin = XIW_FIN_NONE;
}

/*
 * May this pass go on with the current message? If its payload is more
 * than is left of @bytes, the worker takes it over, and sq_busy stays
 * set until the worker's pass clears it: the provider's next posts need
 * no system call.
 */
static inline bool xiw_tx_take_bytes(struct xiw_qp *qp, u32 *bytes)
{
	struct xiw_tx *tx = qp->tx;

	/* A receive taken since a long pass began: the short allowance. */
	if (tx->long_pass && READ_ONCE(tx->recv_at) != tx->pass_recv_at) {
		tx->long_pass = false;
		*bytes = min(*bytes, READ_ONCE(tx_post_bytes));
	}
	if (tx->msg.len > *bytes) {
		xiw_tx_continue(qp);
		return false;
	}
	*bytes -= qp->tx->msg.len;
	return true;
}

/*
 * One pass over the work queued. Must hold pass_lock. A pass starts new
 * messages while their payload fits in @bytes; the first that does not
 * stays taken and the transmit worker goes on with it.
 */
static void xiw_tx_pass_run(struct xiw_qp *qp, u32 bytes)
{
	struct xiw_tx *tx = qp->tx;
	int budget = XIW_TX_BUDGET, rv;

	lockdep_assert_held(&tx->pass_lock);

	xiw_tx_set_busy(qp, 1);
	if (tx->msg.active && !xiw_tx_take_bytes(qp, &bytes))
		return;
	for (;;) {
		if (!tx->busy) {
			if (!tx->msg.active) {
				if (!budget--) {
					xiw_tx_continue(qp);
					break;
				}
				rv = xiw_tx_next(qp);
				if (rv == -EAGAIN)
					break;
				if (!rv) {
					xiw_tx_set_busy(qp, 0);
					/* A slot published as we cleared it? */
					if (!xiw_tx_more(qp, false))
						return;
					xiw_tx_set_busy(qp, 1);
					continue;
				}
				if (!xiw_tx_take_bytes(qp, &bytes))
					return;
			}
			rv = xiw_tx_set_get(tx) ? xiw_tx_build(qp) : -ENOMEM;
			if (rv) {
				/*
				 * A range we could not describe, or no
				 * memory to build in: a local error.
				 */
				if (tx->msg.fin == XIW_FIN_SQ ||
				    tx->msg.fin == XIW_FIN_IMMDT)
					xiw_sq_done(qp, tx->msg.sq_idx,
						    rv == -ENOMEM ?
						    IB_WC_LOC_QP_OP_ERR :
						    IB_WC_LOC_PROT_ERR);
				xiw_tx_msg_release(&tx->msg);
				xiw_qp_error(qp, IB_EVENT_QP_FATAL);
				break;
			}
			if (tx->batch_ends_msg && tx->msg.fin == XIW_FIN_IRQ)
				xiw_tx_irq_retire(qp);
		}
		rv = xiw_tx_push(qp, xiw_tx_more(qp, true));
		if (rv == -EAGAIN)
			break;		/* write_space kicks us */
		if (rv) {
			if (qp->conn)
				xiw_qp_error(qp, IB_EVENT_QP_FATAL);
			break;
		}
		if (tx->batch_ends_msg && tx->msg.fin == XIW_FIN_IMMDT) {
			xiw_tx_immdt(qp);
		} else if (tx->batch_ends_msg) {
			bool term = tx->msg.fin == XIW_FIN_TERM;

			xiw_tx_finish(qp);
			if (term) {
				u8 le = tx->term[0];
				/*
				 * V-07: a remote protection error found here
				 * is the responder's access error.
				 */
				bool prot = le == TERM_RDMAP_PROT ||
					    le == TERM_DDP_TAGGED;

				/* TERM-05: let it reach the peer, then close. */
				kernel_sock_shutdown(qp->wire.sock, SHUT_WR);
				xiw_qp_error(qp, prot ? IB_EVENT_QP_ACCESS_ERR :
						 IB_EVENT_QP_FATAL);
				break;
			}
		}
	}
	xiw_tx_set_busy(qp, 0);
}

static void xiw_tx_pass(struct xiw_qp *qp, u32 bytes)
{
	xiw_tx_pass_run(qp, bytes);
	/* A batch TCP could not take all of keeps its set for the next. */
	if (!qp->tx->busy)
		xiw_tx_set_put(qp->tx);
}

/* A pass once the running one, if any, has ended. */
static void xiw_tx_pass_wait(struct xiw_qp *qp, u32 bytes)
{
	struct xiw_tx *tx = qp->tx;

	mutex_lock(&tx->pass_lock);
	if (READ_ONCE(tx->started))
		xiw_tx_pass(qp, bytes);
	mutex_unlock(&tx->pass_lock);
}

static void xiw_tx_work(struct work_struct *work)
{
	struct xiw_tx *tx = container_of(work, struct xiw_tx, work);

	xiw_tx_uncount(tx);
	xiw_tx_pass_wait(tx->qp, U32_MAX);
}

/*
 * Whether a doorbell's pass gets the long allowance (tx_post_bytes_idle):
 * its QP has taken no receive WQE for a second, and no other QP of its PD
 * has rung in that time. A poster driving several QPs gains more from
 * their workers sending on other CPUs than from sending each message in
 * its own system calls, one QP after another (performance.rst,
 * twenty-first run).
 */
static bool xiw_tx_may_post_long(struct xiw_qp *qp, unsigned long now,
				 unsigned long recv_at)
{
	struct xiw_pd *pd = container_of(qp->ibqp.pd, struct xiw_pd, ibpd);
	u32 qpn = qp->ibqp.qp_num, last = READ_ONCE(pd->db_qpn);

	if (last != qpn) {
		WRITE_ONCE(pd->db_qpn, qpn);
		if (last)
			WRITE_ONCE(pd->db_multi_at, now);
	}
	return !time_before(now, READ_ONCE(pd->db_multi_at) + HZ) &&
	       !time_before(now, recv_at + HZ);
}

/*
 * A user doorbell (a system call in the poster's context): send right
 * here rather than wake the work, unless a pass is running already, in
 * which case it sees the new entries or is kicked again.
 */
void xiw_tx_doorbell(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (!READ_ONCE(tx->started))
		return;
	if (!mutex_trylock(&tx->pass_lock)) {
		xiw_tx_kick(qp);
		return;
	}
	if (READ_ONCE(tx->started)) {
		unsigned long at = READ_ONCE(tx->recv_at);
		u32 bytes = READ_ONCE(tx_post_bytes);
		u32 idle = READ_ONCE(tx_post_bytes_idle);

		if (idle > bytes && xiw_tx_may_post_long(qp, jiffies, at)) {
			bytes = idle;
			tx->long_pass = true;
			tx->pass_recv_at = at;
		}
		xiw_tx_pass(qp, bytes);
		tx->long_pass = false;
	}
	mutex_unlock(&tx->pass_lock);
}

/* The connection reached RTS: start from a clean state. */
void xiw_tx_start(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;
	int i;

	xiw_tx_msg_release(&tx->msg);
	tx->busy = false;
	xiw_tx_set_put(tx);
	tx->spos = 0;		/* MPA-13: full operation starts here */
	tx->recv_at = jiffies - HZ;	/* no receive taken yet */
	for (i = 0; i < DDP_NUM_QN; i++)
		tx->msn[i] = 1;		/* DDP-03 */
	xiw_tx_zc_detach(tx);
	tx->zc_ctx = xiw_fault(XIW_FAULT_ZC_CTX) ? NULL :
		kzalloc(sizeof(*tx->zc_ctx), GFP_KERNEL);
	if (tx->zc_ctx) {		/* else this connection copies */
		refcount_set(&tx->zc_ctx->ref, 1);
		spin_lock_init(&tx->zc_ctx->lock);
		tx->zc_ctx->qp = qp;
	}
	WRITE_ONCE(tx->started, true);
}

/*
 * Send what is queued before a FIN: a pass right here, in the caller's
 * context, as a doorbell runs one, then wait for the worker if that pass
 * left it a large message or the worker was running already. Cheaper at
 * a disconnect than waking the worker only to wait for it.
 */
void xiw_tx_flush(struct xiw_qp *qp)
{
	xiw_tx_pass_wait(qp, READ_ONCE(tx_post_bytes));
	flush_work(&qp->tx->work);
}

/*
 * The QP has just entered RTS: wake the worker only if it has something
 * to send, the initiator's RTR message or entries posted before.
 * rtr_pending belongs to the pass (pass_lock); a doorbell's pass may
 * already have sent the message and cleared it, which only makes this
 * kick spare. xiw_qp_set_state()'s full barrier orders tx->started and
 * the state before our look at the ring; a provider publishes its slot,
 * fences, then rings. So a doorbell that came too early for a pass has
 * its slot seen here, and a later one finds the QP started.
 */
void xiw_tx_kick_queued(struct xiw_qp *qp)
{
	if (READ_ONCE(qp->wire.rtr_pending) || xiw_tx_more(qp, false))
		xiw_tx_kick(qp);
}

/* A transmit pass runs, in this context or another. */
bool xiw_tx_busy(struct xiw_qp *qp)
{
	return mutex_is_locked(&qp->tx->pass_lock);
}

/* No socket callback can kick us any more; wait out a running pass. */
void xiw_tx_stop(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (!tx->started)
		return;
	WRITE_ONCE(tx->started, false);
	cancel_work_sync(&tx->work);
	/* Wait out a pass a doorbell may be running. */
	mutex_lock(&tx->pass_lock);
	mutex_unlock(&tx->pass_lock);
	/*
	 * That pass, or a doorbell that saw the QP started just before we
	 * cleared it, may have queued the work again after the cancel.
	 * Such work would find nothing to do, but it must not outlive us.
	 */
	cancel_work_sync(&tx->work);
	xiw_tx_uncount(tx);
	if (tx->msg.active && (tx->msg.fin == XIW_FIN_SQ ||
			       tx->msg.fin == XIW_FIN_IMMDT))
		xiw_sq_done(qp, tx->msg.sq_idx, IB_WC_WR_FLUSH_ERR);
	xiw_tx_msg_release(&tx->msg);
	/* Zero-copy entries still waiting for their pages are flushed. */
	xiw_tx_zc_detach(tx);
	tx->busy = false;
	xiw_tx_set_put(tx);
	xiw_tx_set_busy(qp, 0);
}
