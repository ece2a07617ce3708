// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue memory shared with user space: allocation, mmap and release.
 * The slot protocol itself is described in include/uapi/rdma/xiw-abi.h.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_fault.h"

static size_t xiw_ring_bytes(u32 num, u32 slot_size)
{
	return PAGE_ALIGN(sizeof(struct xiw_ring_ctrl) +
			  (size_t)num * slot_size);
}

/*
 * Allocate a ring of num (a power of two) slots. With udata it is
 * published for mmap and *key receives the offset to map it at.
 */
int xiw_ring_alloc(struct xiw_ring *ring, u32 num, u32 slot_size,
		   struct ib_udata *udata, u64 *key)
{
	size_t bytes = xiw_ring_bytes(num, slot_size);
	struct xiw_ucontext *uctx;
	struct xiw_mmap_entry *e;
	int rv;

	memset(ring, 0, sizeof(*ring));
	ring->mem = xiw_fault(XIW_FAULT_RING) ? NULL : vmalloc_user(bytes);
	if (!ring->mem)
		return -ENOMEM;
	ring->ctrl = ring->mem;
	ring->num = num;
	ring->slot_size = slot_size;
	if (!udata)
		return 0;

	uctx = rdma_udata_to_drv_context(udata, struct xiw_ucontext, ibuc);
	e = xiw_fault(XIW_FAULT_RING_MMAP) ? NULL : kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		rv = -ENOMEM;
		goto err_mem;
	}
	e->mem = ring->mem;
	rv = rdma_user_mmap_entry_insert(&uctx->ibuc, &e->rdma, bytes);
	if (rv) {
		kfree(e);
		goto err_mem;
	}
	ring->mmap = &e->rdma;
	*key = rdma_user_mmap_get_offset(&e->rdma);
	return 0;

err_mem:
	vfree(ring->mem);
	ring->mem = NULL;
	return rv;
}

/* A user ring's memory belongs to its mmap entry (see struct xiw_ring). */
void xiw_ring_free(struct xiw_ring *ring)
{
	if (ring->mmap)
		rdma_user_mmap_entry_remove(ring->mmap);
	else
		vfree(ring->mem);
	ring->mem = NULL;
	ring->ctrl = NULL;
	ring->mmap = NULL;
}

int xiw_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct xiw_mmap_entry *e;
	int rv;

	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	e = container_of(rdma, struct xiw_mmap_entry, rdma);
	/* The core checked the length against the entry. */
	rv = remap_vmalloc_range(vma, e->mem, 0);
	rdma_user_mmap_entry_put(rdma);
	return rv;
}

void xiw_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct xiw_mmap_entry *e = container_of(rdma, struct xiw_mmap_entry,
						rdma);

	vfree(e->mem);
	kfree(e);
}

/*
 * Produce one receive entry into a kernel consumer's RQ or SRQ ring, as
 * a provider does into a user one. The caller holds the queue's lock.
 */
int xiw_rqe_post(struct xiw_ring *ring, u32 max_sge,
		 const struct ib_recv_wr *wr)
{
	struct xiw_rqe *rqe = xiw_ring_slot(ring, ring->prod);
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	/* Acquire: the consumer's copy of the slot is done. */
	if (smp_load_acquire(&rqe->flags) & XIW_SLOT_VALID)
		return -ENOMEM;
	rqe->num_sge = wr->num_sge;
	memset(rqe->reserved, 0, sizeof(rqe->reserved));
	rqe->wr_id = wr->wr_id;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	/* Release: the entry is complete before it is valid. */
	smp_store_release(&rqe->flags, XIW_SLOT_VALID);
	ring->prod++;
	return 0;
}
