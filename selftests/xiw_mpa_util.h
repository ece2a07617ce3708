/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Wire helpers for xiw_wire.c and xiw_interop.c: the MPA module
 * parameters of xiw, and a packet capture on lo (every TCP stream between
 * two local addresses runs over lo) that rebuilds both directions of one
 * RDMA connection and parses its MPA Request/Reply frames (RFC 5044
 * section 7.1, RFC 6581 section 9) and the FPDUs that follow (section
 * 4.1), checking each FPDU's CRC32c and, when markers are in use, every
 * marker (sections 4.2, 4.3).
 */
#ifndef XIW_MPA_UTIL_H
#define XIW_MPA_UTIL_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "xiw_util.h"

#define XM_PARAMS	"/sys/module/xiw/parameters/"

/* Write one module parameter as text; 0 or -errno. */
static int __attribute__((unused))
xm_param_set_str(const char *name, const char *val)
{
	char p[128];
	FILE *f;
	int rc;

	snprintf(p, sizeof(p), XM_PARAMS "%s", name);
	f = fopen(p, "w");
	if (!f)
		return -errno;
	rc = fprintf(f, "%s\n", val) < 0 ? -EIO : 0;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

/* Write one module parameter; 0 or -errno. */
static int __attribute__((unused)) xm_param_set(const char *name, int val)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", val);
	return xm_param_set_str(name, v);
}

/* Set mpa_crc, mpa_rev and p2p_rtr; 0 or -errno of the first failure. */
static int __attribute__((unused)) xm_params(int crc, int rev, int rtr)
{
	int rc = xm_param_set("mpa_crc", crc);

	if (!rc)
		rc = xm_param_set("mpa_rev", rev);
	if (!rc)
		rc = xm_param_set("p2p_rtr", rtr);
	return rc;
}

/* The documented defaults (admin-guide.rst). */
static void __attribute__((unused)) xm_params_default(void)
{
	if (path_exists(XM_PARAMS))
		xm_params(1, 2, 2);
	if (path_exists(XM_PARAMS "mpa_markers"))
		xm_param_set("mpa_markers", 0);
	if (path_exists(XM_PARAMS "crc_impl"))
		xm_param_set_str("crc_impl", "auto");
}

/* RFC 5044 section 7.1: the frame before private data is 20 bytes. */
#define XM_KEY_LEN	16
#define XM_FRAME_HDR	20
#define XM_F_M		0x80
#define XM_F_C		0x40
#define XM_F_R		0x20
#define XM_F_S		0x10	/* RFC 6581 enhanced */
/* RFC 6581 section 9: |A|B| IRD | C|D| ORD | */
#define XM_V2_A		0x8000	/* in IRD: peer-to-peer */
#define XM_V2_B		0x4000	/* in IRD: zero-length Send RTR */
#define XM_V2_C		0x8000	/* in ORD: zero-length Write RTR */
#define XM_V2_D		0x4000	/* in ORD: zero-length Read RTR */
#define XM_V2_MASK	0x3fff

/* RDMAP opcodes (RFC 5040 section 4.4) */
#define XM_OP_WRITE	0
#define XM_OP_READ_REQ	1
#define XM_OP_READ_RESP	2
#define XM_OP_SEND	3
#define XM_OP_TERMINATE	7

#define XM_STREAM_MAX	(256 * 1024)

/* One direction of the TCP connection, in sequence order. */
struct xm_stream {
	uint16_t sport, dport;
	uint32_t next;		/* next expected sequence number */
	bool started;
	size_t len;
	uint8_t buf[XM_STREAM_MAX];
};

/* A capture on lo of the connection to the listener at port lport. */
struct xm_cap {
	int fd;
	uint16_t lport;		/* host order; 0: the first SYN's port */
	struct xm_stream ini, rsp;	/* initiator->responder and back */
	/* TCP options of the SYN (0) and SYN-ACK (1): MSS (0 if absent) */
	uint16_t syn_mss[2];
	bool syn_ts[2];		/* timestamps offered */
};

/* An MPA Request or Reply frame as seen on the wire. */
struct xm_frame {
	bool ok;
	uint8_t flags, rev;
	uint16_t pd_len;
	bool v2;		/* S set and at least 4 bytes of private data */
	uint16_t ird, ord;	/* with their A/B and C/D bits */
	size_t end;		/* offset of the first byte after the frame */
};

/* One FPDU's summary (RFC 5044 section 4.1, RFC 5041/5040 headers). */
struct xm_fpdu {
	uint16_t ulpdu_len;
	uint8_t ddp, rdmap, opcode;
	bool tagged, last;
	uint32_t crc_wire, crc_calc;
	int markers;		/* markers it holds, a leading one included */
};

#define XM_MRK_INTERVAL	512
#define XM_MRK_LEN	4

/*
 * Where the markers of a stream fell (RFC 5044 section 4.3): just before
 * an FPDU (FPDUPTR 0), in its header (length field and DDP/RDMAP
 * header), in the payload, in the pad, or between the pad and the CRC.
 * Markers with a wrong FPDUPTR or non-zero reserved bits are counted as
 * bad; err says what the first was.
 */
struct xm_mrk_stats {
	int at_start, in_hdr, in_payload, in_pad, before_crc, bad;
	char err[160];
};

/* CRC32c register update, no pre- or post-inversion. */
static uint32_t xm_crc32c_upd(uint32_t c, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & -(c & 1));
	}
	return c;
}

static uint32_t __attribute__((unused))
xm_crc32c(const uint8_t *p, size_t n)
{
	return ~xm_crc32c_upd(~0u, p, n);
}

/*
 * Start capturing TCP on lo, before the connection is made: -errno or 0.
 * c may be large (two stream buffers): allocate it, do not put it on the
 * stack.
 */
static int __attribute__((unused)) xm_cap_open(struct xm_cap *c, uint16_t lport)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_IP) };
	int sz = 8 << 20;

	memset(c, 0, sizeof(*c));
	c->lport = lport;
	c->fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK, htons(ETH_P_IP));
	if (c->fd < 0)
		return -errno;
	sll.sll_ifindex = (int)if_nametoindex("lo");
	setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	if (!sll.sll_ifindex ||
	    bind(c->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		int e = -errno;

		close(c->fd);
		c->fd = -1;
		return e ? e : -ENODEV;
	}
	return 0;
}

static void __attribute__((unused)) xm_cap_close(struct xm_cap *c)
{
	if (c && c->fd > 0)
		close(c->fd);
	if (c)
		c->fd = -1;
}

/* Append a segment's payload if it is the next in sequence. */
static void xm_stream_add(struct xm_stream *s, uint32_t seq, bool syn,
			  const uint8_t *data, size_t n)
{
	size_t skip;

	if (syn) {
		s->next = seq + 1;
		s->started = true;
		return;
	}
	if (!s->started || !n)
		return;
	/* Duplicates (lo shows each packet leaving and arriving). */
	if ((int32_t)(seq + n - s->next) <= 0)
		return;
	if ((int32_t)(seq - s->next) > 0)
		return;		/* a gap: a lost capture; stop there */
	skip = s->next - seq;
	n -= skip;
	if (n > XM_STREAM_MAX - s->len)
		n = XM_STREAM_MAX - s->len;
	memcpy(s->buf + s->len, data + skip, n);
	s->len += n;
	s->next += (uint32_t)n;
}

static uint16_t xm_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * The MSS (kind 2) and timestamps (kind 8) options of a SYN or SYN-ACK
 * (RFC 9293 section 3.2, RFC 7323 section 3), the inputs to the EMSS.
 */
static void xm_syn_opts(struct xm_cap *c, int d, const uint8_t *o, size_t n)
{
	size_t i = 0;

	while (i < n && o[i] != 0) {
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 2 > n || o[i + 1] < 2 || i + o[i + 1] > n)
			return;
		if (o[i] == 2 && o[i + 1] == 4)
			c->syn_mss[d] = xm_be16(o + i + 2);
		if (o[i] == 8 && o[i + 1] == 10)
			c->syn_ts[d] = true;
		i += o[i + 1];
	}
}

/*
 * The EMSS both ends work with, from what the handshake captured: the
 * smaller MSS offered, less the 12 bytes every segment spends on the
 * timestamps option when both ends offered it (RFC 7323 section 3.2;
 * Linux counts that option out of its MSS, as RFC 5044 section 4.5's
 * EMSS must, being what a segment can carry). lo's MTU is the path MTU.
 * 0 when the handshake was not captured.
 */
static unsigned int __attribute__((unused)) xm_cap_emss(const struct xm_cap *c)
{
	unsigned int mss = c->syn_mss[0] < c->syn_mss[1] ? c->syn_mss[0]
							: c->syn_mss[1];

	if (!mss)
		return 0;
	return mss - (c->syn_ts[0] && c->syn_ts[1] ? 12 : 0);
}

/* Read what the capture holds into the two streams. */
static void __attribute__((unused)) xm_cap_drain(struct xm_cap *c)
{
	static uint8_t pkt[70000];
	const struct iphdr *ip;
	const struct tcphdr *th;
	uint16_t sp, dp;
	size_t ihl, thl, tot;
	ssize_t n;

	while ((n = recv(c->fd, pkt, sizeof(pkt), 0)) > 0) {
		ip = (const struct iphdr *)pkt;
		if ((size_t)n < sizeof(*ip) || ip->version != 4 ||
		    ip->protocol != IPPROTO_TCP)
			continue;
		ihl = ip->ihl * 4u;
		tot = ntohs(ip->tot_len);
		if (tot > (size_t)n || ihl + sizeof(*th) > tot)
			continue;
		th = (const struct tcphdr *)(pkt + ihl);
		thl = th->doff * 4u;
		if (thl < sizeof(*th) || ihl + thl > tot)
			continue;
		sp = ntohs(th->source);
		dp = ntohs(th->dest);
		if (!c->lport && th->syn && !th->ack)
			c->lport = dp;
		if (dp == c->lport && (!c->ini.sport || c->ini.sport == sp)) {
			if (th->syn && !th->ack) {
				c->ini.sport = sp;
				c->ini.dport = dp;
				xm_syn_opts(c, 0, pkt + ihl + sizeof(*th),
					    thl - sizeof(*th));
			}
			if (c->ini.sport == sp)
				xm_stream_add(&c->ini, ntohl(th->seq), th->syn,
					      pkt + ihl + thl, tot - ihl - thl);
		} else if (sp == c->lport && c->ini.sport == dp) {
			if (th->syn) {
				c->rsp.sport = sp;
				c->rsp.dport = dp;
				xm_syn_opts(c, 1, pkt + ihl + sizeof(*th),
					    thl - sizeof(*th));
			}
			xm_stream_add(&c->rsp, ntohl(th->seq), th->syn,
				      pkt + ihl + thl, tot - ihl - thl);
		}
	}
}

/* Parse the start-up frame at the beginning of s, with the given key. */
static struct xm_frame __attribute__((unused))
xm_frame(const struct xm_stream *s, const char *key)
{
	struct xm_frame f = { 0 };
	const uint8_t *b = s->buf;

	if (s->len < XM_FRAME_HDR || memcmp(b, key, XM_KEY_LEN))
		return f;
	f.flags = b[16];
	f.rev = b[17];
	f.pd_len = xm_be16(b + 18);
	if (s->len < XM_FRAME_HDR + (size_t)f.pd_len)
		return f;
	f.end = XM_FRAME_HDR + f.pd_len;
	if ((f.flags & XM_F_S) && f.pd_len >= 4) {
		f.v2 = true;
		f.ird = xm_be16(b + 20);
		f.ord = xm_be16(b + 22);
	}
	f.ok = true;
	return f;
}

/* A marker at stream offset r of the FPDU whose length field is at fpdu. */
static void xm_marker(const struct xm_stream *s, size_t r, size_t fpdu,
		      bool lead, struct xm_mrk_stats *ms)
{
	const uint8_t *b = s->buf + r;
	unsigned int want = lead ? 0 : (unsigned int)(r - fpdu);

	if (b[0] || b[1] || xm_be16(b + 2) != want) {
		if (!ms->bad++)
			snprintf(ms->err, sizeof(ms->err),
				 "marker at stream byte %zu: %02x%02x %04x, want 0000 %04x",
				 r, b[0], b[1], xm_be16(b + 2), want);
	}
}

/*
 * The FPDU at *off in s: false when it is not complete in the capture.
 * Moves *off past it. With mrk, markers sit at every 512th byte counted
 * from start (the first byte after the start-up frame, MPA-13); they are
 * checked, counted in *ms by what they fall in, left out of the FPDU's
 * fields and lengths, and kept in its CRC (section 4.4).
 */
static bool __attribute__((unused))
xm_fpdu(const struct xm_stream *s, size_t start, bool mrk, size_t *off,
	struct xm_fpdu *f, struct xm_mrk_stats *ms)
{
	struct xm_mrk_stats st = ms ? *ms : (struct xm_mrk_stats){ 0 };
	size_t r = *off, fpdu, k, body, total, hdr;
	uint8_t crc[4];
	uint32_t c = ~0u;
	const uint8_t *b;

	memset(f, 0, sizeof(*f));
	if (mrk && (r - start) % XM_MRK_INTERVAL == 0) {
		if (r + XM_MRK_LEN > s->len)
			return false;
		xm_marker(s, r, r + XM_MRK_LEN, true, &st);
		st.at_start++;
		f->markers++;
		c = xm_crc32c_upd(c, s->buf + r, XM_MRK_LEN);
		r += XM_MRK_LEN;
	}
	fpdu = r;
	/* Four-byte alignment: no marker inside the first word. */
	if (r + 4 > s->len)
		return false;
	b = s->buf + r;
	f->ulpdu_len = xm_be16(b);
	f->ddp = b[2];
	f->rdmap = b[3];
	f->opcode = b[3] & 0x0f;
	f->tagged = b[2] & 0x80;
	f->last = b[2] & 0x40;
	if (f->ulpdu_len < 2)
		return false;
	hdr = 2 + (f->tagged ? 14 : f->opcode == XM_OP_READ_REQ ? 46 : 18);
	body = (2 + (size_t)f->ulpdu_len + 3) & ~(size_t)3;
	total = body + 4;
	for (k = 0; k < total;) {
		if (mrk && (r - start) % XM_MRK_INTERVAL == 0) {
			if (r + XM_MRK_LEN > s->len)
				return false;
			xm_marker(s, r, fpdu, false, &st);
			if (k < hdr)
				st.in_hdr++;
			else if (k < 2 + (size_t)f->ulpdu_len)
				st.in_payload++;
			else if (k < body)
				st.in_pad++;
			else
				st.before_crc++;
			f->markers++;
			c = xm_crc32c_upd(c, s->buf + r, XM_MRK_LEN);
			r += XM_MRK_LEN;
			continue;
		}
		if (r >= s->len)
			return false;
		if (k < body)
			c = xm_crc32c_upd(c, s->buf + r, 1);
		else
			crc[k - body] = s->buf[r];
		r++;
		k++;
	}
	f->crc_wire = (uint32_t)crc[0] | (uint32_t)crc[1] << 8 |
		      (uint32_t)crc[2] << 16 | (uint32_t)crc[3] << 24;
	f->crc_calc = ~c;
	*off = r;
	if (ms)
		*ms = st;
	return true;
}

static const char __attribute__((unused)) *xm_rtr_str(uint16_t ird, uint16_t ord)
{
	static char s[32];

	snprintf(s, sizeof(s), "%s%s%s%s", ird & XM_V2_A ? "A" : "-",
		 ird & XM_V2_B ? "B(send)" : "", ord & XM_V2_C ? "C(write)" : "",
		 ord & XM_V2_D ? "D(read)" : "");
	return s;
}

#endif /* XIW_MPA_UTIL_H */
