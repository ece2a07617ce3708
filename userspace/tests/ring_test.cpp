// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The ring slot protocol (ring.h) on ordinary memory, with both sides in
 * this process: single-threaded for the rules, then with threads on each
 * side for the memory orders and the locking the provider relies on.
 */
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <rdma/xiw-abi.h>

#include "deadline.h"
#include "ring.h"

namespace {

struct TestSlot {
	std::uint32_t flags;
	std::uint32_t producer;
	std::uint64_t seq;
	std::uint64_t check; /* derived from producer and seq */
};
static_assert(xiw::RingSlot<TestSlot>);
static_assert(xiw::RingSlot<xiw_sqe>);
static_assert(xiw::RingSlot<xiw_rqe>);
static_assert(xiw::RingSlot<xiw_cqe>);

constexpr std::uint64_t check_of(std::uint32_t producer, std::uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ULL) ^ producer;
}

TestSlot entry(std::uint32_t producer, std::uint64_t seq)
{
	return TestSlot{0, producer, seq, check_of(producer, seq)};
}

std::uint32_t flags_of(TestSlot &slot)
{
	return xiw::shared_word(slot.flags).load(std::memory_order_acquire);
}

/* Both ends of a ring of num slots in a vector. */
struct Ring {
	explicit Ring(std::uint32_t num)
		: slots(num), producer(slots.data(), num),
		  consumer(slots.data(), num)
	{
	}

	std::vector<TestSlot> slots;
	xiw::RingProducer<TestSlot> producer;
	xiw::RingConsumer<TestSlot> consumer;
};

TEST(RingSlots, AcceptsPowersOfTwoUpToTheLimit)
{
	EXPECT_FALSE(xiw::valid_ring_slots(0));
	EXPECT_TRUE(xiw::valid_ring_slots(1));
	EXPECT_TRUE(xiw::valid_ring_slots(2));
	EXPECT_FALSE(xiw::valid_ring_slots(3));
	EXPECT_FALSE(xiw::valid_ring_slots(96));
	EXPECT_TRUE(xiw::valid_ring_slots(16384));
	EXPECT_TRUE(xiw::valid_ring_slots(xiw::kMaxRingSlots));
	EXPECT_FALSE(xiw::valid_ring_slots(xiw::kMaxRingSlots * 2));
	EXPECT_FALSE(xiw::valid_ring_slots(0x80000000U));
}

TEST(RingSlots, SizeTheMappingInWholePages)
{
	constexpr xiw::PageSize kPage{4096};

	EXPECT_EQ(sizeof(xiw_ring_ctrl), 64U);
	EXPECT_EQ(xiw::ring_bytes<xiw_cqe>(1, kPage), 4096U);
	/* 64 + 126 * 32 is exactly one page, one more slot is not. */
	EXPECT_EQ(xiw::ring_bytes<xiw_cqe>(126, kPage), 4096U);
	EXPECT_EQ(xiw::ring_bytes<xiw_cqe>(127, kPage), 8192U);
	/* 64 + 64 * 184 fits three pages: the control block costs none. */
	EXPECT_EQ(xiw::ring_bytes<xiw_sqe>(64, kPage), 12288U);
	EXPECT_EQ(xiw::ring_bytes<xiw_sqe>(128, kPage), 24576U);
	/* 64 + 64 * 112 fits two pages. */
	EXPECT_EQ(xiw::ring_bytes<xiw_rqe>(64, kPage), 8192U);
	EXPECT_EQ(xiw::ring_bytes<xiw_rqe>(16384, kPage),
		  (64U + 16384U * 112U + 4095U) / 4096U * 4096U);
	EXPECT_EQ(xiw::ring_bytes<xiw_sqe>(64, xiw::PageSize{65536}), 65536U);
}

TEST(Ring, StartsEmpty)
{
	Ring ring(8);
	TestSlot out{};

	EXPECT_FALSE(ring.consumer.pop(out));
	EXPECT_FALSE(ring.producer.full());
	EXPECT_EQ(ring.consumer.index(), 0U);
}

TEST(Ring, HandsOverTheBodyAndTheFlags)
{
	Ring ring(8);
	TestSlot content = entry(3, 7);
	content.flags = 0xdead; /* not the producer's to set this way */

	ASSERT_TRUE(ring.producer.push(content, 0x5));
	EXPECT_EQ(flags_of(ring.slots[0]), XIW_SLOT_VALID | 0x5);
	EXPECT_EQ(ring.slots[0].seq, 7U);
	EXPECT_EQ(ring.producer.index(), 1U);

	TestSlot out{};
	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_EQ(out.flags, XIW_SLOT_VALID | 0x5);
	EXPECT_EQ(out.producer, 3U);
	EXPECT_EQ(out.seq, 7U);
	EXPECT_EQ(out.check, check_of(3, 7));
	/* Handed back: flags cleared, the rest left as it was. */
	EXPECT_EQ(flags_of(ring.slots[0]), 0U);
	EXPECT_EQ(ring.slots[0].seq, 7U);
	EXPECT_FALSE(ring.consumer.pop(out));
}

TEST(Ring, CopiesEveryByteOfARealSlot)
{
	std::vector<xiw_sqe> slots(4);
	xiw::RingProducer<xiw_sqe> producer(slots.data(), 4);
	xiw_sqe content{};
	auto *bytes = reinterpret_cast<unsigned char *>(&content);
	for (std::size_t i = sizeof(content.flags); i < sizeof(content); ++i) {
		bytes[i] = static_cast<unsigned char>(i);
	}

	ASSERT_TRUE(producer.push(content, 0));
	content.flags = XIW_SLOT_VALID;
	EXPECT_EQ(std::memcmp(slots.data(), &content, sizeof(content)), 0);
}

TEST(Ring, RefusesToOverwriteASlotTheConsumerHolds)
{
	constexpr std::uint32_t kNum = 8;
	Ring ring(kNum);

	for (std::uint32_t i = 0; i < kNum; ++i) {
		ASSERT_TRUE(ring.producer.push(entry(0, i), 0)) << i;
	}
	EXPECT_TRUE(ring.producer.full());
	EXPECT_FALSE(ring.producer.push(entry(0, 99), 0));
	EXPECT_EQ(ring.producer.index(), kNum);
	EXPECT_EQ(ring.slots[0].seq, 0U) << "a full ring was overwritten";

	TestSlot out{};
	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_FALSE(ring.producer.full());
	ASSERT_TRUE(ring.producer.push(entry(0, kNum), 0));
	EXPECT_EQ(ring.slots[0].seq, kNum); /* the freed slot, reused */
	EXPECT_TRUE(ring.producer.full());
}

TEST(Ring, ClaimedSlotsStayTheProducersUntilPublished)
{
	constexpr std::uint32_t kNum = 2;
	Ring ring(kNum);
	TestSlot out{};

	TestSlot *slot = ring.producer.claim();
	ASSERT_EQ(slot, ring.slots.data());
	*slot = entry(4, 40);
	slot->flags = 0x3; /* without XIW_SLOT_VALID: still the producer's */
	EXPECT_FALSE(ring.consumer.pop(out));
	/* Not published: the same slot again, the index unmoved. */
	EXPECT_EQ(ring.producer.claim(), ring.slots.data());
	EXPECT_EQ(ring.producer.index(), 0U);

	ring.producer.publish(0x3);
	EXPECT_EQ(ring.producer.index(), 1U);
	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_EQ(out.flags, XIW_SLOT_VALID | 0x3);
	EXPECT_EQ(out.seq, 40U);
	EXPECT_EQ(out.check, check_of(4, 40));

	ASSERT_TRUE(ring.producer.push(entry(0, 1), 0));
	ASSERT_TRUE(ring.producer.push(entry(0, 2), 0));
	EXPECT_EQ(ring.producer.claim(), nullptr) << "a full ring";
}

TEST(Ring, StagedSlotsStayTheProducersUntilPublished)
{
	constexpr std::uint32_t kNum = 8;
	Ring ring(kNum);
	TestSlot out{};

	ASSERT_TRUE(ring.producer.stage(0, entry(1, 10), 0x5 | XIW_SLOT_VALID));
	ASSERT_TRUE(ring.producer.stage(1, entry(1, 11), 0x6));
	EXPECT_EQ(flags_of(ring.slots[0]), 0x5U) << "VALID before publishing";
	EXPECT_EQ(ring.slots[1].seq, 11U);
	EXPECT_EQ(ring.producer.index(), 0U);
	EXPECT_FALSE(ring.consumer.pop(out)) << "a staged slot was taken";

	ring.producer.publish_staged(2);
	EXPECT_EQ(ring.producer.index(), 2U);
	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_EQ(out.flags, XIW_SLOT_VALID | 0x5);
	EXPECT_EQ(out.seq, 10U);
	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_EQ(out.flags, XIW_SLOT_VALID | 0x6);
	EXPECT_EQ(out.check, check_of(1, 11));
	EXPECT_FALSE(ring.consumer.pop(out));
}

TEST(Ring, DiscardedSlotsAreEmptyAndReused)
{
	Ring ring(4);
	TestSlot out{};

	ASSERT_TRUE(ring.producer.stage(0, entry(2, 20), 0x7));
	ASSERT_TRUE(ring.producer.stage(1, entry(2, 21), 0x7));
	ring.producer.discard_staged(2);
	EXPECT_EQ(flags_of(ring.slots[0]), 0U);
	EXPECT_EQ(flags_of(ring.slots[1]), 0U);
	EXPECT_EQ(ring.producer.index(), 0U);
	EXPECT_FALSE(ring.consumer.pop(out));

	ASSERT_TRUE(ring.producer.push(entry(2, 22), 0));
	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_EQ(out.seq, 22U);
}

TEST(Ring, StagingStopsAtTheConsumersSlotsAndAtOneLap)
{
	constexpr std::uint32_t kNum = 4;
	Ring ring(kNum);
	TestSlot out{};

	ASSERT_TRUE(ring.producer.push(entry(0, 0), 0));
	ASSERT_TRUE(ring.producer.push(entry(0, 1), 0));
	ASSERT_TRUE(ring.consumer.pop(out));
	/* Slot 1 is the consumer's: only slots 2, 3 and 0 can be staged. */
	EXPECT_TRUE(ring.producer.stage(0, entry(0, 2), 0));
	EXPECT_TRUE(ring.producer.stage(1, entry(0, 3), 0));
	EXPECT_TRUE(ring.producer.stage(2, entry(0, 4), 0));
	EXPECT_FALSE(ring.producer.stage(3, entry(0, 5), 0));
	EXPECT_EQ(ring.slots[1].seq, 1U) << "a held slot was overwritten";

	ASSERT_TRUE(ring.consumer.pop(out));
	EXPECT_TRUE(ring.producer.stage(3, entry(0, 5), 0));
	/* A fifth would land on the first staged slot. */
	EXPECT_FALSE(ring.producer.stage(kNum, entry(0, 6), 0));
	EXPECT_FALSE(ring.producer.stage(0xffffffffU, entry(0, 6), 0));
	EXPECT_EQ(ring.slots[2].seq, 2U);

	ring.producer.publish_staged(kNum);
	for (std::uint64_t seq = 2; seq < 6; ++seq) {
		ASSERT_TRUE(ring.consumer.pop(out));
		EXPECT_EQ(out.seq, seq);
	}
	EXPECT_FALSE(ring.consumer.pop(out));
}

/* Batches of every size from 1 to the ring's, lap after lap. */
TEST(Ring, WrapsAroundOverManyLaps)
{
	constexpr std::uint32_t kNum = 8;
	constexpr std::uint32_t kLaps = 2000;
	Ring ring(kNum);
	std::uint64_t pushed = 0;
	std::uint64_t popped = 0;

	while (pushed < std::uint64_t{kLaps} * kNum) {
		const std::uint32_t batch =
			1 + static_cast<std::uint32_t>(pushed % kNum);
		for (std::uint32_t i = 0; i < batch; ++i) {
			const std::size_t at = pushed % kNum;
			ASSERT_TRUE(ring.producer.push(entry(0, pushed), 0));
			ASSERT_EQ(ring.slots[at].seq, pushed);
			++pushed;
		}
		for (std::uint32_t i = 0; i < batch; ++i) {
			TestSlot out{};
			ASSERT_TRUE(ring.consumer.pop(out));
			ASSERT_EQ(out.seq, popped);
			ASSERT_EQ(out.check, check_of(0, popped));
			++popped;
		}
		TestSlot out{};
		ASSERT_FALSE(ring.consumer.pop(out));
	}
	EXPECT_EQ(ring.producer.index(), static_cast<std::uint32_t>(pushed));
	EXPECT_EQ(ring.consumer.index(), ring.producer.index());
}

/* ---- Threads --------------------------------------------------------- */

/* What one producer thread pushes: (id, 0) to (id, count - 1). */
struct Stream {
	std::uint32_t id;
	std::uint64_t count;
};

using xiw_test::Deadline;

/*
 * Pushes a stream, under lock if given, waiting while the ring is full but
 * not past the deadline.
 */
void produce(xiw::RingProducer<TestSlot> &producer, xiw::QueueLock *lock,
	     Stream stream, const Deadline &deadline)
{
	for (std::uint64_t seq = 0; seq < stream.count; ++seq) {
		const TestSlot content = entry(stream.id, seq);
		while (!deadline.passed()) {
			bool pushed = false;
			if (lock != nullptr) {
				const std::lock_guard<xiw::QueueLock> guard(
					*lock);
				pushed = producer.push(content, stream.id);
			} else {
				pushed = producer.push(content, stream.id);
			}
			if (pushed) {
				break;
			}
			std::this_thread::yield();
		}
	}
}

TEST(RingThreads, AProducerAndAConsumerExchangeAMillionEntries)
{
	constexpr std::uint64_t kCount = 1000000;
	const Deadline deadline;
	Ring ring(64);
	std::uint64_t bad = 0;
	std::uint64_t expected = 0;

	std::thread producer([&] {
		produce(ring.producer, nullptr, {0, kCount}, deadline);
	});
	while (expected < kCount && !deadline.passed()) {
		TestSlot out{};
		if (!ring.consumer.pop(out)) {
			std::this_thread::yield();
			continue;
		}
		if (out.seq != expected || out.check != check_of(0, expected) ||
		    out.flags != XIW_SLOT_VALID) {
			++bad;
		}
		++expected;
	}
	producer.join();
	EXPECT_EQ(expected, kCount) << "gave up waiting";
	EXPECT_EQ(bad, 0U) << "entries out of order or torn";
	TestSlot out{};
	EXPECT_FALSE(ring.consumer.pop(out));
}

/* Posters on one QP from several threads: the provider's SQ lock. */
TEST(RingThreads, SeveralProducersUnderTheQueueLock)
{
	constexpr std::uint32_t kProducers = 4;
	constexpr std::uint64_t kEach = 100000;
	const Deadline deadline;
	Ring ring(32);
	xiw::QueueLock lock;
	std::vector<std::uint64_t> next(kProducers, 0);
	std::uint64_t bad = 0;

	std::vector<std::thread> producers;
	for (std::uint32_t id = 0; id < kProducers; ++id) {
		producers.emplace_back([&, id] {
			produce(ring.producer, &lock, {id, kEach}, deadline);
		});
	}
	for (std::uint64_t total = 0;
	     total < kProducers * kEach && !deadline.passed();) {
		TestSlot out{};
		if (!ring.consumer.pop(out)) {
			std::this_thread::yield();
			continue;
		}
		++total;
		/* Each producer's entries in its order, none torn or lost. */
		if (out.producer >= kProducers ||
		    out.seq != next[out.producer] ||
		    out.check != check_of(out.producer, out.seq) ||
		    out.flags != (XIW_SLOT_VALID | out.producer)) {
			++bad;
			continue;
		}
		++next[out.producer];
	}
	for (std::thread &producer : producers) {
		producer.join();
	}
	EXPECT_EQ(bad, 0U);
	for (std::uint32_t id = 0; id < kProducers; ++id) {
		EXPECT_EQ(next[id], kEach) << "producer " << id;
	}
	EXPECT_EQ(ring.producer.index(),
		  static_cast<std::uint32_t>(kProducers * kEach));
}

/* Pollers on one CQ from several threads: the provider's CQ lock. */
TEST(RingThreads, SeveralConsumersUnderTheQueueLock)
{
	constexpr std::uint32_t kConsumers = 3;
	constexpr std::uint64_t kCount = 300000;
	const Deadline deadline;
	Ring ring(16);
	xiw::QueueLock lock;
	std::vector<std::atomic<std::uint8_t>> seen(kCount);
	std::atomic<std::uint64_t> consumed{0};
	std::atomic<std::uint64_t> bad{0};

	auto consume = [&] {
		std::uint64_t last = 0;
		bool first = true;
		while (consumed.load(std::memory_order_relaxed) < kCount &&
		       !deadline.passed()) {
			TestSlot out{};
			bool got = false;
			{
				const std::lock_guard<xiw::QueueLock> guard(
					lock);
				got = ring.consumer.pop(out);
			}
			if (!got) {
				std::this_thread::yield();
				continue;
			}
			consumed.fetch_add(1);
			/* Pops under the lock come out in ring order. */
			if (out.seq >= kCount ||
			    out.check != check_of(0, out.seq) ||
			    (!first && out.seq <= last)) {
				bad.fetch_add(1);
				continue;
			}
			first = false;
			last = out.seq;
			seen[out.seq].fetch_add(1);
		}
	};
	std::vector<std::thread> consumers;
	for (std::uint32_t i = 0; i < kConsumers; ++i) {
		consumers.emplace_back(consume);
	}
	produce(ring.producer, nullptr, {0, kCount}, deadline);
	for (std::thread &consumer : consumers) {
		consumer.join();
	}
	EXPECT_EQ(bad.load(), 0U);
	EXPECT_EQ(consumed.load(), kCount);
	EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](const auto &n) {
		return n.load() == 1;
	})) << "an entry was lost or delivered twice";
}

} // namespace
