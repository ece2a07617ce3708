// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw-wirepeer: an iWARP peer on a plain TCP socket, for conformance and
 * hostile tests of the xiw kernel module. It speaks MPA start-up as
 * initiator (--connect) or responder (--listen), then runs a script of
 * actions given on the command line (well-formed messages, or messages
 * with one structured fault) and prints what comes back, one line per
 * FPDU, then how the connection ended. --fuzz sends randomly mutated
 * FPDUs instead, reconnecting whenever the kernel closes.
 *
 * Exit status: 0 every --expect seen (as the start of a printed line) (or none given and the script ran),
 * 1 an --expect not seen, 2 no full operation (TCP or MPA failed),
 * 64 usage.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "codec.h"

namespace {

using namespace xiw::peer;
using clock_type = std::chrono::steady_clock;

constexpr int kExitOk = 0;
constexpr int kExitUnexpected = 1;
constexpr int kExitNoConnection = 2;
constexpr int kExitUsage = 64;

struct options {
	std::string connect;	/* IP:PORT */
	int listen_port = -1;
	std::uint8_t rev = 2;
	bool crc = true;
	bool markers = false;
	bool p2p = true;
	rtr_type rtr = rtr_type::write;
	std::uint16_t ird = 8;
	std::uint16_t ord = 8;
	bool ord_given = false;	/* --ord: send it as is, even if wrong */
	bool rtr_force = false;	/* --force-rtr: pick --rtr even if not offered */
	std::string pd;
	std::size_t emss = 0;		/* 0: the socket's MSS */
	int linger_ms = 3000;
	int timeout_ms = 10000;
	bool answer_reads = true;
	/*
	 * --atomic-reply: answer Atomic Requests with original value 0x1122..88,
	 * well-formed ("ok") or with one thing wrong (id, len, qn, msn).
	 */
	std::string atomic_reply;
	std::vector<std::string> expect;
	bool fuzz = false;
	std::uint64_t seed = 1;
	std::uint64_t frames = 1000;
	unsigned int mutate_pct = 25;	/* of the frames in --fuzz */
	/*
	 * --dribble N: once in full operation, every send() carries at
	 * most N bytes, a millisecond apart, so the receiver meets FPDUs
	 * cut anywhere (inside the header, the payload, the CRC).
	 */
	std::size_t dribble = 0;
	/*
	 * --after-frame HEX: bytes sent right behind our start-up frame, in
	 * the same send(), before the peer's frame is read: what MPA-09
	 * forbids between start-up and full operation. Parsed with the
	 * options, so that bad hex is a usage error before any connection.
	 */
	byte_vec after_frame;
	/*
	 * --mpa-fault: one thing wrong in our start-up frame (MPA-03), as
	 * its offset in the frame and the bytes put there: the key's first
	 * byte, the revision, or PD_Length (whatever follows is sent as
	 * encoded). Parsed with the options, like --after-frame. Or
	 * swap_key: the other frame's key, as a second initiator (or
	 * responder) would send it (MPA-14).
	 */
	std::size_t mpa_fault_at = 0;
	byte_vec mpa_fault;
	bool mpa_swap_key = false;
	bool quiet = false;
	std::vector<std::string> actions;
};

[[noreturn]] void usage(const char *why)
{
	std::fprintf(stderr,
		"xiw-wirepeer: %s\n"
		"usage: xiw-wirepeer (--connect IP:PORT | --listen PORT) [options] [ACTION...]\n"
		"  --rev 1|2  --crc 0|1  --markers 0|1  --p2p 0|1\n"
		"  --rtr none|send|write|read  --ird N  --ord N  --pd TEXT\n"
		"  --emss N  --linger MS  --timeout MS  --no-answer-reads\n"
		"  --atomic-reply ok|id|len|qn|msn (answer Atomic Requests so)\n"
		"  --force-rtr (responder: pick --rtr even if not offered)\n"
		"  --dribble N (full operation: N bytes per send, 1 ms apart)\n"
		"  --after-frame HEX (bytes right behind our MPA frame)\n"
		"  --mpa-fault key|swap_key|rev=N|pd_len=N (our MPA frame malformed)\n"
		"  --expect TEXT (repeatable: a printed line must start with it)\n"
		"  --fuzz --seed S --frames N [--mutate PCT] (with --connect)\n"
		"actions (each may end in !FAULT[=VALUE]):\n"
		"  send:N send_se:N send_inv:N:STAG send_se_inv:N:STAG\n"
		"  write:STAG:TO:N  read:SRCSTAG:SRCTO:N[:SINKSTAG:SINKTO]\n"
		"  reads:K:SRCSTAG:SRCTO:N  immdt:HEX16  terminate:L:E:C\n"
		"  atomic:AOP:STAG:TO[:ADD_SWAP[:COMPARE[:REQ_ID[:ADD_SWAP_MASK[:COMPARE_MASK]]]]]\n"
		"    (STAG, TO 'rx': from the last Send received, be32 + be64;\n"
		"    an empty field keeps its default)\n"
		"  atomic_resp:REQ_ID[:VALUE] (RFC 7306)\n"
		"  raw:HEX  wait:MS  close\n"
		"faults: crc length pad marker truncate overlong ddp_version\n"
		"  rdmap_version opcode qn msn mo stag to last tagged\n"
		"  data=N (N pattern bytes after a Read Request or Terminate)\n",
		why);
	std::exit(kExitUsage);
}

std::uint64_t num(std::string_view s)
{
	if (s.empty())
		throw std::invalid_argument("empty number");
	std::size_t used = 0;
	const std::string str(s);
	const std::uint64_t v = std::stoull(str, &used, 0);

	if (used != str.size())
		throw std::invalid_argument("bad number: " + str);
	return v;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
	std::vector<std::string_view> out;

	for (;;) {
		const std::size_t i = s.find(sep);

		out.push_back(s.substr(0, i));
		if (i == std::string_view::npos)
			return out;
		s.remove_prefix(i + 1);
	}
}

byte_vec parse_hex(std::string_view s)
{
	byte_vec out;

	if (s.size() % 2)
		throw std::invalid_argument("odd hex length");
	for (std::size_t i = 0; i < s.size(); i += 2)
		out.push_back(static_cast<std::uint8_t>(
			num("0x" + std::string(s.substr(i, 2)))));
	return out;
}

std::string to_hex(byte_view b, std::size_t max)
{
	std::string s;
	char buf[3];

	for (std::size_t i = 0; i < b.size() && i < max; i++) {
		std::snprintf(buf, sizeof(buf), "%02x", b[i]);
		s += buf;
	}
	if (b.size() > max)
		s += "...";
	return s;
}

/* ---- the socket ---- */

class conn {
public:
	~conn() { close(); }

	void close()
	{
		if (fd_ >= 0)
			::close(fd_);
		fd_ = -1;
	}

	bool connect_to(const std::string &where)
	{
		const std::size_t colon = where.rfind(':');

		if (colon == std::string::npos)
			usage("--connect needs IP:PORT");
		addrinfo hints{};
		addrinfo *res = nullptr;

		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(where.substr(0, colon).c_str(),
				where.substr(colon + 1).c_str(), &hints, &res))
			return false;
		fd_ = socket(res->ai_family, SOCK_STREAM, 0);
		const bool ok = fd_ >= 0 &&
				::connect(fd_, res->ai_addr, res->ai_addrlen) == 0;
		freeaddrinfo(res);
		if (!ok) {
			std::printf("connect-failed errno=%d\n", errno);
			close();
			return false;
		}
		nodelay();
		return true;
	}

	bool accept_on(int port, int timeout_ms)
	{
		const int ls = socket(AF_INET6, SOCK_STREAM, 0);
		const int one = 1;
		sockaddr_in6 a{};

		if (ls < 0)
			return false;
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		a.sin6_family = AF_INET6;
		a.sin6_port = htons(static_cast<std::uint16_t>(port));
		a.sin6_addr = in6addr_any;
		if (bind(ls, reinterpret_cast<sockaddr *>(&a), sizeof(a)) ||
		    ::listen(ls, 1)) {
			::close(ls);
			return false;
		}
		std::printf("listening port=%d\n", port);
		std::fflush(stdout);
		pollfd p{ls, POLLIN, 0};

		if (poll(&p, 1, timeout_ms) != 1) {
			::close(ls);
			return false;
		}
		fd_ = accept(ls, nullptr, nullptr);
		::close(ls);
		if (fd_ < 0)
			return false;
		nodelay();
		return true;
	}

	bool send_all(byte_view b)
	{
		while (!b.empty()) {
			const std::size_t want =
				dribble_ ? std::min(dribble_, b.size()) : b.size();
			const ssize_t n = ::send(fd_, b.data(), want,
						 MSG_NOSIGNAL);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return false;
			b = b.subspan(static_cast<std::size_t>(n));
			if (dribble_ && !b.empty())
				usleep(1000);
		}
		return true;
	}

	/* At most n bytes per send() from now on (0: no limit). */
	void set_dribble(std::size_t n) { dribble_ = n; }

	/* >0 bytes, 0 EOF, -1 error (errno), -2 timeout */
	ssize_t recv_some(std::uint8_t *buf, std::size_t len, int timeout_ms)
	{
		pollfd p{fd_, POLLIN, 0};
		const int r = poll(&p, 1, timeout_ms);

		if (r == 0)
			return -2;
		if (r < 0)
			return -1;
		return ::recv(fd_, buf, len, 0);
	}

	void shutdown_wr() { ::shutdown(fd_, SHUT_WR); }

	std::size_t mss() const
	{
		int m = 0;
		socklen_t l = sizeof(m);

		if (getsockopt(fd_, IPPROTO_TCP, TCP_MAXSEG, &m, &l) || m <= 0)
			return 1460;
		return static_cast<std::size_t>(m);
	}

	bool open() const { return fd_ >= 0; }

private:
	void nodelay()
	{
		const int one = 1;

		setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}

	int fd_ = -1;
	std::size_t dribble_ = 0;
};

/* ---- one connection in full operation ---- */

enum class ending : std::uint8_t { open, close, reset, timeout, bad_fpdu };

class session {
public:
	session(conn &c, const options &o) : c_(c), o_(o) {}

	/* MPA start-up; false (with a line saying why) if it failed. */
	bool start(bool initiator);

	/* Runs one action; false if the connection is gone. */
	bool action(const std::string &a);

	/* Reads and prints until the connection ends or ms of silence. */
	ending drain(int ms);

	/* Sends one ULPDU as an FPDU with an optional fault. */
	bool send_ulpdu(const byte_vec &u, frame_fault f = frame_fault::none,
			std::uint32_t v = 0);

	std::size_t max_ulpdu() const { return max_ulpdu_; }
	std::uint32_t next_msn(std::uint32_t qn) { return msn_.at(qn)++; }
	/* The connection ended, or we can no longer send on it. */
	bool gone() const { return end_ != ending::open || tx_dead_; }
	std::uint64_t fpdus_in() const { return rx_ ? rx_->fpdus() : 0; }
	std::uint64_t terminates() const { return terms_; }

	std::vector<std::string> lines;	/* everything printed */

private:
	void say(const std::string &s);
	void fault_startup(byte_vec &buf) const;
	void on_fpdu(byte_view u);
	bool send_message(message m, const std::string &fault);
	bool handle_rx(byte_view in);

	conn &c_;
	const options &o_;
	std::optional<framer> tx_;
	std::optional<deframer> rx_;
	std::vector<std::uint32_t> msn_ = {1, 1, 1, 1};
	std::size_t max_ulpdu_ = 0;
	byte_vec pending_;	/* bytes after the start-up frame */
	bool tx_dead_ = false;	/* a send failed: only drain() is left */
	bool batching_ = false;	/* collect FPDUs in batch_, one send */
	byte_vec batch_;
	ending end_ = ending::open;
	std::uint64_t terms_ = 0;
	rtr_type rtr_ = rtr_type::none;
	bool initiator_ = false;
	byte_vec last_send_;	/* the payload of the last Send's first segment */
};

void session::say(const std::string &s)
{
	lines.push_back(s);
	if (!o_.quiet) {
		std::printf("%s\n", s.c_str());
		std::fflush(stdout);
	}
}

/* --mpa-fault, on our encoded start-up frame. */
void session::fault_startup(byte_vec &buf) const
{
	const std::string_view other = initiator_ ? kMpaKeyRep : kMpaKeyReq;

	if (o_.mpa_swap_key)
		std::copy(other.begin(), other.end(), buf.begin());
	std::copy(o_.mpa_fault.begin(), o_.mpa_fault.end(),
		  buf.begin() + static_cast<std::ptrdiff_t>(o_.mpa_fault_at));
}

bool session::start(bool initiator)
{
	mpa_startup mine;
	mpa_startup theirs;
	byte_vec buf;
	std::size_t used = 0;

	initiator_ = initiator;
	mine.kind = initiator ? mpa_kind::request : mpa_kind::reply;
	mine.rev = o_.rev;
	mine.crc = o_.crc;
	mine.markers = o_.markers;
	mine.enhanced = o_.rev == 2;
	mine.ird = o_.ird;
	mine.ord = o_.ord;
	mine.pd_len = static_cast<std::uint16_t>(
		std::min(o_.pd.size(), kMpaMaxPd - kMpaV2Len));
	std::copy_n(o_.pd.begin(), mine.pd_len, mine.pd.begin());
	if (initiator && mine.enhanced && o_.p2p) {
		mine.p2p = true;
		mine.rtr_send = o_.rtr == rtr_type::send;
		mine.rtr_write = o_.rtr == rtr_type::write;
		mine.rtr_read = o_.rtr == rtr_type::read;
	}
	if (initiator) {
		encode_startup(mine, buf);
		fault_startup(buf);
		buf.insert(buf.end(), o_.after_frame.begin(),
			   o_.after_frame.end());
		if (!c_.send_all(buf)) {
			say("mpa-failed reason=send");
			return false;
		}
	}
	/* Read the peer's frame; keep what follows it (MPA-09). */
	byte_vec in;
	const auto deadline = clock_type::now() +
			      std::chrono::milliseconds(o_.timeout_ms);
	for (;;) {
		const mpa_error e = decode_startup(
			in, initiator ? mpa_kind::reply : mpa_kind::request,
			theirs, &used);

		if (e == mpa_error::ok)
			break;
		if (e != mpa_error::need_more) {
			say("mpa-failed reason=" +
			    std::string(mpa_error_name(e)));
			return false;
		}
		std::uint8_t tmp[1024];
		const int left = static_cast<int>(
			std::chrono::duration_cast<std::chrono::milliseconds>(
				deadline - clock_type::now()).count());
		const ssize_t n = c_.recv_some(tmp, sizeof(tmp),
					       std::max(left, 0));

		if (n <= 0) {
			say(n == -2 ? "mpa-failed reason=timeout" :
			    "mpa-failed reason=closed");
			return false;
		}
		in.insert(in.end(), tmp, tmp + n);
	}
	pending_.assign(in.begin() + static_cast<std::ptrdiff_t>(used),
			in.end());
	char line[256];

	std::snprintf(line, sizeof(line),
		      "mpa %s rev=%u m=%d c=%d r=%d s=%d ird=%u ord=%u a=%d b=%d c=%d d=%d pd_len=%u",
		      initiator ? "reply" : "request", theirs.rev,
		      theirs.markers, theirs.crc, theirs.reject,
		      theirs.enhanced, theirs.ird, theirs.ord, theirs.p2p,
		      theirs.rtr_send, theirs.rtr_write, theirs.rtr_read,
		      theirs.pd_len);
	say(line);
	if (!initiator) {
		/* Echo A and pick one RTR offered, ours first (E-06). */
		if (theirs.enhanced && theirs.p2p && o_.p2p) {
			mine.p2p = true;
			const bool s = theirs.rtr_send, w = theirs.rtr_write,
				   r = theirs.rtr_read;
			rtr_type pick = rtr_type::none;

			if (o_.rtr_force)	/* E-06 broken on purpose */
				pick = o_.rtr;
			else if (o_.rtr == rtr_type::send && s)
				pick = rtr_type::send;
			else if (o_.rtr == rtr_type::write && w)
				pick = rtr_type::write;
			else if (o_.rtr == rtr_type::read && r)
				pick = rtr_type::read;
			else if (w)
				pick = rtr_type::write;
			else if (r)
				pick = rtr_type::read;
			else if (s)
				pick = rtr_type::send;
			mine.rtr_send = pick == rtr_type::send;
			mine.rtr_write = pick == rtr_type::write;
			mine.rtr_read = pick == rtr_type::read;
			rtr_ = pick;
		}
		/*
		 * E-03: our ORD at most the initiator's IRD, and our IRD
		 * at least its ORD, unless --ord asks for a wrong one.
		 */
		if (!o_.ord_given && theirs.ird != kMpaV2Depth)
			mine.ord = std::min(mine.ord, theirs.ird);
		if (theirs.ord != kMpaV2Depth)
			mine.ird = std::max(mine.ird, theirs.ord);
		mine.enhanced = theirs.enhanced && o_.rev == 2;
		mine.rev = mine.enhanced ? 2 : theirs.rev;
		encode_startup(mine, buf);
		fault_startup(buf);
		buf.insert(buf.end(), o_.after_frame.begin(),
			   o_.after_frame.end());
		if (!c_.send_all(buf)) {
			say("mpa-failed reason=send");
			return false;
		}
	} else {
		if (theirs.reject) {
			say("mpa-rejected");
			return false;
		}
		if (theirs.p2p) {
			if (theirs.rtr_send)
				rtr_ = rtr_type::send;
			else if (theirs.rtr_write)
				rtr_ = rtr_type::write;
			else if (theirs.rtr_read)
				rtr_ = rtr_type::read;
		}
	}
	/* MPA-04/05: CRC if either asked; markers towards whoever asked. */
	const bool crc = mine.crc || theirs.crc;
	framing tx{crc, theirs.markers};
	framing rx{crc, mine.markers};

	tx_.emplace(tx);
	rx_.emplace(rx);
	const std::size_t emss = o_.emss ? o_.emss : c_.mss();

	max_ulpdu_ = mulpdu(emss, tx.markers);
	std::snprintf(line, sizeof(line),
		      "full-operation crc=%d markers_tx=%d markers_rx=%d mulpdu=%zu rtr=%d",
		      crc, tx.markers, rx.markers, max_ulpdu_,
		      static_cast<int>(rtr_));
	say(line);
	if (initiator_ && rtr_ != rtr_type::none) {
		/* The initiator's one RTR message (E-06). */
		message m;

		if (rtr_ == rtr_type::send) {
			m.op = static_cast<std::uint8_t>(opcode::send);
			m.msn = next_msn(kQnSend);
		} else if (rtr_ == rtr_type::write) {
			m.op = static_cast<std::uint8_t>(opcode::write);
		} else {
			m.op = static_cast<std::uint8_t>(opcode::read_req);
			m.qn = kQnReadReq;
			m.msn = next_msn(kQnReadReq);
		}
		for (const auto &u : segment_message(m, max_ulpdu_))
			if (!send_ulpdu(u))
				return false;
	}
	if (!pending_.empty()) {
		byte_vec p;

		p.swap(pending_);
		handle_rx(p);
	}
	return true;
}

bool session::send_ulpdu(const byte_vec &u, frame_fault f, std::uint32_t v)
{
	byte_vec w;

	if (!tx_->frame(u, batching_ ? batch_ : w, f, v)) {
		say("fault-not-applicable");
		return true;
	}
	if (batching_)
		return true;
	if (!c_.send_all(w)) {
		/* What the peer sent before it closed is still to read. */
		say(errno == ECONNRESET ? "send-reset" : "send-failed");
		tx_dead_ = true;
		return false;
	}
	return true;
}

void session::on_fpdu(byte_view u)
{
	segment s;
	const ulpdu_error e = decode_ulpdu(u, s);
	char line[512];
	const auto &h = s.hdr;

	if (e != ulpdu_error::ok) {
		std::snprintf(line, sizeof(line), "bad-ulpdu reason=%s len=%zu hex=%s",
			      std::string(ulpdu_error_name(e)).c_str(), u.size(),
			      to_hex(u, 32).c_str());
		say(line);
		return;
	}
	const std::string op(opcode_name(h.op));

	switch (static_cast<opcode>(h.op)) {
	case opcode::write:
	case opcode::read_resp:
		std::snprintf(line, sizeof(line),
			      "%s stag=0x%x to=0x%llx len=%zu last=%d",
			      op.c_str(), h.stag,
			      static_cast<unsigned long long>(h.to),
			      s.payload.size(), h.last);
		break;
	case opcode::read_req:
		std::snprintf(line, sizeof(line),
			      "read_req msn=%u sink_stag=0x%x sink_to=0x%llx size=%u src_stag=0x%x src_to=0x%llx",
			      h.msn, s.rreq.sink_stag,
			      static_cast<unsigned long long>(s.rreq.sink_to),
			      s.rreq.size, s.rreq.src_stag,
			      static_cast<unsigned long long>(s.rreq.src_to));
		break;
	case opcode::terminate: {
		const auto &t = s.term;
		const char *hdrs = t.d ? (t.r ? "ddp+rdma" : "ddp") : "none";
		int n = std::snprintf(line, sizeof(line),
				      "terminate layer=0x%x etype=0x%x ecode=0x%02x hdrs=%s m=%d",
				      t.layer, t.etype, t.ecode, hdrs, t.m);

		if (t.d && n > 0 && static_cast<std::size_t>(n) < sizeof(line))
			std::snprintf(line + n, sizeof(line) - n,
				      " seg_len=%u ddp_op=%s ddp_%s=0x%x",
				      t.seg_len,
				      std::string(opcode_name(t.ddp.op)).c_str(),
				      t.ddp.tagged ? "stag" : "qn",
				      t.ddp.tagged ? t.ddp.stag : t.ddp.qn);
		n = static_cast<int>(std::strlen(line));
		if (t.d && !t.ddp.tagged &&
		    static_cast<std::size_t>(n) < sizeof(line))
			n += std::snprintf(line + n, sizeof(line) - n,
					   " ddp_msn=%u ddp_mo=%u ddp_last=%d",
					   t.ddp.msn, t.ddp.mo, t.ddp.last);
		/* TERM-01: the terminated Read Request header, when R. */
		if (t.r && n > 0 && static_cast<std::size_t>(n) < sizeof(line))
			std::snprintf(line + n, sizeof(line) - n,
				      " rreq_sink_stag=0x%x rreq_sink_to=0x%llx rreq_size=%u rreq_src_stag=0x%x rreq_src_to=0x%llx",
				      t.rdma.sink_stag,
				      static_cast<unsigned long long>(t.rdma.sink_to),
				      t.rdma.size, t.rdma.src_stag,
				      static_cast<unsigned long long>(t.rdma.src_to));
		terms_++;
		break;
	}
	case opcode::immdt:
	case opcode::immdt_se:
		std::snprintf(line, sizeof(line), "%s msn=%u data=%s",
			      op.c_str(), h.msn, to_hex(s.payload, 8).c_str());
		break;
	case opcode::atomic_resp:
		/* RFC 7306 Figure 6: Request Identifier, original value. */
		if (s.payload.size() == 12) {
			std::snprintf(line, sizeof(line),
				      "atomic_resp qn=%u msn=%u last=%d req_id=%u value=0x%llx",
				      h.qn, h.msn, h.last,
				      get_be32(s.payload.data()),
				      static_cast<unsigned long long>(
					      get_be64(s.payload.data() + 4)));
			break;
		}
		[[fallthrough]];
	default:
		std::snprintf(line, sizeof(line),
			      "%s qn=%u msn=%u mo=%u len=%zu last=%d inval=0x%x",
			      op.c_str(), h.qn, h.msn, h.mo, s.payload.size(),
			      h.last, h.inval);
		break;
	}
	say(line);
	if (!h.tagged && h.mo == 0 &&
	    (h.op == static_cast<std::uint8_t>(opcode::send) ||
	     h.op == static_cast<std::uint8_t>(opcode::send_se) ||
	     h.op == static_cast<std::uint8_t>(opcode::send_inv) ||
	     h.op == static_cast<std::uint8_t>(opcode::send_se_inv)))
		last_send_.assign(s.payload.begin(), s.payload.end());
	if (h.op == static_cast<std::uint8_t>(opcode::atomic_req) &&
	    !o_.atomic_reply.empty() && s.payload.size() == 52) {
		/*
		 * RFC 7306 section 5.2.2: the Request Identifier back and an
		 * original value, on QN 3 in MSN order; or one of them wrong.
		 */
		const std::string &how = o_.atomic_reply;
		byte_vec body(how == "len" ? 16 : 12, 0);
		message m;

		put_be32(body.data(), get_be32(s.payload.data() + 4) +
				      (how == "id" ? 1 : 0));
		put_be64(body.data() + 4, 0x1122334455667788ULL);
		m.op = static_cast<std::uint8_t>(opcode::atomic_resp);
		m.qn = how == "qn" ? kQnSend : kQnAtomicResp;
		m.msn = next_msn(kQnAtomicResp) + (how == "msn" ? 5 : 0);
		m.payload = body;
		for (const auto &r : segment_message(m, max_ulpdu_))
			if (!send_ulpdu(r))
				return;
	}
	if (h.op == static_cast<std::uint8_t>(opcode::read_req) &&
	    o_.answer_reads) {
		/* Answer with zeros, in request order (RDMAP-04). */
		const byte_vec zeros(s.rreq.size > (1U << 20) ? 0 :
				     s.rreq.size, 0);
		message m;

		m.op = static_cast<std::uint8_t>(opcode::read_resp);
		m.stag = s.rreq.sink_stag;
		m.to = s.rreq.sink_to;
		m.payload = zeros;
		for (const auto &r : segment_message(m, max_ulpdu_))
			if (!send_ulpdu(r))
				return;
	}
}

bool session::handle_rx(byte_view in)
{
	while (!in.empty()) {
		const deframe_status st = rx_->feed(in);

		in = in.subspan(st.used);
		if (st.result == deframe_result::fpdu) {
			on_fpdu(rx_->ulpdu());
		} else if (st.result == deframe_result::error) {
			say("bad-fpdu reason=" +
			    std::string(deframe_error_name(rx_->error())) +
			    " pos=" + std::to_string(rx_->error_pos()));
			end_ = ending::bad_fpdu;
			return false;
		}
	}
	return true;
}

ending session::drain(int ms)
{
	const auto deadline = clock_type::now() + std::chrono::milliseconds(ms);
	std::vector<std::uint8_t> buf(65536);

	while (end_ == ending::open) {
		const int left = static_cast<int>(
			std::chrono::duration_cast<std::chrono::milliseconds>(
				deadline - clock_type::now()).count());

		if (left <= 0)
			return ending::timeout;
		const ssize_t n = c_.recv_some(buf.data(), buf.size(), left);

		if (n == -2)
			return ending::timeout;
		if (n == 0) {
			if (rx_->pending())
				say("partial-fpdu-at-close");
			say("close");
			end_ = ending::close;
		} else if (n < 0) {
			say(errno == ECONNRESET ? "reset" : "recv-error");
			end_ = ending::reset;
		} else {
			handle_rx(byte_view(buf.data(),
					    static_cast<std::size_t>(n)));
		}
	}
	return end_;
}

struct fault_spec {
	bool framing = false;
	frame_fault ff = frame_fault::none;
	bool header = false;
	field fld = field::qn;
	bool overlong = false;
	bool data = false;	/* payload after a header-only message */
	std::uint64_t value = 0;
	bool has_value = false;
};

fault_spec parse_fault(const std::string &s)
{
	fault_spec f;

	if (s.empty())
		return f;
	const std::size_t eq = s.find('=');
	const std::string name = s.substr(0, eq);

	if (eq != std::string::npos) {
		f.value = num(s.substr(eq + 1));
		f.has_value = true;
	}
	static const std::pair<const char *, frame_fault> ff[] = {
		{"crc", frame_fault::crc}, {"length", frame_fault::length},
		{"pad", frame_fault::pad}, {"marker", frame_fault::marker},
		{"truncate", frame_fault::truncate},
	};
	static const std::pair<const char *, field> hf[] = {
		{"ddp_version", field::ddp_version},
		{"rdmap_version", field::rdmap_version},
		{"opcode", field::opcode}, {"qn", field::qn},
		{"msn", field::msn}, {"mo", field::mo},
		{"stag", field::stag}, {"to", field::to},
		{"last", field::last}, {"tagged", field::tagged},
	};
	for (const auto &[n, v] : ff)
		if (name == n) {
			f.framing = true;
			f.ff = v;
			return f;
		}
	for (const auto &[n, v] : hf)
		if (name == n) {
			f.header = true;
			f.fld = v;
			if (!f.has_value) {
				/* Defaults that are wrong for sure. */
				static const std::uint64_t def[] = {
					0, 0, 0xc, 9, 0x7fffffff, 0x7fffffff,
					0xbad0bad0, 0xfffffffffffff000ULL, 0, 1,
				};
				f.value = def[static_cast<int>(v)];
			}
			return f;
		}
	if (name == "overlong") {
		f.overlong = true;
		return f;
	}
	if (name == "data") {
		/* A Read Request carries no data (RFC 5040 section 4.4). */
		if (!f.has_value || f.value > kMaxUlpdu)
			throw std::invalid_argument("data=N, N at most 65535");
		f.data = true;
		return f;
	}
	throw std::invalid_argument("unknown fault: " + name);
}

bool session::send_message(message m, const std::string &fault)
{
	const fault_spec f = parse_fault(fault);
	byte_vec extra;

	if (f.data) {
		extra.resize(f.value);
		for (std::size_t i = 0; i < extra.size(); i++)
			extra[i] = static_cast<std::uint8_t>(i * 7 + 1);
		m.payload = extra;
	}
	std::vector<byte_vec> segs = segment_message(
		m, f.overlong ? kMaxUlpdu : max_ulpdu_);

	if (f.header && !set_field(segs.front(), f.fld, f.value))
		say("fault-not-applicable");
	for (std::size_t i = 0; i < segs.size(); i++) {
		const bool last = i + 1 == segs.size();

		if (!send_ulpdu(segs[i], last && f.framing ? f.ff :
				frame_fault::none,
				static_cast<std::uint32_t>(f.value)))
			return false;
	}
	return true;
}

bool session::action(const std::string &a)
{
	const std::size_t bang = a.find('!');
	const std::string body = a.substr(0, bang);
	const std::string fault = bang == std::string::npos ? "" :
				  a.substr(bang + 1);
	const auto p = split(body, ':');
	const std::string_view verb = p[0];
	auto arg = [&](std::size_t i) {
		if (i >= p.size())
			throw std::invalid_argument("missing argument in " + a);
		return num(p[i]);
	};
	/* Argument i, or def where it is absent or empty. */
	auto opt = [&](std::size_t i, std::uint64_t def) {
		return i < p.size() && !p[i].empty() ? num(p[i]) : def;
	};
	message m;
	byte_vec data;
	auto pattern = [&](std::uint64_t n) {
		if (n > (64U << 20))
			throw std::invalid_argument("too long: " + a);
		data.resize(n);
		for (std::size_t i = 0; i < n; i++)
			data[i] = static_cast<std::uint8_t>(i * 7 + 1);
		m.payload = data;
	};

	if (verb == "send" || verb == "send_se" || verb == "send_inv" ||
	    verb == "send_se_inv") {
		m.op = static_cast<std::uint8_t>(
			verb == "send" ? opcode::send :
			verb == "send_se" ? opcode::send_se :
			verb == "send_inv" ? opcode::send_inv :
			opcode::send_se_inv);
		pattern(arg(1));
		if (m.op == static_cast<std::uint8_t>(opcode::send_inv) ||
		    m.op == static_cast<std::uint8_t>(opcode::send_se_inv))
			m.inval = static_cast<std::uint32_t>(arg(2));
		m.msn = next_msn(kQnSend);
		return send_message(m, fault);
	}
	if (verb == "write") {
		m.op = static_cast<std::uint8_t>(opcode::write);
		m.stag = static_cast<std::uint32_t>(arg(1));
		m.to = arg(2);
		pattern(arg(3));
		return send_message(m, fault);
	}
	if (verb == "read" || verb == "reads") {
		const std::size_t base = verb == "reads" ? 2 : 1;
		const std::uint64_t count = verb == "reads" ? arg(1) : 1;

		m.op = static_cast<std::uint8_t>(opcode::read_req);
		m.qn = kQnReadReq;
		m.rreq.src_stag = static_cast<std::uint32_t>(arg(base));
		m.rreq.src_to = arg(base + 1);
		m.rreq.size = static_cast<std::uint32_t>(arg(base + 2));
		m.rreq.sink_stag = p.size() > base + 3 ?
			static_cast<std::uint32_t>(arg(base + 3)) : 0x1000;
		m.rreq.sink_to = p.size() > base + 4 ? arg(base + 4) : 0;
		/* Back to back: all in one send() (RDMAP-04, IRD). */
		batching_ = true;
		for (std::uint64_t i = 0; i < count; i++) {
			m.msn = next_msn(kQnReadReq);
			send_message(m, fault);
		}
		batching_ = false;
		byte_vec b;

		b.swap(batch_);
		if (!c_.send_all(b)) {
			say("send-failed");
			tx_dead_ = true;
			return false;
		}
		return true;
	}
	if (verb == "immdt") {
		m.op = static_cast<std::uint8_t>(opcode::immdt);
		data = parse_hex(p.size() > 1 ? p[1] : "0102030405060708");
		m.payload = data;
		m.msn = next_msn(kQnSend);
		return send_message(m, fault);
	}
	if (verb == "atomic") {
		/*
		 * RFC 7306 section 5.2.1: the request's header is the DDP
		 * payload. By default FetchAdd (0) unmasked, CmpSwap (2)
		 * every bit. "rx" for the STag and TO takes them from the
		 * last Send received (a ULP advertising its buffer).
		 */
		const std::uint64_t aop = arg(1);
		const bool rx = p.size() > 3 && p[2] == "rx" && p[3] == "rx";

		if (rx && last_send_.size() < 12)
			throw std::invalid_argument("no Send with an STag and TO before " + a);
		m.op = static_cast<std::uint8_t>(opcode::atomic_req);
		m.qn = kQnReadReq;
		m.msn = next_msn(kQnReadReq);
		data.assign(52, 0);
		put_be32(&data[0], static_cast<std::uint32_t>(aop));
		put_be32(&data[4], static_cast<std::uint32_t>(opt(6, m.msn)));
		put_be32(&data[8], rx ? get_be32(&last_send_[0]) :
			 static_cast<std::uint32_t>(arg(2)));
		put_be64(&data[12], rx ? get_be64(&last_send_[4]) : arg(3));
		put_be64(&data[20], opt(4, 1));
		put_be64(&data[28], opt(7, aop == 0 ? 0 : ~0ULL));
		put_be64(&data[36], opt(5, 0));
		put_be64(&data[44], opt(8, ~0ULL));
		m.payload = data;
		return send_message(m, fault);
	}
	if (verb == "atomic_resp") {
		/* RFC 7306 section 5.2.2, on QN 3, asked for or not. */
		m.op = static_cast<std::uint8_t>(opcode::atomic_resp);
		m.qn = kQnAtomicResp;
		m.msn = next_msn(kQnAtomicResp);
		data.assign(12, 0);
		put_be32(&data[0], static_cast<std::uint32_t>(arg(1)));
		put_be64(&data[4], p.size() > 2 ? arg(2) : 0);
		m.payload = data;
		return send_message(m, fault);
	}
	if (verb == "terminate") {
		m.op = static_cast<std::uint8_t>(opcode::terminate);
		m.qn = kQnTerminate;
		m.term.layer = static_cast<std::uint8_t>(arg(1));
		m.term.etype = static_cast<std::uint8_t>(arg(2));
		m.term.ecode = static_cast<std::uint8_t>(arg(3));
		m.msn = next_msn(kQnTerminate);
		return send_message(m, fault);
	}
	if (verb == "raw") {
		data = parse_hex(p.size() > 1 ? p[1] : "");
		if (!c_.send_all(data)) {
			say("send-failed");
			tx_dead_ = true;
			return false;
		}
		return true;
	}
	if (verb == "wait") {
		drain(static_cast<int>(arg(1)));
		return !gone();
	}
	if (verb == "close") {
		c_.shutdown_wr();
		return true;
	}
	throw std::invalid_argument("unknown action: " + a);
}

/* ---- the random campaign ---- */

int fuzz(const options &o)
{
	std::mt19937_64 rng(o.seed);
	std::uint64_t sent = 0, conns = 0, terms = 0, failed = 0, mutated = 0;

	std::printf("fuzz start seed=%llu frames=%llu mutate=%u%%\n",
		    static_cast<unsigned long long>(o.seed),
		    static_cast<unsigned long long>(o.frames), o.mutate_pct);
	std::fflush(stdout);
	options q = o;
	q.quiet = true;
	while (sent < o.frames) {
		conn c;

		if (!c.connect_to(o.connect)) {
			if (++failed > 20) {
				std::printf("fuzz gave-up connects-failed=%llu\n",
					    static_cast<unsigned long long>(failed));
				return kExitNoConnection;
			}
			usleep(200000);
			continue;
		}
		session s(c, q);

		conns++;
		if (!s.start(true)) {
			failed++;
			continue;
		}
		while (sent < o.frames && !s.gone()) {
			/*
			 * Valid messages that need nothing from the listener
			 * but posted receives: Sends, and zero-length Writes
			 * and Reads, whose STags are not checked (DDP-05,
			 * RDMAP-02), and a few atomics; then maybe one
			 * structured fault.
			 */
			message m;
			byte_vec data;
			const unsigned int kind = rng() % 4;

			if (rng() % 16 == 0) {
				/*
				 * Now and then an RFC 7306 Atomic Request on a
				 * random STag: refused, and the connection
				 * ends, unless a mutation got there first.
				 */
				m.op = static_cast<std::uint8_t>(opcode::atomic_req);
				m.qn = kQnReadReq;
				m.msn = s.next_msn(kQnReadReq);
				data.resize(52);
				for (auto &b : data)
					b = static_cast<std::uint8_t>(rng());
				put_be32(data.data(), (rng() & 1) * 2);
				put_be32(data.data() + 4, m.msn);
				m.payload = data;
			} else if (kind == 0) {
				m.op = static_cast<std::uint8_t>(opcode::write);
				m.stag = static_cast<std::uint32_t>(rng());
				m.to = rng() % 4096;
			} else if (kind == 1) {
				m.op = static_cast<std::uint8_t>(opcode::read_req);
				m.qn = kQnReadReq;
				m.msn = s.next_msn(kQnReadReq);
				m.rreq.src_stag = static_cast<std::uint32_t>(rng());
				m.rreq.sink_stag = static_cast<std::uint32_t>(rng());
			} else {
				data.resize(rng() % 600);
				for (auto &b : data)
					b = static_cast<std::uint8_t>(rng());
				m.payload = data;
				m.msn = s.next_msn(kQnSend);
			}
			auto segs = segment_message(m, s.max_ulpdu());
			frame_fault ff = frame_fault::none;

			if (rng() % 100 < o.mutate_pct) {
				const unsigned int mut = rng() % 15;

				if (mut < 10)
					(void)set_field(segs.front(),
							static_cast<field>(mut),
							rng());
				else
					ff = static_cast<frame_fault>(mut - 9);
				mutated++;
			}
			for (std::size_t i = 0; i < segs.size() && !s.gone(); i++) {
				const bool last = i + 1 == segs.size();

				if (!s.send_ulpdu(segs[i], last ? ff : frame_fault::none,
						  static_cast<std::uint32_t>(rng() % 8)))
					break;
			}
			sent++;
			s.drain(ff == frame_fault::truncate ? 50 : 0);
		}
		s.drain(200);
		terms += s.terminates();
	}
	std::printf("fuzz done seed=%llu frames=%llu mutated=%llu connections=%llu terminates=%llu\n",
		    static_cast<unsigned long long>(o.seed),
		    static_cast<unsigned long long>(sent),
		    static_cast<unsigned long long>(mutated),
		    static_cast<unsigned long long>(conns),
		    static_cast<unsigned long long>(terms));
	return kExitOk;
}

options parse_args(int argc, char **argv)
{
	enum {
		o_connect = 256, o_listen, o_rev, o_crc, o_markers, o_p2p,
		o_rtr, o_ird, o_ord, o_pd, o_emss, o_linger, o_timeout,
		o_noanswer, o_forcertr, o_expect, o_fuzz, o_seed, o_frames, o_mutate,
		o_atomic_reply, o_dribble, o_after_frame, o_mpa_fault,
	};
	static const struct option longopts[] = {
		{"connect", required_argument, nullptr, o_connect},
		{"listen", required_argument, nullptr, o_listen},
		{"rev", required_argument, nullptr, o_rev},
		{"crc", required_argument, nullptr, o_crc},
		{"markers", required_argument, nullptr, o_markers},
		{"p2p", required_argument, nullptr, o_p2p},
		{"rtr", required_argument, nullptr, o_rtr},
		{"ird", required_argument, nullptr, o_ird},
		{"ord", required_argument, nullptr, o_ord},
		{"pd", required_argument, nullptr, o_pd},
		{"emss", required_argument, nullptr, o_emss},
		{"linger", required_argument, nullptr, o_linger},
		{"timeout", required_argument, nullptr, o_timeout},
		{"no-answer-reads", no_argument, nullptr, o_noanswer},
		{"atomic-reply", required_argument, nullptr, o_atomic_reply},
		{"force-rtr", no_argument, nullptr, o_forcertr},
		{"expect", required_argument, nullptr, o_expect},
		{"fuzz", no_argument, nullptr, o_fuzz},
		{"seed", required_argument, nullptr, o_seed},
		{"frames", required_argument, nullptr, o_frames},
		{"mutate", required_argument, nullptr, o_mutate},
		{"dribble", required_argument, nullptr, o_dribble},
		{"after-frame", required_argument, nullptr, o_after_frame},
		{"mpa-fault", required_argument, nullptr, o_mpa_fault},
		{nullptr, 0, nullptr, 0},
	};
	options o;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
		const std::string v = optarg ? optarg : "";

		switch (c) {
		case o_connect: o.connect = v; break;
		case o_listen: o.listen_port = static_cast<int>(num(v)); break;
		case o_rev: o.rev = static_cast<std::uint8_t>(num(v)); break;
		case o_crc: o.crc = num(v) != 0; break;
		case o_markers: o.markers = num(v) != 0; break;
		case o_p2p: o.p2p = num(v) != 0; break;
		case o_rtr:
			o.rtr = v == "none" ? rtr_type::none :
				v == "send" ? rtr_type::send :
				v == "write" ? rtr_type::write :
				v == "read" ? rtr_type::read :
				(usage("bad --rtr"), rtr_type::none);
			break;
		case o_ird: o.ird = static_cast<std::uint16_t>(num(v)); break;
		case o_ord:
			o.ord = static_cast<std::uint16_t>(num(v));
			o.ord_given = true;
			break;
		case o_pd: o.pd = v; break;
		case o_emss: o.emss = num(v); break;
		case o_linger: o.linger_ms = static_cast<int>(num(v)); break;
		case o_timeout: o.timeout_ms = static_cast<int>(num(v)); break;
		case o_noanswer: o.answer_reads = false; break;
		case o_atomic_reply:
			if (v != "ok" && v != "id" && v != "len" && v != "qn" &&
			    v != "msn")
				usage("bad --atomic-reply");
			o.atomic_reply = v;
			break;
		case o_forcertr: o.rtr_force = true; break;
		case o_dribble: o.dribble = num(v); break;
		case o_after_frame: o.after_frame = parse_hex(v); break;
		case o_mpa_fault:
			/* RFC 5044 section 7.1: key 0-15, rev 17, PD_Length 18. */
			if (v == "key") {
				o.mpa_fault_at = 0;
				o.mpa_fault = {'m'};
			} else if (v == "swap_key") {
				o.mpa_swap_key = true;
			} else if (v.starts_with("rev=")) {
				o.mpa_fault_at = 17;
				o.mpa_fault = {static_cast<std::uint8_t>(
					num(v.substr(4)))};
			} else if (v.starts_with("pd_len=")) {
				const std::uint64_t n = num(v.substr(7));

				o.mpa_fault_at = 18;
				o.mpa_fault = {static_cast<std::uint8_t>(n >> 8),
					       static_cast<std::uint8_t>(n)};
			} else {
				usage("bad --mpa-fault");
			}
			break;
		case o_expect: o.expect.push_back(v); break;
		case o_fuzz: o.fuzz = true; break;
		case o_seed: o.seed = num(v); break;
		case o_frames: o.frames = num(v); break;
		case o_mutate:
			o.mutate_pct = static_cast<unsigned int>(
				std::min<std::uint64_t>(num(v), 100));
			break;
		default: usage("unknown option");
		}
	}
	for (int i = optind; i < argc; i++)
		o.actions.emplace_back(argv[i]);
	if (o.connect.empty() == (o.listen_port < 0))
		usage("give exactly one of --connect and --listen");
	if (o.rev != 1 && o.rev != 2)
		usage("--rev is 1 or 2");
	if (o.fuzz && o.connect.empty())
		usage("--fuzz needs --connect");
	return o;
}

int run(const options &o)
{
	if (o.fuzz)
		return fuzz(o);
	conn c;
	const bool initiator = !o.connect.empty();

	if (initiator ? !c.connect_to(o.connect) :
	    !c.accept_on(o.listen_port, o.timeout_ms)) {
		std::printf("no-connection\n");
		return kExitNoConnection;
	}
	session s(c, o);

	if (!s.start(initiator))
		return kExitNoConnection;
	c.set_dribble(o.dribble);
	/* MPA-12: a responder sends nothing before the first FPDU. */
	if (!initiator) {
		const auto deadline = clock_type::now() +
				      std::chrono::milliseconds(o.timeout_ms);

		while (s.fpdus_in() == 0 && !s.gone() &&
		       clock_type::now() < deadline)
			s.drain(100);
	}
	for (const auto &a : o.actions) {
		if (s.gone())
			break;
		s.action(a);
	}
	const ending e = s.drain(o.linger_ms);

	if (e == ending::timeout)
		std::printf("timeout\n");
	if (e == ending::timeout)
		s.lines.emplace_back("timeout");
	for (const auto &want : o.expect) {
		const bool seen = std::any_of(
			s.lines.begin(), s.lines.end(),
			[&](const std::string &l) {
				return l.starts_with(want);
			});

		if (!seen) {
			std::printf("expected-not-seen: %s\n", want.c_str());
			return kExitUnexpected;
		}
	}
	return kExitOk;
}

} // namespace

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	try {
		return run(parse_args(argc, argv));
	} catch (const std::exception &e) {
		usage(e.what());
	}
}
