// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The wire codec of xiw-wirepeer (userspace/peer/codec.h) against the
 * RFCs: the CRC32c vectors of RFC 5044 Figures 5 and 6 (MPA-42), marker
 * placement and FPDUPTR (MPA-30/31, RFC 5044 section 4.3), MULPDU
 * (MPA-23), the DDP/RDMAP header layouts (DDP-02/03, RFC 5040 section
 * 4.4, TERM-01, EXT-08), MPA start-up frames (MPA-01/03, E-01), the
 * streaming deframer (MPA-24) and every structured corruption.
 */
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "codec.h"

namespace {

namespace xp = xiw::peer;
using xp::byte_vec;

/* The ULPDU of RFC 5044 Figures 5 and 6: a Send, QN 0, 24 zero bytes. */
byte_vec rfc_send(std::uint32_t msn)
{
	xp::message m;
	const byte_vec zeros(24, 0);

	m.msn = msn;
	m.payload = zeros;
	auto segs = xp::segment_message(m, 1000);
	EXPECT_EQ(segs.size(), 1U);
	return segs.empty() ? byte_vec{} : segs.front();
}

byte_vec hex(std::string_view s)
{
	byte_vec out;
	unsigned int cur = 0;
	bool half = false;

	for (const char c : s) {
		unsigned int v = 0;

		if (c >= '0' && c <= '9') {
			v = static_cast<unsigned int>(c - '0');
		} else if (c >= 'a' && c <= 'f') {
			v = static_cast<unsigned int>(c - 'a' + 10);
		} else {
			continue;
		}
		cur = (cur << 4) | v;
		if (half) {
			out.push_back(static_cast<std::uint8_t>(cur));
			cur = 0;
		}
		half = !half;
	}
	return out;
}

std::uint32_t wire_crc(const byte_vec &fpdu)
{
	const std::size_t n = fpdu.size();

	return static_cast<std::uint32_t>(fpdu.at(n - 4)) |
	       (static_cast<std::uint32_t>(fpdu.at(n - 3)) << 8) |
	       (static_cast<std::uint32_t>(fpdu.at(n - 2)) << 16) |
	       (static_cast<std::uint32_t>(fpdu.at(n - 1)) << 24);
}

TEST(Crc32c, CheckValue)
{
	/* RFC 3385 / iSCSI: CRC32c("123456789") = 0xe3069283 */
	const std::string_view s = "123456789";
	const byte_vec b(s.begin(), s.end());

	EXPECT_EQ(xp::crc32c(b), 0xe3069283U);
	/* Split updates give the same value. */
	std::uint32_t reg = xp::kCrcInit;
	for (const std::uint8_t c : b) {
		reg = xp::crc32c_update(reg, xp::byte_view(&c, 1));
	}
	EXPECT_EQ(~reg, 0xe3069283U);
}

/* MPA-42: RFC 5044 Figure 5, the leading marker inside the CRC. */
TEST(Crc32c, Rfc5044Figure5)
{
	const byte_vec fig5 = hex("00000000 002a 4143 00000000 00000000"
				  "00000001 00000000"
				  "000000000000000000000000"
				  "000000000000000000000000"
				  "52239983");

	ASSERT_EQ(fig5.size(), 0x34U);
	const byte_vec covered(fig5.begin(), fig5.end() - 4);
	EXPECT_EQ(xp::crc32c(covered), 0x83992352U);
	EXPECT_EQ(wire_crc(fig5), 0x83992352U);

	/* The framer produces exactly these bytes at stream position 0. */
	xp::framer f({.crc = true, .markers = true});
	byte_vec out;
	ASSERT_TRUE(f.frame(rfc_send(1), out));
	EXPECT_EQ(out, fig5);
}

/* MPA-42: RFC 5044 Figure 6, a marker in the payload (FPDUPTR 0x14). */
TEST(Crc32c, Rfc5044Figure6)
{
	const byte_vec fig6 = hex("002a 4143 00000000 00000000 00000002"
				  "00000000 00000014"
				  "000000000000000000000000"
				  "000000000000000000000000"
				  "84925898");

	ASSERT_EQ(fig6.size(), 0x220U - 0x1ecU);
	const byte_vec covered(fig6.begin(), fig6.end() - 4);
	EXPECT_EQ(xp::crc32c(covered), 0x98589284U);

	/* After a first FPDU of 492 bytes (its leading marker included). */
	xp::framer f({.crc = true, .markers = true});
	byte_vec first;
	ASSERT_TRUE(f.frame(byte_vec(482, 0), first));
	ASSERT_EQ(first.size(), 492U);
	byte_vec out;
	ASSERT_TRUE(f.frame(rfc_send(2), out));
	EXPECT_EQ(out, fig6);
}

/* Where the markers of one framed FPDU are, and what they point to. */
struct marker_seen {
	std::size_t offset;	/* from the FPDU's first wire byte */
	std::uint16_t ptr;
};

std::vector<marker_seen> markers_of(const byte_vec &wire, std::uint64_t start)
{
	std::vector<marker_seen> m;

	for (std::size_t i = 0; i < wire.size(); i += 4) {
		if ((start + i) % xp::kMarkerInterval == 0) {
			m.push_back({i, xp::get_be16(&wire.at(i + 2))});
		}
	}
	return m;
}

/* A framer whose next FPDU starts at stream position at. */
xp::framer framer_at(std::uint64_t at)
{
	xp::framer f({.crc = true, .markers = true});
	byte_vec sink;

	while (f.position() + 600 < at) {
		EXPECT_TRUE(f.frame(byte_vec(250, 1), sink));
	}
	/* One more FPDU of the right size, its markers included. */
	const std::uint64_t gap = at - f.position();
	for (std::size_t len = gap; len > 0; len--) {
		if (2 + len + xp::fpdu_pad(len) + 4 + 4 * f.markers_in(len) ==
		    gap) {
			EXPECT_TRUE(f.frame(byte_vec(len, 2), sink));
			break;
		}
	}
	EXPECT_EQ(f.position(), at);
	return f;
}

/* MPA-30/31: a marker falling exactly at an FPDU start has FPDUPTR 0 and
 * belongs to (is in the CRC of) the following FPDU (RFC 5044 4.3). */
TEST(Markers, AtFpduStart)
{
	xp::framer f = framer_at(1024);
	byte_vec out;

	ASSERT_TRUE(f.frame(byte_vec(40, 3), out));
	const auto m = markers_of(out, 1024);
	ASSERT_EQ(m.size(), 1U);
	EXPECT_EQ(m[0].offset, 0U);
	EXPECT_EQ(m[0].ptr, 0U);
	EXPECT_EQ(xp::get_be16(&out.at(4)), 40U);	/* length after it */
	const byte_vec covered(out.begin(), out.end() - 4);
	EXPECT_EQ(wire_crc(out), xp::crc32c(covered));
}

/* A marker after the first word: inside the DDP header. */
TEST(Markers, InHeader)
{
	xp::framer f = framer_at(1024 - 4);
	byte_vec out;

	ASSERT_TRUE(f.frame(byte_vec(40, 3), out));
	const auto m = markers_of(out, 1024 - 4);
	ASSERT_EQ(m.size(), 1U);
	EXPECT_EQ(m[0].offset, 4U);
	EXPECT_EQ(m[0].ptr, 4U);
	/* ULPDU_Length excludes the marker (MPA-31) */
	EXPECT_EQ(xp::get_be16(out.data()), 40U);
	EXPECT_EQ(out.size(), 2U + 40 + 2 + 4 + 4);
}

/* In the payload, several markers in one FPDU, each pointing back to
 * the same length field. */
TEST(Markers, InPayloadSeveral)
{
	xp::framer f = framer_at(2048 - 100);
	byte_vec out;

	ASSERT_TRUE(f.frame(byte_vec(1200, 7), out));
	const auto m = markers_of(out, 2048 - 100);
	ASSERT_EQ(m.size(), 3U);
	EXPECT_EQ(f.markers_in(0), 0U);
	for (const auto &mk : m) {
		EXPECT_EQ(mk.ptr, mk.offset);
	}
	EXPECT_EQ(m[0].offset, 100U);
	EXPECT_EQ(m[1].offset, 100U + 512);
	EXPECT_EQ(out.size(), 2U + 1200 + 2 + 4 + 3 * 4);
	const byte_vec covered(out.begin(), out.end() - 4);
	EXPECT_EQ(wire_crc(out), xp::crc32c(covered));
}

/*
 * Everything is a multiple of 4 from the first marker on, so a marker
 * never splits the last data bytes from their pad: it comes before the
 * word that holds the pad, here the word before the CRC.
 */
TEST(Markers, BeforePadWord)
{
	const std::size_t len = 41;	/* 2 + 41 + 1 pad */

	ASSERT_EQ(xp::fpdu_pad(len), 1U);
	xp::framer f = framer_at(1024 - 40);
	byte_vec out;
	ASSERT_TRUE(f.frame(byte_vec(len, 9), out));
	const auto m = markers_of(out, 1024 - 40);
	ASSERT_EQ(m.size(), 1U);
	EXPECT_EQ(m[0].offset, 40U);
	EXPECT_EQ(m[0].ptr, 40U);
	/* the word after it: three data bytes, then the pad byte */
	ASSERT_EQ(out.size(), 44U + 4 + 4);
	EXPECT_EQ(out.at(46), 9U);
	EXPECT_EQ(out.at(47), 0U);
	const byte_vec covered(out.begin(), out.end() - 4);
	EXPECT_EQ(wire_crc(out), xp::crc32c(covered));
}

/* A marker between the pad and the CRC field is covered by the CRC. */
TEST(Markers, BeforeCrc)
{
	const std::size_t len = 42;	/* 2 + 42 = 44, no pad */
	xp::framer f = framer_at(1024 - 44);
	byte_vec out;

	ASSERT_TRUE(f.frame(byte_vec(len, 5), out));
	const auto m = markers_of(out, 1024 - 44);
	ASSERT_EQ(m.size(), 1U);
	EXPECT_EQ(m[0].offset, 44U);
	EXPECT_EQ(m[0].ptr, 44U);
	ASSERT_EQ(out.size(), 44U + 4 + 4);
	const byte_vec covered(out.begin(), out.end() - 4);
	EXPECT_EQ(wire_crc(out), xp::crc32c(covered));
}

/* A marker right after an FPDU's CRC belongs to the next FPDU. */
TEST(Markers, AfterCrcIsNextFpdus)
{
	xp::framer f = framer_at(1024 - 48);
	byte_vec out;

	ASSERT_TRUE(f.frame(byte_vec(42, 5), out));	/* 48 bytes */
	EXPECT_TRUE(markers_of(out, 1024 - 48).empty());
	EXPECT_EQ(f.position(), 1024U);
	byte_vec next;
	ASSERT_TRUE(f.frame(byte_vec(10, 5), next));
	const auto m = markers_of(next, 1024);
	ASSERT_EQ(m.size(), 1U);
	EXPECT_EQ(m[0].offset, 0U);
	EXPECT_EQ(m[0].ptr, 0U);
}

/* Stream of FPDUs through the deframer, markers or not, CRC or not. */
struct stream {
	byte_vec wire;
	std::vector<byte_vec> ulpdus;
};

/* 40 FPDUs of random lengths and bytes */
stream make_stream(xp::framing fr, unsigned int seed)
{
	constexpr std::size_t n = 40;
	std::mt19937 rng(seed);
	xp::framer f(fr);
	stream s;

	for (std::size_t i = 0; i < n; i++) {
		byte_vec u(rng() % 1500);
		for (auto &b : u) {
			b = static_cast<std::uint8_t>(rng());
		}
		EXPECT_TRUE(f.frame(u, s.wire));
		s.ulpdus.push_back(std::move(u));
	}
	return s;
}

struct deframed {
	std::vector<byte_vec> ulpdus;
	xp::deframe_error err = xp::deframe_error::none;
	std::uint64_t err_pos = 0;
	bool pending = false;
};

deframed run_deframer(xp::deframer &d, const byte_vec &wire, std::size_t chunk)
{
	deframed r;
	std::size_t off = 0;

	while (off < wire.size()) {
		const std::size_t n = std::min(chunk, wire.size() - off);
		xp::byte_view p(&wire.at(off), n);

		off += n;
		while (!p.empty()) {
			const auto st = d.feed(p);

			p = p.subspan(st.used);
			if (st.result == xp::deframe_result::fpdu) {
				const auto u = d.ulpdu();
				r.ulpdus.emplace_back(u.begin(), u.end());
			} else if (st.result == xp::deframe_result::error) {
				r.err = d.error();
				r.err_pos = d.error_pos();
				return r;
			}
		}
	}
	r.pending = d.pending();
	return r;
}

class DeframerChunks : public ::testing::TestWithParam<int> {};

/* MPA-24: byte by byte, odd chunks and one chunk give the same FPDUs. */
TEST_P(DeframerChunks, SameResult)
{
	const int p = GetParam();
	const xp::framing fr{.crc = (p & 1) != 0, .markers = (p & 2) != 0};
	const stream s = make_stream(fr, 42 + static_cast<unsigned int>(p));

	for (const std::size_t chunk : {std::size_t{1}, std::size_t{3},
					std::size_t{511}, std::size_t{4096},
					s.wire.size()}) {
		xp::deframer d(fr);
		const deframed r = run_deframer(d, s.wire, chunk);

		EXPECT_EQ(r.err, xp::deframe_error::none) << chunk;
		EXPECT_FALSE(r.pending) << chunk;
		EXPECT_EQ(r.ulpdus, s.ulpdus) << chunk;
		EXPECT_EQ(d.position(), s.wire.size());
	}
}

INSTANTIATE_TEST_SUITE_P(Framings, DeframerChunks, ::testing::Values(0, 1, 2, 3));

/* Without CRC the field is zero on the wire and not checked. */
TEST(Framer, NoCrcFieldIsZero)
{
	xp::framer f({.crc = false, .markers = false});
	byte_vec out;

	ASSERT_TRUE(f.frame(byte_vec(5, 1), out));
	EXPECT_EQ(out.size(), 2U + 5 + 1 + 4);	/* MPA-20 */
	EXPECT_EQ(wire_crc(out), 0U);
	EXPECT_FALSE(f.frame(byte_vec(65536, 0), out));
}

/* A stream with one faulty FPDU after good ones; what the deframer says. */
deframed with_fault(xp::framing fr, xp::frame_fault fault, std::uint32_t value,
		    std::size_t len)
{
	xp::framer f(fr);
	byte_vec wire;

	for (int i = 0; i < 3; i++) {
		EXPECT_TRUE(f.frame(byte_vec(300, 0x11), wire));
	}
	EXPECT_TRUE(f.frame(byte_vec(len, 0x22), wire, fault, value));
	for (int i = 0; i < 3; i++) {
		EXPECT_TRUE(f.frame(byte_vec(300, 0x33), wire));
	}
	xp::deframer d(fr);
	return run_deframer(d, wire, 1);
}

constexpr xp::framing kCrcMarkers{.crc = true, .markers = true};
constexpr xp::framing kCrcOnly{.crc = true, .markers = false};

/* MPA-50: a CRC mismatch is detected at the FPDU's length field. */
TEST(Faults, Crc)
{
	const deframed r = with_fault(kCrcOnly, xp::frame_fault::crc, 0, 100);

	EXPECT_EQ(r.err, xp::deframe_error::crc_mismatch);
	EXPECT_EQ(r.ulpdus.size(), 3U);
	EXPECT_EQ(r.err_pos, 3U * 308);
	const deframed m = with_fault(kCrcMarkers, xp::frame_fault::crc, 0, 100);
	EXPECT_EQ(m.err, xp::deframe_error::crc_mismatch);
	EXPECT_EQ(m.ulpdus.size(), 3U);
}

TEST(Faults, Length)
{
	for (const std::uint32_t delta : {1U, 4U, 0xffffU}) {
		const deframed r = with_fault(kCrcOnly, xp::frame_fault::length,
					      delta, 100);

		EXPECT_EQ(r.err, xp::deframe_error::crc_mismatch) << delta;
		EXPECT_EQ(r.ulpdus.size(), 3U) << delta;
	}
}

TEST(Faults, Pad)
{
	const deframed r = with_fault(kCrcOnly, xp::frame_fault::pad, 0, 101);

	EXPECT_EQ(r.err, xp::deframe_error::crc_mismatch);
	xp::framer f(kCrcOnly);
	byte_vec out;
	EXPECT_FALSE(f.frame(byte_vec(102, 0), out, xp::frame_fault::pad));
	EXPECT_TRUE(out.empty());
}

/* MPA-31: an FPDUPTR not pointing at the length field. */
TEST(Faults, Marker)
{
	const deframed r = with_fault(kCrcMarkers, xp::frame_fault::marker, 0,
				      600);

	EXPECT_EQ(r.err, xp::deframe_error::marker_fpduptr);
	EXPECT_EQ(r.err_pos % 512, 0U);
	EXPECT_EQ(r.ulpdus.size(), 3U);
	xp::framer f(kCrcOnly);
	byte_vec out;
	EXPECT_FALSE(f.frame(byte_vec(600, 0), out, xp::frame_fault::marker));
}

TEST(Faults, Truncate)
{
	xp::framer f(kCrcOnly);
	byte_vec wire;

	ASSERT_TRUE(f.frame(byte_vec(100, 1), wire));
	ASSERT_TRUE(f.frame(byte_vec(100, 2), wire, xp::frame_fault::truncate, 5));
	EXPECT_EQ(wire.size(), 2U * 108 - 5);
	xp::deframer d(kCrcOnly);
	const deframed r = run_deframer(d, wire, 7);
	EXPECT_EQ(r.err, xp::deframe_error::none);
	EXPECT_EQ(r.ulpdus.size(), 1U);
	EXPECT_TRUE(r.pending);
}

/* MPA-23: a receiver limited to MULPDU refuses an overlong ULPDU. */
TEST(Faults, Overlong)
{
	xp::framer f(kCrcOnly);
	byte_vec wire;
	const std::size_t limit = xp::mulpdu(1460, false);

	ASSERT_TRUE(f.frame(byte_vec(limit, 1), wire));
	ASSERT_TRUE(f.frame(byte_vec(limit + 1, 1), wire));
	xp::deframer d(kCrcOnly, xp::kUntaggedHdrLen, limit);
	const deframed r = run_deframer(d, wire, wire.size());
	EXPECT_EQ(r.err, xp::deframe_error::ulpdu_too_long);
	EXPECT_EQ(r.ulpdus.size(), 1U);
	xp::deframer s(kCrcOnly, xp::kUntaggedHdrLen);
	byte_vec tiny;
	xp::framer g(kCrcOnly);
	ASSERT_TRUE(g.frame(byte_vec(4, 0), tiny));
	EXPECT_EQ(run_deframer(s, tiny, 1).err, xp::deframe_error::ulpdu_too_short);
}

/* After an error the deframer consumes nothing more. */
TEST(Faults, ErrorIsSticky)
{
	xp::framer f(kCrcOnly);
	byte_vec wire;

	ASSERT_TRUE(f.frame(byte_vec(10, 1), wire, xp::frame_fault::crc));
	ASSERT_TRUE(f.frame(byte_vec(10, 1), wire));
	xp::deframer d(kCrcOnly);
	const auto st = d.feed(wire);
	EXPECT_EQ(st.result, xp::deframe_result::error);
	EXPECT_EQ(st.used, 16U);
	const auto again = d.feed(wire);
	EXPECT_EQ(again.result, xp::deframe_result::error);
	EXPECT_EQ(again.used, 0U);
}

/* MPA-23, including the floor of 128 */
TEST(Mulpdu, Arithmetic)
{
	EXPECT_EQ(xp::mulpdu(1460, false), 1454U);
	EXPECT_EQ(xp::mulpdu(1460, true), 1460U - (6 + 4 * 3));
	EXPECT_EQ(xp::mulpdu(1448, false), 1442U);
	EXPECT_EQ(xp::mulpdu(1448, true), 1430U);
	EXPECT_EQ(xp::mulpdu(1459, false), 1459U - 9);
	EXPECT_EQ(xp::mulpdu(1459, true), 1459U - (6 + 12 + 3));
	EXPECT_EQ(xp::mulpdu(9000, true), 9000U - (6 + 4 * 18));
	EXPECT_EQ(xp::mulpdu(512, true), 512U - 10);
	EXPECT_EQ(xp::mulpdu(513, true), 513U - (6 + 8 + 1));
	EXPECT_EQ(xp::mulpdu(65495, false), 65495U - 9);
	/* never below 128 */
	EXPECT_EQ(xp::mulpdu(136, false), 130U);
	EXPECT_EQ(xp::mulpdu(134, false), 128U);
	EXPECT_EQ(xp::mulpdu(133, false), 128U);
	EXPECT_EQ(xp::mulpdu(100, false), 128U);
	EXPECT_EQ(xp::mulpdu(0, true), 128U);
	EXPECT_EQ(xp::mulpdu(138, true), 128U);
	EXPECT_EQ(xp::mulpdu(140, true), 130U);
}

/* DDP-02: tagged header, 14 bytes */
TEST(Headers, Tagged)
{
	xp::ddp_hdr h;
	byte_vec b;

	h.tagged = true;
	h.last = true;
	h.op = static_cast<std::uint8_t>(xp::opcode::write);
	h.stag = 0x11223344;
	h.to = 0x0102030405060708ULL;
	xp::encode_ddp_hdr(h, b);
	EXPECT_EQ(b, hex("c1 40 11223344 0102030405060708"));
	EXPECT_EQ(b.size(), xp::kTaggedHdrLen);
	xp::segment s;
	ASSERT_EQ(xp::decode_ulpdu(b, s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.hdr.stag, h.stag);
	EXPECT_EQ(s.hdr.to, h.to);
	EXPECT_TRUE(s.payload.empty());
}

/* DDP-03 and RFC 5044 Figure 5's control bytes 41 43 */
TEST(Headers, Untagged)
{
	xp::ddp_hdr h;
	byte_vec b;

	h.op = static_cast<std::uint8_t>(xp::opcode::send_inv);
	h.inval = 0xa1a2a3a4;
	h.qn = 0;
	h.msn = 0xb1b2b3b4;
	h.mo = 0xc1c2c3c4;
	h.last = false;
	xp::encode_ddp_hdr(h, b);
	EXPECT_EQ(b, hex("01 44 a1a2a3a4 00000000 b1b2b3b4 c1c2c3c4"));
	EXPECT_EQ(b.size(), xp::kUntaggedHdrLen);
	EXPECT_EQ(rfc_send(1).at(0), 0x41U);
	EXPECT_EQ(rfc_send(1).at(1), 0x43U);
}

/* RFC 5040 section 4.4: the Read Request header is 28 bytes on QN 1. */
TEST(Headers, ReadRequest)
{
	xp::message m;

	m.op = static_cast<std::uint8_t>(xp::opcode::read_req);
	m.qn = xp::kQnReadReq;
	m.msn = 7;
	m.rreq = {.sink_stag = 0x10203040,
		  .sink_to = 0x1112131415161718ULL,
		  .size = 0x00010000,
		  .src_stag = 0x50607080,
		  .src_to = 0x2122232425262728ULL};
	const auto segs = xp::segment_message(m, 1000);
	ASSERT_EQ(segs.size(), 1U);
	EXPECT_EQ(segs[0], hex("41 41 00000000 00000001 00000007 00000000"
			       "10203040 1112131415161718 00010000"
			       "50607080 2122232425262728"));
	EXPECT_EQ(segs[0].size(), xp::kUntaggedHdrLen + xp::kReadReqLen);
	xp::segment s;
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.rreq.src_to, m.rreq.src_to);
	EXPECT_EQ(s.rreq.size, m.rreq.size);
	EXPECT_EQ(xp::decode_ulpdu(xp::byte_view(segs[0]).first(45), s),
		  xp::ulpdu_error::too_short);
}

/*
 * A Read Request with bytes after its header (TERM-04, a hostile row of
 * errors.rst): still one segment, the bytes follow the 28-byte header
 * and decode as its payload, the header itself intact.
 */
TEST(Headers, ReadRequestWithData)
{
	const byte_vec data = hex("0102030405060708090a0b0c0d0e0f10");
	xp::message m;

	m.op = static_cast<std::uint8_t>(xp::opcode::read_req);
	m.qn = xp::kQnReadReq;
	m.msn = 3;
	m.rreq.size = 64;
	m.rreq.src_stag = 0x1234;
	m.rreq.sink_stag = 0x5678;
	m.payload = data;
	const auto segs = xp::segment_message(m, 1000);
	ASSERT_EQ(segs.size(), 1U);
	ASSERT_EQ(segs[0].size(), xp::kUntaggedHdrLen + xp::kReadReqLen + 16);
	EXPECT_EQ(byte_vec(segs[0].begin() + 46, segs[0].end()), data);
	EXPECT_EQ(segs[0].at(1) & 0x0f, 1);	/* opcode read_req */
	EXPECT_EQ(segs[0].at(0) & xp::kDdpLast, xp::kDdpLast);
	xp::segment s;
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.rreq.size, 64U);
	EXPECT_EQ(s.rreq.src_stag, 0x1234U);
	EXPECT_EQ(s.rreq.sink_stag, 0x5678U);
	EXPECT_EQ(byte_vec(s.payload.begin(), s.payload.end()), data);
	/* The Read Request without L (one fault of the same row). */
	auto seg = segs[0];
	ASSERT_TRUE(xp::set_field(seg, xp::field::last, 0));
	ASSERT_EQ(xp::decode_ulpdu(seg, s), xp::ulpdu_error::ok);
	EXPECT_FALSE(s.hdr.last);
	EXPECT_EQ(s.hdr.qn, xp::kQnReadReq);
}

/* TERM-01: control, then segment length and the terminated headers */
TEST(Headers, Terminate)
{
	xp::message m;

	m.op = static_cast<std::uint8_t>(xp::opcode::terminate);
	m.qn = xp::kQnTerminate;
	m.term.layer = 0x1;
	m.term.etype = 0x2;
	m.term.ecode = 0x01;
	m.term.m = true;
	m.term.d = true;
	m.term.seg_len = 0x2a;
	m.term.ddp.qn = 9;
	m.term.ddp.msn = 1;
	m.term.ddp.op = static_cast<std::uint8_t>(xp::opcode::send);
	auto segs = xp::segment_message(m, 1000);
	ASSERT_EQ(segs.size(), 1U);
	EXPECT_EQ(segs[0], hex("41 47 00000000 00000002 00000001 00000000"
			       "12 01 c000 002a"
			       "41 43 00000000 00000009 00000001 00000000"));
	xp::segment s;
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.term.layer, 1U);
	EXPECT_EQ(s.term.etype, 2U);
	EXPECT_EQ(s.term.ecode, 1U);
	EXPECT_TRUE(s.term.d);
	EXPECT_FALSE(s.term.r);
	EXPECT_EQ(s.term.ddp.qn, 9U);
	/* cut inside the terminated header */
	EXPECT_EQ(xp::decode_ulpdu(xp::byte_view(segs[0]).first(30), s),
		  xp::ulpdu_error::terminate_short);

	/* With a Read Request header (R), 6 + 18 + 28 bytes after DDP. */
	m.term = {};
	m.term.layer = 0;
	m.term.etype = 1;
	m.term.ecode = 0;
	m.term.m = m.term.d = m.term.r = true;
	m.term.ddp.qn = 1;
	m.term.ddp.op = static_cast<std::uint8_t>(xp::opcode::read_req);
	m.term.rdma.src_stag = 0xdeadbeef;
	segs = xp::segment_message(m, 1000);
	EXPECT_EQ(segs[0].size(), 18U + 6 + 18 + 28);
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.term.rdma.src_stag, 0xdeadbeefU);

	/* MPA-50's Terminate carries no headers: 4 bytes. */
	m.term = {};
	m.term.layer = 2;
	m.term.ecode = 2;
	segs = xp::segment_message(m, 1000);
	EXPECT_EQ(segs[0].size(), 18U + 4);
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_FALSE(s.term.m || s.term.d || s.term.r);
}

/* EXT-08: Immediate Data is 8 bytes on QN 0 */
TEST(Headers, ImmediateData)
{
	xp::message m;
	const byte_vec data = hex("0102030405060708");

	m.op = static_cast<std::uint8_t>(xp::opcode::immdt);
	m.payload = data;
	const auto segs = xp::segment_message(m, 1000);
	ASSERT_EQ(segs.size(), 1U);
	EXPECT_EQ(segs[0].size(), 18U + 8);
	xp::segment s;
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_EQ(byte_vec(s.payload.begin(), s.payload.end()), data);
	EXPECT_EQ(xp::decode_ulpdu(xp::byte_view(segs[0]).first(25), s),
		  xp::ulpdu_error::immdt_length);
}

/* RFC 5041 section 5: segmenting by MULPDU, MO/TO advance, L last only */
TEST(Segments, SendAndWrite)
{
	const byte_vec data(3000, 0x5a);
	xp::message m;

	m.payload = data;
	m.msn = 3;
	auto segs = xp::segment_message(m, 1454);
	ASSERT_EQ(segs.size(), 3U);
	std::size_t total = 0;
	for (std::size_t i = 0; i < segs.size(); i++) {
		xp::segment s;

		ASSERT_EQ(xp::decode_ulpdu(segs[i], s), xp::ulpdu_error::ok);
		EXPECT_LE(segs[i].size(), 1454U);
		EXPECT_EQ(s.hdr.mo, total);
		EXPECT_EQ(s.hdr.msn, 3U);
		EXPECT_EQ(s.hdr.last, i + 1 == segs.size());
		total += s.payload.size();
	}
	EXPECT_EQ(total, data.size());

	m.op = static_cast<std::uint8_t>(xp::opcode::write);
	m.stag = 0x100;
	m.to = 0xfff0;
	segs = xp::segment_message(m, 1454);
	ASSERT_EQ(segs.size(), 3U);
	xp::segment s;
	ASSERT_EQ(xp::decode_ulpdu(segs[1], s), xp::ulpdu_error::ok);
	EXPECT_TRUE(s.hdr.tagged);
	EXPECT_EQ(s.hdr.to, 0xfff0U + 1454 - 14);

	/* DDP-05: zero length is one segment, L set */
	m.payload = {};
	segs = xp::segment_message(m, 1454);
	ASSERT_EQ(segs.size(), 1U);
	ASSERT_EQ(xp::decode_ulpdu(segs[0], s), xp::ulpdu_error::ok);
	EXPECT_TRUE(s.hdr.last);
}

/* The structured header corruptions, each seen by the decoder. */
TEST(Faults, HeaderFields)
{
	const byte_vec send = rfc_send(1);
	xp::segment s;
	byte_vec u = send;

	ASSERT_TRUE(xp::set_field(u, xp::field::ddp_version, 0));
	EXPECT_EQ(xp::decode_ulpdu(u, s), xp::ulpdu_error::ddp_version);
	u = send;
	ASSERT_TRUE(xp::set_field(u, xp::field::rdmap_version, 2));
	EXPECT_EQ(xp::decode_ulpdu(u, s), xp::ulpdu_error::rdmap_version);
	u = send;
	ASSERT_TRUE(xp::set_field(u, xp::field::opcode, 0xc));
	EXPECT_EQ(xp::decode_ulpdu(u, s), xp::ulpdu_error::bad_opcode);
	u = send;
	ASSERT_TRUE(xp::set_field(u, xp::field::tagged, 1));
	EXPECT_EQ(xp::decode_ulpdu(u, s), xp::ulpdu_error::tagged_mismatch);
	u = send;
	ASSERT_TRUE(xp::set_field(u, xp::field::qn, 5));
	ASSERT_TRUE(xp::set_field(u, xp::field::msn, 77));
	ASSERT_TRUE(xp::set_field(u, xp::field::mo, 0x1000));
	ASSERT_TRUE(xp::set_field(u, xp::field::last, 0));
	ASSERT_EQ(xp::decode_ulpdu(u, s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.hdr.qn, 5U);
	EXPECT_EQ(s.hdr.msn, 77U);
	EXPECT_EQ(s.hdr.mo, 0x1000U);
	EXPECT_FALSE(s.hdr.last);
	EXPECT_FALSE(xp::set_field(u, xp::field::stag, 1));
	EXPECT_FALSE(xp::set_field(u, xp::field::to, 1));

	xp::message w;
	w.op = static_cast<std::uint8_t>(xp::opcode::write);
	u = xp::segment_message(w, 100).at(0);
	ASSERT_TRUE(xp::set_field(u, xp::field::stag, 0xbad));
	ASSERT_TRUE(xp::set_field(u, xp::field::to, 0xffffffffffffff00ULL));
	ASSERT_EQ(xp::decode_ulpdu(u, s), xp::ulpdu_error::ok);
	EXPECT_EQ(s.hdr.stag, 0xbadU);
	EXPECT_EQ(s.hdr.to, 0xffffffffffffff00ULL);
	EXPECT_FALSE(xp::set_field(u, xp::field::qn, 1));
	byte_vec shorty(1, 0);
	EXPECT_FALSE(xp::set_field(shorty, xp::field::opcode, 1));
	EXPECT_EQ(xp::decode_ulpdu(shorty, s), xp::ulpdu_error::too_short);
}

/* MPA-01: Request layout, RFC 6581 enhanced data (E-01) */
TEST(Startup, RequestBytes)
{
	xp::mpa_startup f;
	byte_vec b;

	f.crc = true;
	f.rev = 1;
	ASSERT_EQ(xp::encode_startup(f, b), xp::mpa_error::ok);
	byte_vec want(xp::kMpaKeyReq.begin(), xp::kMpaKeyReq.end());
	want.insert(want.end(), {0x40, 0x01, 0x00, 0x00});
	EXPECT_EQ(b, want);

	f.rev = 2;
	f.enhanced = true;
	f.markers = true;
	f.p2p = f.rtr_write = true;
	f.ird = 16;
	f.ord = 0x3fff;
	f.pd_len = 3;
	f.pd.at(0) = 'a';
	f.pd.at(1) = 'b';
	f.pd.at(2) = 'c';
	b.clear();
	ASSERT_EQ(xp::encode_startup(f, b), xp::mpa_error::ok);
	want.assign(xp::kMpaKeyReq.begin(), xp::kMpaKeyReq.end());
	want.insert(want.end(), {0xd0, 0x02, 0x00, 0x07, 0x80, 0x10, 0xbf,
				 0xff, 'a', 'b', 'c'});
	EXPECT_EQ(b, want);
}

TEST(Startup, RoundTrips)
{
	for (const bool enhanced : {false, true}) {
		for (const auto kind : {xp::mpa_kind::request, xp::mpa_kind::reply}) {
			xp::mpa_startup f;
			byte_vec b;

			f.kind = kind;
			f.rev = enhanced ? 2 : 1;
			f.enhanced = enhanced;
			f.reject = kind == xp::mpa_kind::reply;
			f.crc = false;
			f.rtr_read = f.rtr_send = enhanced;
			f.ird = enhanced ? 5 : 0;
			f.ord = enhanced ? 6 : 0;
			f.pd_len = enhanced ? 508 : 512;
			std::fill(f.pd.begin(), f.pd.end(), 0x77);
			ASSERT_EQ(xp::encode_startup(f, b), xp::mpa_error::ok);
			b.push_back(0xee);	/* first byte of what follows */
			xp::mpa_startup g;
			std::size_t used = 0;
			ASSERT_EQ(xp::decode_startup(b, kind, g, &used),
				  xp::mpa_error::ok);
			EXPECT_EQ(used, b.size() - 1);
			EXPECT_EQ(g.enhanced, enhanced);
			EXPECT_EQ(g.reject, f.reject);
			EXPECT_EQ(g.crc, false);
			EXPECT_EQ(g.rtr_read, enhanced);
			EXPECT_EQ(g.ird, f.ird);
			EXPECT_EQ(g.ord, f.ord);
			EXPECT_EQ(g.pd_len, f.pd_len);
			EXPECT_TRUE(std::equal(g.pd.begin(),
					       g.pd.begin() + g.pd_len,
					       f.pd.begin()));
			/* every prefix is need_more */
			for (std::size_t n = 0; n + 1 < b.size(); n += 37) {
				EXPECT_EQ(xp::decode_startup(xp::byte_view(b).first(n),
							     kind, g, &used),
					  xp::mpa_error::need_more) << n;
			}
		}
	}
}

/* MPA-03: what a receiver must refuse */
TEST(Startup, Rejections)
{
	xp::mpa_startup f;
	xp::mpa_startup g;
	std::size_t used = 0;
	byte_vec b;

	ASSERT_EQ(xp::encode_startup(f, b), xp::mpa_error::ok);
	EXPECT_EQ(xp::decode_startup(b, xp::mpa_kind::reply, g, &used),
		  xp::mpa_error::wrong_key);
	byte_vec bad = b;
	bad.at(3) = 'x';
	EXPECT_EQ(xp::decode_startup(bad, xp::mpa_kind::request, g, &used),
		  xp::mpa_error::bad_key);
	/* a wrong first byte is refused at once */
	EXPECT_EQ(xp::decode_startup(xp::byte_view(bad).first(4),
				     xp::mpa_kind::request, g, &used),
		  xp::mpa_error::bad_key);
	for (const std::uint8_t rev : {0, 3, 255}) {
		bad = b;
		bad.at(17) = rev;
		EXPECT_EQ(xp::decode_startup(bad, xp::mpa_kind::request, g, &used),
			  xp::mpa_error::bad_rev);
	}
	bad = b;
	xp::put_be16(&bad.at(18), 513);
	bad.resize(20 + 513);
	EXPECT_EQ(xp::decode_startup(bad, xp::mpa_kind::request, g, &used),
		  xp::mpa_error::pd_too_long);
	bad = b;
	bad.at(16) |= xp::kMpaFlagS;
	EXPECT_EQ(xp::decode_startup(bad, xp::mpa_kind::request, g, &used),
		  xp::mpa_error::s_without_rev2);
	bad.at(17) = 2;
	xp::put_be16(&bad.at(18), 3);
	bad.insert(bad.end(), {0, 0, 0});
	EXPECT_EQ(xp::decode_startup(bad, xp::mpa_kind::request, g, &used),
		  xp::mpa_error::enhanced_too_short);
	EXPECT_EQ(used, 0U);
	/* a frame the encoder cannot make */
	f.enhanced = true;
	f.pd_len = 510;
	b.clear();
	EXPECT_EQ(xp::encode_startup(f, b), xp::mpa_error::invalid);
	EXPECT_TRUE(b.empty());
}

} // namespace
