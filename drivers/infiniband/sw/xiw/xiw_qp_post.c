// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: posting. Kernel consumers' work requests written into
 * the rings as the same entries a provider writes; a user post is a
 * doorbell.
 */
#include <rdma/ib_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "xiw_qp.h"

/* A kernel consumer's send work request as an SQE opcode, or -1. */
static int xiw_sqe_opcode(enum ib_wr_opcode opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
		return IB_UVERBS_WR_SEND;
	case IB_WR_SEND_WITH_IMM:
		return IB_UVERBS_WR_SEND_WITH_IMM;
	case IB_WR_SEND_WITH_INV:
		return IB_UVERBS_WR_SEND_WITH_INV;
	case IB_WR_RDMA_WRITE:
		return IB_UVERBS_WR_RDMA_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	case IB_WR_RDMA_READ:
		return IB_UVERBS_WR_RDMA_READ;
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_UVERBS_WR_RDMA_READ_WITH_INV;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	case IB_WR_LOCAL_INV:
		return IB_UVERBS_WR_LOCAL_INV;
	case IB_WR_REG_MR:
		return XIW_WR_REG_MR;
	default:
		return -1;
	}
}

#define XIW_SEND_FLAGS (IB_SEND_SIGNALED | IB_SEND_SOLICITED | \
			IB_SEND_FENCE | IB_SEND_INLINE)

/*
 * Copy inline data into the SGE area. The addresses are kernel virtual:
 * xiw has no DMA device, so ib_dma_* hands out virtual addresses.
 */
static int xiw_sqe_inline(struct xiw_sqe *sqe, const struct ib_send_wr *wr)
{
	u8 *data = (u8 *)sqe->sge;
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > XIW_MAX_INLINE - len)
			return -EINVAL;
		memcpy(data + len, (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}
	sqe->num_sge = 0;
	sqe->inline_len = len;
	return 0;
}

/*
 * Fill a free SQE from wr; the caller publishes it. Every field is
 * written: the slot still holds whatever the previous entry left.
 */
static int xiw_sqe_fill(struct xiw_qp *qp, struct xiw_sqe *sqe,
			const struct ib_send_wr *wr, u32 *flags)
{
	int opcode = xiw_sqe_opcode(wr->opcode);
	bool data = false;
	int i;

	if (opcode < 0 || wr->send_flags & ~XIW_SEND_FLAGS ||
	    wr->num_sge < 0 || wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;

	sqe->opcode = opcode;
	sqe->wr_id = wr->wr_id;
	sqe->ex = 0;
	sqe->rkey = 0;
	sqe->raddr = 0;
	sqe->compare_add = 0;
	sqe->swap = 0;
	sqe->mw_lkey = 0;
	sqe->mw_access = 0;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
		/* Immediate data stays in network byte order (abi.rst). */
		sqe->ex = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_SEND:
		data = true;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe->ex = wr->ex.invalidate_rkey;
		data = true;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		sqe->ex = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
		data = true;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_RDMA_READ_WITH_INV:
		sqe->ex = wr->ex.invalidate_rkey;
		fallthrough;
	case IB_WR_RDMA_READ:
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		sqe->swap = atomic_wr(wr)->swap;
		fallthrough;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/* One 8-byte buffer for the old value, never inline. */
		if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(u64))
			return -EINVAL;
		sqe->raddr = atomic_wr(wr)->remote_addr;
		sqe->rkey = atomic_wr(wr)->rkey;
		sqe->compare_add = atomic_wr(wr)->compare_add;
		break;
	case IB_WR_LOCAL_INV:
		sqe->ex = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		/*
		 * See XIW_WR_REG_MR. The lkey names the MR (the consumer
		 * has usually moved its key byte on already); the new STag
		 * must keep the MR's index.
		 */
		sqe->ex = READ_ONCE(reg_wr(wr)->mr->lkey);
		sqe->rkey = reg_wr(wr)->key;
		sqe->compare_add = (u32)reg_wr(wr)->access;
		if ((sqe->ex ^ sqe->rkey) >> 8)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}

	*flags = 0;
	if (wr->send_flags & IB_SEND_SIGNALED || qp->sig_all)
		*flags |= XIW_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		*flags |= XIW_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		*flags |= XIW_WQE_FENCE;

	/* Inline applies to the operations that carry local data out. */
	if (data && wr->send_flags & IB_SEND_INLINE) {
		*flags |= XIW_WQE_INLINE;
		return xiw_sqe_inline(sqe, wr);
	}
	sqe->inline_len = 0;
	/* No local buffer in these: ignore whatever list came along. */
	if (wr->opcode == IB_WR_LOCAL_INV || wr->opcode == IB_WR_REG_MR) {
		sqe->num_sge = 0;
		return 0;
	}
	sqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].addr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/*
 * A kernel consumer's post: the same SQEs a provider writes, produced
 * under sq_lock (IRQ-safe here: consumers post from any context).
 */
static int xiw_post_send_kernel(struct xiw_qp *qp, const struct ib_send_wr *wr,
				const struct ib_send_wr **bad_wr)
{
	struct xiw_sqe *sqe;
	unsigned long irqflags;
	bool posted = false;
	u32 flags;
	int rv = 0;

	spin_lock_irqsave(&qp->sq_lock, irqflags);
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT ||
	    qp->state == IB_QPS_RTR) {
		rv = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		sqe = xiw_ring_slot(&qp->sq, qp->sq.prod);
		/* Acquire: the engine's copy of the slot is done. */
		if (smp_load_acquire(&sqe->flags) & XIW_SLOT_VALID) {
			rv = -ENOMEM;
			break;
		}
		rv = xiw_sqe_fill(qp, sqe, wr, &flags);
		if (rv)
			break;
		/* Release: the entry is complete before it is valid. */
		smp_store_release(&sqe->flags, flags | XIW_SLOT_VALID);
		qp->sq.prod++;
		posted = true;
	}
	/* Nothing will send in ERR: flush what we queued, as for users. */
	if (qp->state == IB_QPS_ERR) {
		if (xiw_qp_flush_posts(qp))
			xiw_sq_drain(qp, true);
		posted = false;
	}
out:
	spin_unlock_irqrestore(&qp->sq_lock, irqflags);
	if (rv)
		*bad_wr = wr;
	if (posted)
		xiw_tx_kick(qp);
	return rv;
}

static int xiw_post_recv_kernel(struct xiw_qp *qp, const struct ib_recv_wr *wr,
				const struct ib_recv_wr **bad_wr)
{
	unsigned long irqflags;
	int rv = 0;

	/* Receives of a QP on an SRQ go to the SRQ. */
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, irqflags);
	/* A receive may be posted from INIT on, before the connection. */
	if (qp->state == IB_QPS_RESET) {
		rv = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		rv = xiw_rqe_post(&qp->rq, qp->cap.max_recv_sge, wr);
		if (rv)
			break;
	}
	if (xiw_qp_flush_posts(qp))
		xiw_rq_drain(qp, true);
out:
	spin_unlock_irqrestore(&qp->rq_lock, irqflags);
	if (rv)
		*bad_wr = wr;
	return rv;
}

/*
 * User QPs post through their rings: a NULL work request list is the
 * doorbell of a user post. Work requests built by uverbs from the legacy
 * post commands are refused: that path would bypass the rings. Kernel
 * QPs post work requests into the same rings.
 */
int xiw_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	unsigned long irqflags;

	if (qp->kernel)
		return xiw_post_send_kernel(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/*
	 * Only a QP in ERR flushes at the doorbell: in any other state we
	 * ring without sq_lock. The provider publishes its slot, fences,
	 * then rings; xiw_qp_change_state() stores the state, fences, then
	 * flushes what is published. So a look that misses ERR means that
	 * flush sees the slot, and one that sees it decides under the lock.
	 */
	if (unlikely(READ_ONCE(qp->state) == IB_QPS_ERR)) {
		spin_lock_irqsave(&qp->sq_lock, irqflags);
		if (xiw_qp_flush_posts(qp))
			xiw_sq_drain(qp, true);
		spin_unlock_irqrestore(&qp->sq_lock, irqflags);
	}
	xiw_tx_doorbell(qp);
	return 0;
}

int xiw_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	unsigned long irqflags;

	if (qp->kernel)
		return xiw_post_recv_kernel(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, irqflags);
	if (xiw_qp_flush_posts(qp))
		xiw_rq_drain(qp, true);
	spin_unlock_irqrestore(&qp->rq_lock, irqflags);
	return 0;
}
