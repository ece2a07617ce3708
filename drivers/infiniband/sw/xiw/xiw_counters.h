/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Port counters (hw_counters, "rdma statistic") and the per-QP details
 * of "rdma res show qp -dd". Every counter is defined in
 * Documentation/counters.rst; the names there, in xiw_counters.c and in
 * selftests/xiw_counters.c must change together.
 */
#ifndef XIW_COUNTERS_H
#define XIW_COUNTERS_H

#include <linux/atomic.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <linux/types.h>
#include <net/ipv6.h>

enum xiw_counter {
	/* V-08: the error counters of mlx5, with the same meaning */
	XIW_CNT_REQ_CQE_ERROR,
	XIW_CNT_REQ_CQE_FLUSH_ERROR,
	XIW_CNT_REQ_REMOTE_ACCESS_ERRORS,
	XIW_CNT_REQ_REMOTE_INVALID_REQUEST,
	XIW_CNT_RESP_CQE_ERROR,
	XIW_CNT_RESP_CQE_FLUSH_ERROR,
	XIW_CNT_RESP_LOCAL_LENGTH_ERROR,
	XIW_CNT_RESP_REMOTE_ACCESS_ERRORS,
	/* the protocol */
	XIW_CNT_TX_FPDUS,
	XIW_CNT_TX_BYTES,
	XIW_CNT_TX_ZCOPY_MESSAGES,
	XIW_CNT_TX_ZCOPY_BYTES,
	XIW_CNT_TX_PAGE_REUSES,
	XIW_CNT_TX_PAGE_ALLOCS,
	XIW_CNT_RX_FPDUS,
	XIW_CNT_RX_BYTES,
	XIW_CNT_RX_CRC_ERRORS,
	XIW_CNT_RX_MARKER_ERRORS,
	XIW_CNT_TX_TERMINATE_RDMAP,
	XIW_CNT_TX_TERMINATE_DDP,
	XIW_CNT_TX_TERMINATE_LLP,
	XIW_CNT_RX_TERMINATE_RDMAP,
	XIW_CNT_RX_TERMINATE_DDP,
	XIW_CNT_RX_TERMINATE_LLP,
	XIW_CNT_MPA_REJECTS_SENT,
	XIW_CNT_MPA_REJECTS_RECEIVED,
	XIW_CNT_MPA_TIMEOUTS,
	XIW_CNT_CONN_ESTABLISHED,
	XIW_CNT_CONN_FAILED,
	XIW_CNT_NUM
};

/*
 * One copy per CPU: the data path counts every FPDU, and a shared
 * atomic would bounce its cache line between the CPUs of the tx and rx
 * workers. Readers sum the copies (xiw_counters.c).
 */
struct xiw_counters {
	u64 v[XIW_CNT_NUM];
};

/*
 * A QP's socket is TCP over IPv4 or IPv6: its addresses fit this, not a
 * whole sockaddr_storage (100 bytes more in every QP).
 */
union xiw_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/*
 * An IPv4 peer of an IPv6 socket that is not IPv6-only has IPv4-mapped
 * addresses (::ffff:a.b.c.d); rdma_cm and users want them as IPv4, as
 * the IB CM gives them.
 */
static inline void xiw_sockaddr_unmap(union xiw_sockaddr *a)
{
	__be32 v4;
	__be16 port;

	if (a->sa.sa_family != AF_INET6 ||
	    !ipv6_addr_v4mapped(&a->in6.sin6_addr))
		return;
	v4 = a->in6.sin6_addr.s6_addr32[3];
	port = a->in6.sin6_port;
	memset(a, 0, sizeof(*a));
	a->in4.sin_family = AF_INET;
	a->in4.sin_port = port;
	a->in4.sin_addr.s_addr = v4;
}

/* What "rdma res show qp -dd" tells about a QP beyond the core's view. */
struct xiw_qp_diag {
	/*
	 * The last Terminate sent and received: XIW_TERM_SEEN | layer/etype
	 * << 8 | ecode, 0 for none. Written by the data path, read without
	 * a lock: each is one word.
	 */
	u32 term_sent;
	u32 term_rcvd;
	union xiw_sockaddr peer;	/* under state_lock; AF_UNSPEC: none */
};

#define XIW_TERM_SEEN	BIT(16)

/*
 * What one QP counted, for the per-QP counters of "rdma statistic qp"
 * (xiw_counters.c). The data path adds to v[] whether or not the QP is
 * bound: one atomic add on the QP's own memory, no lookup, no lock
 * (for the FPDU counts, which one context at a time adds to, a plain
 * add and store). node is under xiw_qpc_lock.
 */
struct xiw_qp_counts {
	atomic64_t v[XIW_CNT_NUM];
	struct list_head node;
};

/*
 * Count on the device; c is the name after XIW_CNT_. Safe from any
 * context: this_cpu_add() is atomic against interrupts on this CPU.
 */
#define xiw_count_add(xdev, c, n) \
	this_cpu_add((xdev)->counters->v[XIW_CNT_##c], (n))
#define xiw_count(xdev, c)	xiw_count_add(xdev, c, 1)
#define xiw_count_if(xdev, c, cond) \
	xiw_count_add(xdev, c, (cond) ? 1 : 0)

struct xiw_cq;
struct xiw_cqe;
struct xiw_device;
struct xiw_qp;
struct socket;

extern const struct ib_device_ops xiw_counter_ops;
int xiw_counters_alloc(struct xiw_device *xdev);
void xiw_counters_free(struct xiw_device *xdev);
void xiw_count_tx_zcopy(struct xiw_qp *qp, u32 bytes);
void xiw_count_tx_page(struct xiw_qp *qp, bool fresh);
void xiw_count_term(struct xiw_qp *qp, bool sent, u8 layer_etype, u8 ecode);
void xiw_count_rx_error(struct xiw_qp *qp, bool marker);
void xiw_count_cqe(struct xiw_cq *cq, const struct xiw_cqe *cqe);
void xiw_diag_conn(struct xiw_qp *qp, struct socket *sock);

#endif /* XIW_COUNTERS_H */
