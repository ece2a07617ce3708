// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A fake xiw kernel driver for testing the provider's entry points end to
 * end through libibverbs, without the xiw module.
 *
 * The command fd is /dev/null: ioctl() on it fails with ENOTTY, which
 * libibverbs takes for a kernel without the ioctl interface, so it falls
 * back to the legacy write() commands. A test binary linking
 * fake_kernel.cpp defines write(), mmap() and munmap(), which libibverbs's
 * and the provider's calls bind to ahead of libc's:
 *
 *   write() on the command fd answers each command the way the kernel's
 *   uverbs write handlers and the xiw driver do: the core response, then
 *   the driver's, to the user address the command names.
 *
 *   mmap() on the command fd maps the ring the fake created under that key
 *   (a memfd, which the fake keeps its own mapping of, as the real driver
 *   keeps its vmalloc one), with the real driver's checks on the length
 *   and flags; munmap() of such a mapping is recorded.
 *
 * Every other fd and address goes to the real system call.
 *
 * libibverbs picks the layout of a legacy core response by the uverbs ABI
 * version it read while scanning for devices, which these tests never do:
 * for CREATE_QP and CREATE_SRQ it then asks for the short responses of
 * uverbs ABI 3 and 5, while in production (the ioctl path) the core
 * response does not share the buffer at all. Either way the driver's part
 * starts right after the core part the provider declared, where libibverbs
 * points the kernel's udata. The fake therefore places the driver response
 * at the end of the response buffer and the core response, cut to the room
 * left, before it: the kernel's own layout whenever the two coincide.
 */
#ifndef XIW_TEST_FAKE_KERNEL_H
#define XIW_TEST_FAKE_KERNEL_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"
#include "mapping.h"
#include "ring.h"

namespace xiw_test {

struct SeenCommand {
	std::uint32_t command;
	std::uint16_t in_words;
	std::uint16_t out_words;
	std::size_t bytes;
};

/* A POST_SEND or POST_RECV command, which xiw only sends as a doorbell. */
struct Doorbell {
	std::uint32_t command;
	std::uint16_t in_words;
	std::uint16_t out_words;
	std::size_t bytes;
	std::uint32_t qp_handle;
	std::uint32_t wr_count;
	std::uint32_t sge_count;
	std::uint32_t wqe_size;
};

/* Where a ring goes and how big it is. */
struct RingShape {
	std::size_t len; /* whole pages */
	std::uint64_t key;
	std::uint32_t num; /* slots */
};

/* A ring the fake shares with the provider, seen from the kernel's side. */
class FakeRing {
public:
	/* A fresh memfd of shape.len bytes, mapped for the kernel. */
	static std::unique_ptr<FakeRing> create(const RingShape &shape);
	~FakeRing();
	FakeRing(const FakeRing &) = delete;
	FakeRing &operator=(const FakeRing &) = delete;
	FakeRing(FakeRing &&) = delete;
	FakeRing &operator=(FakeRing &&) = delete;

	[[nodiscard]] xiw_ring_ctrl &ctrl() const
	{
		return *reinterpret_cast<xiw_ring_ctrl *>(view_);
	}
	template <typename Slot> [[nodiscard]] Slot *slots() const
	{
		return reinterpret_cast<Slot *>(view_ + sizeof(xiw_ring_ctrl));
	}
	/* The slot an index falls on. */
	template <typename Slot>
	[[nodiscard]] Slot &slot(std::uint32_t index) const
	{
		return slots<Slot>()[index & (num_ - 1)];
	}
	/* The flags word of a slot, read as the consumer would. */
	template <typename Slot>
	[[nodiscard]] std::uint32_t flags(std::uint32_t index) const
	{
		return xiw::shared_word(slot<Slot>(index).flags)
			.load(std::memory_order_acquire);
	}
	/* Hands a slot back to the producer, as the consumer would. */
	template <typename Slot> void consume(std::uint32_t index) const
	{
		xiw::shared_word(slot<Slot>(index).flags)
			.store(0, std::memory_order_release);
	}

	[[nodiscard]] int memfd() const { return memfd_; }
	[[nodiscard]] std::size_t len() const { return len_; }
	[[nodiscard]] std::uint64_t key() const { return key_; }
	[[nodiscard]] std::uint32_t num() const { return num_; }

	/* Whether mmap() may still map it: its object was not destroyed. */
	bool mappable = true;

private:
	FakeRing() = default;

	int memfd_ = -1;
	std::byte *view_ = nullptr;
	std::size_t len_ = 0;
	std::uint64_t key_ = 0;
	std::uint32_t num_ = 0;
};

struct FakeCq {
	std::uint32_t cqe;
	FakeRing *ring;
	/* CQEs the test produced into the ring, as the kernel's index. */
	std::uint32_t prod;
};

/*
 * The kernel's request structs end in flexible arrays and cannot be
 * members; the fakes keep the fields the tests look at.
 */
struct FakeQp {
	std::uint64_t user_handle;
	std::uint32_t pd_handle;
	std::uint32_t send_cq_handle;
	std::uint32_t recv_cq_handle;
	std::uint32_t srq_handle;
	bool is_srq;
	bool sq_sig_all;
	std::uint32_t qpn;
	std::uint32_t state;
	FakeRing *sq;
	FakeRing *rq; /* null with an SRQ */
};

struct FakeSrq {
	std::uint32_t pd_handle;
	std::uint32_t max_wr;
	std::uint32_t max_sge;
	std::uint32_t srq_limit;
	FakeRing *ring;
};

struct FakeMr {
	std::uint64_t start;
	std::uint64_t length;
	std::uint64_t hca_va;
	std::uint32_t pd_handle;
	std::uint32_t access;
	std::uint32_t lkey;
	std::uint32_t rkey;
};

struct FakeMw {
	std::uint32_t pd_handle;
	std::uint8_t type;
	std::uint32_t rkey;
};

/* A mapping the provider made of a fake ring, not unmapped yet. */
struct UserMapping {
	void *addr;
	std::size_t len;
	std::uint64_t key;
};

struct FakeKernel {
	int cmd_fd = -1;
	int async_fd = -1; /* handed out by GET_CONTEXT */

	/* What GET_CONTEXT answers. */
	int get_context_errno = 0;
	bool write_driver_resp = true;
	std::uint32_t abi_version = XIW_ABI_VERSION;

	int alloc_pd_errno = 0;
	int dealloc_pd_errno = 0;
	std::uint32_t next_pd_handle = 42;
	std::vector<std::uint32_t> live_pds;

	std::uint8_t queried_port = 0;
	std::vector<SeenCommand> seen;

	/* Failures to inject, errno values or 0. */
	/* CREATE_CQ, CREATE_QP, CREATE_SRQ, REG_MR, ALLOC_MW */
	int create_errno = 0;
	int destroy_errno = 0; /* DESTROY_CQ/QP/SRQ, DEREG_MR, DEALLOC_MW */
	int doorbell_errno = 0; /* POST_SEND, POST_RECV */
	int mmap_errno = 0;
	int resize_errno = 0; /* RESIZE_CQ */
	std::uint32_t max_inline = XIW_MAX_INLINE;

	/* Changes to the driver responses, before they are written. */
	std::function<void(xiw_create_cq_resp &)> tweak_cq_resp;
	std::function<void(xiw_create_qp_resp &)> tweak_qp_resp;
	std::function<void(xiw_create_srq_resp &)> tweak_srq_resp;

	/* Live objects by handle; destroyed ones are erased. */
	std::map<std::uint32_t, FakeCq> cqs;
	std::map<std::uint32_t, FakeQp> qps;
	std::map<std::uint32_t, FakeSrq> srqs;
	std::map<std::uint32_t, FakeMr> mrs;
	std::map<std::uint32_t, FakeMw> mws;
	std::uint32_t next_handle = 100;
	std::uint64_t next_key = 0x100000;
	std::vector<std::unique_ptr<FakeRing>> rings;

	std::vector<UserMapping> user_mappings;
	/* User mappings still there when each DESTROY_* arrived. */
	std::vector<std::size_t> mappings_at_destroy;
	/* munmap() calls whose length differed from the mapping's. */
	int bad_unmaps = 0;

	std::vector<Doorbell> doorbells;
	/* The last MODIFY_QP and MODIFY_SRQ, as sent. */
	std::uint32_t modify_qp_mask = 0;
	std::uint32_t modify_srq_mask = 0;
};
extern FakeKernel kernel;

/* The state a real driver would publish in both of a QP's rings. */
void set_qp_state(FakeQp &qp, std::uint32_t state);

/* What ring_bytes() should come to for num slots, in this process. */
template <typename Slot> std::size_t expected_ring_len(std::uint32_t num)
{
	return xiw::ring_bytes<Slot>(num, xiw::page_size());
}

/*
 * A device that the provider has claimed, as libibverbs sets one up, and
 * the fake kernel, reset for every test.
 */
class FakeDevice : public ::testing::Test {
protected:
	void SetUp() override;
	void TearDown() override;

	/* ibv_open_device() without the sysfs lookup. */
	ibv_context *open_context();

	[[nodiscard]] static const SeenCommand *
	last_seen(std::uint32_t command);
	[[nodiscard]] static std::size_t count_seen(std::uint32_t command);

	/* Distinct from the kernel's phys_port_cnt, to tell the two apart. */
	static constexpr std::uint32_t kSysfsPorts = 3;

	verbs_sysfs_dev sysfs_{};
	verbs_device *vdev_ = nullptr;
};

/* An open context and a PD on the fake device; checks for leaks after. */
class FakeContext : public FakeDevice {
protected:
	void SetUp() override;
	void TearDown() override;

	/* The attributes of a small RC QP on cq (and srq, if given). */
	static ibv_qp_init_attr rc_attr(ibv_cq *cq, ibv_srq *srq = nullptr);

	ibv_context *ctx_ = nullptr;
	ibv_pd *pd_ = nullptr;
};

} // namespace xiw_test

#endif // XIW_TEST_FAKE_KERNEL_H
