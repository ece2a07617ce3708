// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The kernel's RFC 7306 atomic arithmetic (xiw_atomic.h) against the
 * RFC's own definitions: the bit-by-bit pseudocode of masked FetchAdd
 * (section 5.1.1) and the masked compare and swap of CmpSwap (5.1.2).
 */
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include "xiw_atomic.h" /* drivers/infiniband/sw/xiw */

namespace {

/* RFC 7306 section 5.1.1, as written there, one bit at a time. */
// NOLINTNEXTLINE(bugprone-easily-swappable-parameters): the RFC's names
std::uint64_t rfc_fetch_add(std::uint64_t orig, std::uint64_t add,
			    std::uint64_t mask)
{
	std::uint64_t bit_location = 1;
	std::uint64_t carry = 0;
	std::uint64_t result = 0;

	for (unsigned int bit = 0; bit < 64; bit++) {
		if (bit != 0) {
			bit_location <<= 1;
		}
		const std::uint64_t val1 = (orig & bit_location) >> bit;
		const std::uint64_t val2 = (add & bit_location) >> bit;
		std::uint64_t sum = carry + val1 + val2;

		carry = (sum & 2) >> 1;
		sum &= 1;
		if (sum != 0) {
			result |= bit_location;
		}
		carry = (carry != 0 && (mask & bit_location) == 0) ? 1 : 0;
	}
	return result;
}

/* RFC 7306 section 5.1.2. */
// The RFC's names, in the RFC's order.
// NOLINTBEGIN(bugprone-easily-swappable-parameters)
std::uint64_t rfc_cmp_swap(std::uint64_t orig, std::uint64_t swap,
			   std::uint64_t swap_mask, std::uint64_t compare,
			   std::uint64_t compare_mask)
// NOLINTEND(bugprone-easily-swappable-parameters)
{
	if ((orig & compare_mask) != (compare & compare_mask)) {
		return orig;
	}
	return (orig & ~swap_mask) | (swap & swap_mask);
}

TEST(AtomicMath, FetchAddWithoutMaskIsOneAdd)
{
	EXPECT_EQ(xiw_atomic_result(RDMAP_AOP_FETCH_ADD, 5, 3, 0, 0, ~0ULL),
		  8U);
	EXPECT_EQ(xiw_atomic_result(RDMAP_AOP_FETCH_ADD, ~0ULL, 2, 0, 0,
				    ~0ULL),
		  1U);
}

TEST(AtomicMath, FetchAddMaskEndsFieldsAndDropsTheirCarries)
{
	/* Eight 8-bit fields: each wraps on its own. */
	const std::uint64_t mask = 0x8080808080808080ULL;

	EXPECT_EQ(xiw_atomic_result(RDMAP_AOP_FETCH_ADD,
				    0xff01ff01ff01ff01ULL,
				    0x0101010101010101ULL, mask, 0, 0),
		  0x0002000200020002ULL);
}

TEST(AtomicMath, CmpSwapHitsAndMissesOnTheMaskedBits)
{
	/* Unmasked, as xiw sends it. */
	EXPECT_EQ(xiw_atomic_result(RDMAP_AOP_CMP_SWAP, 8, 100, ~0ULL, 8,
				    ~0ULL),
		  100U);
	EXPECT_EQ(xiw_atomic_result(RDMAP_AOP_CMP_SWAP, 8, 100, ~0ULL, 7,
				    ~0ULL),
		  8U);
	/* Only the low byte compared, only the high byte swapped. */
	EXPECT_EQ(xiw_atomic_result(RDMAP_AOP_CMP_SWAP, 0x1122334455667788ULL,
				    0xaa00000000000000ULL,
				    0xff00000000000000ULL, 0x88, 0xff),
		  0xaa22334455667788ULL);
}

TEST(AtomicMath, AgreesWithTheRfcPseudocode)
{
	/* A fixed seed: a failure is repeatable. */
	std::mt19937_64 rng(7306); // NOLINT(cert-msc32-c,cert-msc51-cpp)

	for (int i = 0; i < 200000; i++) {
		const std::uint64_t orig = rng();
		const std::uint64_t data = rng();
		const std::uint64_t compare = rng();
		/* Sparse and dense masks, and the two ends. */
		const std::uint64_t mask = i % 4 == 0 ? 0 :
					   i % 4 == 1 ? ~0ULL :
					   i % 4 == 2 ? rng() & rng() & rng() :
							rng();
		const std::uint64_t compare_mask = i % 3 == 0 ? ~0ULL : rng();
		/* Half the compares made to match on the masked bits. */
		const std::uint64_t cmp = i % 2 == 0 ?
			(orig & compare_mask) | (compare & ~compare_mask) :
			compare;

		ASSERT_EQ(xiw_atomic_result(RDMAP_AOP_FETCH_ADD, orig, data,
					    mask, cmp, compare_mask),
			  rfc_fetch_add(orig, data, mask))
			<< std::hex << orig << " + " << data << " mask "
			<< mask;
		ASSERT_EQ(xiw_atomic_result(RDMAP_AOP_CMP_SWAP, orig, data,
					    mask, cmp, compare_mask),
			  rfc_cmp_swap(orig, data, mask, cmp, compare_mask))
			<< std::hex << orig << " swap " << data << " mask "
			<< mask << " compare " << cmp << "/" << compare_mask;
	}
}

} // namespace
