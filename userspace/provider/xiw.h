// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The xiw provider's objects and the entry points libibverbs calls.
 *
 * Every object embeds the libibverbs object it stands for as its first
 * member, so that the pointer libibverbs hands back converts to ours by a
 * plain cast. Entry points are noexcept and report failure the way
 * libibverbs expects: an errno value, or null with errno set. Objects the
 * provider allocates itself are made by static create() factories that
 * return null on failure.
 */
#ifndef XIW_H
#define XIW_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"
#include "mapping.h"
#include "ring.h"
#include "wr.h"

namespace xiw {

/* ---- provider.cpp: the device ------------------------------------------ */

struct Device {
	verbs_device vdev;

	/* Zero-filled, as libibverbs requires of a new verbs_device. */
	static std::unique_ptr<Device> create() noexcept;

	static Device *from(verbs_device *vdev) noexcept
	{
		return reinterpret_cast<Device *>(vdev);
	}
};
static_assert(std::is_standard_layout_v<Device>);
static_assert(offsetof(Device, vdev) == 0);

extern const verbs_device_ops kDeviceOps;

verbs_device *alloc_device(verbs_sysfs_dev *sysfs_dev) noexcept;
void uninit_device(verbs_device *vdev) noexcept;

/* ---- context.cpp: the user context --------------------------------------- */

struct Context;

/* Undoes _verbs_init_and_alloc_context(): closes cmd_fd, frees the memory. */
struct ContextDeleter {
	void operator()(Context *ctx) const noexcept;
};
using ContextPtr = std::unique_ptr<Context, ContextDeleter>;

/*
 * libibverbs allocates this with calloc() and the provider releases it with
 * free(), so it is created without a constructor call: it must stay an
 * implicit-lifetime type (C++20 [intro.object]). Members that own resources
 * with destructors have to be held through pointers that ContextDeleter
 * releases.
 */
struct Context {
	verbs_context vctx;

	/* Takes cmd_fd: it is closed if this fails. */
	static ContextPtr create(ibv_device *ibdev, int cmd_fd) noexcept;

	static Context *from(ibv_context *ibctx) noexcept
	{
		/* ibctx is vctx.context; vctx is the first member. */
		auto *bytes = reinterpret_cast<std::byte *>(ibctx);
		return reinterpret_cast<Context *>(
			bytes - offsetof(verbs_context, context));
	}
};
static_assert(std::is_standard_layout_v<Context>);
static_assert(std::is_trivially_default_constructible_v<Context>);
static_assert(std::is_trivially_destructible_v<Context>);
static_assert(offsetof(Context, vctx) == 0);

/* 0 if the kernel's half of the GET_CONTEXT response is acceptable, else EINVAL. */
int check_ucontext_resp(const xiw_alloc_ucontext_resp &resp) noexcept;

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd,
			     void *private_data) noexcept;
void free_context(ibv_context *ibctx) noexcept;

/* ---- verbs.cpp: device queries and protection domains -------------------- */

struct Pd {
	ibv_pd ibpd;

	/* Allocates the kernel PD too; null with errno set on failure. */
	static std::unique_ptr<Pd> create(ibv_context *ibctx) noexcept;

	static Pd *from(ibv_pd *ibpd) noexcept
	{
		return reinterpret_cast<Pd *>(ibpd);
	}
};
static_assert(std::is_standard_layout_v<Pd>);
static_assert(offsetof(Pd, ibpd) == 0);

int query_device_ex(ibv_context *ibctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, std::size_t attr_size) noexcept;
int query_port(ibv_context *ibctx, std::uint8_t port_num,
	       ibv_port_attr *port_attr) noexcept;
ibv_pd *alloc_pd(ibv_context *ibctx) noexcept;
int dealloc_pd(ibv_pd *ibpd) noexcept;

/* ---- mr.cpp: memory regions ---------------------------------------------- */

struct Mr {
	verbs_mr vmr;

	/* Registers the memory with the kernel; null with errno set. */
	static std::unique_ptr<Mr> create(ibv_pd *pd, void *addr,
					  std::size_t length,
					  std::uint64_t hca_va,
					  int access) noexcept;

	static Mr *from(verbs_mr *vmr) noexcept
	{
		return reinterpret_cast<Mr *>(vmr);
	}
};
static_assert(std::is_standard_layout_v<Mr>);
static_assert(offsetof(Mr, vmr) == 0);

struct ibv_mr *reg_mr(ibv_pd *pd, void *addr, std::size_t length,
		      std::uint64_t hca_va, int access) noexcept;
int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
	     std::size_t length, int access) noexcept;
int dereg_mr(verbs_mr *vmr) noexcept;

/*
 * Memory windows (mr.cpp). The kernel allocates them; a type 1 window is
 * bound by a BIND_MW request on the QP's send queue, which bind_mw()
 * posts, giving the window the next key of its STag.
 */
ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type) noexcept;
int dealloc_mw(ibv_mw *mw) noexcept;
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept;

/* ---- cq.cpp: completion queues ------------------------------------------- */

/*
 * The kernel produces CQEs into the ring; the provider consumes them in
 * poll_cq() and arms the CQ through the ring's cq_notify word.
 */
struct Cq {
	/*
	 * ibv_create_cq() hands out the ibv_cq, ibv_create_cq_ex() the
	 * ibv_cq_ex, which begins like it (libibverbs' verbs_cq).
	 */
	union {
		ibv_cq ibcq;
		ibv_cq_ex ibcq_ex;
	};
	/*
	 * Serialises pollers: guards cqes, whose index is ours alone. Held
	 * from ibv_start_poll() to ibv_end_poll(), and by ibv_resize_cq().
	 */
	QueueLock lock;
	/*
	 * Serialises arming with ibv_resize_cq(), which replaces ring: the
	 * arm word is in the ring's control block. A lock of its own, so
	 * that arming between ibv_start_poll() and ibv_end_poll() works.
	 */
	QueueLock arm_lock;
	MappedRing<xiw_cqe> ring;
	RingConsumer<xiw_cqe> cqes;
	/*
	 * The extended CQ: the completion that ibv_start_poll() or
	 * ibv_next_poll() took, which the ibv_wc_read_*() readers report,
	 * and whether its pollers promised one thread at a time
	 * (IBV_CREATE_CQ_ATTR_SINGLE_THREADED: no lock).
	 */
	ibv_wc cur{};
	bool single_threaded = false;

	/* Creates the kernel CQ and maps its ring; null with errno set. */
	static std::unique_ptr<Cq> create(ibv_context *ibctx, int cqe,
					  ibv_comp_channel *channel,
					  int comp_vector) noexcept;
	/* The same for ibv_create_cq_ex(), whose attributes were checked. */
	static std::unique_ptr<Cq> create_ex(ibv_context *ibctx,
					     const ibv_cq_init_attr_ex &attr) noexcept;

	/* The union's two views; nothing else names its members. */
	// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
	ibv_cq &core() noexcept { return ibcq; }
	ibv_cq_ex &ex() noexcept { return ibcq_ex; }
	// NOLINTEND(cppcoreguidelines-pro-type-union-access)

	static Cq *from(ibv_cq *ibcq) noexcept
	{
		return reinterpret_cast<Cq *>(ibcq);
	}
	static Cq *from(ibv_cq_ex *ibcq) noexcept
	{
		return reinterpret_cast<Cq *>(ibcq);
	}

private:
	/* After the command: check the driver's answer, map the ring. */
	int map_ring(ibv_context *ibctx, const xiw_create_cq_resp &resp) noexcept;
};
static_assert(std::is_standard_layout_v<Cq>);
static_assert(offsetof(Cq, ibcq) == 0);
static_assert(offsetof(Cq, ibcq_ex) == 0);

/* The ibv_wc_read_*() values an xiw CQ can fill, for ibv_create_cq_ex(). */
constexpr std::uint64_t kCqExWcFlags = IBV_WC_STANDARD_FLAGS;

/* 0 if the driver part of the CREATE_CQ response is usable, else EPROTO. */
int check_create_cq_resp(const xiw_create_cq_resp &resp) noexcept;
/* The same for the RESIZE_CQ response. */
int check_resize_cq_resp(const xiw_resize_cq_resp &resp) noexcept;

ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector) noexcept;
ibv_cq_ex *create_cq_ex(ibv_context *ibctx,
			ibv_cq_init_attr_ex *attr) noexcept;
int destroy_cq(ibv_cq *ibcq) noexcept;
int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept;
int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept;
int resize_cq(ibv_cq *ibcq, int cqe) noexcept;

/* ---- qp.cpp: queue pairs ------------------------------------------------- */

/*
 * The provider produces SQEs and RQEs; the kernel consumes them, and tells
 * the QP's state and whether it is busy with the SQ through the rings'
 * control blocks. A QP attached to an SRQ has no RQ ring.
 */
struct Qp {
	verbs_qp vqp;
	/* Serialises posters on the SQ: guards sq, whose index is ours. */
	QueueLock sq_lock;
	/* Serialises posters on the RQ: guards rq, likewise. */
	QueueLock rq_lock;
	MappedRing<xiw_sqe> sq_ring;
	MappedRing<xiw_rqe> rq_ring; /* empty with an SRQ */
	RingProducer<xiw_sqe> sq;
	RingProducer<xiw_rqe> rq;
	SendLimits send_limits;
	std::uint32_t max_recv_sge;

	/*
	 * ibv_wr_*() (qp_ex.cpp): the batch from ibv_wr_start() to
	 * ibv_wr_complete() or ibv_wr_abort(), all under sq_lock. The request
	 * being built is cur; those before it are staged in the SQ ring,
	 * where the kernel sees them only once ibv_wr_complete() publishes
	 * them. After the first error (err) the batch goes nowhere.
	 */
	struct WrBatch {
		xiw_sqe cur;
		std::uint32_t staged;
		bool building; /* cur holds a request */
		int err;
	};
	WrBatch batch{};

	/*
	 * Creates the kernel QP (RC only) and maps its rings; null with errno
	 * set. attr.cap is updated to what the kernel granted. With
	 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP is an ibv_qp_ex with the
	 * ibv_wr_*() entry points.
	 */
	static std::unique_ptr<Qp> create(ibv_context *ibctx,
					  ibv_qp_init_attr_ex &attr) noexcept;

	static Qp *from(ibv_qp *ibqp) noexcept
	{
		/* ibqp is vqp.qp, a member of the union at offset 0. */
		return reinterpret_cast<Qp *>(ibqp);
	}
	static Qp *from(ibv_qp_ex *qpx) noexcept
	{
		/* Likewise vqp.qp_ex. */
		return reinterpret_cast<Qp *>(qpx);
	}

	/* The members of the verbs_qp union that libibverbs knows the QP by. */
	// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
	ibv_qp &ibqp() noexcept { return vqp.qp; }
	ibv_qp_ex &qpx() noexcept { return vqp.qp_ex; }
	// NOLINTEND(cppcoreguidelines-pro-type-union-access)

	/* The QP's state as the kernel last published it in the SQ ring. */
	[[nodiscard]] std::uint32_t sq_state() const noexcept;
	/*
	 * After publishing SQEs: rings the send doorbell unless the kernel is
	 * busy with the SQ and will find them anyway. Needs no lock. 0 or the
	 * doorbell's errno value.
	 */
	int kick_sq() noexcept;
};
static_assert(std::is_standard_layout_v<Qp>);
static_assert(offsetof(Qp, vqp) == 0);

/*
 * 0 if the driver part of the CREATE_QP response is usable for a QP with
 * or without an SRQ, else EPROTO.
 */
int check_create_qp_resp(const xiw_create_qp_resp &resp, bool has_srq) noexcept;

/* The ibv_wr_*() requests xiw carries, for IBV_QP_INIT_ATTR_SEND_OPS_FLAGS. */
constexpr std::uint64_t kSendOpsFlags =
	IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
	IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
	IBV_QP_EX_WITH_BIND_MW;

/* Points qpx's ibv_wr_*() members at xiw's (qp_ex.cpp). */
void set_wr_ops(ibv_qp_ex &qpx) noexcept;

/*
 * Whether libibverbs' ibv_qp_to_qp_ex() returns qp's ibv_qp_ex. It reads
 * verbs_qp.comp_mask at the offset its own struct ibv_qp_ex gives, which
 * grew in rdma-core 44 and 45 within the same private ABI: a provider
 * built against another release than the one it runs with would hand out
 * an extended QP that libibverbs does not see as one.
 */
bool libibverbs_finds_qp_ex(Qp &qp) noexcept;

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr) noexcept;
ibv_qp *create_qp_ex(ibv_context *ibctx, ibv_qp_init_attr_ex *attr) noexcept;
int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask) noexcept;
int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask,
	     ibv_qp_init_attr *init_attr) noexcept;
int destroy_qp(ibv_qp *ibqp) noexcept;
int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

/* ---- srq.cpp: shared receive queues -------------------------------------- */

/*
 * Like a QP's RQ, without a doorbell: the kernel takes RQEs as it needs
 * them.
 */
struct Srq {
	ibv_srq ibsrq;
	/* Serialises posters: guards rqes, whose index is ours alone. */
	QueueLock lock;
	MappedRing<xiw_rqe> ring;
	RingProducer<xiw_rqe> rqes;
	std::uint32_t max_sge;

	/* Creates the kernel SRQ and maps its ring; null with errno set. */
	static std::unique_ptr<Srq> create(ibv_pd *pd,
					   ibv_srq_init_attr *attr) noexcept;

	static Srq *from(ibv_srq *ibsrq) noexcept
	{
		return reinterpret_cast<Srq *>(ibsrq);
	}
};
static_assert(std::is_standard_layout_v<Srq>);
static_assert(offsetof(Srq, ibsrq) == 0);

/* 0 if the driver part of the CREATE_SRQ response is usable, else EPROTO. */
int check_create_srq_resp(const xiw_create_srq_resp &resp) noexcept;

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept;
int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept;
int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr) noexcept;
int destroy_srq(ibv_srq *ibsrq) noexcept;
int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr,
		  ibv_recv_wr **bad_wr) noexcept;

} // namespace xiw

#endif // XIW_H
