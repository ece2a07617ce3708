// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libFuzzer target for the decoders of codec.h: the first byte picks the
 * framing (CRC, markers) and how the rest is cut into chunks; the rest is
 * fed to the start-up decoder and to the deframer, and each FPDU out of it
 * to the ULPDU decoder. Built with clang and -fsanitize=fuzzer,address,
 * undefined (CMakeLists.txt); any out-of-bounds read or UB aborts.
 */
#include <cstddef>
#include <cstdint>

#include "codec.h"

using namespace xiw::peer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	if (size == 0)
		return 0;
	const std::uint8_t mode = data[0];
	const byte_view in(data + 1, size - 1);
	mpa_startup f;
	std::size_t used = 0;

	(void)decode_startup(in, mpa_kind::request, f, &used);
	(void)decode_startup(in, mpa_kind::reply, f, &used);

	framing fr;
	fr.crc = (mode & 1U) != 0;
	fr.markers = (mode & 2U) != 0;
	deframer d(fr, (mode & 4U) ? kUntaggedHdrLen : 0);
	const std::size_t chunk = 1 + (mode >> 3);
	byte_view rest = in;

	while (!rest.empty()) {
		const byte_view piece = rest.first(chunk < rest.size() ?
						   chunk : rest.size());
		byte_view p = piece;

		while (!p.empty()) {
			const deframe_status st = d.feed(p);

			p = p.subspan(st.used);
			if (st.result == deframe_result::error)
				return 0;
			if (st.result == deframe_result::fpdu) {
				segment s;

				(void)decode_ulpdu(d.ulpdu(), s);
			}
		}
		rest = rest.subspan(piece.size());
	}
	/* Without CRC the raw bytes are a ULPDU too. */
	segment s;
	(void)decode_ulpdu(in, s);
	return 0;
}
