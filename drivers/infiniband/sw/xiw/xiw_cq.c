// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues. The kernel produces CQEs into a ring that user space
 * polls without a system call and arms through the ring's control word.
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

	/* Kernel consumers arrive with the connection manager. */
	if (!udata)
		return -EOPNOTSUPP;
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > XIW_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!xiw_count_get(&xdev->num_cq, XIW_MAX_CQ))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	rv = xiw_ring_alloc(&cq->ring, roundup_pow_of_two(attr->cqe),
			    sizeof(struct xiw_cqe), udata, &resp.cq_key);
	if (rv)
		goto err_count;
	ibcq->cqe = cq->ring.num;
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
