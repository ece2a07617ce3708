// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory windows (RFC 5040 section 2.1 and 6.1; the IBTA's types 1 and
 * 2B): an STag for part of a user MR, with rights of its own, that the
 * owner of the MR hands to a peer and takes back without touching the
 * registration.
 *
 * A window is an xiw_mr of type XIW_MR_MW in the device's STag table, so
 * the receive path finds it as it finds an MR, and xiw_mem.c's checks
 * apply the window's range and rights and then its MR's validity; its
 * pages are the MR's. A window binds by a work request on a QP's SQ, in
 * order with the QP's other work (IB_UVERBS_WR_BIND_MW: the provider
 * turns ibv_bind_mw() of a type 1 window into one). While bound it holds
 * a reference to its MR's structure, never to the registration: a
 * deregistered MR stays deregistered, and its windows give the remote
 * access error from then on.
 *
 * Type 1: bound through any QP of its PD, rebound or unbound (length 0)
 * at will, never invalidated. Type 2: bound when free, reachable only
 * through the QP that bound it, freed again by that QP's LOCAL_INV or by
 * the peer's Send with Invalidate on it. Either keeps its STag's index
 * for life; each bind gives it the key byte the consumer chose.
 *
 * The window's state changes under its lock; a check that also needs
 * its MR takes the MR's lock inside the window's, never the reverse.
 */
#include <rdma/ib_verbs.h>

#include "xiw.h"
#include "xiw_fault.h"

int xiw_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibmw->device);
	struct xiw_mr *mw;
	int rv;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!xiw_count_get(&xdev->num_mw, XIW_MAX_MW))
		return -ENOMEM;
	mw = xiw_fault(XIW_FAULT_MW) ? NULL : kzalloc(sizeof(*mw), GFP_KERNEL);
	if (!mw) {
		rv = -ENOMEM;
		goto err_count;
	}
	mw->type = XIW_MR_MW;
	mw->mw_type = ibmw->type;
	mw->ibmr.device = ibmw->device;
	mw->ibmr.pd = ibmw->pd;
	refcount_set(&mw->ref, 1);
	spin_lock_init(&mw->lock);
	seqcount_spinlock_init(&mw->seq, &mw->lock);
	/* Unbound (type 1) or free (type 2): nothing is reachable yet. */
	mw->valid = false;
	rv = xiw_mr_add(xdev, mw);
	if (rv)
		goto err_free;
	to_xmw(ibmw)->mr = mw;
	ibmw->rkey = mw->stag;
	return 0;

err_free:
	kfree(mw);
err_count:
	atomic_dec(&xdev->num_mw);
	return rv;
}

/*
 * Bound or not: the STag is unpublished and the window invalid at once;
 * a data path user still holding it finishes with the checks failing,
 * and its last put frees it.
 */
int xiw_dealloc_mw(struct ib_mw *ibmw)
{
	struct xiw_device *xdev = to_xdev(ibmw->device);
	struct xiw_mr *mw = to_xmw(ibmw)->mr, *parent = NULL;
	unsigned long flags;

	xa_erase(&xdev->mr_xa, mw->stag >> 8);
	spin_lock_irqsave(&mw->lock, flags);
	mw->valid = false;
	swap(parent, mw->parent);
	spin_unlock_irqrestore(&mw->lock, flags);
	if (parent)
		xiw_mr_put(parent);
	atomic_dec(&xdev->num_mw);
	xiw_mr_put(mw);
	return 0;
}

/*
 * May a window with these rights cover [addr, addr + len) of mr, bound
 * through qp? A user MR of the QP's PD, valid, registered with the
 * right to bind windows, holding the range; remote writes and atomics
 * need the MR locally writable (the IBTA's rule for MRs, for windows).
 */
static int xiw_mw_mr_ok(struct xiw_mr *mr, const struct xiw_qp *qp,
			u64 addr, u64 len, int access)
{
	unsigned long flags;
	int rv = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->type != XIW_MR_USER || !mr->valid ||
	    mr->ibmr.pd != qp->ibqp.pd || !(mr->access & IB_ACCESS_MW_BIND) ||
	    !xiw_mr_in_bounds(mr, addr, len) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & IB_ACCESS_LOCAL_WRITE)))
		rv = -EINVAL;
	spin_unlock_irqrestore(&mr->lock, flags);
	return rv;
}

int xiw_mw_bind(struct xiw_qp *qp, const struct xiw_sqe *sqe)
{
	u64 addr = sqe->raddr, len = sqe->compare_add;
	struct xiw_mr *mw, *mr = NULL;
	int access = sqe->mw_access;
	unsigned long flags;
	bool type2;
	int rv;

	if ((sqe->ex ^ sqe->rkey) >> 8 || (access & ~XIW_REMOTE_ACCESS) ||
	    addr + len < addr)
		return -EINVAL;
	mw = xiw_mr_get(qp->xdev, sqe->ex);
	if (!mw)
		return -EINVAL;
	if (mw->type != XIW_MR_MW) {
		rv = -EINVAL;
		goto out;
	}
	/* Fixed at allocation: no lock needed to read it. */
	type2 = mw->mw_type == IB_MW_TYPE_2;
	/* A type 1 window's zero-length bind unbinds it: no MR needed. */
	if (len || type2) {
		mr = xiw_mr_get(qp->xdev, sqe->mw_lkey);
		rv = mr ? xiw_mw_mr_ok(mr, qp, addr, len, access) : -EINVAL;
		if (rv)
			goto out;
	}
	spin_lock_irqsave(&mw->lock, flags);
	/* A type 2 window binds only when free (IBTA: invalidate first). */
	if (mw->stag != sqe->ex || mw->ibmr.pd != qp->ibqp.pd ||
	    (type2 && mw->valid)) {
		rv = -EINVAL;
	} else {
		/* The window takes our reference to the MR; we the old one. */
		swap(mr, mw->parent);
		mw->iova = addr;
		mw->length = len;
		mw->access = access;
		mw->mw_qpn = qp->ibqp.qp_num;
		WRITE_ONCE(mw->stag, sqe->rkey);
		mw->ibmr.lkey = sqe->rkey;
		mw->ibmr.rkey = sqe->rkey;
		mw->valid = !!mw->parent;
		rv = 0;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
out:
	if (mr)
		xiw_mr_put(mr);
	xiw_mr_put(mw);
	return rv;
}
