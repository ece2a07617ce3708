// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * xiw against an independent wire peer: xiw-wirepeer (userspace/peer),
 * whose codec is tested on the host against the RFCs, connects as MPA
 * initiator over plain TCP to an rdma_cm listener on xiw (10.99.0.1 on a
 * dummy netdev), then sends what each test asks and prints every FPDU it
 * gets back.
 *
 * A correct Send must land in the posted receive with its length and
 * bytes; each hostile row must draw the Terminate errors.rst names
 * (layer/etype/ecode) and end the connection, with the async event of
 * V-07 on the listener's QP; a short fuzz run must leave the kernel quiet
 * (the VM runner fails on any warning) and give back the TCP sockets it
 * took. Requirement IDs are defined in Documentation/requirements.rst.
 */
#include <limits.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"
#include "xiw_mpa_util.h"
#include "xiw_fault_util.h"

#define XP_SIDES	8	/* server QPs alive at once */
#define XP_WR		32	/* receives posted per QP */
#define XP_RECV_LEN	1024
/* Where xp_kernel_connect()'s atomic puts the old value: the last receive
 * buffer, which no test sends into. */
#define XP_ATOMIC_OFF	((XP_WR - 1) * XP_RECV_LEN)
#define XP_RUN_MS	30000	/* one peer run, fuzz included */

/* The peer: $XIW_WIREPEER, else build/userspace/peer/ next to us. */
static void xp_peer_path(char *p, size_t len)
{
	xr_beside_exe(p, len, "XIW_WIREPEER",
		      "../userspace/peer/xiw-wirepeer");
}

/* What the listener side saw during one peer run. */
struct xp_seen {
	char out[32768];	/* the peer's stdout */
	size_t outlen;
	int peer_exit;		/* -1: did not exit normally */
	int requests, established, disconnected;
	int async_fatal, async_access, async_other;
	int recv_ok;		/* successful receive completions */
	uint32_t first_len;	/* byte_len of the first one */
	bool first_bytes_ok;	/* and its bytes are the peer's pattern */
	int recv_bad;		/* other receive completions */
	enum ibv_wc_status first_bad;
};

/* The peer's payload pattern (wirepeer.cpp: byte i is i * 7 + 1). */
static bool xp_pattern_ok(const uint8_t *b, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (uint8_t)(i * 7 + 1))
			return false;
	return true;
}

FIXTURE(peer) {
	struct xr_link link;
	struct xr_net net;
	struct xr_opts o;
	struct xr_side s[XP_SIDES];
	struct ibv_context *ctx;
	char peer[PATH_MAX];	/* exe's directory + 32 bytes fits */
	char where[64];
	long long run_ms;	/* one peer run's limit, XP_RUN_MS unless set */
	/* > 0: deregister the first side's MR this long after ESTABLISHED */
	long long dereg_after_ms;
	long long dereg_ms;	/* how long ibv_dereg_mr took, -1 if not run */
	int dereg_rc;
	/* > 0: move the first side's QP to RESET this long after ESTABLISHED */
	long long reset_after_ms;
	int reset_rc;		/* modify_qp's result, 1 if not run */
	int cqes_at_reset;	/* receive completions polled before it */
	/* xp_kernel_connect(): post a fetch-and-add once established */
	bool post_atomic;
	/*
	 * > 0: once the first side is established, register an 8-byte word
	 * with remote atomic rights holding this value and Send its STag
	 * and address (be32 + be64) to the peer, as a ULP advertises a
	 * buffer. amr_word is the word's value when the side went.
	 */
	uint64_t amr_init;
	struct ibv_mr *amr;
	uint64_t *aword;
	uint64_t amr_word;
	int amr_rc;		/* 1 not yet, 0 sent, else errno */
	struct xp_seen seen;
};

FIXTURE_SETUP(peer)
{
	if (xr_is_siw())
		XSKIP_SETUP("xiw-wirepeer rows are for xiw, not %s", xr_type());
	xp_peer_path(self->peer, sizeof(self->peer));
	if (access(self->peer, X_OK))
		XSKIP_SETUP("%.200s not built (make provider)", self->peer);
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	xr_lo_mtu(1500);
	xm_params_default();
	ASSERT_EQ(0, xr_net_init(&self->net)) TH_LOG("%s", self->net.err);
	self->o = (struct xr_opts){ .buflen = XP_WR * XP_RECV_LEN, .wr = XP_WR,
				    .sge = 1, .rd_atom = 2 };
	snprintf(self->where, sizeof(self->where), "%s:%u", XR_ADDR,
		 ntohs(self->net.addr.sin_port));
}

static void xp_amr_drop(FIXTURE_DATA(peer) *self)
{
	if (!self->amr)
		return;
	self->amr_word = *self->aword;
	ibv_dereg_mr(self->amr);
	free(self->aword);
	self->amr = NULL;
	self->aword = NULL;
}

FIXTURE_TEARDOWN(peer)
{
	int i;

	xf_disarm();	/* a test that armed a fault site and failed */
	xp_amr_drop(self);
	for (i = 0; i < XP_SIDES; i++)
		if (self->s[i].id)
			rdma_disconnect(self->s[i].id);
	for (i = 0; i < XP_SIDES; i++)
		xr_side_fini(&self->s[i]);
	xr_net_fini(&self->net);
}

/* A new connection: a QP with every receive posted, then accept. */
static void xp_accept(struct __test_metadata *_metadata,
		      FIXTURE_DATA(peer) *self, struct rdma_cm_id *id)
{
	struct rdma_conn_param cp = {
		.responder_resources = self->o.rd_atom,
		.initiator_depth = self->o.rd_atom,
	};
	struct xr_side *s = NULL;
	int i;

	self->seen.requests++;
	for (i = 0; i < XP_SIDES && !s; i++)
		if (!self->s[i].id)
			s = &self->s[i];
	if (!s || xr_side_init(&self->net, s, id, &self->o)) {
		if (s)
			xr_side_fini(s);
		rdma_reject(id, NULL, 0);
		return;
	}
	for (i = 0; i < XP_WR; i++)
		if (xr_recv(s, i, (size_t)i * XP_RECV_LEN, XP_RECV_LEN))
			TH_LOG("ibv_post_recv: %s", strerror(errno));
	if (!self->ctx) {
		self->ctx = id->verbs;
		xr_nonblock(self->ctx->async_fd);
	}
	if (rdma_accept(id, &cp))
		TH_LOG("rdma_accept: %s", strerror(errno));
}

static struct xr_side *xp_side(FIXTURE_DATA(peer) *self,
			       struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < XP_SIDES; i++)
		if (self->s[i].id == id)
			return &self->s[i];
	return NULL;
}

/* Completions on every live QP; receives are posted again. */
static void xp_poll_cqs(FIXTURE_DATA(peer) *self)
{
	struct xp_seen *v = &self->seen;
	struct ibv_wc wc[16];
	int i, j, n;

	for (i = 0; i < XP_SIDES; i++) {
		struct xr_side *s = &self->s[i];

		if (!s->cq)
			continue;
		n = ibv_poll_cq(s->cq, 16, wc);
		for (j = 0; j < n; j++) {
			if (wc[j].opcode != IBV_WC_RECV &&
			    wc[j].status == IBV_WC_SUCCESS)
				continue;
			if (wc[j].status != IBV_WC_SUCCESS) {
				if (!v->recv_bad++)
					v->first_bad = wc[j].status;
				continue;
			}
			if (!v->recv_ok++) {
				v->first_len = wc[j].byte_len;
				v->first_bytes_ok = wc[j].byte_len <= XP_RECV_LEN &&
					xp_pattern_ok(s->buf + wc[j].wr_id *
						      XP_RECV_LEN, wc[j].byte_len);
			}
			xr_recv(s, wc[j].wr_id, wc[j].wr_id * XP_RECV_LEN,
				XP_RECV_LEN);
		}
	}
}

static void xp_async(FIXTURE_DATA(peer) *self)
{
	struct ibv_async_event ev;

	if (!self->ctx)
		return;
	while (!ibv_get_async_event(self->ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_QP_FATAL)
			self->seen.async_fatal++;
		else if (ev.event_type == IBV_EVENT_QP_ACCESS_ERR)
			self->seen.async_access++;
		else
			self->seen.async_other++;
		ibv_ack_async_event(&ev);
	}
}

/* CM events of the listener; a disconnected QP is freed at once. */
static void xp_cm(struct __test_metadata *_metadata, FIXTURE_DATA(peer) *self)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *gone;
	struct xr_side *s;

	while (!rdma_get_cm_event(self->net.sch, &ev)) {
		gone = NULL;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			xp_accept(_metadata, self, ev->id);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			self->seen.established++;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			self->seen.disconnected++;
			gone = ev->id;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
		s = gone ? xp_side(self, gone) : NULL;
		if (s) {
			xp_poll_cqs(self);
			xp_async(self);
			if (s == &self->s[0])
				xp_amr_drop(self);
			xr_side_fini(s);
		}
	}
}

/* The word of amr_init, and a Send of its STag and address; 0 or errno. */
static int xp_amr_advertise(FIXTURE_DATA(peer) *self)
{
	struct xr_side *s = &self->s[0];
	uint8_t *msg = s->buf + XP_ATOMIC_OFF;
	uint64_t be_to;
	uint32_t be_stag;
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = 12,
			       .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e7d, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	self->aword = aligned_alloc(4096, 4096);
	if (!self->aword)
		return ENOMEM;
	*self->aword = self->amr_init;
	self->amr = ibv_reg_mr(s->pd, self->aword, 4096,
			       IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_ATOMIC);
	if (!self->amr) {
		free(self->aword);
		self->aword = NULL;
		return errno;
	}
	be_stag = htonl(self->amr->rkey);
	be_to = htobe64((uintptr_t)self->aword);
	memcpy(msg, &be_stag, 4);
	memcpy(msg + 4, &be_to, 8);
	return ibv_post_send(s->qp, &wr, &bad);
}

/*
 * Start the peer with argv, its stdout and stderr on a pipe; the read
 * end in *rd. Returns the child's pid, or -1.
 */
static pid_t xp_spawn(FIXTURE_DATA(peer) *self, const char *const *argv,
		      int *rd)
{
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		execv(self->peer, (char *const *)argv);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0)
		close(pipefd[0]);
	*rd = pipefd[0];
	return pid;
}

/*
 * Run the peer with args against the listener, serving connections while
 * it runs, then give the listener side up to linger_ms to see every
 * connection end. Fills self->seen.
 */
static void xp_run(struct __test_metadata *_metadata,
		   FIXTURE_DATA(peer) *self, int linger_ms, const char *const *args)
{
	const char *argv[48] = { self->peer, "--connect", self->where };
	struct xp_seen *v = &self->seen;
	long long end = now_ms() + (self->run_ms ? self->run_ms : XP_RUN_MS);
	long long grace = 0;
	int pipefd[2], st, i, k = 3;
	bool out_open = true;
	pid_t pid;

	long long up_at = 0;

	memset(v, 0, sizeof(*v));
	v->peer_exit = -1;
	self->dereg_ms = -1;
	self->reset_rc = 1;
	self->amr_rc = 1;
	for (i = 0; args[i] && k < 46; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	pid = xp_spawn(self, argv, &pipefd[0]);
	ASSERT_LE(0, pid);
	xr_nonblock(pipefd[0]);
	while (now_ms() < end) {
		struct pollfd pf[3] = {
			{ .fd = out_open ? pipefd[0] : -1, .events = POLLIN },
			{ .fd = self->net.sch->fd, .events = POLLIN },
			{ .fd = self->ctx ? self->ctx->async_fd : -1,
			  .events = POLLIN },
		};
		ssize_t n;

		poll(pf, 3, 10);
		if (out_open) {
			/* Full: keep the newer half (the summary comes last). */
			if (v->outlen + 1 >= sizeof(v->out)) {
				v->outlen = sizeof(v->out) / 2;
				memmove(v->out, v->out + sizeof(v->out) / 2 - 1,
					v->outlen);
			}
			n = read(pipefd[0], v->out + v->outlen,
				 sizeof(v->out) - 1 - v->outlen);
			if (n > 0)
				v->outlen += (size_t)n;
			else if (n == 0)
				out_open = false;
		}
		xp_cm(_metadata, self);
		xp_poll_cqs(self);
		xp_async(self);
		if (v->established && !up_at)
			up_at = now_ms();
		if (self->dereg_after_ms && up_at && self->dereg_ms < 0 &&
		    self->s[0].mr &&
		    now_ms() >= up_at + self->dereg_after_ms) {
			long long t0 = now_ms();

			self->dereg_rc = ibv_dereg_mr(self->s[0].mr);
			self->dereg_ms = now_ms() - t0;
			if (!self->dereg_rc)
				self->s[0].mr = NULL;
		}
		if (self->amr_init && up_at && self->amr_rc == 1 &&
		    self->s[0].qp)
			self->amr_rc = xp_amr_advertise(self);
		if (self->reset_after_ms && up_at && self->reset_rc == 1 &&
		    self->s[0].qp &&
		    now_ms() >= up_at + self->reset_after_ms) {
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

			xp_poll_cqs(self);
			self->cqes_at_reset = v->recv_ok + v->recv_bad;
			self->reset_rc = ibv_modify_qp(self->s[0].qp, &a,
						       IBV_QP_STATE) ? errno : 0;
		}
		if (v->peer_exit == -1 && !out_open &&
		    waitpid(pid, &st, WNOHANG) == pid) {
			v->peer_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 256;
			grace = now_ms() + linger_ms;
		}
		if (grace && (now_ms() >= grace ||
			      v->disconnected >= v->established))
			break;
	}
	if (v->peer_exit == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		v->peer_exit = -2;
	}
	close(pipefd[0]);
	v->out[v->outlen] = '\0';
}

/* Does a line of out start with prefix? */
static bool xp_line(const char *out, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;

	for (p = out; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, prefix, n))
			return true;
	}
	return false;
}

static bool xp_said(FIXTURE_DATA(peer) *self, const char *prefix)
{
	return xp_line(self->seen.out, prefix);
}

#define XP_LOG_PEER() TH_LOG("peer exit %d, said:\n%s", self->seen.peer_exit, \
			     self->seen.out)

/*
 * The peer's good Sends, the first of 100 bytes, land byte for byte in
 * the posted receives: sends of them, CRC in use as crc says, no
 * Terminate.
 */
static void xp_good_sends(struct __test_metadata *_metadata,
			  FIXTURE_DATA(peer) *self, const char *const *args,
			  int sends, bool crc)
{
	xp_run(_metadata, self, 3000, args);
	EXPECT_EQ(0, self->seen.peer_exit) XP_LOG_PEER();
	EXPECT_TRUE(xp_said(self, crc ? "full-operation crc=1" :
					"full-operation crc=0")) XP_LOG_PEER();
	EXPECT_FALSE(xp_said(self, "terminate")) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	ASSERT_EQ(sends, self->seen.recv_ok)
		TH_LOG("bad %d first %s", self->seen.recv_bad,
		       ibv_wc_status_str(self->seen.first_bad));
	EXPECT_EQ(100, self->seen.first_len);
	EXPECT_TRUE(self->seen.first_bytes_ok);
	EXPECT_EQ(0, self->seen.async_fatal + self->seen.async_access);
}

/* The peer's Send lands byte for byte in the posted receive. */
TEST_F_TIMEOUT(peer, good_send, 60)
{
	static const char *const a[] = { "--linger", "3000", "send:100",
					  "wait:300", "close", NULL };

	xp_good_sends(_metadata, self, a, 1, true);
}

/*
 * MPA-24: FPDUs cut anywhere. The peer sends three Sends one byte per
 * segment, so every header, payload and CRC arrives in pieces (the
 * header one byte at a time, too short for its control bytes at first);
 * each must land whole, in order, with CRC checked.
 */
TEST_F_TIMEOUT(peer, good_send_dribbled, 60)
{
	static const char *const a[] = { "--linger", "3000", "--dribble", "1",
					  "send:100", "send:5", "send:1000",
					  "wait:300", "close", NULL };

	xp_good_sends(_metadata, self, a, 3, true);
}

/*
 * The same without CRC (both ends ask for none): the pad and the CRC
 * field, each cut into pieces, are stepped over, not read.
 */
TEST_F_TIMEOUT(peer, good_send_dribbled_no_crc, 60)
{
	static const char *const a[] = { "--linger", "3000", "--crc", "0",
					  "--dribble", "1", "send:100",
					  "send:5", "send:1000", "wait:300",
					  "close", NULL };

	ASSERT_EQ(0, xm_param_set("mpa_crc", 0));
	xp_good_sends(_metadata, self, a, 3, false);
}

/*
 * What every hostile row must leave behind once the peer has run: the
 * peer saw what it expected (its exit), one connection that ended, no
 * receive completed, and the async event of V-07 on the listener's QP
 * (fatal: QP_FATAL, else QP_ACCESS_ERR). what names the row in the log.
 */
static void xp_hostile_end(struct __test_metadata *_metadata,
			   FIXTURE_DATA(peer) *self, const char *what,
			   bool fatal)
{
	EXPECT_EQ(0, self->seen.peer_exit)
		TH_LOG("%s: the peer did not see what it expected", what);
	if (self->seen.peer_exit)
		XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(0, self->seen.recv_ok);
	EXPECT_EQ(self->seen.established, self->seen.disconnected)
		TH_LOG("the listener saw no DISCONNECTED");
	EXPECT_EQ(1, fatal ? self->seen.async_fatal : self->seen.async_access)
		TH_LOG("want %s; QP_FATAL %d, QP_ACCESS_ERR %d, other %d",
		       fatal ? "QP_FATAL" : "QP_ACCESS_ERR",
		       self->seen.async_fatal, self->seen.async_access,
		       self->seen.async_other);
}

/*
 * One hostile row: the peer sends action and must see the Terminate
 * term and then the close.
 */
static void xp_hostile(struct __test_metadata *_metadata,
		       FIXTURE_DATA(peer) *self, const char *action,
		       const char *term, bool fatal)
{
	const char *const a[] = { "--linger", "5000", "--expect", term,
				  "--expect", "close", action, NULL };

	xp_run(_metadata, self, 3000, a);
	xp_hostile_end(_metadata, self, action, fatal);
}

/* MPA-50: CRC mismatch, Terminate without headers */
TEST_F_TIMEOUT(peer, bad_crc, 60)
{
	xp_hostile(_metadata, self, "send:64!crc",
		   "terminate layer=0x2 etype=0x0 ecode=0x02 hdrs=none", true);
}

/*
 * MPA-09: bytes right behind the MPA Request, in the same segment, before
 * the Reply. xiw reads the Request exactly to its PD_Length and takes what
 * follows as the start of full operation, where these 24 bytes are an
 * FPDU with a valid CRC around an all-zero DDP header (DDP version 0): a
 * protocol error that must draw the DDP Terminate of bad_ddp_version and
 * end the connection, with nothing placed. A responder that read past
 * the frame would swallow them and stay quiet.
 */
TEST_F_TIMEOUT(peer, bytes_behind_request, 60)
{
	/* Without an RTR message, the peer's first send would race ours. */
	static const char *const a[] = {
		"--linger", "5000", "--p2p", "0",
		"--after-frame=0012000000000000000000000000000000000000ea5bbc79",
		"--expect", "terminate layer=0x1 etype=0x2 ecode=0x06 hdrs=ddp",
		"--expect", "close", NULL };

	xp_run(_metadata, self, 3000, a);
	xp_hostile_end(_metadata, self, "--after-frame", true);
}

/* MPA-50 with the FPDU cut into one-byte segments (MPA-24). */
TEST_F_TIMEOUT(peer, bad_crc_dribbled, 60)
{
	const char *const a[] = { "--linger", "5000", "--dribble", "1",
				  "--expect",
				  "terminate layer=0x2 etype=0x0 ecode=0x02 hdrs=none",
				  "--expect", "close", "send:64!crc", NULL };

	xp_run(_metadata, self, 3000, a);
	EXPECT_EQ(0, self->seen.peer_exit) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(0, self->seen.recv_ok);
	EXPECT_EQ(1, self->seen.async_fatal)
		TH_LOG("QP_FATAL %d, QP_ACCESS_ERR %d, other %d",
		       self->seen.async_fatal, self->seen.async_access,
		       self->seen.async_other);
}

/* DDP-04/DDP-07: no such queue */
TEST_F_TIMEOUT(peer, bad_qn, 60)
{
	xp_hostile(_metadata, self, "send:64!qn=9",
		   "terminate layer=0x1 etype=0x2 ecode=0x01 hdrs=ddp", true);
}

/*
 * DDP-08: untagged DDP version. RFC 5040 Figure 10 puts the DDP segment
 * length and header into a DDP-layer Terminate.
 */
TEST_F_TIMEOUT(peer, bad_ddp_version, 60)
{
	xp_hostile(_metadata, self, "send:64!ddp_version=2",
		   "terminate layer=0x1 etype=0x2 ecode=0x06 hdrs=ddp", true);
}

/* TERM-04: RDMAP version */
TEST_F_TIMEOUT(peer, bad_rdmap_version, 60)
{
	xp_hostile(_metadata, self, "send:64!rdmap_version=2",
		   "terminate layer=0x0 etype=0x2 ecode=0x05", true);
}

/* TERM-04, EXT-10: a reserved opcode */
TEST_F_TIMEOUT(peer, unknown_opcode, 60)
{
	xp_hostile(_metadata, self, "send:64!opcode=12",
		   "terminate layer=0x0 etype=0x2 ecode=0x06", true);
}

/*
 * DDP-08: a Write to an STag that does not exist. V-07 asks for
 * QP_ACCESS_ERR on the responder for a remote protection error.
 */
TEST_F_TIMEOUT(peer, write_invalid_stag, 60)
{
	xp_hostile(_metadata, self, "write:0xbad0bad0:0:64",
		   "terminate layer=0x1 etype=0x1 ecode=0x00 hdrs=ddp", false);
}

/* RDMAP-04: more Read Requests at once than the IRD granted (2) */
TEST_F_TIMEOUT(peer, reads_beyond_ird, 60)
{
	xp_hostile(_metadata, self, "reads:32:0:0:0",
		   "terminate layer=0x0 etype=0x2 ecode=0x07", true);
}

/*
 * RDMAP-04 at IRD 0: the listener accepts with no inbound Reads and the
 * peer asks ORD 0, so none may arrive; one Read Request is an overrun.
 */
TEST_F_TIMEOUT(peer, read_at_ird_zero, 60)
{
	static const char *const a[] = {
		"--ord", "0", "--linger", "5000", "--expect",
		"terminate layer=0x0 etype=0x2 ecode=0x07", "--expect", "close",
		"read:0:0:0", NULL };

	self->o.rd_atom = 0;
	xp_run(_metadata, self, 3000, a);
	EXPECT_EQ(0, self->seen.peer_exit) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(1, self->seen.async_fatal)
		TH_LOG("QP_FATAL %d, QP_ACCESS_ERR %d, other %d",
		       self->seen.async_fatal, self->seen.async_access,
		       self->seen.async_other);
}

/*
 * A peer controls how long a message stays half placed: here a Send's
 * first bytes, then silence. Deregistering the receive buffer's MR
 * meanwhile must not wait for the peer (it used to wait until the
 * connection ended, holding ibv_dereg_mr and process exit in D state).
 */
TEST_F_TIMEOUT(peer, dereg_while_send_stalls, 60)
{
	static const char *const a[] = { "--linger", "8000",
					  "send:1000!truncate=500",
					  "wait:5000", "close", NULL };

	self->dereg_after_ms = 1000;
	xp_run(_metadata, self, 8000, a);
	EXPECT_EQ(1, self->seen.established);
	ASSERT_LE(0, self->dereg_ms) TH_LOG("the MR was never deregistered");
	EXPECT_EQ(0, self->dereg_rc);
	EXPECT_GT(2000, self->dereg_ms)
		TH_LOG("ibv_dereg_mr took %lld ms", self->dereg_ms);
	EXPECT_EQ(0, self->seen.recv_ok);
}

/*
 * RESET while a Send is half placed: the rest of the message arrives
 * after it. RESET empties the queues without completions (CM-03), so
 * neither the half message nor what follows may complete the receive
 * it was landing in, and the connection ends.
 */
TEST_F_TIMEOUT(peer, reset_mid_message, 60)
{
	static const char *const a[] = { "--linger", "6000",
					  "send:1000!truncate=500",
					  "wait:2000", "send:600", "wait:1000",
					  "close", NULL };

	self->reset_after_ms = 1000;
	xp_run(_metadata, self, 6000, a);
	EXPECT_EQ(1, self->seen.established);
	ASSERT_EQ(0, self->reset_rc) TH_LOG("modify_qp(RESET): %s",
					    strerror(self->reset_rc));
	EXPECT_EQ(self->cqes_at_reset,
		  self->seen.recv_ok + self->seen.recv_bad)
		TH_LOG("completions after RESET: ok %d, bad %d (first %s)",
		       self->seen.recv_ok, self->seen.recv_bad,
		       ibv_wc_status_str(self->seen.first_bad));
	EXPECT_EQ(0, self->seen.recv_ok);
	EXPECT_EQ(self->seen.established, self->seen.disconnected)
		TH_LOG("the listener saw no DISCONNECTED");
}

/* DDP-07: an MSN that is not the next one expected */
TEST_F_TIMEOUT(peer, bad_msn, 60)
{
	xp_hostile(_metadata, self, "send:64!msn=100",
		   "terminate layer=0x1 etype=0x2 ecode=0x03 hdrs=ddp", true);
}

/* DDP-07: an MO beyond the posted receive buffer (1024 bytes) */
TEST_F_TIMEOUT(peer, bad_mo, 60)
{
	xp_hostile(_metadata, self, "send:64!mo=4096",
		   "terminate layer=0x1 etype=0x2 ecode=0x04 hdrs=ddp", true);
}

/* DDP-07, V-03: a Send longer than the posted receive buffer */
TEST_F_TIMEOUT(peer, send_too_long, 60)
{
	xp_hostile(_metadata, self, "send:2048",
		   "terminate layer=0x1 etype=0x2 ecode=0x05 hdrs=ddp", true);
}

/*
 * TERM-04: a ULPDU_Length too short for the opcode's header. The fault
 * adds to the length mod 2^16: 18 + 64 + 65462 leaves 8.
 */
TEST_F_TIMEOUT(peer, length_short_of_header, 60)
{
	xp_hostile(_metadata, self, "send:64!length=65462",
		   "terminate layer=0x2 etype=0x0 ecode=0x03 hdrs=none", true);
}

/* DDP-04: a Read Request opcode on the Send queue (QN 0) */
TEST_F_TIMEOUT(peer, opcode_on_wrong_queue, 60)
{
	xp_hostile(_metadata, self, "send:64!opcode=1",
		   "terminate layer=0x1 etype=0x2 ecode=0x01", true);
}

/* TERM-04: a Send on a tagged segment is an unexpected opcode */
TEST_F_TIMEOUT(peer, send_on_tagged_segment, 60)
{
	xp_hostile(_metadata, self, "send:64!tagged",
		   "terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp", true);
}

/* DDP-08: a Write whose TO + length wraps 64 bits */
TEST_F_TIMEOUT(peer, write_to_wraps, 60)
{
	xp_hostile(_metadata, self, "write:0xbad0bad0:0xfffffffffffffff0:64",
		   "terminate layer=0x1 etype=0x1 ecode=0x03 hdrs=ddp", false);
}

/* TERM-04: a Read Request whose source TO + length wraps 64 bits */
TEST_F_TIMEOUT(peer, read_to_wraps, 60)
{
	xp_hostile(_metadata, self, "read:0xbad0bad0:0xfffffffffffffff0:64",
		   "terminate layer=0x0 etype=0x1 ecode=0x04", false);
}

/* EXT-08: Immediate Data carries exactly 8 bytes; 4 is an error */
TEST_F_TIMEOUT(peer, immdt_not_8_bytes, 60)
{
	xp_hostile(_metadata, self, "immdt:01020304",
		   "terminate layer=0x0 etype=0x2 ecode=0x06", true);
}

/*
 * RFC 7306 Atomic Requests that must be refused (EXT-02..EXT-05): each
 * ends in the Terminate of RFC 5040 section 4.8 with the request's DDP
 * header, the target untouched. The listener's QP has the CM's rights,
 * atomics included, so the STag is what is refused where it is bad.
 */
TEST_F_TIMEOUT(peer, atomic_invalid_stag, 60)
{
	xp_hostile(_metadata, self, "atomic:0:0xbad0bad0:0",
		   "terminate layer=0x0 etype=0x1 ecode=0x00 hdrs=ddp m=1 seg_len=70 ddp_op=atomic_req ddp_qn=0x1 ddp_msn=1",
		   false);
}

TEST_F_TIMEOUT(peer, atomic_to_wraps, 60)
{
	xp_hostile(_metadata, self, "atomic:0:0xbad0bad0:0xfffffffffffffff8",
		   "terminate layer=0x0 etype=0x1 ecode=0x04 hdrs=ddp", false);
}

/* An AOpCode RFC 7306 does not define (1 was Swap in drafts). */
TEST_F_TIMEOUT(peer, atomic_unknown_aopcode, 60)
{
	xp_hostile(_metadata, self, "atomic:1:0xbad0bad0:0",
		   "terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp", true);
}

/* The request is one 52-byte segment: 16 bytes is malformed. */
TEST_F_TIMEOUT(peer, atomic_wrong_length, 60)
{
	xp_hostile(_metadata, self, "atomic:0:0xbad0bad0:0!data=16",
		   "terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp m=1 seg_len=34",
		   true);
}

/* RFC 7306 section 5.2.1 item 5: on QN 1, not the Send queue. */
TEST_F_TIMEOUT(peer, atomic_on_send_queue, 60)
{
	xp_hostile(_metadata, self, "atomic:0:0xbad0bad0:0!qn=0",
		   "terminate layer=0x1 etype=0x2 ecode=0x01 hdrs=ddp", true);
}

/* QN 1's MSN, shared with the Read Requests, must be the next one. */
TEST_F_TIMEOUT(peer, atomic_bad_msn, 60)
{
	xp_hostile(_metadata, self, "atomic:0:0xbad0bad0:0!msn=7",
		   "terminate layer=0x1 etype=0x2 ecode=0x03 hdrs=ddp", true);
}

TEST_F_TIMEOUT(peer, atomic_on_tagged_segment, 60)
{
	xp_hostile(_metadata, self, "atomic:0:0xbad0bad0:0!tagged",
		   "terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp", true);
}

/* An Atomic Response when no atomic is outstanding (RFC 7306 5.2.2). */
TEST_F_TIMEOUT(peer, atomic_response_unasked, 60)
{
	xp_hostile(_metadata, self, "atomic_resp:1:5",
		   "terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp m=1 seg_len=30 ddp_op=atomic_resp ddp_qn=0x3 ddp_msn=1",
		   true);
}

/* One port counter of the listener's device; -1 if unreadable. */
static long long xp_counter(FIXTURE_DATA(peer) *self, const char *name)
{
	return xr_port_counter(self->link.ibdev, name);
}

/* Lines of the peer's output that start with prefix. */
static int xp_count(FIXTURE_DATA(peer) *self, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;
	int k = 0;

	for (p = self->seen.out; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, prefix, n))
			k++;
	}
	return k;
}

/*
 * EXT-03, EXT-04: masked atomics from the wire. The listener's ULP
 * advertises a word (xp_amr_advertise) and the peer sends five Atomic
 * Requests to it, each answered with the word's value before it:
 *
 * 1. FetchAdd 1, mask bit 31: the carry out of the low half is dropped,
 *    0x12345678ffffffff becomes 0x1234567800000000 (not ...7900000000).
 * 2. FetchAdd in four 16-bit fields (mask 0x8000800080008000): the
 *    field at bits 32-47 wraps (0x5678 + 0xa988) without carrying into
 *    the next, 0x12350000ffff0001 (not 0x12360000ffff0001).
 * 3. CmpSwap comparing the low half only (its high half differs), and
 *    swapping the top 16 and the low 16 bits: 0x11110000ffff2222.
 * 4. CmpSwap whose masked compare misses (the top 4 bits are 1, not 0):
 *    the word stays, though the swap would have cleared it.
 * 5. FetchAdd 0, no mask: the value, unchanged.
 *
 * The values follow RFC 7306's pseudocode (sections 5.1.1 and 5.1.2);
 * the Request Identifiers come back as sent, and the word keeps the
 * last value once the connection is gone.
 */
TEST_F_TIMEOUT(peer, masked_atomics_from_wire, 60)
{
	static const char *const a[] = {
		"--linger", "3000",
		"--expect", "atomic_resp qn=3 msn=1 last=1 req_id=101 value=0x12345678ffffffff",
		"--expect", "atomic_resp qn=3 msn=2 last=1 req_id=102 value=0x1234567800000000",
		"--expect", "atomic_resp qn=3 msn=3 last=1 req_id=103 value=0x12350000ffff0001",
		"--expect", "atomic_resp qn=3 msn=4 last=1 req_id=104 value=0x11110000ffff2222",
		"--expect", "atomic_resp qn=3 msn=5 last=1 req_id=105 value=0x11110000ffff2222",
		"wait:3000",
		"atomic:0:rx:rx:1::101:0x80000000",
		"atomic:0:rx:rx:0x0001a988ffff0001::102:0x8000800080008000",
		"atomic:2:rx:rx:0x1111111122222222:0xaaaaaaaaffff0001:103:0xffff00000000ffff:0xffffffff",
		"atomic:2:rx:rx:0:0:104:0xffffffffffffffff:0xf000000000000000",
		"atomic:0:rx:rx:0::105:0",
		"wait:500", "close", NULL };

	self->amr_init = 0x12345678ffffffffULL;
	xp_run(_metadata, self, 3000, a);
	EXPECT_EQ(0, self->amr_rc) TH_LOG("advertising the word: %s",
					  strerror(self->amr_rc));
	EXPECT_EQ(0, self->seen.peer_exit) XP_LOG_PEER();
	EXPECT_TRUE(xp_said(self, "send qn=0 msn=1 mo=0 len=12 last=1"))
		XP_LOG_PEER();
	EXPECT_EQ(5, xp_count(self, "atomic_resp ")) XP_LOG_PEER();
	EXPECT_FALSE(xp_said(self, "terminate")) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(self->seen.established, self->seen.disconnected);
	EXPECT_EQ(0, self->seen.async_fatal + self->seen.async_access);
	EXPECT_EQ(0x11110000ffff2222ULL, self->amr_word)
		TH_LOG("the word is 0x%llx",
		       (unsigned long long)self->amr_word);
}

/*
 * TERM-04: a Read Request is its 28-byte header and nothing else, in one
 * segment with L set and MO 0 (RFC 5040 section 4.4). First a valid
 * zero-length Read (RDMAP-02), which draws its zero-length Read Response
 * to sink STag 0x1000 (so a Response would be seen), then the faulty one
 * (MSN 2) with a source STag that does not exist: the shape is checked
 * before the STag, so the Terminate is 0x0/0x2/0x06 (not 0x0/0x1/0x00),
 * it carries the DDP header and the Read Request header as sent
 * (TERM-01: M, D and R), no Read Response answers it, the connection
 * closes, the listener's QP raises QP_FATAL and the port counts one
 * RDMAP Terminate sent.
 */
static void xp_read_req_refused(struct __test_metadata *_metadata,
				FIXTURE_DATA(peer) *self, const char *fault,
				const char *hdr_copy)
{
	char bad[96], term[320];
	const char *const a[] = { "--linger", "5000", "--expect", term,
				  "--expect", "close", "read:0:0:0", "wait:500",
				  bad, NULL };
	long long t0 = xp_counter(self, "tx_terminate_rdmap"), t1;
	long long t = now_ms();

	ASSERT_LE(0, t0) TH_LOG("no hw_counters on %s", self->link.ibdev);
	snprintf(bad, sizeof(bad), "read:0xbad0bad0:0x100:64:0x2222:0x40!%s",
		 fault);
	snprintf(term, sizeof(term),
		 "terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp+rdma m=1 %s %s",
		 hdr_copy,
		 "rreq_sink_stag=0x2222 rreq_sink_to=0x40 rreq_size=64 rreq_src_stag=0xbad0bad0 rreq_src_to=0x100");
	xp_run(_metadata, self, 3000, a);
	EXPECT_EQ(0, self->seen.peer_exit) TH_LOG("expected '%s' then close", term);
	if (self->seen.peer_exit)
		XP_LOG_PEER();
	/* The valid Read was answered, the faulty one not. */
	EXPECT_EQ(1, xp_count(self, "read_resp ")) XP_LOG_PEER();
	EXPECT_EQ(1, xp_count(self, "read_resp stag=0x1000 to=0x0 len=0 last=1"))
		XP_LOG_PEER();
	EXPECT_EQ(1, xp_count(self, "terminate ")) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(0, self->seen.recv_ok);
	EXPECT_EQ(self->seen.established, self->seen.disconnected)
		TH_LOG("the listener saw no DISCONNECTED");
	EXPECT_EQ(1, self->seen.async_fatal)
		TH_LOG("QP_FATAL %d, QP_ACCESS_ERR %d, other %d",
		       self->seen.async_fatal, self->seen.async_access,
		       self->seen.async_other);
	EXPECT_EQ(0, self->seen.async_access);
	t1 = xp_counter(self, "tx_terminate_rdmap");
	EXPECT_EQ(1, t1 - t0) TH_LOG("tx_terminate_rdmap %lld -> %lld", t0, t1);
	TH_LOG("%lld ms", now_ms() - t);
}

/* TERM-04: a Read Request followed by 16 bytes of data (ULPDU 62) */
TEST_F_TIMEOUT(peer, read_request_with_data, 60)
{
	xp_read_req_refused(_metadata, self, "data=16",
			    "seg_len=62 ddp_op=read_req ddp_qn=0x1 ddp_msn=2 ddp_mo=0 ddp_last=1");
}

/* TERM-04: a Read Request whose segment has L clear (more to come) */
TEST_F_TIMEOUT(peer, read_request_without_last, 60)
{
	xp_read_req_refused(_metadata, self, "last=0",
			    "seg_len=46 ddp_op=read_req ddp_qn=0x1 ddp_msn=2 ddp_mo=0 ddp_last=0");
}

/* RDMAP-04: a Read Response when no RDMA Read is outstanding */
TEST_F_TIMEOUT(peer, read_response_unasked, 60)
{
	xp_hostile(_metadata, self, "write:0:0:64!opcode=2",
		   "terminate layer=0x0 etype=0x2 ecode=0x06", true);
}

/*
 * A frame cut short, then the TCP FIN: nothing is delivered, the
 * connection ends on both sides.
 */
TEST_F_TIMEOUT(peer, truncated_then_close, 60)
{
	static const char *const a[] = { "--linger", "5000", "--expect",
					  "close", "send:64!truncate=5",
					  "close", NULL };

	xp_run(_metadata, self, 3000, a);
	EXPECT_EQ(0, self->seen.peer_exit) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(0, self->seen.recv_ok);
	EXPECT_EQ(1, self->seen.disconnected);
}

/*
 * The peer's arguments (a[7]) for one malformed MPA frame: --mpa-fault
 * fault, or for a NULL fault, 300 bytes of private data in pd[301]
 * (more than the iw_cm carries).
 */
static void xp_mpa_fault_args(const char **a, char *pd, const char *fault,
			      const char *linger)
{
	memset(pd, 'p', 300);
	pd[300] = '\0';
	a[0] = "--timeout";
	a[1] = "5000";
	a[2] = "--linger";
	a[3] = linger;
	a[4] = fault ? "--mpa-fault" : "--pd";
	a[5] = fault ? fault : pd;
	a[6] = NULL;
}

/*
 * MPA-03: malformed MPA Requests. Each must end its TCP connection at
 * once (the peer sees it closed long before its 5-second start-up
 * limit, and xiw's own, mpa_timeout_ms, is 10 s), count one conn_failed,
 * and never reach the listener's ULP as a connection request. Then a
 * good connection to the same listener still works.
 */
TEST_F_TIMEOUT(peer, mpa_request_malformed, 120)
{
	static const char *const faults[] = {
		"key",		/* "mPA ID Req Frame" */
		"swap_key",	/* a Reply's key where a Request belongs */
		"rev=0",	/* RFC 5044 knows revisions 1 and 2 */
		"rev=3",
		"pd_len=513",	/* beyond MPA's 512 */
		"pd_len=2",	/* enhanced (S set) but too short for IRD/ORD */
		NULL,		/* 300 bytes of ULP private data: over 255 */
	};
	static const char *const good[] = { "--linger", "3000", "send:100",
					     "wait:300", "close", NULL };
	const char *a[7];
	char pd[301];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(faults); i++) {
		long long f0 = xp_counter(self, "conn_failed"), f1;
		long long t = now_ms();

		xp_mpa_fault_args(a, pd, faults[i], "0");
		ASSERT_LE(0, f0) TH_LOG("no hw_counters on %s",
					self->link.ibdev);
		xp_run(_metadata, self, 1000, a);
		f1 = xp_counter(self, "conn_failed");
		TH_LOG("%s: %lld ms", faults[i] ? faults[i] : "--pd (300 bytes)",
		       now_ms() - t);
		EXPECT_EQ(2, self->seen.peer_exit) XP_LOG_PEER();
		EXPECT_TRUE(xp_said(self, "mpa-failed reason=closed"))
			XP_LOG_PEER();
		EXPECT_EQ(0, self->seen.requests);
		EXPECT_EQ(1, f1 - f0) TH_LOG("conn_failed %lld -> %lld", f0, f1);
	}
	xp_good_sends(_metadata, self, good, 1, true);
}

/*
 * E-05: the peer asks for no IRD/ORD negotiation (0x3FFF both). The
 * listener's ULP accepted with 2 and 2, and that is what the Reply
 * carries: 0x3FFF is neither a peer IRD to cut our ORD to nor a peer
 * ORD to raise our IRD for. Two Reads at once, as the IRD allows, are
 * answered.
 */
TEST_F_TIMEOUT(peer, no_ird_ord_negotiation, 60)
{
	static const char *const a[] = {
		"--ird", "0x3fff", "--ord", "0x3fff", "--linger", "3000",
		"--expect", "mpa reply rev=2 m=0 c=1 r=0 s=1 ird=2 ord=2 ",
		"reads:2:0:0:0", "wait:1000", "close", NULL };

	xp_run(_metadata, self, 3000, a);
	EXPECT_EQ(0, self->seen.peer_exit) XP_LOG_PEER();
	EXPECT_EQ(2, xp_count(self, "read_resp stag=0x1000 to=0x0 len=0 last=1"))
		XP_LOG_PEER();
	EXPECT_FALSE(xp_said(self, "terminate")) XP_LOG_PEER();
	EXPECT_EQ(1, self->seen.established);
	EXPECT_EQ(0, self->seen.async_fatal + self->seen.async_access);
}

/* What the xiw client saw when it connected to the peer. */
struct xp_client {
	bool up;		/* ESTABLISHED */
	int connect_rc;		/* rdma_connect()'s errno, or 0 */
	int ird, ord;		/* its initiator_depth, responder_resources */
	int cm_other;		/* the last other CM event, or -1 */
	int got;		/* receive completions */
	struct ibv_wc wc;
	int peer_exit;		/* -1: did not exit normally */
	char out[4096];		/* the peer's stdout */
};

/*
 * xiw as MPA initiator (rdma_connect) towards the peer started with
 * args as responder on port; waits for one receive when established.
 */
static void xp_kernel_connect(struct __test_metadata *_metadata,
			      FIXTURE_DATA(peer) *self, int port,
			      const char *const *args, struct xp_client *r)
{
	const char *argv[24] = { self->peer, "--listen" };
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct rdma_conn_param cp = { .responder_resources = 2,
				      .initiator_depth = 2 };
	struct xr_side *c = &self->s[0];
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int pipefd[2], st, i, k = 3;
	char portstr[16];
	long long end;
	ssize_t n = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->cm_other = -1;
	snprintf(portstr, sizeof(portstr), "%d", port);
	argv[2] = portstr;
	for (i = 0; args[i] && k < 22; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	inet_pton(AF_INET, XR_ADDR, &dst.sin_addr);
	pid = xp_spawn(self, argv, &pipefd[0]);
	ASSERT_LE(0, pid);
	/* The peer prints "listening" once its socket is bound. */
	n = read(pipefd[0], r->out, sizeof(r->out) - 1);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, rdma_create_id(self->net.cch, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	end = now_ms() + XR_WAIT_MS;
	while (now_ms() < end && !r->up) {
		ev = xr_get_event(self->net.cch, 100);
		if (!ev)
			continue;
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			rdma_resolve_route(ev->id, 2000);
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			if (xr_side_init(&self->net, c, ev->id, &self->o))
				break;
			for (i = 0; i < XP_WR; i++)
				xr_recv(c, i, (size_t)i * XP_RECV_LEN, XP_RECV_LEN);
			if (rdma_connect(ev->id, &cp)) {
				r->connect_rc = errno;
				TH_LOG("rdma_connect: %s", strerror(errno));
			}
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			r->up = true;
			r->ird = ev->param.conn.initiator_depth;
			r->ord = ev->param.conn.responder_resources;
			break;
		default:
			r->cm_other = ev->event;
			end = 0;
			break;
		}
		rdma_ack_cm_event(ev);
	}
	if (r->up) {
		if (self->post_atomic)
			ASSERT_EQ(0, xr_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD,
					       0xa70, XP_ATOMIC_OFF, 0x1234,
					       0x1000, 1, 0));
		r->got = xr_poll(c->cq, &r->wc, 1, XR_WAIT_MS);
		rdma_disconnect(c->id);
	}
	waitpid(pid, &st, 0);
	for (;;) {
		ssize_t m = read(pipefd[0], r->out + n, sizeof(r->out) - 1 - n);

		if (m <= 0)
			break;
		n += m;
	}
	r->out[n] = '\0';
	close(pipefd[0]);
	if (!c->id)
		rdma_destroy_id(id);
	r->peer_exit = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	TH_LOG("peer exit %d, said:\n%s", r->peer_exit, r->out);
}

/*
 * xiw as MPA initiator towards the peer as responder: start-up with the
 * RTR message xiw offers (E-06), then the peer's Send lands in the
 * client's posted receive.
 */
TEST_F_TIMEOUT(peer, kernel_initiator, 60)
{
	static const char *const a[] = { "--linger", "3000", "send:200",
					  "wait:500", "close", NULL };
	struct xp_client r;

	xp_kernel_connect(_metadata, self, 18515, a, &r);
	ASSERT_TRUE(r.up) TH_LOG("CM event %d", r.cm_other);
	ASSERT_EQ(1, r.got);
	EXPECT_EQ(IBV_WC_SUCCESS, r.wc.status) TH_LOG("%s", xr_wc_str(&r.wc));
	EXPECT_EQ(200, r.wc.byte_len);
	EXPECT_TRUE(xp_pattern_ok(self->s[0].buf + r.wc.wr_id * XP_RECV_LEN,
				  200));
	EXPECT_EQ(0, r.peer_exit);
	EXPECT_TRUE(xp_line(r.out, "mpa request rev=2"));
	EXPECT_FALSE(xp_line(r.out, "terminate"));
}

/*
 * E-04: the responder's ORD (8) is more than xiw's IRD (2): xiw must
 * send Terminate 0x2/0x0/0x06 and tear down (RFC 6581 section 9.1), and
 * its ULP must not see the connection established (it sees REJECTED).
 */
TEST_F_TIMEOUT(peer, kernel_initiator_ird_short, 60)
{
	static const char *const a[] = {
		"--ord", "8", "--linger", "3000", "--expect",
		"terminate layer=0x2 etype=0x0 ecode=0x06", NULL };
	struct xp_client r;

	xp_kernel_connect(_metadata, self, 18516, a, &r);
	EXPECT_FALSE(r.up);
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, r.cm_other);
	EXPECT_EQ(0, r.peer_exit);
	EXPECT_TRUE(xp_line(r.out, "terminate layer=0x2 etype=0x0 ecode=0x06"))
		TH_LOG("no Terminate 0x2/0x0/0x06 before the close");
}

/*
 * xiw as RFC 7306 requester: its fetch-and-add towards the peer, which
 * answers it as told. A good Atomic Response completes it with the
 * original value in its buffer: the wire format as another
 * implementation reads and writes it.
 */
TEST_F_TIMEOUT(peer, kernel_atomic_answered, 60)
{
	static const char *const a[] = { "--atomic-reply", "ok", "--linger",
					  "3000", "wait:3000", "close", NULL };
	const uint8_t *got;
	struct xp_client r;

	self->post_atomic = true;
	xp_kernel_connect(_metadata, self, 18530, a, &r);
	ASSERT_TRUE(r.up) TH_LOG("CM event %d", r.cm_other);
	ASSERT_EQ(1, r.got);
	EXPECT_EQ(IBV_WC_SUCCESS, r.wc.status) TH_LOG("%s", xr_wc_str(&r.wc));
	EXPECT_EQ(IBV_WC_FETCH_ADD, r.wc.opcode);
	EXPECT_EQ(0xa70, r.wc.wr_id);
	EXPECT_EQ(8, r.wc.byte_len);
	got = self->s[0].buf + XP_ATOMIC_OFF;
	EXPECT_EQ(0x1122334455667788ULL, *(const uint64_t *)got);
	EXPECT_TRUE(xp_line(r.out, "atomic_req qn=1 "));
	EXPECT_FALSE(xp_line(r.out, "terminate"));
}

/*
 * An Atomic Response that is not the one expected: xiw, the requester,
 * sends the Terminate `term`; its atomic is flushed, never completed
 * with a value it did not get, and its buffer is untouched.
 */
static void xp_atomic_reply_refused(struct __test_metadata *_metadata,
				    FIXTURE_DATA(peer) *self, int port,
				    const char *how, const char *term)
{
	const char *const a[] = { "--atomic-reply", how, "--linger", "3000",
				  "--expect", term, "wait:3000", NULL };
	struct xp_client r;

	self->post_atomic = true;
	xp_kernel_connect(_metadata, self, port, a, &r);
	ASSERT_TRUE(r.up) TH_LOG("CM event %d", r.cm_other);
	ASSERT_EQ(1, r.got);
	EXPECT_EQ(0xa70, r.wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, r.wc.status)
		TH_LOG("%s", xr_wc_str(&r.wc));
	/* Zero since registration: the value in the reply never landed. */
	EXPECT_EQ(0, *(const uint64_t *)(self->s[0].buf + XP_ATOMIC_OFF));
	EXPECT_EQ(0, r.peer_exit) TH_LOG("expected '%s'", term);
}

TEST_F_TIMEOUT(peer, kernel_atomic_reply_wrong_id, 60)
{
	xp_atomic_reply_refused(_metadata, self, 18531, "id",
				"terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp m=1 seg_len=30 ddp_op=atomic_resp");
}

TEST_F_TIMEOUT(peer, kernel_atomic_reply_wrong_length, 60)
{
	xp_atomic_reply_refused(_metadata, self, 18532, "len",
				"terminate layer=0x0 etype=0x2 ecode=0x06 hdrs=ddp m=1 seg_len=34");
}

TEST_F_TIMEOUT(peer, kernel_atomic_reply_wrong_queue, 60)
{
	xp_atomic_reply_refused(_metadata, self, 18533, "qn",
				"terminate layer=0x1 etype=0x2 ecode=0x01 hdrs=ddp");
}

TEST_F_TIMEOUT(peer, kernel_atomic_reply_wrong_msn, 60)
{
	xp_atomic_reply_refused(_metadata, self, 18534, "msn",
				"terminate layer=0x1 etype=0x2 ecode=0x03 hdrs=ddp");
}

/*
 * MPA-03 on the active side: malformed MPA Replies to xiw's Request.
 * Each must fail the connect as REJECTED (the peer reset it: the iw_cm
 * reports -ECONNRESET), count one conn_failed and no reject received
 * (the frame carried no R bit xiw could trust), and leave nothing for
 * the next connect.
 */
TEST_F_TIMEOUT(peer, mpa_reply_malformed, 120)
{
	static const char *const faults[] = {
		/* swap_key: a Request's key, two initiators (MPA-14) */
		"key", "swap_key", "rev=3", "pd_len=513", "pd_len=2", NULL,
	};
	const char *a[7];
	char pd[301];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(faults); i++) {
		long long f0 = xp_counter(self, "conn_failed");
		long long r0 = xp_counter(self, "mpa_rejects_received");
		struct xp_client r;

		xp_mpa_fault_args(a, pd, faults[i], "500");
		ASSERT_LE(0, f0) TH_LOG("no hw_counters on %s",
					self->link.ibdev);
		TH_LOG("%s", faults[i] ? faults[i] : "--pd (300 bytes)");
		xp_kernel_connect(_metadata, self, 18540 + (int)i, a, &r);
		EXPECT_FALSE(r.up);
		EXPECT_EQ(RDMA_CM_EVENT_REJECTED, r.cm_other);
		EXPECT_TRUE(xp_line(r.out, "full-operation"))
			TH_LOG("the peer never sent its Reply");
		EXPECT_EQ(f0 + 1, xp_counter(self, "conn_failed"));
		EXPECT_EQ(r0, xp_counter(self, "mpa_rejects_received"));
		xr_side_fini(&self->s[0]);
	}
}

/*
 * E-05 on the active side: a Reply with IRD and ORD 0x3FFF leaves the
 * ULP's 2 and 2. An ORD of 0x3FFF taken as a number would be more than
 * xiw's IRD and end the connection (E-04, kernel_initiator_ird_short).
 */
TEST_F_TIMEOUT(peer, kernel_initiator_no_negotiation, 60)
{
	static const char *const a[] = {
		"--ird", "0x3fff", "--ord", "0x3fff", "--linger", "1000",
		"send:100", "wait:500", "close", NULL };
	struct xp_client r;

	xp_kernel_connect(_metadata, self, 18550, a, &r);
	ASSERT_TRUE(r.up) TH_LOG("CM event %d", r.cm_other);
	EXPECT_EQ(1, r.got);
	EXPECT_EQ(2, r.ird);
	EXPECT_EQ(2, r.ord);
	EXPECT_TRUE(xp_line(r.out, "mpa request rev=2 m=0 c=1 r=0 s=1 ird=2 ord=2 "));
	EXPECT_FALSE(xp_line(r.out, "terminate"));
}

/*
 * E-08: a local error after an enhanced Reply. The QP's rings cannot be
 * had (the wire_rings fault site, on a kernel with fault injection), so
 * xiw, the initiator, must send Terminate 0x2/0x0/0x05 ("local
 * catastrophic") before closing, count it, and its ULP must hear the
 * error (CONNECT_ERROR), not a refusal. The next connect works.
 */
TEST_F_TIMEOUT(peer, kernel_initiator_local_error, 90)
{
	static const char *const a[] = {
		"--linger", "3000", "--expect",
		"terminate layer=0x2 etype=0x0 ecode=0x05 hdrs=none", NULL };
	static const char *const good[] = { "--linger", "3000", "send:200",
					     "wait:500", "close", NULL };
	long long t0 = xp_counter(self, "tx_terminate_llp");
	long long f0 = xp_counter(self, "conn_failed");
	long failed = -1;
	struct xp_client r;

	if (!xf_present())
		SKIP(return, "no " XF_DIR "fail_site (a kernel without fault injection)");
	ASSERT_EQ(0, xf_prepare());
	ASSERT_LE(0, xf_site("wire_rings", NULL, &failed));
	ASSERT_EQ(0, xf_arm("wire_rings"));
	xp_kernel_connect(_metadata, self, 18552, a, &r);
	xf_disarm();
	EXPECT_EQ(failed + 1, xf_failed("wire_rings"));
	EXPECT_FALSE(r.up);
	EXPECT_EQ(RDMA_CM_EVENT_CONNECT_ERROR, r.cm_other);
	EXPECT_EQ(0, r.peer_exit) TH_LOG("no Terminate 0x2/0x0/0x05");
	EXPECT_EQ(t0 + 1, xp_counter(self, "tx_terminate_llp"));
	EXPECT_EQ(f0 + 1, xp_counter(self, "conn_failed"));
	xr_side_fini(&self->s[0]);

	xp_kernel_connect(_metadata, self, 18553, good, &r);
	ASSERT_TRUE(r.up) TH_LOG("CM event %d", r.cm_other);
	EXPECT_EQ(1, r.got);
	EXPECT_FALSE(xp_line(r.out, "terminate"));
}

/*
 * CM-01: once iw_connect has returned an error, no event follows. Fault
 * sites fail xiw's iw_connect twice (no conn, then no socket):
 * rdma_connect returns the error each time, and in the XR_WAIT_MS
 * (10 s) after it the client's id gets no CM event at all. Then a
 * connect works.
 */
TEST_F_TIMEOUT(peer, kernel_connect_fails_without_event, 120)
{
	static const char *const sites[] = { "conn_connect", "sock" };
	static const char *const none[] = { "--timeout", "2000", NULL };
	static const char *const good[] = { "--linger", "3000", "send:200",
					     "wait:500", "close", NULL };
	struct xp_client r;
	size_t i;

	if (!xf_present())
		SKIP(return, "no " XF_DIR "fail_site (a kernel without fault injection)");
	ASSERT_EQ(0, xf_prepare());
	for (i = 0; i < ARRAY_SIZE(sites); i++) {
		long failed = -1;

		ASSERT_LE(0, xf_site(sites[i], NULL, &failed));
		ASSERT_EQ(0, xf_arm(sites[i]));
		xp_kernel_connect(_metadata, self, 18554 + (int)i, none, &r);
		xf_disarm();
		EXPECT_EQ(failed + 1, xf_failed(sites[i])) TH_LOG("%s", sites[i]);
		EXPECT_NE(0, r.connect_rc) TH_LOG("%s", sites[i]);
		EXPECT_FALSE(r.up);
		EXPECT_EQ(-1, r.cm_other)
			TH_LOG("%s: CM event %d after a failed rdma_connect",
			       sites[i], r.cm_other);
		xr_side_fini(&self->s[0]);
	}
	xp_kernel_connect(_metadata, self, 18556, good, &r);
	ASSERT_TRUE(r.up) TH_LOG("CM event %d", r.cm_other);
	EXPECT_EQ(1, r.got);
}

/*
 * Objects of the slab cache that holds TCP sockets, from
 * /sys/kernel/slab/TCP/objects (SLUB; an alias when the cache is merged),
 * else /proc/slabinfo; -1 if neither has it.
 */
static long xp_tcp_objects(void)
{
	char line[512], name[64];
	long active = -1, n;
	FILE *f;

	if (read_text("/sys/kernel/slab/TCP/objects", line, sizeof(line)) > 0)
		return atol(line);
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", name, &n) == 2 &&
		    !strcmp(name, "TCP"))
			active = n;
	fclose(f);
	return active;
}

/*
 * E-06: the responder picks a ready-to-receive message xiw did not offer
 * (xiw offers a zero-length Write by default; the peer picks Read): xiw
 * must send Terminate 0x2/0x0/0x07 and tear down, and its ULP sees
 * REJECTED.
 */
TEST_F_TIMEOUT(peer, kernel_initiator_rtr_not_offered, 60)
{
	static const char *const a[] = {
		"--rtr", "read", "--force-rtr", "--linger", "3000", "--expect",
		"terminate layer=0x2 etype=0x0 ecode=0x07", NULL };
	struct xp_client r;

	xp_kernel_connect(_metadata, self, 18517, a, &r);
	EXPECT_FALSE(r.up);
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, r.cm_other);
	EXPECT_EQ(0, r.peer_exit);
	EXPECT_TRUE(xp_line(r.out, "terminate layer=0x2 etype=0x0 ecode=0x07"))
		TH_LOG("no Terminate 0x2/0x0/0x07 before the close");
}

/*
 * The hostile campaign (errors.rst, "Random and structured mutations"):
 * XIW_FUZZ_FRAMES frames (default 3000, `make fuzz` runs 100000) from
 * seed XIW_FUZZ_SEED (default 20261130), 5 % of them mutated, the peer
 * reconnecting after every Terminate. Every connection must end, and the
 * TCP slab must give back what it took.
 */
TEST_F_TIMEOUT(peer, fuzz, 3600)
{
	const char *fe = getenv("XIW_FUZZ_FRAMES"), *se = getenv("XIW_FUZZ_SEED");
	unsigned long frames = fe ? strtoul(fe, NULL, 10) : 3000;
	unsigned long seed = se ? strtoul(se, NULL, 10) : 20261130;
	char f[24], sd[24], done[96];
	const char *const a[] = { "--fuzz", "--seed", sd, "--frames", f,
				  "--mutate", "5", NULL };
	long tcp0 = xp_tcp_objects(), tcp1 = -1;
	long long end, t = now_ms();

	snprintf(f, sizeof(f), "%lu", frames);
	snprintf(sd, sizeof(sd), "%lu", seed);
	snprintf(done, sizeof(done), "fuzz done seed=%lu frames=%lu", seed,
		 frames);
	/* About 25 ms a frame under TCG, connections included. */
	self->run_ms = XP_RUN_MS + 25LL * frames;
	TH_LOG("seed %lu, %lu frames", seed, frames);
	xp_run(_metadata, self, 3000, a);
	TH_LOG("%lld ms: %s", now_ms() - t, self->seen.out);
	EXPECT_EQ(0, self->seen.peer_exit);
	EXPECT_TRUE(xp_said(self, done));
	EXPECT_LE(1, self->seen.established);
	EXPECT_EQ(self->seen.established, self->seen.disconnected)
		TH_LOG("a connection did not end");
	ASSERT_LE(0, tcp0) TH_LOG("no TCP slab count in /sys/kernel/slab or /proc/slabinfo");
	/* Closed sockets are freed after an RCU grace period or so. */
	end = now_ms() + 10000;
	while (now_ms() < end) {
		tcp1 = xp_tcp_objects();
		if (tcp1 <= tcp0)
			break;
		usleep(100000);
	}
	TH_LOG("TCP slab objects: %ld before, %ld after", tcp0, tcp1);
	EXPECT_LE(tcp1, tcp0);
}

TEST_HARNESS_MAIN
