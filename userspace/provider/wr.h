// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Between the verbs' work requests and completions and xiw's ring slots
 * (rdma/xiw-abi.h): one request or completion at a time, and whole chains
 * of requests onto a ring. The queues (qp.cpp, srq.cpp, cq.cpp) own the
 * rings and decide under which lock, and what to tell the kernel after.
 */
#ifndef XIW_WR_H
#define XIW_WR_H

#include <cstdint>
#include <span>

#include <infiniband/verbs.h>
#include <rdma/xiw-abi.h>

#include "ring.h"

namespace xiw {

/* The slot sizes rdma/xiw-abi.h documents, the same for 32- and 64-bit. */
static_assert(sizeof(xiw_sqe) == 184);
static_assert(sizeof(xiw_rqe) == 112);
static_assert(sizeof(xiw_cqe) == 32);
static_assert(sizeof(xiw_sge) * XIW_MAX_SGE >= XIW_MAX_INLINE,
	      "inline data is carried in the SGE area");

/* What a QP's send queue accepts, fixed when the QP is created. */
struct SendLimits {
	std::uint32_t max_sge; /* at most XIW_MAX_SGE */
	std::uint32_t max_inline; /* at most XIW_MAX_INLINE */
	bool sig_all; /* created with sq_sig_all */
};

/*
 * Fills sqe from a send work request: its fixed part (flags without
 * XIW_SLOT_VALID), then the SGEs num_sge counts or the inline_len bytes
 * of inline data, which is all the kernel reads of a slot; the rest of
 * sge[] keeps what it held (push_send_chain() builds in the ring).
 * Returns 0, or EINVAL if xiw cannot carry the request: an opcode
 * other than SEND, SEND_WITH_INV, RDMA_WRITE, RDMA_WRITE_WITH_IMM,
 * RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, LOCAL_INV and
 * BIND_MW, more SGEs than limits allow, an atomic without exactly one
 * 8-byte SGE, a LOCAL_INV or BIND_MW with any, a BIND_MW without a window
 * or with a length and no MR, IBV_SEND_INLINE on another opcode than SEND
 * or an RDMA Write or with more than limits.max_inline bytes. With
 * IBV_SEND_INLINE the data is copied from the SGEs' addresses now.
 */
int build_sqe(const ibv_send_wr &wr, const SendLimits &limits,
	      xiw_sqe &sqe) noexcept;

/*
 * build_sqe() in steps, for the ibv_wr_*() builders and setters (qp_ex.cpp).
 * begin_sqe() fills sqe (all of it) with the opcode, the wr_id and the
 * flags that build_sqe() would set, and no data; EINVAL if xiw cannot carry the
 * opcode. The caller then sets rkey and raddr, ex or an atomic's operands
 * as the opcode needs.
 */
struct WrHead {
	ibv_wr_opcode opcode;
	std::uint64_t wr_id;
	unsigned int send_flags; /* enum ibv_send_flags */
};
int begin_sqe(const WrHead &head, const SendLimits &limits,
	      xiw_sqe &sqe) noexcept;

/*
 * What a BIND_MW SQE begun by begin_sqe() binds: window mw, to get STag
 * rkey, over info (rdma/xiw-abi.h says where each goes). EINVAL, sqe
 * unchanged, for another opcode, no window, or a length without an MR.
 */
int set_sqe_bind(const ibv_mw *mw, std::uint32_t rkey,
		 const ibv_mw_bind_info &info, xiw_sqe &sqe) noexcept;

/*
 * Give sqe its data, replacing what it had: an SGE list (EINVAL if longer
 * than limits.max_sge, or for an atomic unless one 8-byte SGE), or the
 * bytes of the buffers, logically concatenated, copied now (EINVAL for an
 * opcode other than SEND or an RDMA Write, or for more than
 * limits.max_inline bytes). After EINVAL sqe has no data.
 */
int set_sqe_sges(std::span<const ibv_sge> sges, const SendLimits &limits,
		 xiw_sqe &sqe) noexcept;
int set_sqe_inline(std::span<const ibv_data_buf> bufs,
		   const SendLimits &limits, xiw_sqe &sqe) noexcept;

/*
 * Fills rqe's fixed part (flags 0) and the num_sge SGEs it counts from a
 * receive work request; the rest of sge[] keeps what it held. Returns 0, or
 * EINVAL if it has more than max_sge SGEs.
 */
int build_rqe(const ibv_recv_wr &wr, std::uint32_t max_sge,
	      xiw_rqe &rqe) noexcept;

/*
 * The work completion a CQE describes. Status and opcode are taken as the
 * ibv_wc_status and ibv_wc_opcode values they are; ex goes to imm_data
 * (XIW_CQE_WITH_IMM, verbatim: it is in network order already) or to
 * invalidated_rkey (XIW_CQE_WITH_INV). Fields iWARP has no use for are 0.
 */
void translate_cqe(const xiw_cqe &cqe, ibv_wc &wc) noexcept;

/*
 * Publishes the chain of requests starting at wr on a ring, up to its end
 * or to the first request that cannot go: EINVAL from build_sqe() or
 * build_rqe(), or ENOMEM if the ring is full. Returns 0 or that error, wr
 * left at the failed request (null after the last one), and posted
 * counting the requests published. The requests before a failed one stay
 * posted. The caller holds the ring's QueueLock.
 */
int push_send_chain(RingProducer<xiw_sqe> &sq, const SendLimits &limits,
		    ibv_send_wr *&wr, std::uint32_t &posted) noexcept;
int push_recv_chain(RingProducer<xiw_rqe> &rq, std::uint32_t max_sge,
		    ibv_recv_wr *&wr, std::uint32_t &posted) noexcept;

} // namespace xiw

#endif // XIW_WR_H
