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
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "xiw.h"
#include "xiw_fault.h"

#define XIW_RX_BVECS	32
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
	struct xiw_mr *rmr[XIW_MAX_SGE];
	u32 rq_len;		/* the WQE's capacity */
	u32 msg_got;
	u32 inval;

	u32 msn[DDP_NUM_QN];	/* next expected MSN per queue */
	u8 scratch[IWARP_TERM_MAX + 64];
	struct bio_vec bv[XIW_RX_BVECS];
};

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

static void xiw_rx_put_rq_mrs(struct xiw_rx *rx)
{
	int i;

	for (i = 0; i < XIW_MAX_SGE; i++) {
		if (rx->rmr[i])
			xiw_mr_put(rx->rmr[i]);
		rx->rmr[i] = NULL;
	}
}

static void xiw_rx_put_mr(struct xiw_rx *rx)
{
	if (rx->mr)
		xiw_mr_put(rx->mr);
	rx->mr = NULL;
}

/* Forget the payload mapping (see struct xiw_rx). */
static void xiw_rx_unmap(struct xiw_rx *rx)
{
	if (rx->bv_mr)
		xiw_mr_put(rx->bv_mr);
	rx->bv_mr = NULL;
	rx->bv_n = 0;
	rx->bv_len = 0;
	rx->bv_done = 0;
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

/* First error wins: Terminate it, stop placing (DDP-09, TERM-05). */
static void xiw_rx_error(struct xiw_rx *rx, u8 layer_etype, u8 ecode,
			 bool with_hdr)
{
	struct xiw_qp *qp = rx->qp;

	if (rx->dead)
		return;
	rx->dead = true;
	ibdev_dbg(&qp->xdev->ibdev, "qp %u: terminate %02x/%02x\n",
		  qp->ibqp.qp_num, layer_etype, ecode);
	if (with_hdr)
		xiw_tx_terminate(qp, layer_etype, ecode,
				 rx->hdr + MPA_HDR_LEN,
				 rx->hdr_len - MPA_HDR_LEN, rx->ulpdu_len);
	else
		xiw_tx_terminate(qp, layer_etype, ecode, NULL, 0, 0);
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
		return tagged ? 0 : sizeof(struct iwarp_untagged);
	default:
		return 0;
	}
}

/* Take a receive WQE for a new Send (copied once, then checked). */
/* Receives complete normally only in RTS and SQD. */
static bool xiw_rx_live(const struct xiw_qp *qp)
{
	enum ib_qp_state st = READ_ONCE(qp->state);

	return st == IB_QPS_RTS || st == IB_QPS_SQD;
}

static int xiw_rx_take_rqe(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_rqe *slot;
	unsigned long irqflags;
	u64 total = 0;
	int i;

	if (qp->srq) {
		struct xiw_srq *srq = qp->srq;
		bool event = false;

		spin_lock_irqsave(&srq->lock, irqflags);
		slot = xiw_ring_slot(&srq->ring, srq->ring.cons);
		/* Acquire: pairs with the producer's release of the slot. */
		if (!(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID)) {
			spin_unlock_irqrestore(&srq->lock, irqflags);
			return -ENOBUFS;
		}
		memcpy(&rx->rqe, slot, sizeof(rx->rqe));
		/* Release: our copy is complete before the slot is reused. */
		smp_store_release(&slot->flags, 0);
		srq->ring.cons++;
		if (srq->limit) {
			u32 n;

			for (n = 0; n < srq->limit; n++) {
				slot = xiw_ring_slot(&srq->ring,
						     srq->ring.cons + n);
				if (!(READ_ONCE(slot->flags) & XIW_SLOT_VALID))
					break;
			}
			if (n < srq->limit) {
				srq->limit = 0;
				event = true;
			}
		}
		spin_unlock_irqrestore(&srq->lock, irqflags);
		if (event && srq->ibsrq.event_handler) {
			struct ib_event ev = {
				.device = srq->ibsrq.device,
				.element.srq = &srq->ibsrq,
				.event = IB_EVENT_SRQ_LIMIT_REACHED,
			};

			srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		}
	} else {
		spin_lock_irqsave(&qp->rq_lock, irqflags);
		slot = xiw_ring_slot(&qp->rq, qp->rq.cons);
		if (!xiw_rx_live(qp) ||
		    /* Acquire: pairs with the producer's release. */
		    !(smp_load_acquire(&slot->flags) & XIW_SLOT_VALID)) {
			spin_unlock_irqrestore(&qp->rq_lock, irqflags);
			return -ENOBUFS;
		}
		/* The slot stays ours until the Send completes. */
		memcpy(&rx->rqe, slot, sizeof(rx->rqe));
		spin_unlock_irqrestore(&qp->rq_lock, irqflags);
	}
	rx->rq_active = true;
	rx->msg_got = 0;
	rx->rq_len = 0;
	if (rx->rqe.num_sge > XIW_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < rx->rqe.num_sge; i++) {
		const struct xiw_sge *s = &rx->rqe.sge[i];

		total += s->length;
		if (!s->length)
			continue;
		rx->rmr[i] = xiw_mr_get(qp->xdev, s->lkey);
		if (!rx->rmr[i] ||
		    xiw_mr_check(rx->rmr[i], qp->ibqp.pd, s->addr, s->length,
				 IB_ACCESS_LOCAL_WRITE))
			return -EACCES;
	}
	if (total > U32_MAX)
		return -EINVAL;
	rx->rq_len = total;
	return 0;
}

static void xiw_rx_complete_rqe(struct xiw_rx *rx, u8 opcode, u8 status,
				u32 flags);

/*
 * Start an untagged message that consumes a receive WQE. Returns 0, or
 * -EIO after raising the error: no WQE (V-05: iWARP has no RNR retry)
 * or one whose buffers are not ours to write.
 */
static int xiw_rx_start_rqe(struct xiw_rx *rx)
{
	int rv = xiw_rx_take_rqe(rx);

	if (rv == -ENOBUFS) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x02, true);
		return -EIO;
	}
	if (rv) {
		xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_LOC_PROT_ERR, 0);
		xiw_rx_error(rx, TERM_RDMAP_LOCAL, 0x00, true);
		return -EIO;
	}
	rx->inval = 0;
	return 0;
}

/* Complete the current receive WQE; the slot goes back to the producer. */
static void xiw_rx_complete_rqe(struct xiw_rx *rx, u8 opcode, u8 status,
				u32 flags)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_cqe cqe = {
		.opcode = opcode,
		.status = status,
		.wr_id = rx->rqe.wr_id,
		.qp_num = qp->ibqp.qp_num,
		.byte_len = rx->msg_got,
		.flags = flags,
		.ex = rx->inval,
	};
	unsigned long irqflags;

	if (!rx->rq_active)
		return;
	rx->rq_active = false;
	xiw_rx_put_rq_mrs(rx);
	if (qp->srq) {
		/* Taken from the SRQ: this QP's to complete, flushed if not live. */
		if (!xiw_rx_live(qp))
			cqe.status = IB_WC_WR_FLUSH_ERR;
		xiw_cq_add(qp->rcq, &cqe);
		return;
	}
	spin_lock_irqsave(&qp->rq_lock, irqflags);
	/*
	 * Out of RTS and SQD (ERR, or a RESET in mid-message) the WQE is the
	 * flush's: it stays at the head of the RQ, and xiw_qp_stop_wire
	 * flushes or discards it with the rest, in order.
	 */
	if (xiw_rx_live(qp)) {
		struct xiw_rqe *slot = xiw_ring_slot(&qp->rq, qp->rq.cons);

		/* Release: hand the slot back once we are done with it. */
		smp_store_release(&slot->flags, 0);
		qp->rq.cons++;
		xiw_cq_add(qp->rcq, &cqe);
	}
	spin_unlock_irqrestore(&qp->rq_lock, irqflags);
}

/* Check an untagged Send segment and find its buffer (DDP-07). */
static void xiw_rx_send_hdr(struct xiw_rx *rx)
{
	struct iwarp_untagged *u = (struct iwarp_untagged *)rx->hdr;
	struct xiw_qp *qp = rx->qp;
	u32 msn = be32_to_cpu(u->msn), mo = be32_to_cpu(u->mo);

	if (be32_to_cpu(u->qn) != DDP_QN_SEND) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x01, true);
		return;
	}
	/* The initiator's zero-length Send RTR consumes no buffer (E-06). */
	if (qp->wire.mpa.responder && !rx->first_seen &&
	    qp->wire.mpa.rtr == RDMAP_SEND + 1 && !rx->data_len &&
	    rx->last && msn == rx->msn[DDP_QN_SEND]) {
		rx->msn[DDP_QN_SEND]++;
		rx->tgt = XIW_TGT_NONE;
		return;
	}
	if (!rx->rq_active && xiw_rx_start_rqe(rx))
		return;
	if (mo != rx->msg_got) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x04, true);
		return;
	}
	if ((u64)mo + rx->data_len > rx->rq_len) {
		/* V-03 */
		xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_LOC_LEN_ERR, 0);
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x05, true);
		return;
	}
	if (msn != rx->msn[DDP_QN_SEND]) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x03, true);
		return;
	}
	if (rx->op == RDMAP_SEND_INV || rx->op == RDMAP_SEND_SE_INV)
		rx->inval = be32_to_cpu(u->inval);
	rx->tgt = XIW_TGT_SEND;
}

/*
 * RFC 7306 Immediate Data (EXT-08): exactly 8 bytes in one segment on
 * QN 0; it consumes a receive WQE but places nothing in it.
 */
static void xiw_rx_immdt_hdr(struct xiw_rx *rx)
{
	struct iwarp_untagged *u = (struct iwarp_untagged *)rx->hdr;

	if (be32_to_cpu(u->qn) != DDP_QN_SEND) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x01, true);
		return;
	}
	if (rx->rq_active || rx->data_len != RDMAP_IMMDT_LEN || !rx->last ||
	    be32_to_cpu(u->mo)) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	if (be32_to_cpu(u->msn) != rx->msn[DDP_QN_SEND]) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x03, true);
		return;
	}
	if (xiw_rx_start_rqe(rx))
		return;
	rx->tgt = XIW_TGT_IMMDT;
}

/* Check a tagged RDMA Write segment (DDP-08, RFC 5040 section 6.4). */
static void xiw_rx_write_hdr(struct xiw_rx *rx)
{
	struct iwarp_tagged *t = (struct iwarp_tagged *)rx->hdr;
	struct xiw_qp *qp = rx->qp;
	u32 stag = be32_to_cpu(t->stag);
	u64 to = be64_to_cpu(t->to);
	int rv;

	rx->tgt = XIW_TGT_NONE;
	if (!rx->data_len)
		return;		/* DDP-05: nothing to check */
	if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_WRITE)) {
		xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
		return;
	}
	if (to + rx->data_len < to) {
		xiw_rx_error(rx, TERM_DDP_TAGGED, 0x03, true);
		return;
	}
	rx->mr = xiw_mr_get(qp->xdev, stag);
	if (!rx->mr) {
		xiw_rx_error(rx, TERM_DDP_TAGGED, 0x00, true);
		return;
	}
	rv = xiw_mr_check(rx->mr, qp->ibqp.pd, to, rx->data_len,
			  IB_ACCESS_REMOTE_WRITE);
	if (rv) {
		xiw_rx_put_mr(rx);
		if (rv == -EINVAL)
			xiw_rx_error(rx, TERM_DDP_TAGGED, 0x01, true);
		else if (rv == -ENOENT)
			xiw_rx_error(rx, TERM_DDP_TAGGED, 0x00, true);
		else
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
		return;
	}
	rx->to = to;
	rx->tgt = XIW_TGT_WRITE;
}

/* A Read Response: it must continue the oldest outstanding Read. */
static void xiw_rx_resp_hdr(struct xiw_rx *rx)
{
	struct iwarp_tagged *t = (struct iwarp_tagged *)rx->hdr;
	struct xiw_wire *w = &rx->qp->wire;
	struct xiw_orq_entry *o;
	bool ok;

	spin_lock_bh(&w->lock);
	o = &w->orq[w->orq_head & w->orq_mask];
	ok = w->orq_head != w->orq_tail &&
	     be32_to_cpu(t->stag) == o->sink_stag &&
	     be64_to_cpu(t->to) == o->sink_to + o->got &&
	     (u64)o->got + rx->data_len <= o->len;
	spin_unlock_bh(&w->lock);
	if (!ok) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	rx->tgt = rx->data_len ? XIW_TGT_READ_RESP : XIW_TGT_NONE;
}

/* An RDMA Read Request: check the source now, answer from tx. */
static void xiw_rx_read_req(struct xiw_rx *rx)
{
	struct iwarp_read_req *r = (struct iwarp_read_req *)rx->hdr;
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	u32 len = be32_to_cpu(r->size), stag = be32_to_cpu(r->src_stag);
	u64 to = be64_to_cpu(r->src_to);
	struct xiw_irq_entry *e;
	struct xiw_mr *mr = NULL;
	int rv;

	rx->tgt = XIW_TGT_NONE;
	if (be32_to_cpu(r->hdr.qn) != DDP_QN_READ_REQ) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x01, true);
		return;
	}
	if (rx->data_len || !rx->last || be32_to_cpu(r->hdr.mo)) {
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x06, true);
		return;
	}
	if (be32_to_cpu(r->hdr.msn) != rx->msn[DDP_QN_READ_REQ]) {
		xiw_rx_error(rx, TERM_DDP_UNTAGGED, 0x03, true);
		return;
	}
	if (READ_ONCE(w->irq_tail) - READ_ONCE(w->irq_head) >= w->mpa.ird) {
		/* RDMAP-04: more Reads than our IRD (0: none at all). */
		xiw_rx_error(rx, TERM_RDMAP_OP, 0x07, true);
		return;
	}
	if (len) {		/* RDMAP-02: zero length checks nothing */
		if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_READ)) {
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x02, true);
			return;
		}
		if (to + len < to) {
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x04, true);
			return;
		}
		mr = xiw_mr_get(qp->xdev, stag);
		if (!mr) {
			xiw_rx_error(rx, TERM_RDMAP_PROT, 0x00, true);
			return;
		}
		rv = xiw_mr_check(mr, qp->ibqp.pd, to, len,
				  IB_ACCESS_REMOTE_READ);
		if (rv) {
			xiw_mr_put(mr);
			xiw_rx_error(rx, TERM_RDMAP_PROT,
				     rv == -EINVAL ? 0x01 : rv == -ENOENT ?
				     0x00 : 0x02, true);
			return;
		}
	}
	rx->msn[DDP_QN_READ_REQ]++;
	spin_lock_bh(&w->lock);
	e = &w->irq[w->irq_tail & w->irq_mask];
	e->mr = mr;
	e->src_to = to;
	e->len = len;
	e->sink_stag = be32_to_cpu(r->sink_stag);
	e->sink_to = be64_to_cpu(r->sink_to);
	w->irq_tail++;
	spin_unlock_bh(&w->lock);
}

/* The header is complete: check it and set up placement. */
static void xiw_rx_header(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;

	rx->data_len = rx->ulpdu_len - (rx->hdr_len - MPA_HDR_LEN);
	rx->data_got = 0;
	rx->trl_len = (-(MPA_HDR_LEN + rx->ulpdu_len) & 3) + MPA_CRC_LEN;
	rx->trl_got = 0;
	rx->tgt = XIW_TGT_NONE;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		ibdev_dbg(qp->ibqp.device, "qp %u: FPDU in state %d\n",
			  qp->ibqp.qp_num, qp->state);
		rx->dead = true;
		return;
	}
	switch (rx->op) {
	case RDMAP_WRITE:
		xiw_rx_write_hdr(rx);
		break;
	case RDMAP_READ_RESP:
		xiw_rx_resp_hdr(rx);
		break;
	case RDMAP_READ_REQ:
		xiw_rx_read_req(rx);
		break;
	case RDMAP_IMMDT:
	case RDMAP_IMMDT_SE:
		xiw_rx_immdt_hdr(rx);
		break;
	case RDMAP_TERMINATE:
		if (rx->data_len > sizeof(rx->scratch)) {
			/* Longer than any Terminate: just tear down. */
			rx->dead = true;
			xiw_qp_error_defer(qp, IB_EVENT_QP_FATAL);
			return;
		}
		rx->tgt = XIW_TGT_TERM;
		break;
	default:
		xiw_rx_send_hdr(rx);
		break;
	}
}

/* The pieces of the target for payload bytes [off, off + len). */
static int xiw_rx_target(struct xiw_rx *rx, u32 len, struct xiw_mr **held)
{
	struct xiw_qp *qp = rx->qp;
	int n = 0, rv, i;
	u32 off;

	switch (rx->tgt) {
	case XIW_TGT_WRITE:
		return xiw_mr_bvec(rx->mr, rx->to + rx->data_got, len,
				   rx->bv, XIW_RX_BVECS);
	case XIW_TGT_IMMDT:
	case XIW_TGT_TERM:
		rx->bv[0].bv_page = virt_to_page(rx->scratch + rx->data_got);
		rx->bv[0].bv_offset = offset_in_page(rx->scratch +
						     rx->data_got);
		rx->bv[0].bv_len = min_t(u32, len, PAGE_SIZE -
					 rx->bv[0].bv_offset);
		return 1;
	case XIW_TGT_SEND:
		/* The FPDU's payload may come in several reads. */
		off = rx->msg_got + rx->data_got;
		for (i = 0; i < rx->rqe.num_sge && len; i++) {
			const struct xiw_sge *s = &rx->rqe.sge[i];
			u32 l;

			if (off >= s->length) {
				off -= s->length;
				continue;
			}
			l = min(len, s->length - off);
			rv = xiw_mr_bvec(rx->rmr[i], s->addr + off, l,
					 rx->bv + n, XIW_RX_BVECS - n);
			if (rv < 0)
				return n ? n : rv;
			n += rv;
			len -= l;
			off = 0;
		}
		return n ? n : -EINVAL;
	case XIW_TGT_READ_RESP: {
		struct xiw_wire *w = &qp->wire;
		struct xiw_orq_entry *o = &w->orq[w->orq_head & w->orq_mask];

		/* Only rx moves the ORQ head: o stays put while we read. */
		off = o->got + rx->data_got;
		for (i = 0; i < o->sqe.num_sge && len; i++) {
			const struct xiw_sge *s = &o->sqe.sge[i];
			struct xiw_mr *mr;
			u32 l;

			if (off >= s->length) {
				off -= s->length;
				continue;
			}
			l = min(len, s->length - off);
			mr = xiw_mr_get(qp->xdev, s->lkey);
			if (!mr)
				return -EACCES;
			if (xiw_mr_check(mr, qp->ibqp.pd, s->addr + off, l,
					 IB_ACCESS_LOCAL_WRITE)) {
				xiw_mr_put(mr);
				return -EACCES;
			}
			rv = xiw_mr_bvec(mr, s->addr + off, l, rx->bv,
					 XIW_RX_BVECS);
			if (rv < 0) {
				xiw_mr_put(mr);
				return rv;
			}
			/* One SGE at a time keeps one reference. */
			*held = mr;
			return rv;
		}
		return -EINVAL;
	}
	default:
		return -EINVAL;
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
 * CRC32c over socket buffer bytes, with the skb checksum walker: its
 * 'update' continues a CRC over each piece, its 'combine' appends a
 * piece CRC'd from 0 (a frag_list skb) to what came before.
 */
static __wsum xiw_rx_crc_update(const void *p, int len, __wsum crc)
{
	return (__force __wsum)crc32c((__force u32)crc, p, len);
}

static __wsum xiw_rx_crc_combine(__wsum crc, __wsum crc2, int off, int len)
{
	return (__force __wsum)__crc32c_le_combine((__force u32)crc,
						   (__force u32)crc2, len);
}

static const struct skb_checksum_ops xiw_rx_crc_ops = {
	.update = xiw_rx_crc_update,
	.combine = xiw_rx_crc_combine,
};

/*
 * Place payload into the target, straight from the socket buffer (the
 * one copy). Returns bytes placed, -EAGAIN when the slice is used up,
 * -EIO after raising an error.
 */
static int xiw_rx_data(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct iov_iter it;
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
	iov_iter_bvec(&it, ITER_DEST, rx->bv, rx->bv_n, rx->bv_len);
	iov_iter_advance(&it, rx->bv_done);
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
	rv = skb_copy_datagram_iter(rx->skb, rx->skb_off, &it, len - last);
	if (!rv && last) {
		/* The rest is stored before the last byte; no load pairs. */
		smp_wmb();
		rv = skb_copy_datagram_iter(rx->skb, rx->skb_off + len - 1,
					    &it, 1);
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
		rx->crc = (__force u32)__skb_checksum(rx->skb, rx->skb_off, len,
						      (__force __wsum)rx->crc,
						      &xiw_rx_crc_ops);
	rx->bv_done += len;
	/* The last byte placed: the MR held for the mapping may go. */
	if (rx->bv_done == rx->bv_len)
		xiw_rx_unmap(rx);
	xiw_rx_consumed(rx, len);
	return len;
}

/*
 * Copy up to len bytes of the slice into buf (headers, trailer, markers:
 * small, copied aside to be checked); with crc, CRC them. Returns bytes,
 * or -EAGAIN when the slice is used up.
 */
static int xiw_rx_recv(struct xiw_rx *rx, void *buf, u32 len, bool crc)
{
	len = min(len, rx->skb_left);
	if (!len)
		return -EAGAIN;
	if (skb_copy_bits(rx->skb, rx->skb_off, buf, len)) {
		rx->dead = true;
		return -EIO;
	}
	if (crc && rx->qp->wire.mpa.crc)
		rx->crc = crc32c(rx->crc, buf, len);
	xiw_rx_consumed(rx, len);
	return len;
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

/* A received Terminate: report it, end the connection (TERM-*). */
static void xiw_rx_terminate(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;
	u8 le = rx->data_got >= 2 ? rx->scratch[0] : 0xff;
	u32 idx = U32_MAX;
	bool prot = (le == TERM_RDMAP_PROT || le == TERM_DDP_TAGGED);

	ibdev_dbg(&qp->xdev->ibdev, "qp %u: peer terminated %02x/%02x\n",
		  qp->ibqp.qp_num, le, rx->data_got >= 2 ? rx->scratch[1] : 0);
	rx->dead = true;
	xiw_count_term(qp, false, le, rx->data_got >= 2 ? rx->scratch[1] : 0);
	/* V-04: a Read the peer refused fails as a remote access error. */
	spin_lock_bh(&w->lock);
	if (prot && w->orq_head != w->orq_tail) {
		idx = w->orq[w->orq_head & w->orq_mask].sq_idx;
		w->orq_head++;
	}
	w->term_sent = true;	/* answer a Terminate with none */
	spin_unlock_bh(&w->lock);
	if (idx != U32_MAX)
		xiw_sq_done(qp, idx, IB_WC_REM_ACCESS_ERR);
	xiw_qp_error_defer(qp, prot ? IB_EVENT_QP_ACCESS_ERR :
			   IB_EVENT_QP_FATAL);
}

/* A whole FPDU arrived with a good CRC: deliver what it ends. */
static void xiw_rx_segment_done(struct xiw_rx *rx)
{
	struct xiw_qp *qp = rx->qp;
	struct xiw_wire *w = &qp->wire;

	if (!rx->first_seen) {
		rx->first_seen = true;
		spin_lock_bh(&w->lock);
		w->hold = false;	/* MPA-12 satisfied */
		spin_unlock_bh(&w->lock);
		xiw_tx_kick(qp);
	}
	switch (rx->tgt) {
	case XIW_TGT_WRITE:
		xiw_rx_put_mr(rx);
		break;
	case XIW_TGT_SEND:
		rx->msg_got += rx->data_len;
		if (rx->last) {
			u32 flags = 0;

			rx->msn[DDP_QN_SEND]++;
			if (rx->op == RDMAP_SEND_SE ||
			    rx->op == RDMAP_SEND_SE_INV)
				flags |= XIW_CQE_SOLICITED;
			if (rx->op == RDMAP_SEND_INV ||
			    rx->op == RDMAP_SEND_SE_INV) {
				if (xiw_mr_invalidate(qp->xdev, qp->ibqp.pd,
						      rx->inval, true)) {
					/* RDMAP-06 */
					xiw_rx_complete_rqe(rx, IB_WC_RECV,
							    IB_WC_LOC_PROT_ERR, 0);
					xiw_rx_error(rx, TERM_RDMAP_PROT,
						     0x09, true);
					return;
				}
				flags |= XIW_CQE_WITH_INV;
			}
			xiw_rx_complete_rqe(rx, IB_WC_RECV, IB_WC_SUCCESS, flags);
		}
		break;
	case XIW_TGT_READ_RESP:
	case XIW_TGT_NONE:
		if (rx->op == RDMAP_READ_RESP) {
			struct xiw_orq_entry *o;
			u32 idx = U32_MAX;
			bool inv = false;
			u32 inv_stag = 0;

			spin_lock_bh(&w->lock);
			o = &w->orq[w->orq_head & w->orq_mask];
			o->got += rx->data_len;
			if (rx->last) {
				if (o->got != o->len) {
					spin_unlock_bh(&w->lock);
					xiw_rx_error(rx, TERM_RDMAP_OP, 0x06,
						     true);
					return;
				}
				idx = o->sq_idx;
				inv = o->sqe.opcode ==
				      IB_UVERBS_WR_RDMA_READ_WITH_INV &&
				      o->sqe.num_sge;
				inv_stag = o->sink_stag;
				w->orq_head++;
			}
			spin_unlock_bh(&w->lock);
			/*
			 * Read with Invalidate: the sink's STag (its first
			 * SGE's, as siw and cxgb4 take it: rdma_rw moves the
			 * key on after filling ex.invalidate_rkey) is invalid
			 * before the completion says the Read is done.
			 */
			if (inv && xiw_mr_invalidate(qp->xdev, qp->ibqp.pd,
						     inv_stag, false)) {
				xiw_sq_done(qp, idx, IB_WC_LOC_PROT_ERR);
				xiw_qp_error_defer(qp, IB_EVENT_QP_FATAL);
				return;
			}
			if (idx != U32_MAX)
				xiw_sq_done(qp, idx, IB_WC_SUCCESS);
			/* A Read waiting for ORD room may go now. */
			xiw_tx_kick(qp);
		} else if (rx->op == RDMAP_READ_REQ) {
			xiw_tx_kick(qp);
		}
		break;
	case XIW_TGT_TERM:
		xiw_rx_terminate(rx);
		break;
	case XIW_TGT_IMMDT: {
		u32 flags = XIW_CQE_WITH_IMM;

		rx->msn[DDP_QN_SEND]++;
		if (rx->op == RDMAP_IMMDT_SE)
			flags |= XIW_CQE_SOLICITED;
		/* The immediate value as the peer posted it (wire order). */
		memcpy(&rx->inval, rx->scratch, sizeof(rx->inval));
		xiw_rx_complete_rqe(rx, IB_WC_RECV_RDMA_WITH_IMM,
				    IB_WC_SUCCESS, flags);
		break;
	}
	}
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
		u32 want = rx->hdr_got < sizeof(struct iwarp_ctrl) ?
			   sizeof(struct iwarp_ctrl) : rx->hdr_len;

		if (!rx->hdr_got)
			rx->fpdu = rx->rpos;
		rv = xiw_rx_bytes(rx, rx->hdr + rx->hdr_got,
				  want - rx->hdr_got, true);
		if (rv <= 0)
			goto sock_end;
		rx->rpos += rv;
		rx->hdr_got += rv;
		if (rx->hdr_got == sizeof(struct iwarp_ctrl)) {
			struct iwarp_ctrl *c = (struct iwarp_ctrl *)rx->hdr;
			bool tagged = c->ddp & DDP_FLAG_TAGGED;

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
		if (rx->hdr_got < sizeof(struct iwarp_ctrl) ||
		    rx->hdr_got < rx->hdr_len)
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

		rv = xiw_rx_bytes(rx, rx->trl + rx->trl_got,
				  rx->trl_len - rx->trl_got, false);
		if (rv <= 0)
			goto sock_end;
		/* The pad is in the CRC (and a marker after it, read apart). */
		if (qp->wire.mpa.crc && rx->trl_got < pad)
			rx->crc = crc32c(rx->crc, rx->trl + rx->trl_got,
					 min_t(u32, rv, pad - rx->trl_got));
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
static bool xiw_rx_read(struct xiw_rx *rx, struct sock *sk)
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
static void xiw_rx_work(struct work_struct *work)
{
	struct xiw_rx *rx = container_of(work, struct xiw_rx, work);
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
