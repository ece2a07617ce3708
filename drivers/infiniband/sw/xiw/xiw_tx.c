// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Transmit: the SQ, Read Responses and the Terminate, turned into FPDUs
 * (RFC 5044 section 4) on the QP's TCP socket.
 *
 * One work item per QP, on xiw_data_wq, so QPs never wait for each
 * other. It takes one message at a time and cuts it into FPDUs no
 * larger than the MULPDU of the current MSS (MPA-23), so each FPDU fits
 * a TCP segment (MPA-24 alignment), yet hands TCP a batch of them in one
 * sendmsg() so segmentation offload still builds large packets. A full
 * socket ends the run; write_space kicks it again.
 *
 * TCP copies the payload; the CRC is a pass over it just before. Large
 * messages from user memory regions may go zero-copy instead (see
 * "Zero-copy transmit" below): the CRC pass is then the only time the
 * CPU touches the payload.
 *
 * SQ slots stay owned by the kernel from consumption to completion, so
 * completions retire in posting order (ORD-03) even though a Read ends
 * only when its Response arrives (xiw_rx.c).
 */
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/dst.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "xiw.h"
#include "xiw_fault.h"

#define XIW_TX_FPDUS		16	/* FPDUs handed to TCP at once */
#define XIW_TX_BVECS		(XIW_TX_FPDUS * 6)
/*
 * With markers a batch may hold more pieces: each marker is one piece
 * and splits another. The most one FPDU needs is its pieces without
 * markers (XIW_TX_BVECS) plus 3 for each of at most 129 markers (a
 * 64 KiB FPDU); a batch stops before the room runs out.
 */
#define XIW_TX_MARKERS		256
#define XIW_TX_BVECS_MRK	(XIW_TX_BVECS + 3 * XIW_TX_MARKERS)
#define XIW_TX_HDR_ROOM		64	/* per FPDU: header, then trailer */
#define XIW_TX_BUDGET		64	/* messages per run before yielding */

static uint tx_zcopy = 1;
module_param(tx_zcopy, uint, 0644);
MODULE_PARM_DESC(tx_zcopy,
		 "Zero-copy transmit of large messages from user memory: 0 off, 1 on routes that leave the host through a device with checksum offload (default), 2 on every route");

static uint tx_zcopy_min = 16384;
module_param(tx_zcopy_min, uint, 0644);
MODULE_PARM_DESC(tx_zcopy_min,
		 "Smallest message sent zero-copy, in bytes (default 16384)");

/*
 * A post sends in its own system call only while that is short: one
 * large message, or a loop of posts, sending from the poster's context
 * keeps the application from polling its CQ and reposting receives
 * while its peer's Sends use them up (iWARP has no RNR retry: a Send
 * that finds no receive ends the connection).
 */
static uint tx_post_bytes = 16384;
module_param(tx_post_bytes, uint, 0644);
MODULE_PARM_DESC(tx_post_bytes,
		 "Payload a user post sends in its own system call before the transmit worker takes over, in bytes (default 16384)");

enum xiw_src {
	XIW_SRC_NONE,
	XIW_SRC_INLINE,		/* tx->msg.inl */
	XIW_SRC_SGE,		/* MR ranges */
};

enum xiw_fin {
	XIW_FIN_NONE,
	XIW_FIN_SQ,		/* complete SQ entry sq_idx */
	XIW_FIN_IRQ,		/* retire the IRQ head (before its last
				 * FPDU goes to TCP: xiw_tx_pass)
				 */
	XIW_FIN_TERM,		/* the Terminate: nothing follows */
	XIW_FIN_IMMDT,		/* an Immediate Data message follows */
};

/*
 * Zero-copy transmit
 * ==================
 * A message from user MRs of at least tx_zcopy_min bytes is handed to
 * TCP by reference: the socket's MSG_ZEROCOPY machinery (a ubuf_info
 * per message, struct xiw_zc) lets the skbs point at the registered
 * pages, and calls back when the last skb lets go of them, that is once
 * the peer acknowledged the data and no clone is left. Only then does
 * the work request complete: the application may rewrite its buffer
 * after the completion, and a retransmission must still carry the bytes
 * the CRC was computed over. The stack itself copies where the pages
 * would otherwise reach another socket of this host (loopback, veth:
 * skb_orphan_frags_rx), so local peers stay correct too; on such routes
 * the copy buys nothing, hence tx_zcopy=1 only uses it on routes out of
 * the host, through a device that checksums (xiw_tx_route_zc()).
 *
 * Headers, trailers and markers of a zero-copy batch are in a page of
 * their own (tx->zpage), which the skbs reference like the payload; it
 * is reused once nothing else holds it. Without such a page a batch is
 * copied (no msg_ubuf): the message still completes through its ubuf,
 * which the skbs of its other batches hold.
 *
 * struct xiw_zc_ctx outlives the QP (skbs may stay in an orphaned socket
 * after the QP is gone): the callbacks reach the QP only through it,
 * under its lock, and xiw_tx_stop() cuts that link. Each message holds
 * a reference to the module, whose code the callback is.
 */
struct xiw_zc_ctx {
	refcount_t ref;
	spinlock_t lock;	/* qp */
	struct xiw_qp *qp;	/* NULL once the connection ended */
};

struct xiw_zc {
	struct ubuf_info u;	/* first: the skbs' destructor_arg */
	struct xiw_zc_ctx *ctx;
	struct sock *sk;	/* held */
	u32 end_seq;		/* TCP sequence after the message */
	u32 sq_idx;
	bool complete;		/* an SQ entry completes with it */
	bool sent;		/* all of it went to TCP */
};

struct xiw_txmsg {
	bool active;
	u8 hdr[IWARP_MAX_HDR];	/* template, in wire order */
	u32 hdr_len;		/* including the MPA length field */
	bool tagged;
	u64 to;			/* tagged: TO of the first byte */
	u32 len, sent;
	enum xiw_src src;
	u8 inl[XIW_MAX_INLINE];
	u32 nsge;
	struct xiw_mr *mr[XIW_MAX_SGE];
	u64 addr[XIW_MAX_SGE];
	u32 slen[XIW_MAX_SGE];
	enum xiw_fin fin;
	u32 sq_idx;
	bool se;		/* XIW_FIN_IMMDT: solicited */
	u32 imm;		/* XIW_FIN_IMMDT: as posted (wire order) */
	struct xiw_zc *zc;	/* sent zero-copy: our reference */
};

struct xiw_tx {
	struct work_struct work;
	struct mutex pass_lock;	/* one pass at a time: work or doorbell */
	struct xiw_qp *qp;
	bool started;
	struct xiw_txmsg msg;
	u32 msn[DDP_NUM_QN];	/* next MSN per untagged queue */
	/* the batch being handed to TCP */
	struct msghdr mh;
	bool busy;		/* mh.msg_iter still has bytes */
	bool batch_ends_msg;
	struct bio_vec *bv;	/* XIW_TX_BVECS_MRK */
	u8 *room;		/* XIW_TX_FPDUS * XIW_TX_HDR_ROOM bytes */
	/* markers (MPA-30/31), when the peer asked for them */
	u32 spos;		/* stream bytes sent in full operation */
	u32 nmrk;		/* markers used in the batch */
	struct mpa_marker *mrk;	/* XIW_TX_MARKERS */
	struct bio_vec piece[XIW_TX_BVECS];	/* one FPDU part, unsplit */
	/* user pages the batch refers to, referenced: XIW_TX_BVECS_MRK */
	struct page **pinned;
	u32 npinned;
	/* zero-copy */
	struct xiw_zc_ctx *zc_ctx;	/* NULL: this connection copies */
	struct page *zpage;	/* a zero-copy batch's own bytes */
	struct mpa_marker *bmrk;	/* the batch's: mrk or in zpage */
};

/* A zero-copy batch's headers (room), then its markers, in zpage. */
static_assert(XIW_TX_FPDUS * XIW_TX_HDR_ROOM +
	      XIW_TX_MARKERS * sizeof(struct mpa_marker) <= PAGE_SIZE);

/* Let go of the batch's references to user pages. */
static void xiw_tx_unpin(struct xiw_tx *tx)
{
	while (tx->npinned)
		put_page(tx->pinned[--tx->npinned]);
}

int xiw_tx_create(struct xiw_qp *qp)
{
	struct xiw_tx *tx;

	tx = xiw_fault(XIW_FAULT_TX) ? NULL : kzalloc(sizeof(*tx), GFP_KERNEL);
	if (!tx)
		return -ENOMEM;
	tx->room = kzalloc(XIW_TX_FPDUS * XIW_TX_HDR_ROOM, GFP_KERNEL);
	tx->bv = kcalloc(XIW_TX_BVECS_MRK, sizeof(*tx->bv), GFP_KERNEL);
	tx->mrk = kcalloc(XIW_TX_MARKERS, sizeof(*tx->mrk), GFP_KERNEL);
	tx->pinned = kcalloc(XIW_TX_BVECS_MRK, sizeof(*tx->pinned),
			     GFP_KERNEL);
	if (!tx->room || !tx->bv || !tx->mrk || !tx->pinned) {
		kfree(tx->pinned);
		kfree(tx->mrk);
		kfree(tx->bv);
		kfree(tx->room);
		kfree(tx);
		return -ENOMEM;
	}
	tx->qp = qp;
	mutex_init(&tx->pass_lock);
	INIT_WORK(&tx->work, NULL);
	qp->tx = tx;
	return 0;
}

static void xiw_zc_ctx_put(struct xiw_zc_ctx *ctx)
{
	if (refcount_dec_and_test(&ctx->ref))
		kfree(ctx);
}

/*
 * The last reference to a zero-copy message went: no skb holds its
 * pages. Complete its SQ entry if it was all handed over, unless the
 * connection broke with the data unacknowledged or the QP is in ERR:
 * the QP's flush reports that one (and may have, its slot then being
 * another entry's). Any context, interrupts possibly off.
 */
static void xiw_zc_release(struct xiw_zc *z)
{
	struct xiw_zc_ctx *ctx = z->ctx;
	unsigned long flags;
	bool lost;

	lost = READ_ONCE(z->sk->sk_err) &&
	       before(READ_ONCE(tcp_sk(z->sk)->snd_una), z->end_seq);
	if (z->complete && z->sent && !lost) {
		spin_lock_irqsave(&ctx->lock, flags);
		if (ctx->qp && READ_ONCE(ctx->qp->state) != IB_QPS_ERR)
			xiw_sq_done(ctx->qp, z->sq_idx, IB_WC_SUCCESS);
		spin_unlock_irqrestore(&ctx->lock, flags);
	}
	sock_put(z->sk);
	xiw_zc_ctx_put(ctx);
	kfree(z);
	/* Last; see xiw_zc_callback() for why this text is still there. */
	module_put(THIS_MODULE);
}

/* ubuf_info callback: one call per reference dropped (skb or ours). */
static void xiw_zc_callback(struct sk_buff *skb, struct ubuf_info *u,
			    bool zerocopy_success)
{
	if (!refcount_dec_and_test(&u->refcnt))
		return;
	/*
	 * The release may drop the module's last reference (taken in
	 * xiw_tx_zc_begin()), and an rmmod may then go ahead while we
	 * still run here. The module's memory is freed only after an RCU
	 * grace period (free_module() waits for one), so this read-side
	 * section keeps our text there until we are on the way out.
	 */
	rcu_read_lock();
	xiw_zc_release(container_of(u, struct xiw_zc, u));
	rcu_read_unlock();
}

static void xiw_tx_msg_release(struct xiw_txmsg *m)
{
	u32 i;

	for (i = 0; i < m->nsge; i++)
		if (m->mr[i])
			xiw_mr_put(m->mr[i]);
	m->nsge = 0;
	m->active = false;
	if (m->zc) {
		/* Ours: the skbs keep theirs until they let go. */
		xiw_zc_callback(NULL, &m->zc->u, true);
		m->zc = NULL;
	}
}

/*
 * Does zero-copy pay on the socket's route? It must leave the host, and
 * its device must gather (SG) and checksum: without checksum offload the
 * stack linearizes every skb with shared frags to checksum it, a copy
 * and a large allocation per segment, slower than TCP's own copy.
 */
static bool xiw_tx_route_zc(struct sock *sk)
{
	struct dst_entry *dst = sk_dst_get(sk);
	struct net_device *dev = dst ? dst->dev : NULL;
	bool ok;

	/*
	 * The device's own features: sk_route_caps claims SG and checksum
	 * for any route that software GSO serves, checksum in software.
	 */
	ok = dev && !(dev->flags & IFF_LOOPBACK) &&
	     (dev->features & NETIF_F_SG) &&
	     (dev->features & NETIF_F_CSUM_MASK);
	dst_release(dst);
	return ok;
}

/*
 * Send the message just taken zero-copy? Payload from user MRs only
 * (their pages are pinned pages, never slab memory; kernel consumers'
 * buffers may be), large enough, and not a Write with Immediate, whose
 * completion rides on the Immediate Data message after it.
 */
static void xiw_tx_zc_begin(struct xiw_qp *qp, struct xiw_txmsg *m)
{
	struct xiw_tx *tx = qp->tx;
	struct sock *sk = qp->wire.sock->sk;
	struct xiw_zc *z;
	u32 i;

	if (!tx->zc_ctx || m->src != XIW_SRC_SGE ||
	    m->len < max_t(u32, READ_ONCE(tx_zcopy_min), 1) ||
	    (m->fin != XIW_FIN_SQ && m->fin != XIW_FIN_IRQ))
		return;
	switch (READ_ONCE(tx_zcopy)) {
	case 1:
		if (!xiw_tx_route_zc(sk))
			return;
		break;
	case 2:
		break;
	default:
		return;
	}
	for (i = 0; i < m->nsge; i++)
		if (m->mr[i] && m->mr[i]->type != XIW_MR_USER)
			return;
	z = xiw_fault(XIW_FAULT_ZC_MSG) ? NULL : kzalloc(sizeof(*z), GFP_KERNEL);
	if (!z)
		return;		/* copied instead */
	z->u.callback = xiw_zc_callback;
	z->u.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	refcount_set(&z->u.refcnt, 1);
	refcount_inc(&tx->zc_ctx->ref);
	z->ctx = tx->zc_ctx;
	sock_hold(sk);
	z->sk = sk;
	z->complete = m->fin == XIW_FIN_SQ;
	z->sq_idx = m->sq_idx;
	/*
	 * skbs may outlive the QP, the device and the socket's release (a
	 * clone in a NIC's ring, an orphaned socket's queue) and will call
	 * xiw_zc_callback(): the module stays until the last one has.
	 */
	__module_get(THIS_MODULE);
	m->zc = z;
	xiw_count_tx_zcopy(qp, m->len);
}

/* Callbacks still to come must not reach the QP any more. */
static void xiw_tx_zc_detach(struct xiw_tx *tx)
{
	struct xiw_zc_ctx *ctx = tx->zc_ctx;
	unsigned long flags;

	if (!ctx)
		return;
	spin_lock_irqsave(&ctx->lock, flags);
	ctx->qp = NULL;
	spin_unlock_irqrestore(&ctx->lock, flags);
	xiw_zc_ctx_put(ctx);
	tx->zc_ctx = NULL;
}

void xiw_tx_destroy(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (!tx)
		return;
	xiw_tx_msg_release(&tx->msg);
	xiw_tx_zc_detach(tx);
	xiw_tx_unpin(tx);
	if (tx->zpage)
		put_page(tx->zpage);
	kfree(tx->pinned);
	kfree(tx->mrk);
	kfree(tx->bv);
	kfree(tx->room);
	kfree(tx);
	qp->tx = NULL;
}

void xiw_tx_kick(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (tx && READ_ONCE(tx->started))
		queue_work(xiw_data_wq, &tx->work);
}

/*
 * Mark SQ entry idx finished; retire what can be. Takes sq_lock, IRQ-safe
 * as every taker must: kernel consumers post from any context.
 */
void xiw_sq_done(struct xiw_qp *qp, u32 idx, u8 status)
{
	struct xiw_sq_pend *p;
	unsigned long irqflags;

	spin_lock_irqsave(&qp->sq_lock, irqflags);
	/* A flush may have retired it already (QP in ERR). */
	if (idx - qp->sq_comp < qp->sq.cons - qp->sq_comp) {
		p = &qp->sq_pend[idx & (qp->sq.num - 1)];
		p->done = true;
		p->status = status;
		xiw_sq_retire(qp);
	}
	spin_unlock_irqrestore(&qp->sq_lock, irqflags);
}

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
 * A user MR's pages, n pieces at bv, seen in the caller's RCU section:
 * the batch holds a reference to each until TCP has all of it, so that
 * dereg need not wait for a batch a full socket holds back.
 */
static int xiw_tx_pin(struct xiw_tx *tx, const struct bio_vec *bv, int n)
{
	int i;

	if (tx->npinned + n > XIW_TX_BVECS_MRK)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		get_page(bv[i].bv_page);
		tx->pinned[tx->npinned++] = bv[i].bv_page;
	}
	return 0;
}

/* The message's bytes [off, off + len) as page pieces. */
static int xiw_tx_payload(struct xiw_tx *tx, u32 off, u32 len,
			  struct bio_vec *bv, int max)
{
	struct xiw_txmsg *m = &tx->msg;
	int n = 0, rv = 0;
	u32 i;

	if (m->src == XIW_SRC_INLINE)
		return xiw_bvec_kaddr(m->inl + off, len, bv, max);
	rcu_read_lock();
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
			break;
		if (m->mr[i]->type == XIW_MR_USER) {
			int err = xiw_tx_pin(tx, bv + n, rv);

			if (err) {
				rv = err;
				break;
			}
		}
		n += rv;
		len -= l;
		off = 0;
		rv = 0;
	}
	rcu_read_unlock();
	if (rv < 0)
		return rv;
	return len ? -EINVAL : n;
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
	rv = xiw_bvec_kaddr(p, len, tx->piece, ARRAY_SIZE(tx->piece));
	if (rv < 0)
		return rv;
	return xiw_tx_emit(qp, tx->piece, rv, nbv, max, fpdu);
}

/*
 * A page for a zero-copy batch's own bytes: the last one again if no
 * skb holds it any more, else a fresh one; NULL if none can be had.
 */
static u8 *xiw_tx_zpage(struct xiw_tx *tx)
{
	if (tx->zpage && page_ref_count(tx->zpage) != 1) {
		put_page(tx->zpage);
		tx->zpage = NULL;
	}
	if (!tx->zpage && !xiw_fault(XIW_FAULT_ZC_PAGE))
		tx->zpage = alloc_page(GFP_KERNEL);
	return tx->zpage ? page_address(tx->zpage) : NULL;
}

/*
 * Cut the next FPDUs of the current message into tx->bv and start
 * handing them over. Returns 0 when built, a negative errno for a
 * message that cannot be described (a local error).
 */
static int xiw_tx_build(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;
	bool mrk = qp->wire.mpa.mrk_tx;
	int max = mrk ? XIW_TX_BVECS_MRK : XIW_TX_BVECS;
	u32 room = xiw_tx_room(qp, m->hdr_len);
	u32 spos0 = tx->spos;
	u8 *hroom = m->zc ? xiw_tx_zpage(tx) : NULL;
	int nbv = 0, f;

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
		struct iwarp_ctrl *c = (struct iwarp_ctrl *)h;
		u32 ulpdu = m->hdr_len - MPA_HDR_LEN + chunk;
		u32 pad = -(MPA_HDR_LEN + ulpdu) & 3;
		u32 spos = tx->spos, nmrk = tx->nmrk, fpdu = tx->spos;
		int first_bv = nbv, rv;
		u8 *trailer;
		u32 crc;

		if (nbv + 4 + XIW_MAX_SGE > XIW_TX_BVECS && f && !mrk)
			break;
		memcpy(h, m->hdr, m->hdr_len);
		c->mpa_len = cpu_to_be16(ulpdu);
		if (last)
			c->ddp |= DDP_FLAG_LAST;
		if (m->tagged) {
			((struct iwarp_tagged *)h)->to = cpu_to_be64(m->to +
								     m->sent);
		} else {
			((struct iwarp_untagged *)h)->mo = cpu_to_be32(m->sent);
		}
		/* MPA-13: a marker due here precedes the length field. */
		if (mrk && !xiw_mpa_to_marker(fpdu))
			fpdu += MPA_MARKER_LEN;
		rv = xiw_tx_emit_kaddr(qp, h, m->hdr_len, &nbv, max, fpdu);
		if (!rv && chunk) {
			rv = xiw_tx_payload(tx, m->sent, chunk, tx->piece,
					    ARRAY_SIZE(tx->piece));
			if (rv >= 0)
				rv = xiw_tx_emit(qp, tx->piece, rv, &nbv, max,
						 fpdu);
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
	memset(&tx->mh, 0, sizeof(tx->mh));
	iov_iter_bvec(&tx->mh.msg_iter, ITER_SOURCE, tx->bv, nbv,
		      tx->spos - spos0);
	/* Zero-copy: the skbs reference the pages and this message's ubuf. */
	if (hroom != tx->room)
		tx->mh.msg_ubuf = &m->zc->u;
	tx->busy = true;
	tx->batch_ends_msg = m->sent == m->len;
	return 0;
}

/*
 * Hand the built batch to TCP. Returns 0 when all of it went, -EAGAIN
 * when the socket is full (write_space will kick us), or an error.
 */
static int xiw_tx_push(struct xiw_qp *qp, bool more)
{
	struct xiw_tx *tx = qp->tx;
	int rv;

	while (iov_iter_count(&tx->mh.msg_iter)) {
		tx->mh.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL |
				   (more || !tx->batch_ends_msg ? MSG_MORE : 0) |
				   (tx->mh.msg_ubuf ? MSG_ZEROCOPY : 0);
		rv = sock_sendmsg(qp->wire.sock, &tx->mh);
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

static void xiw_tx_untagged(struct xiw_txmsg *m, u8 op, u32 qn, u32 msn,
			    u32 inval)
{
	struct iwarp_untagged *u = (struct iwarp_untagged *)m->hdr;

	memset(u, 0, sizeof(*u));
	u->ctrl.ddp = DDP_VERSION;
	u->ctrl.rdmap = RDMAP_VERSION | op;
	u->inval = cpu_to_be32(inval);
	u->qn = cpu_to_be32(qn);
	u->msn = cpu_to_be32(msn);
	m->hdr_len = sizeof(*u);
	m->tagged = false;
}

static void xiw_tx_tagged(struct xiw_txmsg *m, u8 op, u32 stag, u64 to)
{
	struct iwarp_tagged *t = (struct iwarp_tagged *)m->hdr;

	memset(t, 0, sizeof(*t));
	t->ctrl.ddp = DDP_VERSION | DDP_FLAG_TAGGED;
	t->ctrl.rdmap = RDMAP_VERSION | op;
	t->stag = cpu_to_be32(stag);
	m->to = to;
	m->hdr_len = sizeof(*t);
	m->tagged = true;
}

/* Resolve and check the local SGEs of a copied SQE (V-02). */
static int xiw_tx_sges(struct xiw_qp *qp, struct xiw_txmsg *m,
		       const struct xiw_sqe *sqe, int access, u32 max_sge)
{
	u64 total = 0;
	u32 i;

	if (sqe->num_sge > max_sge)
		return -EINVAL;
	for (i = 0; i < sqe->num_sge; i++) {
		const struct xiw_sge *s = &sqe->sge[i];
		struct xiw_mr *mr;

		m->addr[i] = s->addr;
		m->slen[i] = s->length;
		m->mr[i] = NULL;
		m->nsge = i + 1;
		total += s->length;
		if (!s->length)
			continue;
		mr = xiw_mr_get(qp->xdev, s->lkey);
		if (!mr)
			return -EACCES;
		m->mr[i] = mr;
		if (xiw_mr_check(mr, qp->ibqp.pd, s->addr, s->length, access))
			return -EACCES;
	}
	if (total > S32_MAX)
		return -EMSGSIZE;
	m->len = total;
	m->src = XIW_SRC_SGE;
	return 0;
}

/* The payload of a Send or Write: inline bytes or checked SGEs. */
static int xiw_tx_source(struct xiw_qp *qp, struct xiw_txmsg *m,
			 const struct xiw_sqe *sqe)
{
	if (!(sqe->flags & XIW_WQE_INLINE))
		return xiw_tx_sges(qp, m, sqe, 0, qp->cap.max_send_sge);
	if (sqe->inline_len > XIW_MAX_INLINE)
		return -EMSGSIZE;
	memcpy(m->inl, sqe->sge, sqe->inline_len);
	m->len = sqe->inline_len;
	m->src = XIW_SRC_INLINE;
	return 0;
}

/* Local error on a work request: its status, V-02. */
static u8 xiw_tx_local_status(int err)
{
	switch (err) {
	case -EACCES:
		return IB_WC_LOC_PROT_ERR;
	case -EMSGSIZE:
		return IB_WC_LOC_LEN_ERR;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/*
 * Turn the SQ entry just taken into tx->msg. Returns 1 when a message
 * is ready to send, 0 when the entry finished without one (local
 * invalidate, registration), or a negative errno for a local error.
 */
static int xiw_tx_from_sqe(struct xiw_qp *qp, struct xiw_sqe *sqe, u32 idx)
{
	struct xiw_tx *tx = qp->tx;
	struct xiw_txmsg *m = &tx->msg;
	struct xiw_wire *w = &qp->wire;
	bool se = sqe->flags & XIW_WQE_SOLICITED;
	int rv;

	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	m->fin = XIW_FIN_SQ;
	m->sq_idx = idx;

	switch (sqe->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_INV: {
		bool inv = sqe->opcode == IB_UVERBS_WR_SEND_WITH_INV;
		u8 op = inv ? (se ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV) :
			      (se ? RDMAP_SEND_SE : RDMAP_SEND);

		rv = xiw_tx_source(qp, m, sqe);
		if (rv)
			return rv;
		xiw_tx_untagged(m, op, DDP_QN_SEND, tx->msn[DDP_QN_SEND]++,
				inv ? sqe->ex : 0);
		return 1;
	}
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (sqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM) {
			/* RFC 7306: the Write, then Immediate Data. */
			m->fin = XIW_FIN_IMMDT;
			m->se = se;
			m->imm = sqe->ex;
		}
		rv = xiw_tx_source(qp, m, sqe);
		if (rv)
			return rv;
		xiw_tx_tagged(m, RDMAP_WRITE, sqe->rkey, sqe->raddr);
		return 1;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_RDMA_READ_WITH_INV: {
		struct iwarp_read_req *rr = (struct iwarp_read_req *)m->hdr;
		struct xiw_orq_entry *o;
		u32 sink_stag = 0;
		u64 sink_to = 0;

		/* ORD 0: the connection agreed that we send no Reads. */
		if ((sqe->flags & XIW_WQE_INLINE) || !qp->wire.mpa.ord)
			return -EINVAL;
		if (sqe->opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV &&
		    !qp->kernel)
			return -EINVAL;
		rv = xiw_tx_sges(qp, m, sqe, IB_ACCESS_LOCAL_WRITE,
				 XIW_MAX_SGE_RD);
		if (rv)
			return rv;
		/*
		 * The peer tags its Response with the first SGE's STag and
		 * address; xiw_rx.c places by offset into all the SGEs.
		 */
		if (sqe->num_sge) {
			sink_stag = sqe->sge[0].lkey;
			sink_to = sqe->sge[0].addr;
		}
		spin_lock_bh(&w->lock);
		o = &w->orq[w->orq_tail & w->orq_mask];
		o->sqe = *sqe;
		o->sq_idx = idx;
		o->len = m->len;
		o->got = 0;
		o->sink_stag = sink_stag;
		o->sink_to = sink_to;
		w->orq_tail++;
		spin_unlock_bh(&w->lock);
		/* The local MRs are looked up again when the data comes. */
		xiw_tx_msg_release(m);
		xiw_tx_untagged(m, RDMAP_READ_REQ, DDP_QN_READ_REQ,
				tx->msn[DDP_QN_READ_REQ]++, 0);
		rr->sink_stag = cpu_to_be32(sink_stag);
		rr->sink_to = cpu_to_be64(sink_to);
		rr->size = cpu_to_be32(m->len);
		rr->src_stag = cpu_to_be32(sqe->rkey);
		rr->src_to = cpu_to_be64(sqe->raddr);
		m->hdr_len = sizeof(*rr);
		m->len = 0;
		m->src = XIW_SRC_NONE;
		m->fin = XIW_FIN_NONE;	/* completes with its Response */
		return 1;
	}
	case IB_UVERBS_WR_LOCAL_INV:
		if (!qp->kernel)
			return -EINVAL;
		rv = xiw_mr_invalidate(qp->xdev, qp->ibqp.pd, sqe->ex, false);
		return rv ? -EACCES : 0;
	case XIW_WR_REG_MR:
		if (!qp->kernel)
			return -EINVAL;
		rv = xiw_mr_fastreg(qp->xdev, qp->ibqp.pd, sqe->ex, sqe->rkey,
				    (int)sqe->compare_add);
		return rv ? -EACCES : 0;
	default:
		return -EINVAL;
	}
}

/*
 * May the SQ entry go now? Fence and ORD rules (RDMAP-04). With ORD 0 a
 * Read is let through to fail in xiw_tx_from_sqe() once the RTR's Read
 * (sent outside the ORD) is done.
 */
static bool xiw_tx_may_start(struct xiw_qp *qp, const struct xiw_sqe *sqe)
{
	struct xiw_wire *w = &qp->wire;
	u32 reads = READ_ONCE(w->orq_tail) - READ_ONCE(w->orq_head);

	if ((sqe->flags & XIW_WQE_FENCE) && reads)
		return false;
	if ((sqe->opcode == IB_UVERBS_WR_RDMA_READ ||
	     sqe->opcode == IB_UVERBS_WR_RDMA_READ_WITH_INV) &&
	    reads >= max_t(u32, w->mpa.ord, 1))
		return false;
	return true;
}

/*
 * Take the next SQ entry: copy it once, check it, keep the slot until
 * it completes. Returns 1 with tx->msg ready, 0 if the SQ is empty, or
 * -EAGAIN if the next entry must wait (fence, ORD, QP state): whoever
 * ends the wait kicks us.
 */
static int xiw_tx_next_sqe(struct xiw_qp *qp)
{
	struct xiw_sqe sqe, *slot;
	struct xiw_sq_pend *p;
	unsigned long irqflags;
	u32 idx;
	int rv;

	for (;;) {
		spin_lock_irqsave(&qp->sq_lock, irqflags);
		/* SQD still sends what was posted before it. */
		if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return -EAGAIN;
		}
		idx = qp->sq.cons;
		/*
		 * Every slot taken and not yet completed: the one at cons is
		 * an earlier entry still in flight, not a new one.
		 */
		if (idx - qp->sq_comp >= qp->sq.num) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return -EAGAIN;
		}
		slot = xiw_ring_slot(&qp->sq, idx);
		/* Acquire: pairs with the producer's release of the slot. */
		if (!(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID)) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return 0;
		}
		memcpy(&sqe, slot, sizeof(sqe));
		if (!xiw_tx_may_start(qp, &sqe)) {
			spin_unlock_irqrestore(&qp->sq_lock, irqflags);
			return -EAGAIN;
		}
		qp->sq.cons++;
		p = &qp->sq_pend[idx & (qp->sq.num - 1)];
		p->wr_id = sqe.wr_id;
		p->opcode = xiw_sq_wc_opcode(sqe.opcode, qp->kernel);
		p->signaled = qp->sig_all || (sqe.flags & XIW_WQE_SIGNALED);
		p->done = false;
		p->status = IB_WC_SUCCESS;
		p->byte_len = 0;
		spin_unlock_irqrestore(&qp->sq_lock, irqflags);

		rv = xiw_tx_from_sqe(qp, &sqe, idx);
		if (rv == 1) {
			p->byte_len = qp->tx->msg.len;
			if (qp->tx->msg.hdr_len == sizeof(struct iwarp_read_req))
				p->byte_len = be32_to_cpu(((struct iwarp_read_req *)
					qp->tx->msg.hdr)->size);
			qp->tx->msg.active = true;
			xiw_tx_zc_begin(qp, &qp->tx->msg);
			return 1;
		}
		xiw_tx_msg_release(&qp->tx->msg);
		if (rv == 0) {
			xiw_sq_done(qp, idx, IB_WC_SUCCESS);
			continue;
		}
		/* V-02: this one fails, always reported; the rest flush. */
		spin_lock_irqsave(&qp->sq_lock, irqflags);
		p->signaled = true;
		spin_unlock_irqrestore(&qp->sq_lock, irqflags);
		xiw_sq_done(qp, idx, xiw_tx_local_status(rv));
		xiw_qp_error(qp, IB_EVENT_QP_FATAL);
		return -EAGAIN;
	}
}

/* Answer the oldest inbound Read: a Read Response (RFC 5040 4.5). */
static int xiw_tx_next_response(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_txmsg *m = &qp->tx->msg;
	struct xiw_irq_entry e;

	spin_lock_bh(&w->lock);
	if (w->irq_head == w->irq_tail) {
		spin_unlock_bh(&w->lock);
		return 0;
	}
	e = w->irq[w->irq_head & w->irq_mask];
	/*
	 * The entry's MR reference moves to the message: the entry stays
	 * in the IRQ until the Response is out, and whoever empties the
	 * IRQ (xiw_qp_stop_wire) must not drop that reference again.
	 */
	w->irq[w->irq_head & w->irq_mask].mr = NULL;
	spin_unlock_bh(&w->lock);

	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	xiw_tx_tagged(m, RDMAP_READ_RESP, e.sink_stag, e.sink_to);
	m->len = e.len;
	m->src = XIW_SRC_SGE;
	if (e.len) {
		m->nsge = 1;
		m->mr[0] = e.mr;
		m->addr[0] = e.src_to;
		m->slen[0] = e.len;
	}
	m->fin = XIW_FIN_IRQ;
	m->active = true;
	xiw_tx_zc_begin(qp, m);
	return 1;
}

/* The initiator's peer-to-peer ready-to-receive message (E-06). */
static int xiw_tx_next_rtr(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_txmsg *m = &qp->tx->msg;
	u8 op = w->mpa.rtr - 1;

	w->rtr_pending = false;
	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	m->fin = XIW_FIN_NONE;
	m->active = true;
	if (op == RDMAP_WRITE) {
		xiw_tx_tagged(m, RDMAP_WRITE, 0, 0);
	} else if (op == RDMAP_SEND) {
		xiw_tx_untagged(m, RDMAP_SEND, DDP_QN_SEND,
				qp->tx->msn[DDP_QN_SEND]++, 0);
	} else {
		struct xiw_orq_entry *o;

		spin_lock_bh(&w->lock);
		o = &w->orq[w->orq_tail & w->orq_mask];
		memset(o, 0, sizeof(*o));
		o->sq_idx = U32_MAX;
		w->orq_tail++;
		spin_unlock_bh(&w->lock);
		xiw_tx_untagged(m, RDMAP_READ_REQ, DDP_QN_READ_REQ,
				qp->tx->msn[DDP_QN_READ_REQ]++, 0);
		/* Sink and source all zero: a zero-length Read (RDMAP-02). */
		m->hdr_len = sizeof(struct iwarp_read_req);
	}
	return 1;
}

/* The Terminate (TERM-01), the last message of the connection. */
static int xiw_tx_next_term(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	struct xiw_txmsg *m = &qp->tx->msg;

	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	spin_lock_bh(&w->lock);
	w->term_pending = false;
	w->term_sent = true;
	memcpy(m->inl, w->term, w->term_len);
	m->len = w->term_len;
	spin_unlock_bh(&w->lock);
	xiw_count_term(qp, true, m->inl[0], m->inl[1]);
	xiw_tx_untagged(m, RDMAP_TERMINATE, DDP_QN_TERMINATE, 1, 0);
	m->src = XIW_SRC_INLINE;
	m->fin = XIW_FIN_TERM;
	m->active = true;
	return 1;
}

/* The Write of a Write with Immediate is out: now its Immediate Data. */
static void xiw_tx_immdt(struct xiw_qp *qp)
{
	struct xiw_txmsg *m = &qp->tx->msg;
	u32 idx = m->sq_idx, imm = m->imm;
	bool se = m->se;

	xiw_tx_msg_release(m);
	memset(m, 0, offsetof(struct xiw_txmsg, inl));
	memset(m->inl, 0, RDMAP_IMMDT_LEN);
	memcpy(m->inl, &imm, sizeof(imm));
	xiw_tx_untagged(m, se ? RDMAP_IMMDT_SE : RDMAP_IMMDT, DDP_QN_SEND,
			qp->tx->msn[DDP_QN_SEND]++, 0);
	m->len = RDMAP_IMMDT_LEN;
	m->src = XIW_SRC_INLINE;
	m->fin = XIW_FIN_SQ;
	m->sq_idx = idx;
	m->active = true;
}

/* The current message went to TCP entirely. */
static void xiw_tx_finish(struct xiw_qp *qp)
{
	struct xiw_txmsg *m = &qp->tx->msg;
	struct xiw_wire *w = &qp->wire;

	if (m->zc) {
		/*
		 * It completes when the skbs let go of its pages; the TCP
		 * sequence after it tells whether the peer had it all.
		 */
		m->zc->end_seq = READ_ONCE(tcp_sk(w->sock->sk)->write_seq);
		m->zc->sent = true;
	}
	switch (m->fin) {
	case XIW_FIN_SQ:
		if (!m->zc)
			xiw_sq_done(qp, m->sq_idx, IB_WC_SUCCESS);
		break;
	default:
		break;
	}
	xiw_tx_msg_release(m);
}

/*
 * Pick the next message: Terminate, RTR, Read Responses, then the SQ.
 * Returns as xiw_tx_next_sqe().
 */
static int xiw_tx_next(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	bool term, hold;

	spin_lock_bh(&w->lock);
	term = w->term_pending;
	hold = w->hold || w->term_sent;
	spin_unlock_bh(&w->lock);
	if (term)
		return xiw_tx_next_term(qp);
	if (hold)
		return -EAGAIN;
	if (w->rtr_pending)
		return xiw_tx_next_rtr(qp);
	if (xiw_tx_next_response(qp))
		return 1;
	return xiw_tx_next_sqe(qp);
}

/* Is more work queued? A hint for MSG_MORE and for the doorbell race. */
static bool xiw_tx_more(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;
	u32 cons = READ_ONCE(qp->sq.cons);
	struct xiw_sqe *slot = xiw_ring_slot(&qp->sq, cons);

	u32 owed = READ_ONCE(w->irq_tail) - READ_ONCE(w->irq_head);

	/* The Response being sent stays in the IRQ until its last batch. */
	if (qp->tx->msg.active && qp->tx->msg.fin == XIW_FIN_IRQ)
		owed--;
	if (owed)
		return true;
	/* A full ring's next slot is an entry in flight, not a new one. */
	return cons - READ_ONCE(qp->sq_comp) < qp->sq.num &&
	       (READ_ONCE(slot->flags) & XIW_SLOT_VALID);
}

static void xiw_tx_set_busy(struct xiw_qp *qp, u32 busy)
{
	if (qp->sq.mmap) {
		WRITE_ONCE(qp->sq.ctrl->sq_busy, busy);
		/*
		 * Full barrier: the provider publishes a slot, fences, then
		 * reads sq_busy; we clear sq_busy, fence, then look at the
		 * slot. One of us sees the other.
		 */
		smp_mb();
	}
}

/*
 * The batch just built ends a Read Response: its Read leaves the IRQ now,
 * before the last FPDU reaches TCP. Over a fast path TCP can deliver it,
 * and the requester can complete its Read and send the next one, before
 * our push returns; with IRD 1 that next Read must find the IRQ free.
 */
static void xiw_tx_irq_retire(struct xiw_qp *qp)
{
	struct xiw_wire *w = &qp->wire;

	spin_lock_bh(&w->lock);
	w->irq_head++;
	spin_unlock_bh(&w->lock);
	qp->tx->msg.fin = XIW_FIN_NONE;
}

/*
 * May this pass go on with the current message? If its payload is more
 * than is left of @bytes, the worker takes it over, and sq_busy stays
 * set until the worker's pass clears it: the provider's next posts need
 * no system call.
 */
static bool xiw_tx_take_bytes(struct xiw_qp *qp, u32 *bytes)
{
	if (qp->tx->msg.len > *bytes) {
		xiw_tx_kick(qp);
		return false;
	}
	*bytes -= qp->tx->msg.len;
	return true;
}

/*
 * One pass over the work queued. Must hold pass_lock. A pass starts new
 * messages while their payload fits in @bytes; the first that does not
 * stays taken and the transmit worker goes on with it.
 */
static void xiw_tx_pass(struct xiw_qp *qp, u32 bytes)
{
	struct xiw_tx *tx = qp->tx;
	int budget = XIW_TX_BUDGET, rv;

	lockdep_assert_held(&tx->pass_lock);

	xiw_tx_set_busy(qp, 1);
	if (tx->msg.active && !xiw_tx_take_bytes(qp, &bytes))
		return;
	for (;;) {
		if (!tx->busy) {
			if (!tx->msg.active) {
				if (!budget--) {
					xiw_tx_kick(qp);
					break;
				}
				rv = xiw_tx_next(qp);
				if (rv == -EAGAIN)
					break;
				if (!rv) {
					xiw_tx_set_busy(qp, 0);
					/* A slot published as we cleared it? */
					if (!xiw_tx_more(qp))
						return;
					xiw_tx_set_busy(qp, 1);
					continue;
				}
				if (!xiw_tx_take_bytes(qp, &bytes))
					return;
			}
			rv = xiw_tx_build(qp);
			if (rv) {
				/* A range we could not describe: local error. */
				if (tx->msg.fin == XIW_FIN_SQ ||
				    tx->msg.fin == XIW_FIN_IMMDT)
					xiw_sq_done(qp, tx->msg.sq_idx,
						    IB_WC_LOC_PROT_ERR);
				xiw_tx_msg_release(&tx->msg);
				xiw_qp_error(qp, IB_EVENT_QP_FATAL);
				break;
			}
			if (tx->batch_ends_msg && tx->msg.fin == XIW_FIN_IRQ)
				xiw_tx_irq_retire(qp);
		}
		rv = xiw_tx_push(qp, xiw_tx_more(qp));
		if (rv == -EAGAIN)
			break;		/* write_space kicks us */
		if (rv) {
			if (qp->conn)
				xiw_qp_error(qp, IB_EVENT_QP_FATAL);
			break;
		}
		if (tx->batch_ends_msg && tx->msg.fin == XIW_FIN_IMMDT) {
			xiw_tx_immdt(qp);
		} else if (tx->batch_ends_msg) {
			bool term = tx->msg.fin == XIW_FIN_TERM;

			xiw_tx_finish(qp);
			if (term) {
				u8 le = qp->wire.term[0];
				/*
				 * V-07: a remote protection error found here
				 * is the responder's access error.
				 */
				bool prot = le == TERM_RDMAP_PROT ||
					    le == TERM_DDP_TAGGED;

				/* TERM-05: let it reach the peer, then close. */
				kernel_sock_shutdown(qp->wire.sock, SHUT_WR);
				xiw_qp_error(qp, prot ? IB_EVENT_QP_ACCESS_ERR :
						 IB_EVENT_QP_FATAL);
				break;
			}
		}
	}
	xiw_tx_set_busy(qp, 0);
}

static void xiw_tx_work(struct work_struct *work)
{
	struct xiw_tx *tx = container_of(work, struct xiw_tx, work);

	mutex_lock(&tx->pass_lock);
	if (READ_ONCE(tx->started))
		xiw_tx_pass(tx->qp, U32_MAX);
	mutex_unlock(&tx->pass_lock);
}

/*
 * A user doorbell (a system call in the poster's context): send right
 * here rather than wake the work, unless a pass is running already, in
 * which case it sees the new entries or is kicked again.
 */
void xiw_tx_doorbell(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (!READ_ONCE(tx->started))
		return;
	if (!mutex_trylock(&tx->pass_lock)) {
		xiw_tx_kick(qp);
		return;
	}
	if (READ_ONCE(tx->started))
		xiw_tx_pass(qp, READ_ONCE(tx_post_bytes));
	mutex_unlock(&tx->pass_lock);
}

/* The connection reached RTS: start from a clean state. */
void xiw_tx_start(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;
	int i;

	xiw_tx_msg_release(&tx->msg);
	tx->busy = false;
	xiw_tx_unpin(tx);
	tx->spos = 0;		/* MPA-13: full operation starts here */
	for (i = 0; i < DDP_NUM_QN; i++)
		tx->msn[i] = 1;		/* DDP-03 */
	xiw_tx_zc_detach(tx);
	tx->zc_ctx = xiw_fault(XIW_FAULT_ZC_CTX) ? NULL :
		kzalloc(sizeof(*tx->zc_ctx), GFP_KERNEL);
	if (tx->zc_ctx) {		/* else this connection copies */
		refcount_set(&tx->zc_ctx->ref, 1);
		spin_lock_init(&tx->zc_ctx->lock);
		tx->zc_ctx->qp = qp;
	}
	INIT_WORK(&tx->work, xiw_tx_work);
	WRITE_ONCE(tx->started, true);
}

/* Let a pass over what is queued run to its end (before a FIN). */
void xiw_tx_flush(struct xiw_qp *qp)
{
	xiw_tx_kick(qp);
	flush_work(&qp->tx->work);
}

/* No socket callback can kick us any more; wait out a running pass. */
void xiw_tx_stop(struct xiw_qp *qp)
{
	struct xiw_tx *tx = qp->tx;

	if (!tx->started)
		return;
	WRITE_ONCE(tx->started, false);
	cancel_work_sync(&tx->work);
	/* Wait out a pass a doorbell may be running. */
	mutex_lock(&tx->pass_lock);
	mutex_unlock(&tx->pass_lock);
	if (tx->msg.active && (tx->msg.fin == XIW_FIN_SQ ||
			       tx->msg.fin == XIW_FIN_IMMDT))
		xiw_sq_done(qp, tx->msg.sq_idx, IB_WC_WR_FLUSH_ERR);
	xiw_tx_msg_release(&tx->msg);
	/* Zero-copy entries still waiting for their pages are flushed. */
	xiw_tx_zc_detach(tx);
	tx->busy = false;
	xiw_tx_unpin(tx);
	xiw_tx_set_busy(qp, 0);
}

/*
 * Queue a Terminate (RFC 5040 section 4.8) for the first error only
 * (TERM-05) and let tx send it; hdr is the terminated DDP segment's
 * header (without the MPA length), Read Request included if any.
 */
void xiw_tx_terminate(struct xiw_qp *qp, u8 layer_etype, u8 ecode,
		      const void *hdr, u32 hdr_len, u32 seg_len)
{
	struct xiw_wire *w = &qp->wire;
	u16 flags = 0;
	u8 *body;

	spin_lock_bh(&w->lock);
	if (w->term_pending || w->term_sent) {
		spin_unlock_bh(&w->lock);
		return;
	}
	/* What follows the untagged header of struct iwarp_terminate. */
	body = w->term;
	memset(body, 0, sizeof(w->term));
	body[0] = layer_etype;
	body[1] = ecode;
	if (hdr && hdr_len) {
		hdr_len = min_t(u32, hdr_len, sizeof(w->term) - 6);
		flags |= TERM_FLAG_M | TERM_FLAG_D;
		if (hdr_len == sizeof(struct iwarp_read_req) - MPA_HDR_LEN)
			flags |= TERM_FLAG_R;
		put_unaligned_be16(seg_len, body + 4);
		memcpy(body + 6, hdr, hdr_len);
		w->term_len = 6 + hdr_len;
	} else {
		w->term_len = 4;
	}
	put_unaligned_be16(flags, body + 2);
	w->term_pending = true;
	spin_unlock_bh(&w->lock);
	xiw_tx_kick(qp);
}
