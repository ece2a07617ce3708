// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Shared receive queues: a ring of receive entries that several QPs
 * consume, with the limit event of the verbs specification.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"

int xiw_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibsrq->device);
	struct xiw_srq *srq = to_xsrq(ibsrq);
	struct xiw_create_srq_resp resp = {};
	struct ib_srq_attr *a = &attr->attr;
	int rv;

	if (attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (a->max_wr < 1 || a->max_wr > XIW_MAX_SRQ_WR ||
	    a->max_sge > XIW_MAX_RECV_SGE || a->srq_limit > a->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!xiw_count_get(&xdev->num_srq, XIW_MAX_SRQ))
		return -ENOMEM;

	spin_lock_init(&srq->lock);
	srq->max_sge = a->max_sge;
	srq->limit = a->srq_limit;
	srq->kernel = !udata;
	rv = xiw_ring_alloc(&srq->ring, roundup_pow_of_two(a->max_wr),
			    sizeof(struct xiw_rqe), udata, &resp.srq_key);
	if (rv)
		goto err_count;
	a->max_wr = srq->ring.num;
	if (!udata)
		return 0;
	resp.num_rqe = srq->ring.num;
	rv = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (rv)
		goto err_ring;
	return 0;

err_ring:
	xiw_ring_free(&srq->ring);
err_count:
	atomic_dec(&xdev->num_srq);
	return rv;
}

/*
 * Only the limit can change: arming it (non-zero) asks for one
 * SRQ_LIMIT_REACHED event when the posted entries drop below it. The ring
 * cannot be resized.
 */
int xiw_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct xiw_srq *srq = to_xsrq(ibsrq);
	unsigned long irqflags;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & ~IB_SRQ_LIMIT)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->ring.num)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, irqflags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, irqflags);
	return 0;
}

int xiw_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct xiw_srq *srq = to_xsrq(ibsrq);
	unsigned long irqflags;

	attr->max_wr = srq->ring.num;
	attr->max_sge = srq->max_sge;
	spin_lock_irqsave(&srq->lock, irqflags);
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, irqflags);
	return 0;
}

int xiw_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct xiw_srq *srq = to_xsrq(ibsrq);

	xiw_ring_free(&srq->ring);
	atomic_dec(&to_xdev(ibsrq->device)->num_srq);
	return 0;
}

/*
 * A kernel SRQ's entries are produced here, under the lock its
 * consumers take (IRQ-safe: consumers post from any context). A user
 * SRQ is posted to through its ring only: uverbs does not offer the
 * legacy command (not in uverbs_cmd_mask), and work requests reaching
 * us for one anyway would bypass the ring, so they are refused.
 */
int xiw_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct xiw_srq *srq = to_xsrq(ibsrq);
	unsigned long flags;
	int rv = 0;

	if (!srq->kernel) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		return 0;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		rv = xiw_rqe_post(&srq->ring, srq->max_sge, wr);
		if (rv) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return rv;
}
