// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory regions and their STags (RFC 5040 section 8.1.1): a 24-bit index
 * that names the region and an 8-bit key chosen at random for each
 * registration, so a peer cannot guess a valid STag from a stale one.
 *
 * Three kinds: user memory pinned by ib_umem; the DMA MR of a kernel PD,
 * whose addresses are kernel virtual addresses (xiw has no DMA device, so
 * ib_dma_* maps to them); and fast-register MRs, whose page list a kernel
 * consumer sets with map_mr_sg and brings into force with a REG_MR work
 * request.
 *
 * Lifetime: the registration owns one reference; the data path takes one
 * per use with xiw_mr_get() under RCU, which is why the structure itself
 * is freed after a grace period. A data path reference keeps the
 * structure, not the memory: it may be held as long as a peer likes (a
 * Write begun and never finished, a Read Response waiting for TCP room),
 * and dereg_mr must not wait for that. So the pages are touched only
 * inside an RCU read-side section that saw the MR valid (xiw_mr_bvec()),
 * or through page references taken there (the transmit path). dereg_mr
 * unpublishes the index and invalidates the MR, waits until a grace
 * period has passed since the data path last used it, releases a user
 * MR's pages and drops the registration's
 * reference; the last reference frees the structure. A kernel
 * consumer's MR (DMA, FRMR) describes the consumer's own memory, which
 * is its to free once dereg returns: dereg still waits for every
 * reference there, which its QPs' teardown ends.
 *
 * Registration state (valid, stag, access and an FRMR's page list in
 * force) changes under mr->lock, taken with interrupts off: the engine
 * executes REG_MR and LOCAL_INV from whatever context it runs in, and the
 * receive path checks accesses in softirq. The lock orders everything a
 * REG_MR set up (including the page list written by map_mr_sg before the
 * work request was posted) before any access it then allows, and an
 * invalidation before the next check. xiw_mr_get() reads the STag without
 * the lock, only to find the MR; xiw_mr_check() decides under the lock.
 */
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"
#include "xiw_fault.h"

#define XIW_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
		       IB_ACCESS_MW_BIND | IB_ACCESS_OPTIONAL)

static int xiw_mr_access_ok(int access)
{
	if (access & ~XIW_MR_ACCESS)
		return -EOPNOTSUPP;
	/* Remote writes (and atomics) need the region locally writable. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct xiw_mr *xiw_mr_alloc(struct xiw_device *xdev,
				   enum xiw_mr_type type, int access)
{
	struct xiw_mr *mr;

	if (!xiw_count_get(&xdev->num_mr, XIW_MAX_MR))
		return ERR_PTR(-ENOMEM);
	mr = xiw_fault(XIW_FAULT_MR) ? NULL : kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&xdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->type = type;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	seqcount_spinlock_init(&mr->seq, &mr->lock);
	/* An FRMR has no STag worth anything until its first REG_MR. */
	mr->valid = type != XIW_MR_FRMR;
	return mr;
}

/*
 * An FRMR's two page lists are one allocation; REG_MR swaps them, so the
 * allocation starts at whichever of the two comes first.
 */
static void xiw_mr_free_lists(struct xiw_mr *mr)
{
	if (mr->staged && mr->staged < mr->pages)
		kvfree(mr->staged);
	else
		kvfree(mr->pages);
}

/* The structure, once nothing refers to it (any context). */
void xiw_mr_free(struct xiw_mr *mr)
{
	xiw_mr_free_lists(mr);
	kfree_rcu(mr, rcu);
}

/* Undo xiw_mr_alloc for an MR that was never published. */
static void xiw_mr_free_unpublished(struct xiw_device *xdev,
				    struct xiw_mr *mr)
{
	xiw_mr_free_lists(mr);
	kfree(mr);
	atomic_dec(&xdev->num_mr);
}

/*
 * Give mr an STag (the lkey and the rkey are the same number) and make it
 * visible to xiw_mr_get(). The index is reserved first and the MR stored
 * once complete: xa_store publishes it with release semantics.
 */
int xiw_mr_add(struct xiw_device *xdev, struct xiw_mr *mr)
{
	u32 idx;
	int rv;

	rv = xiw_fault(XIW_FAULT_MR_ID) ? -ENOMEM :
		xa_alloc_cyclic(&xdev->mr_xa, &idx, NULL, XIW_ID_LIMIT,
				&xdev->mr_next, GFP_KERNEL);
	if (rv < 0)
		return rv;
	mr->stag = idx << 8 | get_random_u8();
	mr->ibmr.lkey = mr->stag;
	mr->ibmr.rkey = mr->stag;
	/* Overwriting a reserved entry allocates nothing and cannot fail. */
	xa_store(&xdev->mr_xa, idx, mr, GFP_KERNEL);
	return 0;
}

/*
 * The pinned pages of a user MR in one array, first page first: the
 * data path finds the page of any offset at once, where walking the
 * umem's scatterlist cost time in proportion to the offset, in softirq,
 * for every FPDU (a peer writing near the end of a large, fragmented MR
 * could keep a CPU busy for hundreds of milliseconds per run).
 */
static int xiw_mr_user_pages(struct xiw_mr *mr)
{
	size_t n = ib_umem_num_pages(mr->umem), i = 0;
	struct sg_page_iter it;

	mr->upages = xiw_fault(XIW_FAULT_MR_PAGES) ? NULL :
		kvmalloc_array(n, sizeof(*mr->upages), GFP_KERNEL);
	if (!mr->upages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			break;
		mr->upages[i++] = sg_page_iter_page(&it);
	}
	mr->nupages = i;
	return 0;
}

struct ib_mr *xiw_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
			      u64 iova, int access, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibpd->device);
	struct ib_umem *umem;
	struct xiw_mr *mr;
	int rv;

	rv = xiw_mr_access_ok(access);
	if (rv)
		return ERR_PTR(rv);
	if (!len || len > XIW_MAX_MR_SIZE || iova + len < iova)
		return ERR_PTR(-EINVAL);
	mr = xiw_mr_alloc(xdev, XIW_MR_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	umem = xiw_fault(XIW_FAULT_MR_UMEM) ? ERR_PTR(-ENOMEM) :
		ib_umem_get(ibpd->device, start, len, access);
	if (IS_ERR(umem)) {
		rv = PTR_ERR(umem);
		goto err_free;
	}
	mr->umem = umem;
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	rv = xiw_mr_user_pages(mr);
	if (rv)
		goto err_umem;
	rv = xiw_mr_add(xdev, mr);
	if (rv)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	kvfree(mr->upages);
	ib_umem_release(umem);
err_free:
	xiw_mr_free_unpublished(xdev, mr);
	return ERR_PTR(rv);
}

/*
 * ibv_rereg_mr(): a new registration with what changes (translation,
 * PD, rights) and the rest of the old one, under a new STag. The uverbs
 * core puts it in the old one's place and then deregisters the old one
 * as dereg_mr would: a peer still holding the old keys is refused from
 * then on, and work already placing into the old pages finishes first.
 * On error the old registration stays as it was.
 */
struct ib_mr *xiw_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				u64 len, u64 iova, int access,
				struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct xiw_mr *mr = to_xmr(ibmr);

	if (mr->type != XIW_MR_USER || !mr->umem)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		len = mr->ibmr.length;
		iova = mr->ibmr.iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	return xiw_reg_user_mr(ibpd, start, len, iova, access, udata);
}

/*
 * All kernel virtual memory, for a kernel PD's local_dma_lkey (and the
 * global rkey of IB_PD_UNSAFE_GLOBAL_RKEY). iova 0 and the largest
 * length say "any address"; xiw_mr_check does not bound it.
 */
struct ib_mr *xiw_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct xiw_device *xdev = to_xdev(ibpd->device);
	struct xiw_mr *mr;
	int rv;

	rv = xiw_mr_access_ok(access);
	if (rv)
		return ERR_PTR(rv);
	mr = xiw_mr_alloc(xdev, XIW_MR_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	rv = xiw_mr_add(xdev, mr);
	if (rv) {
		xiw_mr_free_unpublished(xdev, mr);
		return ERR_PTR(rv);
	}
	return &mr->ibmr;
}

struct ib_mr *xiw_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg)
{
	struct xiw_device *xdev = to_xdev(ibpd->device);
	struct xiw_mr *mr;
	int rv;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (max_num_sg < 1 || max_num_sg > XIW_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = xiw_mr_alloc(xdev, XIW_MR_FRMR, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* One allocation for both lists, see struct xiw_mr. */
	mr->pages = xiw_fault(XIW_FAULT_MR_FRMR_LIST) ? NULL :
		kvcalloc(2 * (size_t)max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->pages) {
		rv = -ENOMEM;
		goto err_free;
	}
	mr->staged = mr->pages + max_num_sg;
	mr->max_pages = max_num_sg;
	mr->page_shift = PAGE_SHIFT;
	mr->staged_shift = PAGE_SHIFT;
	rv = xiw_mr_add(xdev, mr);
	if (rv)
		goto err_free;
	return &mr->ibmr;

err_free:
	xiw_mr_free_unpublished(xdev, mr);
	return ERR_PTR(rv);
}

static int xiw_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct xiw_mr *mr = to_xmr(ibmr);

	if (mr->staged_npages == mr->max_pages)
		return -ENOMEM;
	mr->staged[mr->staged_npages++] = addr;
	return 0;
}

/*
 * Build the page list the next REG_MR brings into force. ib_map_mr_sg has
 * set ibmr->page_size; blocks larger than a page could not be described
 * by single-page pieces (xiw_mr_bvec), and page_size_cap says PAGE_SIZE.
 * Returns what ib_sg_to_pages returns: the number of entries mapped.
 */
int xiw_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		  unsigned int *sg_offset)
{
	struct xiw_mr *mr = to_xmr(ibmr);
	u32 page_size = ibmr->page_size;
	unsigned long flags;
	int n;

	if (mr->type != XIW_MR_FRMR || !is_power_of_2(page_size) ||
	    page_size < SZ_4K || page_size > PAGE_SIZE)
		return -EINVAL;
	/*
	 * The staged list is ours alone until a REG_MR posted after this
	 * call swaps it in; a consumer must not map while one is pending.
	 */
	mr->staged_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, nents, sg_offset, xiw_set_page);
	spin_lock_irqsave(&mr->lock, flags);
	mr->staged_fbo = ibmr->iova & (page_size - 1);
	mr->staged_shift = ilog2(page_size);
	mr->staged_new = true;
	spin_unlock_irqrestore(&mr->lock, flags);
	return n;
}

int xiw_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xdev(ibmr->device);
	struct xiw_mr *mr = to_xmr(ibmr);
	unsigned long flags, gp;
	bool used;

	/* By index: ib_update_fast_reg_key may have changed the key byte. */
	xa_erase(&xdev->mr_xa, mr->stag >> 8);
	spin_lock_irqsave(&mr->lock, flags);
	write_seqcount_begin(&mr->seq);
	mr->valid = false;
	write_seqcount_end(&mr->seq);
	used = mr->used;
	gp = mr->used_gp;
	spin_unlock_irqrestore(&mr->lock, flags);
	atomic_dec(&xdev->num_mr);
	if (mr->type != XIW_MR_USER) {
		/* The consumer's memory: nobody may touch it after we return. */
		xiw_mr_put(mr);
		wait_for_completion(&mr->released);
		xiw_mr_free(mr);
		return 0;
	}
	/*
	 * From now on xiw_mr_bvec() refuses the MR. Whoever saw it valid
	 * did so in a read-side section begun before the last use's
	 * grace-period cookie was taken: once a grace period has passed
	 * since then, none is left (an MR the data path never used needs
	 * no wait: deregistering many at once stays fast).
	 */
	if (used)
		cond_synchronize_rcu(gp);
	kvfree(mr->upages);
	mr->upages = NULL;
	mr->nupages = 0;
	ib_umem_release(mr->umem);
	mr->umem = NULL;
	xiw_mr_put(mr);
	return 0;
}

/*
 * Lookup by the whole STag. The key compare is repeated after taking the
 * reference: a REG_MR may change the key meanwhile, and an index reused
 * by a newer MR carries another key (barring one chance in 256 after
 * 2^24 registrations; the bounds and PD checks still apply).
 */
struct xiw_mr *xiw_mr_get(struct xiw_device *xdev, u32 stag)
{
	struct xiw_mr *mr;

	rcu_read_lock();
	mr = xa_load(&xdev->mr_xa, stag >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	if (mr && READ_ONCE(mr->stag) != stag) {
		xiw_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/* The last reference went (xiw_mr_put()). */
void xiw_mr_release(struct xiw_mr *mr)
{
	/*
	 * A user MR's pages went at dereg, a window's MR reference at
	 * unbind or dealloc; a kernel MR's dereg waits here.
	 */
	if (mr->type == XIW_MR_USER || mr->type == XIW_MR_MW)
		xiw_mr_free(mr);
	else
		complete(&mr->released);
}

/* [addr, addr + len) within the MR's registered range; mr->lock held. */
bool xiw_mr_in_bounds(const struct xiw_mr *mr, u64 addr, u64 len)
{
	u64 iova, length;

	if (addr + len < addr)
		return false;
	switch (mr->type) {
	case XIW_MR_DMA:
		return true;
	case XIW_MR_USER:
		iova = mr->ibmr.iova;
		length = mr->ibmr.length;
		break;
	default:
		iova = mr->iova;
		length = mr->length;
		break;
	}
	/* iova + length cannot wrap: registration refused that. */
	return addr >= iova && addr + len <= iova + length;
}

/*
 * A window's own rules, besides its range and rights: remote access only
 * (a window is never an lkey), and a type 2 window only through the QP
 * that bound it. The window's lock held; its MR is checked after.
 */
static int xiw_mw_check(const struct xiw_mr *mw, const struct xiw_qp *qp,
			int access)
{
	if (!(access & XIW_REMOTE_ACCESS) ||
	    (mw->mw_type == IB_MW_TYPE_2 && mw->mw_qpn != qp->ibqp.qp_num))
		return -EACCES;
	return 0;
}

/*
 * The registration state of an MR or a window: valid, PD, rights (and a
 * window's own rules), range. Under the lock, or in a read section of
 * 'seq' for an MR.
 */
static inline int xiw_mr_check_state(const struct xiw_mr *mr,
				     const struct xiw_qp *qp,
				     u64 addr, u64 len, int access)
{
	if (!mr->valid)
		return -ENOENT;
	if (mr->ibmr.pd != qp->ibqp.pd || (access & ~mr->access) ||
	    (mr->type == XIW_MR_MW && xiw_mw_check(mr, qp, access)))
		return -EACCES;
	if (!xiw_mr_in_bounds(mr, addr, len))
		return -EINVAL;
	return 0;
}

/* A window: its state under its lock, then its MR's under that one's. */
static int xiw_mw_check_all(struct xiw_mr *mw, const struct xiw_qp *qp,
			    u64 addr, u64 len, int access)
{
	unsigned long flags;
	int rv;

	spin_lock_irqsave(&mw->lock, flags);
	rv = xiw_mr_check_state(mw, qp, addr, len, access);
	/* A bound window has its MR; nested: the window's lock first. */
	if (!rv && mw->parent) {
		spin_lock(&mw->parent->lock);
		if (!mw->parent->valid)
			rv = -ENOENT;
		spin_unlock(&mw->parent->lock);
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	return rv;
}

int xiw_mr_check(struct xiw_mr *mr, const struct xiw_qp *qp, u64 addr,
		 u64 len, int access)
{
	unsigned int seq;
	int rv;

	if (mr->type == XIW_MR_MW)
		return xiw_mw_check_all(mr, qp, addr, len, access);
	/*
	 * An MR is checked for every SGE of every message, on both sides:
	 * read its state without the lock, and again if a fast register,
	 * an invalidation or a dereg changed it meanwhile. The pages are
	 * looked up under the lock (xiw_mr_bvec()), which refuses an MR
	 * invalidated since.
	 */
	do {
		seq = read_seqcount_begin(&mr->seq);
		rv = xiw_mr_check_state(mr, qp, addr, len, access);
	} while (read_seqcount_retry(&mr->seq, seq));
	return rv;
}

/*
 * Append a piece to bv, merging it into the previous one when it
 * continues it within the same page. Pieces never cross a page: the
 * transmit path hands them to sendpage, which takes one page.
 */
static int xiw_bvec_add(struct bio_vec *bv, int *n, int max,
			struct page *page, u32 off, u32 len)
{
	struct bio_vec *last = *n ? &bv[*n - 1] : NULL;

	if (last && last->bv_page == page &&
	    last->bv_offset + last->bv_len == off) {
		last->bv_len += len;
		return 0;
	}
	if (*n == max)
		return -E2BIG;
	bv[*n].bv_page = page;
	bv[*n].bv_offset = off;
	bv[*n].bv_len = len;
	(*n)++;
	return 0;
}

/* The page behind a kernel virtual address, or NULL if none is. */
static struct page *xiw_kva_page(u64 addr)
{
	const void *p = (const void *)(uintptr_t)addr;

	if (is_vmalloc_addr(p))
		return vmalloc_to_page(p);
	return virt_addr_valid(p) ? virt_to_page(p) : NULL;
}

/* A run of kernel virtual memory, cut at page boundaries. */
static int xiw_bvec_kva(struct bio_vec *bv, int *n, int max, u64 addr,
			u32 len)
{
	struct page *page;
	u32 off, chunk;
	int rv;

	while (len) {
		page = xiw_kva_page(addr);
		if (!page)
			return -EFAULT;
		off = offset_in_page(addr);
		chunk = min_t(u32, len, PAGE_SIZE - off);
		rv = xiw_bvec_add(bv, n, max, page, off, chunk);
		if (rv)
			return rv;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

/*
 * User memory: mr->upages holds the pinned pages from the one with the
 * region's first byte, whose offset in that page is ib_umem_offset().
 */
static int xiw_bvec_user(struct xiw_mr *mr, u64 addr, u32 len,
			 struct bio_vec *bv, int max)
{
	u64 off = addr - mr->ibmr.iova + ib_umem_offset(mr->umem);
	u32 in, chunk;
	int n = 0, rv;

	while (len) {
		/* Within bounds the pages always suffice; be safe regardless. */
		if ((off >> PAGE_SHIFT) >= mr->nupages)
			return -EINVAL;
		in = off & ~PAGE_MASK;
		chunk = min_t(u64, len, PAGE_SIZE - in);
		rv = xiw_bvec_add(bv, &n, max, mr->upages[off >> PAGE_SHIFT],
				  in, chunk);
		if (rv)
			return rv;
		off += chunk;
		len -= chunk;
	}
	return n;
}

/*
 * An FRMR: the byte at iova is 'fbo' bytes into the first block, as
 * ib_sg_to_pages lays it out; blocks are at most a page and aligned to
 * their size, so none crosses a page. Called with mr->lock held.
 */
static int xiw_bvec_frmr(struct xiw_mr *mr, u64 addr, u32 len,
			 struct bio_vec *bv, int max)
{
	u64 off = addr - mr->iova + mr->fbo;
	u32 bsize = 1U << mr->page_shift;
	u32 in, chunk;
	int n = 0, rv;
	u64 idx;

	while (len) {
		idx = off >> mr->page_shift;
		in = off & (bsize - 1);
		if (idx >= mr->npages)
			return -EINVAL;
		chunk = min_t(u32, len, bsize - in);
		rv = xiw_bvec_kva(bv, &n, max, mr->pages[idx] + in, chunk);
		if (rv)
			return rv;
		off += chunk;
		len -= chunk;
	}
	return n;
}

/*
 * Besides the contract in xiw.h: -EINVAL outside the registered range,
 * -ENOENT if the STag was invalidated since xiw_mr_check (an FRMR's page
 * list must not be read once it may be replaced), -EFAULT for a DMA MR
 * address that is not kernel memory (a peer holding a global rkey).
 */
int xiw_mr_bvec(struct xiw_mr *mr, u64 addr, u32 len, struct bio_vec *bv,
		int max)
{
	struct xiw_mr *parent = NULL;
	unsigned long flags;
	int n = 0, rv;

	/* The pages may be used only inside the section (see the top). */
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "outside RCU");
	spin_lock_irqsave(&mr->lock, flags);
	if (!mr->valid) {
		rv = -ENOENT;
	} else if (!xiw_mr_in_bounds(mr, addr, len)) {
		rv = -EINVAL;
	} else if (mr->type == XIW_MR_MW) {
		parent = mr->parent;
		rv = parent ? 0 : -ENOENT;
	} else {
		/* What a user MR's dereg waits for: see xiw_dereg_mr(). */
		if (mr->type == XIW_MR_USER) {
			mr->used_gp = get_state_synchronize_rcu();
			mr->used = true;
		}
		rv = mr->type == XIW_MR_FRMR ?
			xiw_bvec_frmr(mr, addr, len, bv, max) : 0;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	/*
	 * A window's pages are its MR's, at the same addresses. An unbind
	 * may drop the window's reference to the MR now, but its last put
	 * frees it after a grace period, and our caller's section holds
	 * that off; the MR's own checks decide.
	 */
	if (parent)
		return xiw_mr_bvec(parent, addr, len, bv, max);
	if (rv || mr->type == XIW_MR_FRMR)
		return rv;

	/*
	 * Seen valid in the caller's read-side section: a user MR's pages
	 * stay until dereg's grace period has waited it out; a kernel MR's
	 * memory stays while our caller's reference holds dereg off.
	 */
	if (mr->type == XIW_MR_USER)
		return xiw_bvec_user(mr, addr, len, bv, max);
	rv = xiw_bvec_kva(bv, &n, max, addr, len);
	return rv ? rv : n;
}

/*
 * The 64-bit word an atomic operation targets (RFC 7306 section 5.1):
 * one piece of 8 bytes, aligned in memory. The tagged offset's alignment
 * is the peer's to get right; the word's is ours too, as an MR's iova
 * need not share its address's low bits. Inside the caller's RCU
 * read-side section, as xiw_mr_bvec(). -EFAULT for an unaligned word.
 */
int xiw_mr_word(struct xiw_mr *mr, u64 addr, struct bio_vec *bv)
{
	int n = xiw_mr_bvec(mr, addr, sizeof(u64), bv, 1);

	if (n == -E2BIG || (n == 1 && (bv->bv_offset & (sizeof(u64) - 1))))
		return -EFAULT;
	return n < 0 ? n : 0;
}

/*
 * Carry out an atomic operation on the word bv names (xiw_mr_word()),
 * returning its old value. A compare-and-exchange loop on the word
 * itself: atomic against every other QP, device and CPU using it
 * (RFC 7306 section 5.3 asks this among one RNIC's streams), lock-free.
 */
u64 xiw_atomic_exec(const struct bio_vec *bv, u8 aop, u64 add_swap,
		    u64 add_swap_mask, u64 compare, u64 compare_mask)
{
	u8 *base = kmap_local_page(bv->bv_page);
	u64 *word = (u64 *)(base + bv->bv_offset);
	u64 old = READ_ONCE(*word), new;

	do {
		new = xiw_atomic_result(aop, old, add_swap, add_swap_mask,
					compare, compare_mask);
		/* A miss leaves the word alone (but is still one read). */
		if (new == old)
			break;
	} while (!try_cmpxchg64(word, &old, new));
	kunmap_local(base);
	flush_dcache_page(bv->bv_page);
	return old;
}

/*
 * Whether qp may invalidate mr (mr->lock held): a peer only what was
 * registered so (RFC 5040: an FRMR or a type 2 window), a user QP only
 * a type 2 window (a user MR's STag lives as long as its registration),
 * and a type 2 window only through the QP it was bound through.
 */
static bool xiw_mr_may_invalidate(const struct xiw_mr *mr,
				  const struct xiw_qp *qp, bool remote)
{
	if (mr->type == XIW_MR_MW)
		return mr->mw_type == IB_MW_TYPE_2 &&
		       mr->mw_qpn == qp->ibqp.qp_num;
	return qp->kernel && (!remote || mr->type == XIW_MR_FRMR);
}

/*
 * LOCAL_INV (remote false) or Send with Invalidate / Read with Invalidate
 * of a remote peer (remote true). Invalidating an STag already invalid
 * succeeds: it changes nothing. An invalidated window lets go of its MR.
 */
int xiw_mr_invalidate(const struct xiw_qp *qp, u32 stag, bool remote)
{
	struct xiw_mr *mr, *parent = NULL;
	unsigned long flags;
	int rv = 0;

	mr = xiw_mr_get(qp->xdev, stag);
	if (!mr)
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->stag != stag) {
		rv = -EINVAL;
	} else if (mr->ibmr.pd != qp->ibqp.pd ||
		   !xiw_mr_may_invalidate(mr, qp, remote)) {
		rv = -EACCES;
	} else {
		write_seqcount_begin(&mr->seq);
		mr->valid = false;
		write_seqcount_end(&mr->seq);
		if (mr->type == XIW_MR_MW)
			swap(parent, mr->parent);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	if (parent)
		xiw_mr_put(parent);
	xiw_mr_put(mr);
	return rv;
}

/*
 * Execute a REG_MR: lkey is the MR's lkey when it was posted (it names
 * the MR; the key byte must still be current), stag its new STag, same
 * index. Registering an STag that is valid is an error (RFC 5040 calls
 * for invalidation first).
 */
int xiw_mr_fastreg(struct xiw_device *xdev, struct ib_pd *pd, u32 lkey,
		   u32 stag, int access)
{
	unsigned long flags;
	struct xiw_mr *mr;
	int rv;

	if ((lkey ^ stag) >> 8)
		return -EINVAL;
	rv = xiw_mr_access_ok(access);
	if (rv)
		return rv == -EOPNOTSUPP ? -EINVAL : rv;

	rcu_read_lock();
	mr = xa_load(&xdev->mr_xa, lkey >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->type != XIW_MR_FRMR || READ_ONCE(mr->ibmr.lkey) != lkey) {
		rv = -EINVAL;
	} else if (mr->ibmr.pd != pd) {
		rv = -EACCES;
	} else if (mr->valid) {
		rv = -EINVAL;
	} else {
		write_seqcount_begin(&mr->seq);
		if (mr->staged_new) {
			swap(mr->pages, mr->staged);
			mr->npages = mr->staged_npages;
			mr->fbo = mr->staged_fbo;
			mr->page_shift = mr->staged_shift;
			mr->staged_new = false;
		}
		/* Taken now: a consumer may adjust iova after mapping. */
		mr->iova = READ_ONCE(mr->ibmr.iova);
		mr->length = READ_ONCE(mr->ibmr.length);
		if (mr->iova + mr->length < mr->iova ||
		    mr->length + mr->fbo >
		    ((u64)mr->npages << mr->page_shift)) {
			rv = -EINVAL;
		} else {
			mr->access = access;
			WRITE_ONCE(mr->stag, stag);
			WRITE_ONCE(mr->ibmr.lkey, stag);
			WRITE_ONCE(mr->ibmr.rkey, stag);
			mr->valid = true;
		}
		write_seqcount_end(&mr->seq);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	xiw_mr_put(mr);
	return rv;
}
