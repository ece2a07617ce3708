/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * The ABI between the xiw kernel driver and its user-space provider
 * (libxiw-rdmav34.so). Only fixed-width types and explicit padding: every
 * structure here has the same layout for 32- and 64-bit user space.
 * Documentation/abi.rst describes the protocol around these structures.
 */
#ifndef XIW_ABI_USER_H
#define XIW_ABI_USER_H

#include <linux/types.h>

/*
 * Published as ib_device_ops.uverbs_abi_ver; libibverbs refuses a provider
 * whose match range does not contain it. Bump on any incompatible change
 * to a structure below.
 */
#define XIW_ABI_VERSION 3

/*
 * Name of the sysfs attribute, in /sys/class/infiniband/<ibdev>/, that
 * identifies an xiw device whatever name it was given by "rdma link add".
 * Its content is XIW_ABI_VERSION in decimal followed by a newline.
 */
#define XIW_SYSFS_ABI_ATTR "xiw_abi_version"

/*
 * Scatter/gather entries in a send queue slot, and inline data bytes; and
 * in a receive queue (or SRQ) slot, fewer, so that a ring of 64 receive
 * slots and its control block fit two pages.
 */
#define XIW_MAX_SGE 8
#define XIW_MAX_INLINE 128
#define XIW_MAX_RECV_SGE 6

/* An mmap key that maps nothing (the RQ of a QP attached to an SRQ). */
#define XIW_INVALID_MMAP_KEY (~0ULL)

/* Driver part of the IB_USER_VERBS_CMD_GET_CONTEXT response. */
struct xiw_alloc_ucontext_resp {
	__u32 abi_version;	/* XIW_ABI_VERSION, echoed for a cross-check */
	__u32 reserved;
};

/*
 * Shared rings.
 *
 * Each SQ, RQ, SRQ and CQ is one mapping: a struct xiw_ring_ctrl, then
 * num slots of the queue's slot type, the whole rounded up to pages. The
 * producer and the consumer each keep their own index (slot = index mod
 * num, num a power of two); neither index is shared. A slot belongs to
 * the producer while its XIW_SLOT_VALID flag is clear: the producer fills
 * it, then sets the flag with a release store. The consumer sees the flag
 * with an acquire load, copies the slot, then clears the flag with a
 * release store, handing the slot back. Until the flag is set the
 * consumer reads nothing of a slot, so a producer may fill slots ahead,
 * other flag bits included, and set their flags later, in order.
 *
 * SQ, RQ, SRQ: user space produces, the kernel consumes.
 * CQ: the kernel produces, user space consumes. A CQE the kernel cannot
 * place because the next slot is still valid is an overflow.
 */
#define XIW_SLOT_VALID (1U << 31)

struct xiw_ring_ctrl {
	/*
	 * SQ and RQ rings, written by the kernel: the QP's state (the
	 * numbering of enum ibv_qp_state and the kernel's enum ib_qp_state).
	 */
	__u32 qp_state;
	/*
	 * SQ ring, written by the kernel: non-zero while the kernel is
	 * consuming the SQ and will see new slots without a doorbell.
	 */
	__u32 sq_busy;
	/*
	 * CQ ring, written by user space to arm the CQ (XIW_CQ_NOTIFY_*),
	 * cleared by the kernel when it raises the completion event.
	 */
	__u32 cq_notify;
	/* CQ ring, written by the kernel: set once a CQE was lost. */
	__u32 cq_overflow;
	__u32 reserved[12];
};

#define XIW_CQ_NOTIFY_NEXT	1	/* event for the next CQE */
#define XIW_CQ_NOTIFY_SOLICITED	2	/* event for the next solicited CQE */

struct xiw_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* xiw_sqe.flags, besides XIW_SLOT_VALID */
#define XIW_WQE_SIGNALED	(1U << 0)
#define XIW_WQE_SOLICITED	(1U << 1)
#define XIW_WQE_FENCE		(1U << 2)
#define XIW_WQE_INLINE		(1U << 3)

/* Send queue slot: 184 bytes. */
struct xiw_sqe {
	__u32 flags;
	__u8 opcode;		/* enum ib_uverbs_wr_opcode */
	__u8 num_sge;		/* entries used in sge[] (0 with INLINE) */
	__u16 inline_len;	/* with XIW_WQE_INLINE: bytes in sge[] */
	__aligned_u64 wr_id;
	__u32 ex;		/* immediate data (as sent) or STag to invalidate */
	__u32 rkey;		/* remote STag: RDMA Write, Read, atomics */
	__aligned_u64 raddr;	/* remote tagged offset */
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	/*
	 * IB_UVERBS_WR_BIND_MW: ex names the window (its STag now), rkey is
	 * the STag the bind gives it (same index), raddr and compare_add the
	 * window's first address and length, mw_lkey the MR it lies in
	 * and mw_access the rights it grants (IB_UVERBS_ACCESS_REMOTE_*).
	 * Zero for every other opcode.
	 */
	__u32 mw_lkey;
	__u32 mw_access;
	/* With XIW_WQE_INLINE, the data itself, inline_len bytes. */
	struct xiw_sge sge[XIW_MAX_SGE];
};

/* Receive queue (and SRQ) slot: 112 bytes. */
struct xiw_rqe {
	__u32 flags;		/* XIW_SLOT_VALID only */
	__u8 num_sge;
	__u8 reserved[3];
	__aligned_u64 wr_id;
	struct xiw_sge sge[XIW_MAX_RECV_SGE];
};

/* xiw_cqe.flags, besides XIW_SLOT_VALID */
#define XIW_CQE_WITH_IMM	(1U << 0)	/* ex holds immediate data */
#define XIW_CQE_WITH_INV	(1U << 1)	/* ex holds the STag invalidated */
#define XIW_CQE_SOLICITED	(1U << 2)

/* Completion queue slot: 32 bytes. */
struct xiw_cqe {
	__u32 flags;
	/* enum ibv_wc_opcode: IB_UVERBS_WC_*, 128 receive, 129 receive imm */
	__u8 opcode;
	__u8 status;		/* enum ibv_wc_status value */
	__u16 reserved;
	__aligned_u64 wr_id;
	__u32 qp_num;
	__u32 byte_len;
	__u32 ex;
	__u32 vendor_err;
};

/* Driver part of the IB_USER_VERBS_CMD_CREATE_CQ response. */
struct xiw_create_cq_resp {
	__aligned_u64 cq_key;	/* mmap offset of the CQ ring */
	__u32 cq_id;
	__u32 num_cqe;		/* slots in the ring, a power of two */
};

/*
 * Driver part of the IB_USER_VERBS_CMD_RESIZE_CQ response: the CQ's new
 * ring, which replaces the one mapped before. The CQEs not yet polled
 * are in its first slots, and the consumer's index starts again at 0.
 */
struct xiw_resize_cq_resp {
	__aligned_u64 cq_key;	/* mmap offset of the new CQ ring */
	__u32 num_cqe;		/* slots in it, a power of two */
	__u32 reserved;
};

/* Driver part of the IB_USER_VERBS_CMD_CREATE_QP response. */
struct xiw_create_qp_resp {
	__aligned_u64 sq_key;	/* mmap offset of the SQ ring */
	__aligned_u64 rq_key;	/* of the RQ ring, or XIW_INVALID_MMAP_KEY */
	__u32 qp_id;
	__u32 num_sqe;		/* SQ slots, a power of two */
	__u32 num_rqe;		/* RQ slots, a power of two, or 0 */
	__u32 max_inline;
};

/* Driver part of the IB_USER_VERBS_CMD_CREATE_SRQ response. */
struct xiw_create_srq_resp {
	__aligned_u64 srq_key;	/* mmap offset of the SRQ ring */
	__u32 num_rqe;		/* slots, a power of two */
	__u32 reserved;
};

#endif /* XIW_ABI_USER_H */
