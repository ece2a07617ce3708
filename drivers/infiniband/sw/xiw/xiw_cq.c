// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues. The kernel produces CQEs into a ring that user space
 * polls without a system call and arms through the ring's control word.
 * A kernel consumer's CQ is the same ring, unmapped: poll_cq and
 * req_notify_cq do what the provider does in user space.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"

int xiw_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibcq->device);
	struct xiw_cq *cq = to_xcq(ibcq);
	struct xiw_create_cq_resp resp = {};
	int rv;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > XIW_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!xiw_count_get(&xdev->num_cq, XIW_MAX_CQ))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	rv = xiw_ring_alloc(&cq->ring, roundup_pow_of_two(attr->cqe),
			    sizeof(struct xiw_cqe), udata, &resp.cq_key);
	if (rv)
		goto err_count;
	ibcq->cqe = cq->ring.num;
	if (!udata)
		return 0;
	resp.num_cqe = cq->ring.num;
	rv = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (rv)
		goto err_ring;
	return 0;

err_ring:
	xiw_ring_free(&cq->ring);
err_count:
	atomic_dec(&xdev->num_cq);
	return rv;
}

int xiw_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct xiw_cq *cq = to_xcq(ibcq);

	xiw_ring_free(&cq->ring);
	atomic_dec(&to_xdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * The CQEs the consumer has not taken yet: the run of valid slots that
 * ends at the producer's index. A consumer hands slots back in order, so
 * they are one run; a user consumer that breaks the protocol changes only
 * which of its own CQEs a resize carries over. The caller holds cq->lock.
 */
static u32 xiw_cq_pending(const struct xiw_ring *ring)
{
	const struct xiw_cqe *slot;
	u32 n;

	for (n = 0; n < ring->num; n++) {
		slot = xiw_ring_slot(ring, ring->prod - 1 - n);
		if (!(READ_ONCE(slot->flags) & XIW_SLOT_VALID))
			break;
	}
	return n;
}

/*
 * Give the CQ a new ring of at least cqe slots. The CQEs not yet polled
 * move to the first slots of the new ring, in order, with the arm and
 * overflow words; the consumer starts again at index 0. A user consumer
 * must not poll or arm meanwhile (the provider holds its CQ lock) and
 * maps the new ring at the key returned, unmapping the old one, which is
 * freed with its last mapping. Too small a ring for the CQEs pending is
 * EINVAL, and the CQ is left as it was.
 */
int xiw_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct xiw_cq *cq = to_xcq(ibcq);
	struct xiw_resize_cq_resp resp = {};
	struct xiw_ring ring, old;
	struct xiw_cqe *src, *dst;
	unsigned long flags;
	u32 n, i;
	int rv;

	if (cqe < 1 || cqe > XIW_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	rv = xiw_ring_alloc(&ring, roundup_pow_of_two(cqe),
			    sizeof(struct xiw_cqe), udata, &resp.cq_key);
	if (rv)
		return rv;
	/*
	 * Answered before the swap: once the CQ uses the new ring, user
	 * space must be able to find it.
	 */
	if (udata) {
		resp.num_cqe = ring.num;
		rv = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (rv)
			goto err;
	}

	spin_lock_irqsave(&cq->lock, flags);
	n = xiw_cq_pending(&cq->ring);
	if (n > ring.num) {
		spin_unlock_irqrestore(&cq->lock, flags);
		rv = -EINVAL;
		goto err;
	}
	for (i = 0; i < n; i++) {
		src = xiw_ring_slot(&cq->ring, cq->ring.prod - n + i);
		dst = xiw_ring_slot(&ring, i);
		/* The new ring is not visible yet: plain stores will do. */
		*dst = *src;
		dst->flags |= XIW_SLOT_VALID;
	}
	ring.prod = n;
	ring.ctrl->cq_notify = READ_ONCE(cq->ring.ctrl->cq_notify);
	ring.ctrl->cq_overflow = READ_ONCE(cq->ring.ctrl->cq_overflow);
	old = cq->ring;
	cq->ring = ring;
	ibcq->cqe = ring.num;
	spin_unlock_irqrestore(&cq->lock, flags);

	xiw_ring_free(&old);
	return 0;

err:
	xiw_ring_free(&ring);
	return rv;
}

static void xiw_cq_event(struct xiw_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = type,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Place one completion. The consumer owns a slot while its VALID flag is
 * set; finding the next slot still valid means the CQ is full: the CQE is
 * lost, which is reported once as CQ_ERR and in the ring's overflow word.
 */
void xiw_cq_add(struct xiw_cq *cq, const struct xiw_cqe *cqe)
{
	struct xiw_ring_ctrl *ctrl = cq->ring.ctrl;
	bool event = false, overflow = false;
	struct xiw_cqe *slot;
	unsigned long flags;
	u32 notify;

	if (cqe->status != IB_WC_SUCCESS)
		xiw_count_cqe(cq, cqe);
	spin_lock_irqsave(&cq->lock, flags);
	slot = xiw_ring_slot(&cq->ring, cq->ring.prod);
	/* Acquire: the consumer's copy of the slot is done before we refill. */
	if (smp_load_acquire(&slot->flags) & XIW_SLOT_VALID) {
		WRITE_ONCE(ctrl->cq_overflow, 1);
		overflow = !cq->overflowed;
		cq->overflowed = true;
		goto unlock;
	}
	slot->opcode = cqe->opcode;
	slot->status = cqe->status;
	slot->reserved = 0;
	slot->wr_id = cqe->wr_id;
	slot->qp_num = cqe->qp_num;
	slot->byte_len = cqe->byte_len;
	slot->ex = cqe->ex;
	slot->vendor_err = cqe->vendor_err;
	/* Release: the fields above are visible before the slot is valid. */
	smp_store_release(&slot->flags, cqe->flags | XIW_SLOT_VALID);
	cq->ring.prod++;

	/*
	 * Store (the CQE) then load (the arm word), against the consumer's
	 * store (arm) then load (poll): each side needs a full barrier in
	 * between, or both may miss the other's store and the event is
	 * lost. Ours is this one; the provider's arm is a store followed
	 * by a seq_cst fence, and a kernel consumer arms under cq->lock.
	 */
	smp_mb();
	/* The arm word is user memory: any value but these two is no arm. */
	notify = READ_ONCE(ctrl->cq_notify);
	if (notify == XIW_CQ_NOTIFY_NEXT ||
	    (notify == XIW_CQ_NOTIFY_SOLICITED &&
	     (cqe->flags & XIW_CQE_SOLICITED))) {
		WRITE_ONCE(ctrl->cq_notify, 0);
		event = true;
	}
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow)
		xiw_cq_event(cq, IB_EVENT_CQ_ERR);
	if (event && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/* Completion opcodes: CQE (ibv_wc_opcode values) to ib_wc. */
static enum ib_wc_opcode xiw_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case IB_UVERBS_WC_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WC_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WC_COMP_SWAP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WC_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WC_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case XIW_WC_REG_MR:
		return IB_WC_REG_MR;
	case IB_WC_RECV:
		return IB_WC_RECV;
	case IB_WC_RECV_RDMA_WITH_IMM:
		return IB_WC_RECV_RDMA_WITH_IMM;
	default:
		return IB_WC_SEND;
	}
}

static void xiw_cqe_to_wc(struct xiw_device *xdev, const struct xiw_cqe *cqe,
			  struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	/* The driver wrote it; only a bug could put a bad status there. */
	wc->status = cqe->status <= IB_WC_GENERAL_ERR ? cqe->status :
							IB_WC_GENERAL_ERR;
	wc->opcode = xiw_wc_opcode(cqe->opcode);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/*
	 * NULL once the QP is destroyed: a consumer that destroys a QP
	 * before reaping its completions gets no dangling pointer from us.
	 */
	wc->qp = xa_load(&xdev->qp_xa, cqe->qp_num);
	if (cqe->flags & XIW_CQE_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		/* Kept in network byte order all the way from the wire. */
		wc->ex.imm_data = (__force __be32)cqe->ex;
	} else if (cqe->flags & XIW_CQE_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->ex;
	}
}

/*
 * The consumer side of the slot protocol (see xiw-abi.h). It runs under
 * cq->lock, the producer's lock: a kernel CQ is polled from softirq or
 * process context at a low rate compared to the work it reports, and one
 * lock keeps polling, arming and placing simply ordered.
 */
int xiw_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct xiw_device *xdev = to_xdev(ibcq->device);
	struct xiw_cq *cq = to_xcq(ibcq);
	unsigned long flags;
	struct xiw_cqe *slot, cqe;
	int n;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num; n++) {
		slot = xiw_ring_slot(&cq->ring, cq->ring.cons);
		/* Acquire: pairs with the release in xiw_cq_add. */
		cqe.flags = smp_load_acquire(&slot->flags);
		if (!(cqe.flags & XIW_SLOT_VALID))
			break;
		cqe.opcode = slot->opcode;
		cqe.status = slot->status;
		cqe.wr_id = slot->wr_id;
		cqe.qp_num = slot->qp_num;
		cqe.byte_len = slot->byte_len;
		cqe.ex = slot->ex;
		cqe.vendor_err = slot->vendor_err;
		/* Release: the copy is done before xiw_cq_add may refill. */
		smp_store_release(&slot->flags, 0);
		cq->ring.cons++;
		xiw_cqe_to_wc(xdev, &cqe, &wc[n]);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Arm the CQ. xiw_cq_add reads the arm word under the same lock after
 * placing a CQE, so a CQE placed before we arm is found by the missed
 * events check below and one placed after raises the event.
 */
int xiw_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct xiw_cq *cq = to_xcq(ibcq);
	struct xiw_ring_ctrl *ctrl = cq->ring.ctrl;
	struct xiw_cqe *slot;
	unsigned long irqflags;
	int rv = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* A solicited-only request must not narrow an arm for any CQE. */
	if (flags & IB_CQ_NEXT_COMP)
		WRITE_ONCE(ctrl->cq_notify, XIW_CQ_NOTIFY_NEXT);
	else if ((flags & IB_CQ_SOLICITED) &&
		 READ_ONCE(ctrl->cq_notify) != XIW_CQ_NOTIFY_NEXT)
		WRITE_ONCE(ctrl->cq_notify, XIW_CQ_NOTIFY_SOLICITED);
	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		slot = xiw_ring_slot(&cq->ring, cq->ring.cons);
		/* Slots of a kernel CQ change only under the lock we hold. */
		if (READ_ONCE(slot->flags) & XIW_SLOT_VALID)
			rv = 1;
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return rv;
}
