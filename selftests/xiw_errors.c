// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Error outcomes as applications see them, one test per row of
 * Documentation/errors.rst that plain verbs and rdma_cm can reach: the
 * completion status on both ends, the async event on both ends, that
 * nothing is placed or delivered after the error, and the Terminate on
 * the wire (layer/etype/ecode, read back from a packet capture on lo:
 * both ends are xiw in this one process over 10.99.0.1 on a dummy
 * netdev, so their TCP stream runs over lo).
 *
 * Requirement IDs (V-*, DDP-*, RDMAP-*, TERM-*, MPA-*) are defined in
 * Documentation/requirements.rst.
 */
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"
#include "xiw_mpa_util.h"

#define XE_BUFLEN	16384
#define XE_MSG		64
#define XE_SINK		8192	/* client: Read sink; server: R2's buffer */
#define XE_EV_MS	2000	/* raised with the flush: long before this */
/* ka_idle_s for every connection here: a vanished peer in 16 s (V-06). */
#define XE_KA_IDLE_S	1
#define XE_MPA_TMO_MS	1500

/* Async events of every QP of the process, in arrival order. */
struct xe_events {
	struct ibv_context *ctx;
	int n;
	struct { struct ibv_qp *qp; enum ibv_event_type type; } ev[32];
};

/* Read whatever async events arrive within ms into l. */
static void xe_events_read(struct xe_events *l, int ms)
{
	struct pollfd pf = { .fd = l->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	xr_nonblock(l->ctx->async_fd);
	while (poll(&pf, 1, ms) > 0) {
		if (ibv_get_async_event(l->ctx, &ev))
			break;
		if (l->n < (int)(sizeof(l->ev) / sizeof(l->ev[0]))) {
			l->ev[l->n].type = ev.event_type;
			l->ev[l->n].qp = (ev.event_type >= IBV_EVENT_QP_FATAL &&
					  ev.event_type <= IBV_EVENT_PATH_MIG_ERR) ||
					 ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED ?
					 ev.element.qp : NULL;
			l->n++;
		}
		ibv_ack_async_event(&ev);
		ms = 0;
	}
}

static bool xe_has(const struct xe_events *l, struct ibv_qp *qp,
		   enum ibv_event_type type)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->ev[i].qp == qp && l->ev[i].type == type)
			return true;
	return false;
}

/* The event for qp arrived (or arrives within ms). */
static bool xe_wait(struct xe_events *l, struct ibv_qp *qp,
		    enum ibv_event_type type, int ms)
{
	long long end = now_ms() + ms;

	while (!xe_has(l, qp, type) && now_ms() < end)
		xe_events_read(l, 50);
	return xe_has(l, qp, type);
}

static const char *xe_events_str(const struct xe_events *l,
				 struct ibv_qp *c, struct ibv_qp *s)
{
	static char b[512];
	size_t u = 0;
	int i;

	b[0] = '\0';
	for (i = 0; i < l->n && u < sizeof(b) - 64; i++)
		u += snprintf(b + u, sizeof(b) - u, "%s%s:%s", i ? ", " : "",
			      l->ev[i].qp == c ? "client" : l->ev[i].qp == s ?
			      "server" : "-", ibv_event_type_str(l->ev[i].type));
	return l->n ? b : "none";
}

/*
 * The first Terminate in one direction of the capture (TERM-01): 1 with
 * its Layer|EType and ECode, 0 if there is none, -1 if the start-up frame
 * is not there.
 */
static int xe_term(struct xm_cap *cap, bool from_responder, uint8_t *le,
		   uint8_t *ec)
{
	const struct xm_stream *s = from_responder ? &cap->rsp : &cap->ini;
	struct xm_frame fr;
	struct xm_fpdu f;
	size_t off, at;

	xm_cap_drain(cap);
	fr = xm_frame(s, from_responder ? "MPA ID Rep Frame" : "MPA ID Req Frame");
	if (!fr.ok)
		return -1;
	off = fr.end;
	/* Markers are off here (mpa_markers=N, the default). */
	for (at = off; xm_fpdu(s, fr.end, false, &off, &f, NULL); at = off) {
		/* MPA length, then the 18-byte untagged DDP/RDMAP header. */
		if (f.opcode == XM_OP_TERMINATE && !f.tagged &&
		    f.ulpdu_len >= 18 + 4) {
			*le = s->buf[at + 2 + 18];
			*ec = s->buf[at + 2 + 19];
			return 1;
		}
	}
	return 0;
}

#define XE_GIB		(1UL << 30)	/* one SGE; two of them are 2^31 */
#define XE_HUGE		(2UL << 20)	/* a huge page, if one can be had */
#define XE_SMALL	(4UL << 20)	/* else 4 KiB pages of 4 MiB */
#define XE_NR_HUGE	"/proc/sys/vm/nr_hugepages"

/*
 * len bytes of address space that all show the same chunk bytes of one
 * memfd, so that an MR over them pins len / 4096 page references but
 * only chunk bytes of memory (the guest has 2 GiB in all). With a huge
 * page the pinning is 512 faults instead of 262144: seconds less under
 * TCG.
 */
static uint8_t *xe_alias_region(size_t len, bool huge)
{
	size_t chunk = huge ? XE_HUGE : XE_SMALL, off;
	uint8_t *res, *base;
	int fd;

	fd = memfd_create("xiw-errors-alias", huge ? MFD_HUGETLB : 0);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)chunk)) {
		close(fd);
		return NULL;
	}
	/* A reservation with room to align to the chunk. */
	res = mmap(NULL, len + chunk, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	base = (uint8_t *)(((uintptr_t)res + chunk - 1) & ~(uintptr_t)(chunk - 1));
	for (off = 0; off < len; off += chunk) {
		if (mmap(base + off, chunk, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) ==
		    MAP_FAILED) {
			munmap(res, len + chunk);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	/* Only [base, base + len) stays mapped. */
	if (base > res)
		munmap(res, (size_t)(base - res));
	if (base + len < res + len + chunk)
		munmap(base + len, (size_t)(res + len + chunk - (base + len)));
	return base;
}

/* The 1 GiB MR of the tests below, and what it took. */
struct xe_big {
	struct ibv_mr *mr;
	uint8_t *region;
	char nr_huge[32];	/* nr_hugepages before, if raised */
};

static void xe_big_free(struct xe_big *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	if (b->region)
		munmap(b->region, XE_GIB);
	if (b->nr_huge[0])
		sh("echo %d > " XE_NR_HUGE, atoi(b->nr_huge));
}

/* A connected pair with its capture, on a link made once per program. */
struct xe_conn {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;	/* client (MPA initiator), server */
	struct xm_cap *cap;
	struct xe_events ev;
	struct ibv_pd *pd2;	/* server: another PD */
	struct ibv_mr *mr2;	/* server: an MR with other rights or PD */
	struct xe_big big;	/* client: 1 GiB MR of the over-2^31 tests */
};

static int xe_open(struct xe_conn *x, bool connect, char *why, size_t len)
{
	struct xr_opts o = { .buflen = XE_BUFLEN, .wr = 8, .sge = 2,
			     .rd_atom = 4 };
	int rc;

	xr_unlimit_memlock();
	if (xr_link_add(&x->link)) {
		snprintf(why, len, "cannot create %s on %s", x->link.ibdev,
			 x->link.netdev);
		return -1;
	}
	xr_lo_mtu(65536);
	rc = xm_param_set("ka_idle_s", XE_KA_IDLE_S);
	if (!rc)
		rc = xm_param_set("mpa_timeout_ms", XE_MPA_TMO_MS);
	if (rc) {
		snprintf(why, len, "setting module parameters: %s", strerror(-rc));
		return -1;
	}
	if (xr_net_init(&x->net)) {
		snprintf(why, len, "%s", x->net.err);
		return -1;
	}
	x->cap = malloc(sizeof(*x->cap));
	if (!x->cap)
		return -1;
	rc = xm_cap_open(x->cap, ntohs(x->net.addr.sin_port));
	if (rc) {
		snprintf(why, len, "packet capture on lo: %s", strerror(-rc));
		return -1;
	}
	if (!connect)
		return 0;
	if (xr_connect(&x->net, &x->p, 1, &o)) {
		snprintf(why, len, "%s", x->net.err);
		return -1;
	}
	x->c = &x->p.cli;
	x->s = &x->p.srv;
	x->ev.ctx = x->c->id->verbs;
	if (x->s->id->verbs != x->ev.ctx) {
		snprintf(why, len, "client and server on two contexts");
		return -1;
	}
	return 0;
}

static void xe_close(struct xe_conn *x)
{
	xe_big_free(&x->big);
	if (x->mr2)
		ibv_dereg_mr(x->mr2);
	if (x->pd2)
		ibv_dealloc_pd(x->pd2);
	xm_cap_close(x->cap);
	free(x->cap);
	xr_pairs_fini(&x->p, 1);
	xr_net_fini(&x->net);
	xm_param_set("ka_idle_s", 30);
	xm_param_set("mpa_timeout_ms", 10000);
}

/* One completion of wr_id on cq within ms; its status, or -1 if none. */
static int xe_status(struct ibv_cq *cq, uint64_t wr_id, int ms,
		     struct ibv_wc *out)
{
	struct ibv_wc wc;

	if (xr_poll(cq, &wc, 1, ms) != 1)
		return -1;
	if (out)
		*out = wc;
	return wc.wr_id == wr_id ? (int)wc.status : -2;
}

#define EXPECT_WC(cq, id, want) do {					\
	struct ibv_wc __w = { 0 };					\
	int __st = xe_status((cq), (id), XR_WAIT_MS, &__w);		\
	EXPECT_EQ((int)(want), __st)					\
		TH_LOG("wr_id %#llx: want %s, got %s", (unsigned long long)(id), \
		       ibv_wc_status_str(want),				\
		       __st == -1 ? "no completion" : xr_wc_str(&__w));	\
} while (0)

/* Bytes [off, off + len) of buf are all zero. */
static bool xe_zero(const uint8_t *buf, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[off + i])
			return false;
	return true;
}

/*
 * After the error: new posts on both ends flush at once (V-01) and both
 * ends hear DISCONNECTED from rdma_cm.
 */
static void xe_after(struct __test_metadata *_metadata, struct xe_conn *x)
{
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_SEND, 0x77, 0, XE_MSG, 0, NULL, 0));
	EXPECT_WC(x->c->cq, 0x77, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(0, xr_recv(x->s, 0x78, 0, 4096));
	EXPECT_WC(x->s->cq, 0x78, IBV_WC_WR_FLUSH_ERR);
	EXPECT_TRUE(xr_wait_cm(x->net.cch, x->c->id, RDMA_CM_EVENT_DISCONNECTED,
			       XR_WAIT_MS, NULL)) TH_LOG("client: no DISCONNECTED");
	EXPECT_TRUE(xr_wait_cm(x->net.sch, x->s->id, RDMA_CM_EVENT_DISCONNECTED,
			       XR_WAIT_MS, NULL)) TH_LOG("server: no DISCONNECTED");
}

/* ---- remote errors: the server detects, the client caused ---- */

enum xe_fault {
	XE_BAD_STAG,	/* STag with a wrong key: no such STag */
	XE_BOUNDS,	/* past the end of the MR */
	XE_NO_RIGHTS,	/* MR without the remote right */
	XE_SMALL_RECV,	/* receive of 8 bytes for a 64-byte Send */
	XE_NO_RECV,	/* no receive posted */
	XE_INV_UNKNOWN,	/* Send with Invalidate of no STag */
	XE_INV_OTHER_PD,	/* ... of an STag of another PD */
	XE_RECV_BAD_LKEY,	/* the receive's own lkey is bad */
	XE_RECV_PAST_MR,	/* its second SGE runs past its MR */
};

FIXTURE(remote) {
	struct xe_conn x;
};

FIXTURE_VARIANT(remote) {
	enum ibv_wr_opcode op;
	enum xe_fault fault;
	enum ibv_wc_status req;		/* the faulty WR at the client */
	int r1;				/* server's receive R1; -1: none */
	uint8_t le, ec;			/* the server's Terminate */
	enum ibv_event_type req_ev, rsp_ev;
};

/* V-04, DDP-08, TERM-04: the Write completed locally before the peer refused. */
FIXTURE_VARIANT_ADD(remote, write_bad_stag) {
	.op = IBV_WR_RDMA_WRITE, .fault = XE_BAD_STAG, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_WR_FLUSH_ERR, .le = 0x11, .ec = 0x00,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(remote, write_bounds) {
	.op = IBV_WR_RDMA_WRITE, .fault = XE_BOUNDS, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_WR_FLUSH_ERR, .le = 0x11, .ec = 0x01,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(remote, write_no_rights) {
	.op = IBV_WR_RDMA_WRITE, .fault = XE_NO_RIGHTS, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_WR_FLUSH_ERR, .le = 0x01, .ec = 0x02,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
/* V-04, RDMAP-04, TERM-04: the Read itself fails REM_ACCESS_ERR. */
FIXTURE_VARIANT_ADD(remote, read_bad_stag) {
	.op = IBV_WR_RDMA_READ, .fault = XE_BAD_STAG, .req = IBV_WC_REM_ACCESS_ERR,
	.r1 = IBV_WC_WR_FLUSH_ERR, .le = 0x01, .ec = 0x00,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(remote, read_bounds) {
	.op = IBV_WR_RDMA_READ, .fault = XE_BOUNDS, .req = IBV_WC_REM_ACCESS_ERR,
	.r1 = IBV_WC_WR_FLUSH_ERR, .le = 0x01, .ec = 0x01,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(remote, read_no_rights) {
	.op = IBV_WR_RDMA_READ, .fault = XE_NO_RIGHTS, .req = IBV_WC_REM_ACCESS_ERR,
	.r1 = IBV_WC_WR_FLUSH_ERR, .le = 0x01, .ec = 0x02,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
/* V-03, DDP-07: 0x05, not siw's 0x02. */
FIXTURE_VARIANT_ADD(remote, send_too_small) {
	.op = IBV_WR_SEND, .fault = XE_SMALL_RECV, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_LOC_LEN_ERR, .le = 0x12, .ec = 0x05,
	.req_ev = IBV_EVENT_QP_FATAL, .rsp_ev = IBV_EVENT_QP_FATAL,
};
/* V-05, DDP-07: no RNR retry in iWARP. */
FIXTURE_VARIANT_ADD(remote, send_no_recv) {
	.op = IBV_WR_SEND, .fault = XE_NO_RECV, .req = IBV_WC_SUCCESS,
	.r1 = -1, .le = 0x12, .ec = 0x02,
	.req_ev = IBV_EVENT_QP_FATAL, .rsp_ev = IBV_EVENT_QP_FATAL,
};
/* RDMAP-06, TERM-04 0x09. */
FIXTURE_VARIANT_ADD(remote, send_inv_unknown_stag) {
	.op = IBV_WR_SEND_WITH_INV, .fault = XE_INV_UNKNOWN, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_LOC_PROT_ERR, .le = 0x01, .ec = 0x09,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};
FIXTURE_VARIANT_ADD(remote, send_inv_other_pd_stag) {
	.op = IBV_WR_SEND_WITH_INV, .fault = XE_INV_OTHER_PD, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_LOC_PROT_ERR, .le = 0x01, .ec = 0x09,
	.req_ev = IBV_EVENT_QP_ACCESS_ERR, .rsp_ev = IBV_EVENT_QP_ACCESS_ERR,
};

/* The receive's buffer is not the receiver's to write: local, TERM-04. */
FIXTURE_VARIANT_ADD(remote, recv_bad_lkey) {
	.op = IBV_WR_SEND, .fault = XE_RECV_BAD_LKEY, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_LOC_PROT_ERR, .le = 0x00, .ec = 0x00,
	.req_ev = IBV_EVENT_QP_FATAL, .rsp_ev = IBV_EVENT_QP_FATAL,
};
/*
 * The same with two SGEs of one MR, the second past its end (the MR's
 * bounds, checked on receipt). Both SGEs' MR references were taken, so
 * both must go: one left behind is an MR kmemleak reports on the debug
 * kernel (make check-debug).
 */
FIXTURE_VARIANT_ADD(remote, recv_past_mr) {
	.op = IBV_WR_SEND, .fault = XE_RECV_PAST_MR, .req = IBV_WC_SUCCESS,
	.r1 = IBV_WC_LOC_PROT_ERR, .le = 0x00, .ec = 0x00,
	.req_ev = IBV_EVENT_QP_FATAL, .rsp_ev = IBV_EVENT_QP_FATAL,
};

FIXTURE_SETUP(remote)
{
	char why[320];

	if (xr_is_siw())
		XSKIP_SETUP("xiw's error table: not for %s", xr_type());
	ASSERT_EQ(0, xe_open(&self->x, true, why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(remote)
{
	xe_close(&self->x);
}

/* The remote address and STag the faulty WR names. */
static void xe_target(struct __test_metadata *_metadata, struct xe_conn *x,
		      const FIXTURE_VARIANT(remote) *v, uint64_t *raddr,
		      uint32_t *rkey)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_WRITE;

	*raddr = (uintptr_t)x->s->buf;
	*rkey = x->s->mr->rkey;
	switch (v->fault) {
	case XE_BAD_STAG:
		*rkey ^= 0x5a;		/* same index, another key */
		break;
	case XE_BOUNDS:
		*raddr += x->s->mr->length - XE_MSG / 2;
		break;
	case XE_NO_RIGHTS:
		rights &= v->op == IBV_WR_RDMA_READ ? ~IBV_ACCESS_REMOTE_READ :
			  ~IBV_ACCESS_REMOTE_WRITE;
		x->mr2 = ibv_reg_mr(x->s->pd, x->s->buf, 4096, rights);
		ASSERT_NE(NULL, x->mr2);
		*rkey = x->mr2->rkey;
		break;
	case XE_INV_UNKNOWN:
		*rkey = x->s->mr->rkey ^ 0x5a;
		break;
	case XE_INV_OTHER_PD:
		x->pd2 = ibv_alloc_pd(x->s->id->verbs);
		ASSERT_NE(NULL, x->pd2);
		x->mr2 = ibv_reg_mr(x->pd2, x->s->buf, 4096, rights);
		ASSERT_NE(NULL, x->mr2);
		*rkey = x->mr2->rkey;
		break;
	default:
		break;
	}
}

TEST_F(remote, outcome)
{
	struct xe_conn *x = &self->x;
	struct xr_side *c = x->c, *s = x->s;
	struct ibv_sge g = xr_sge(c, 0, XE_MSG);
	struct ibv_send_wr wr = {
		.wr_id = 0x10, .sg_list = &g, .num_sge = 1,
		.opcode = variant->op, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	struct ibv_wc wc;
	uint8_t le = 0, ec = 0;
	uint64_t raddr;
	uint32_t rkey;
	int st, rc;

	xe_target(_metadata, x, variant, &raddr, &rkey);
	xr_fill(c->buf, 4096, 0x1234);
	/* A Read's source is not zero: a Read that wrongly ran shows. */
	if (variant->op == IBV_WR_RDMA_READ) {
		xr_fill(s->buf, 4096, 0x4321);
		xr_fill(s->buf + XE_BUFLEN - 4096, 4096, 0x4322);
	}
	/* Server: R1 for the faulty message or the Send after it, R2. */
	if (variant->r1 >= 0) {
		struct ibv_sge r[2] = {
			xr_sge(s, 4096, variant->fault == XE_SMALL_RECV ?
			       8 : 4096),
			xr_sge(s, XE_BUFLEN - 1024, 4096),
		};

		if (variant->fault == XE_RECV_BAD_LKEY)
			r[0].lkey ^= 0x5a;
		ASSERT_EQ(0, xr_recv_sgl(s, 0x51, r,
					 variant->fault == XE_RECV_PAST_MR ?
					 2 : 1));
		ASSERT_EQ(0, xr_recv(s, 0x52, XE_SINK, 4096));
	}
	if (variant->op == IBV_WR_RDMA_READ)
		g = xr_sge(c, XE_SINK, XE_MSG);
	if (variant->op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(c->qp, &wr, &bad));
	/* S2: would land in R1 or R2 were the connection still up. */
	ASSERT_EQ(0, xr_post(c, IBV_WR_SEND, 0x20, 0, XE_MSG, 0, NULL, 0));

	EXPECT_WC(c->cq, 0x10, variant->req);
	/* Sent before the Terminate came back, or flushed after it. */
	st = xe_status(c->cq, 0x20, XR_WAIT_MS, &wc);
	EXPECT_TRUE(st == IBV_WC_SUCCESS || st == IBV_WC_WR_FLUSH_ERR)
		TH_LOG("S2: %s", st == -1 ? "no completion" : xr_wc_str(&wc));
	if (variant->r1 >= 0) {
		EXPECT_WC(s->cq, 0x51, variant->r1);
		EXPECT_WC(s->cq, 0x52, IBV_WC_WR_FLUSH_ERR);
	}
	/* V-07 on the end that detected it and on the one that caused it. */
	EXPECT_TRUE(xe_wait(&x->ev, s->qp, variant->rsp_ev, XE_EV_MS))
		TH_LOG("server: want %s; events: %s",
		       ibv_event_type_str(variant->rsp_ev),
		       xe_events_str(&x->ev, c->qp, s->qp));
	EXPECT_TRUE(xe_wait(&x->ev, c->qp, variant->req_ev, XE_EV_MS))
		TH_LOG("client: want %s; events: %s",
		       ibv_event_type_str(variant->req_ev),
		       xe_events_str(&x->ev, c->qp, s->qp));

	xe_after(_metadata, x);

	/* DDP-09: nothing placed after (or for) the refused message. */
	EXPECT_TRUE(xe_zero(s->buf, XE_SINK, 4096)) TH_LOG("R2 was written");
	if (variant->op == IBV_WR_RDMA_WRITE)
		EXPECT_TRUE(xe_zero(s->buf, 0, XE_BUFLEN)) TH_LOG("Write placed");
	if (variant->op == IBV_WR_RDMA_READ)
		EXPECT_TRUE(xe_zero(c->buf, XE_SINK, 4096)) TH_LOG("Read placed");
	if (variant->fault == XE_SMALL_RECV ||
	    variant->fault == XE_RECV_BAD_LKEY)
		EXPECT_TRUE(xe_zero(s->buf, 4096, 4096)) TH_LOG("too much placed");

	/* TERM-01/05: one Terminate from the server, none answering it. */
	usleep(200 * 1000);
	rc = xe_term(x->cap, true, &le, &ec);
	ASSERT_EQ(1, rc) TH_LOG("no Terminate from the server (%d)", rc);
	EXPECT_EQ(variant->le, le) TH_LOG("layer|etype %#04x, ecode %#04x", le, ec);
	EXPECT_EQ(variant->ec, ec) TH_LOG("layer|etype %#04x, ecode %#04x", le, ec);
	EXPECT_EQ(0, xe_term(x->cap, false, &le, &ec))
		TH_LOG("the client answered with Terminate %#04x/%#04x", le, ec);
}

/* ---- errors at one end, and connection loss ---- */

FIXTURE(conn) {
	struct xe_conn x;
};

FIXTURE_SETUP(conn)
{
	char why[320];

	if (xr_is_siw())
		XSKIP_SETUP("xiw's error table: not for %s", xr_type());
	ASSERT_EQ(0, xe_open(&self->x, true, why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(conn)
{
	sh("tc qdisc del dev lo ingress >/dev/null 2>&1");
	xe_close(&self->x);
}

/*
 * V-02: a Send whose lkey is bad, then one that is fine: the first ends
 * LOC_PROT_ERR (signalled or not), the second flushes; the connection is
 * aborted, so the server's receives flush and it hears DISCONNECTED.
 */
static void xe_local(struct __test_metadata *_metadata, struct xe_conn *x,
		     uint32_t lkey)
{
	struct ibv_sge g = xr_sge(x->c, 0, XE_MSG);
	struct ibv_send_wr wr = {
		.wr_id = 0x10, .sg_list = &g, .num_sge = 1,
		.opcode = IBV_WR_SEND,	/* not signalled: reported anyway */
	}, *bad = NULL;

	g.lkey = lkey;
	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	ASSERT_EQ(0, ibv_post_send(x->c->qp, &wr, &bad));
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_SEND, 0x20, 0, XE_MSG, 0, NULL, 0));
	EXPECT_WC(x->c->cq, 0x10, IBV_WC_LOC_PROT_ERR);
	EXPECT_WC(x->c->cq, 0x20, IBV_WC_WR_FLUSH_ERR);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_WR_FLUSH_ERR);
	EXPECT_TRUE(xe_wait(&x->ev, x->c->qp, IBV_EVENT_QP_FATAL, XE_EV_MS))
		TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp, x->s->qp));
	xe_after(_metadata, x);
	EXPECT_TRUE(xe_zero(x->s->buf, 0, 4096)) TH_LOG("a Send was delivered");
}

TEST_F(conn, local_bad_lkey)
{
	xe_local(_metadata, &self->x, self->x.c->mr->lkey ^ 0x5a);
}

TEST_F(conn, local_pd_mismatch)
{
	struct xe_conn *x = &self->x;

	x->pd2 = ibv_alloc_pd(x->c->id->verbs);
	ASSERT_NE(NULL, x->pd2);
	x->mr2 = ibv_reg_mr(x->pd2, x->c->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, x->mr2);
	xe_local(_metadata, x, x->mr2->lkey);
}

/* V-02: a local source beyond its MR: LOC_PROT_ERR as well. */
TEST_F(conn, local_sge_out_of_mr)
{
	struct xe_conn *x = &self->x;
	struct ibv_sge g = xr_sge(x->c, XE_BUFLEN - 16, XE_MSG);
	struct ibv_send_wr wr = {
		.wr_id = 0x10, .sg_list = &g, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	ASSERT_EQ(0, ibv_post_send(x->c->qp, &wr, &bad));
	EXPECT_WC(x->c->cq, 0x10, IBV_WC_LOC_PROT_ERR);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_WR_FLUSH_ERR);
	EXPECT_TRUE(xe_wait(&x->ev, x->c->qp, IBV_EVENT_QP_FATAL, XE_EV_MS))
		TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp, x->s->qp));
	xe_after(_metadata, x);
}

/* One port counter of the (only) device; -1 if unreadable. */
static long long xe_ctr(struct xe_conn *x, const char *name)
{
	return xr_port_counter(x->link.ibdev, name);
}

/*
 * A Send or Write from two SGEs of 1 GiB each over the same 1 GiB MR
 * (one huge page, else 4 MiB, of a memfd mapped over and over);
 * second_len is the second SGE's length. Registers and posts it (not
 * signalled: a local error is reported anyway, V-02) and a plain Send
 * after it.
 */
static void xe_post_big(struct __test_metadata *_metadata, struct xe_conn *x,
			enum ibv_wr_opcode op, uint32_t second_len,
			struct xe_big *b)
{
	struct ibv_sge g[2];
	struct ibv_send_wr wr = {
		.wr_id = 0x10, .sg_list = g, .num_sge = 2, .opcode = op,
	}, *bad = NULL;
	long long t = now_ms();
	char was[32] = "";

	/* One more huge page than there is now, given back at the end. */
	if (read_text(XE_NR_HUGE, was, sizeof(was)) > 0 &&
	    !sh("echo %d > " XE_NR_HUGE, atoi(was) + 1)) {
		snprintf(b->nr_huge, sizeof(b->nr_huge), "%s", was);
		b->region = xe_alias_region(XE_GIB, true);
	}
	TH_LOG("1 GiB of address space on %s",
	       b->region ? "one huge page" : "4 MiB of 4 KiB pages");
	if (!b->region)
		b->region = xe_alias_region(XE_GIB, false);
	ASSERT_NE(NULL, b->region) TH_LOG("alias region: %s", strerror(errno));
	b->mr = ibv_reg_mr(x->c->pd, b->region, XE_GIB, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, b->mr) TH_LOG("ibv_reg_mr 1 GiB: %s", strerror(errno));
	TH_LOG("registered in %lld ms", now_ms() - t);
	g[0] = (struct ibv_sge){ .addr = (uintptr_t)b->region,
				 .length = XE_GIB, .lkey = b->mr->lkey };
	g[1] = g[0];
	g[1].length = second_len;
	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)x->s->buf;
		wr.wr.rdma.rkey = x->s->mr->rkey;
	}
	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	ASSERT_EQ(0, ibv_post_send(x->c->qp, &wr, &bad));
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_SEND, 0x20, 0, XE_MSG, 0, NULL, 0));
}

/*
 * V-02: a message over 2^31 - 1 bytes (two SGEs of 2^30, checked
 * against their MR first, then summed: xiw_tx_sges). That WR completes
 * LOC_LEN_ERR, then as for a bad lkey: the next one flushes, QP_FATAL,
 * nothing goes on the wire (no Terminate, nothing delivered), the
 * server's receive flushes, DISCONNECTED on both ends. On the one
 * device of both ends: req_cqe_error +1, no Terminate counted.
 */
static void xe_over_2g(struct __test_metadata *_metadata, struct xe_conn *x,
		       enum ibv_wr_opcode op)
{
	long long e0 = xe_ctr(x, "req_cqe_error"),
		  f0 = xe_ctr(x, "req_cqe_flush_error"),
		  r0 = xe_ctr(x, "resp_cqe_flush_error"),
		  t0 = xe_ctr(x, "tx_terminate_rdmap") +
		       xe_ctr(x, "tx_terminate_ddp") + xe_ctr(x, "tx_terminate_llp");
	struct xe_big *b = &x->big;
	uint8_t le = 0, ec = 0;
	long long t = now_ms();

	ASSERT_LE(0, e0) TH_LOG("no hw_counters on %s", x->link.ibdev);
	xe_post_big(_metadata, x, op, XE_GIB, b);
	EXPECT_WC(x->c->cq, 0x10, IBV_WC_LOC_LEN_ERR);
	EXPECT_WC(x->c->cq, 0x20, IBV_WC_WR_FLUSH_ERR);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_WR_FLUSH_ERR);
	EXPECT_TRUE(xe_wait(&x->ev, x->c->qp, IBV_EVENT_QP_FATAL, XE_EV_MS))
		TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp, x->s->qp));
	EXPECT_EQ(1, xe_ctr(x, "req_cqe_error") - e0);
	EXPECT_EQ(1, xe_ctr(x, "req_cqe_flush_error") - f0);
	EXPECT_LE(1, xe_ctr(x, "resp_cqe_flush_error") - r0);
	xe_after(_metadata, x);
	EXPECT_EQ(0, xe_ctr(x, "tx_terminate_rdmap") +
		  xe_ctr(x, "tx_terminate_ddp") +
		  xe_ctr(x, "tx_terminate_llp") - t0);
	EXPECT_EQ(0, xe_term(x->cap, false, &le, &ec))
		TH_LOG("the client sent Terminate %#x/%#x", le, ec);
	EXPECT_TRUE(xe_zero(x->s->buf, 0, XE_BUFLEN)) TH_LOG("bytes placed");
	TH_LOG("%lld ms", now_ms() - t);
}

TEST_F_TIMEOUT(conn, local_message_over_2g, 120)
{
	xe_over_2g(_metadata, &self->x, IBV_WR_SEND);
}

TEST_F_TIMEOUT(conn, local_write_over_2g, 120)
{
	xe_over_2g(_metadata, &self->x, IBV_WR_RDMA_WRITE);
}

/*
 * The control of the two above: 2^30 + 2^30 - 1 = 2^31 - 1 bytes pass
 * the length check and go on the wire. Sending 2 GiB under TCG takes too
 * long, so the server's receive is 4096 bytes: the first FPDU already
 * overruns it, the server answers Terminate 0x12/0x05 (V-03) and its
 * receive completes LOC_LEN_ERR: proof that the message was sent. The
 * Send itself completes with anything but LOC_LEN_ERR.
 */
TEST_F_TIMEOUT(conn, local_message_2g_minus_1_sent, 120)
{
	struct xe_conn *x = &self->x;
	uint8_t le = 0, ec = 0;
	struct ibv_wc wc = { 0 };
	long long t = now_ms();
	int st;

	xe_post_big(_metadata, x, IBV_WR_SEND, XE_GIB - 1, &x->big);
	st = xe_status(x->c->cq, 0x10, XR_WAIT_MS, &wc);
	EXPECT_LE(0, st) TH_LOG("%s", st == -1 ? "no completion" : xr_wc_str(&wc));
	EXPECT_NE(IBV_WC_LOC_LEN_ERR, st) TH_LOG("2^31 - 1 bytes refused");
	TH_LOG("the Send of 2^31 - 1 bytes: %s", xr_wc_str(&wc));
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_LOC_LEN_ERR);
	EXPECT_EQ(1, xe_term(x->cap, true, &le, &ec));
	EXPECT_EQ(0x12, le);
	EXPECT_EQ(0x05, ec);
	TH_LOG("%lld ms", now_ms() - t);
}

/*
 * Requests the provider cannot carry are refused at post time (EINVAL,
 * bad_wr set), complete nothing and leave the connection up.
 */
TEST_F(conn, local_length_refused_at_post)
{
	struct xe_conn *x = &self->x;
	struct ibv_sge g[3] = { xr_sge(x->c, 0, 8), xr_sge(x->c, 8, 8),
				xr_sge(x->c, 16, 8) };
	struct ibv_send_wr wr = {
		.wr_id = 0x10, .sg_list = g, .num_sge = 3,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	static uint8_t big[65536];
	struct ibv_wc wc;

	/* 3 SGEs on a QP created with max_send_sge 2 */
	EXPECT_EQ(EINVAL, ibv_post_send(x->c->qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	/* inline data beyond max_inline_data */
	g[0].addr = (uintptr_t)big;
	g[0].length = sizeof(big);
	wr.num_sge = 1;
	wr.send_flags |= IBV_SEND_INLINE;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(x->c->qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(0, xr_poll(x->c->cq, &wc, 1, 200));
	/* still connected */
	xr_fill(x->c->buf, XE_MSG, 7);
	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_SEND, 0x20, 0, XE_MSG, 0, NULL, 0));
	EXPECT_WC(x->c->cq, 0x20, IBV_WC_SUCCESS);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_SUCCESS);
	EXPECT_EQ(-1, xr_check(x->s->buf, XE_MSG, 7));
	xe_events_read(&x->ev, 200);
	EXPECT_EQ(0, x->ev.n)
		TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp, x->s->qp));
}

/*
 * V-01: the client's QP moved to ERR by the consumer: its outstanding
 * receive and every later post flush at once; the connection is aborted
 * and the server's receive flushes too.
 */
TEST_F(conn, post_to_error_qp)
{
	struct xe_conn *x = &self->x;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	ASSERT_EQ(0, xr_recv(x->c, 0x41, 0, 4096));
	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	ASSERT_EQ(0, ibv_modify_qp(x->c->qp, &a, IBV_QP_STATE));
	EXPECT_WC(x->c->cq, 0x41, IBV_WC_WR_FLUSH_ERR);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_RDMA_READ, 0x42, 0, XE_MSG, 0,
			     x->s, 0));
	EXPECT_WC(x->c->cq, 0x42, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(0, xr_recv(x->c, 0x43, 0, 4096));
	EXPECT_WC(x->c->cq, 0x43, IBV_WC_WR_FLUSH_ERR);
	xe_after(_metadata, x);
}

/*
 * V-06: the peer vanishes without FIN or RST (every packet of the
 * connection dropped on lo's ingress): the outstanding Read ends
 * RETRY_EXC_ERR or flushed, the receive flushed, and DISCONNECTED comes
 * within the bound of xiw_cm_sock.c: TCP_USER_TIMEOUT ka_idle_s + 15 s.
 */
TEST_F_TIMEOUT(conn, peer_vanished, 90)
{
	struct xe_conn *x = &self->x;
	int port = ntohs(x->net.addr.sin_port);
	long long t0, dt, bound = (XE_KA_IDLE_S + 15) * 1000LL;
	struct ibv_wc wc[2];
	int st, i;

	if (sh("modprobe -a sch_ingress cls_u32 act_gact && "
	       "tc qdisc add dev lo ingress && "
	       "tc filter add dev lo parent ffff: protocol ip prio 1 u32 "
	       "match ip dport %d 0xffff action drop && "
	       "tc filter add dev lo parent ffff: protocol ip prio 2 u32 "
	       "match ip sport %d 0xffff action drop", port, port))
		SKIP(return, "no tc ingress drop on lo");
	t0 = now_ms();
	ASSERT_EQ(0, xr_recv(x->c, 0x41, 0, 4096));
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_RDMA_READ, 0x42, XE_SINK, XE_MSG, 0,
			     x->s, 0));
	ASSERT_TRUE(xr_wait_cm(x->net.cch, x->c->id, RDMA_CM_EVENT_DISCONNECTED,
			       (int)bound + 10000, NULL))
		TH_LOG("client: no DISCONNECTED in %lld ms", bound + 10000);
	dt = now_ms() - t0;
	TH_LOG("client DISCONNECTED after %lld ms (bound %lld ms)", dt, bound);
	EXPECT_GE(bound + 3000, dt);
	/* One CQ for both queues: the flushes come in either order. */
	ASSERT_EQ(2, xr_poll(x->c->cq, wc, 2, XR_WAIT_MS));
	for (i = 0; i < 2; i++) {
		st = wc[i].status;
		if (wc[i].wr_id == 0x41) {
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, st)
				TH_LOG("receive: %s", xr_wc_str(&wc[i]));
		} else {
			EXPECT_TRUE(st == IBV_WC_RETRY_EXC_ERR ||
				    st == IBV_WC_WR_FLUSH_ERR)
				TH_LOG("Read: %s", xr_wc_str(&wc[i]));
		}
	}
	EXPECT_TRUE(xr_wait_cm(x->net.sch, x->s->id, RDMA_CM_EVENT_DISCONNECTED,
			       10000, NULL)) TH_LOG("server: no DISCONNECTED");
	EXPECT_TRUE(xe_zero(x->c->buf, XE_SINK, 4096)) TH_LOG("Read placed");
}

/*
 * Link (netdev) down: the port goes down (PORT_ERR) and comes back
 * (PORT_ACTIVE); a connection is TCP's to keep, so a flap shorter than
 * the TCP user timeout loses nothing: the Send posted while the link was
 * down arrives once it is up. (Down for longer: as peer_vanished.)
 */
TEST_F(conn, link_flap_keeps_connection)
{
	struct xe_conn *x = &self->x;
	int i;

	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	ASSERT_EQ(0, sh("ip link set %s down", x->link.netdev));
	EXPECT_TRUE(xe_wait(&x->ev, NULL, IBV_EVENT_PORT_ERR, XE_EV_MS))
		TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp, x->s->qp));
	xr_fill(x->c->buf, XE_MSG, 9);
	ASSERT_EQ(0, xr_post(x->c, IBV_WR_SEND, 0x20, 0, XE_MSG, 0, NULL, 0));
	usleep(300 * 1000);
	ASSERT_EQ(0, sh("ip link set %s up", x->link.netdev));
	EXPECT_TRUE(xe_wait(&x->ev, NULL, IBV_EVENT_PORT_ACTIVE, XE_EV_MS))
		TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp, x->s->qp));
	EXPECT_WC(x->c->cq, 0x20, IBV_WC_SUCCESS);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_SUCCESS);
	EXPECT_EQ(-1, xr_check(x->s->buf, XE_MSG, 9));
	for (i = 0; i < x->ev.n; i++)
		EXPECT_EQ(NULL, x->ev.ev[i].qp)
			TH_LOG("events: %s", xe_events_str(&x->ev, x->c->qp,
							   x->s->qp));
}

/* ---- connection set-up failures, through rdma_cm events ---- */

FIXTURE(setup) {
	struct xe_conn x;
	int lfd;
};

FIXTURE_SETUP(setup)
{
	char why[320];

	self->lfd = -1;
	if (xr_is_siw())
		XSKIP_SETUP("xiw's error table: not for %s", xr_type());
	ASSERT_EQ(0, xe_open(&self->x, false, why, sizeof(why))) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(setup)
{
	if (self->lfd >= 0)
		close(self->lfd);
	xe_close(&self->x);
}

/* Client id to addr, resolved and with its QP; connect with pdata. */
static int xe_client(struct xe_conn *x, struct sockaddr_in *addr,
		     const void *pd, uint8_t pd_len)
{
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 1 };
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .private_data = pd,
				      .private_data_len = pd_len };
	struct rdma_cm_id *id;

	if (rdma_create_id(x->net.cch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)addr, 2000))
		return -1;
	x->p.cli.id = id;
	if (!xr_wait_cm(x->net.cch, id, RDMA_CM_EVENT_ADDR_RESOLVED, 5000, NULL) ||
	    rdma_resolve_route(id, 2000) ||
	    !xr_wait_cm(x->net.cch, id, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000, NULL))
		return -2;
	x->p.cli.id = NULL;
	if (xr_side_init(&x->net, &x->p.cli, id, &o))
		return -3;
	return rdma_connect(id, &cp) ? -4 : 0;
}

/* MPA reject with private data: REJECTED at the client, bytes intact. */
TEST_F(setup, mpa_reject_private_data)
{
	static const char why[] = "xiw errors: go away";
	struct xe_conn *x = &self->x;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *req = NULL;
	long long end;
	bool rejected = false;
	struct xm_frame rep;

	ASSERT_EQ(0, xe_client(x, &x->net.addr, "hello", 6));
	ev = xr_get_event(x->net.sch, XR_WAIT_MS);
	ASSERT_NE(NULL, ev);
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, ev->event)
		TH_LOG("server: %s", rdma_event_str(ev->event));
	req = ev->id;
	EXPECT_EQ(0, rdma_reject(req, why, sizeof(why)));
	rdma_ack_cm_event(ev);
	end = now_ms() + XR_WAIT_MS;
	while (!rejected && now_ms() < end) {
		ev = xr_get_event(x->net.cch, (int)(end - now_ms()));
		if (!ev)
			continue;
		if (ev->event == RDMA_CM_EVENT_REJECTED) {
			rejected = true;
			EXPECT_NE(0, ev->status);
			EXPECT_LE(sizeof(why), ev->param.conn.private_data_len);
			if (ev->param.conn.private_data &&
			    ev->param.conn.private_data_len >= sizeof(why))
				EXPECT_EQ(0, memcmp(why, ev->param.conn.private_data,
						    sizeof(why)));
			TH_LOG("REJECTED, status %d, %u bytes of private data",
			       ev->status, ev->param.conn.private_data_len);
		} else {
			TH_LOG("client: %s (status %d)", rdma_event_str(ev->event),
			       ev->status);
		}
		rdma_ack_cm_event(ev);
	}
	EXPECT_TRUE(rejected);
	rdma_destroy_id(req);
	/* MPA-06: the Reply frame on the wire has R set. */
	usleep(100 * 1000);
	xm_cap_drain(x->cap);
	rep = xm_frame(&x->cap->rsp, "MPA ID Rep Frame");
	ASSERT_TRUE(rep.ok) TH_LOG("no MPA Reply captured");
	EXPECT_TRUE(rep.flags & XM_F_R) TH_LOG("flags %#x", rep.flags);
	EXPECT_FALSE(xr_wait_cm(x->net.sch, NULL, RDMA_CM_EVENT_ESTABLISHED,
				200, NULL));
}

/*
 * MPA start-up timeout: a TCP listener that takes the connection and
 * never answers the MPA Request. After mpa_timeout_ms the client hears
 * UNREACHABLE with -ETIMEDOUT (iw_cm's CONNECT_REPLY -ETIMEDOUT).
 */
TEST_F(setup, mpa_startup_timeout)
{
	struct xe_conn *x = &self->x;
	struct sockaddr_in a = x->net.addr;
	socklen_t al = sizeof(a);
	struct rdma_cm_event *ev;
	int event = -1, status = 0;
	long long t0, dt;
	struct xm_frame req;

	a.sin_port = 0;
	self->lfd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, self->lfd);
	ASSERT_EQ(0, bind(self->lfd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(self->lfd, 4));
	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&a, &al));
	x->cap->lport = ntohs(a.sin_port);
	t0 = now_ms();
	ASSERT_EQ(0, xe_client(x, &a, NULL, 0));
	ev = xr_get_event(x->net.cch, XE_MPA_TMO_MS + 10000);
	dt = now_ms() - t0;
	if (ev) {
		event = ev->event;
		status = ev->status;
		rdma_ack_cm_event(ev);
	}
	ASSERT_EQ(RDMA_CM_EVENT_UNREACHABLE, event)
		TH_LOG("got %s status %d after %lld ms",
		       event < 0 ? "nothing" : rdma_event_str(event), status, dt);
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_LE(XE_MPA_TMO_MS - 100, dt);
	EXPECT_GE(XE_MPA_TMO_MS + 3000, dt);
	xm_cap_drain(x->cap);
	req = xm_frame(&x->cap->ini, "MPA ID Req Frame");
	EXPECT_TRUE(req.ok) TH_LOG("no MPA Request captured");
}

/*
 * The peer process of a connection is killed (SIGKILL): the kernel
 * destroys its QP, which aborts the connection. The surviving end hears
 * DISCONNECTED and its outstanding receive flushes. The peer is this
 * program run again with XE_PEER_PORT set (xe_peer_main).
 */
TEST_F(setup, peer_killed)
{
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 1 };
	struct xe_conn *x = &self->x;
	struct pollfd pf;
	struct rdma_cm_event *ev;
	char port[16], up[8] = "";
	long long end, t0;
	int fd[2], st;
	pid_t pid;

	ASSERT_EQ(0, pipe(fd));
	snprintf(port, sizeof(port), "%u", ntohs(x->net.addr.sin_port));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(fd[1], 1);
		setenv("XE_PEER_PORT", port, 1);
		execl("/proc/self/exe", "xiw_errors_peer", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	end = now_ms() + XR_WAIT_MS;
	while (!x->p.srv.established && now_ms() < end) {
		ev = xr_get_event(x->net.sch, (int)(end - now_ms()));
		if (!ev)
			continue;
		st = xr_srv_event(&x->net, &x->p, 1, &o, ev);
		rdma_ack_cm_event(ev);
		if (st)
			break;
	}
	pf.fd = fd[0];
	pf.events = POLLIN;
	if (!x->p.srv.established || poll(&pf, 1, XR_WAIT_MS) <= 0 ||
	    read(fd[0], up, sizeof(up) - 1) <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(fd[0]);
		ASSERT_TRUE(false) TH_LOG("peer not connected: %s", x->net.err);
	}
	close(fd[0]);
	x->s = &x->p.srv;
	x->ev.ctx = x->s->id->verbs;
	ASSERT_EQ(0, xr_recv(x->s, 0x51, 0, 4096));
	t0 = now_ms();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(xr_wait_cm(x->net.sch, x->s->id, RDMA_CM_EVENT_DISCONNECTED,
			       XR_WAIT_MS, NULL)) TH_LOG("server: no DISCONNECTED");
	TH_LOG("DISCONNECTED %lld ms after the kill", now_ms() - t0);
	EXPECT_WC(x->s->cq, 0x51, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(0, xr_recv(x->s, 0x52, 0, 4096));
	EXPECT_WC(x->s->cq, 0x52, IBV_WC_WR_FLUSH_ERR);
	xe_events_read(&x->ev, 100);
	TH_LOG("events: %s", xe_events_str(&x->ev, NULL, x->s->qp));
}

/*
 * The peer of peer_killed, run before the harness: connect to
 * 10.99.0.1:$XE_PEER_PORT, post a receive, say "up", wait to be killed.
 */
static void __attribute__((constructor)) xe_peer_main(void)
{
	const char *port = getenv("XE_PEER_PORT");
	struct sockaddr_in a = { .sin_family = AF_INET };
	static struct xe_conn x;

	if (!port)
		return;
	a.sin_port = htons((uint16_t)atoi(port));
	inet_pton(AF_INET, XR_ADDR, &a.sin_addr);
	xr_unlimit_memlock();
	x.net.cch = rdma_create_event_channel();
	if (!x.net.cch || xe_client(&x, &a, NULL, 0) ||
	    !xr_wait_cm(x.net.cch, x.p.cli.id, RDMA_CM_EVENT_ESTABLISHED,
			XR_WAIT_MS, NULL) ||
	    xr_recv(&x.p.cli, 0x61, 0, 4096))
		_exit(1);
	if (write(1, "up\n", 3) != 3)
		_exit(1);
	for (;;)
		pause();
}

static void __attribute__((destructor)) purge(void)
{
	sh("tc qdisc del dev lo ingress >/dev/null 2>&1");
	if (path_exists(XM_PARAMS)) {
		xm_param_set("ka_idle_s", 30);
		xm_param_set("mpa_timeout_ms", 10000);
	}
	xr_link_purge();
}

TEST_HARNESS_MAIN
