// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory regions and their STags (RFC 5040 section 8.1.1): a 24-bit index
 * that names the region and an 8-bit key chosen at random for each
 * registration, so a peer cannot guess a valid STag from a stale one.
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"

#define XIW_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
		       IB_ACCESS_OPTIONAL)

/* Give mr an STag: the lkey and the rkey are the same number. */
static int xiw_mr_add(struct xiw_device *xdev, struct xiw_mr *mr)
{
	u32 idx;
	int rv;

	rv = xa_alloc_cyclic(&xdev->mr_xa, &idx, mr, XIW_ID_LIMIT,
			     &xdev->mr_next, GFP_KERNEL);
	if (rv < 0)
		return rv;
	mr->ibmr.lkey = idx << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	return 0;
}

struct ib_mr *xiw_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
			      u64 iova, int access, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibpd->device);
	struct ib_umem *umem;
	struct xiw_mr *mr;
	int rv;

	if (access & ~XIW_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	/* Remote writes (and atomics) need the region locally writable. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return ERR_PTR(-EINVAL);
	if (!len || len > XIW_MAX_MR_SIZE || iova + len < iova)
		return ERR_PTR(-EINVAL);
	if (!xiw_count_get(&xdev->num_mr, XIW_MAX_MR))
		return ERR_PTR(-ENOMEM);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		rv = -ENOMEM;
		goto err_count;
	}
	umem = ib_umem_get(ibpd->device, start, len, access);
	if (IS_ERR(umem)) {
		rv = PTR_ERR(umem);
		goto err_free;
	}
	mr->type = XIW_MR_USER;
	mr->umem = umem;
	mr->access = access;
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	rv = xiw_mr_add(xdev, mr);
	if (rv)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	ib_umem_release(umem);
err_free:
	kfree(mr);
err_count:
	atomic_dec(&xdev->num_mr);
	return ERR_PTR(rv);
}

int xiw_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibmr->device);
	struct xiw_mr *mr = to_xmr(ibmr);

	xa_erase(&xdev->mr_xa, ibmr->lkey >> 8);
	ib_umem_release(mr->umem);
	kfree(mr);
	atomic_dec(&xdev->num_mr);
	return 0;
}
