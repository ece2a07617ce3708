// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MPA framing arithmetic shared by transmit and receive (RFC 5044
 * section 4): the MULPDU, where markers fall, and CRC32c over page
 * pieces. Nothing here touches a socket or a QP.
 */
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/minmax.h>

#include "xiw.h"

/*
 * MPA-23 (RFC 5044 section 4.5): the largest ULPDU of an FPDU that fits
 * one segment of emss bytes; with markers, room for the most markers
 * such a segment can hold. The emss % 4 keeps the padded FPDU within
 * emss. Never below 128, and capped below 2^16 on a four-byte boundary
 * so that the length field holds it with its pad.
 */
u32 xiw_mpa_mulpdu(u32 emss, bool markers)
{
	u32 over = MPA_HDR_LEN + MPA_CRC_LEN + emss % 4;

	if (markers)
		over += MPA_MARKER_LEN * DIV_ROUND_UP(emss, MPA_MARKER_INTERVAL);
	return clamp_t(u32, emss > over ? emss - over : 0, MPA_MIN_MULPDU,
		       U16_MAX & ~3U);
}

/*
 * Bytes from stream position pos (counted from the start of full
 * operation, markers included) to the next marker; 0 when one starts at
 * pos. u32 wraps as TCP sequence numbers do and 512 divides 2^32, so the
 * count stays right across the wrap (section 4.3).
 */
u32 xiw_mpa_to_marker(u32 pos)
{
	return -pos & (MPA_MARKER_INTERVAL - 1);
}

/* CRC32c, continued from crc, over the first len bytes of bv. */
u32 xiw_mpa_crc_bvec(u32 crc, const struct bio_vec *bv, u32 len)
{
	int i;

	for (i = 0; len; i++) {
		u32 l = min(len, bv[i].bv_len);
		void *p = kmap_local_page(bv[i].bv_page);

		crc = crc32c(crc, p + bv[i].bv_offset, l);
		kunmap_local(p);
		len -= l;
	}
	return crc;
}
