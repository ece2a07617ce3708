// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The iWARP wire codec of xiw-wirepeer: MPA start-up frames (RFC 5044
 * section 7.1, RFC 6581 section 9), FPDU framing with CRC32c and markers
 * (RFC 5044 section 4), a streaming deframer, DDP and RDMAP headers
 * (RFC 5041 section 4, RFC 5040 section 4, RFC 7306), segmentation by
 * MULPDU, and structured corruptions for hostile tests.
 *
 * No sockets and no global state. Decoders never allocate and never read
 * outside the span they are given, whatever its bytes: they are fuzzed
 * (fuzz_codec.cpp). Requirement IDs (MPA-*, DDP-*, TERM-*, E-*) are
 * defined in Documentation/requirements.rst.
 */
#ifndef XIW_PEER_CODEC_H
#define XIW_PEER_CODEC_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace xiw::peer {

using byte_view = std::span<const std::uint8_t>;
using byte_vec = std::vector<std::uint8_t>;

/* Big-endian fields; the caller has checked that they fit. */
std::uint16_t get_be16(const std::uint8_t *p) noexcept;
std::uint32_t get_be32(const std::uint8_t *p) noexcept;
std::uint64_t get_be64(const std::uint8_t *p) noexcept;
void put_be16(std::uint8_t *p, std::uint16_t v) noexcept;
void put_be32(std::uint8_t *p, std::uint32_t v) noexcept;
void put_be64(std::uint8_t *p, std::uint64_t v) noexcept;

/*
 * CRC32c (Castagnoli, reflected polynomial 0x82F63B78), RFC 5044 section
 * 4.4 and RFC 3385. crc32c_update() carries the raw register (start with
 * kCrcInit); crc32c() is the finished value of one buffer. On the wire the
 * finished value travels least significant byte first (MPA-42).
 */
constexpr std::uint32_t kCrcInit = 0xffffffffU;
std::uint32_t crc32c_update(std::uint32_t reg, byte_view data) noexcept;
std::uint32_t crc32c(byte_view data) noexcept;

/* ---- MPA start-up (MPA-01, MPA-03, E-01) ---- */

constexpr std::size_t kMpaKeyLen = 16;
constexpr std::size_t kMpaHdrLen = 20;
constexpr std::size_t kMpaMaxPd = 512;
constexpr std::size_t kMpaV2Len = 4;	/* |A|B|IRD|C|D|ORD| */
constexpr std::string_view kMpaKeyReq = "MPA ID Req Frame";
constexpr std::string_view kMpaKeyRep = "MPA ID Rep Frame";
constexpr std::uint8_t kMpaFlagM = 0x80;
constexpr std::uint8_t kMpaFlagC = 0x40;
constexpr std::uint8_t kMpaFlagR = 0x20;
constexpr std::uint8_t kMpaFlagS = 0x10;
constexpr std::uint8_t kMpaFlagRes = 0x0f;
constexpr std::uint16_t kMpaV2A = 0x8000;	/* IRD word: peer-to-peer */
constexpr std::uint16_t kMpaV2B = 0x4000;	/* IRD word: Send RTR */
constexpr std::uint16_t kMpaV2C = 0x8000;	/* ORD word: Write RTR */
constexpr std::uint16_t kMpaV2D = 0x4000;	/* ORD word: Read RTR */
constexpr std::uint16_t kMpaV2Depth = 0x3fff;	/* also E-05 "no negotiation" */

enum class mpa_kind : std::uint8_t { request, reply };

/* The zero-length RTR message of RFC 6581 peer-to-peer mode (E-06). */
enum class rtr_type : std::uint8_t { none, send, write, read };

struct mpa_startup {
	mpa_kind kind = mpa_kind::request;
	bool markers = false;	/* M */
	bool crc = true;	/* C */
	bool reject = false;	/* R, meaningful in a Reply only (MPA-06) */
	bool enhanced = false;	/* S: PD starts with IRD/ORD (E-01) */
	std::uint8_t res = 0;	/* the 4 reserved bits, as seen */
	std::uint8_t rev = 1;
	/* RFC 6581 section 9, when enhanced */
	bool p2p = false;	/* A */
	bool rtr_send = false;	/* B */
	bool rtr_write = false;	/* C */
	bool rtr_read = false;	/* D */
	std::uint16_t ird = 0;
	std::uint16_t ord = 0;
	/* ULP private data (after the IRD/ORD word when enhanced) */
	std::array<std::uint8_t, kMpaMaxPd> pd{};
	std::uint16_t pd_len = 0;
};

enum class mpa_error : std::uint8_t {
	ok,
	need_more,		/* not a whole frame yet */
	bad_key,		/* neither key (MPA-03) */
	wrong_key,		/* the other frame's key */
	bad_rev,		/* not 1 or 2 (MPA-03) */
	pd_too_long,		/* PD_Length > 512 (MPA-03) */
	s_without_rev2,		/* S needs Rev 2 (RFC 6581 section 8) */
	enhanced_too_short,	/* S set, PD_Length < 4 (E-01) */
	invalid,		/* cannot be encoded as given */
};
std::string_view mpa_error_name(mpa_error e) noexcept;

/*
 * Appends the frame to out. Fails (invalid) if the private data with the
 * IRD/ORD word would exceed 512 bytes or pd_len is out of range.
 */
mpa_error encode_startup(const mpa_startup &f, byte_vec &out);

/*
 * Decodes one frame of the expected kind from the start of in. On ok,
 * *used is its length (header and private data); bytes after it are the
 * caller's (MPA-09). need_more until the whole frame is there.
 */
mpa_error decode_startup(byte_view in, mpa_kind expect, mpa_startup &out,
			 std::size_t *used) noexcept;

/* ---- FPDU framing (MPA-20, MPA-23, MPA-30/31) ---- */

constexpr std::size_t kFpduLenField = 2;
constexpr std::size_t kFpduCrcLen = 4;
constexpr std::size_t kMarkerLen = 4;
constexpr std::size_t kMarkerInterval = 512;
constexpr std::size_t kMinMulpdu = 128;
constexpr std::size_t kMaxUlpdu = 0xffff;

/* Pad bytes after a ULPDU of len bytes: the FPDU is a multiple of 4. */
constexpr std::size_t fpdu_pad(std::size_t ulpdu_len) noexcept
{
	return (4 - ((kFpduLenField + ulpdu_len) & 3)) & 3;
}

/*
 * MPA-23 (RFC 5044 section 4.5): the largest ULPDU that keeps an FPDU
 * within one segment of emss bytes, never below 128.
 */
std::size_t mulpdu(std::size_t emss, bool markers) noexcept;

/* What the two sides agreed in start-up. */
struct framing {
	bool crc = true;
	bool markers = false;
};

/* Faults the framer can put into the FPDU it builds. */
enum class frame_fault : std::uint8_t {
	none,
	length,		/* ULPDU_Length + value (mod 2^16), after the CRC */
	pad,		/* a pad byte := value, after the CRC (needs pad) */
	crc,		/* CRC xor value (1 if 0) */
	marker,		/* first marker in the FPDU: FPDUPTR xor value */
	truncate,	/* the last value bytes (at least 1) left out */
};

/*
 * The sender's side of one direction of full operation: its stream
 * position decides where markers go (MPA-30: the first at the start of
 * full operation, then every 512 bytes).
 */
class framer {
public:
	explicit framer(framing f) noexcept : f_(f) {}

	/*
	 * Appends the FPDU carrying ulpdu (at most 65535 bytes) with its
	 * markers, pad and CRC to out and advances the stream position.
	 * Returns false (nothing appended) if the ULPDU is too long or the
	 * fault does not apply (pad fault without pad, marker fault with no
	 * marker in this FPDU).
	 */
	bool frame(byte_view ulpdu, byte_vec &out,
		   frame_fault fault = frame_fault::none,
		   std::uint32_t value = 0);

	/* Markers that frame() would put into an FPDU of this ULPDU. */
	std::size_t markers_in(std::size_t ulpdu_len) const noexcept;

	std::uint64_t position() const noexcept { return pos_; }
	const framing &config() const noexcept { return f_; }

private:
	framing f_;
	std::uint64_t pos_ = 0;
};

enum class deframe_error : std::uint8_t {
	none,
	crc_mismatch,		/* MPA-50 */
	marker_fpduptr,		/* MPA-31: pointer not to this FPDU */
	ulpdu_too_long,		/* over the receiver's limit */
	ulpdu_too_short,	/* under the receiver's limit */
};
std::string_view deframe_error_name(deframe_error e) noexcept;

enum class deframe_result : std::uint8_t { need_more, fpdu, error };

struct deframe_status {
	deframe_result result;
	std::size_t used;	/* bytes of the input consumed */
};

/*
 * The receiver's side: feed any chunks of the byte stream of full
 * operation, get FPDUs out one at a time (MPA-24). Holds at most one
 * FPDU. After an error it stays in error and consumes nothing.
 */
class deframer {
public:
	explicit deframer(framing f, std::size_t min_ulpdu = 0,
			  std::size_t max_ulpdu = kMaxUlpdu);

	/*
	 * Consumes input up to the end of one FPDU. On fpdu, ulpdu() is
	 * valid until the next feed().
	 */
	deframe_status feed(byte_view in) noexcept;

	byte_view ulpdu() const noexcept;
	deframe_error error() const noexcept { return err_; }
	/* Stream position of the first byte that showed the error. */
	std::uint64_t error_pos() const noexcept { return err_pos_; }
	std::uint64_t position() const noexcept { return pos_; }
	/* Part of an FPDU (or a marker) received and not yet complete. */
	bool pending() const noexcept
	{
		return (have_ != 0 && !done_) || mk_have_ != 0;
	}
	std::uint64_t fpdus() const noexcept { return count_; }

private:
	void fail(deframe_error e, std::uint64_t at) noexcept;

	framing f_;
	std::size_t min_ulpdu_;
	std::size_t max_ulpdu_;
	byte_vec buf_;			/* the FPDU without markers */
	std::size_t have_ = 0;		/* bytes of it in buf_ */
	std::size_t want_ = 0;		/* its length, once known */
	std::uint64_t hdr_pos_ = 0;	/* stream position of its length */
	std::uint32_t crc_ = kCrcInit;
	std::array<std::uint8_t, kMarkerLen> mk_{};
	std::size_t mk_have_ = 0;
	std::uint64_t pos_ = 0;
	bool done_ = false;		/* buf_ holds a delivered FPDU */
	deframe_error err_ = deframe_error::none;
	std::uint64_t err_pos_ = 0;
	std::uint64_t count_ = 0;
};

/* ---- DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) ---- */

constexpr std::size_t kTaggedHdrLen = 14;	/* DDP-02 */
constexpr std::size_t kUntaggedHdrLen = 18;	/* DDP-03 */
constexpr std::size_t kReadReqLen = 28;	/* RFC 5040 section 4.4 */
constexpr std::size_t kTermCtrlLen = 4;	/* TERM-01 */
constexpr std::size_t kTermSegLen = 2;
constexpr std::size_t kImmdtLen = 8;		/* EXT-08 */
constexpr std::uint8_t kDdpTagged = 0x80;
constexpr std::uint8_t kDdpLast = 0x40;
constexpr std::uint8_t kDdpRsvd = 0x3c;
constexpr std::uint8_t kDdpVersion = 0x01;
constexpr std::uint8_t kDdpVersionMask = 0x03;
constexpr std::uint8_t kRdmapVersion = 0x01;	/* RV = 01b, top bits */
constexpr std::uint8_t kRdmapOpMask = 0x0f;
constexpr std::uint16_t kTermM = 0x8000;
constexpr std::uint16_t kTermD = 0x4000;
constexpr std::uint16_t kTermR = 0x2000;

enum class opcode : std::uint8_t {
	write = 0,
	read_req = 1,
	read_resp = 2,
	send = 3,
	send_inv = 4,
	send_se = 5,
	send_se_inv = 6,
	terminate = 7,
	immdt = 8,
	immdt_se = 9,
	atomic_req = 10,
	atomic_resp = 11,
};
std::string_view opcode_name(std::uint8_t op) noexcept;

/* Untagged queues (DDP-04) */
constexpr std::uint32_t kQnSend = 0;
constexpr std::uint32_t kQnReadReq = 1;
constexpr std::uint32_t kQnTerminate = 2;
constexpr std::uint32_t kQnAtomicResp = 3;

/* The DDP header and the RDMAP control byte, either kind. */
struct ddp_hdr {
	bool tagged = false;
	bool last = true;
	std::uint8_t ddp_rsvd = 0;	/* the 4 reserved bits */
	std::uint8_t dv = kDdpVersion;
	std::uint8_t rv = kRdmapVersion;
	std::uint8_t rdmap_rsvd = 0;	/* the 2 bits between RV and opcode */
	std::uint8_t op = 0;
	std::uint32_t stag = 0;	/* tagged */
	std::uint64_t to = 0;	/* tagged */
	std::uint32_t inval = 0;	/* untagged: RsvdULP, Invalidate STag */
	std::uint32_t qn = 0;
	std::uint32_t msn = 0;
	std::uint32_t mo = 0;

	std::size_t size() const noexcept
	{
		return tagged ? kTaggedHdrLen : kUntaggedHdrLen;
	}
};

struct read_req_hdr {
	std::uint32_t sink_stag = 0;
	std::uint64_t sink_to = 0;
	std::uint32_t size = 0;
	std::uint32_t src_stag = 0;
	std::uint64_t src_to = 0;
};

/* RFC 5040 section 4.8 (TERM-01), after the untagged header */
struct terminate_hdr {
	std::uint8_t layer = 0;
	std::uint8_t etype = 0;
	std::uint8_t ecode = 0;
	bool m = false;
	bool d = false;
	bool r = false;
	std::uint16_t rsvd = 0;		/* the 13 reserved bits */
	std::uint16_t seg_len = 0;	/* present when m or d */
	ddp_hdr ddp;			/* the terminated DDP header, when d */
	read_req_hdr rdma;		/* the terminated Read Request, when r */
};

enum class ulpdu_error : std::uint8_t {
	ok,
	too_short,		/* shorter than its headers */
	ddp_version,		/* DDP-08 */
	rdmap_version,		/* TERM-04 0x0/0x2/0x05 */
	bad_opcode,		/* reserved opcode (TERM-04 0x0/0x2/0x06) */
	tagged_mismatch,	/* T bit wrong for the opcode */
	terminate_short,	/* a Terminate's optional parts cut off */
	immdt_length,		/* Immediate Data not 8 bytes (EXT-08) */
};
std::string_view ulpdu_error_name(ulpdu_error e) noexcept;

/* A decoded ULPDU (DDP segment); the views point into the input. */
struct segment {
	ddp_hdr hdr;
	read_req_hdr rreq;	/* op == read_req */
	terminate_hdr term;	/* op == terminate */
	byte_view payload;
};

/* Appends the DDP header with the RDMAP control byte (no MPA length). */
void encode_ddp_hdr(const ddp_hdr &h, byte_vec &out);
void encode_read_req(const read_req_hdr &r, byte_vec &out);
void encode_terminate(const terminate_hdr &t, byte_vec &out);

/* Just the DDP header; decode_ulpdu() also checks the RDMAP parts. */
ulpdu_error decode_ddp_hdr(byte_view in, ddp_hdr &out) noexcept;
ulpdu_error decode_ulpdu(byte_view in, segment &out) noexcept;

/*
 * One RDMAP message to be cut into DDP segments (RFC 5041 section 5):
 * tagged ones advance TO, untagged ones MO; only the last has L set; a
 * zero-length message is exactly one segment (DDP-05).
 */
struct message {
	std::uint8_t op = static_cast<std::uint8_t>(opcode::send);
	std::uint32_t stag = 0;		/* Write, Read Response */
	std::uint64_t to = 0;
	std::uint32_t qn = kQnSend;	/* untagged */
	std::uint32_t msn = 1;
	std::uint32_t inval = 0;	/* Send with Invalidate */
	read_req_hdr rreq;		/* Read Request */
	terminate_hdr term;		/* Terminate */
	byte_view payload;
};

/* Is this opcode carried by tagged DDP segments? */
bool opcode_tagged(std::uint8_t op) noexcept;

/* The ULPDUs of the message, each at most max_ulpdu (>= header + 1). */
std::vector<byte_vec> segment_message(const message &m,
				      std::size_t max_ulpdu);

/* ---- structured corruptions of a ULPDU (the hostile campaign) ---- */

enum class field : std::uint8_t {
	ddp_version,	/* DV := value & 3 */
	rdmap_version,	/* RV := value & 3 */
	opcode,		/* opcode := value & 15 */
	qn,		/* untagged only */
	msn,		/* untagged only */
	mo,		/* untagged only */
	stag,		/* tagged only */
	to,		/* tagged only */
	last,		/* L := value & 1 */
	tagged,		/* T := value & 1 (the rest stays) */
};
std::string_view field_name(field f) noexcept;

/*
 * Overwrites one header field of an encoded ULPDU in place. False if the
 * ULPDU is too short or the field is not in its kind of header.
 */
bool set_field(byte_vec &ulpdu, field f, std::uint64_t value) noexcept;

} // namespace xiw::peer

#endif // XIW_PEER_CODEC_H
