// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Work requests into ring slots, CQEs into work completions: see wr.h.
 */
#include "wr.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

namespace xiw {
namespace {

/* How each supported send opcode fills an SQE. */
struct SendOpcode {
	ibv_wr_opcode verb;
	std::uint8_t wire; /* enum ib_uverbs_wr_opcode */
	bool may_inline;
	bool remote; /* rkey and raddr from wr.rdma */
	bool invalidates; /* ex is the STag to invalidate */
	bool immediate; /* ex is the immediate data (RFC 7306) */
	bool atomic; /* RFC 7306 atomic: wr.atomic, one 8-byte SGE */
	bool local; /* local operation: no data, no SGEs */
	bool bind; /* memory window bind: wr.bind_mw */
};

constexpr std::array kSendOpcodes{
	SendOpcode{IBV_WR_SEND, IB_UVERBS_WR_SEND, true, false, false, false,
		   false, false, false},
	SendOpcode{IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV, false,
		   false, true, false, false, false, false},
	SendOpcode{IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE, true, true,
		   false, false, false, false, false},
	SendOpcode{IBV_WR_RDMA_WRITE_WITH_IMM,
		   IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, true, true, false, true,
		   false, false, false},
	SendOpcode{IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ, false, true,
		   false, false, false, false, false},
	SendOpcode{IBV_WR_ATOMIC_CMP_AND_SWP,
		   IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, false, false, false, false,
		   true, false, false},
	SendOpcode{IBV_WR_ATOMIC_FETCH_AND_ADD,
		   IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, false, false, false,
		   false, true, false, false},
	SendOpcode{IBV_WR_LOCAL_INV, IB_UVERBS_WR_LOCAL_INV, false, false,
		   true, false, false, true, false},
	SendOpcode{IBV_WR_BIND_MW, IB_UVERBS_WR_BIND_MW, false, false, false,
		   false, false, true, true},
};

/* The verbs' numbering and the kernel's agree; xiw relies on neither. */
static_assert(static_cast<int>(IBV_WR_SEND) == IB_UVERBS_WR_SEND);
static_assert(static_cast<int>(IBV_WR_RDMA_READ) == IB_UVERBS_WR_RDMA_READ);

/* The opcode whose member (verb or wire) is key, or null. */
template <typename Key>
const SendOpcode *find_opcode(Key SendOpcode::*member, Key key) noexcept
{
	const auto *it = std::find_if(kSendOpcodes.begin(), kSendOpcodes.end(),
				      [member, key](const SendOpcode &op) {
					      return op.*member == key;
				      });
	return it == kSendOpcodes.end() ? nullptr : it;
}

struct FlagMap {
	unsigned int from;
	std::uint32_t to;
};

constexpr std::array kSendFlags{
	FlagMap{IBV_SEND_SIGNALED, XIW_WQE_SIGNALED},
	FlagMap{IBV_SEND_SOLICITED, XIW_WQE_SOLICITED},
	FlagMap{IBV_SEND_FENCE, XIW_WQE_FENCE},
};

constexpr std::array kCqeFlags{
	FlagMap{XIW_CQE_WITH_IMM, IBV_WC_WITH_IMM},
	FlagMap{XIW_CQE_WITH_INV, IBV_WC_WITH_INV},
};

template <std::size_t N>
std::uint32_t map_flags(unsigned int from,
			const std::array<FlagMap, N> &table) noexcept
{
	std::uint32_t to = 0;

	for (const FlagMap &map : table) {
		if ((from & map.from) != 0) {
			to |= map.to;
		}
	}
	return to;
}

/* The SGE list of a work request, or an empty one if it is malformed. */
std::span<const ibv_sge> sges_of(const ibv_sge *list, int num) noexcept
{
	if (num <= 0 || list == nullptr) {
		return {};
	}
	return {list, static_cast<std::size_t>(num)};
}

/*
 * Whether a work request's SGE list has at most max entries, where max is
 * the queue's limit capped by what its slot holds (the caller caps it).
 */
bool sge_count_ok(const ibv_sge *list, int num, std::uint32_t max) noexcept
{
	return num >= 0 && static_cast<std::uint32_t>(num) <= max &&
	       (num == 0 || list != nullptr);
}

/* The caller checked that from fits (sge_count_ok() with the slot's limit). */
template <std::size_t N>
void copy_sges(std::span<const ibv_sge> from, std::span<xiw_sge, N> to) noexcept
{
	std::transform(from.begin(), from.end(), to.begin(),
		       [](const ibv_sge &sge) {
			       return xiw_sge{sge.addr, sge.length, sge.lkey};
		       });
}

/* Where a buffer's data is and how long it is, for copy_inline(). */
const void *data_of(const ibv_sge &sge) noexcept
{
	// An SGE's address is the application's pointer to its data.
	// NOLINTNEXTLINE(performance-no-int-to-ptr)
	return reinterpret_cast<const void *>(sge.addr);
}
std::size_t length_of(const ibv_sge &sge) noexcept
{
	return sge.length;
}
const void *data_of(const ibv_data_buf &buf) noexcept
{
	return buf.addr;
}
std::size_t length_of(const ibv_data_buf &buf) noexcept
{
	return buf.length;
}

/* Forgets the data a builder or setter gave the SQE before. */
void clear_data(xiw_sqe &sqe) noexcept
{
	sqe.flags &= ~XIW_WQE_INLINE;
	sqe.num_sge = 0;
	sqe.inline_len = 0;
	std::fill(std::begin(sqe.sge), std::end(sqe.sge), xiw_sge{});
}

/*
 * Copies the data of the buffers into an SQE that has no data yet,
 * logically concatenated; EINVAL, nothing copied, if it is more than max.
 */
template <typename Buf>
int copy_inline(std::span<const Buf> bufs, std::uint32_t max,
		xiw_sqe &sqe) noexcept
{
	const std::size_t limit = std::min<std::size_t>(max, XIW_MAX_INLINE);
	std::size_t total = 0;

	for (const Buf &buf : bufs) {
		if (length_of(buf) > limit - total) {
			return EINVAL;
		}
		total += length_of(buf);
	}
	auto *dst = reinterpret_cast<std::byte *>(&sqe.sge[0]);
	for (const Buf &buf : bufs) {
		if (length_of(buf) == 0) {
			continue;
		}
		std::memcpy(dst, data_of(buf), length_of(buf));
		dst += length_of(buf);
	}
	sqe.flags |= XIW_WQE_INLINE;
	sqe.inline_len = static_cast<std::uint16_t>(total);
	return 0;
}

/*
 * begin_sqe(), returning the opcode's row (null for an opcode xiw cannot
 * carry, sqe then all zero).
 */
const SendOpcode *begin(const WrHead &head, const SendLimits &limits,
			xiw_sqe &sqe) noexcept
{
	const SendOpcode *op = find_opcode(&SendOpcode::verb, head.opcode);

	/* The fixed part only: the data is written as it is given. */
	std::memset(&sqe, 0, offsetof(xiw_sqe, sge));
	if (op == nullptr) {
		return nullptr;
	}
	sqe.opcode = op->wire;
	sqe.wr_id = head.wr_id;
	sqe.flags = map_flags(head.send_flags, kSendFlags);
	if (limits.sig_all) {
		sqe.flags |= XIW_WQE_SIGNALED;
	}
	return op;
}

/*
 * The SGE list of an SQE of opcode op that has no data yet; EINVAL if too
 * long, or, for an atomic, anything but the one 8-byte buffer its old
 * value goes to.
 */
int put_sges(std::span<const ibv_sge> sges, const SendLimits &limits,
	     const SendOpcode &op, xiw_sqe &sqe) noexcept
{
	if (op.local) {
		return sges.empty() ? 0 : EINVAL;
	}
	if (sges.size() > limits.max_sge || sges.size() > XIW_MAX_SGE) {
		return EINVAL;
	}
	if (op.atomic &&
	    (sges.size() != 1 || sges[0].length != sizeof(std::uint64_t))) {
		return EINVAL;
	}
	sqe.num_sge = static_cast<std::uint8_t>(sges.size());
	copy_sges(sges, std::span(sqe.sge));
	return 0;
}

} // namespace

int set_sqe_bind(const ibv_mw *mw, std::uint32_t rkey,
		 const ibv_mw_bind_info &info, xiw_sqe &sqe) noexcept
{
	if (sqe.opcode != IB_UVERBS_WR_BIND_MW || mw == nullptr ||
	    (info.length != 0 && info.mr == nullptr)) {
		return EINVAL;
	}
	sqe.ex = mw->rkey;
	sqe.rkey = rkey;
	sqe.raddr = info.addr;
	sqe.compare_add = info.length;
	sqe.mw_lkey = info.mr != nullptr ? info.mr->lkey : 0;
	/* IBV_ACCESS_* are the kernel's IB_UVERBS_ACCESS_* values. */
	sqe.mw_access = info.mw_access_flags;
	return 0;
}

int begin_sqe(const WrHead &head, const SendLimits &limits,
	      xiw_sqe &sqe) noexcept
{
	const SendOpcode *op = begin(head, limits, sqe);

	std::fill(std::begin(sqe.sge), std::end(sqe.sge), xiw_sge{});
	return op != nullptr ? 0 : EINVAL;
}

int set_sqe_sges(std::span<const ibv_sge> sges, const SendLimits &limits,
		 xiw_sqe &sqe) noexcept
{
	const SendOpcode *op = find_opcode(&SendOpcode::wire, sqe.opcode);

	clear_data(sqe);
	if (op == nullptr) {
		return EINVAL;
	}
	return put_sges(sges, limits, *op, sqe);
}

int set_sqe_inline(std::span<const ibv_data_buf> bufs,
		   const SendLimits &limits, xiw_sqe &sqe) noexcept
{
	const SendOpcode *op = find_opcode(&SendOpcode::wire, sqe.opcode);

	clear_data(sqe);
	if (op == nullptr || !op->may_inline) {
		return EINVAL;
	}
	return copy_inline(bufs, limits.max_inline, sqe);
}

int build_sqe(const ibv_send_wr &wr, const SendLimits &limits,
	      xiw_sqe &sqe) noexcept
{
	const bool want_inline = (wr.send_flags & IBV_SEND_INLINE) != 0;
	const SendOpcode *found =
		begin({wr.opcode, wr.wr_id, wr.send_flags}, limits, sqe);

	if (found == nullptr ||
	    !sge_count_ok(
		    wr.sg_list, wr.num_sge,
		    std::min<std::uint32_t>(limits.max_sge, XIW_MAX_SGE)) ||
	    (want_inline && !found->may_inline)) {
		return EINVAL;
	}
	const SendOpcode &op = *found;
	// The opcode says which member of each verbs union is meant.
	// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
	if (op.bind) {
		if (wr.num_sge != 0) {
			return EINVAL;
		}
		return set_sqe_bind(wr.bind_mw.mw, wr.bind_mw.rkey,
				    wr.bind_mw.bind_info, sqe);
	}
	if (op.invalidates) {
		sqe.ex = wr.invalidate_rkey;
	}
	if (op.immediate) {
		/* As posted, in network byte order: the peer sees the same. */
		sqe.ex = wr.imm_data;
	}
	if (op.remote) {
		sqe.rkey = wr.wr.rdma.rkey;
		sqe.raddr = wr.wr.rdma.remote_addr;
	}
	if (op.atomic) {
		sqe.rkey = wr.wr.atomic.rkey;
		sqe.raddr = wr.wr.atomic.remote_addr;
		sqe.compare_add = wr.wr.atomic.compare_add;
		sqe.swap = wr.wr.atomic.swap;
	}
	// NOLINTEND(cppcoreguidelines-pro-type-union-access)

	const std::span<const ibv_sge> sges = sges_of(wr.sg_list, wr.num_sge);
	if (want_inline) {
		return copy_inline(sges, limits.max_inline, sqe);
	}
	return put_sges(sges, limits, op, sqe);
}

int build_rqe(const ibv_recv_wr &wr, std::uint32_t max_sge,
	      xiw_rqe &rqe) noexcept
{
	if (!sge_count_ok(wr.sg_list, wr.num_sge,
			  std::min<std::uint32_t>(max_sge, XIW_MAX_RECV_SGE))) {
		return EINVAL;
	}
	const std::span<const ibv_sge> sges = sges_of(wr.sg_list, wr.num_sge);

	std::memset(&rqe, 0, offsetof(xiw_rqe, sge));
	rqe.wr_id = wr.wr_id;
	rqe.num_sge = static_cast<std::uint8_t>(sges.size());
	copy_sges(sges, std::span(rqe.sge));
	return 0;
}

void translate_cqe(const xiw_cqe &cqe, ibv_wc &wc) noexcept
{
	wc = ibv_wc{};
	wc.wr_id = cqe.wr_id;
	wc.status = static_cast<ibv_wc_status>(cqe.status);
	wc.opcode = static_cast<ibv_wc_opcode>(cqe.opcode);
	wc.vendor_err = cqe.vendor_err;
	wc.byte_len = cqe.byte_len;
	wc.qp_num = cqe.qp_num;
	wc.wc_flags = map_flags(cqe.flags, kCqeFlags);
	// wc_flags says which member of the verbs union is meant.
	// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
	if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) {
		wc.imm_data = cqe.ex;
	} else if ((wc.wc_flags & IBV_WC_WITH_INV) != 0) {
		wc.invalidated_rkey = cqe.ex;
	}
	// NOLINTEND(cppcoreguidelines-pro-type-union-access)
}

int push_send_chain(RingProducer<xiw_sqe> &sq, const SendLimits &limits,
		    ibv_send_wr *&wr, std::uint32_t &posted) noexcept
{
	posted = 0;
	for (; wr != nullptr; wr = wr->next) {
		/*
		 * Built in place: build_sqe() writes what the kernel reads of
		 * the slot and nothing more, and leaves XIW_SLOT_VALID clear.
		 * A request it refuses leaves the slot unpublished.
		 */
		xiw_sqe *sqe = sq.claim();

		if (sqe == nullptr) {
			xiw_sqe unused{}; /* a refused request's EINVAL first */
			const int err = build_sqe(*wr, limits, unused);

			return err != 0 ? err : ENOMEM;
		}
		const int err = build_sqe(*wr, limits, *sqe);

		if (err != 0) {
			return err;
		}
		sq.publish(sqe->flags);
		++posted;
	}
	return 0;
}

int push_recv_chain(RingProducer<xiw_rqe> &rq, std::uint32_t max_sge,
		    ibv_recv_wr *&wr, std::uint32_t &posted) noexcept
{
	posted = 0;
	for (; wr != nullptr; wr = wr->next) {
		xiw_rqe *rqe = rq.claim(); /* in place, as in push_send_chain() */

		if (rqe == nullptr) {
			xiw_rqe unused{};
			const int err = build_rqe(*wr, max_sge, unused);

			return err != 0 ? err : ENOMEM;
		}
		const int err = build_rqe(*wr, max_sge, *rqe);

		if (err != 0) {
			return err;
		}
		rq.publish(rqe->flags);
		++posted;
	}
	return 0;
}

} // namespace xiw
