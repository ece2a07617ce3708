// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Error and protocol counters of a port, and the driver details of a QP
 * for "rdma res show qp -dd". Documentation/counters.rst defines every
 * counter: what moves it and on which side.
 *
 * Counters are per device (one port), per CPU, only ever added to; they
 * are summed when read. Each QP also counts what it can attribute to
 * itself (struct xiw_qp_counts); the per-QP counters of "rdma statistic
 * qp" are the sums over the QPs bound to them (the five counter ops at
 * the end of this file).
 */
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/xiw-abi.h>
#include <uapi/rdma/rdma_netlink.h>

#include "xiw.h"
#include "xiw_fault.h"

/* Indexed by enum xiw_counter; the names users and tests see. */
static const struct rdma_stat_desc xiw_counter_descs[XIW_CNT_NUM] = {
	[XIW_CNT_REQ_CQE_ERROR].name = "req_cqe_error",
	[XIW_CNT_REQ_CQE_FLUSH_ERROR].name = "req_cqe_flush_error",
	[XIW_CNT_REQ_REMOTE_ACCESS_ERRORS].name = "req_remote_access_errors",
	[XIW_CNT_REQ_REMOTE_INVALID_REQUEST].name = "req_remote_invalid_request",
	[XIW_CNT_RESP_CQE_ERROR].name = "resp_cqe_error",
	[XIW_CNT_RESP_CQE_FLUSH_ERROR].name = "resp_cqe_flush_error",
	[XIW_CNT_RESP_LOCAL_LENGTH_ERROR].name = "resp_local_length_error",
	[XIW_CNT_RESP_REMOTE_ACCESS_ERRORS].name = "resp_remote_access_errors",
	[XIW_CNT_TX_FPDUS].name = "tx_fpdus",
	[XIW_CNT_TX_BYTES].name = "tx_bytes",
	[XIW_CNT_TX_ZCOPY_MESSAGES].name = "tx_zcopy_messages",
	[XIW_CNT_TX_ZCOPY_BYTES].name = "tx_zcopy_bytes",
	[XIW_CNT_TX_PAGE_REUSES].name = "tx_page_reuses",
	[XIW_CNT_TX_PAGE_ALLOCS].name = "tx_page_allocs",
	[XIW_CNT_RX_FPDUS].name = "rx_fpdus",
	[XIW_CNT_RX_BYTES].name = "rx_bytes",
	[XIW_CNT_RX_CRC_ERRORS].name = "rx_crc_errors",
	[XIW_CNT_RX_MARKER_ERRORS].name = "rx_marker_errors",
	[XIW_CNT_TX_TERMINATE_RDMAP].name = "tx_terminate_rdmap",
	[XIW_CNT_TX_TERMINATE_DDP].name = "tx_terminate_ddp",
	[XIW_CNT_TX_TERMINATE_LLP].name = "tx_terminate_llp",
	[XIW_CNT_RX_TERMINATE_RDMAP].name = "rx_terminate_rdmap",
	[XIW_CNT_RX_TERMINATE_DDP].name = "rx_terminate_ddp",
	[XIW_CNT_RX_TERMINATE_LLP].name = "rx_terminate_llp",
	[XIW_CNT_MPA_REJECTS_SENT].name = "mpa_rejects_sent",
	[XIW_CNT_MPA_REJECTS_RECEIVED].name = "mpa_rejects_received",
	[XIW_CNT_MPA_TIMEOUTS].name = "mpa_timeouts",
	[XIW_CNT_CONN_ESTABLISHED].name = "conn_established",
	[XIW_CNT_CONN_FAILED].name = "conn_failed",
};

/* Count on the QP as well as on the device (see struct xiw_qp_counts). */
#define xiw_qp_count_add(qp, c, n) \
	atomic64_add((n), &(qp)->counts.v[XIW_CNT_##c])
#define xiw_qp_count(qp, c)	xiw_qp_count_add(qp, c, 1)

int xiw_counters_alloc(struct xiw_device *xdev)
{
	if (xiw_fault(XIW_FAULT_DEV_COUNTERS))
		return -ENOMEM;
	xdev->counters = alloc_percpu(struct xiw_counters);
	return xdev->counters ? 0 : -ENOMEM;
}

void xiw_counters_free(struct xiw_device *xdev)
{
	free_percpu(xdev->counters);
	xdev->counters = NULL;
}

/* A message whose payload (bytes) goes to TCP zero-copy. */
void xiw_count_tx_zcopy(struct xiw_qp *qp, u32 bytes)
{
	xiw_count(qp->xdev, TX_ZCOPY_MESSAGES);
	xiw_count_add(qp->xdev, TX_ZCOPY_BYTES, bytes);
	xiw_qp_count(qp, TX_ZCOPY_MESSAGES);
	xiw_qp_count_add(qp, TX_ZCOPY_BYTES, bytes);
}

/* A page of our own taken for payload (tx_own_pages): new, or reused. */
void xiw_count_tx_page(struct xiw_qp *qp, bool fresh)
{
	enum xiw_counter c = fresh ? XIW_CNT_TX_PAGE_ALLOCS :
				     XIW_CNT_TX_PAGE_REUSES;

	this_cpu_inc(qp->xdev->counters->v[c]);
	atomic64_inc(&qp->counts.v[c]);
}

/* One event of a counter the QP can attribute, on the device and the QP. */
static void xiw_count_on_qp(struct xiw_qp *qp, enum xiw_counter c)
{
	this_cpu_inc(qp->xdev->counters->v[c]);
	atomic64_inc(&qp->counts.v[c]);
}

/* A receive error found on qp's stream: CRC (MPA-50) or marker (MPA-53). */
void xiw_count_rx_error(struct xiw_qp *qp, bool marker)
{
	xiw_count_on_qp(qp, marker ? XIW_CNT_RX_MARKER_ERRORS :
				       XIW_CNT_RX_CRC_ERRORS);
}

/*
 * A Terminate sent or received (RFC 5040 section 7.1: the Layer is the
 * high nibble of its first byte, the Error Type the low one). A received
 * one's fields are the peer's: anything may be there, and a Layer that
 * RFC 5040 does not define moves no layer counter.
 *
 * The remote access and invalid request counters take the mlx5 view of
 * a NAK: the responder reports an access violation (RDMAP remote
 * protection, DDP tagged buffer error) or a request it cannot carry out
 * (RDMAP remote operation, DDP untagged buffer error: no receive buffer,
 * too long, bad MSN or queue). Local catastrophic errors and LLP errors
 * blame no request. We are the responder when we send the Terminate,
 * the requester when we receive it.
 */
void xiw_count_term(struct xiw_qp *qp, bool sent, u8 layer_etype, u8 ecode)
{
	bool access = layer_etype == TERM_RDMAP_PROT ||
		      layer_etype == TERM_DDP_TAGGED;
	bool invalid = layer_etype == TERM_RDMAP_OP ||
		       layer_etype == TERM_DDP_UNTAGGED;
	u32 info = XIW_TERM_SEEN | layer_etype << 8 | ecode;

	if (sent) {
		WRITE_ONCE(qp->diag.term_sent, info);
		switch (layer_etype >> 4) {
		case 0:
			xiw_count_on_qp(qp, XIW_CNT_TX_TERMINATE_RDMAP);
			break;
		case 1:
			xiw_count_on_qp(qp, XIW_CNT_TX_TERMINATE_DDP);
			break;
		case 2:
			xiw_count_on_qp(qp, XIW_CNT_TX_TERMINATE_LLP);
			break;
		}
		if (access)
			xiw_count_on_qp(qp, XIW_CNT_RESP_REMOTE_ACCESS_ERRORS);
		return;
	}
	WRITE_ONCE(qp->diag.term_rcvd, info);
	switch (layer_etype >> 4) {
	case 0:
		xiw_count_on_qp(qp, XIW_CNT_RX_TERMINATE_RDMAP);
		break;
	case 1:
		xiw_count_on_qp(qp, XIW_CNT_RX_TERMINATE_DDP);
		break;
	case 2:
		xiw_count_on_qp(qp, XIW_CNT_RX_TERMINATE_LLP);
		break;
	}
	if (access)
		xiw_count_on_qp(qp, XIW_CNT_REQ_REMOTE_ACCESS_ERRORS);
	if (invalid)
		xiw_count_on_qp(qp, XIW_CNT_REQ_REMOTE_INVALID_REQUEST);
}

/*
 * Every failed completion the driver generates (xiw_cq_add() calls us
 * for those only), counted once, before it is placed (a completion
 * lost to a full CQ still counts). Receive
 * completions are the responder side, all others (Send, Write, Read,
 * Bind, local operations) the requester side. A flush is not counted as
 * an error: mlx5 keeps the two apart too.
 */
void xiw_count_cqe(struct xiw_cq *cq, const struct xiw_cqe *cqe)
{
	struct xiw_device *xdev = to_xdev(cq->ibcq.device);
	bool resp = cqe->opcode & IB_WC_RECV;
	enum xiw_counter c;
	struct xiw_qp *qp;

	if (cqe->status == IB_WC_WR_FLUSH_ERR)
		c = resp ? XIW_CNT_RESP_CQE_FLUSH_ERROR :
			   XIW_CNT_REQ_CQE_FLUSH_ERROR;
	else
		c = resp ? XIW_CNT_RESP_CQE_ERROR : XIW_CNT_REQ_CQE_ERROR;
	this_cpu_inc(xdev->counters->v[c]);
	/*
	 * The QP that completes is alive (its own code path calls us), so
	 * the entry found is it, or NULL once destroy_qp removed it. A
	 * lookup, but only for failed completions.
	 */
	qp = xa_load(&xdev->qp_xa, cqe->qp_num);
	if (qp)
		atomic64_inc(&qp->counts.v[c]);
	if (resp && cqe->status == IB_WC_LOC_LEN_ERR) {
		xiw_count(xdev, RESP_LOCAL_LENGTH_ERROR);
		if (qp)
			xiw_qp_count(qp, RESP_LOCAL_LENGTH_ERROR);
	}
}

/* The connection's peer, kept for the QP's details (state_lock held). */
void xiw_diag_conn(struct xiw_qp *qp, struct socket *sock)
{
	lockdep_assert_held(&qp->state_lock);
	if ((sock->sk->sk_family != AF_INET &&
	     sock->sk->sk_family != AF_INET6) ||
	    kernel_getpeername(sock, &qp->diag.peer.sa) < 0)
		qp->diag.peer.sa.sa_family = AF_UNSPEC;
	else
		xiw_sockaddr_unmap(&qp->diag.peer);
}

/*
 * Per-QP counters ("rdma statistic qp"). The core keeps a struct
 * rdma_counter for each set of bound QPs and, for a port, shows
 *   what the driver reports for the port
 *   + the current values of the live counters
 *   + what freed counters held when they were freed (its history).
 * So a counter's values must be the sum over every QP it ever had, kept
 * across unbind, and the port's own values must leave out what the live
 * and freed counters show, or "rdma statistic show link" would count a
 * bound QP's traffic twice.
 *
 * A counter is a struct xiw_qpc, found by the id the driver gives it.
 * xiw_qpc_lock guards all of them and the QPs' binding fields; the core
 * calls bind, unbind and update under the counter's own mutex, and
 * get_hw_stats takes only ours, so the order is always counter first.
 */
struct xiw_qpc {
	struct ib_device *ibdev;
	struct list_head qps;		/* xiw_qp.counts.node */
	/*
	 * The counter's values less what its bound QPs' v[] hold now:
	 * binding a QP subtracts its v[], unbinding adds it back, so a QP
	 * brings only what it counts while bound and the QP keeps no copy
	 * of its values at bind time. Modulo 2^64, as u64 sums are: an
	 * element may wrap while QPs are bound; the sum never does.
	 */
	u64 done[XIW_CNT_NUM];
};

static DEFINE_MUTEX(xiw_qpc_lock);
static DEFINE_XARRAY_ALLOC1(xiw_qpc_xa);

/* The counter's values now: its history plus its bound QPs since bind. */
static void xiw_qpc_sum(const struct xiw_qpc *qpc, u64 *v)
{
	const struct xiw_qp *qp;
	int i;

	lockdep_assert_held(&xiw_qpc_lock);
	memcpy(v, qpc->done, sizeof(qpc->done));
	list_for_each_entry(qp, &qpc->qps, counts.node)
		for (i = 0; i < XIW_CNT_NUM; i++)
			v[i] += atomic64_read(&qp->counts.v[i]);
}

/* The values of all live counters of a device, summed. */
static void xiw_qpc_port_sum(struct ib_device *ibdev, u64 *v)
{
	u64 one[XIW_CNT_NUM];
	struct xiw_qpc *qpc;
	unsigned long id;
	int i;

	memset(v, 0, sizeof(one));
	mutex_lock(&xiw_qpc_lock);
	xa_for_each(&xiw_qpc_xa, id, qpc) {
		if (qpc->ibdev != ibdev)
			continue;
		xiw_qpc_sum(qpc, one);
		for (i = 0; i < XIW_CNT_NUM; i++)
			v[i] += one[i];
	}
	mutex_unlock(&xiw_qpc_lock);
}

static struct rdma_hw_stats *xiw_alloc_hw_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(xiw_counter_descs, XIW_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int xiw_get_hw_stats(struct ib_device *ibdev,
			    struct rdma_hw_stats *stats, u32 port, int index)
{
	struct xiw_device *xdev = to_xdev(ibdev);
	u64 bound[XIW_CNT_NUM];
	int cpu, i;

	if (stats->num_counters != XIW_CNT_NUM)
		return -EINVAL;
	/*
	 * What live per-QP counters show is theirs, not the port's (see
	 * xiw_qpc below). Read them first: the data path counts on the
	 * device before the QP, so the device sum read after is not
	 * smaller; still, never report a wrapped difference.
	 */
	xiw_qpc_port_sum(ibdev, bound);
	memset(stats->value, 0, sizeof(u64) * XIW_CNT_NUM);
	for_each_possible_cpu(cpu) {
		const struct xiw_counters *c = per_cpu_ptr(xdev->counters, cpu);

		for (i = 0; i < XIW_CNT_NUM; i++)
			stats->value[i] += READ_ONCE(c->v[i]);
	}
	for (i = 0; i < XIW_CNT_NUM; i++)
		stats->value[i] = stats->value[i] >= bound[i] ?
				  stats->value[i] - bound[i] : 0;
	return XIW_CNT_NUM;
}

/* RFC 5040 section 6.2 (the states of an iWARP QP), from our IB state. */
static const char *xiw_iwarp_state(enum ib_qp_state s)
{
	switch (s) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		return "idle";
	case IB_QPS_RTS:
		return "rts";
	case IB_QPS_SQD:
		return "closing";
	case IB_QPS_SQE:
		return "terminate";
	default:
		return "error";
	}
}

/*
 * "layer/etype/ecode" in hex, as RFC 5040 section 7.1 splits a
 * Terminate's first two bytes: "0x1/0x2/0x02" is a DDP untagged buffer
 * error, no buffer (V-05). Other tests parse this: keep the format.
 */
static void xiw_term_str(char *buf, size_t len, u32 info)
{
	if (!(info & XIW_TERM_SEEN))
		strscpy(buf, "none", len);
	else
		snprintf(buf, len, "0x%x/0x%x/0x%02x", (info >> 12) & 0xf,
			 (info >> 8) & 0xf, info & 0xff);
}

static int xiw_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	struct xiw_mpa_params mpa;
	union xiw_sockaddr peer;
	enum ib_qp_state state;
	struct nlattr *table;
	char term[2][16];
	char addr[64];
	u8 ird, ord;

	mutex_lock(&qp->state_lock);
	state = qp->state;
	mpa = qp->wire.mpa;
	peer = qp->diag.peer;
	ird = qp->ird;
	ord = qp->ord;
	mutex_unlock(&qp->state_lock);
	xiw_term_str(term[0], sizeof(term[0]), READ_ONCE(qp->diag.term_sent));
	xiw_term_str(term[1], sizeof(term[1]), READ_ONCE(qp->diag.term_rcvd));
	if (peer.sa.sa_family == AF_INET || peer.sa.sa_family == AF_INET6)
		snprintf(addr, sizeof(addr), "%pISpc", &peer.sa);
	else
		strscpy(addr, "none", sizeof(addr));

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	/*
	 * The MPA fields are those of the last connection (zero before the
	 * first). Markers (MPA-30) are per direction (RFC 5044 section 7.1.1).
	 */
	if (rdma_nl_put_driver_string(msg, "iwarp_state",
				      xiw_iwarp_state(state)) ||
	    rdma_nl_put_driver_u32(msg, "mpa_rev", mpa.rev) ||
	    rdma_nl_put_driver_u32(msg, "mpa_crc", mpa.crc) ||
	    rdma_nl_put_driver_u32(msg, "mpa_markers_tx", mpa.mrk_tx) ||
	    rdma_nl_put_driver_u32(msg, "mpa_markers_rx", mpa.mrk_rx) ||
	    rdma_nl_put_driver_u32(msg, "ird", ird) ||
	    rdma_nl_put_driver_u32(msg, "ord", ord) ||
	    rdma_nl_put_driver_string(msg, "peer", addr) ||
	    rdma_nl_put_driver_string(msg, "term_sent", term[0]) ||
	    rdma_nl_put_driver_string(msg, "term_rcvd", term[1])) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

static struct rdma_hw_stats *xiw_counter_alloc_stats(struct rdma_counter *ctr)
{
	return rdma_alloc_hw_stats_struct(xiw_counter_descs, XIW_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* counter->id 0: a new counter, which we number (ib_verbs.h). */
static int xiw_counter_bind_qp(struct rdma_counter *ctr, struct ib_qp *ibqp)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	struct xiw_qpc *qpc;
	u32 id;
	int i, rv;

	mutex_lock(&xiw_qpc_lock);
	if (ctr->id) {
		qpc = xa_load(&xiw_qpc_xa, ctr->id);
		if (!qpc || qpc->ibdev != ibqp->device) {
			rv = -EINVAL;
			goto out;
		}
	} else {
		qpc = xiw_fault(XIW_FAULT_QP_COUNTER) ? NULL :
			kzalloc(sizeof(*qpc), GFP_KERNEL);
		if (!qpc) {
			rv = -ENOMEM;
			goto out;
		}
		qpc->ibdev = ibqp->device;
		INIT_LIST_HEAD(&qpc->qps);
		rv = xiw_fault(XIW_FAULT_QP_COUNTER_ID) ? -ENOMEM :
			xa_alloc(&xiw_qpc_xa, &id, qpc, xa_limit_31b,
				 GFP_KERNEL);
		if (rv) {
			kfree(qpc);
			goto out;
		}
		ctr->id = id;
	}
	/* Only what the QP counts from now on belongs to the counter. */
	for (i = 0; i < XIW_CNT_NUM; i++)
		qpc->done[i] -= atomic64_read(&qp->counts.v[i]);
	list_add_tail(&qp->counts.node, &qpc->qps);
	ibqp->counter = ctr;
	rv = 0;
out:
	mutex_unlock(&xiw_qpc_lock);
	return rv;
}

/* What the QP counted while bound stays with the counter. */
static int xiw_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct xiw_qp *qp = to_xqp(ibqp);
	struct xiw_qpc *qpc;
	int i;

	if (!ibqp->counter)
		return -EINVAL;
	mutex_lock(&xiw_qpc_lock);
	qpc = xa_load(&xiw_qpc_xa, ibqp->counter->id);
	if (!qpc) {
		mutex_unlock(&xiw_qpc_lock);
		return -EINVAL;
	}
	for (i = 0; i < XIW_CNT_NUM; i++)
		qpc->done[i] += atomic64_read(&qp->counts.v[i]);
	list_del(&qp->counts.node);
	ibqp->counter = NULL;
	mutex_unlock(&xiw_qpc_lock);
	return 0;
}

static int xiw_counter_update_stats(struct rdma_counter *ctr)
{
	struct xiw_qpc *qpc;
	int rv = -EINVAL;

	if (ctr->stats->num_counters != XIW_CNT_NUM)
		return -EINVAL;
	mutex_lock(&xiw_qpc_lock);
	qpc = xa_load(&xiw_qpc_xa, ctr->id);
	if (qpc) {
		xiw_qpc_sum(qpc, ctr->stats->value);
		rv = 0;
	}
	mutex_unlock(&xiw_qpc_lock);
	return rv;
}

/*
 * The core has just added the counter's final values (no QP is bound
 * any more) to its port history: take them out of the device's own
 * count, which the history now shows. The per-CPU copies are summed
 * modulo 2^64, so subtracting on one CPU is exact.
 */
static int xiw_counter_dealloc(struct rdma_counter *ctr)
{
	struct xiw_device *xdev = to_xdev(ctr->device);
	struct xiw_qpc *qpc;
	int i;

	mutex_lock(&xiw_qpc_lock);
	qpc = ctr->id ? xa_erase(&xiw_qpc_xa, ctr->id) : NULL;
	if (qpc) {
		/* The core unbinds every QP first; never leave one pointing here. */
		while (!list_empty(&qpc->qps))
			list_del_init(qpc->qps.next);
		for (i = 0; i < XIW_CNT_NUM; i++)
			this_cpu_sub(xdev->counters->v[i], qpc->done[i]);
	}
	mutex_unlock(&xiw_qpc_lock);
	kfree(qpc);
	return 0;
}

const struct ib_device_ops xiw_counter_ops = {
	.alloc_hw_port_stats = xiw_alloc_hw_port_stats,
	.counter_alloc_stats = xiw_counter_alloc_stats,
	.counter_bind_qp = xiw_counter_bind_qp,
	.counter_dealloc = xiw_counter_dealloc,
	.counter_unbind_qp = xiw_counter_unbind_qp,
	.counter_update_stats = xiw_counter_update_stats,
	.fill_res_qp_entry = xiw_fill_res_qp_entry,
	.get_hw_stats = xiw_get_hw_stats,
};
