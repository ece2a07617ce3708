// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Owners of the memory the kernel shares with the provider: each SQ, RQ,
 * SRQ and CQ ring is one mapping of the command fd at the key the kernel
 * returned when it created the queue, unmapped when its owner goes away.
 */
#ifndef XIW_MAPPING_H
#define XIW_MAPPING_H

#include <cstddef>
#include <cstdint>

#include <rdma/xiw-abi.h>

#include "ring.h"

namespace xiw {

/*
 * One shared read-write mapping, with its length. Move-only; empty after a
 * failed map() or a move.
 */
class MappedArea {
public:
	MappedArea() noexcept = default;
	~MappedArea() { reset(); }
	MappedArea(const MappedArea &) = delete;
	MappedArea &operator=(const MappedArea &) = delete;
	MappedArea(MappedArea &&other) noexcept;
	MappedArea &operator=(MappedArea &&other) noexcept;

	/* len bytes of fd at offset key; empty with errno set on failure. */
	static MappedArea map(int fd, std::uint64_t key,
			      std::size_t len) noexcept;

	[[nodiscard]] std::byte *data() const noexcept { return addr_; }
	[[nodiscard]] std::size_t size() const noexcept { return len_; }
	explicit operator bool() const noexcept { return addr_ != nullptr; }

private:
	MappedArea(std::byte *addr, std::size_t len) noexcept
		: addr_(addr), len_(len)
	{
	}
	void reset() noexcept;

	std::byte *addr_ = nullptr;
	std::size_t len_ = 0;
};

/* The system's page size, which ring mappings are rounded up to. */
PageSize page_size() noexcept;

/* A mapped ring: the control block, then the slots. */
template <RingSlot Slot> class MappedRing {
public:
	MappedRing() noexcept = default;

	/*
	 * Maps the ring of num slots the kernel published at key on fd. Empty
	 * with errno set on failure; num must pass valid_ring_slots().
	 */
	static MappedRing map(int fd, std::uint64_t key,
			      std::uint32_t num) noexcept
	{
		MappedRing ring;

		ring.area_ = MappedArea::map(
			fd, key, ring_bytes<Slot>(num, page_size()));
		if (ring.area_) {
			ring.num_ = num;
		}
		return ring;
	}

	/* The control block; access each of its words with shared_word(). */
	[[nodiscard]] xiw_ring_ctrl &ctrl() const noexcept
	{
		return *reinterpret_cast<xiw_ring_ctrl *>(area_.data());
	}
	[[nodiscard]] Slot *slots() const noexcept
	{
		return reinterpret_cast<Slot *>(area_.data() +
						sizeof(xiw_ring_ctrl));
	}
	[[nodiscard]] std::uint32_t num() const noexcept { return num_; }
	explicit operator bool() const noexcept
	{
		return static_cast<bool>(area_);
	}

private:
	MappedArea area_;
	std::uint32_t num_ = 0;
};

} // namespace xiw

#endif // XIW_MAPPING_H
