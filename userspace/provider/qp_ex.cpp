// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The ibv_wr_*() way of posting sends, on a QP made by ibv_create_qp_ex()
 * with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS. ibv_wr_start() takes the SQ's lock
 * and ibv_wr_complete() or ibv_wr_abort() drops it. Each builder
 * (ibv_wr_send(), ibv_wr_rdma_write(), ...) begins a request in the QP's
 * batch and stages the one before it in the SQ ring, unpublished; the
 * setters give the current request its data. ibv_wr_complete() publishes
 * the whole batch at once and rings the doorbell as ibv_post_send() does,
 * or, if any step failed, publishes nothing and returns the first error.
 *
 * Errors found while building (an opcode xiw cannot carry, too many SGEs,
 * too much inline data, a setter with no request, a full SQ) cannot be
 * returned by the void builders; they are kept and reported by
 * ibv_wr_complete(), as libibverbs' man page ibv_wr_post(3) describes.
 */
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>

#include <infiniband/verbs.h>

#include "ring.h"
#include "wr.h"
#include "xiw.h"

namespace xiw {
namespace {

Qp::WrBatch &batch_of(ibv_qp_ex *qpx) noexcept
{
	return Qp::from(qpx)->batch;
}

/* Keeps the batch's first error. */
void fail(Qp::WrBatch &batch, int err) noexcept
{
	if (batch.err == 0) {
		batch.err = err;
	}
}

/* Moves the request being built, if any, into the ring's staged slots. */
void stage_current(Qp &qp) noexcept
{
	Qp::WrBatch &batch = qp.batch;

	if (!batch.building) {
		return;
	}
	batch.building = false;
	if (!qp.sq.stage(batch.staged, batch.cur, batch.cur.flags)) {
		fail(batch, ENOMEM);
		return;
	}
	++batch.staged;
}

/*
 * Begins a request with the QP's wr_id and wr_flags; null if the batch
 * has failed already, else the SQE to fill in.
 */
xiw_sqe *begin(ibv_qp_ex *qpx, ibv_wr_opcode opcode) noexcept
{
	Qp &qp = *Qp::from(qpx);
	Qp::WrBatch &batch = qp.batch;

	stage_current(qp);
	if (batch.err != 0) {
		return nullptr;
	}
	const int err = begin_sqe({opcode, qpx->wr_id, qpx->wr_flags},
				  qp.send_limits, batch.cur);
	if (err != 0) {
		fail(batch, err);
		return nullptr;
	}
	batch.building = true;
	return &batch.cur;
}

/* The request the setters apply to; null (the batch failed) if none. */
xiw_sqe *current(ibv_qp_ex *qpx) noexcept
{
	Qp::WrBatch &batch = batch_of(qpx);

	if (batch.err != 0) {
		return nullptr;
	}
	if (!batch.building) {
		fail(batch, EINVAL);
		return nullptr;
	}
	return &batch.cur;
}

/* Ends the batch: nothing staged or being built remains. */
void end_batch(Qp &qp) noexcept
{
	qp.batch.building = false;
	qp.batch.staged = 0;
	qp.batch.err = 0;
	qp.sq_lock.unlock();
}

/* Where an RDMA Write or Read goes to or comes from at the peer. */
struct Remote {
	std::uint32_t rkey;
	std::uint64_t addr;
};

void set_remote(xiw_sqe *sqe, Remote where) noexcept
{
	if (sqe != nullptr) {
		sqe->rkey = where.rkey;
		sqe->raddr = where.addr;
	}
}

/*
 * ---- Builders and setters ----------------------------------------------
 * Their signatures are libibverbs' (struct ibv_qp_ex), adjacent integers
 * and all.
 */
// NOLINTBEGIN(bugprone-easily-swappable-parameters)

void wr_send(ibv_qp_ex *qpx) noexcept
{
	begin(qpx, IBV_WR_SEND);
}

void wr_send_inv(ibv_qp_ex *qpx, std::uint32_t invalidate_rkey) noexcept
{
	xiw_sqe *sqe = begin(qpx, IBV_WR_SEND_WITH_INV);

	if (sqe != nullptr) {
		sqe->ex = invalidate_rkey;
	}
}

void wr_rdma_write(ibv_qp_ex *qpx, std::uint32_t rkey,
		   std::uint64_t remote_addr) noexcept
{
	set_remote(begin(qpx, IBV_WR_RDMA_WRITE), {rkey, remote_addr});
}

void wr_rdma_write_imm(ibv_qp_ex *qpx, std::uint32_t rkey,
		       std::uint64_t remote_addr, __be32 imm_data) noexcept
{
	xiw_sqe *sqe = begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	set_remote(sqe, {rkey, remote_addr});
	if (sqe != nullptr) {
		/* In network byte order, as ibv_post_send() takes it. */
		sqe->ex = imm_data;
	}
}

void wr_rdma_read(ibv_qp_ex *qpx, std::uint32_t rkey,
		  std::uint64_t remote_addr) noexcept
{
	set_remote(begin(qpx, IBV_WR_RDMA_READ), {rkey, remote_addr});
}

/* RFC 7306 atomics; the setter gives the 8-byte buffer for the old value. */
void wr_atomic_cmp_swp(ibv_qp_ex *qpx, std::uint32_t rkey,
		       std::uint64_t remote_addr, std::uint64_t compare,
		       std::uint64_t swap) noexcept
{
	xiw_sqe *sqe = begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	set_remote(sqe, {rkey, remote_addr});
	if (sqe != nullptr) {
		sqe->compare_add = compare;
		sqe->swap = swap;
	}
}

void wr_atomic_fetch_add(ibv_qp_ex *qpx, std::uint32_t rkey,
			 std::uint64_t remote_addr, std::uint64_t add) noexcept
{
	xiw_sqe *sqe = begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	set_remote(sqe, {rkey, remote_addr});
	if (sqe != nullptr) {
		sqe->compare_add = add;
	}
}

/* Memory windows: bind one (type 2), invalidate one. */
void wr_bind_mw(ibv_qp_ex *qpx, ibv_mw *mw, std::uint32_t rkey,
		const ibv_mw_bind_info *bind_info) noexcept
{
	xiw_sqe *sqe = begin(qpx, IBV_WR_BIND_MW);

	if (sqe == nullptr) {
		return;
	}
	if (bind_info == nullptr ||
	    set_sqe_bind(mw, rkey, *bind_info, *sqe) != 0) {
		fail(batch_of(qpx), EINVAL);
	}
}

void wr_local_inv(ibv_qp_ex *qpx, std::uint32_t invalidate_rkey) noexcept
{
	xiw_sqe *sqe = begin(qpx, IBV_WR_LOCAL_INV);

	if (sqe != nullptr) {
		sqe->ex = invalidate_rkey;
	}
}

/*
 * What xiw does not carry: the batch fails with EOPNOTSUPP. Only a QP
 * that asked for none of them exists, but a program may call them anyway.
 */
void refuse(ibv_qp_ex *qpx) noexcept
{
	Qp &qp = *Qp::from(qpx);

	stage_current(qp);
	fail(qp.batch, EOPNOTSUPP);
}

void wr_send_imm(ibv_qp_ex *qpx, __be32 /*imm_data*/) noexcept
{
	refuse(qpx);
}


void wr_send_tso(ibv_qp_ex *qpx, void * /*hdr*/, std::uint16_t /*hdr_sz*/,
		 std::uint16_t /*mss*/) noexcept
{
	refuse(qpx);
}

void wr_atomic_write(ibv_qp_ex *qpx, std::uint32_t /*rkey*/,
		     std::uint64_t /*remote_addr*/,
		     const void * /*atomic_wr*/) noexcept
{
	refuse(qpx);
}

[[maybe_unused]] void wr_flush(ibv_qp_ex *qpx, std::uint32_t /*rkey*/,
			       std::uint64_t /*remote_addr*/,
			       std::size_t /*len*/, std::uint8_t /*type*/,
			       std::uint8_t /*level*/) noexcept
{
	refuse(qpx);
}

/* ibv_wr_flush() is in rdma-core 45 and later. */
template <typename QpEx> void set_flush_op(QpEx &qpx) noexcept
{
	if constexpr (requires { qpx.wr_flush; }) {
		qpx.wr_flush = wr_flush;
	}
}

/* Setters. */

/* A setter whose arguments the current request cannot take. */
void refuse_setter(ibv_qp_ex *qpx) noexcept
{
	if (current(qpx) != nullptr) {
		fail(batch_of(qpx), EINVAL);
	}
}

/* UD and XRC addressing: an RC QP has none. */
void wr_set_ud_addr(ibv_qp_ex *qpx, ibv_ah * /*ah*/,
		    std::uint32_t /*remote_qpn*/,
		    std::uint32_t /*remote_qkey*/) noexcept
{
	refuse_setter(qpx);
}

void wr_set_xrc_srqn(ibv_qp_ex *qpx, std::uint32_t /*remote_srqn*/) noexcept
{
	refuse_setter(qpx);
}

/*
 * Applies a set_sqe_*() to the current request: count buffers at list
 * (a missing list of some is refused; one longer than the QP takes is
 * refused by set).
 */
template <typename Buf>
void set_data(ibv_qp_ex *qpx, const Buf *list, std::size_t count,
	      int (*set)(std::span<const Buf>, const SendLimits &,
			 xiw_sqe &) noexcept) noexcept
{
	xiw_sqe *sqe = current(qpx);

	if (sqe == nullptr) {
		return;
	}
	const int err = count != 0 && list == nullptr ?
				EINVAL :
				set({list, count}, Qp::from(qpx)->send_limits,
				    *sqe);
	if (err != 0) {
		fail(batch_of(qpx), err);
	}
}

void wr_set_sge(ibv_qp_ex *qpx, std::uint32_t lkey, std::uint64_t addr,
		std::uint32_t length) noexcept
{
	const ibv_sge sge{addr, length, lkey};

	set_data(qpx, &sge, 1, set_sqe_sges);
}

void wr_set_sge_list(ibv_qp_ex *qpx, std::size_t num_sge,
		     const ibv_sge *sg_list) noexcept
{
	set_data(qpx, sg_list, num_sge, set_sqe_sges);
}

void wr_set_inline_data(ibv_qp_ex *qpx, void *addr,
			std::size_t length) noexcept
{
	const ibv_data_buf buf{addr, length};

	set_data(qpx, &buf, 1, set_sqe_inline);
}

void wr_set_inline_data_list(ibv_qp_ex *qpx, std::size_t num_buf,
			     const ibv_data_buf *buf_list) noexcept
{
	set_data(qpx, buf_list, num_buf, set_sqe_inline);
}

// NOLINTEND(bugprone-easily-swappable-parameters)

/* ---- The batch --------------------------------------------------------- */

void wr_start(ibv_qp_ex *qpx) noexcept
{
	Qp &qp = *Qp::from(qpx);

	/* The batch is empty: the QP was made so, end_batch() leaves it so. */
	qp.sq_lock.lock();
}

/*
 * Errors: the first error of the batch (EINVAL, ENOMEM for a full SQ,
 * EOPNOTSUPP), or EINVAL if the QP is in RESET, INIT or RTR, and then
 * nothing is posted. If the doorbell fails, its errno is returned,
 * although the batch was posted: the kernel sees it when the next
 * doorbell rings, as after ibv_post_send().
 */
int wr_complete(ibv_qp_ex *qpx) noexcept
{
	Qp &qp = *Qp::from(qpx);
	Qp::WrBatch &batch = qp.batch;

	stage_current(qp);
	if (batch.err == 0 && batch.staged != 0 &&
	    qp.sq_state() < IBV_QPS_RTS) {
		batch.err = EINVAL;
	}
	const int err = batch.err;
	const std::uint32_t staged = batch.staged;

	if (err != 0) {
		qp.sq.discard_staged(staged);
	} else {
		qp.sq.publish_staged(staged);
	}
	end_batch(qp);
	if (err != 0 || staged == 0) {
		return err;
	}
	return qp.kick_sq();
}

void wr_abort(ibv_qp_ex *qpx) noexcept
{
	Qp &qp = *Qp::from(qpx);

	stage_current(qp);
	qp.sq.discard_staged(qp.batch.staged);
	end_batch(qp);
}

} // namespace

void set_wr_ops(ibv_qp_ex &qpx) noexcept
{
	qpx.wr_send = wr_send;
	qpx.wr_send_imm = wr_send_imm;
	qpx.wr_send_inv = wr_send_inv;
	qpx.wr_send_tso = wr_send_tso;
	qpx.wr_rdma_write = wr_rdma_write;
	qpx.wr_rdma_write_imm = wr_rdma_write_imm;
	qpx.wr_rdma_read = wr_rdma_read;
	qpx.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx.wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx.wr_atomic_write = wr_atomic_write;
	set_flush_op(qpx);
	qpx.wr_bind_mw = wr_bind_mw;
	qpx.wr_local_inv = wr_local_inv;
	qpx.wr_set_ud_addr = wr_set_ud_addr;
	qpx.wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx.wr_set_sge = wr_set_sge;
	qpx.wr_set_sge_list = wr_set_sge_list;
	qpx.wr_set_inline_data = wr_set_inline_data;
	qpx.wr_set_inline_data_list = wr_set_inline_data_list;
	qpx.wr_start = wr_start;
	qpx.wr_complete = wr_complete;
	qpx.wr_abort = wr_abort;
}

} // namespace xiw
