// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The wire codec (codec.h). Every decoder checks a length against the
 * span before it reads, and keeps nothing but plain values.
 */
#include "codec.h"

#include <algorithm>
#include <cstring>

namespace xiw::peer {

std::uint16_t get_be16(const std::uint8_t *p) noexcept
{
	return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t get_be32(const std::uint8_t *p) noexcept
{
	return (static_cast<std::uint32_t>(get_be16(p)) << 16) |
	       get_be16(p + 2);
}

std::uint64_t get_be64(const std::uint8_t *p) noexcept
{
	return (static_cast<std::uint64_t>(get_be32(p)) << 32) |
	       get_be32(p + 4);
}

void put_be16(std::uint8_t *p, std::uint16_t v) noexcept
{
	p[0] = static_cast<std::uint8_t>(v >> 8);
	p[1] = static_cast<std::uint8_t>(v);
}

void put_be32(std::uint8_t *p, std::uint32_t v) noexcept
{
	put_be16(p, static_cast<std::uint16_t>(v >> 16));
	put_be16(p + 2, static_cast<std::uint16_t>(v));
}

void put_be64(std::uint8_t *p, std::uint64_t v) noexcept
{
	put_be32(p, static_cast<std::uint32_t>(v >> 32));
	put_be32(p + 4, static_cast<std::uint32_t>(v));
}

namespace {

/* The reflected Castagnoli polynomial (RFC 3385 section 4). */
constexpr std::uint32_t kCrcPoly = 0x82f63b78U;

constexpr std::array<std::uint32_t, 256> make_crc_table() noexcept
{
	std::array<std::uint32_t, 256> t{};

	for (std::uint32_t i = 0; i < t.size(); i++) {
		std::uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1U) ? (c >> 1) ^ kCrcPoly : c >> 1;
		t[i] = c;
	}
	return t;
}

constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

void append_be16(byte_vec &out, std::uint16_t v)
{
	out.push_back(static_cast<std::uint8_t>(v >> 8));
	out.push_back(static_cast<std::uint8_t>(v));
}

void append_be32(byte_vec &out, std::uint32_t v)
{
	append_be16(out, static_cast<std::uint16_t>(v >> 16));
	append_be16(out, static_cast<std::uint16_t>(v));
}

void append_be64(byte_vec &out, std::uint64_t v)
{
	append_be32(out, static_cast<std::uint32_t>(v >> 32));
	append_be32(out, static_cast<std::uint32_t>(v));
}

void append_le32(byte_vec &out, std::uint32_t v)
{
	for (int i = 0; i < 4; i++)
		out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

bool key_is(byte_view in, std::string_view key) noexcept
{
	return std::equal(key.begin(), key.end(), in.begin(),
			  [](char k, std::uint8_t b) {
				  return static_cast<std::uint8_t>(k) == b;
			  });
}

} // namespace

std::uint32_t crc32c_update(std::uint32_t reg, byte_view data) noexcept
{
	for (const std::uint8_t b : data)
		reg = kCrcTable[(reg ^ b) & 0xffU] ^ (reg >> 8);
	return reg;
}

std::uint32_t crc32c(byte_view data) noexcept
{
	return ~crc32c_update(kCrcInit, data);
}

/* ---- MPA start-up ---- */

std::string_view mpa_error_name(mpa_error e) noexcept
{
	switch (e) {
	case mpa_error::ok: return "ok";
	case mpa_error::need_more: return "need_more";
	case mpa_error::bad_key: return "bad_key";
	case mpa_error::wrong_key: return "wrong_key";
	case mpa_error::bad_rev: return "bad_rev";
	case mpa_error::pd_too_long: return "pd_too_long";
	case mpa_error::s_without_rev2: return "s_without_rev2";
	case mpa_error::enhanced_too_short: return "enhanced_too_short";
	case mpa_error::invalid: return "invalid";
	}
	return "?";
}

mpa_error encode_startup(const mpa_startup &f, byte_vec &out)
{
	const std::size_t v2 = f.enhanced ? kMpaV2Len : 0;

	if (f.pd_len > f.pd.size() || f.pd_len + v2 > kMpaMaxPd)
		return mpa_error::invalid;
	const std::string_view key =
		f.kind == mpa_kind::request ? kMpaKeyReq : kMpaKeyRep;
	out.insert(out.end(), key.begin(), key.end());
	std::uint8_t flags = f.res & kMpaFlagRes;

	if (f.markers)
		flags |= kMpaFlagM;
	if (f.crc)
		flags |= kMpaFlagC;
	if (f.reject)
		flags |= kMpaFlagR;
	if (f.enhanced)
		flags |= kMpaFlagS;
	out.push_back(flags);
	out.push_back(f.rev);
	append_be16(out, static_cast<std::uint16_t>(f.pd_len + v2));
	if (f.enhanced) {
		std::uint16_t ird = f.ird & kMpaV2Depth;
		std::uint16_t ord = f.ord & kMpaV2Depth;

		if (f.p2p)
			ird |= kMpaV2A;
		if (f.rtr_send)
			ird |= kMpaV2B;
		if (f.rtr_write)
			ord |= kMpaV2C;
		if (f.rtr_read)
			ord |= kMpaV2D;
		append_be16(out, ird);
		append_be16(out, ord);
	}
	out.insert(out.end(), f.pd.begin(),
		   f.pd.begin() + static_cast<std::ptrdiff_t>(f.pd_len));
	return mpa_error::ok;
}

mpa_error decode_startup(byte_view in, mpa_kind expect, mpa_startup &out,
			 std::size_t *used) noexcept
{
	const std::string_view want =
		expect == mpa_kind::request ? kMpaKeyReq : kMpaKeyRep;
	const std::string_view other =
		expect == mpa_kind::request ? kMpaKeyRep : kMpaKeyReq;

	*used = 0;
	/* Reject a wrong key as soon as its bytes are in (MPA-03). */
	const std::size_t k = std::min(in.size(), kMpaKeyLen);

	if (!std::equal(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k),
			want.begin(), [](std::uint8_t b, char c) {
				return b == static_cast<std::uint8_t>(c);
			})) {
		if (in.size() >= kMpaKeyLen && key_is(in, other))
			return mpa_error::wrong_key;
		return mpa_error::bad_key;
	}
	if (in.size() < kMpaHdrLen)
		return mpa_error::need_more;
	const std::uint8_t flags = in[16];
	const std::uint8_t rev = in[17];
	const std::size_t pd_len = get_be16(&in[18]);

	if (rev != 1 && rev != 2)
		return mpa_error::bad_rev;
	if (pd_len > kMpaMaxPd)
		return mpa_error::pd_too_long;
	const bool s = (flags & kMpaFlagS) != 0;

	if (s && rev != 2)
		return mpa_error::s_without_rev2;
	if (s && pd_len < kMpaV2Len)
		return mpa_error::enhanced_too_short;
	if (in.size() < kMpaHdrLen + pd_len)
		return mpa_error::need_more;

	out = mpa_startup{};
	out.kind = expect;
	out.markers = (flags & kMpaFlagM) != 0;
	out.crc = (flags & kMpaFlagC) != 0;
	out.reject = (flags & kMpaFlagR) != 0;
	out.enhanced = s;
	out.res = flags & kMpaFlagRes;
	out.rev = rev;
	std::size_t off = kMpaHdrLen;

	if (s) {
		const std::uint16_t ird = get_be16(&in[off]);
		const std::uint16_t ord = get_be16(&in[off + 2]);

		out.p2p = (ird & kMpaV2A) != 0;
		out.rtr_send = (ird & kMpaV2B) != 0;
		out.rtr_write = (ord & kMpaV2C) != 0;
		out.rtr_read = (ord & kMpaV2D) != 0;
		out.ird = ird & kMpaV2Depth;
		out.ord = ord & kMpaV2Depth;
		off += kMpaV2Len;
	}
	out.pd_len = static_cast<std::uint16_t>(kMpaHdrLen + pd_len - off);
	std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(off), out.pd_len,
		    out.pd.begin());
	*used = kMpaHdrLen + pd_len;
	return mpa_error::ok;
}

/* ---- FPDU framing ---- */

std::size_t mulpdu(std::size_t emss, bool markers) noexcept
{
	std::size_t overhead = kFpduLenField + kFpduCrcLen + emss % 4;

	if (markers)
		overhead += kMarkerLen *
			    ((emss + kMarkerInterval - 1) / kMarkerInterval);
	if (emss < overhead + kMinMulpdu)
		return kMinMulpdu;
	return emss - overhead;
}

std::size_t framer::markers_in(std::size_t ulpdu_len) const noexcept
{
	if (!f_.markers)
		return 0;
	const std::size_t words =
		(kFpduLenField + ulpdu_len + fpdu_pad(ulpdu_len) +
		 kFpduCrcLen) / 4;
	std::uint64_t p = pos_;
	std::size_t n = 0;

	/* A marker before any word, the first included (MPA-30, 4.3). */
	for (std::size_t w = 0; w < words; w++) {
		if (p % kMarkerInterval == 0) {
			n++;
			p += kMarkerLen;
		}
		p += 4;
	}
	return n;
}

bool framer::frame(byte_view ulpdu, byte_vec &out, frame_fault fault,
		   std::uint32_t value)
{
	const std::size_t len = ulpdu.size();

	if (len > kMaxUlpdu)
		return false;
	const std::size_t pad = fpdu_pad(len);

	if (fault == frame_fault::pad && pad == 0)
		return false;
	if (fault == frame_fault::marker && markers_in(len) == 0)
		return false;

	/*
	 * The FPDU without markers, its CRC field still zero; the CRC is
	 * that of the intact FPDU, so that a length or pad fault looks like
	 * damage on the way (MPA-50) rather than a sender's honest choice.
	 */
	byte_vec body(kFpduLenField + len + pad + kFpduCrcLen, 0);

	put_be16(body.data(), static_cast<std::uint16_t>(len));
	std::copy(ulpdu.begin(), ulpdu.end(), body.begin() + 2);
	byte_vec wire = body;

	if (fault == frame_fault::length)
		put_be16(wire.data(), static_cast<std::uint16_t>(
				 len + (value ? value : 1)));
	if (fault == frame_fault::pad)
		wire[kFpduLenField + len] =
			static_cast<std::uint8_t>(value ? value : 0xa5);

	const std::size_t start = out.size();
	const std::size_t words = body.size() / 4;
	std::uint32_t reg = kCrcInit;
	std::uint64_t hdr_pos = pos_;
	bool marked = false;

	for (std::size_t w = 0; w < words; w++) {
		if (f_.markers && pos_ % kMarkerInterval == 0) {
			/*
			 * A marker right before the length field belongs to
			 * this FPDU with FPDUPTR 0 (RFC 5044 section 4.3);
			 * either way it is inside the CRC (MPA-31).
			 */
			if (w == 0)
				hdr_pos = pos_ + kMarkerLen;
			std::uint16_t ptr = static_cast<std::uint16_t>(
				w == 0 ? 0 : pos_ - hdr_pos);

			if (fault == frame_fault::marker && !marked)
				ptr ^= static_cast<std::uint16_t>(
					value ? value : 4);
			marked = true;
			const std::array<std::uint8_t, kMarkerLen> mk = {
				0, 0, static_cast<std::uint8_t>(ptr >> 8),
				static_cast<std::uint8_t>(ptr)
			};
			reg = crc32c_update(reg, mk);
			out.insert(out.end(), mk.begin(), mk.end());
			pos_ += kMarkerLen;
		}
		if (w + 1 < words) {
			reg = crc32c_update(reg, byte_view(&body[w * 4], 4));
			out.insert(out.end(), wire.begin() +
				   static_cast<std::ptrdiff_t>(w * 4),
				   wire.begin() +
				   static_cast<std::ptrdiff_t>(w * 4 + 4));
		} else {
			std::uint32_t crc = f_.crc ? ~reg : 0;

			if (fault == frame_fault::crc)
				crc ^= value ? value : 1;
			append_le32(out, crc);
		}
		pos_ += 4;
	}
	if (fault == frame_fault::truncate) {
		const std::size_t cut = std::min<std::size_t>(
			std::max<std::uint32_t>(value, 1), out.size() - start);

		out.resize(out.size() - cut);
		pos_ -= cut;
	}
	return true;
}

std::string_view deframe_error_name(deframe_error e) noexcept
{
	switch (e) {
	case deframe_error::none: return "none";
	case deframe_error::crc_mismatch: return "crc_mismatch";
	case deframe_error::marker_fpduptr: return "marker_fpduptr";
	case deframe_error::ulpdu_too_long: return "ulpdu_too_long";
	case deframe_error::ulpdu_too_short: return "ulpdu_too_short";
	}
	return "?";
}

deframer::deframer(framing f, std::size_t min_ulpdu, std::size_t max_ulpdu)
	: f_(f), min_ulpdu_(min_ulpdu), max_ulpdu_(std::min(max_ulpdu, kMaxUlpdu)),
	  buf_(kFpduLenField + kMaxUlpdu + 3 + kFpduCrcLen)
{
}

void deframer::fail(deframe_error e, std::uint64_t at) noexcept
{
	err_ = e;
	err_pos_ = at;
}

byte_view deframer::ulpdu() const noexcept
{
	if (!done_)
		return {};
	return {&buf_[kFpduLenField], get_be16(buf_.data())};
}

deframe_status deframer::feed(byte_view in) noexcept
{
	if (err_ != deframe_error::none)
		return {deframe_result::error, 0};
	if (done_) {
		done_ = false;
		have_ = 0;
		want_ = 0;
		crc_ = kCrcInit;
	}
	for (std::size_t i = 0; i < in.size(); i++) {
		const std::uint8_t b = in[i];

		if (f_.markers && (mk_have_ != 0 || pos_ % kMarkerInterval == 0)) {
			mk_[mk_have_++] = b;
			pos_++;
			if (mk_have_ < kMarkerLen)
				continue;
			mk_have_ = 0;
			const std::uint64_t at = pos_ - kMarkerLen;
			/* The low two bits count as zero (RFC 5044 4.3). */
			const std::uint16_t ptr = get_be16(&mk_[2]) & 0xfffcU;
			const std::uint16_t expect = have_ == 0 ? 0 :
				static_cast<std::uint16_t>((at - hdr_pos_) &
							   0xfffcU);

			if (have_ == 0)
				crc_ = kCrcInit;
			crc_ = crc32c_update(crc_, mk_);
			if (ptr != expect) {
				fail(deframe_error::marker_fpduptr, at);
				return {deframe_result::error, i + 1};
			}
			continue;
		}
		/* crc_ already holds a marker right before the length. */
		if (have_ == 0)
			hdr_pos_ = pos_;
		buf_[have_++] = b;
		pos_++;
		if (have_ == kFpduLenField) {
			const std::size_t len = get_be16(buf_.data());

			if (len > max_ulpdu_ || len < min_ulpdu_) {
				fail(len > max_ulpdu_ ?
				     deframe_error::ulpdu_too_long :
				     deframe_error::ulpdu_too_short, hdr_pos_);
				return {deframe_result::error, i + 1};
			}
			want_ = kFpduLenField + len + fpdu_pad(len) +
				kFpduCrcLen;
		}
		if (have_ <= kFpduLenField || have_ <= want_ - kFpduCrcLen)
			crc_ = crc32c_update(crc_, byte_view(&buf_[have_ - 1], 1));
		if (have_ < kFpduLenField || have_ < want_)
			continue;
		if (f_.crc) {
			const std::uint8_t *c = &buf_[want_ - kFpduCrcLen];
			const std::uint32_t got =
				static_cast<std::uint32_t>(c[0]) |
				(static_cast<std::uint32_t>(c[1]) << 8) |
				(static_cast<std::uint32_t>(c[2]) << 16) |
				(static_cast<std::uint32_t>(c[3]) << 24);

			if (got != ~crc_) {
				fail(deframe_error::crc_mismatch, hdr_pos_);
				return {deframe_result::error, i + 1};
			}
		}
		done_ = true;
		count_++;
		return {deframe_result::fpdu, i + 1};
	}
	return {deframe_result::need_more, in.size()};
}

/* ---- DDP and RDMAP ---- */

std::string_view opcode_name(std::uint8_t op) noexcept
{
	static constexpr std::array<std::string_view, 16> names = {
		"write", "read_req", "read_resp", "send", "send_inv",
		"send_se", "send_se_inv", "terminate", "immdt", "immdt_se",
		"atomic_req", "atomic_resp", "op12", "op13", "op14", "op15",
	};
	return names[op & kRdmapOpMask];
}

std::string_view ulpdu_error_name(ulpdu_error e) noexcept
{
	switch (e) {
	case ulpdu_error::ok: return "ok";
	case ulpdu_error::too_short: return "too_short";
	case ulpdu_error::ddp_version: return "ddp_version";
	case ulpdu_error::rdmap_version: return "rdmap_version";
	case ulpdu_error::bad_opcode: return "bad_opcode";
	case ulpdu_error::tagged_mismatch: return "tagged_mismatch";
	case ulpdu_error::terminate_short: return "terminate_short";
	case ulpdu_error::immdt_length: return "immdt_length";
	}
	return "?";
}

bool opcode_tagged(std::uint8_t op) noexcept
{
	return op == static_cast<std::uint8_t>(opcode::write) ||
	       op == static_cast<std::uint8_t>(opcode::read_resp);
}

void encode_ddp_hdr(const ddp_hdr &h, byte_vec &out)
{
	std::uint8_t c = static_cast<std::uint8_t>(
		((h.ddp_rsvd & 0x0fU) << 2) | (h.dv & kDdpVersionMask));

	if (h.tagged)
		c |= kDdpTagged;
	if (h.last)
		c |= kDdpLast;
	out.push_back(c);
	out.push_back(static_cast<std::uint8_t>(((h.rv & 3U) << 6) |
						((h.rdmap_rsvd & 3U) << 4) |
						(h.op & kRdmapOpMask)));
	if (h.tagged) {
		append_be32(out, h.stag);
		append_be64(out, h.to);
	} else {
		append_be32(out, h.inval);
		append_be32(out, h.qn);
		append_be32(out, h.msn);
		append_be32(out, h.mo);
	}
}

void encode_read_req(const read_req_hdr &r, byte_vec &out)
{
	append_be32(out, r.sink_stag);
	append_be64(out, r.sink_to);
	append_be32(out, r.size);
	append_be32(out, r.src_stag);
	append_be64(out, r.src_to);
}

void encode_terminate(const terminate_hdr &t, byte_vec &out)
{
	std::uint16_t bits = t.rsvd & 0x1fffU;

	out.push_back(static_cast<std::uint8_t>(((t.layer & 0xfU) << 4) |
						(t.etype & 0xfU)));
	out.push_back(t.ecode);
	if (t.m)
		bits |= kTermM;
	if (t.d)
		bits |= kTermD;
	if (t.r)
		bits |= kTermR;
	append_be16(out, bits);
	if (t.m || t.d)
		append_be16(out, t.seg_len);
	if (t.d)
		encode_ddp_hdr(t.ddp, out);
	if (t.r)
		encode_read_req(t.rdma, out);
}

namespace {

/* The fields, whatever the versions say; false if cut short. */
bool parse_ddp(byte_view in, ddp_hdr &h) noexcept
{
	if (in.size() < 2)
		return false;
	const std::uint8_t c = in[0];
	const std::uint8_t r = in[1];

	h = ddp_hdr{};
	h.tagged = (c & kDdpTagged) != 0;
	h.last = (c & kDdpLast) != 0;
	h.ddp_rsvd = static_cast<std::uint8_t>((c & kDdpRsvd) >> 2);
	h.dv = c & kDdpVersionMask;
	h.rv = static_cast<std::uint8_t>(r >> 6);
	h.rdmap_rsvd = static_cast<std::uint8_t>((r >> 4) & 3U);
	h.op = r & kRdmapOpMask;
	if (in.size() < h.size())
		return false;
	const std::uint8_t *p = &in[2];

	if (h.tagged) {
		h.stag = get_be32(p);
		h.to = get_be64(p + 4);
	} else {
		h.inval = get_be32(p);
		h.qn = get_be32(p + 4);
		h.msn = get_be32(p + 8);
		h.mo = get_be32(p + 12);
	}
	return true;
}

void parse_read_req(const std::uint8_t *p, read_req_hdr &r) noexcept
{
	r.sink_stag = get_be32(p);
	r.sink_to = get_be64(p + 4);
	r.size = get_be32(p + 12);
	r.src_stag = get_be32(p + 16);
	r.src_to = get_be64(p + 20);
}

ulpdu_error parse_terminate(byte_view in, terminate_hdr &t) noexcept
{
	if (in.size() < kTermCtrlLen)
		return ulpdu_error::too_short;
	t = terminate_hdr{};
	t.layer = static_cast<std::uint8_t>(in[0] >> 4);
	t.etype = in[0] & 0x0fU;
	t.ecode = in[1];
	const std::uint16_t bits = get_be16(&in[2]);

	t.m = (bits & kTermM) != 0;
	t.d = (bits & kTermD) != 0;
	t.r = (bits & kTermR) != 0;
	t.rsvd = bits & 0x1fffU;
	in = in.subspan(kTermCtrlLen);
	if (t.m || t.d) {
		if (in.size() < kTermSegLen)
			return ulpdu_error::terminate_short;
		t.seg_len = get_be16(in.data());
		in = in.subspan(kTermSegLen);
	}
	if (t.d) {
		if (!parse_ddp(in, t.ddp))
			return ulpdu_error::terminate_short;
		in = in.subspan(t.ddp.size());
	}
	if (t.r) {
		if (in.size() < kReadReqLen)
			return ulpdu_error::terminate_short;
		parse_read_req(in.data(), t.rdma);
	}
	return ulpdu_error::ok;
}

} // namespace

ulpdu_error decode_ddp_hdr(byte_view in, ddp_hdr &out) noexcept
{
	if (!parse_ddp(in, out))
		return ulpdu_error::too_short;
	if (out.dv != kDdpVersion)
		return ulpdu_error::ddp_version;
	return ulpdu_error::ok;
}

ulpdu_error decode_ulpdu(byte_view in, segment &out) noexcept
{
	out = segment{};
	const ulpdu_error e = decode_ddp_hdr(in, out.hdr);

	if (e != ulpdu_error::ok)
		return e;
	const ddp_hdr &h = out.hdr;

	if (h.rv != kRdmapVersion)
		return ulpdu_error::rdmap_version;
	if (h.op > static_cast<std::uint8_t>(opcode::atomic_resp))
		return ulpdu_error::bad_opcode;
	if (opcode_tagged(h.op) != h.tagged)
		return ulpdu_error::tagged_mismatch;
	byte_view rest = in.subspan(h.size());

	if (h.op == static_cast<std::uint8_t>(opcode::read_req)) {
		if (rest.size() < kReadReqLen)
			return ulpdu_error::too_short;
		parse_read_req(rest.data(), out.rreq);
		rest = rest.subspan(kReadReqLen);
	} else if (h.op == static_cast<std::uint8_t>(opcode::terminate)) {
		const ulpdu_error te = parse_terminate(rest, out.term);

		if (te != ulpdu_error::ok)
			return te;
		rest = {};
	} else if ((h.op == static_cast<std::uint8_t>(opcode::immdt) ||
		    h.op == static_cast<std::uint8_t>(opcode::immdt_se)) &&
		   rest.size() != kImmdtLen) {
		return ulpdu_error::immdt_length;
	}
	out.payload = rest;
	return ulpdu_error::ok;
}

std::vector<byte_vec> segment_message(const message &m,
				      std::size_t max_ulpdu)
{
	std::vector<byte_vec> segs;
	ddp_hdr h;

	h.op = m.op & kRdmapOpMask;
	h.tagged = opcode_tagged(h.op);
	h.stag = m.stag;
	h.qn = m.qn;
	h.msn = m.msn;
	h.inval = m.inval;
	if (h.op == static_cast<std::uint8_t>(opcode::read_req) ||
	    h.op == static_cast<std::uint8_t>(opcode::terminate)) {
		/* Single-segment messages (RFC 5040 sections 4.4, 4.8). */
		byte_vec s;

		encode_ddp_hdr(h, s);
		if (h.op == static_cast<std::uint8_t>(opcode::read_req))
			encode_read_req(m.rreq, s);
		else
			encode_terminate(m.term, s);
		s.insert(s.end(), m.payload.begin(), m.payload.end());
		segs.push_back(std::move(s));
		return segs;
	}
	const std::size_t chunk =
		max_ulpdu > h.size() ? max_ulpdu - h.size() : 1;
	std::size_t off = 0;

	do {
		const std::size_t n = std::min(chunk, m.payload.size() - off);
		byte_vec s;

		s.reserve(h.size() + n);
		h.to = m.to + off;
		h.mo = static_cast<std::uint32_t>(off);
		h.last = off + n == m.payload.size();
		encode_ddp_hdr(h, s);
		s.insert(s.end(), m.payload.begin() +
			 static_cast<std::ptrdiff_t>(off),
			 m.payload.begin() + static_cast<std::ptrdiff_t>(off + n));
		segs.push_back(std::move(s));
		off += n;
	} while (off < m.payload.size());
	return segs;
}

/* ---- corruptions ---- */

std::string_view field_name(field f) noexcept
{
	switch (f) {
	case field::ddp_version: return "ddp_version";
	case field::rdmap_version: return "rdmap_version";
	case field::opcode: return "opcode";
	case field::qn: return "qn";
	case field::msn: return "msn";
	case field::mo: return "mo";
	case field::stag: return "stag";
	case field::to: return "to";
	case field::last: return "last";
	case field::tagged: return "tagged";
	}
	return "?";
}

bool set_field(byte_vec &u, field f, std::uint64_t value) noexcept
{
	if (u.size() < 2)
		return false;
	const bool tagged = (u[0] & kDdpTagged) != 0;
	const std::size_t need = tagged ? kTaggedHdrLen : kUntaggedHdrLen;
	const auto v8 = static_cast<std::uint8_t>(value);
	const auto v32 = static_cast<std::uint32_t>(value);

	switch (f) {
	case field::ddp_version:
		u[0] = static_cast<std::uint8_t>((u[0] & ~kDdpVersionMask) |
						 (v8 & kDdpVersionMask));
		return true;
	case field::rdmap_version:
		u[1] = static_cast<std::uint8_t>((u[1] & 0x3fU) |
						 ((v8 & 3U) << 6));
		return true;
	case field::opcode:
		u[1] = static_cast<std::uint8_t>((u[1] & 0xf0U) |
						 (v8 & kRdmapOpMask));
		return true;
	case field::last:
		u[0] = static_cast<std::uint8_t>((u[0] & ~kDdpLast) |
						 ((v8 & 1U) ? kDdpLast : 0));
		return true;
	case field::tagged:
		u[0] = static_cast<std::uint8_t>((u[0] & ~kDdpTagged) |
						 ((v8 & 1U) ? kDdpTagged : 0));
		return true;
	default:
		break;
	}
	if (u.size() < need)
		return false;
	switch (f) {
	case field::stag:
		if (!tagged)
			return false;
		put_be32(&u[2], v32);
		return true;
	case field::to:
		if (!tagged)
			return false;
		put_be64(&u[6], value);
		return true;
	case field::qn:
	case field::msn:
	case field::mo:
		if (tagged)
			return false;
		put_be32(&u[f == field::qn ? 6 : f == field::msn ? 10 : 14],
			 v32);
		return true;
	default:
		return false;
	}
}

} // namespace xiw::peer
