// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Transmit: a message cut into FPDUs (RFC 5044 section 4), each within
 * the MULPDU of the current MSS, with markers, pad and CRC, gathered
 * into a batch of page pieces and handed to TCP in one sendmsg() (a
 * batch by reference on 6.1: sendpage per piece).
 */
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "xiw_tx.h"

/* Kernel virtual memory (inline data, headers) as page pieces. */
static int xiw_bvec_kaddr(const void *p, u32 len, struct bio_vec *bv, int max)
{
	int n = 0;

	while (len) {
		u32 off = offset_in_page(p);
		u32 l = min_t(u32, len, PAGE_SIZE - off);

		if (n == max)
			return -E2BIG;
		bv[n].bv_page = virt_to_page(p);
		bv[n].bv_offset = off;
		bv[n].bv_len = l;
		n++;
		p += l;
		len -= l;
	}
	return n;
}

/*
 * The message's bytes [off, off + len) in its MR ranges as page pieces,
 * in the caller's RCU section (the pages may be used only there unless
 * referenced), a user MR's pages referenced until TCP has them if @pin.
 */
static int xiw_tx_sge_pieces(struct xiw_tx *tx, u32 off, u32 len,
			     struct bio_vec *bv, int max, bool pin)
{
	struct xiw_txmsg *m = &tx->msg;
	int n = 0, rv;
	u32 i;

	for (i = 0; i < m->nsge && len; i++) {
		u32 l;

		if (off >= m->slen[i]) {
			off -= m->slen[i];
			continue;
		}
		l = min(len, m->slen[i] - off);
		rv = xiw_mr_bvec(m->mr[i], m->addr[i] + off, l, bv + n,
				 max - n);
		if (rv < 0)
			return rv;
		if (pin && m->mr[i]->type == XIW_MR_USER) {
			int err = xiw_tx_pin(tx, bv + n, rv);

			if (err)
				return err;
		}
		n += rv;
		len -= l;
		off = 0;
	}
	return len ? -EINVAL : n;
}

/* The message's bytes [off, off + len) as page pieces. */
static int xiw_tx_payload(struct xiw_tx *tx, u32 off, u32 len,
			  struct bio_vec *bv, int max)
{
	int n;

	if (tx->msg.src == XIW_SRC_INLINE)
		return xiw_bvec_kaddr(tx->msg.inl + off, len, bv, max);
	rcu_read_lock();
	n = xiw_tx_sge_pieces(tx, off, len, bv, max, true);
	rcu_read_unlock();
	return n;
}

/* ULPDU payload bytes per FPDU for a header of hdr_len (with length). */
static u32 xiw_tx_room(struct xiw_qp *qp, u32 hdr_len)
{
	u32 emss = READ_ONCE(tcp_sk(qp->wire.sock->sk)->mss_cache);

	return xiw_mpa_mulpdu(emss, qp->wire.mpa.mrk_tx) -
	       (hdr_len - MPA_HDR_LEN);
}

/*
 * If a marker is due at the stream position, append it to the batch at
 * *nbv (RFC 5044 section 4.3): FPDUPTR is the distance back to fpdu, the
 * stream position of the ULPDU_Length of the FPDU that holds it, or 0
 * for a marker just before that field. Returns 0, or -E2BIG when the
 * batch has no room left.
 */
static int xiw_tx_marker(struct xiw_qp *qp, int *nbv, int max, u32 fpdu)
{
	struct xiw_tx *tx = qp->tx;
	struct mpa_marker *mk;
	s32 back = tx->spos - fpdu;
	int rv;

	if (!qp->wire.mpa.mrk_tx || xiw_mpa_to_marker(tx->spos))
		return 0;
	if (tx->nmrk == XIW_TX_MARKERS)
		return -E2BIG;
	mk = &tx->bmrk[tx->nmrk++];
	mk->rsvd = 0;
	mk->fpduptr = cpu_to_be16(back < 0 ? 0 : back);
	rv = xiw_bvec_kaddr(mk, sizeof(*mk), tx->bv + *nbv, max - *nbv);
	if (rv < 0)
		return rv;
	*nbv += rv;
	tx->spos += sizeof(*mk);
	return 0;
}

/*
 * Append n pieces of the FPDU whose ULPDU_Length is at stream position
 * fpdu to the batch at *nbv, with a marker wherever one falls before a
 * byte of them. Markers never split the four-byte alignment of the FPDU:
 * every FPDU and marker is a multiple of four long and the first marker
 * is at 0, so none ever lands inside the CRC or the length field.
 * Returns 0, or -E2BIG when the batch has no room left.
 */
static int xiw_tx_emit(struct xiw_qp *qp, const struct bio_vec *src, int n,
		       int *nbv, int max, u32 fpdu)
{
	struct xiw_tx *tx = qp->tx;
	bool mrk = qp->wire.mpa.mrk_tx;
	int i, rv;

	for (i = 0; i < n; i++) {
		struct bio_vec b = src[i];

		while (b.bv_len) {
			u32 l = b.bv_len;

			if (mrk) {
				rv = xiw_tx_marker(qp, nbv, max, fpdu);
				if (rv)
					return rv;
				l = min(l, xiw_mpa_to_marker(tx->spos) ?:
					   MPA_MARKER_INTERVAL);
			}
			if (*nbv == max)
				return -E2BIG;
			tx->bv[*nbv] = b;
			tx->bv[*nbv].bv_len = l;
			(*nbv)++;
			b.bv_offset += l;
			b.bv_len -= l;
			tx->spos += l;
		}
	}
	return 0;
}

/* Kernel bytes (header, pad, CRC) through xiw_tx_emit(). */
static int xiw_tx_emit_kaddr(struct xiw_qp *qp, const void *p, u32 len,
			     int *nbv, int max, u32 fpdu)
{
	struct xiw_tx *tx = qp->tx;
	int rv;

	if (!len)
		return 0;
	rv = xiw_bvec_kaddr(p, len, tx->piece, XIW_TX_BVECS);
	if (rv < 0)
		return rv;
	return xiw_tx_emit(qp, tx->piece, rv, nbv, max, fpdu);
}

/*
 * Write into h the header of the FPDU that carries the message's next
 * chunk bytes; returns the FPDU's pad length.
 */
static __always_inline u32 xiw_tx_fpdu_hdr(const struct xiw_txmsg *m, u8 *h,
					   u32 chunk)
{
	struct iwarp_ctrl *c = (struct iwarp_ctrl *)h;
	u32 ulpdu = m->hdr_len - MPA_HDR_LEN + chunk;

	memcpy(h, m->hdr, m->hdr_len);
	c->mpa_len = cpu_to_be16(ulpdu);
	if (m->sent + chunk == m->len)
		c->ddp |= DDP_FLAG_LAST;
	if (m->tagged)
		((struct iwarp_tagged *)h)->to = cpu_to_be64(m->to + m->sent);
	else
		((struct iwarp_untagged *)h)->mo = cpu_to_be32(m->sent);
	return -(MPA_HDR_LEN + ulpdu) & 3;
}

/* The batch is tx->bv[0, nbv), len bytes: the next push hands it over. */
static inline void xiw_tx_batch_set(struct xiw_tx *tx, int nbv, u32 len)
{
	memset(&tx->mh, 0, sizeof(tx->mh));
	iov_iter_bvec(&tx->mh.msg_iter, ITER_SOURCE, tx->bv, nbv, len);
	tx->busy = true;
	tx->batch_splice = false;
	tx->batch_ends_msg = tx->msg.sent == tx->msg.len;
}

/*
 * Copy the message's bytes [off, off + len) to dst: the payload of a
 * small FPDU, read now rather than when TCP copies the batch, so no
 * page of the source stays referenced. Returns 0 or a negative errno.
 */
static int xiw_tx_copy_payload(struct xiw_tx *tx, u32 off, u32 len, u8 *dst)
{
	struct bio_vec *pc = tx->piece;
	int n, i;

	if (tx->msg.src == XIW_SRC_INLINE) {
		memcpy(dst, tx->msg.inl + off, len);
		return 0;
	}
	rcu_read_lock();
	n = xiw_tx_sge_pieces(tx, off, len, pc, XIW_TX_BVECS, false);
	for (i = 0; i < n; i++) {
		memcpy_from_page(dst, pc[i].bv_page, pc[i].bv_offset,
				 pc[i].bv_len);
		dst += pc[i].bv_len;
	}
	rcu_read_unlock();
	return n < 0 ? n : 0;
}

/*
 * Where the i-th page of xiw_tx_own_payload()'s payload takes its bytes
 * (*doff) and how many (returned), done of len placed before it: the
 * first goes on at own_off when it is the QP's page (head), others
 * start at 0.
 */
static u32 xiw_tx_own_span(const struct xiw_tx *tx, u32 i, u32 head,
			   u32 len, u32 done, u32 *doff)
{
	*doff = i == 0 && head ? tx->own_off : 0;
	return min_t(u32, len - done, PAGE_SIZE - *doff);
}

/*
 * The message's bytes [off, off + len) copied into pages of our own
 * (xiw_tx_own_page()), each referenced by the batch until TCP has it,
 * and appended to the batch at *nbv as xiw_tx_emit() does. They go on
 * in the page the message's last FPDU ended in (tx->own_page), then in
 * fresh ones: at an Ethernet MTU an FPDU's payload is a third of a page
 * or less, and a page each would tie three times the memory TCP
 * accounts for to the socket. Bytes of a page an skb still references
 * are never written again: the page goes back into use only once the
 * ring's is its last reference. The pages are taken before the source
 * is looked at: its pages may be used only in an RCU section, which
 * must not sleep. Returns 0, -E2BIG when the batch has no room left,
 * -ENOMEM when no page can be had, or another negative errno for a
 * source that cannot be described.
 */
static int xiw_tx_own_payload(struct xiw_qp *qp, u32 off, u32 len,
			      int *nbv, int max, u32 fpdu)
{
	struct xiw_tx *tx = qp->tx;
	/* Bytes that fit in the page the last payload ended in. */
	u32 head = tx->own_page ? min_t(u32, len, PAGE_SIZE - tx->own_off) : 0;
	u32 npg = DIV_ROUND_UP(len - head, PAGE_SIZE), first = tx->npinned;
	u32 npc = npg + !!head;
	/* The most markers these bytes and the trailer can hold. */
	u32 nm = qp->wire.mpa.mrk_tx ? len / MPA_MARKER_INTERVAL + 2 : 0;
	struct bio_vec *src = tx->piece, b;
	u32 i, s = 0, soff = 0, done, doff, l, k;
	struct page *last;
	bool keep;
	int n, rv;

	/*
	 * Room for the pieces (a marker is one, and splits others) and
	 * the trailer's, checked before anything is copied: an FPDU that
	 * does not fit leads the next batch, and would be copied again.
	 */
	if (tx->npinned + npc > tx->cap || *nbv + npc + 3 * nm + 3 > max ||
	    tx->nmrk + nm > XIW_TX_MARKERS)
		return -E2BIG;
	if (head) {
		get_page(tx->own_page);
		tx->pinned[tx->npinned++] = tx->own_page;
	}
	for (i = 0; i < npg; i++) {
		bool fresh;
		struct page *page = xiw_tx_own_page(&fresh);

		if (!page)
			return -ENOMEM;
		tx->pinned[tx->npinned++] = page;
		xiw_count_tx_page(qp, fresh);
	}
	rcu_read_lock();
	n = xiw_tx_sge_pieces(tx, off, len, src, XIW_TX_BVECS, false);
	for (i = 0, done = 0; n > 0 && i < npc; i++, done += l) {
		u8 *dst = page_address(tx->pinned[first + i]);

		l = xiw_tx_own_span(tx, i, head, len, done, &doff);
		for (k = 0; k < l; ) {
			u32 c = min(l - k, src[s].bv_len - soff);

			memcpy_from_page(dst + doff + k, src[s].bv_page,
					 src[s].bv_offset + soff, c);
			k += c;
			soff += c;
			if (soff == src[s].bv_len) {
				s++;
				soff = 0;
			}
		}
	}
	rcu_read_unlock();
	if (n < 0)
		return n;
	for (i = 0, done = 0; i < npc; i++, done += l) {
		l = xiw_tx_own_span(tx, i, head, len, done, &doff);
		bvec_set_page(&b, tx->pinned[first + i], l, doff);
		rv = xiw_tx_emit(qp, &b, 1, nbv, max, fpdu);
		if (rv)
			return rv;
	}
	/*
	 * The message's next FPDU goes on where this one ended, if it left
	 * room. Its last lets the page go: an idle QP holds none.
	 */
	doff += l;
	last = tx->pinned[first + npc - 1];
	keep = doff < PAGE_SIZE && off + len < tx->msg.len;
	if (keep)
		get_page(last);		/* before the put: it may be own_page */
	if (tx->own_page)
		put_page(tx->own_page);
	tx->own_page = keep ? last : NULL;
	tx->own_off = doff;
	return 0;
}

/* Let go of the batch's references from the n-th on. */
static void xiw_tx_unpin_to(struct xiw_tx *tx, u32 n)
{
	while (tx->npinned > n)
		put_page(tx->pinned[--tx->npinned]);
}

/*
 * The rest of the message as one FPDU, whole in the header room: header,
 * payload, pad and CRC copied together and handed to TCP as one piece.
 * For the small messages latency is made of (a short Send or Write, a
 * Read Request, a small Read Response) this is far less work than the
 * general path's pieces per part, and holds no page until TCP copies.
 * Not with markers, whose places the general path works out, nor
 * zero-copy. Returns 0 when built, 1 if the message does not fit, or a
 * negative errno as xiw_tx_build().
 */
static int xiw_tx_build_one(struct xiw_qp *qp, u32 room)
{
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;
	u32 chunk = m->len - m->sent;
	u8 *h = tx->room;
	u32 pad, flen, crc = 0;
	int nbv, rv;

	/* With the most pad there can be. */
	if (chunk > room || m->hdr_len + chunk + 3 + MPA_CRC_LEN >
			    XIW_TX_FPDUS * XIW_TX_HDR_ROOM)
		return 1;
	pad = xiw_tx_fpdu_hdr(m, h, chunk);
	flen = m->hdr_len + chunk + pad + MPA_CRC_LEN;
	if (chunk) {
		rv = xiw_tx_copy_payload(tx, m->sent, chunk, h + m->hdr_len);
		if (rv)
			return rv;
	}
	memset(h + m->hdr_len + chunk, 0, pad);
	if (qp->wire.mpa.crc)
		crc = ~xiw_crc32c(~0U, h, flen - MPA_CRC_LEN);
	put_unaligned_le32(crc, h + flen - MPA_CRC_LEN);
	nbv = xiw_bvec_kaddr(h, flen, tx->bv, tx->cap);
	if (nbv < 0)
		return nbv;
	tx->spos += flen;
	xiw_count_tx_fpdu(qp, flen);
	m->sent = m->len;
	xiw_tx_batch_set(tx, nbv, flen);
	return 0;
}

/*
 * Cut the next FPDUs of the current message into tx->bv and start
 * handing them over. Returns 0 when built, a negative errno for a
 * message that cannot be described (a local error).
 */
int xiw_tx_build(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;
	bool mrk = qp->wire.mpa.mrk_tx;
	int max = mrk ? XIW_TX_BVECS_MRK : XIW_TX_BVECS;
	u32 room = xiw_tx_room(qp, m->hdr_len);
	u32 spos0 = tx->spos;
	u8 *hroom;
	int nbv, f;
	bool own;

	if (max > tx->cap)	/* markers without their arrays: cannot be */
		return -ENOSPC;
	if (!mrk && !m->zc) {
		int rv = xiw_tx_build_one(qp, room);

		if (rv <= 0)
			return rv;
	}
again:
	nbv = 0;
	hroom = NULL;
	if (m->zc || m->splice)
		hroom = xiw_tx_zpage(tx);
	/* Without a header page the batch is copied: no need for ours. */
	own = m->own && hroom;
	tx->bmrk = tx->mrk;
	if (hroom)
		tx->bmrk = (struct mpa_marker *)(hroom + XIW_TX_FPDUS *
						 XIW_TX_HDR_ROOM);
	else
		hroom = tx->room;	/* copied by TCP */
	tx->nmrk = 0;
	for (f = 0; f < XIW_TX_FPDUS; f++) {
		u8 *h = hroom + f * XIW_TX_HDR_ROOM;
		u32 chunk = min(m->len - m->sent, room);
		bool last = m->sent + chunk == m->len;
		u32 spos = tx->spos, nmrk = tx->nmrk, fpdu = tx->spos;
		u32 npin = tx->npinned;
		int first_bv = nbv, rv;
		u8 *trailer;
		u32 pad, crc;

		if (nbv + 4 + XIW_MAX_SGE > XIW_TX_BVECS && f && !mrk)
			break;
		pad = xiw_tx_fpdu_hdr(m, h, chunk);
		/* MPA-13: a marker due here precedes the length field. */
		if (mrk && !xiw_mpa_to_marker(fpdu))
			fpdu += MPA_MARKER_LEN;
		rv = xiw_tx_emit_kaddr(qp, h, m->hdr_len, &nbv, max, fpdu);
		if (!rv && chunk && own) {
			rv = xiw_tx_own_payload(qp, m->sent, chunk, &nbv, max,
						fpdu);
		} else if (!rv && chunk) {
			rv = xiw_tx_payload(tx, m->sent, chunk, tx->piece,
					    XIW_TX_BVECS);
			if (rv >= 0)
				rv = xiw_tx_emit(qp, tx->piece, rv, &nbv, max,
						 fpdu);
		}
		if (rv == -ENOMEM && own) {
			/*
			 * No page of ours: TCP copies the rest of the
			 * message, from this FPDU on (the next batch, or
			 * this one built again).
			 */
			m->own = false;
			m->splice = false;
			if (!f) {
				tx->spos = spos0;
				tx->nmrk = 0;
				xiw_tx_unpin(tx);
				goto again;
			}
			rv = -E2BIG;
		}
		trailer = h + m->hdr_len;
		memset(trailer, 0, pad + MPA_CRC_LEN);
		if (!rv)
			rv = xiw_tx_emit_kaddr(qp, trailer, pad, &nbv, max,
					       fpdu);
		/*
		 * The CRC covers every byte before it, markers included: a
		 * marker right after the pad too (section 4.4).
		 */
		if (!rv)
			rv = xiw_tx_marker(qp, &nbv, max, fpdu);
		crc = 0;
		if (!rv && qp->wire.mpa.crc)
			crc = ~xiw_mpa_crc_bvec(~0U, tx->bv + first_bv,
						tx->spos - spos);
		put_unaligned_le32(crc, trailer + pad);
		if (!rv)
			rv = xiw_tx_emit_kaddr(qp, trailer + pad, MPA_CRC_LEN,
					       &nbv, max, fpdu);
		if (rv == -E2BIG && f) {
			/* No room for this FPDU: it leads the next batch. */
			nbv = first_bv;
			tx->spos = spos;
			tx->nmrk = nmrk;
			xiw_tx_unpin_to(tx, npin);
			break;
		}
		if (rv < 0) {
			tx->spos = spos0;
			xiw_tx_unpin(tx);
			return rv;
		}
		/* The FPDU's bytes on the wire, its markers included. */
		xiw_count_tx_fpdu(qp, tx->spos - spos);
		m->sent += chunk;
		if (last)
			break;
	}
	xiw_tx_batch_set(tx, nbv, tx->spos - spos0);
	/*
	 * Zero-copy: the skbs reference the pages, and this message's ubuf
	 * unless it is a Read Response sent by reference.
	 */
	if (hroom != tx->room && m->zc)
		tx->mh.msg_ubuf = &m->zc->u;
	else if (hroom != tx->room)
		tx->batch_splice = true;
	return 0;
}

#if XIW_TX_SENDPAGE
/*
 * The batch by reference where TCP takes pages only through sendpage
 * (6.1): one call per piece, under one hold of the socket's lock as a
 * sendmsg() would take it, each but the last telling TCP that more
 * follows. A piece is one page's bytes, never empty (xiw_tx_emit()),
 * and every page of such a batch is a user MR's, one of our own
 * (xiw_tx_own_page()) or the header page,
 * none slab memory. Returns the bytes TCP took, or its error if none.
 */
static int xiw_tx_sendpages(struct socket *sock, struct iov_iter *it,
			    int flags)
{
	struct sock *sk = sock->sk;
	int sent = 0, rv = 0;

	lock_sock(sk);
	while (iov_iter_count(it)) {
		const struct bio_vec *bv = it->bvec;
		size_t len = min(bv->bv_len - it->iov_offset,
				 iov_iter_count(it));
		int f = flags;

		if (len < iov_iter_count(it))
			f |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
		rv = kernel_sendpage_locked(sk, bv->bv_page,
					    bv->bv_offset + it->iov_offset,
					    len, f);
		if (rv <= 0)
			break;
		iov_iter_advance(it, rv);
		sent += rv;
	}
	release_sock(sk);
	return sent ?: rv;
}
#endif

/* Hand TCP what is left of the batch: one sendmsg, or sendpages. */
static int xiw_tx_send(struct socket *sock, struct xiw_tx *tx)
{
#if XIW_TX_SENDPAGE
	if (tx->batch_splice)
		return xiw_tx_sendpages(sock, &tx->mh.msg_iter,
					tx->mh.msg_flags);
#endif
	return sock_sendmsg(sock, &tx->mh);
}

/*
 * Hand the built batch to TCP. Returns 0 when all of it went, -EAGAIN
 * when the socket is full (write_space will kick us), or an error.
 */
int xiw_tx_push(struct xiw_qp *qp, bool more)
{
	struct xiw_tx *tx = qp->tx;
	int rv;

	while (iov_iter_count(&tx->mh.msg_iter)) {
		tx->mh.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL |
				   (more || !tx->batch_ends_msg ? MSG_MORE : 0) |
				   (tx->mh.msg_ubuf ? MSG_ZEROCOPY : 0) |
				   (tx->batch_splice ? XIW_MSG_SPLICE_PAGES : 0);
		rv = xiw_tx_send(qp->wire.sock, tx);
		if (rv == -EAGAIN)
			return -EAGAIN;
		if (rv < 0)
			return rv;
		if (rv == 0)
			return -EAGAIN;
	}
	tx->busy = false;
	/* TCP copied the pages or took references of its own. */
	xiw_tx_unpin(tx);
	return 0;
}
