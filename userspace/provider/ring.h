// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The slot protocol of xiw's shared rings (rdma/xiw-abi.h, "Shared rings"),
 * independent of where the ring lives: the provider runs it on the rings it
 * maps from the kernel, the unit tests on ordinary memory with both sides
 * in user space.
 *
 * A ring is a power-of-two number of slots. The producer and the consumer
 * each keep a free-running index that no one else reads; ownership of a
 * slot travels in its flags word alone, which is the first member of every
 * slot type and is only ever touched atomically:
 *
 *   producer: acquire-load flags, find VALID clear (the consumer is done
 *             with the slot: its copy happened before its release store);
 *             write the body; release-store flags | VALID.
 *   consumer: acquire-load flags, find VALID set (the body is complete);
 *             copy the body; release-store 0 (the producer may reuse it).
 *
 * Neither side ever writes the other's index or reads a slot it does not
 * own, so the only synchronisation needed is on the flags word. A slot
 * whose flags word lacks VALID is the producer's whatever else the word
 * holds: a producer may fill slots ahead and hand them over later.
 */
#ifndef XIW_RING_H
#define XIW_RING_H

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <pthread.h>

#include <rdma/xiw-abi.h>

namespace xiw {

/*
 * The kernel accesses the same words with READ_ONCE/smp_load_acquire and
 * smp_store_release: an atomic_ref that fell back to a lock would not
 * synchronise with it.
 */
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(xiw_ring_ctrl) == 64);

/*
 * A word of shared memory that the other side writes or reads concurrently:
 * a slot's flags, or a field of struct xiw_ring_ctrl.
 */
inline std::atomic_ref<std::uint32_t> shared_word(std::uint32_t &word) noexcept
{
	return std::atomic_ref<std::uint32_t>(word);
}

/* The most slots accepted in a ring; the device limits are lower. */
inline constexpr std::uint32_t kMaxRingSlots = 1U << 20;

constexpr bool valid_ring_slots(std::uint32_t num) noexcept
{
	return num != 0 && num <= kMaxRingSlots && (num & (num - 1)) == 0;
}

/* A ring slot: plain data whose first member is the flags word. */
template <typename Slot>
concept RingSlot = std::is_standard_layout_v<Slot> &&
	std::is_trivially_copyable_v<Slot> &&
	std::same_as<decltype(Slot::flags), std::uint32_t> &&
	(alignof(Slot) >= alignof(std::uint32_t));

/* A page size in bytes, a power of two. */
struct PageSize {
	std::size_t bytes;
};

/*
 * Bytes of one ring mapping: the control block, then num slots, rounded up
 * to whole pages. num must pass valid_ring_slots().
 */
template <RingSlot Slot>
constexpr std::size_t ring_bytes(std::uint32_t num, PageSize page) noexcept
{
	const std::size_t bytes = sizeof(xiw_ring_ctrl) + num * sizeof(Slot);

	return (bytes + page.bytes - 1) & ~(page.bytes - 1);
}

/*
 * Serialises the threads on one side of one ring: posters on an SQ, RQ or
 * SRQ, pollers on a CQ. The other side is the kernel, which needs no lock
 * with us: the slot protocol is enough.
 *
 * A spinlock, as rdma-core's providers use for their queues: it is held
 * for a few dozen instructions (a slot copied in or out), and a poll loop
 * takes it on every empty poll, where a pthread mutex's lock and unlock
 * cost twice the poll itself (Documentation/performance.rst, thirty-third
 * run). Not std::mutex, whose lock() reports failure by throwing: the
 * provider is built without exceptions. pthread_spin_init() cannot fail
 * on Linux for a process-private lock. Use with std::lock_guard.
 */
class QueueLock {
public:
	QueueLock() noexcept
	{
		pthread_spin_init(&lock_, PTHREAD_PROCESS_PRIVATE);
	}
	~QueueLock() { pthread_spin_destroy(&lock_); }
	QueueLock(const QueueLock &) = delete;
	QueueLock &operator=(const QueueLock &) = delete;
	QueueLock(QueueLock &&) = delete;
	QueueLock &operator=(QueueLock &&) = delete;

	void lock() noexcept { pthread_spin_lock(&lock_); }
	void unlock() noexcept { pthread_spin_unlock(&lock_); }

private:
	pthread_spinlock_t lock_{};
};

namespace ring_detail {

/* The body of a slot is everything after its flags word. */
template <RingSlot Slot> void copy_body(Slot &dst, const Slot &src) noexcept
{
	static_assert(offsetof(Slot, flags) == 0);
	constexpr std::size_t kFlags = sizeof(std::uint32_t);

	std::memcpy(reinterpret_cast<std::byte *>(&dst) + kFlags,
		    reinterpret_cast<const std::byte *>(&src) + kFlags,
		    sizeof(Slot) - kFlags);
}

} // namespace ring_detail

/*
 * The producing side of a ring. The index is the producer's alone; callers
 * serialise with the lock of the queue (an SQ's, RQ's or SRQ's QueueLock in
 * the provider).
 */
template <RingSlot Slot> class RingProducer {
public:
	constexpr RingProducer() noexcept = default;
	RingProducer(Slot *slots, std::uint32_t num) noexcept
		: slots_(slots), mask_(num - 1)
	{
	}

	/* Whether the next slot is still the consumer's. */
	[[nodiscard]] bool full() const noexcept
	{
		return (flags(next()).load(std::memory_order_acquire) &
			XIW_SLOT_VALID) != 0;
	}

	/*
	 * Copies content, all but its flags word, into the next slot and hands
	 * the slot over with flags | XIW_SLOT_VALID. Returns false, having
	 * written nothing, if the ring is full.
	 */
	bool push(const Slot &content, std::uint32_t flags_word) noexcept
	{
		Slot *slot = claim();

		if (slot == nullptr) {
			return false;
		}
		ring_detail::copy_body(*slot, content);
		publish(flags_word);
		return true;
	}

	/*
	 * The next slot, for the caller to fill in place, or null if it is
	 * still the consumer's. The consumer reads nothing of a slot, its
	 * flags word included, until XIW_SLOT_VALID is set there, so the
	 * caller may write any of it, the flags word too as long as it
	 * leaves XIW_SLOT_VALID clear. publish() then hands it over; a slot
	 * claimed and not published stays the producer's, and the next
	 * claim() returns it again.
	 */
	[[nodiscard]] Slot *claim() const noexcept
	{
		Slot &slot = next();

		return (flags(slot).load(std::memory_order_acquire) &
			XIW_SLOT_VALID) != 0 ?
			       nullptr :
			       &slot;
	}

	/* Hands over the slot claim() returned, with flags_word. */
	void publish(std::uint32_t flags_word) noexcept
	{
		flags(next()).store(flags_word | XIW_SLOT_VALID,
				    std::memory_order_release);
		++index_;
	}

	/*
	 * A batch that is handed over all at once or not at all
	 * (ibv_wr_start() to ibv_wr_complete() or ibv_wr_abort()) is written
	 * ahead of the index first. stage() copies content, all but its
	 * flags word, into the slot ahead slots past the next one and stores
	 * flags_word there without XIW_SLOT_VALID: the slot stays the
	 * producer's, and the consumer passes it by as empty. Returns false,
	 * having written nothing, if the slot is still the consumer's or if
	 * ahead is not less than the ring's size (the batch would overwrite
	 * itself).
	 */
	bool stage(std::uint32_t ahead, const Slot &content,
		   std::uint32_t flags_word) noexcept
	{
		if (ahead > mask_) {
			return false;
		}
		Slot &slot = at(index_ + ahead);

		if ((flags(slot).load(std::memory_order_acquire) &
		     XIW_SLOT_VALID) != 0) {
			return false;
		}
		ring_detail::copy_body(slot, content);
		flags(slot).store(flags_word & ~XIW_SLOT_VALID,
				  std::memory_order_relaxed);
		return true;
	}

	/* Hands over the first count staged slots, in order. */
	void publish_staged(std::uint32_t count) noexcept
	{
		for (std::uint32_t i = 0; i < count; ++i) {
			std::atomic_ref<std::uint32_t> word = flags(next());

			word.store(word.load(std::memory_order_relaxed) |
					   XIW_SLOT_VALID,
				   std::memory_order_release);
			++index_;
		}
	}

	/* Forgets the first count staged slots: they are empty again. */
	void discard_staged(std::uint32_t count) noexcept
	{
		for (std::uint32_t i = 0; i < count; ++i) {
			flags(at(index_ + i)).store(0, std::memory_order_relaxed);
		}
	}

	/* Slots produced so far, modulo 2^32. */
	[[nodiscard]] std::uint32_t index() const noexcept { return index_; }

private:
	[[nodiscard]] Slot &at(std::uint32_t index) const noexcept
	{
		return slots_[index & mask_];
	}
	[[nodiscard]] Slot &next() const noexcept { return at(index_); }

	static std::atomic_ref<std::uint32_t> flags(Slot &slot) noexcept
	{
		return shared_word(slot.flags);
	}

	Slot *slots_ = nullptr;
	std::uint32_t mask_ = 0;
	std::uint32_t index_ = 0;
};

/*
 * The consuming side of a ring. The index is the consumer's alone; callers
 * serialise with the lock of the queue (a CQ's QueueLock in the provider).
 */
template <RingSlot Slot> class RingConsumer {
public:
	constexpr RingConsumer() noexcept = default;
	RingConsumer(Slot *slots, std::uint32_t num) noexcept
		: slots_(slots), mask_(num - 1)
	{
	}

	/*
	 * If the producer has published the next slot: copies it to out (the
	 * flags word as it was published, XIW_SLOT_VALID included), hands the
	 * slot back and returns true. Otherwise returns false and leaves out
	 * alone.
	 */
	bool pop(Slot &out) noexcept
	{
		Slot &slot = slots_[index_ & mask_];
		std::atomic_ref<std::uint32_t> flags = shared_word(slot.flags);
		const std::uint32_t flags_word =
			flags.load(std::memory_order_acquire);

		if ((flags_word & XIW_SLOT_VALID) == 0) {
			return false;
		}
		ring_detail::copy_body(out, slot);
		out.flags = flags_word;
		flags.store(0, std::memory_order_release);
		++index_;
		return true;
	}

	/* Slots consumed so far, modulo 2^32. */
	[[nodiscard]] std::uint32_t index() const noexcept { return index_; }

private:
	Slot *slots_ = nullptr;
	std::uint32_t mask_ = 0;
	std::uint32_t index_ = 0;
};

} // namespace xiw

#endif // XIW_RING_H
