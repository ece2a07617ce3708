// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receive: FPDUs from the QP's TCP socket, checked and placed.
 *
 * The stream is parsed in three phases per FPDU: the header (its length
 * known from the first four bytes: MPA length, DDP and RDMAP control),
 * the payload, then padding and CRC. FPDU boundaries come from the MPA
 * length alone, however TCP cut the stream (MPA-24). Every header is
 * copied into rx->hdr and checked before anything is placed; payload is
 * copied straight from the socket's buffers into the target pages (one
 * copy) and the CRC is computed over the socket's bytes, not the target,
 * which its owner may change at once. With markers (RFC 5044
 * section 4.3) every read stops at the next marker position; the marker
 * is read aside, checked against the FPDU start the lengths gave, and
 * joins the CRC in stream order, so placement stays direct. A message
 * completes only
 * after its last FPDU's CRC matched. Any error: one Terminate (sent by
 * xiw_tx.c), nothing placed or delivered afterwards (DDP-09), the QP to
 * ERR.
 *
 * This file holds the deframing: the rx state's life, the actor, the
 * three phases, markers and CRC. The checks of each header and the
 * placement and delivery it sets up are in xiw_rx_place.c, the
 * Terminate raised or received in xiw_rx_term.c; xiw_rx.h is what
 * these files share.
 *
 * Where it runs: the parser is a tcp_read_sock() actor fed the socket's
 * buffers (skb, offset, length) in stream order. It runs from the
 * socket's data_ready callback, in softirq with the socket spinlock held
 * (or in the thread that owns the socket, from release_sock()'s backlog
 * processing), and in process context from rx->work under lock_sock():
 * for data that arrived before the callbacks were ours, when a run's
 * budget ran out, and for the drain at a graceful close. Either way the
 * socket's lock is held, and lock_sock() owners exclude the softirq path
 * (TCP puts packets on the backlog then), so runs never overlap and rx
 * needs no lock of its own. Nothing here sleeps: a fatal error that needs
 * the QP's state mutex is handed to a work item (xiw_qp_error_defer()).
 */
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "xiw_fault.h"
#include "xiw_rx.h"

int xiw_rx_create(struct xiw_qp *qp)
{
	struct xiw_rx *rx;

	rx = xiw_fault(XIW_FAULT_RX) ? NULL : kzalloc(sizeof(*rx), GFP_KERNEL);
	if (!rx)
		return -ENOMEM;
	rx->qp = qp;
	INIT_WORK(&rx->work, NULL);
	qp->rx = rx;
	return 0;
}

void xiw_rx_put_mr(struct xiw_rx *rx)
{
	if (rx->mr)
		xiw_mr_put(rx->mr);
	rx->mr = NULL;
}

/* Forget the payload mapping (see struct xiw_rx). */
static inline void xiw_rx_unmap(struct xiw_rx *rx)
{
	if (rx->bv_mr)
		xiw_mr_put(rx->bv_mr);
	rx->bv_mr = NULL;
	rx->bv_n = 0;
	rx->bv_len = 0;
	rx->bv_done = 0;
	rx->bv_i = 0;
	rx->bv_off = 0;
}

void xiw_rx_destroy(struct xiw_qp *qp)
{
	struct xiw_rx *rx = qp->rx;

	if (!rx)
		return;
	xiw_rx_unmap(rx);
	xiw_rx_put_mr(rx);
	xiw_rx_put_rq_mrs(rx);
	kfree(rx);
	qp->rx = NULL;
}

/* Have rx->work run a pass in process context (see xiw_rx_work()). */
void xiw_rx_kick(struct xiw_qp *qp)
{
	struct xiw_rx *rx = qp->rx;

	if (rx && READ_ONCE(rx->started))
		queue_work(xiw_data_wq, &rx->work);
}

/* Header length for the opcode, or 0 for a reserved one. */
static u32 xiw_rx_hdr_len(u8 op, bool tagged)
{
	switch (op) {
	case RDMAP_WRITE:
	case RDMAP_READ_RESP:
		return tagged ? sizeof(struct iwarp_tagged) : 0;
	case RDMAP_READ_REQ:
		return tagged ? 0 : sizeof(struct iwarp_read_req);
	case RDMAP_SEND:
	case RDMAP_SEND_INV:
	case RDMAP_SEND_SE:
	case RDMAP_SEND_SE_INV:
	case RDMAP_TERMINATE:
	case RDMAP_IMMDT:
	case RDMAP_IMMDT_SE:
	case RDMAP_ATOMIC_REQ:
	case RDMAP_ATOMIC_RESP:
		return tagged ? 0 : sizeof(struct iwarp_untagged);
	default:
		return 0;
	}
}

/* How much of want may be read before the next marker. */
static u32 xiw_rx_limit(struct xiw_rx *rx, u32 want)
{
	if (!rx->qp->wire.mpa.mrk_rx)
		return want;
	return min(want, xiw_mpa_to_marker(rx->rpos));
}

/* The actor's slice is used up: the next bytes come in a later call. */
static void xiw_rx_consumed(struct xiw_rx *rx, u32 n)
{
	rx->skb_off += n;
	rx->skb_left -= n;
	rx->bytes -= min(rx->bytes, n);
}

/*
 * CRC32c continued over len bytes of the skb from off, piece after
 * piece in order (skb_seq_read() maps each page of a frag in turn). The
 * skb checksum walker (__skb_checksum()) would CRC each page from 0 and
 * append it with a combine, a shift in software that cost more than
 * the CRC of the page's bytes itself (performance.rst, twenty-fifth
 * run). The bytes were just copied out of the same range, so they are
 * all there.
 */
static u32 xiw_rx_crc_skb(struct sk_buff *skb, u32 off, u32 len, u32 crc)
{
	struct skb_seq_state st;
	const u8 *p;
	u32 done = 0, n;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		n = skb_seq_read(done, &p, &st);
		if (!n)
			break;
		n = min(n, len - done);
		crc = xiw_crc32c(crc, p, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}

/*
 * Copy len bytes of the slice, from off, into the mapped target where
 * placement stands (rx->bv_i, rx->bv_off) and move it on. A piece never
 * crosses a page (xiw_mr_bvec()), so each is one short mapping. 0, or
 * skb_copy_bits()'s error when the skb is shorter than TCP said.
 */
static int xiw_rx_copy(struct xiw_rx *rx, u32 off, u32 len)
{
	while (len) {
		const struct bio_vec *b = &rx->bv[rx->bv_i];
		u32 n = min(len, b->bv_len - rx->bv_off);
		u8 *p = kmap_local_page(b->bv_page);
		int rv;

		rv = skb_copy_bits(rx->skb, off,
				   p + b->bv_offset + rx->bv_off, n);
		kunmap_local(p);
		if (rv)
			return rv;
		flush_dcache_page(b->bv_page);
		off += n;
		len -= n;
		rx->bv_off += n;
		if (rx->bv_off == b->bv_len) {
			rx->bv_i++;
			rx->bv_off = 0;
		}
	}
	return 0;
}

/*
 * Place payload into the target, straight from the socket buffer (the
 * one copy). Returns bytes placed, -EAGAIN when the slice is used up,
 * -EIO after raising an error.
 */
static int xiw_rx_data(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	bool last;
	u32 len;
	int n, i, rv;

	if (!rx->skb_left)
		return -EAGAIN;
	if (rx->bv_done == rx->bv_len) {
		u32 want = xiw_rx_limit(rx, rx->data_len - rx->data_got);
		size_t cap = 0;

		xiw_rx_unmap(rx);
		n = xiw_rx_target(rx, want, &rx->bv_mr);
		if (n < 0) {
			/* Our own sink or receive buffer vanished. */
			xiw_rx_error(rx, TERM_RDMAP_LOCAL, 0x00, true);
			return -EIO;
		}
		for (i = 0; i < n; i++)
			cap += rx->bv[i].bv_len;
		rx->bv_n = n;
		rx->bv_len = min_t(size_t, cap, want);
	}
	len = min(rx->bv_len - rx->bv_done, rx->skb_left);
	/*
	 * The last byte of a tagged message is placed last, on its own: a
	 * consumer polling it (the usual way to see an RDMA Write arrive;
	 * qperf's rc_rdma_write_poll_lat) must find the rest of the message
	 * in place once it sees it, and must not have that byte written
	 * again after it reacted. One copy may store its bytes in any order,
	 * some of them twice.
	 */
	last = rx->last && rx->data_got + len == rx->data_len &&
	       (rx->tgt == XIW_TGT_WRITE || rx->tgt == XIW_TGT_READ_RESP);
	rv = xiw_rx_copy(rx, rx->skb_off, len - last);
	if (!rv && last) {
		/* The rest is stored before the last byte; no load pairs. */
		smp_wmb();
		rv = xiw_rx_copy(rx, rx->skb_off + len - 1, 1);
	}
	if (rv) {
		/* The slice TCP handed us is shorter than it said. */
		rx->dead = true;
		return -EIO;
	}
	/*
	 * The CRC is over the bytes as they came, in the socket buffer,
	 * not as they now are in the target: that is the consumer's memory,
	 * which it may already be changing (a poll on the last byte of a
	 * Write, answered in place, as qperf's rc_rdma_write_poll_lat does).
	 */
	if (qp->wire.mpa.crc)
		rx->crc = xiw_rx_crc_skb(rx->skb, rx->skb_off, len, rx->crc);
	rx->bv_done += len;
	/* The last byte placed: the MR held for the mapping may go. */
	if (rx->bv_done == rx->bv_len)
		xiw_rx_unmap(rx);
	xiw_rx_consumed(rx, len);
	return len;
}

/*
 * Copy up to len bytes of the slice into buf without using them up:
 * xiw_rx_take() then uses the first of them. Returns bytes, -EAGAIN
 * when the slice is used up, or -EIO.
 */
static int xiw_rx_peek(struct xiw_rx *rx, void *buf, u32 len)
{
	len = min(len, rx->skb_left);
	if (!len)
		return -EAGAIN;
	if (skb_copy_bits(rx->skb, rx->skb_off, buf, len)) {
		rx->dead = true;
		return -EIO;
	}
	return len;
}

/*
 * Copy up to len bytes of the slice into buf and use them up (trailer,
 * markers: small, copied aside to be checked); with crc, CRC them.
 * Returns as xiw_rx_peek().
 */
static int xiw_rx_recv(struct xiw_rx *rx, void *buf, u32 len, bool crc)
{
	int rv = xiw_rx_peek(rx, buf, len);

	if (rv <= 0)
		return rv;
	if (crc && rx->qp->wire.mpa.crc)
		rx->crc = xiw_crc32c(rx->crc, buf, rv);
	xiw_rx_consumed(rx, rv);
	return rv;
}

/* Use up len bytes xiw_rx_peek() copied to buf: CRC them, move on. */
static inline void xiw_rx_take(struct xiw_rx *rx, const void *buf, u32 len)
{
	if (rx->qp->wire.mpa.crc)
		rx->crc = xiw_crc32c(rx->crc, buf, len);
	rx->rpos += len;
	xiw_rx_consumed(rx, len);
}

/* FPDU bytes: as xiw_rx_recv(), stopping at the next marker. */
static int xiw_rx_bytes(struct xiw_rx *rx, void *buf, u32 len, bool crc)
{
	return xiw_rx_recv(rx, buf, xiw_rx_limit(rx, len), crc);
}

/*
 * A marker is due (or partly read): read it aside and check it. Its
 * FPDUPTR must lead back to the length field of the FPDU being read, or
 * be 0 between FPDUs (RFC 5044 section 4.3; its low two bits count as
 * zero, its reserved half is ignored as section 4.2 says); any other
 * value is an FPDU the lengths and markers disagree on: Terminate
 * 0x2/0x0/0x03 (section 8, TERM-04). It is part of the FPDU's CRC.
 * Returns as xiw_rx_step().
 */
static bool xiw_rx_marker(struct xiw_rx *rx)
{
	bool between = rx->phase == XIW_RX_HDR && !rx->hdr_got;
	struct mpa_marker mk;
	u32 want, at;
	int rv;

	rv = xiw_rx_recv(rx, rx->mrk + rx->mrk_got,
			 MPA_MARKER_LEN - rx->mrk_got, true);
	if (rv <= 0) {
		if (rv != -EAGAIN)
			rx->dead = true;	/* xiw_rx_recv() failed */
		return false;
	}
	rx->rpos += rv;
	rx->mrk_got += rv;
	if (rx->mrk_got < MPA_MARKER_LEN)
		return true;
	rx->mrk_got = 0;
	memcpy(&mk, rx->mrk, sizeof(mk));
	at = rx->rpos - MPA_MARKER_LEN;
	want = between ? 0 : at - rx->fpdu;
	if ((be16_to_cpu(mk.fpduptr) & ~3U) != want) {
		ibdev_dbg(rx->qp->ibqp.device,
			  "qp %u: marker at %u points %u back, FPDU at %u\n",
			  rx->qp->ibqp.qp_num, at, be16_to_cpu(mk.fpduptr),
			  rx->fpdu);
		xiw_count_rx_error(rx->qp, true);
		xiw_rx_error(rx, TERM_LLP_MPA, 0x03, false);
		return false;
	}
	return true;
}

/*
 * An error in a segment's control bytes (DDP or RDMAP version, opcode).
 * RFC 5040 Figure 10 wants the DDP segment length and header in a DDP
 * Terminate, and in an RDMAP one where possible: read the rest of the
 * DDP header first (its length follows from the T bit whatever the
 * version) unless the ULPDU is too short to hold one. Returns as
 * xiw_rx_step().
 */
static bool xiw_rx_hdr_error(struct xiw_rx *rx, bool tagged, u8 le, u8 ec)
{
	u32 len = tagged ? sizeof(struct iwarp_tagged) :
			   sizeof(struct iwarp_untagged);

	if (rx->ulpdu_len < len - MPA_HDR_LEN) {
		xiw_rx_error(rx, le, ec, false);
		return false;
	}
	rx->hdr_len = len;
	rx->hdr_err = true;
	rx->hdr_err_le = le;
	rx->hdr_err_ec = ec;
	return true;
}

/* Parse and place what the socket has. Returns false to stop. */
static bool xiw_rx_step(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	int rv;

	if (qp->wire.mpa.mrk_rx &&
	    (rx->mrk_got || !xiw_mpa_to_marker(rx->rpos)))
		return xiw_rx_marker(rx);
	switch (rx->phase) {
	case XIW_RX_HDR: {
		/*
		 * Until the control bytes say how long the header is, copy
		 * as much as the longest one and use this FPDU's header of
		 * it, so most headers take one copy; what was copied past
		 * the header stays in the socket buffer, to be read again.
		 */
		u32 want = rx->hdr_got < sizeof(struct iwarp_ctrl) ?
			   IWARP_MAX_HDR : rx->hdr_len;
		u32 have, n;

		if (!rx->hdr_got)
			rx->fpdu = rx->rpos;
		rv = xiw_rx_peek(rx, rx->hdr + rx->hdr_got,
				 xiw_rx_limit(rx, want - rx->hdr_got));
		if (rv <= 0)
			goto sock_end;
		have = rx->hdr_got + rv;
		if (rx->hdr_got < sizeof(struct iwarp_ctrl)) {
			struct iwarp_ctrl *c = (struct iwarp_ctrl *)rx->hdr;
			bool tagged;

			n = min_t(u32, have, sizeof(*c)) - rx->hdr_got;
			xiw_rx_take(rx, rx->hdr + rx->hdr_got, n);
			rx->hdr_got += n;
			if (rx->hdr_got < sizeof(*c))
				return true;
			tagged = c->ddp & DDP_FLAG_TAGGED;
			rx->ulpdu_len = be16_to_cpu(c->mpa_len);
			rx->op = c->rdmap & RDMAP_OPCODE_MASK;
			rx->last = c->ddp & DDP_FLAG_LAST;
			rx->hdr_err = false;
			if ((c->ddp & DDP_VERSION_MASK) != DDP_VERSION)
				return xiw_rx_hdr_error(rx, tagged, tagged ?
							TERM_DDP_TAGGED :
							TERM_DDP_UNTAGGED,
							tagged ? 0x04 : 0x06);
			if ((c->rdmap & RDMAP_VERSION_MASK) != RDMAP_VERSION)
				return xiw_rx_hdr_error(rx, tagged,
							TERM_RDMAP_OP, 0x05);
			rx->hdr_len = xiw_rx_hdr_len(rx->op, tagged);
			if (!rx->hdr_len)
				return xiw_rx_hdr_error(rx, tagged,
							TERM_RDMAP_OP, 0x06);
			if (rx->ulpdu_len < rx->hdr_len - MPA_HDR_LEN) {
				/* The length cannot even hold the header. */
				xiw_rx_error(rx, TERM_LLP_MPA, 0x03, false);
				return false;
			}
		}
		/* The rest of the header, as far as this copy holds it. */
		n = min(have, rx->hdr_len) - rx->hdr_got;
		xiw_rx_take(rx, rx->hdr + rx->hdr_got, n);
		rx->hdr_got += n;
		if (rx->hdr_got < rx->hdr_len)
			return true;
		if (rx->hdr_err) {
			xiw_rx_error(rx, rx->hdr_err_le, rx->hdr_err_ec, true);
			return false;
		}
		xiw_rx_header(rx);
		if (rx->dead)
			return false;
		rx->phase = rx->data_len ? XIW_RX_DATA : XIW_RX_TRAILER;
		return true;
	}
	case XIW_RX_DATA:
		rv = xiw_rx_data(rx);
		if (rv == -EIO)
			return false;
		if (rv <= 0)
			goto sock_end;
		rx->rpos += rv;
		rx->data_got += rv;
		if (rx->data_got == rx->data_len)
			rx->phase = XIW_RX_TRAILER;
		return true;
	case XIW_RX_TRAILER: {
		u32 pad = rx->trl_len - MPA_CRC_LEN;

		if (!qp->wire.mpa.crc) {
			/* Without CRC nothing looks at pad or CRC field. */
			rv = min(xiw_rx_limit(rx, rx->trl_len - rx->trl_got),
				 rx->skb_left);
			if (!rv) {
				rv = -EAGAIN;
				goto sock_end;
			}
			xiw_rx_consumed(rx, rv);
		} else {
			rv = xiw_rx_bytes(rx, rx->trl + rx->trl_got,
					  rx->trl_len - rx->trl_got, false);
			if (rv <= 0)
				goto sock_end;
			/* The pad is in the CRC (a marker after it apart). */
			if (rx->trl_got < pad)
				rx->crc = xiw_crc32c(rx->crc,
						     rx->trl + rx->trl_got,
						     min_t(u32, rv,
							   pad - rx->trl_got));
		}
		rx->rpos += rv;
		rx->trl_got += rv;
		if (rx->trl_got < rx->trl_len)
			return true;
		if (qp->wire.mpa.crc) {
			if (~rx->crc != get_unaligned_le32(rx->trl + pad)) {
				/* MPA-50: CRC error, no headers. */
				xiw_count_rx_error(qp, false);
				xiw_rx_error(rx, TERM_LLP_MPA, 0x02, false);
				return false;
			}
		}
		/* The FPDU's bytes on the wire, markers inside it included. */
		xiw_count_rx_fpdu(qp, rx->rpos - rx->fpdu);
		rx->phase = XIW_RX_HDR;
		rx->hdr_got = 0;
		rx->crc = ~0U;
		xiw_rx_segment_done(rx);
		return !rx->dead;
	}
	}
	return false;

sock_end:
	if (rv == -EAGAIN)
		return false;	/* the slice is used up */
	ibdev_dbg(qp->ibqp.device, "qp %u: socket buffer copy %d\n",
		  qp->ibqp.qp_num, rv);
	rx->dead = true;
	return false;
}

/*
 * The tcp_read_sock() actor: parse and place the skb's bytes [off, off +
 * len). tcp_read_sock() (net/ipv4/tcp.c) stops when the actor returns 0
 * or less, calls it again with the rest of the skb when it used only
 * part, and goes on to the next skb while desc->count is not zero; it
 * warns if the actor claims more than len. So to stop early (error,
 * budget) we clear desc->count and return what we used: the call for the
 * rest of the skb then returns 0 and ends the read.
 */
static int xiw_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			unsigned int off, size_t len)
{
	struct xiw_rx *rx = desc->arg.data;
	u32 given = min_t(size_t, len, U32_MAX);

	if (!desc->count)
		return 0;
	rx->skb = skb;
	rx->skb_off = off;
	rx->skb_left = given;
	while (!rx->dead && rx->skb_left && rx->steps && rx->bytes) {
		rx->steps--;
		if (!xiw_rx_step(rx))
			break;
	}
	if (rx->dead || !rx->steps || !rx->bytes)
		desc->count = 0;
	rx->skb = NULL;
	return given - rx->skb_left;
}

/*
 * One run over what the socket holds, with the socket's lock held in
 * either form (see the top of this file). Returns true when the budget
 * ran out with the stream still readable: the caller kicks rx->work.
 */
static __always_inline bool xiw_rx_read(struct xiw_rx *rx,
					struct sock *sk)
{
	read_descriptor_t desc = { .arg.data = rx, .count = 1 };

	rx->steps = XIW_RX_STEPS;
	rx->bytes = XIW_RX_BYTES;
	/*
	 * Target pages are used inside one RCU read-side section: a user
	 * MR's dereg waits it out before its pages go (xiw_mem.c). The
	 * mapping kept across skb slices ends with the section; the next
	 * read maps again, and finds an MR deregistered meanwhile gone.
	 */
	rcu_read_lock();
	tcp_read_sock(sk, &desc, xiw_rx_actor);
	xiw_rx_unmap(rx);
	rcu_read_unlock();
	return !rx->dead && (!rx->steps || !rx->bytes);
}

/*
 * From the socket's data_ready callback, under sk_callback_lock: parse
 * right here (softirq, or the socket owner's release_sock()), the short
 * path to a completion (Documentation/performance.rst, "Third run").
 */
void xiw_rx_data_ready(struct xiw_qp *qp, struct sock *sk)
{
	struct xiw_rx *rx = qp->rx;

	/* Acquire: pairs with xiw_rx_start()'s release of the fresh state. */
	if (!rx || !smp_load_acquire(&rx->started) || rx->dead)
		return;
	if (xiw_rx_read(rx, sk))
		xiw_rx_kick(qp);
}

/*
 * Process context: what came before the callbacks were ours, or after a
 * run's budget ran out. lock_sock() makes us the socket's owner: TCP then
 * queues arriving packets on the backlog instead of calling data_ready,
 * and release_sock() runs them (and data_ready) after our read, so the
 * softirq path and this one never run at once.
 */
static void xiw_rx_pass(struct xiw_rx *rx)
{
	struct sock *sk;
	bool more;

	/* Acquire: as in xiw_rx_data_ready(). */
	if (!smp_load_acquire(&rx->started))
		return;
	/* xiw_rx_stop() cancels us before the socket goes. */
	sk = rx->qp->wire.sock->sk;
	lock_sock(sk);
	more = !rx->dead && xiw_rx_read(rx, sk);
	release_sock(sk);
	if (more)
		xiw_rx_kick(rx->qp);
}

static void xiw_rx_work(struct work_struct *work)
{
	xiw_rx_pass(container_of(work, struct xiw_rx, work));
}

/*
 * The connection has just reached RTS, in process context, under the
 * conn's lock (so the wire stays up): take in what arrived before the
 * socket's callbacks were the data path's, here rather than in the work.
 * Usually nothing has: a look under the socket lock costs less than a
 * work item at every connection.
 */
void xiw_rx_catch_up(struct xiw_qp *qp)
{
	if (qp->rx)
		xiw_rx_pass(qp->rx);
}

void xiw_rx_start(struct xiw_qp *qp)
{
	struct xiw_rx *rx = qp->rx;
	int i;

	xiw_rx_unmap(rx);
	xiw_rx_put_mr(rx);
	xiw_rx_put_rq_mrs(rx);
	rx->rq_active = false;
	rx->dead = false;
	rx->first_seen = false;
	rx->phase = XIW_RX_HDR;
	rx->hdr_got = 0;
	rx->crc = ~0U;
	rx->rpos = 0;		/* MPA-13: full operation starts here */
	rx->mrk_got = 0;
	for (i = 0; i < DDP_NUM_QN; i++)
		rx->msn[i] = 1;
	INIT_WORK(&rx->work, xiw_rx_work);
	/* Release: the state above is complete before a run can see it. */
	smp_store_release(&rx->started, true);
}

/*
 * Stop receiving. With drain (a graceful close: the peer's FIN follows
 * its last FPDU in the stream) first take in whatever the socket still
 * holds, so nothing the peer sent before closing is lost.
 *
 * The CM calls this after xiw_sk_detach(): taking sk_callback_lock for
 * writing waited out any data_ready run and none can start now, and the
 * work is cancelled below, so the drain is the only reader left.
 */
void xiw_rx_stop(struct xiw_qp *qp, bool drain)
{
	struct xiw_rx *rx = qp->rx;
	struct sock *sk = qp->wire.sock ? qp->wire.sock->sk : NULL;
	bool more = drain && sk;

	if (!rx->started)
		return;
	WRITE_ONCE(rx->started, false);
	cancel_work_sync(&rx->work);
	while (more && !rx->dead) {
		lock_sock(sk);
		more = xiw_rx_read(rx, sk);
		release_sock(sk);
		cond_resched();
	}
	xiw_rx_unmap(rx);
	xiw_rx_put_mr(rx);
	/* A WQE taken from an SRQ belongs to this QP: flush it. */
	if (rx->rq_active && qp->srq)
		xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_WR_FLUSH_ERR, 0);
	xiw_rx_put_rq_mrs(rx);
	rx->rq_active = false;
}
