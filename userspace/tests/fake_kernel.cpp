// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The fake xiw kernel driver and the libc functions it interposes: see
 * fake_kernel.h.
 */
#include "fake_kernel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"
#include "ring.h"
#include "xiw.h"

namespace xiw_test {

FakeKernel kernel;

namespace {

/* The system calls themselves, past the interposed functions. */
void *raw_mmap(void *addr, std::size_t len, int prot, int flags, int fd,
	       off_t offset)
{
	// The system call returns the address as a long.
	// NOLINTNEXTLINE(performance-no-int-to-ptr)
	return reinterpret_cast<void *>(
		syscall(SYS_mmap, addr, len, prot, flags, fd, offset));
}

int raw_munmap(void *addr, std::size_t len)
{
	return static_cast<int>(syscall(SYS_munmap, addr, len));
}

ssize_t fail(int err)
{
	errno = err;
	return -1;
}

std::byte *user_ptr(std::uint64_t address)
{
	// Commands carry user addresses as integers.
	// NOLINTNEXTLINE(performance-no-int-to-ptr)
	return reinterpret_cast<std::byte *>(
		static_cast<std::uintptr_t>(address));
}

/* A legacy command as written, and the room its caller left for the answer. */
struct Command {
	const std::byte *bytes;
	std::size_t len;
	ib_uverbs_cmd_hdr hdr;
	std::size_t out;
	/* Where to answer: most core commands start with the address. */
	std::uint64_t response;
};

/* Copies the answer, as much as there is room for, to the command's address. */
void put_response(const Command &cmd, const void *data, std::size_t len)
{
	std::memcpy(user_ptr(cmd.response), data, std::min(cmd.out, len));
}

/*
 * A core response followed by the driver's: the driver's right after the
 * core one, which is cut short if that leaves too little room (see
 * fake_kernel.h).
 */
template <typename Core, typename Drv>
bool put_split_response(const Command &cmd, const Core &core, const Drv &drv)
{
	if (cmd.out < sizeof(drv)) {
		return false;
	}
	const std::size_t core_len =
		std::min(cmd.out - sizeof(drv), sizeof(core));

	std::memcpy(user_ptr(cmd.response), &core, core_len);
	std::memcpy(user_ptr(cmd.response) + core_len, &drv, sizeof(drv));
	return true;
}

template <typename T> T read_at(const std::byte *cmd, std::size_t offset)
{
	T value{};
	std::memcpy(&value, cmd + offset, sizeof(value));
	return value;
}

/* The kernel struct that follows the header, if the command is long enough. */
template <typename Req> bool read_req(const Command &cmd, Req &req)
{
	if (cmd.len < sizeof(ib_uverbs_cmd_hdr) + sizeof(Req)) {
		return false;
	}
	std::memcpy(&req, cmd.bytes + sizeof(ib_uverbs_cmd_hdr), sizeof(req));
	return true;
}

/* A new ring of num slots, under a fresh key. */
template <typename Slot> FakeRing *new_ring(std::uint32_t num)
{
	const std::size_t len = expected_ring_len<Slot>(num);
	std::unique_ptr<FakeRing> ring = FakeRing::create(
		{.len = len, .key = kernel.next_key, .num = num});

	if (!ring) {
		return nullptr;
	}
	kernel.next_key += len;
	kernel.rings.push_back(std::move(ring));
	return kernel.rings.back().get();
}

/* As many slots as asked for, at least one, in a power of two. */
std::uint32_t slots_for(std::uint32_t wanted)
{
	return std::bit_ceil(std::max<std::uint32_t>(wanted, 1));
}

/* The driver's side of a new CQ: its handle, ring and answer. */
struct NewCq {
	std::uint32_t handle;
	std::uint32_t num;
	FakeRing *ring;
	xiw_create_cq_resp drv;
};

/* 0, or the errno the creation fails with; the CQ is not registered yet. */
int new_cq(std::uint32_t cqe, NewCq &cq)
{
	if (kernel.create_errno != 0) {
		return kernel.create_errno;
	}
	cq.num = slots_for(cqe);
	cq.ring = new_ring<xiw_cqe>(cq.num);
	if (cq.ring == nullptr) {
		return ENOMEM;
	}
	cq.handle = kernel.next_handle++;
	cq.drv = xiw_create_cq_resp{};
	cq.drv.cq_key = cq.ring->key();
	cq.drv.cq_id = cq.handle;
	cq.drv.num_cqe = cq.num;
	return 0;
}

void note_destroy()
{
	kernel.mappings_at_destroy.push_back(kernel.user_mappings.size());
}

/* ---- Context, device, port, PD ---------------------------------------- */

/*
 * The extended CREATE_CQ (ibv_create_cq_ex() without the ioctl interface):
 * the core response at the address the extended header names, the
 * driver's right after the core's out_words, as the kernel places udata.
 */
ssize_t create_cq_ex(const std::byte *cmd, std::size_t len,
		     const ib_uverbs_cmd_hdr &hdr, const ib_uverbs_ex_cmd_hdr &ex)
{
	const std::size_t at = sizeof(hdr) + sizeof(ex);
	ibv_ex_create_cq_resp core{};

	if (len < at + sizeof(ib_uverbs_ex_create_cq) ||
	    std::size_t{hdr.out_words} * 8 < sizeof(core) ||
	    std::size_t{ex.provider_out_words} * 8 <
		    sizeof(xiw_create_cq_resp)) {
		return fail(EINVAL);
	}
	const auto req = read_at<ib_uverbs_ex_create_cq>(cmd, at);
	/* xiw's create_cq takes no flags (no timestamps, no overrun). */
	if (req.flags != 0) {
		return fail(EOPNOTSUPP);
	}
	NewCq cq{};
	if (const int err = new_cq(req.cqe, cq); err != 0) {
		return fail(err);
	}
	core.base.cq_handle = cq.handle;
	core.base.cqe = cq.num;
	core.response_length = sizeof(core);
	std::memcpy(user_ptr(ex.response), &core, sizeof(core));
	std::memcpy(user_ptr(ex.response) + std::size_t{hdr.out_words} * 8,
		    &cq.drv, sizeof(cq.drv));
	kernel.cqs[cq.handle] = FakeCq{cq.num, cq.ring, 0};
	return static_cast<ssize_t>(len);
}

ssize_t fake_ex_command(const std::byte *cmd, std::size_t len,
			const ib_uverbs_cmd_hdr &hdr)
{
	const auto ex = read_at<ib_uverbs_ex_cmd_hdr>(cmd, sizeof(hdr));
	const std::uint32_t command = hdr.command &
				      ~IB_USER_VERBS_CMD_FLAG_EXTENDED;

	if (command == IB_USER_VERBS_EX_CMD_CREATE_CQ) {
		return create_cq_ex(cmd, len, hdr, ex);
	}
	if (command != IB_USER_VERBS_EX_CMD_QUERY_DEVICE) {
		return fail(EOPNOTSUPP);
	}
	ib_uverbs_ex_query_device_resp resp{};
	const std::size_t out =
		std::min(std::size_t{hdr.out_words} * 8, sizeof(resp));
	resp.base.max_qp = 77;
	resp.base.phys_port_cnt = 1;
	resp.response_length = static_cast<std::uint32_t>(out);
	std::memcpy(user_ptr(ex.response), &resp, out);
	return static_cast<ssize_t>(len);
}

ssize_t get_context(const Command &cmd)
{
	/* The kernel's core response, then the driver's, back to back. */
	ib_uverbs_get_context_resp core{};
	xiw_alloc_ucontext_resp drv{};
	std::array<std::byte, sizeof(core) + sizeof(drv)> resp{};

	if (kernel.get_context_errno != 0) {
		return fail(kernel.get_context_errno);
	}
	if (cmd.out < sizeof(core)) {
		return fail(ENOSPC);
	}
	kernel.async_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	core.async_fd = static_cast<std::uint32_t>(kernel.async_fd);
	core.num_comp_vectors = 1;
	drv.abi_version = kernel.abi_version;
	std::memcpy(resp.data(), &core, sizeof(core));
	std::memcpy(resp.data() + sizeof(core), &drv, sizeof(drv));
	put_response(cmd, resp.data(),
		     kernel.write_driver_resp ? resp.size() : sizeof(core));
	return 0;
}

ssize_t query_port(const Command &cmd)
{
	ib_uverbs_query_port_resp resp{};

	kernel.queried_port = read_at<std::uint8_t>(
		cmd.bytes, sizeof(ib_uverbs_cmd_hdr) +
				   offsetof(ib_uverbs_query_port, port_num));
	resp.state = IBV_PORT_ACTIVE;
	resp.max_mtu = IBV_MTU_4096;
	resp.active_mtu = IBV_MTU_1024;
	resp.gid_tbl_len = 1;
	resp.pkey_tbl_len = 1;
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

ssize_t alloc_pd(const Command &cmd)
{
	ib_uverbs_alloc_pd_resp resp{};

	if (kernel.alloc_pd_errno != 0) {
		return fail(kernel.alloc_pd_errno);
	}
	resp.pd_handle = kernel.next_pd_handle++;
	kernel.live_pds.push_back(resp.pd_handle);
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

ssize_t dealloc_pd(const Command &cmd)
{
	const auto handle =
		read_at<std::uint32_t>(cmd.bytes, sizeof(ib_uverbs_cmd_hdr));
	auto it = std::find(kernel.live_pds.begin(), kernel.live_pds.end(),
			    handle);

	if (kernel.dealloc_pd_errno != 0) {
		return fail(kernel.dealloc_pd_errno);
	}
	if (it == kernel.live_pds.end()) {
		return fail(EINVAL);
	}
	kernel.live_pds.erase(it);
	return 0;
}

/* ---- CQ ---------------------------------------------------------------- */

ssize_t create_cq(const Command &cmd)
{
	ib_uverbs_create_cq req{};
	ib_uverbs_create_cq_resp core{};
	NewCq cq{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (const int err = new_cq(req.cqe, cq); err != 0) {
		return fail(err);
	}
	core.cq_handle = cq.handle;
	core.cqe = cq.num;
	if (kernel.tweak_cq_resp) {
		kernel.tweak_cq_resp(cq.drv);
	}
	if (!put_split_response(cmd, core, cq.drv)) {
		return fail(ENOSPC);
	}
	kernel.cqs[cq.handle] = FakeCq{cq.num, cq.ring, 0};
	return 0;
}

ssize_t destroy_cq(const Command &cmd)
{
	ib_uverbs_destroy_cq req{};
	ib_uverbs_destroy_cq_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	note_destroy();
	if (kernel.destroy_errno != 0) {
		return fail(kernel.destroy_errno);
	}
	auto it = kernel.cqs.find(req.cq_handle);
	if (it == kernel.cqs.end()) {
		return fail(EINVAL);
	}
	it->second.ring->mappable = false;
	kernel.cqs.erase(it);
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

/*
 * The driver's resize: the CQEs pending (the valid run that ends at the
 * producer's index) move to the first slots of a new ring under a new
 * key, with the control words; the old ring can no longer be mapped.
 */
ssize_t resize_cq(const Command &cmd)
{
	ib_uverbs_resize_cq req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	auto it = kernel.cqs.find(req.cq_handle);
	if (it == kernel.cqs.end()) {
		return fail(EINVAL);
	}
	if (kernel.resize_errno != 0) {
		return fail(kernel.resize_errno);
	}
	FakeCq &cq = it->second;
	FakeRing &old = *cq.ring;
	std::uint32_t pending = 0;
	while (pending < old.num() &&
	       (old.flags<xiw_cqe>(cq.prod - 1 - pending) & XIW_SLOT_VALID) !=
		       0) {
		++pending;
	}
	const std::uint32_t num = slots_for(req.cqe);
	if (req.cqe < 1 || pending > num) {
		return fail(EINVAL);
	}
	FakeRing *ring = new_ring<xiw_cqe>(num);
	if (ring == nullptr) {
		return fail(ENOMEM);
	}
	for (std::uint32_t i = 0; i < pending; ++i) {
		ring->slot<xiw_cqe>(i) =
			old.slot<xiw_cqe>(cq.prod - pending + i);
	}
	ring->ctrl().cq_notify = old.ctrl().cq_notify;
	ring->ctrl().cq_overflow = old.ctrl().cq_overflow;
	old.mappable = false;
	cq = FakeCq{num, ring, pending};

	ibv_resize_cq_resp core{};
	xiw_resize_cq_resp drv{};
	core.cqe = num;
	drv.cq_key = ring->key();
	drv.num_cqe = num;
	if (!put_split_response(cmd, core, drv)) {
		return fail(ENOSPC);
	}
	return 0;
}

/* ---- QP ---------------------------------------------------------------- */

ssize_t create_qp(const Command &cmd)
{
	ib_uverbs_create_qp req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (req.qp_type != IB_UVERBS_QPT_RC) {
		return fail(EOPNOTSUPP);
	}
	if (kernel.create_errno != 0) {
		return fail(kernel.create_errno);
	}
	const std::uint32_t num_sqe = slots_for(req.max_send_wr);
	const std::uint32_t num_rqe =
		req.is_srq != 0 ? 0 : slots_for(req.max_recv_wr);
	FakeRing *sq = new_ring<xiw_sqe>(num_sqe);
	FakeRing *rq = num_rqe == 0 ? nullptr : new_ring<xiw_rqe>(num_rqe);
	if (sq == nullptr || (num_rqe != 0 && rq == nullptr)) {
		return fail(ENOMEM);
	}
	const std::uint32_t handle = kernel.next_handle++;
	ib_uverbs_create_qp_resp core{};
	xiw_create_qp_resp drv{};

	core.qp_handle = handle;
	core.qpn = handle + 1000;
	core.max_send_wr = num_sqe;
	core.max_recv_wr = num_rqe;
	core.max_send_sge = req.max_send_sge;
	core.max_recv_sge = req.max_recv_sge;
	core.max_inline_data = kernel.max_inline;
	drv.sq_key = sq->key();
	drv.rq_key = rq == nullptr ? XIW_INVALID_MMAP_KEY : rq->key();
	drv.qp_id = core.qpn;
	drv.num_sqe = num_sqe;
	drv.num_rqe = num_rqe;
	drv.max_inline = kernel.max_inline;
	if (kernel.tweak_qp_resp) {
		kernel.tweak_qp_resp(drv);
	}
	if (!put_split_response(cmd, core, drv)) {
		return fail(ENOSPC);
	}
	kernel.qps[handle] = FakeQp{
		.user_handle = req.user_handle,
		.pd_handle = req.pd_handle,
		.send_cq_handle = req.send_cq_handle,
		.recv_cq_handle = req.recv_cq_handle,
		.srq_handle = req.srq_handle,
		.is_srq = req.is_srq != 0,
		.sq_sig_all = req.sq_sig_all != 0,
		.qpn = core.qpn,
		.state = IBV_QPS_INIT,
		.sq = sq,
		.rq = rq,
	};
	/* As the module does: a new QP is in iWARP's Idle, published as INIT. */
	set_qp_state(kernel.qps[handle], IBV_QPS_INIT);
	return 0;
}

ssize_t modify_qp(const Command &cmd)
{
	ib_uverbs_modify_qp req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	auto it = kernel.qps.find(req.qp_handle);
	if (it == kernel.qps.end()) {
		return fail(EINVAL);
	}
	kernel.modify_qp_mask = req.attr_mask;
	if ((req.attr_mask & IBV_QP_STATE) != 0) {
		set_qp_state(it->second, req.qp_state);
	}
	return 0;
}

ssize_t query_qp(const Command &cmd)
{
	ib_uverbs_query_qp req{};
	ib_uverbs_query_qp_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	auto it = kernel.qps.find(req.qp_handle);
	if (it == kernel.qps.end()) {
		return fail(EINVAL);
	}
	resp.qp_state = static_cast<std::uint8_t>(it->second.state);
	resp.cur_qp_state = resp.qp_state;
	resp.max_send_wr = it->second.sq->num();
	resp.max_inline_data = kernel.max_inline;
	resp.sq_sig_all = it->second.sq_sig_all ? 1 : 0;
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

ssize_t destroy_qp(const Command &cmd)
{
	ib_uverbs_destroy_qp req{};
	ib_uverbs_destroy_qp_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	note_destroy();
	if (kernel.destroy_errno != 0) {
		return fail(kernel.destroy_errno);
	}
	auto it = kernel.qps.find(req.qp_handle);
	if (it == kernel.qps.end()) {
		return fail(EINVAL);
	}
	it->second.sq->mappable = false;
	if (it->second.rq != nullptr) {
		it->second.rq->mappable = false;
	}
	kernel.qps.erase(it);
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

/* The doorbells: POST_SEND and POST_RECV have the same fixed part. */
ssize_t doorbell(const Command &cmd)
{
	ib_uverbs_post_send req{};
	ib_uverbs_post_send_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	kernel.doorbells.push_back(Doorbell{
		.command = cmd.hdr.command,
		.in_words = cmd.hdr.in_words,
		.out_words = cmd.hdr.out_words,
		.bytes = cmd.len,
		.qp_handle = req.qp_handle,
		.wr_count = req.wr_count,
		.sge_count = req.sge_count,
		.wqe_size = req.wqe_size,
	});
	if (kernel.doorbell_errno != 0) {
		return fail(kernel.doorbell_errno);
	}
	if (kernel.qps.find(req.qp_handle) == kernel.qps.end()) {
		return fail(EINVAL);
	}
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

/* ---- SRQ --------------------------------------------------------------- */

ssize_t create_srq(const Command &cmd)
{
	ib_uverbs_create_srq req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (kernel.create_errno != 0) {
		return fail(kernel.create_errno);
	}
	const std::uint32_t num = slots_for(req.max_wr);
	FakeRing *ring = new_ring<xiw_rqe>(num);
	if (ring == nullptr) {
		return fail(ENOMEM);
	}
	const std::uint32_t handle = kernel.next_handle++;
	ib_uverbs_create_srq_resp core{};
	xiw_create_srq_resp drv{};

	core.srq_handle = handle;
	core.max_wr = num;
	core.max_sge = req.max_sge;
	core.srqn = handle;
	drv.srq_key = ring->key();
	drv.num_rqe = num;
	if (kernel.tweak_srq_resp) {
		kernel.tweak_srq_resp(drv);
	}
	if (!put_split_response(cmd, core, drv)) {
		return fail(ENOSPC);
	}
	kernel.srqs[handle] =
		FakeSrq{req.pd_handle, num, req.max_sge, req.srq_limit, ring};
	return 0;
}

ssize_t modify_srq(const Command &cmd)
{
	ib_uverbs_modify_srq req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	auto it = kernel.srqs.find(req.srq_handle);
	if (it == kernel.srqs.end()) {
		return fail(EINVAL);
	}
	kernel.modify_srq_mask = req.attr_mask;
	if ((req.attr_mask & IBV_SRQ_LIMIT) != 0) {
		it->second.srq_limit = req.srq_limit;
	}
	return 0;
}

ssize_t query_srq(const Command &cmd)
{
	ib_uverbs_query_srq req{};
	ib_uverbs_query_srq_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	auto it = kernel.srqs.find(req.srq_handle);
	if (it == kernel.srqs.end()) {
		return fail(EINVAL);
	}
	resp.max_wr = it->second.max_wr;
	resp.max_sge = it->second.max_sge;
	resp.srq_limit = it->second.srq_limit;
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

ssize_t destroy_srq(const Command &cmd)
{
	ib_uverbs_destroy_srq req{};
	ib_uverbs_destroy_srq_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	note_destroy();
	if (kernel.destroy_errno != 0) {
		return fail(kernel.destroy_errno);
	}
	auto it = kernel.srqs.find(req.srq_handle);
	if (it == kernel.srqs.end()) {
		return fail(EINVAL);
	}
	it->second.ring->mappable = false;
	kernel.srqs.erase(it);
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

/* ---- MR ---------------------------------------------------------------- */

ssize_t reg_mr(const Command &cmd)
{
	ib_uverbs_reg_mr req{};
	ib_uverbs_reg_mr_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (kernel.create_errno != 0) {
		return fail(kernel.create_errno);
	}
	const std::uint32_t handle = kernel.next_handle++;

	resp.mr_handle = handle;
	resp.lkey = 0x1000 + handle;
	resp.rkey = 0x2000 + handle;
	kernel.mrs[handle] = FakeMr{req.start,	   req.length,	     req.hca_va,
				    req.pd_handle, req.access_flags, resp.lkey,
				    resp.rkey};
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

ssize_t dereg_mr(const Command &cmd)
{
	ib_uverbs_dereg_mr req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (kernel.destroy_errno != 0) {
		return fail(kernel.destroy_errno);
	}
	if (kernel.mrs.erase(req.mr_handle) == 0) {
		return fail(EINVAL);
	}
	return 0;
}

/* ---- MW ---------------------------------------------------------------- */

ssize_t alloc_mw(const Command &cmd)
{
	ib_uverbs_alloc_mw req{};
	ib_uverbs_alloc_mw_resp resp{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (kernel.create_errno != 0) {
		return fail(kernel.create_errno);
	}
	const std::uint32_t handle = kernel.next_handle++;

	resp.mw_handle = handle;
	resp.rkey = (handle << 8) | 0x5a;
	kernel.mws[handle] = FakeMw{req.pd_handle, req.mw_type, resp.rkey};
	put_response(cmd, &resp, sizeof(resp));
	return 0;
}

ssize_t dealloc_mw(const Command &cmd)
{
	ib_uverbs_dealloc_mw req{};

	if (!read_req(cmd, req)) {
		return fail(EINVAL);
	}
	if (kernel.destroy_errno != 0) {
		return fail(kernel.destroy_errno);
	}
	if (kernel.mws.erase(req.mw_handle) == 0) {
		return fail(EINVAL);
	}
	return 0;
}

/* Returns 0 or -1 with errno set, as each handler does. */
ssize_t dispatch(const Command &cmd)
{
	switch (cmd.hdr.command) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		return get_context(cmd);
	case IB_USER_VERBS_CMD_QUERY_DEVICE: {
		ib_uverbs_query_device_resp resp{};

		resp.max_qp = 77;
		resp.phys_port_cnt = 1;
		put_response(cmd, &resp, sizeof(resp));
		return 0;
	}
	case IB_USER_VERBS_CMD_QUERY_PORT:
		return query_port(cmd);
	case IB_USER_VERBS_CMD_ALLOC_PD:
		return alloc_pd(cmd);
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return dealloc_pd(cmd);
	case IB_USER_VERBS_CMD_CREATE_CQ:
		return create_cq(cmd);
	case IB_USER_VERBS_CMD_DESTROY_CQ:
		return destroy_cq(cmd);
	case IB_USER_VERBS_CMD_RESIZE_CQ:
		return resize_cq(cmd);
	case IB_USER_VERBS_CMD_CREATE_QP:
		return create_qp(cmd);
	case IB_USER_VERBS_CMD_MODIFY_QP:
		return modify_qp(cmd);
	case IB_USER_VERBS_CMD_QUERY_QP:
		return query_qp(cmd);
	case IB_USER_VERBS_CMD_DESTROY_QP:
		return destroy_qp(cmd);
	case IB_USER_VERBS_CMD_POST_SEND:
	case IB_USER_VERBS_CMD_POST_RECV:
		return doorbell(cmd);
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		return create_srq(cmd);
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
		return modify_srq(cmd);
	case IB_USER_VERBS_CMD_QUERY_SRQ:
		return query_srq(cmd);
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
		return destroy_srq(cmd);
	case IB_USER_VERBS_CMD_REG_MR:
		return reg_mr(cmd);
	case IB_USER_VERBS_CMD_DEREG_MR:
		return dereg_mr(cmd);
	case IB_USER_VERBS_CMD_ALLOC_MW:
		return alloc_mw(cmd);
	case IB_USER_VERBS_CMD_DEALLOC_MW:
		return dealloc_mw(cmd);
	default:
		return fail(EOPNOTSUPP);
	}
}

ssize_t fake_uverbs_write(const void *buf, std::size_t len)
{
	const auto *cmd = static_cast<const std::byte *>(buf);
	ib_uverbs_cmd_hdr hdr{};

	if (len < sizeof(hdr)) {
		return fail(EINVAL);
	}
	std::memcpy(&hdr, cmd, sizeof(hdr));
	kernel.seen.push_back({hdr.command, hdr.in_words, hdr.out_words, len});

	if ((hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) != 0) {
		return fake_ex_command(cmd, len, hdr);
	}
	/* What the kernel checks of every legacy command. */
	if (std::size_t{hdr.in_words} * 4 != len) {
		return fail(EINVAL);
	}
	const Command command{
		.bytes = cmd,
		.len = len,
		.hdr = hdr,
		.out = std::size_t{hdr.out_words} * 4,
		.response = read_at<std::uint64_t>(cmd, sizeof(hdr)),
	};
	if (dispatch(command) != 0) {
		return -1;
	}
	return static_cast<ssize_t>(len);
}

/* The arguments of an mmap() call that the fake answers. */
struct MmapCall {
	std::size_t len;
	int prot;
	int flags;
	off_t offset;
};

/* What the real driver's mmap op checks, then the memfd behind the ring. */
void *fake_mmap(const MmapCall &call)
{
	const std::size_t len = call.len;
	const off_t offset = call.offset;

	if (kernel.mmap_errno != 0) {
		errno = kernel.mmap_errno;
		return MAP_FAILED;
	}
	auto it = std::find_if(
		kernel.rings.begin(), kernel.rings.end(),
		[offset](const auto &ring) {
			return ring->mappable &&
			       ring->key() ==
				       static_cast<std::uint64_t>(offset);
		});
	if (it == kernel.rings.end() || (*it)->len() != len ||
	    call.prot != (PROT_READ | PROT_WRITE) || call.flags != MAP_SHARED) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	void *addr = raw_mmap(nullptr, len, call.prot, call.flags,
			      (*it)->memfd(), 0);
	if (addr != MAP_FAILED) {
		kernel.user_mappings.push_back({addr, len, (*it)->key()});
	}
	return addr;
}

} // namespace

std::unique_ptr<FakeRing> FakeRing::create(const RingShape &shape)
{
	const int fd = memfd_create("xiw-fake-ring", MFD_CLOEXEC);

	if (fd < 0) {
		return nullptr;
	}
	if (ftruncate(fd, static_cast<off_t>(shape.len)) != 0) {
		close(fd);
		return nullptr;
	}
	void *view = raw_mmap(nullptr, shape.len, PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd, 0);
	if (view == MAP_FAILED) {
		close(fd);
		return nullptr;
	}
	std::unique_ptr<FakeRing> ring(new FakeRing);
	ring->memfd_ = fd;
	ring->view_ = static_cast<std::byte *>(view);
	ring->len_ = shape.len;
	ring->key_ = shape.key;
	ring->num_ = shape.num;
	return ring;
}

FakeRing::~FakeRing()
{
	raw_munmap(view_, len_);
	close(memfd_);
}

void set_qp_state(FakeQp &qp, std::uint32_t state)
{
	qp.state = state;
	xiw::shared_word(qp.sq->ctrl().qp_state)
		.store(state, std::memory_order_release);
	if (qp.rq != nullptr) {
		xiw::shared_word(qp.rq->ctrl().qp_state)
			.store(state, std::memory_order_release);
	}
}

void FakeDevice::SetUp()
{
	kernel = FakeKernel{};

	// What libibverbs does with a device the provider claimed.
	vdev_ = xiw::kDeviceOps.alloc_device(&sysfs_);
	ASSERT_NE(vdev_, nullptr);
	vdev_->ops = &xiw::kDeviceOps;
	vdev_->refcount = 1;
	vdev_->sysfs = &sysfs_;
	sysfs_.num_ports = kSysfsPorts;
	constexpr std::string_view kName = "xiw_test0";
	kName.copy(static_cast<char *>(vdev_->device.name), kName.size());

	kernel.cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(kernel.cmd_fd, 0);
}

void FakeDevice::TearDown()
{
	kernel.cmd_fd = -1;
	EXPECT_TRUE(kernel.user_mappings.empty())
		<< "a ring mapping was leaked";
	EXPECT_EQ(kernel.bad_unmaps, 0);
	if (vdev_ == nullptr) {
		return;
	}
	EXPECT_EQ(vdev_->refcount, 1) << "a context was leaked";
	xiw::kDeviceOps.uninit_device(vdev_);
}

namespace {

/*
 * What libibverbs' ibv_open_device() puts in verbs_context after the
 * provider made it (set_lib_ops()): ibv_create_cq_ex() goes through its
 * own wrapper, which checks the flags, calls the provider's op and then
 * sets up the ibv_cq part the application reads.
 */
ibv_cq_ex *lib_create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr)
{
	if ((attr->wc_flags & ~std::uint64_t{IBV_CREATE_CQ_SUP_WC_FLAGS}) != 0) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	ibv_cq_ex *cq = xiw::create_cq_ex(ctx, attr);
	if (cq != nullptr) {
		cq->context = ctx;
		cq->channel = attr->channel;
		cq->cq_context = attr->cq_context;
	}
	return cq;
}

} // namespace

ibv_context *FakeDevice::open_context()
{
	verbs_context *vctx = xiw::kDeviceOps.alloc_context(
		&vdev_->device, kernel.cmd_fd, nullptr);

	if (vctx == nullptr) {
		return nullptr;
	}
	vctx->create_cq_ex = lib_create_cq_ex;
	return &vctx->context;
}

const SeenCommand *FakeDevice::last_seen(std::uint32_t command)
{
	auto it = std::find_if(kernel.seen.rbegin(), kernel.seen.rend(),
			       [command](const SeenCommand &seen) {
				       return seen.command == command;
			       });
	return it == kernel.seen.rend() ? nullptr : &*it;
}

std::size_t FakeDevice::count_seen(std::uint32_t command)
{
	return static_cast<std::size_t>(
		std::count_if(kernel.seen.begin(), kernel.seen.end(),
			      [command](const SeenCommand &seen) {
				      return seen.command == command;
			      }));
}

void FakeContext::SetUp()
{
	FakeDevice::SetUp();
	if (HasFatalFailure()) {
		return;
	}
	ctx_ = open_context();
	ASSERT_NE(ctx_, nullptr) << std::strerror(errno);
	pd_ = ibv_alloc_pd(ctx_);
	ASSERT_NE(pd_, nullptr) << std::strerror(errno);
}

void FakeContext::TearDown()
{
	if (pd_ != nullptr) {
		EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
	}
	if (ctx_ != nullptr) {
		EXPECT_EQ(ibv_close_device(ctx_), 0);
	}
	EXPECT_TRUE(kernel.cqs.empty()) << "a CQ was leaked";
	EXPECT_TRUE(kernel.qps.empty()) << "a QP was leaked";
	EXPECT_TRUE(kernel.srqs.empty()) << "an SRQ was leaked";
	EXPECT_TRUE(kernel.mrs.empty()) << "an MR was leaked";
	FakeDevice::TearDown();
}

ibv_qp_init_attr FakeContext::rc_attr(ibv_cq *cq, ibv_srq *srq)
{
	ibv_qp_init_attr attr{};

	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.srq = srq;
	attr.cap.max_send_wr = 8;
	attr.cap.max_recv_wr = srq == nullptr ? 8 : 0;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = srq == nullptr ? 2 : 0;
	attr.cap.max_inline_data = 64;
	attr.qp_type = IBV_QPT_RC;
	return attr;
}

} // namespace xiw_test

/* Interposes libc's write() for libibverbs and the provider. */
extern "C" ssize_t write(int fd, const void *buf, std::size_t count)
{
	if (fd >= 0 && fd == xiw_test::kernel.cmd_fd) {
		return xiw_test::fake_uverbs_write(buf, count);
	}
	return syscall(SYS_write, fd, buf, count);
}

/* Interposes libc's mmap() for the provider. */
extern "C" void *mmap(void *addr, std::size_t len, int prot, int flags, int fd,
		      off_t offset) noexcept
{
	if (fd >= 0 && fd == xiw_test::kernel.cmd_fd) {
		return xiw_test::fake_mmap({len, prot, flags, offset});
	}
	return xiw_test::raw_mmap(addr, len, prot, flags, fd, offset);
}

/* Interposes libc's munmap(), to see the provider unmap its rings. */
extern "C" int munmap(void *addr, std::size_t len) noexcept
{
	auto &maps = xiw_test::kernel.user_mappings;
	auto it = std::find_if(maps.begin(), maps.end(),
			       [addr](const xiw_test::UserMapping &map) {
				       return map.addr == addr;
			       });
	if (it != maps.end()) {
		if (it->len != len) {
			++xiw_test::kernel.bad_unmaps;
		}
		maps.erase(it);
	}
	return xiw_test::raw_munmap(addr, len);
}
