/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Transmit: what xiw_tx.c, xiw_tx_msg.c, xiw_tx_frame.c and xiw_zc.c
 * share, the transmit state of a QP and its current message.
 */
#ifndef XIW_TX_H
#define XIW_TX_H

#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/workqueue.h>

#include "xiw.h"

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

/* Zero-copy transmit: see xiw_zc.c. */
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
	bool splice;		/* sent by reference, without a ubuf */
	bool own;		/* copied into pages of xiw's own (splice) */
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

/* One batch's arrays, shared by all QPs through a small cache. */
struct xiw_tx_set {
	struct list_head node;	/* in the cache */
	u8 room[XIW_TX_FPDUS * XIW_TX_HDR_ROOM];
	struct bio_vec bv[XIW_TX_BVECS];
	struct bio_vec piece[XIW_TX_BVECS];
	struct page *pinned[XIW_TX_BVECS];
};

struct xiw_tx {
	struct work_struct work;
	struct mutex pass_lock;	/* one pass at a time: work or doorbell */
	struct xiw_qp *qp;
	bool started;
	bool long_pass;		/* a doorbell's pass with the long allowance */
	/* The CPU whose waiting count a queued continuation holds, or -1. */
	int cont_cpu;
	/*
	 * Whether a doorbell's pass may send long messages (xiw_tx_doorbell):
	 * when this QP last took a receive WQE, in jiffies (written by rx),
	 * and, for a pass given the long allowance (long_pass, above), what
	 * it saw of that when it began (pass_lock).
	 */
	unsigned long recv_at;
	unsigned long pass_recv_at;
	struct xiw_txmsg msg;
	/*
	 * The SQ entry being taken, copied out of the ring to be checked
	 * (the pass's, like msg). Not a local: a compiler that zeroes
	 * locals would clear its 184 bytes on every look at the SQ.
	 */
	struct xiw_sqe sqe;
	u32 msn[DDP_NUM_QN];	/* next MSN per untagged queue */
	/* the batch being handed to TCP */
	struct msghdr mh;
	bool busy;		/* mh.msg_iter still has bytes */
	bool batch_ends_msg;
	bool batch_splice;	/* TCP references the batch's pages */
	/*
	 * The arrays a batch is built in, valid while set is held: a pass
	 * borrows a set to build a batch and gives it back once TCP has the
	 * whole batch (xiw_tx_set_get/put), so an idle QP holds none. bv
	 * and pinned have cap entries: the set's XIW_TX_BVECS, or the QP's
	 * own XIW_TX_BVECS_MRK (mbv, mpinned) once a connection with
	 * markers asked for more (xiw_tx_arrays).
	 */
	struct xiw_tx_set *set;
	u32 cap;
	struct bio_vec *bv;
	u8 *room;		/* XIW_TX_FPDUS * XIW_TX_HDR_ROOM bytes */
	struct bio_vec *mbv;
	struct page **mpinned;
	/* markers (MPA-30/31), when the peer asked for them */
	u32 spos;		/* stream bytes sent in full operation */
	u32 nmrk;		/* markers used in the batch */
	struct mpa_marker *mrk;	/* XIW_TX_MARKERS, with markers only */
	struct bio_vec *piece;	/* XIW_TX_BVECS: one FPDU part, unsplit */
	/* user pages and our own the batch refers to, referenced */
	struct page **pinned;
	u32 npinned;
	/* zero-copy */
	struct xiw_zc_ctx *zc_ctx;	/* NULL: this connection copies */
	struct page *zpage;	/* a zero-copy batch's own bytes */
	/*
	 * The page of ours (tx_own_pages) the message's last copied FPDU
	 * ended in, referenced, and where in it: its next FPDU goes on from
	 * there (own_off below PAGE_SIZE), so that FPDUs smaller than a page
	 * share pages rather than take one each. None between messages.
	 */
	struct page *own_page;
	u32 own_off;
	struct mpa_marker *bmrk;	/* the batch's: mrk or in zpage */
	/*
	 * The Terminate's RDMAP payload, set once by xiw_tx_terminate()
	 * and read by the pass that sends it, under qp->wire.lock (with
	 * term_pending and term_sent there). Here rather than in the wire
	 * state, which every QP holds in its own structure, to keep that
	 * under 1 KiB: a QP's tx lives as long as the QP.
	 */
	u16 term_len;
	u8 term[IWARP_TERM_MAX];
};

/* A zero-copy batch's headers (room), then its markers, in zpage. */
static_assert(XIW_TX_FPDUS * XIW_TX_HDR_ROOM +
	      XIW_TX_MARKERS * sizeof(struct mpa_marker) <= PAGE_SIZE);

/* rx took a receive WQE: a doorbell's pass keeps to the short allowance. */
static inline void xiw_tx_note_recv(struct xiw_tx *tx)
{
	unsigned long now = jiffies;

	if (READ_ONCE(tx->recv_at) != now)
		WRITE_ONCE(tx->recv_at, now);
}

/* xiw_tx_msg.c */
void xiw_tx_msg_release(struct xiw_txmsg *m);
void xiw_tx_immdt(struct xiw_qp *qp);
void xiw_tx_finish(struct xiw_qp *qp);
int xiw_tx_next(struct xiw_qp *qp);
bool xiw_tx_may_start(struct xiw_qp *qp, u32 flags, u8 opcode);

/* xiw_tx_frame.c */
int xiw_tx_build(struct xiw_qp *qp);
int xiw_tx_push(struct xiw_qp *qp, bool more);

/* xiw_zc.c */

/* Let go of the batch's references to user pages and our own. */
static inline void xiw_tx_unpin(struct xiw_tx *tx)
{
	while (tx->npinned)
		put_page(tx->pinned[--tx->npinned]);
}

void xiw_zc_callback(struct sk_buff *skb, struct ubuf_info *u,
		     bool zerocopy_success);
void __xiw_tx_ref_begin(struct xiw_qp *qp, struct xiw_txmsg *m);
extern uint xiw_tx_zcopy_min;

/*
 * Whether the message about to go may go zero-copy or by reference
 * (xiw_zc.c): only one of at least tx_zcopy_min bytes, which most
 * messages are not, so they are told apart here without a call.
 */
static inline void xiw_tx_ref_begin(struct xiw_qp *qp, struct xiw_txmsg *m)
{
	if (m->len >= READ_ONCE(xiw_tx_zcopy_min) && m->len)
		__xiw_tx_ref_begin(qp, m);
}

void xiw_tx_zc_detach(struct xiw_tx *tx);
int xiw_tx_pin(struct xiw_tx *tx, const struct bio_vec *bv, int n);
u8 *xiw_tx_zpage(struct xiw_tx *tx);
struct page *xiw_tx_own_page(bool *fresh);

#endif /* XIW_TX_H */
