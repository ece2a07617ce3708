/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * xiw: software iWARP (RFC 5040/5041/5044/6581/7306) over kernel TCP.
 * Private declarations shared by the driver's files.
 */
#ifndef XIW_H
#define XIW_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/xiw-abi.h>

#define XIW_NODE_DESC "xiw software iWARP"

/*
 * Device limits, published by query_device. They are chosen, not
 * inherited: each one is the bound that object creation enforces (see
 * Documentation/limits.rst, which must change with them).
 */
#define XIW_MAX_QP		4096
#define XIW_MAX_QP_WR		16384
/* XIW_MAX_SGE and XIW_MAX_INLINE are ABI: see xiw-abi.h. */
#define XIW_MAX_SGE_RD		XIW_MAX_SGE
#define XIW_MAX_CQ		4096
#define XIW_MAX_CQE		65536
#define XIW_MAX_MR		65536
#define XIW_MAX_MR_SIZE		BIT_ULL(40)
#define XIW_MAX_PD		65536
#define XIW_MAX_SRQ		1024
#define XIW_MAX_SRQ_WR		16384
#define XIW_MAX_IRD		32
#define XIW_MAX_ORD		32
#define XIW_MAX_FRMR_PAGES	4096

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
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_mr;
	struct xarray qp_xa;		/* QP number -> xiw_qp */
	struct xarray mr_xa;		/* STag index -> xiw_mr */
	u32 qp_next, mr_next;		/* cyclic allocation cursors */
};

struct xiw_ucontext {
	struct ib_ucontext ibuc;
};

struct xiw_pd {
	struct ib_pd ibpd;
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
	spinlock_t lock;		/* the ring's producer side */
	struct xiw_ring ring;
	bool overflowed;		/* CQ_ERR raised; under lock */
};

struct xiw_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* the ring's consumer side, limit */
	struct xiw_ring ring;
	u32 max_sge;
	u32 limit;			/* armed when non-zero */
};

struct xiw_qp {
	struct ib_qp ibqp;
	struct xiw_device *xdev;
	struct mutex state_lock;	/* serialises modify_qp */
	enum ib_qp_state state;		/* written under state_lock and both
					 * queue locks; read under either
					 */
	spinlock_t sq_lock;		/* SQ consumer side */
	spinlock_t rq_lock;		/* RQ consumer side */
	struct xiw_ring sq;
	struct xiw_ring rq;		/* unused with an SRQ */
	struct xiw_cq *scq, *rcq;
	struct xiw_srq *srq;
	struct ib_qp_cap cap;		/* as enforced */
	bool sig_all;
	u8 ird, ord;
	int access;			/* IB_ACCESS_REMOTE_* granted */
};

enum xiw_mr_type {
	XIW_MR_USER,
};

struct xiw_mr {
	struct ib_mr ibmr;
	enum xiw_mr_type type;
	struct ib_umem *umem;
	int access;
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
void *xiw_ring_slot(const struct xiw_ring *ring, u32 idx);
int xiw_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void xiw_mmap_free(struct rdma_user_mmap_entry *rdma);

/* xiw_cq.c */
int xiw_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata);
int xiw_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
void xiw_cq_add(struct xiw_cq *cq, const struct xiw_cqe *cqe);

/* xiw_qp.c */
int xiw_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		  struct ib_udata *udata);
int xiw_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int xiw_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int xiw_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
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
int xiw_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

#endif /* XIW_H */
