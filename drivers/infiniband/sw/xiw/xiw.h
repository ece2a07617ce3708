/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * xiw: software iWARP (RFC 5040/5041/5044/6581/7306) over kernel TCP.
 * Private declarations shared by the driver's files.
 */
#ifndef XIW_H
#define XIW_H

#include <linux/bits.h>
#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/xiw-abi.h>

#include "xiw_compat.h"
#include "xiw_atomic.h"
#include "xiw_wire.h"
#include "xiw_counters.h"

#define XIW_NODE_DESC "xiw software iWARP"
/* No IEEE OUI is assigned to xiw: the "none" value rxe reports too. */
#define XIW_VENDOR_ID		0xffffff

/*
 * Device limits, published by query_device. They are chosen, not
 * inherited: each one is the bound that object creation enforces (see
 * Documentation/limits.rst, which must change with them).
 */
#define XIW_MAX_QP		4096
#define XIW_MAX_QP_WR		16384
/* XIW_MAX_SGE, XIW_MAX_RECV_SGE and XIW_MAX_INLINE are ABI: xiw-abi.h. */
#define XIW_MAX_SGE_RD		XIW_MAX_SGE
#define XIW_MAX_CQ		4096
#define XIW_MAX_CQE		BIT(20)
#define XIW_MAX_MR		65536
/* The rights a peer may be given: an MR's remote ones, a window's all. */
#define XIW_REMOTE_ACCESS	(IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)
/* Memory windows share the STag space with MRs but not the count. */
#define XIW_MAX_MW		65536
#define XIW_MAX_MR_SIZE		BIT_ULL(40)
#define XIW_MAX_PD		65536
#define XIW_MAX_SRQ		1024
#define XIW_MAX_SRQ_WR		16384
/* Ceilings of IRD and ORD; max_ird/max_ord (xiw_cm.c) set the limits. */
#define XIW_MAX_IRD		128
#define XIW_MAX_ORD		128
#define XIW_MAX_FRMR_PAGES	4096

/*
 * Work request opcodes only a kernel consumer can post; they never come
 * from a user ring (the transmit path refuses them there).
 *   XIW_WR_REG_MR: ex = the MR's current lkey, rkey = the STag to give
 *   it (same index, new key), compare_add = IB_ACCESS_* granted.
 */
#define XIW_WR_REG_MR		0x80

/*
 * The CQE opcode of a completed XIW_WR_REG_MR (IB_WC_REG_MR to a kernel
 * consumer). Outside the ibv_wc_opcode values so that it can never be
 * mistaken for one; user CQs never see it.
 */
#define XIW_WC_REG_MR		0x40

/* Object ids: 24 bits, as an STag's index and a QP number are. */
#define XIW_ID_LIMIT		XA_LIMIT(1, (1U << 24) - 1)

struct xiw_device {
	struct ib_device ibdev;		/* first: ib_alloc_device() contract */
	struct net_device *netdev;	/* held by netdev_tracker until dealloc */
	netdevice_tracker netdev_tracker;
	struct list_head list;		/* on xiw_devices, see xiw_dev.c */
	enum ib_port_state reported;	/* last port state raised as an event;
					 * written under RTNL only
					 */
	u32 max_ird, max_ord;		/* max_ird/max_ord at creation */
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_mr;
	atomic_t num_mw;
	atomic_t num_conn;		/* xiw_cm_conn.c: allocated, not released */
	struct xarray qp_xa;		/* QP number -> xiw_qp */
	struct xarray mr_xa;		/* STag index -> xiw_mr (MRs, windows) */
	u32 qp_next, mr_next;		/* cyclic allocation cursors */
	struct xiw_counters __percpu *counters;	/* xiw_counters.c */
};

struct xiw_ucontext {
	struct ib_ucontext ibuc;
};

struct xiw_pd {
	struct ib_pd ibpd;
	/*
	 * The QP whose user doorbell rang last on this PD (0: none yet), and
	 * when one rang after another QP's (jiffies): whether a poster drives
	 * one QP or several (xiw_tx_doorbell). Written without a lock: a
	 * hint, which a race can only make wrong for one doorbell.
	 */
	u32 db_qpn;
	unsigned long db_multi_at;
};

/*
 * A queue shared with user space (or kept for a kernel consumer): the
 * layout of xiw-abi.h, a struct xiw_ring_ctrl then num slots. 'mem' is
 * vmalloc_user memory; for a user queue it is owned by its mmap entry and
 * freed with it (xiw_mmap_free). A mapping holds its own references on
 * the pages (remap_vmalloc_range), so a process that still has a ring
 * mapped after destroying its object keeps pages nobody else uses.
 */
struct xiw_ring {
	void *mem;
	struct xiw_ring_ctrl *ctrl;
	u32 num;			/* slots, a power of two */
	u32 slot_size;
	u32 cons;			/* kernel's index when it consumes */
	u32 prod;			/* kernel's index when it produces */
	struct rdma_user_mmap_entry *mmap;	/* NULL for kernel queues */
};

struct xiw_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *mem;
};

struct xiw_cq {
	struct ib_cq ibcq;
	/*
	 * The ring's producer side; for a kernel CQ also its consumer side
	 * and its arm word (IRQ-safe: consumers poll from any context).
	 */
	spinlock_t lock;
	struct xiw_ring ring;
	bool overflowed;		/* CQ_ERR raised; under lock */
};

struct xiw_srq {
	struct ib_srq ibsrq;
	/* The ring's consumer side, limit; a kernel SRQ's producer side. */
	spinlock_t lock;
	struct xiw_ring ring;
	u32 max_sge;
	u32 limit;			/* armed when non-zero */
	bool kernel;			/* posted through xiw_post_srq_recv */
};

struct xiw_conn;

/* What MPA start-up settled for a connection (xiw_cm_mpa.c). */
struct xiw_mpa_params {
	u8 rev;			/* 1 or 2 */
	bool crc;		/* CRC32c in every FPDU, both ways */
	bool responder;		/* passive side: MPA-12 applies */
	u8 rtr;			/* RDMAP opcode + 1 of the peer-to-peer
				 * ready-to-receive message, 0: none
				 */
	u16 rtr_offered;	/* initiator: BIT(opcode) offered */
	u16 ird, ord;		/* negotiated depths */
	bool mrk_tx;		/* markers in what we send: the peer's M */
	bool mrk_rx;		/* markers in what we receive: our M */
};

/* A send queue entry between its consumption and its completion. */
struct xiw_sq_pend {
	u64 wr_id;
	u32 byte_len;
	u8 opcode;		/* completion opcode */
	u8 status;		/* enum ib_wc_status */
	bool signaled;
	bool done;
};

/*
 * An RDMA Read or an Atomic Request we sent and whose Response we expect
 * (ORQ: the two share the ORD, RFC 7306 section 5.2).
 */
struct xiw_orq_entry {
	struct xiw_sqe sqe;	/* validated copy: the local sink */
	u32 sq_idx;		/* its SQ slot, or U32_MAX for the RTR */
	u32 len;		/* bytes asked for */
	u32 got;		/* bytes placed so far */
	u32 sink_stag;
	u64 sink_to;
	bool atomic;		/* an Atomic Request: a QN 3 Response */
	u32 msn;		/* its QN 1 MSN (an atomic's Request ID) */
};

/*
 * An RDMA Read Request or an Atomic Request received and not yet
 * answered (IRQ). Both are answered in the order they came, from tx; an
 * atomic operation is carried out there too, just before its Response
 * (RFC 7306 section 7: a later request waits for an earlier Response).
 */
struct xiw_irq_entry {
	struct xiw_mr *mr;	/* referenced; NULL for zero length */
	u64 src_to;		/* Read source, or the atomic's target */
	u32 len;
	u32 sink_stag;
	u64 sink_to;
	bool atomic;
	u8 aop;			/* RDMAP_AOP_* */
	u32 req_id;
	u64 add_swap, add_swap_mask, compare, compare_mask;
};

/*
 * The state both directions of a connected QP share (xiw_tx.c,
 * xiw_rx.c). Set up when the connection reaches RTS, torn down by
 * xiw_qp_stop_wire() once no socket callback can run any more.
 */
struct xiw_wire {
	/* orq, irq, hold, the term flags here and xiw_tx's term */
	spinlock_t lock;
	struct socket *sock;
	struct xiw_mpa_params mpa;
	bool hold;			/* responder: send nothing before the
					 * first FPDU arrives (MPA-12)
					 */
	bool rtr_pending;		/* initiator: RTR goes first */
	/*
	 * Rings sized at RTS to the negotiated ORD and IRD, rounded up to a
	 * power of two (index & mask); kept until the QP goes.
	 */
	struct xiw_orq_entry *orq;
	u32 orq_mask;
	u32 orq_head, orq_tail;		/* free-running */
	struct xiw_irq_entry *irq;
	u32 irq_mask;
	u32 irq_head, irq_tail;
	bool term_pending;		/* a Terminate (xiw_tx.term) waits */
	bool term_sent;			/* nothing may follow it */
};

struct xiw_tx;
struct xiw_rx;

struct xiw_qp {
	struct ib_qp ibqp;
	struct xiw_device *xdev;
	/*
	 * References: one owned by the QP's creator (dropped by destroy_qp,
	 * which then waits for 'released'), one for each iw_add_ref of the
	 * iWARP CM, one held by an attached connection.
	 */
	refcount_t ref;
	/*
	 * The event of the first error found since RTS, if it was deferred
	 * (XIW_NO_EVENT: none): raised whoever moves the QP to ERR first.
	 */
	int err_ev;
	struct completion released;
	struct mutex state_lock;	/* serialises modify_qp */
	enum ib_qp_state state;		/* written under state_lock and both
					 * queue locks; read under either
					 */
	spinlock_t sq_lock;		/* SQ consumer side (and producer side
					 * of a kernel QP)
					 */
	spinlock_t rq_lock;		/* RQ likewise */
	struct xiw_ring sq;
	struct xiw_ring rq;		/* unused with an SRQ */
	struct xiw_cq *scq, *rcq;
	struct xiw_srq *srq;
	struct ib_qp_cap cap;		/* as enforced */
	bool sig_all;
	u8 ird, ord;
	int access;			/* IB_ACCESS_REMOTE_* granted */
	bool access_set;		/* by the consumer: see xiw_modify_qp */
	bool kernel;			/* no user rings: a kernel consumer */
	/*
	 * The wire holds both queues (RTS until xiw_qp_stop_wire): an ERR
	 * or RESET flush waits for it. Written under state_lock and both
	 * queue locks; read under either queue lock.
	 */
	bool wq_held;

	/* SQ entries between consumption and completion, under sq_lock */
	u32 sq_comp;			/* next to complete; <= sq.cons */
	struct xiw_sq_pend *sq_pend;	/* sq.num entries */

	/* The wire, see xiw_cm.c, xiw_tx.c, xiw_rx.c. */
	struct xiw_conn *conn;		/* under state_lock */
	/* A fatal error found where state_lock cannot be taken */
	struct work_struct err_work;
	unsigned long err_pending;	/* bit 0: err_work queued */
	struct xiw_wire wire;
	struct xiw_tx *tx;
	struct xiw_rx *rx;
	struct xiw_qp_diag diag;	/* xiw_counters.c */
	struct xiw_qp_counts counts;	/* xiw_counters.c */
};

enum xiw_mr_type {
	XIW_MR_USER,		/* pinned user pages (ib_umem) */
	XIW_MR_DMA,		/* kernel virtual addresses, any length */
	XIW_MR_FRMR,		/* a page list set by map_mr_sg + REG_MR */
	XIW_MR_MW,		/* a memory window: part of a user MR (xiw_mw.c) */
};

struct xiw_mr {
	struct ib_mr ibmr;
	enum xiw_mr_type type;
	struct ib_umem *umem;		/* XIW_MR_USER */
	struct page **upages;		/* XIW_MR_USER: its pinned pages */
	size_t nupages;
	int access;
	/*
	 * One reference owned by the registration, one for each data path
	 * user between xiw_mr_get() and xiw_mr_put(). A reference keeps the
	 * structure; the pages are used under RCU (xiw_mem.c). A kernel
	 * MR's dereg waits for 'released'; a user MR's last put frees it.
	 */
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;		/* xiw_mr_get may still be looking */
	/*
	 * 'lock' (IRQ-safe) guards the registration state below, which the
	 * work request engine changes (fast register, invalidate) while the
	 * receive path checks it. 'stag' is also read without the lock, by
	 * xiw_mr_get, only to find the MR; every decision is taken again
	 * under the lock or 'seq'. It is our copy of the STag:
	 * ib_update_fast_reg_key rewrites ibmr.lkey/rkey before the REG_MR
	 * that makes them true.
	 */
	spinlock_t lock;
	/*
	 * Bumped under 'lock' around every change of 'valid' and of what
	 * it guards, so the data path can check an MR (not a window)
	 * without taking the lock: xiw_mr_check().
	 */
	seqcount_spinlock_t seq;
	u32 stag;
	/* A user MR's last data path use: the grace-period cookie of then. */
	bool used;
	unsigned long used_gp;
	bool valid;			/* STag usable (USER, DMA: until dereg
					 * or a LOCAL_INV; FRMR: REG_MR to
					 * invalidation)
					 */
	/*
	 * FRMR: 'pages' is the page list of the registration in force,
	 * kernel addresses of page_size blocks, the first one entered
	 * 'fbo' bytes in; 'iova'/'length' as they were at REG_MR time.
	 * map_mr_sg fills 'staged' instead, which REG_MR swaps in: a
	 * consumer may map the next buffer before its LOCAL_INV of the
	 * previous one has run (rdma_rw does), and the pages in force must
	 * not change under an access that is still allowed.
	 */
	u64 *pages;
	u32 max_pages, npages;
	u32 fbo;
	u8 page_shift;
	u64 iova, length;
	u64 *staged;
	u32 staged_npages, staged_fbo;
	u8 staged_shift;
	bool staged_new;		/* map_mr_sg since the last REG_MR */
	/*
	 * XIW_MR_MW, under 'lock': the user MR the window is bound to
	 * (referenced while bound; NULL while unbound), the window's type
	 * (IB_MW_TYPE_1 or _2) and, for type 2, the QP it was bound through,
	 * the only one a peer may reach it by. 'iova', 'length' and
	 * 'access' are the bound range and rights.
	 */
	struct xiw_mr *parent;
	u8 mw_type;
	u32 mw_qpn;
};

/* What the uverbs core allocates for a window; the window is 'mr'. */
struct xiw_mw {
	struct ib_mw ibmw;
	struct xiw_mr *mr;
};

static inline struct xiw_device *to_xdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct xiw_device, ibdev);
}

static inline struct xiw_cq *to_xcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct xiw_cq, ibcq);
}

static inline struct xiw_qp *to_xqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct xiw_qp, ibqp);
}

static inline struct xiw_srq *to_xsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct xiw_srq, ibsrq);
}

static inline struct xiw_mr *to_xmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct xiw_mr, ibmr);
}

static inline struct xiw_mw *to_xmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct xiw_mw, ibmw);
}

/* xiw_dev.c */
int xiw_dev_init(void);
void xiw_dealloc_driver(struct ib_device *ibdev);
void xiw_dev_exit(void);

/* xiw_verbs.c */
extern const struct ib_device_ops xiw_dev_ops;
enum ib_port_state xiw_port_state(const struct xiw_device *xdev);
bool xiw_count_get(atomic_t *count, int limit);

/* xiw_ring.c */
int xiw_ring_alloc(struct xiw_ring *ring, u32 num, u32 slot_size,
		   struct ib_udata *udata, u64 *key);
void xiw_ring_free(struct xiw_ring *ring);

/* The slot for a free-running index. */
static inline void *xiw_ring_slot(const struct xiw_ring *ring, u32 idx)
{
	return (u8 *)ring->mem + sizeof(struct xiw_ring_ctrl) +
	       (size_t)(idx & (ring->num - 1)) * ring->slot_size;
}

/*
 * Copy an SQ or RQ entry out of its slot, which the producer (user
 * space, or a kernel consumer's post) filled: the fixed part, then only
 * the SGEs or inline bytes that part's own counts say are used, each
 * count capped at its array. A bad count so copies no more than the
 * slot holds, and the checks that read the copy refuse it. The copy's
 * other SGE bytes keep an earlier entry's, which nothing reads: every
 * reader stops at the copied count (or at one SGE where it needs one).
 * Most entries carry one SGE of the up to eight a slot has room for.
 */
static __always_inline void xiw_sqe_copy(struct xiw_sqe *to,
					 const struct xiw_sqe *from)
{
	u32 i, n;

	memcpy(to, from, offsetof(struct xiw_sqe, sge));
	if (to->flags & XIW_WQE_INLINE) {
		memcpy(to->sge, from->sge,
		       min_t(u32, to->inline_len, sizeof(to->sge)));
		return;
	}
	n = min_t(u32, to->num_sge, ARRAY_SIZE(to->sge));
	for (i = 0; i < n; i++)
		to->sge[i] = from->sge[i];
}

static __always_inline void xiw_rqe_copy(struct xiw_rqe *to,
					 const struct xiw_rqe *from)
{
	u32 i, n;

	memcpy(to, from, offsetof(struct xiw_rqe, sge));
	n = min_t(u32, to->num_sge, ARRAY_SIZE(to->sge));
	for (i = 0; i < n; i++)
		to->sge[i] = from->sge[i];
}

int xiw_rqe_post(struct xiw_ring *ring, u32 max_sge,
		 const struct ib_recv_wr *wr);
int xiw_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void xiw_mmap_free(struct rdma_user_mmap_entry *rdma);

/* xiw_cq.c (xiw_create_cq(): xiw_compat.h) */
int xiw_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int xiw_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void xiw_cq_add(struct xiw_cq *cq, const struct xiw_cqe *cqe);

/* xiw_qp.c */
int xiw_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		  struct ib_udata *udata);
int xiw_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int xiw_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* xiw_qp_state.c */
int xiw_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);

/* xiw_qp_post.c */
int xiw_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int xiw_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);

/* xiw_srq.c */
int xiw_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		   struct ib_udata *udata);
int xiw_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int xiw_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int xiw_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

/* xiw_mem.c */
struct ib_mr *xiw_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
			      u64 iova, int access, struct ib_udata *udata);
struct ib_mr *xiw_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				u64 len, u64 iova, int access,
				struct ib_pd *ibpd, struct ib_udata *udata);
int xiw_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *xiw_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *xiw_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg);
int xiw_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		  unsigned int *sg_offset);
/*
 * The data path's view of memory. xiw_mr_get: the MR named by a whole
 * STag (index and key), referenced, or NULL. xiw_mr_check: 0 if
 * [addr, addr + len) lies inside a valid mr of qp's PD and mr grants
 * access (IB_ACCESS_* bits; 0 for a local read), else -EINVAL for
 * bounds, -EACCES for rights or PD, -ENOENT for an invalidated STag; a
 * window grants remote access only, a type 2 window only through the QP
 * that bound it, and only while its MR is valid.
 * xiw_mr_bvec: the range as page pieces, at most max of them, none
 * crossing a page, to be used inside the caller's RCU read-side section
 * (or through page references taken there); returns how many, or
 * -E2BIG (also -EINVAL out of bounds, -ENOENT if invalidated or
 * deregistered meanwhile, -EFAULT for a DMA MR address that is no
 * kernel memory). xiw_mr_invalidate: LOCAL_INV (remote false)
 * or Send/Read with Invalidate (remote true) of stag on qp: -EINVAL if no
 * MR has that STag, -EACCES for another PD, a type 1 window, a type 2
 * window bound through another QP or, remotely, an MR that is not an
 * FRMR; a user QP may invalidate type 2 windows only. Invalidating an
 * invalid STag succeeds. xiw_mr_fastreg: executes an
 * XIW_WR_REG_MR work request: -EINVAL unless lkey is the FRMR's current
 * lkey, stag keeps its index, the rights are sound and the MR is not
 * valid; -EACCES for another PD.
 */
struct xiw_mr *xiw_mr_get(struct xiw_device *xdev, u32 stag);
void xiw_mr_release(struct xiw_mr *mr);

/* Every message puts the MRs it used: the last put only is a call. */
static inline void xiw_mr_put(struct xiw_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		xiw_mr_release(mr);
}

int xiw_mr_check(struct xiw_mr *mr, const struct xiw_qp *qp, u64 addr,
		 u64 len, int access);
int xiw_mr_bvec(struct xiw_mr *mr, u64 addr, u32 len, struct bio_vec *bv,
		int max);
int xiw_mr_invalidate(const struct xiw_qp *qp, u32 stag, bool remote);
int xiw_mr_word(struct xiw_mr *mr, u64 addr, struct bio_vec *bv);
u64 xiw_atomic_exec(const struct bio_vec *bv, u8 aop, u64 add_swap,
		    u64 add_swap_mask, u64 compare, u64 compare_mask);
int xiw_mr_fastreg(struct xiw_device *xdev, struct ib_pd *pd, u32 lkey,
		   u32 stag, int access);
/* Internal to xiw_mem.c and xiw_mw.c. */
int xiw_mr_add(struct xiw_device *xdev, struct xiw_mr *mr);
void xiw_mr_free(struct xiw_mr *mr);
bool xiw_mr_in_bounds(const struct xiw_mr *mr, u64 addr, u64 len);

/*
 * xiw_mw.c: memory windows (user space only). xiw_mw_bind executes an
 * IB_UVERBS_WR_BIND_MW SQ entry of qp: 0, or -EINVAL for a bind the
 * rules refuse (wrong window, MR, PD, QP, range or rights).
 */
int xiw_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int xiw_dealloc_mw(struct ib_mw *ibmw);
int xiw_mw_bind(struct xiw_qp *qp, const struct xiw_sqe *sqe);

/* xiw_cq.c (kernel consumers) */
int xiw_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int xiw_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* xiw_srq.c (kernel consumers) */
int xiw_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

/* xiw_qp.c */
void xiw_qp_get(struct xiw_qp *qp);
void xiw_qp_put(struct xiw_qp *qp);
void xiw_qp_add_ref(struct ib_qp *ibqp);
void xiw_qp_rem_ref(struct ib_qp *ibqp);
struct ib_qp *xiw_get_qp(struct ib_device *ibdev, int qpn);

/* xiw_qp_state.c */
void xiw_sq_retire(struct xiw_qp *qp);
int xiw_qp_conn_established(struct xiw_qp *qp, struct xiw_conn *conn,
			    struct socket *sock,
			    const struct xiw_mpa_params *mpa);
void xiw_qp_conn_lost(struct xiw_qp *qp, struct xiw_conn *conn);
void xiw_qp_stop_wire(struct xiw_qp *qp, bool drain);
void xiw_qp_error(struct xiw_qp *qp, enum ib_event_type ev);
void xiw_qp_error_defer(struct xiw_qp *qp, enum ib_event_type ev);
void xiw_qp_event(struct xiw_qp *qp, enum ib_event_type type);

#define XIW_NO_EVENT	(-1)

/* xiw_cm.c */
extern const struct ib_device_ops xiw_cm_ops;
int xiw_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param);
int xiw_iw_create_listen(struct iw_cm_id *cm_id, int backlog);
int xiw_iw_destroy_listen(struct iw_cm_id *cm_id);

/* xiw_cm_mpa.c */
int xiw_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param);
int xiw_iw_reject(struct iw_cm_id *cm_id, const void *pd, u8 pd_len);

/* xiw_cm_conn.c */
extern struct workqueue_struct *xiw_data_wq;
extern struct workqueue_struct *xiw_tx_wq;
int xiw_cm_init(void);
void xiw_cm_exit(void);
void xiw_cm_dev_stop(struct xiw_device *xdev);
void xiw_cm_qp_closing(struct xiw_conn *conn, bool abort, bool queue);
void xiw_cm_qp_closing_kick(struct xiw_conn *conn);
void xiw_cm_qp_closing_now(struct xiw_conn *conn);
void xiw_cm_conn_get(struct xiw_conn *conn);
void xiw_cm_conn_put(struct xiw_conn *conn);

/* xiw_mpa.c, after the MPA arithmetic every FPDU uses (inline) */

/*
 * MPA-23 (RFC 5044 section 4.5): the largest ULPDU of an FPDU that fits
 * one segment of emss bytes; with markers, room for the most markers
 * such a segment can hold. The emss % 4 keeps the padded FPDU within
 * emss. Never below 128, and capped below 2^16 on a four-byte boundary
 * so that the length field holds it with its pad.
 */
static inline u32 xiw_mpa_mulpdu(u32 emss, bool markers)
{
	u32 over = MPA_HDR_LEN + MPA_CRC_LEN + emss % 4;

	if (markers)
		over += MPA_MARKER_LEN * DIV_ROUND_UP(emss, MPA_MARKER_INTERVAL);
	return clamp_t(u32, emss > over ? emss - over : 0, MPA_MIN_MULPDU,
		       U16_MAX & ~3U);
}

/*
 * Bytes from stream position pos (counted from the start of full
 * operation, markers included) to the next marker; 0 when one starts at
 * pos. u32 wraps as TCP sequence numbers do and 512 divides 2^32, so the
 * count stays right across the wrap (section 4.3).
 */
static inline u32 xiw_mpa_to_marker(u32 pos)
{
	return -pos & (MPA_MARKER_INTERVAL - 1);
}

u32 xiw_mpa_crc_bvec(u32 crc, const struct bio_vec *bv, u32 len);
struct dentry;
void xiw_mpa_crc_init(struct dentry *dir);
extern bool xiw_crc_table;

/* CRC32c continued from crc over len bytes, by crc_impl's choice. */
static inline u32 xiw_crc32c(u32 crc, const void *p, unsigned int len)
{
	if (READ_ONCE(xiw_crc_table))
		return __crc32c_le(crc, p, len);
	return crc32c(crc, p, len);
}

/* xiw_tx.c */
int xiw_tx_create(struct xiw_qp *qp);
void xiw_tx_destroy(struct xiw_qp *qp);
void xiw_tx_sets_free(void);
int xiw_tx_own_pages_init(void);
void xiw_tx_own_pages_hold(void);
void xiw_tx_own_pages_release(void);
void xiw_tx_own_pages_debugfs(struct dentry *dir);
void xiw_tx_own_pages_free(void);
/* The larger transmit arrays a connection with markers needs. */
struct xiw_tx_arrays {
	struct bio_vec *bv;
	struct page **pinned;
	struct mpa_marker *mrk;
};

int xiw_tx_arrays_alloc(struct xiw_qp *qp, bool markers,
			struct xiw_tx_arrays *a);
void xiw_tx_arrays_use(struct xiw_qp *qp, struct xiw_tx_arrays *a);
void xiw_tx_arrays_free(struct xiw_tx_arrays *a);
void xiw_tx_start(struct xiw_qp *qp);
void xiw_tx_stop(struct xiw_qp *qp);
void xiw_tx_flush(struct xiw_qp *qp);
bool xiw_tx_busy(struct xiw_qp *qp);
void xiw_tx_kick(struct xiw_qp *qp);
void xiw_tx_continue(struct xiw_qp *qp);
void xiw_tx_kick_queued(struct xiw_qp *qp);
void xiw_sq_done(struct xiw_qp *qp, u32 idx, u8 status);
void xiw_tx_doorbell(struct xiw_qp *qp);

/* xiw_tx_msg.c */
void xiw_tx_terminate(struct xiw_qp *qp, u8 layer_etype, u8 ecode,
		      const void *hdr, u32 hdr_len, u32 seg_len);

/* xiw_rx.c */
int xiw_rx_create(struct xiw_qp *qp);
void xiw_rx_destroy(struct xiw_qp *qp);
void xiw_rx_start(struct xiw_qp *qp);
void xiw_rx_stop(struct xiw_qp *qp, bool drain);
void xiw_rx_kick(struct xiw_qp *qp);
void xiw_rx_catch_up(struct xiw_qp *qp);
void xiw_rx_data_ready(struct xiw_qp *qp, struct sock *sk);

/* xiw_cm.c: the IRD/ORD limits (module parameters max_ird, max_ord). */
u32 xiw_max_ird(void);
u32 xiw_max_ord(void);

/* Inline helpers of the data path, every message's. */

/*
 * Count on the QP (struct xiw_qp_counts) a counter that one context at
 * a time adds to: the transmit pass (under its lock) or receive (under
 * the socket's lock). A load, an add and a store, not a locked add on
 * every FPDU; a reader on another CPU still sees a whole 64-bit value.
 */
static inline void xiw_qp_count_own_add(struct xiw_qp *qp,
					enum xiw_counter c, u64 n)
{
	atomic64_t *v = &qp->counts.v[c];

	atomic64_set(v, atomic64_read(v) + n);
}

/*
 * Whole FPDUs: MPA header, ULPDU, pad, CRC and the markers among them.
 * Called from the transmit pass only.
 */
static inline void xiw_count_tx_fpdu(struct xiw_qp *qp, u32 bytes)
{
	xiw_count(qp->xdev, TX_FPDUS);
	xiw_count_add(qp->xdev, TX_BYTES, bytes);
	xiw_qp_count_own_add(qp, XIW_CNT_TX_FPDUS, 1);
	xiw_qp_count_own_add(qp, XIW_CNT_TX_BYTES, bytes);
}

/* Called from receive only (under the socket's lock). */
static inline void xiw_count_rx_fpdu(struct xiw_qp *qp, u32 bytes)
{
	xiw_count(qp->xdev, RX_FPDUS);
	xiw_count_add(qp->xdev, RX_BYTES, bytes);
	xiw_qp_count_own_add(qp, XIW_CNT_RX_FPDUS, 1);
	xiw_qp_count_own_add(qp, XIW_CNT_RX_BYTES, bytes);
}

/*
 * Completion opcode for a send queue entry (taken, or flushed). A
 * user ring holding XIW_WR_REG_MR holds garbage, flushed as a Send.
 */
static inline u8 xiw_sq_wc_opcode(u8 wr_opcode, bool kernel)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_UVERBS_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_RDMA_READ_WITH_INV:
		return IB_UVERBS_WC_RDMA_READ;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_UVERBS_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_UVERBS_WC_BIND_MW;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_UVERBS_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_UVERBS_WC_FETCH_ADD;
	case XIW_WR_REG_MR:
		return kernel ? XIW_WC_REG_MR : IB_UVERBS_WC_SEND;
	default:
		return IB_UVERBS_WC_SEND;
	}
}

#endif /* XIW_H */
