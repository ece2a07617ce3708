/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Receive: what xiw_rx.c, xiw_rx_place.c and xiw_rx_term.c share, the
 * receive state of a QP.
 */
#ifndef XIW_RX_H
#define XIW_RX_H

#include <linux/bvec.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "xiw.h"

/*
 * Target pieces mapped at once: 96 KiB of page-aligned memory, more than
 * an FPDU carries, and small enough that struct xiw_rx fits in 1 KiB.
 */
#define XIW_RX_BVECS	24
#define XIW_RX_STEPS	768	/* parse steps per run before yielding */
/*
 * Bytes per run before yielding: a softirq run takes at most this much
 * off one QP's socket, then the rest goes to the work item, so a QP with
 * a deep receive queue does not hold up the others on this CPU.
 */
#define XIW_RX_BYTES	(512 * 1024)

enum xiw_rx_phase {
	XIW_RX_HDR,
	XIW_RX_DATA,
	XIW_RX_TRAILER,
};

enum xiw_rx_target {
	XIW_TGT_NONE,		/* zero-length */
	XIW_TGT_WRITE,		/* rx->mr at rx->to */
	XIW_TGT_SEND,		/* the current receive WQE */
	XIW_TGT_READ_RESP,	/* the ORQ head's local sink */
	XIW_TGT_TERM,		/* rx->scratch */
	XIW_TGT_IMMDT,		/* rx->scratch; completes a receive */
	XIW_TGT_ATOMIC_REQ,	/* rx->scratch; queued in the IRQ */
	XIW_TGT_ATOMIC_RESP,	/* rx->scratch; completes the ORQ head */
};

struct xiw_rx {
	struct work_struct work;
	struct xiw_qp *qp;
	bool started;
	bool dead;		/* an error was found: read nothing more */
	bool first_seen;	/* a valid FPDU arrived */

	/* The slice of socket buffer the actor was given, and the budget */
	struct sk_buff *skb;
	u32 skb_off, skb_left;
	u32 steps, bytes;	/* left in this run */

	/*
	 * The target pieces of the payload not yet placed, mapped once per
	 * FPDU (or per stretch between markers) and used up over as many
	 * skb slices as it takes: mapping takes the MR's lock and builds
	 * the pieces, which costs more than most slices' copies. A mapping
	 * lives within one xiw_rx_read() (its RCU section) at most.
	 */
	u32 bv_n;
	u32 bv_len, bv_done;	/* bytes mapped, bytes placed of those */
	u32 bv_i, bv_off;	/* where bv_done is: piece, bytes into it */
	struct xiw_mr *bv_mr;	/* referenced for the mapping, or NULL */

	enum xiw_rx_phase phase;
	u8 hdr[IWARP_MAX_HDR];
	u32 hdr_got, hdr_len;
	u32 ulpdu_len;
	u32 data_len, data_got;
	u8 trl[8];
	u32 trl_len, trl_got;
	u32 crc;		/* running, over the FPDU so far */
	/* markers (MPA-30/31), when we asked for them */
	u32 rpos;		/* stream bytes read in full operation */
	u32 fpdu;		/* stream position of the FPDU's length */
	u8 mrk[MPA_MARKER_LEN];
	u32 mrk_got;
	enum xiw_rx_target tgt;
	bool last;
	u8 op;
	/* an error found in the control bytes, sent once the header is in */
	bool hdr_err;
	u8 hdr_err_le, hdr_err_ec;

	struct xiw_mr *mr;	/* XIW_TGT_WRITE, referenced */
	u64 to;

	/* the Send message being received */
	bool rq_active;
	struct xiw_rqe rqe;
	struct xiw_mr *rmr[XIW_MAX_RECV_SGE];
	u32 rmr_n;		/* rmr[] past this is all NULL */
	u32 rq_len;		/* the WQE's capacity */
	u32 msg_got;
	u32 inval;

	u32 msn[DDP_NUM_QN];	/* next expected MSN per queue */
	u8 scratch[IWARP_TERM_MAX + 64];
	struct bio_vec bv[XIW_RX_BVECS];
};

/* Let go of the MRs of the receive WQE (every Send's). */
static inline void xiw_rx_put_rq_mrs(struct xiw_rx *rx)
{
	u32 i;

	for (i = 0; i < rx->rmr_n; i++) {
		if (rx->rmr[i])
			xiw_mr_put(rx->rmr[i]);
		rx->rmr[i] = NULL;
	}
	rx->rmr_n = 0;
}

/* xiw_rx.c */
void xiw_rx_put_mr(struct xiw_rx *rx);

/* xiw_rx_place.c */
void xiw_rx_complete_rqe(struct xiw_rx *rx, u8 opcode, u8 status,
			 u32 flags);
void xiw_rx_header(struct xiw_rx *rx);
int xiw_rx_target(struct xiw_rx *rx, u32 len, struct xiw_mr **held);
void xiw_rx_segment_done(struct xiw_rx *rx);

/* xiw_rx_term.c */
void xiw_rx_error(struct xiw_rx *rx, u8 layer_etype, u8 ecode,
		  bool with_hdr);
void xiw_rx_terminate(struct xiw_rx *rx);

#endif /* XIW_RX_H */
