// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues. The kernel writes CQEs into a ring mapped into the
 * application, so polling and arming are plain memory accesses; only
 * creation, resizing and destruction are commands.
 */
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <new>

#include <rdma/xiw-abi.h>

#include "cmd.h"
#include "ibverbs_private.h"
#include "ring.h"
#include "wr.h"
#include "xiw.h"

namespace xiw {

int check_create_cq_resp(const xiw_create_cq_resp &resp) noexcept
{
	return valid_ring_slots(resp.num_cqe) ? 0 : EPROTO;
}

int check_resize_cq_resp(const xiw_resize_cq_resp &resp) noexcept
{
	return valid_ring_slots(resp.num_cqe) ? 0 : EPROTO;
}

int Cq::map_ring(ibv_context *ibctx, const xiw_create_cq_resp &resp) noexcept
{
	int err = check_create_cq_resp(resp);

	if (err == 0) {
		ring = MappedRing<xiw_cqe>::map(ibctx->cmd_fd, resp.cq_key,
						resp.num_cqe);
		if (!ring) {
			err = errno;
		}
	}
	if (err != 0) {
		/*
		 * The kernel's CQ goes too. No event can have been reported
		 * for it, so the destroy does not wait on the (zeroed, not
		 * yet initialised) event fields.
		 */
		ibv_cmd_destroy_cq(&core());
		return err;
	}
	cqes = RingConsumer<xiw_cqe>(ring.slots(), ring.num());
	return 0;
}

std::unique_ptr<Cq> Cq::create(ibv_context *ibctx, int cqe,
			       ibv_comp_channel *channel,
			       int comp_vector) noexcept
{
	std::unique_ptr<Cq> cq(new (std::nothrow) Cq{});
	struct ibv_create_cq cmd {};
	CreateCqResp resp{};

	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	int err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->core(),
				    &cmd, sizeof(cmd), &resp.ibv_resp,
				    sizeof(resp));
	if (err == 0) {
		err = cq->map_ring(ibctx, resp.drv);
	}
	if (err != 0) {
		cq.reset(); /* unmaps; before errno, which it may clobber */
		errno = err;
		return nullptr;
	}
	return cq;
}

std::unique_ptr<Cq> Cq::create_ex(ibv_context *ibctx,
				  const ibv_cq_init_attr_ex &attr) noexcept
{
	std::unique_ptr<Cq> cq(new (std::nothrow) Cq{});
	struct ibv_create_cq_ex cmd {};
	CreateCqExResp resp{};

	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	int err = ibv_cmd_create_cq_ex(ibctx, &attr,
				       reinterpret_cast<verbs_cq *>(cq.get()),
				       &cmd, sizeof(cmd), &resp.ibv_resp,
				       sizeof(resp), 0);
	if (err == 0) {
		err = cq->map_ring(ibctx, resp.drv);
	}
	if (err != 0) {
		cq.reset(); /* unmaps; before errno, which it may clobber */
		errno = err;
		return nullptr;
	}
	return cq;
}

ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector) noexcept
{
	std::unique_ptr<Cq> cq = Cq::create(ibctx, cqe, channel, comp_vector);

	if (!cq) {
		return nullptr;
	}
	return &cq.release()->core();
}

namespace {

/*
 * The extended CQ's poll: start_poll() takes the first completion and,
 * unless the CQ is single-threaded, the poll lock, which end_poll()
 * releases; next_poll() takes the next one under it. With nothing to
 * take, start_poll() leaves the lock as it found it: libibverbs calls
 * no end_poll() after ENOENT.
 */
bool take_cqe(Cq &cq) noexcept
{
	xiw_cqe cqe{};

	if (!cq.cqes.pop(cqe)) {
		return false;
	}
	translate_cqe(cqe, cq.cur);
	cq.ex().wr_id = cq.cur.wr_id;
	cq.ex().status = cq.cur.status;
	return true;
}

int start_poll(ibv_cq_ex *ibcq, ibv_poll_cq_attr *attr) noexcept
{
	Cq *cq = Cq::from(ibcq);

	if (attr->comp_mask != 0) {
		return EINVAL;
	}
	if (!cq->single_threaded) {
		cq->lock.lock();
	}
	if (!take_cqe(*cq)) {
		if (!cq->single_threaded) {
			cq->lock.unlock();
		}
		return ENOENT;
	}
	return 0;
}

int next_poll(ibv_cq_ex *ibcq) noexcept
{
	return take_cqe(*Cq::from(ibcq)) ? 0 : ENOENT;
}

void end_poll(ibv_cq_ex *ibcq) noexcept
{
	Cq *cq = Cq::from(ibcq);

	if (!cq->single_threaded) {
		cq->lock.unlock();
	}
}

/* What ibv_poll_cq() would have put in the same completion's ibv_wc. */
ibv_wc_opcode read_opcode(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.opcode;
}

std::uint32_t read_vendor_err(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.vendor_err;
}

std::uint32_t read_byte_len(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.byte_len;
}

/*
 * Immediate data, or for ibv_wc_read_invalidated_rkey() the STag
 * invalidated: the same bits, as ibv_wc holds them in one union.
 */
__be32 read_imm_data(ibv_cq_ex *ibcq) noexcept
{
	// NOLINTNEXTLINE(cppcoreguidelines-pro-type-union-access)
	return Cq::from(ibcq)->cur.imm_data;
}

std::uint32_t read_qp_num(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.qp_num;
}

unsigned int read_wc_flags(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.wc_flags;
}

/* Datagram and InfiniBand fields: an iWARP RC completion has none (0). */
std::uint32_t read_src_qp(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.src_qp;
}

std::uint32_t read_slid(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.slid;
}

std::uint8_t read_sl(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.sl;
}

std::uint8_t read_dlid_path_bits(ibv_cq_ex *ibcq) noexcept
{
	return Cq::from(ibcq)->cur.dlid_path_bits;
}

} // namespace

ibv_cq_ex *create_cq_ex(ibv_context *ibctx, ibv_cq_init_attr_ex *attr) noexcept
{
	const std::uint32_t flags =
		(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) != 0 ?
			attr->flags : 0;

	/*
	 * No parent domain (IBV_CQ_INIT_ATTR_MASK_PD), no completion
	 * timestamps or other fields a software RNIC has no value for, no
	 * ignoring of overruns (the kernel never overruns a ring).
	 */
	if ((attr->comp_mask & ~std::uint32_t{IBV_CQ_INIT_ATTR_MASK_FLAGS}) != 0 ||
	    (attr->wc_flags & ~kCqExWcFlags) != 0 ||
	    (flags & ~std::uint32_t{IBV_CREATE_CQ_ATTR_SINGLE_THREADED}) != 0) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	std::unique_ptr<Cq> cq = Cq::create_ex(ibctx, *attr);

	if (!cq) {
		return nullptr;
	}
	cq->single_threaded = (flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED) != 0;
	ibv_cq_ex &ex = cq->ex();
	ex.start_poll = start_poll;
	ex.next_poll = next_poll;
	ex.end_poll = end_poll;
	ex.read_opcode = read_opcode;
	ex.read_vendor_err = read_vendor_err;
	ex.read_byte_len = read_byte_len;
	ex.read_imm_data = read_imm_data;
	ex.read_qp_num = read_qp_num;
	ex.read_src_qp = read_src_qp;
	ex.read_wc_flags = read_wc_flags;
	ex.read_slid = read_slid;
	ex.read_sl = read_sl;
	ex.read_dlid_path_bits = read_dlid_path_bits;
	return &cq.release()->ex();
}

int destroy_cq(ibv_cq *ibcq) noexcept
{
	const int err = ibv_cmd_destroy_cq(ibcq);

	/* If the kernel still holds the CQ, the ring stays mapped. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<Cq> cq(Cq::from(ibcq));
	return 0;
}

int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept
{
	Cq *cq = Cq::from(ibcq);
	const std::lock_guard<QueueLock> lock(cq->lock);
	int polled = 0;

	while (polled < num_entries) {
		xiw_cqe cqe{};

		if (!cq->cqes.pop(cqe)) {
			break;
		}
		translate_cqe(cqe, wc[polled]);
		++polled;
	}
	return polled;
}

int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept
{
	Cq *cq = Cq::from(ibcq);

	/*
	 * Arming races with a CQE being placed. The kernel (xiw_cq_add())
	 * publishes the CQE, issues smp_mb(), then reads cq_notify; here the
	 * arm is a store followed by a full fence, and the application's
	 * next poll reads the slot's flags with an acquire load. Either the
	 * kernel sees the CQ armed or that poll sees the CQE: the fence
	 * orders this store before that load (a seq_cst store alone would
	 * not, by the C++ memory model, against a later acquire load; on
	 * AArch64 an LDAPR may pass an earlier STLR). The arm lock keeps the
	 * ring from being replaced (and unmapped) by ibv_resize_cq() under
	 * us; the poll lock is not needed, arming does not touch the
	 * consumer index.
	 */
	const std::lock_guard<QueueLock> lock(cq->arm_lock);
	shared_word(cq->ring.ctrl().cq_notify)
		.store(solicited_only != 0 ? XIW_CQ_NOTIFY_SOLICITED :
					     XIW_CQ_NOTIFY_NEXT,
		       std::memory_order_relaxed);
	std::atomic_thread_fence(std::memory_order_seq_cst);
	return 0;
}

/*
 * The kernel moves the CQEs not yet polled into a new ring and answers
 * with its key; the old ring, which it no longer writes, is unmapped and
 * the consumer starts again at the new ring's first slot. Both locks are
 * held throughout, so no poll or arm sees the CQ between the two rings.
 *
 * Should the new ring fail to map after the kernel switched to it, the
 * error is returned and the CQ keeps the old ring, which the kernel no
 * longer writes: polls still find the completions that were pending, and
 * nothing after them. Only a failed mmap() of a few pages, or a kernel
 * breaking the ABI, gets there; the CQ is then only good for destroying.
 */
int resize_cq(ibv_cq *ibcq, int cqe) noexcept
{
	Cq *cq = Cq::from(ibcq);
	const std::lock_guard<QueueLock> poll_lock(cq->lock);
	const std::lock_guard<QueueLock> arm_lock(cq->arm_lock);
	struct ibv_resize_cq cmd {};
	ResizeCqResp resp{};

	const int old_cqe = ibcq->cqe;
	int err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (err != 0) {
		return err;
	}
	err = check_resize_cq_resp(resp.drv);
	MappedRing<xiw_cqe> ring;
	if (err == 0) {
		ring = MappedRing<xiw_cqe>::map(ibcq->context->cmd_fd,
						resp.drv.cq_key,
						resp.drv.num_cqe);
		if (!ring) {
			err = errno;
		}
	}
	if (err != 0) {
		ibcq->cqe = old_cqe;
		return err;
	}
	cq->ring = std::move(ring);
	cq->cqes = RingConsumer<xiw_cqe>(cq->ring.slots(), cq->ring.num());
	return 0;
}

} // namespace xiw
