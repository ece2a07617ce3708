// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Teardown under traffic, in rounds: connected RC QPs carry 64 KiB RDMA
 * Writes, Reads and Sends both ways, and while they do the device goes
 * in one of five ways: "rdma link delete", the removal of its netdev,
 * rmmod of xiw, the exit of the network namespace it lives in (its
 * processes killed), or kill -9 of the processes that post. The other
 * end is xiw (a second process) or the independent wire peer
 * (xiw-wirepeer, one process a connection, as responder). Between xiw
 * ends each side's Writes and Reads go through memory windows of the
 * other's (type 1 and type 2 by turns), so that windows are torn down
 * with traffic on them too.
 *
 * The traffic comes from child processes that post all the time and
 * check what completes: each Read brings back the remote's pattern (the
 * wire peer answers with zeros), each receive holds the sender's. A
 * completion error, a failed post or a CM or async event ends a
 * generator's traffic once the teardown has begun; before it, any of
 * them fails the round. After each round: every process gone within a
 * bound (one in D state is a hang), the wire peers' connections ended,
 * "rdma res" shows nothing left on the device, no TCP connection of the
 * test address established or in CLOSE-WAIT, xiw's module count back
 * at 0, xiw unloads and loads again, and the kernel log since the round
 * began has no report (scripts/lib.sh klog-scan).
 *
 * XIW_SOAK_ROUNDS (default 1) rounds each; XIW_SOAK_QPS (default 8, at
 * most 16) connections a round.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/klog.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
/*
 * Connecting 8 or 16 QPs took more than 10 s on the debug kernel under
 * TCG with the host's two cores shared by three guests.
 */
#define XR_WAIT_MS	60000
#include "xiw_rdma_util.h"

#define XS_NETDEV	"xs0"
#define XS_IBDEV	"xiwS0"
#define XS_ADDR		"10.96.0.1"
#define XS_NS		"xsns"
#define XS_MSG		(64 << 10)
#define XS_MAXQP	16
#define XS_PEER_PORT	19400	/* wire peer i listens on this + i */
/* Buffer slots of XS_MSG bytes, the same on every end. */
enum { XS_SSRC, XS_RSRC, XS_WSRC, XS_RSINK, XS_WSINK, XS_RECV0 };
#define XS_RECVS	32	/* receives posted per QP */
#define XS_SLOTS	(XS_RECV0 + XS_RECVS)
#define XS_SENDS	2	/* Sends in flight per QP */
/* Bounds: traffic up, a process gone, the device gone, a round. */
#define XS_UP_MS	60000
#define XS_EXIT_MS	30000
#define XS_GONE_MS	30000
#define XS_ROUND_S	120
#define XS_GEN_MAX_MS	300000	/* a generator that sees no teardown */

enum { XS_SRV, XS_CLI };
enum { XS_STARTING, XS_RUNNING, XS_TORN };
enum xs_kind { XS_LINK_DELETE, XS_NETDEV_DEL, XS_RMMOD, XS_NETNS, XS_KILL9 };
/* A generator's exit status. */
enum { XS_EXIT_OK, XS_EXIT_BAD_DATA = 2, XS_EXIT_SETUP, XS_EXIT_NO_END };
/* wr_id of what an end sends: the kind, and the slot for receives. */
enum { XS_OP_WRITE = 1 << 8, XS_OP_READ = 2 << 8, XS_OP_SEND = 3 << 8 };

/* What one generator did, in memory shared with the test. */
struct xs_stat {
	long ops[4];	/* completed: writes, reads, sends, receives */
	long bad;	/* completions whose length or bytes were wrong */
	long errs;	/* completions with an error status */
	int state;
	char why[192];	/* its first failure, or how the teardown showed */
};

struct xs_shm {
	int port;	/* the server's listener, network order */
	uint64_t addr[2][XS_MAXQP];
	uint32_t rkey[2][XS_MAXQP];
	int ready[2];
	/* Receives end e of pair i has posted and no Send used yet. */
	int credit[2][XS_MAXQP];
	struct xs_stat st[2];
};

/* One generator's view of its ends. */
struct xs_gen {
	struct xs_shm *m;
	struct xs_stat *st;
	struct xr_pair p[XS_MAXQP];
	struct xr_net net;
	int end, qps;
	bool peer;	/* the other ends are wire peers */
	bool connected;	/* every pair is (xs_early_rx() stops) */
	bool torn;
	int inflight[XS_MAXQP][3];	/* writes, reads, sends */
	struct ibv_mr *bmr[XS_MAXQP];	/* the buffer, for binding */
	struct ibv_mw *mw[XS_MAXQP];	/* the window the other end uses */
};

static int xs_env(const char *name, int def, int max)
{
	const char *e = getenv(name);
	int v = e && *e ? atoi(e) : def;

	return v < 1 ? 1 : v > max ? max : v;
}

static int xs_rounds(void)
{
	return xs_env("XIW_SOAK_ROUNDS", 1, 100000);
}

static uint64_t xs_seed(int end, int pair, int slot)
{
	return 1000000ULL * (uint64_t)slot + 1000ULL * (uint64_t)end +
	       (uint64_t)pair + 1;
}

static int xs_setns(const char *ns)
{
	char path[64];
	int fd, rc;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

static void __attribute__((format(printf, 2, 3)))
xs_why(struct xs_gen *g, const char *fmt, ...)
{
	va_list ap;

	if (g->st->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(g->st->why, sizeof(g->st->why), fmt, ap);
	va_end(ap);
}

static void xs_tear(struct xs_gen *g, const char *what)
{
	if (!g->torn)
		xs_why(g, "traffic ended by %s", what);
	g->torn = true;
	__atomic_store_n(&g->st->state, XS_TORN, __ATOMIC_RELEASE);
}

static struct xr_side *xs_side(struct xs_gen *g, int i)
{
	return g->end == XS_SRV ? &g->p[i].srv : &g->p[i].cli;
}

/* Post what pair i has room for: a Write, a Read, Sends on credit. */
static void xs_top_up(struct xs_gen *g, int i)
{
	struct xr_side *s = xs_side(g, i);
	int other = !g->end, *credit = &g->m->credit[other][i];
	uint64_t raddr = g->peer ? 0 : g->m->addr[other][i];
	uint32_t rkey = g->peer ? 0x1000 : g->m->rkey[other][i];
	struct ibv_sge sg;

	if (!g->inflight[i][0]) {
		sg = xr_sge(s, XS_WSRC * XS_MSG, XS_MSG);
		if (xr_send_sgl(s, IBV_WR_RDMA_WRITE, XS_OP_WRITE, &sg, 1,
				IBV_SEND_SIGNALED, raddr + XS_WSINK * XS_MSG, rkey))
			return xs_tear(g, "a failed post");
		g->inflight[i][0]++;
	}
	if (!g->inflight[i][1]) {
		memset(s->buf + XS_RSINK * XS_MSG, 0xa5, XS_MSG);
		sg = xr_sge(s, XS_RSINK * XS_MSG, XS_MSG);
		if (xr_send_sgl(s, IBV_WR_RDMA_READ, XS_OP_READ, &sg, 1,
				IBV_SEND_SIGNALED, raddr + XS_RSRC * XS_MSG, rkey))
			return xs_tear(g, "a failed post");
		g->inflight[i][1]++;
	}
	while (g->inflight[i][2] < XS_SENDS) {
		if (!g->peer && __atomic_load_n(credit, __ATOMIC_ACQUIRE) <= 0)
			break;
		if (!g->peer)
			__atomic_sub_fetch(credit, 1, __ATOMIC_ACQ_REL);
		if (xr_post(s, IBV_WR_SEND, XS_OP_SEND, XS_SSRC * XS_MSG, XS_MSG,
			    0, NULL, 0))
			return xs_tear(g, "a failed post");
		g->inflight[i][2]++;
	}
}

/* Is buf what the other end of pair i put in slot? */
static bool xs_data_ok(struct xs_gen *g, int i, const uint8_t *buf, int slot)
{
	static uint8_t ref[XS_MSG];
	static bool ref_made;
	size_t k;

	if (!g->peer)
		return xr_check(buf, XS_MSG, xs_seed(!g->end, i, slot)) < 0;
	/* The wire peer answers Reads with zeros and sends i * 7 + 1. */
	if (!ref_made)
		for (k = 0; k < XS_MSG; k++)
			ref[k] = (uint8_t)(k * 7 + 1);
	ref_made = true;
	if (slot == XS_RSRC)
		return buf[0] == 0 && !memcmp(buf, buf + 1, XS_MSG - 1);
	return !memcmp(buf, ref, XS_MSG);
}

static void xs_completion(struct xs_gen *g, int i, const struct ibv_wc *wc)
{
	struct xr_side *s = xs_side(g, i);
	int op = (int)(wc->wr_id >> 8), slot = (int)(wc->wr_id & 0xff);

	if (wc->status != IBV_WC_SUCCESS) {
		g->st->errs++;
		if (!g->torn)
			xs_why(g, "pair %d: %s", i, xr_wc_str(wc));
		return xs_tear(g, "a completion error");
	}
	if (wc->opcode == IBV_WC_RECV) {
		if (wc->byte_len != XS_MSG ||
		    !xs_data_ok(g, i, s->buf + (size_t)(XS_RECV0 + slot) * XS_MSG,
				XS_SSRC)) {
			g->st->bad++;
			xs_why(g, "pair %d: a receive of %u bytes, not the sender's",
			       i, wc->byte_len);
		}
		g->st->ops[3]++;
		if (g->torn)
			return;
		if (xr_recv(s, wc->wr_id, (size_t)(XS_RECV0 + slot) * XS_MSG,
			    XS_MSG))
			return xs_tear(g, "a failed post");
		__atomic_add_fetch(&g->m->credit[g->end][i], 1, __ATOMIC_ACQ_REL);
		return;
	}
	if (op == 2 && !xs_data_ok(g, i, s->buf + XS_RSINK * XS_MSG, XS_RSRC)) {
		g->st->bad++;
		xs_why(g, "pair %d: a Read brought back other bytes", i);
	}
	if (op >= 1 && op <= 3) {
		g->st->ops[op - 1]++;
		g->inflight[i][op - 1]--;
	}
}

/* CM and async events: any of them, in full operation, ends it. */
static void xs_events(struct xs_gen *g)
{
	struct rdma_event_channel *ch[2] = { g->net.sch, g->net.cch };
	struct ibv_async_event ae;
	struct rdma_cm_event *ev;
	char what[64];
	int k, i;

	for (k = 0; k < 2; k++) {
		while (!rdma_get_cm_event(ch[k], &ev)) {
			snprintf(what, sizeof(what), "CM event %s",
				 rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
			xs_tear(g, what);
		}
	}
	for (i = 0; i < g->qps; i++) {
		struct ibv_context *ctx = xs_side(g, i)->id->verbs;

		if (i && ctx == xs_side(g, i - 1)->id->verbs)
			continue;
		while (!ibv_get_async_event(ctx, &ae)) {
			snprintf(what, sizeof(what), "async event %s",
				 ibv_event_type_str(ae.event_type));
			ibv_ack_async_event(&ae);
			xs_tear(g, what);
		}
	}
}

/* Post and check until the teardown shows, then a moment more. */
static int xs_traffic(struct xs_gen *g)
{
	long long stop = 0, end = now_ms() + XS_GEN_MAX_MS;
	struct ibv_wc wc[16];
	int i, j, n, idle;

	for (i = 0; i < g->qps; i++)
		xr_nonblock(xs_side(g, i)->id->verbs->async_fd);
	if (!g->torn)
		__atomic_store_n(&g->st->state, XS_RUNNING, __ATOMIC_RELEASE);
	for (;;) {
		idle = 1;
		for (i = 0; i < g->qps; i++) {
			if (!g->torn)
				xs_top_up(g, i);
			n = ibv_poll_cq(xs_side(g, i)->cq, 16, wc);
			if (n < 0)
				xs_tear(g, "a failed poll");
			for (j = 0; j < n; j++)
				xs_completion(g, i, &wc[j]);
			if (n > 0)
				idle = 0;
		}
		xs_events(g);
		if (g->torn && !stop)
			stop = now_ms() + 300;
		if (stop && now_ms() >= stop)
			return g->st->bad ? XS_EXIT_BAD_DATA : XS_EXIT_OK;
		if (now_ms() >= end) {
			xs_why(g, "no teardown in %d ms", XS_GEN_MAX_MS);
			return XS_EXIT_NO_END;
		}
		if (idle)
			usleep(500);
	}
}

/*
 * Pair i's window over this end's whole buffer, for the other end's
 * Writes and Reads: its STag, or 0 (why set). Bound before this end says
 * it is ready, so the bind's is the only completion to wait for; any
 * other goes where the traffic's go.
 */
static uint32_t xs_window(struct xs_gen *g, int i)
{
	struct xr_side *s = xs_side(g, i);
	struct ibv_mw_bind_info info = {
		.addr = (uintptr_t)s->buf, .length = (size_t)XS_SLOTS * XS_MSG,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	struct ibv_mw_bind b = {
		.wr_id = 0xb1d, .send_flags = IBV_SEND_SIGNALED,
	};
	long long until = now_ms() + XS_UP_MS;
	struct ibv_wc wc;
	int n, rv;

	g->bmr[i] = ibv_reg_mr(s->pd, s->buf, (size_t)XS_SLOTS * XS_MSG,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!g->bmr[i]) {
		xs_why(g, "ibv_reg_mr for binding: %s", strerror(errno));
		return 0;
	}
	info.mr = g->bmr[i];
	g->mw[i] = ibv_alloc_mw(s->pd, i % 2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
	if (!g->mw[i]) {
		xs_why(g, "ibv_alloc_mw: %s", strerror(errno));
		return 0;
	}
	if (g->mw[i]->type == IBV_MW_TYPE_1) {
		b.bind_info = info;
		rv = ibv_bind_mw(s->qp, g->mw[i], &b);
	} else {
		wr.bind_mw.mw = g->mw[i];
		wr.bind_mw.rkey = ibv_inc_rkey(g->mw[i]->rkey);
		wr.bind_mw.bind_info = info;
		rv = ibv_post_send(s->qp, &wr, &bad);
		if (!rv)
			g->mw[i]->rkey = wr.bind_mw.rkey;
	}
	if (rv) {
		xs_why(g, "binding a window: %s", strerror(rv));
		return 0;
	}
	while (now_ms() < until) {
		n = ibv_poll_cq(s->cq, 1, &wc);
		if (n < 0)
			break;
		if (!n) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id != 0xb1d) {
			xs_completion(g, i, &wc);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			xs_why(g, "window bind: %s", ibv_wc_status_str(wc.status));
			return 0;
		}
		return g->mw[i]->rkey;
	}
	xs_why(g, "no window bind completion in %d ms", XS_UP_MS);
	return 0;
}

/*
 * A wire peer sends as soon as its connection is up, without credits:
 * while the other connections are made (seconds on the debug kernel),
 * the receives of those up are taken and posted again here, or the
 * peer's Sends would find none posted (a Terminate, and the round ends
 * before its teardown).
 */
static void *xs_early_rx(void *arg)
{
	struct xs_gen *g = arg;
	struct ibv_wc wc[16];
	int i, j, n;

	while (!__atomic_load_n(&g->connected, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < g->qps; i++) {
			if (!__atomic_load_n(&g->p[i].cli.established,
					     __ATOMIC_ACQUIRE))
				continue;
			n = ibv_poll_cq(g->p[i].cli.cq, 16, wc);
			for (j = 0; j < n; j++)
				xs_completion(g, i, &wc[j]);
		}
		usleep(1000);
	}
	return NULL;
}

/*
 * A generator: end XS_SRV listens for qps connections, XS_CLI makes them
 * (to the server's port, or to wire peers on XS_PEER_PORT + i).
 */
static void __attribute__((noreturn))
xs_gen_main(struct xs_shm *m, int end, int qps, bool peer, const char *ns,
	    bool tidy)
{
	struct xr_opts o = { .buflen = (size_t)XS_SLOTS * XS_MSG,
			     .wr = XS_RECVS + 8, .sge = 1, .rd_atom = 4,
			     .prepost = XS_RECVS,
			     .prepost_off = (size_t)XS_RECV0 * XS_MSG,
			     .prepost_len = XS_MSG };
	static struct xs_gen g;
	int i, rc = XS_EXIT_SETUP;
	pthread_t early;
	long long until;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	g.m = m;
	g.st = &m->st[end];
	g.end = end;
	g.qps = qps;
	g.peer = peer;
	if (ns && xs_setns(ns)) {
		xs_why(&g, "setns %s: %s", ns, strerror(errno));
		_exit(rc);
	}
	xr_unlimit_memlock();
	if (xr_net_init_at(&g.net, XS_ADDR)) {
		xs_why(&g, "%s", g.net.err);
		_exit(rc);
	}
	if (end == XS_SRV) {
		__atomic_store_n(&m->port, g.net.addr.sin_port, __ATOMIC_RELEASE);
	} else {
		g.net.addr.sin_port = (in_port_t)__atomic_load_n(&m->port,
								 __ATOMIC_ACQUIRE);
		for (i = 0; peer && i < qps; i++) {
			g.p[i].to = g.net.addr;
			g.p[i].to.sin_port = htons(XS_PEER_PORT + i);
		}
	}
	if (peer && pthread_create(&early, NULL, xs_early_rx, &g)) {
		xs_why(&g, "pthread_create: %s", strerror(errno));
		_exit(rc);
	}
	if (xr_connect_ends(&g.net, g.p, qps, &o, end == XS_SRV, end == XS_CLI)) {
		xs_why(&g, "connect: %s", g.net.err);
		_exit(rc);
	}
	__atomic_store_n(&g.connected, true, __ATOMIC_RELEASE);
	if (peer)
		pthread_join(early, NULL);
	for (i = 0; i < qps; i++) {
		struct xr_side *s = xs_side(&g, i);

		xr_fill(s->buf + XS_SSRC * XS_MSG, XS_MSG, xs_seed(end, i, XS_SSRC));
		xr_fill(s->buf + XS_RSRC * XS_MSG, XS_MSG, xs_seed(end, i, XS_RSRC));
		m->addr[end][i] = (uintptr_t)s->buf;
		m->rkey[end][i] = peer ? s->mr->rkey : xs_window(&g, i);
		if (!m->rkey[end][i])
			_exit(rc);
		__atomic_store_n(&m->credit[end][i], XS_RECVS, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&m->ready[end], 1, __ATOMIC_RELEASE);
	until = now_ms() + XS_UP_MS;
	while (!peer && !__atomic_load_n(&m->ready[!end], __ATOMIC_ACQUIRE)) {
		if (now_ms() >= until) {
			xs_why(&g, "the other end was not ready in %d ms", XS_UP_MS);
			_exit(rc);
		}
		usleep(1000);
	}
	rc = xs_traffic(&g);
	/* Half the rounds leave what is left to the process's exit. */
	if (tidy) {
		for (i = 0; i < qps; i++) {
			if (g.mw[i])
				ibv_dealloc_mw(g.mw[i]);
			if (g.bmr[i])
				ibv_dereg_mr(g.bmr[i]);
		}
		xr_pairs_fini(g.p, qps);
		xr_net_fini(&g.net);
	}
	_exit(rc);
}

/* Fork a generator; its pid, or -1. */
static pid_t xs_gen_start(struct xs_shm *m, int end, int qps, bool peer,
			  const char *ns, bool tidy)
{
	pid_t pid = fork();

	if (!pid)
		xs_gen_main(m, end, qps, peer, ns, tidy);
	return pid;
}

/* The wire peer as responder on port, in namespace ns (or here). */
static pid_t xs_peer_start(const char *exe, int port, const char *ns)
{
	static const char *const script[] = { "send:65536", "wait:200" };
	enum { REPEAT = 4000 };
	static const char *argv[10 + 2 * REPEAT];
	char portstr[16];
	int k = 0, i, fd;
	pid_t pid;

	snprintf(portstr, sizeof(portstr), "%d", port);
	argv[k++] = exe;
	argv[k++] = "--listen";
	argv[k++] = portstr;
	argv[k++] = "--linger";
	argv[k++] = "1000";
	/*
	 * Its accept and MPA wait (10 s by default) outlasted on the debug
	 * kernel: xiw connects to the peers one after the other.
	 */
	argv[k++] = "--timeout";
	argv[k++] = "120000";
	for (i = 0; i < REPEAT; i++) {
		argv[k++] = script[0];
		argv[k++] = script[1];
	}
	argv[k] = NULL;
	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (ns && xs_setns(ns))
		_exit(126);
	fd = open("/dev/null", O_WRONLY);
	dup2(fd, 1);
	dup2(fd, 2);
	execv(exe, (char *const *)argv);
	_exit(127);
}

FIXTURE(soak) {
	struct xs_shm *m;
	pid_t gen[2];
	pid_t peer[XS_MAXQP];
	int qps;
	bool in_ns;
	char wirepeer[PATH_MAX];
	char out[8192];
};

FIXTURE_VARIANT(soak) {
	bool peer;	/* the other end is the wire peer */
};

FIXTURE_VARIANT_ADD(soak, xiw) {
	.peer = false,
};

FIXTURE_VARIANT_ADD(soak, peer) {
	.peer = true,
};

/* SIGKILL and reap every process of the round still there. */
static void xs_kill_all(FIXTURE_DATA(soak) *self)
{
	pid_t *all[2 + XS_MAXQP];
	int i;

	for (i = 0; i < 2; i++)
		all[i] = &self->gen[i];
	for (i = 0; i < XS_MAXQP; i++)
		all[2 + i] = &self->peer[i];
	for (i = 0; i < 2 + XS_MAXQP; i++)
		if (*all[i] > 0)
			kill(*all[i], SIGKILL);
	for (i = 0; i < 2 + XS_MAXQP; i++) {
		if (*all[i] > 0 && WAIT_UNTIL(waitpid(*all[i], NULL, WNOHANG) != 0,
					      XS_EXIT_MS))
			*all[i] = 0;
	}
}

/* Remove what a round may have left (each exec costs under TCG). */
static void xs_clean(void)
{
	if (ibdev_exists(XS_IBDEV))
		sh("rdma link delete " XS_IBDEV " 2>/dev/null");
	if (path_exists("/sys/class/net/" XS_NETDEV))
		sh("ip link del " XS_NETDEV " 2>/dev/null");
	if (path_exists("/run/netns/" XS_NS))
		sh("ip netns del " XS_NS " 2>/dev/null");
	WAIT_UNTIL(!ibdev_exists(XS_IBDEV), XS_GONE_MS);
}

FIXTURE_SETUP(soak)
{
	if (xr_is_siw())
		XSKIP_SETUP("xiw_soak tears down xiw, not %s", xr_type());
	xr_beside_exe(self->wirepeer, sizeof(self->wirepeer), "XIW_WIREPEER",
		      "../userspace/peer/xiw-wirepeer");
	if (variant->peer && access(self->wirepeer, X_OK))
		XSKIP_SETUP("%.200s not built (make provider)", self->wirepeer);
	self->qps = xs_env("XIW_SOAK_QPS", 8, XS_MAXQP);
	self->m = mmap(NULL, sizeof(*self->m), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->m);
	ASSERT_EQ(0, xr_load_modules());
	xs_clean();
}

FIXTURE_TEARDOWN(soak)
{
	xs_kill_all(self);
	xs_clean();
	if (!xiw_loaded())
		sh("modprobe xiw");
	if (self->m != MAP_FAILED && self->m)
		munmap(self->m, sizeof(*self->m));
}

/* xiw loaded, and the device on XS_NETDEV here or in XS_NS. */
static int xs_device_up(FIXTURE_DATA(soak) *self, bool ns)
{
	const char *in;

	self->in_ns = ns;
	if (!xiw_loaded() && sh("modprobe xiw"))
		return -1;
	if (ns && sh("ip netns add " XS_NS))
		return -1;
	if (ns || !path_exists("/sys/class/net/" XS_NETDEV))
		in = ns ? "ip netns exec " XS_NS " sh -c '" : "sh -c '";
	else
		in = NULL;
	/* One ip for the netdev, its address and (in XS_NS) lo. */
	if (in && sh("%sprintf \"%%s\\n\" %s \"link add " XS_NETDEV " type dummy\" "
		     "\"addr add " XS_ADDR "/24 dev " XS_NETDEV "\" "
		     "\"link set " XS_NETDEV " up\" | ip -b -'", in,
		     ns ? "\"link set lo up\"" : ""))
		return -1;
	if (sh("%srdma link add " XS_IBDEV " type xiw netdev " XS_NETDEV,
	       ns ? "ip netns exec " XS_NS " " : ""))
		return -1;
	return WAIT_UNTIL(ibdev_exists(XS_IBDEV), 5000) ? 0 : -1;
}

static long xs_ops(const struct xs_stat *st)
{
	return st->ops[0] + st->ops[1] + st->ops[2] + st->ops[3];
}

/* Every generator running, each of its kinds of operation done twice. */
static bool xs_flowing(FIXTURE_DATA(soak) *self, int ngen)
{
	int e, k;

	for (e = 0; e < ngen; e++) {
		const struct xs_stat *st = &self->m->st[ngen == 1 ? XS_CLI : e];

		if (st->state != XS_RUNNING)
			return false;
		for (k = 0; k < 4; k++)
			if (st->ops[k] < 2L * self->qps)
				return false;
	}
	return true;
}

/* Has the server's process not ended yet? (It is not reaped here.) */
static bool xs_srv_alive(FIXTURE_DATA(soak) *self)
{
	siginfo_t si = { .si_pid = 0 };

	return self->gen[XS_SRV] > 0 &&
	       !waitid(P_PID, (id_t)self->gen[XS_SRV], &si,
		       WEXITED | WNOHANG | WNOWAIT) && !si.si_pid;
}

/*
 * Wire peers not listening yet: their ports in LISTEN state (0A) in
 * /proc/PID/net/tcp6 of the first one (its namespace's sockets).
 */
static int xs_peers_unbound(FIXTURE_DATA(soak) *self)
{
	char path[64], line[256];
	unsigned int port, st;
	int left = self->qps;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/tcp6", self->peer[0]);
	f = fopen(path, "r");
	if (!f)
		return left;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x",
			   &port, &st) == 2 && st == 0x0a &&
		    port >= XS_PEER_PORT && port < XS_PEER_PORT + (unsigned int)self->qps)
			left--;
	fclose(f);
	return left;
}

/*
 * Start the round's traffic: xiw to xiw (server and client generators)
 * or xiw to wire peers (one client generator). Waits until it flows.
 */
static void xs_start(struct __test_metadata *_metadata,
		     FIXTURE_DATA(soak) *self, bool peer, int round)
{
	const char *ns = self->in_ns ? XS_NS : NULL;
	bool tidy = round % 2;
	int i, ngen = peer ? 1 : 2;

	memset(self->m, 0, sizeof(*self->m));
	if (peer) {
		for (i = 0; i < self->qps; i++) {
			self->peer[i] = xs_peer_start(self->wirepeer,
						      XS_PEER_PORT + i, ns);
			ASSERT_LT(0, self->peer[i]);
		}
		/* Each binds before it says so; under TCG that takes a while. */
		ASSERT_TRUE(WAIT_UNTIL(!xs_peers_unbound(self), 20000))
			TH_LOG("the wire peers did not all listen");
		xr_trace("wire peers listen");
		self->gen[XS_CLI] = xs_gen_start(self->m, XS_CLI, self->qps,
						 true, ns, tidy);
		ASSERT_LT(0, self->gen[XS_CLI]);
	} else {
		self->gen[XS_SRV] = xs_gen_start(self->m, XS_SRV, self->qps,
						 false, ns, tidy);
		ASSERT_LT(0, self->gen[XS_SRV]);
		ASSERT_TRUE(WAIT_UNTIL(self->m->port || !xs_srv_alive(self),
				       XS_UP_MS));
		ASSERT_NE(0, self->m->port) TH_LOG("server: %s", self->m->st[XS_SRV].why);
		self->gen[XS_CLI] = xs_gen_start(self->m, XS_CLI, self->qps,
						 false, ns, tidy);
		ASSERT_LT(0, self->gen[XS_CLI]);
	}
	WAIT_UNTIL(xs_flowing(self, ngen) || self->m->st[0].why[0] ||
		   self->m->st[1].why[0], XS_UP_MS);
	if (!xs_flowing(self, ngen)) {
		/* Where the connections stand, for the report. */
		fflush(NULL);
		sh("%sss -tan | sed 's/^/# /' >&2; rdma res show cm_id |"
		   " sed 's/^/# /' >&2", ns ? "ip netns exec " XS_NS " " : "");
	}
	ASSERT_TRUE(xs_flowing(self, ngen))
		TH_LOG("round %d: traffic did not flow: server '%s' (%ld ops), client '%s' (%ld ops)",
		       round, self->m->st[XS_SRV].why, xs_ops(&self->m->st[XS_SRV]),
		       self->m->st[XS_CLI].why, xs_ops(&self->m->st[XS_CLI]));
}

/* Make the device go, the round's way, while the traffic flows. */
static void xs_teardown(struct __test_metadata *_metadata,
			FIXTURE_DATA(soak) *self, enum xs_kind kind, bool peer,
			int round, bool killed[2])
{
	int i;

	switch (kind) {
	case XS_LINK_DELETE:
		ASSERT_EQ(0, RUN(self, 120, "rdma link delete " XS_IBDEV));
		break;
	case XS_NETDEV_DEL:
		ASSERT_EQ(0, RUN(self, 120, "ip link del " XS_NETDEV));
		break;
	case XS_RMMOD:
		ASSERT_EQ(0, RUN(self, 120, "rmmod xiw"));
		break;
	case XS_NETNS:
		/* Not reaped first: the namespace goes while they exit. */
		for (i = 0; i < 2; i++)
			if (self->gen[i] > 0 && !kill(self->gen[i], SIGKILL))
				killed[i] = true;
		for (i = 0; i < self->qps; i++)
			if (self->peer[i] > 0)
				kill(self->peer[i], SIGKILL);
		ASSERT_EQ(0, RUN(self, 120, "ip netns del " XS_NS));
		break;
	case XS_KILL9:
		/*
		 * The client's process; every other round the server's as
		 * well, else the server must see the end by itself.
		 */
		killed[XS_CLI] = !kill(self->gen[XS_CLI], SIGKILL);
		if (!peer && round % 2)
			killed[XS_SRV] = !kill(self->gen[XS_SRV], SIGKILL);
		break;
	}
}

/* What the kernel says a process is waiting for, on stderr. */
static void xs_show_stuck(pid_t pid)
{
	fflush(NULL);
	sh("echo '# pid %d:' $(cat /proc/%d/wchan) >&2; "
	   "sed 's/^/# /' /proc/%d/stack >&2", pid, pid, pid);
}

/*
 * Wait for the process in *pid to end within XS_EXIT_MS; its status in
 * *st. False (with its kernel stack shown) if it did not.
 */
static bool xs_reap_one(pid_t *pid, int *st, const char *what)
{
	long long end = now_ms() + XS_EXIT_MS;
	pid_t r;

	*st = -1;
	while ((r = waitpid(*pid, st, WNOHANG)) == 0 && now_ms() < end)
		usleep(10000);
	if (r == *pid || r < 0) {
		*pid = 0;
		return true;
	}
	fprintf(stderr, "# %s %d still there %d ms after the teardown\n",
		what, *pid, XS_EXIT_MS);
	xs_show_stuck(*pid);
	return false;
}

/* Every process of the round ends in time, as it should. */
static void xs_reap(struct __test_metadata *_metadata,
		    FIXTURE_DATA(soak) *self, enum xs_kind kind,
		    const bool killed[2])
{
	static const char *const name[2] = { "server", "client" };
	int i, st;

	for (i = 0; i < 2; i++) {
		if (self->gen[i] <= 0)
			continue;
		ASSERT_TRUE(xs_reap_one(&self->gen[i], &st, name[i]))
			TH_LOG("the %s generator did not end (%s)", name[i],
			       self->m->st[i].why);
		if (killed[i]) {
			EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
				TH_LOG("%s: status %#x", name[i], st);
		} else {
			EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == XS_EXIT_OK)
				TH_LOG("%s: status %#x: %s", name[i], st,
				       self->m->st[i].why);
		}
		EXPECT_EQ(0, self->m->st[i].bad) TH_LOG("%s", self->m->st[i].why);
	}
	/*
	 * A wire peer ends when its connection does. Not after a netdev
	 * removal: its connection runs to the netdev's address, gone with
	 * it, so xiw's close cannot reach it (as a remote peer's would
	 * not); xs_after() finds xiw's sockets closed all the same.
	 */
	for (i = 0; i < self->qps; i++) {
		if (self->peer[i] <= 0)
			continue;
		if (kind == XS_NETDEV_DEL)
			kill(self->peer[i], SIGKILL);
		ASSERT_TRUE(xs_reap_one(&self->peer[i], &st, "wire peer")) {
			TH_LOG("wire peer %d: its connection did not end", i);
		}
	}
}

/*
 * TCP connections of XS_ADDR that nobody closed: ESTABLISHED (01) or
 * CLOSE-WAIT (08) in /proc/net/tcp and tcp6 (the wire peers' sockets,
 * as v4-mapped addresses); -1 if unreadable.
 */
static int xs_open_conns(void)
{
	static const char *const file[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	const char *addr = "0100600A";	/* 10.96.0.1, as the kernel prints it */
	char line[512], la[64], ra[64];
	unsigned int st;
	int i, n = 0;
	FILE *f;

	for (i = 0; i < 2; i++) {
		f = fopen(file[i], "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, " %*d: %63s %63s %x", la, ra, &st) == 3 &&
			    (st == 0x01 || st == 0x08) &&
			    (strstr(la, addr) || strstr(ra, addr)))
				n++;
		fclose(f);
	}
	return n;
}

static int xs_refcnt(void)
{
	char buf[32];

	if (read_text("/sys/module/xiw/refcnt", buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

/*
 * The kernel log since mark, read here (klogctl) and judged by
 * scripts/lib.sh klog-scan; its verdict in self->out. 0 if clean.
 */
static int xs_klog(FIXTURE_DATA(soak) *self, const char *mark)
{
	char lib[PATH_MAX], cmd[PATH_MAX + 96], res[64];
	int len = klogctl(10, NULL, 0), n, st;	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *log, *from = NULL, *p;
	FILE *f;

	self->out[0] = '\0';
	if (!mark[0] || len <= 0)
		return 0;
	log = malloc((size_t)len + 1);
	if (!log)
		return -1;
	n = klogctl(3, log, len);	/* SYSLOG_ACTION_READ_ALL */
	log[n > 0 ? n : 0] = '\0';
	for (p = log; (p = strstr(p, mark)); p++)
		from = p;
	from = from ? strchr(from, '\n') : NULL;
	xr_beside_exe(lib, sizeof(lib), "XIW_LIB_SH", "../../scripts/lib.sh");
	snprintf(res, sizeof(res), "/tmp/xiw-soak-klog.%d", getpid());
	snprintf(cmd, sizeof(cmd), "bash %s klog-scan > %s 2>&1", lib, res);
	/* A mark pushed out of the buffer: all of it. */
	f = popen(cmd, "w");
	if (f)
		fputs(from ? from + 1 : log, f);
	st = f ? pclose(f) : -1;
	free(log);
	read_text(res, self->out, sizeof(self->out));
	unlink(res);
	return st;
}

/* Nothing left behind; the module goes and comes back. */
static void xs_after(struct __test_metadata *_metadata,
		     FIXTURE_DATA(soak) *self, enum xs_kind kind,
		     const char *mark)
{
	char line[256] = "";
	int n = -1;

	if (kind == XS_KILL9) {
		ASSERT_TRUE(WAIT_UNTIL(xr_res_zero_but(XS_IBDEV, NULL, line,
						       sizeof(line)), 10000))
			TH_LOG("left on the device: %s", line);
	} else {
		ASSERT_TRUE(WAIT_UNTIL(!ibdev_exists(XS_IBDEV), XS_GONE_MS))
			TH_LOG("%s outlived its teardown", XS_IBDEV);
	}
	if (kind != XS_NETNS) {
		ASSERT_TRUE(WAIT_UNTIL(!(n = xs_open_conns()), 15000))
			TH_LOG("%d TCP connections of " XS_ADDR
			       " established or in CLOSE-WAIT", n);
	}
	xr_trace("device and connections checked");
	if (ibdev_exists(XS_IBDEV)) {
		ASSERT_EQ(0, RUN(self, 60, "rdma link delete " XS_IBDEV));
	}
	if (xiw_loaded()) {
		ASSERT_TRUE(WAIT_UNTIL(!(n = xs_refcnt()), 10000))
			TH_LOG("xiw refcnt %d with no device and no user", n);
		ASSERT_EQ(0, RUN(self, 60, "rmmod xiw"));
	}
	ASSERT_EQ(0, RUN(self, 60, "modprobe xiw"));
	xr_trace("module reloaded");
	ASSERT_EQ(0, xs_klog(self, mark)) TH_LOG("kernel log:\n%s", self->out);
}

static const char *const xs_kind_name[] = {
	"rdma link delete", "netdev removal", "rmmod", "netns exit", "kill -9",
};

static void xs_round(struct __test_metadata *_metadata,
		     FIXTURE_DATA(soak) *self, bool peer, enum xs_kind kind,
		     int round)
{
	unsigned int seed = (unsigned int)(round * 5 + kind);
	bool killed[2] = { false, false };
	long long t0 = now_ms();
	long ops;
	char mark[128];
	int i;

	xr_klog_mark(mark, sizeof(mark), "xiw_soak", xs_kind_name[kind]);
	ASSERT_EQ(0, xs_device_up(self, kind == XS_NETNS))
		TH_LOG("round %d: cannot make %s on %s", round, XS_IBDEV, XS_NETDEV);
	xr_trace("device up");
	xs_start(_metadata, self, peer, round);
	/* Somewhere in the flow, not at a fixed point of it. */
	usleep((rand_r(&seed) % 400) * 1000);
	for (i = 0; i < 2; i++) {
		const struct xs_stat *st = &self->m->st[i];

		if (self->gen[i] <= 0)
			continue;
		ASSERT_EQ(XS_RUNNING, st->state)
			TH_LOG("round %d: traffic ended before the teardown: %s",
			       round, st->why);
		ASSERT_EQ(0, st->errs);
	}
	ops = xs_ops(&self->m->st[0]) + xs_ops(&self->m->st[1]);
	xr_trace("traffic flows");
	xs_teardown(_metadata, self, kind, peer, round, killed);
	xr_trace("teardown done");
	xs_reap(_metadata, self, kind, killed);
	xr_trace("processes reaped");
	xs_after(_metadata, self, kind, mark);
	TH_LOG("round %d: %s after %ld operations, clean, %lld ms", round,
	       xs_kind_name[kind], ops, now_ms() - t0);
}

static void xs_soak(struct __test_metadata *_metadata,
		    FIXTURE_DATA(soak) *self, bool peer, enum xs_kind kind)
{
	int r, rounds = xs_rounds();

	for (r = 0; r < rounds && !_metadata->aborted; r++)
		xs_round(_metadata, self, peer, kind, r);
}

TEST_F(soak, link_delete)
{
	xs_soak(_metadata, self, variant->peer, XS_LINK_DELETE);
}

TEST_F(soak, netdev_removal)
{
	xs_soak(_metadata, self, variant->peer, XS_NETDEV_DEL);
}

TEST_F(soak, rmmod)
{
	xs_soak(_metadata, self, variant->peer, XS_RMMOD);
}

TEST_F(soak, netns_exit)
{
	xs_soak(_metadata, self, variant->peer, XS_NETNS);
}

TEST_F(soak, kill9)
{
	xs_soak(_metadata, self, variant->peer, XS_KILL9);
}

/* Each test's time limit grows with its rounds. */
int main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout = 60 + xs_rounds() * XS_ROUND_S;
	return test_harness_run(argc, argv);
}
