/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The arithmetic of RFC 7306 atomics (sections 5.1.1 and 5.1.2), on its
 * own so the host tests check it against the RFC's pseudocode.
 */
#ifndef XIW_ATOMIC_H
#define XIW_ATOMIC_H

#include <linux/types.h>

/* AOpCode, the low four bits of the request's first word */
#define RDMAP_AOP_MASK		0x0f
#define RDMAP_AOP_FETCH_ADD	0x0
#define RDMAP_AOP_CMP_SWAP	0x2

/*
 * The value an atomic operation leaves in the word, from its old value.
 * FetchAdd: a bit set in the mask ends a field and drops the carry out
 * of it; adding with those bits taken out of both operands keeps every
 * carry inside its field, and each dropped bit's sum is the XOR of its
 * operands and the carry into it. A zero mask is one 64-bit add.
 * CmpSwap: the swap data's masked bits replace the word's when the
 * masked compare matches; otherwise the word stays.
 */
static inline __u64 xiw_atomic_result(__u8 aop, __u64 old, __u64 add_swap,
				      __u64 add_swap_mask, __u64 compare,
				      __u64 compare_mask)
{
	if (aop == RDMAP_AOP_FETCH_ADD)
		return ((old & ~add_swap_mask) + (add_swap & ~add_swap_mask)) ^
		       ((old ^ add_swap) & add_swap_mask);
	if ((old ^ compare) & compare_mask)
		return old;
	return (old & ~add_swap_mask) | (add_swap & add_swap_mask);
}

#endif /* XIW_ATOMIC_H */
