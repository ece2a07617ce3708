// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libfabric over the device under test: the API used directly, through
 * libfabric's "verbs" provider (FI_EP_MSG, rdma_cm underneath) and its
 * "verbs;ofi_rxm" layering (FI_EP_RDM), server and client in this
 * process over 10.99.0.1 on a dummy netdev (xiw_rdma_util.h).
 *
 * One thread drives both ends: connection set-up is asynchronous in
 * libfabric (fi_connect, fi_accept), and the transfers progress in the
 * kernel, so each side's event and completion queues are read in turn,
 * every wait with a deadline (XR_WAIT_MS).
 *
 *   msg_pingpong       Send/Receive ping-pong, data checked, 1 B to
 *                      1 MiB; then a graceful fi_shutdown: both sides see
 *                      FI_SHUTDOWN and no completion at all (nothing was
 *                      outstanding, so nothing may be flushed)
 *   msg_last_send_kept a Send posted right before fi_shutdown still
 *                      arrives and completes successfully
 *   msg_recv_flushed   a Receive still posted at shutdown completes once,
 *                      as canceled (FI_ECANCELED), never as data
 *   srx_two_endpoints  two connections whose server ends share one
 *                      receive context (fi_srx_context, an SRQ): every
 *                      message of both arrives once, checked
 *   rma_write          fi_write into the peer, then a Send: the data is
 *                      there when the Send arrives
 *   rma_read_window    16 RDMA Reads outstanding at once, checked
 *   rma_read_deep      as many Reads outstanding as the send queue
 *                      holds (up to 256, above the device's ORD of 128:
 *                      the queue must hold the rest back, not fail them)
 *   rdm_rxm            "verbs;ofi_rxm" RDM endpoints: fi_enable (the MSG
 *                      CQ rxm asks for is 2^18 entries), then tagged
 *                      messages both ways up to 256 KiB (rendezvous
 *                      through RDMA Read past 16 KiB), checked
 *
 * XIW_TEST_LINK_TYPE=siw runs the same tests on the kernel's siw to
 * validate them. FI_LOG_LEVEL=warn shows libfabric's own complaints.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"

#define FAB_VERSION	FI_VERSION(1, 17)
#define FAB_MAXMSG	(1U << 20)
#define FAB_BUF		(2 * FAB_MAXMSG)

/* One end of a MSG connection (or one RDM endpoint). */
struct fend {
	struct fid_ep *ep;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_mr *mr;
	uint8_t *buf;
	void *desc;
	struct fi_context ctx[512];
};

FIXTURE(fab) {
	struct xr_link link;
	struct fi_info *sinfo, *cinfo;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_pep *pep;
	struct fid_eq *peq;
	struct fid_ep *srx;
	struct fid_mr *srx_mr;	/* the shared receives' buffer */
	uint8_t *srx_buf;
	struct fi_context srx_ctx[64];
	bool prepost;		/* fab_connect posts a receive on each end */
	struct fend cli[2], srv[2];
	char port[16];
};

/* libfabric's message for a negative return, with its number. */
#define FE(rc) fi_strerror((int)-(rc))

static struct fi_info *fab_hints(const char *prov, enum fi_ep_type type,
				 uint64_t caps, const char *ibdev)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->ep_attr->type = type;
	h->caps = caps;
	h->mode = FI_CONTEXT;
	h->addr_format = FI_SOCKADDR_IN;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->fabric_attr->prov_name = strdup(prov);
	/* verbs names its domains after the RDMA device; rxm adds "-rxm". */
	if (type == FI_EP_MSG)
		h->domain_attr->name = strdup(ibdev);
	return h;
}

FIXTURE_SETUP(fab)
{
	xr_lo_mtu(65536);
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
}

static void fend_close(struct fend *e)
{
	if (e->ep)
		fi_close(&e->ep->fid);
	if (e->mr)
		fi_close(&e->mr->fid);
	if (e->cq)
		fi_close(&e->cq->fid);
	if (e->eq)
		fi_close(&e->eq->fid);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

FIXTURE_TEARDOWN(fab)
{
	int i;

	for (i = 0; i < 2; i++) {
		fend_close(&self->cli[i]);
		fend_close(&self->srv[i]);
	}
	if (self->srx)
		fi_close(&self->srx->fid);
	if (self->srx_mr)
		fi_close(&self->srx_mr->fid);
	free(self->srx_buf);
	if (self->pep)
		fi_close(&self->pep->fid);
	if (self->peq)
		fi_close(&self->peq->fid);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->sinfo);
	fi_freeinfo(self->cinfo);
}

/*
 * The verbs MSG fabric of the device under test: a listener on port, the
 * client's info, one domain both ends use. 0 or a negative fi error.
 */
static int fab_open(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fab) *self, int port)
{
	struct fi_info *h = fab_hints("verbs", FI_EP_MSG, FI_MSG | FI_RMA,
				      self->link.ibdev);
	struct fi_eq_attr eqa = { .wait_obj = FI_WAIT_UNSPEC };
	int rc;

	if (!h)
		return -FI_ENOMEM;
	snprintf(self->port, sizeof(self->port), "%d", port);
	rc = fi_getinfo(FAB_VERSION, XR_ADDR, self->port, FI_SOURCE, h,
			&self->sinfo);
	if (!rc)
		rc = fi_getinfo(FAB_VERSION, XR_ADDR, self->port, 0, h,
				&self->cinfo);
	fi_freeinfo(h);
	if (rc) {
		TH_LOG("fi_getinfo(verbs, %s, %s:%s): %s", self->link.ibdev,
		       XR_ADDR, self->port, FE(rc));
		return rc;
	}
	rc = fi_fabric(self->cinfo->fabric_attr, &self->fabric, NULL);
	if (!rc)
		rc = fi_domain(self->fabric, self->cinfo, &self->domain, NULL);
	if (!rc)
		rc = fi_eq_open(self->fabric, &eqa, &self->peq, NULL);
	if (!rc)
		rc = fi_passive_ep(self->fabric, self->sinfo, &self->pep, NULL);
	if (!rc)
		rc = fi_pep_bind(self->pep, &self->peq->fid, 0);
	if (!rc)
		rc = fi_listen(self->pep);
	if (rc)
		TH_LOG("fabric/domain/listener: %s", FE(rc));
	return rc;
}

/* An endpoint of info with its EQ, CQ and a registered buffer. */
static int fend_open(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fab) *self, struct fend *e,
		     struct fi_info *info, struct fid_ep *srx)
{
	struct fi_eq_attr eqa = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_MSG,
				  .wait_obj = FI_WAIT_NONE };
	const char *what = "eq";
	int rc;

	e->buf = aligned_alloc(4096, FAB_BUF);
	if (!e->buf)
		return -FI_ENOMEM;
	memset(e->buf, 0, FAB_BUF);
	rc = fi_eq_open(self->fabric, &eqa, &e->eq, NULL);
	if (!rc) {
		what = "cq";
		rc = fi_cq_open(self->domain, &cqa, &e->cq, NULL);
	}
	if (!rc) {
		what = "endpoint";
		rc = fi_endpoint(self->domain, info, &e->ep, NULL);
	}
	if (!rc) {
		what = "bind";
		rc = fi_ep_bind(e->ep, &e->eq->fid, 0);
	}
	if (!rc)
		rc = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc && srx)
		rc = fi_ep_bind(e->ep, &srx->fid, 0);
	if (!rc) {
		what = "fi_enable";
		rc = fi_enable(e->ep);
	}
	if (!rc) {
		what = "fi_mr_reg";
		rc = fi_mr_reg(self->domain, e->buf, FAB_BUF,
			       FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			       FI_REMOTE_READ | FI_REMOTE_WRITE,
			       0, 0, 0, &e->mr, NULL);
	}
	if (rc) {
		TH_LOG("%s: %s", what, FE(rc));
		return rc;
	}
	e->desc = fi_mr_desc(e->mr);
	return 0;
}

/*
 * Read the EQs in turn until each with a wanted event (want[i] != 0) has
 * produced it; a CONNREQ's info goes to *info. Reading an EQ is also
 * what progresses its connection (verbs resolves the route and only then
 * connects, from the client's EQ): every EQ of the set is read, wanted
 * or not, and any event not wanted fails. 0 or a negative fi error.
 */
static int eq_all(struct __test_metadata *_metadata, struct fid_eq **eqs,
		  const uint32_t *want, int n, struct fi_info **info)
{
	static const char *const who[] = { "eq 0", "eq 1", "eq 2" };
	long long end = now_ms() + XR_WAIT_MS;
	struct {
		struct fi_eq_cm_entry e;
		uint8_t priv[256];
	} ent;
	struct fi_eq_err_entry err;
	bool done[3] = {};
	int i, left = 0;
	uint32_t ev;
	ssize_t rc;

	for (i = 0; i < n; i++)
		left += want[i] != 0;
	while (left) {
		if (now_ms() >= end) {
			for (i = 0; i < n; i++)
				if (want[i] && !done[i])
					TH_LOG("%s: no event %u in %d ms", who[i],
					       want[i], XR_WAIT_MS);
			return -FI_ETIMEDOUT;
		}
		for (i = 0; i < n; i++) {
			rc = fi_eq_read(eqs[i], &ev, &ent, sizeof(ent), 0);
			if (rc == -FI_EAGAIN)
				continue;
			if (rc == -FI_EAVAIL) {
				memset(&err, 0, sizeof(err));
				if (fi_eq_readerr(eqs[i], &err, 0) > 0) {
					TH_LOG("%s: EQ error %s (provider errno %d)",
					       who[i], FE(-err.err), err.prov_errno);
					return err.err ? -err.err : -FI_EOTHER;
				}
			}
			if (rc < 0) {
				TH_LOG("%s: fi_eq_read: %s", who[i], FE(rc));
				return (int)rc;
			}
			if (ev == FI_CONNREQ && info && want[i] == FI_CONNREQ &&
			    !done[i]) {
				*info = ent.e.info;
			} else if (ev != want[i] || done[i]) {
				TH_LOG("%s: event %u, not %u", who[i], ev, want[i]);
				if (ev == FI_CONNREQ)
					fi_freeinfo(ent.e.info);
				return -FI_EOTHER;
			}
			done[i] = true;
			left--;
		}
		usleep(1000);
	}
	return 0;
}

/*
 * Connect cli[i] to a server endpoint srv[i] (bound to self->srx when
 * set): connect, take the request, accept, both established.
 */
static int fab_connect(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fab) *self, int i)
{
	struct fid_eq *eqs[2] = { self->peq, NULL };
	uint32_t want[2] = { FI_CONNREQ, 0 };
	struct fi_info *req = NULL;
	int rc;

	rc = fend_open(_metadata, self, &self->cli[i], self->cinfo, NULL);
	/* As fabtests does: the first receive before the connection. */
	if (!rc && self->prepost)
		rc = fi_recv(self->cli[i].ep, self->cli[i].buf, FAB_MAXMSG,
			     self->cli[i].desc, 0, &self->cli[i].ctx[0]);
	if (!rc)
		rc = fi_connect(self->cli[i].ep, self->cinfo->dest_addr, NULL, 0);
	eqs[1] = self->cli[i].eq;
	if (!rc)
		rc = eq_all(_metadata, eqs, want, 2, &req);
	if (rc) {
		TH_LOG("connect %d (eq 0 listener, eq 1 client): %s", i, FE(rc));
		return rc;
	}
	if (self->srx)
		req->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	rc = fend_open(_metadata, self, &self->srv[i], req, self->srx);
	if (!rc && self->prepost)
		rc = fi_recv(self->srv[i].ep, self->srv[i].buf, FAB_MAXMSG,
			     self->srv[i].desc, 0, &self->srv[i].ctx[0]);
	if (!rc)
		rc = fi_accept(self->srv[i].ep, NULL, 0);
	fi_freeinfo(req);
	eqs[0] = self->srv[i].eq;
	want[0] = FI_CONNECTED;
	want[1] = FI_CONNECTED;
	if (!rc)
		rc = eq_all(_metadata, eqs, want, 2, NULL);
	if (rc)
		TH_LOG("accept %d (eq 0 server, eq 1 client): %s", i, FE(rc));
	return rc;
}

/*
 * One completion of cq within ms into c. 1 when there is one, 0 when
 * none came, or a negative fi error; an error completion is returned
 * as 1 with its error in *err (0 for success).
 */
static int cq_get(struct fid_cq *cq, struct fi_cq_msg_entry *c, int *err,
		  int ms)
{
	long long end = now_ms() + ms;
	struct fi_cq_err_entry ee;
	ssize_t rc;
	int spins = 0;

	*err = 0;
	for (;;) {
		rc = fi_cq_read(cq, c, 1);
		if (rc == 1)
			return 1;
		if (rc == -FI_EAVAIL) {
			memset(&ee, 0, sizeof(ee));
			rc = fi_cq_readerr(cq, &ee, 0);
			if (rc != 1)
				return rc < 0 ? (int)rc : -FI_EOTHER;
			c->op_context = ee.op_context;
			c->flags = ee.flags;
			c->len = ee.len;
			*err = ee.err ? ee.err : FI_EOTHER;
			return 1;
		}
		if (rc != -FI_EAGAIN)
			return (int)rc;
		if (now_ms() >= end)
			return 0;
		if (++spins > 64)
			usleep(200);
	}
}

/* Expect one successful completion for op_context ctx on e's CQ. */
static int cq_expect(struct __test_metadata *_metadata, struct fend *e,
		     void *ctx, size_t len, const char *who)
{
	struct fi_cq_msg_entry c;
	int err, rc = cq_get(e->cq, &c, &err, XR_WAIT_MS);

	if (rc != 1) {
		TH_LOG("%s: no completion (%d: %s)", who, rc,
		       rc ? FE(rc) : "timed out");
		return -1;
	}
	if (err) {
		TH_LOG("%s: completion error %s (flags 0x%llx)", who, FE(-err),
		       (unsigned long long)c.flags);
		return -1;
	}
	if (c.op_context != ctx) {
		TH_LOG("%s: completion for context %p, expected %p", who,
		       c.op_context, ctx);
		return -1;
	}
	if ((c.flags & FI_RECV) && c.len != len) {
		TH_LOG("%s: received %zu bytes, sent %zu", who, c.len, len);
		return -1;
	}
	return 0;
}

/* Nothing at all on cq for ms (no flushed or stray completion). */
static int cq_quiet(struct __test_metadata *_metadata, struct fend *e,
		    int ms, const char *who)
{
	struct fi_cq_msg_entry c;
	int err, rc = cq_get(e->cq, &c, &err, ms);

	if (rc == 0)
		return 0;
	if (rc == 1)
		TH_LOG("%s: unexpected completion: %s, flags 0x%llx, context %p",
		       who, err ? FE(-err) : "success",
		       (unsigned long long)c.flags, c.op_context);
	else
		TH_LOG("%s: fi_cq_read: %s", who, FE(rc));
	return -1;
}

/* Post a send, retrying while the queue is full. */
static int fsend(struct fend *e, size_t off, size_t len, void *ctx)
{
	long long end = now_ms() + XR_WAIT_MS;
	ssize_t rc;

	do {
		rc = fi_send(e->ep, e->buf + off, len, e->desc, 0, ctx);
	} while (rc == -FI_EAGAIN && now_ms() < end);
	return (int)rc;
}

/* Send len bytes of seed's pattern from a to b and check them there. */
static int xfer(struct __test_metadata *_metadata, struct fend *a,
		struct fend *b, size_t len, uint64_t seed, const char *who)
{
	long off;
	int rc;

	rc = fi_recv(b->ep, b->buf, FAB_MAXMSG, b->desc, 0, &b->ctx[0]);
	if (rc) {
		TH_LOG("%s: fi_recv: %s", who, FE(rc));
		return -1;
	}
	memset(b->buf, 0, len);
	xr_fill(a->buf + FAB_MAXMSG, len, seed);
	rc = fsend(a, FAB_MAXMSG, len, &a->ctx[1]);
	if (rc) {
		TH_LOG("%s: fi_send(%zu): %s", who, len, FE(rc));
		return -1;
	}
	if (cq_expect(_metadata, a, &a->ctx[1], len, "sender") ||
	    cq_expect(_metadata, b, &b->ctx[0], len, "receiver"))
		return -1;
	off = xr_check(b->buf, len, seed);
	if (off >= 0) {
		TH_LOG("%s: %zu bytes, first bad byte at %ld", who, len, off);
		return -1;
	}
	return 0;
}

static const size_t sizes[] = { 1, 15, 64, 1000, 4096, 4097, 65536,
				 262144, FAB_MAXMSG };

/* Both ends see FI_SHUTDOWN after the client's fi_shutdown. */
static int shutdown_both(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fab) *self)
{
	struct fid_eq *eqs[2] = { self->srv[0].eq, self->cli[0].eq };
	const uint32_t want[2] = { FI_SHUTDOWN, FI_SHUTDOWN };
	int rc = fi_shutdown(self->cli[0].ep, 0);

	if (rc) {
		TH_LOG("fi_shutdown: %s", FE(rc));
		return rc;
	}
	rc = eq_all(_metadata, eqs, want, 2, NULL);
	if (rc)
		TH_LOG("shutdown (eq 0 server, eq 1 client): %s", FE(rc));
	return rc;
}

TEST_F_TIMEOUT(fab, msg_pingpong, 300)
{
	unsigned int i, it, n = 0;

	ASSERT_EQ(0, fab_open(_metadata, self, 7601));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (it = 0; it < 3; it++) {
			ASSERT_EQ(0, xfer(_metadata, &self->cli[0],
					  &self->srv[0], sizes[i], 2 * n, "ping"))
				TH_LOG("size %zu, round %u", sizes[i], it);
			ASSERT_EQ(0, xfer(_metadata, &self->srv[0],
					  &self->cli[0], sizes[i], 2 * n + 1,
					  "pong"))
				TH_LOG("size %zu, round %u", sizes[i], it);
			n++;
		}
	}
	ASSERT_EQ(0, shutdown_both(_metadata, self));
	/* Nothing was outstanding: nothing may complete, flushed or not. */
	EXPECT_EQ(0, cq_quiet(_metadata, &self->srv[0], 500, "server"));
	EXPECT_EQ(0, cq_quiet(_metadata, &self->cli[0], 500, "client"));
}

TEST_F_TIMEOUT(fab, msg_last_send_kept, 300)
{
	struct fend *c = &self->cli[0], *s = &self->srv[0];
	const size_t len = 65536;
	long off;

	ASSERT_EQ(0, fab_open(_metadata, self, 7602));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	ASSERT_EQ(0, xfer(_metadata, c, s, 100, 1, "first"));
	ASSERT_EQ(0, fi_recv(s->ep, s->buf, FAB_MAXMSG, s->desc, 0, &s->ctx[0]));
	xr_fill(c->buf + FAB_MAXMSG, len, 2);
	ASSERT_EQ(0, fsend(c, FAB_MAXMSG, len, &c->ctx[1]));
	/* Graceful: what was posted before goes out before the close. */
	ASSERT_EQ(0, shutdown_both(_metadata, self));
	ASSERT_EQ(0, cq_expect(_metadata, c, &c->ctx[1], len, "client"));
	ASSERT_EQ(0, cq_expect(_metadata, s, &s->ctx[0], len, "server"));
	off = xr_check(s->buf, len, 2);
	EXPECT_EQ(-1, off) TH_LOG("first bad byte at %ld", off);
	EXPECT_EQ(0, cq_quiet(_metadata, s, 500, "server"));
	EXPECT_EQ(0, cq_quiet(_metadata, c, 500, "client"));
}

TEST_F_TIMEOUT(fab, msg_recv_flushed, 300)
{
	struct fend *c = &self->cli[0], *s = &self->srv[0];
	struct fi_cq_msg_entry e;
	int err;

	ASSERT_EQ(0, fab_open(_metadata, self, 7603));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	ASSERT_EQ(0, xfer(_metadata, c, s, 100, 1, "first"));
	ASSERT_EQ(0, fi_recv(s->ep, s->buf, FAB_MAXMSG, s->desc, 0, &s->ctx[5]));
	ASSERT_EQ(0, shutdown_both(_metadata, self));
	ASSERT_EQ(1, cq_get(s->cq, &e, &err, XR_WAIT_MS))
		TH_LOG("the posted receive never completed");
	EXPECT_EQ(&s->ctx[5], e.op_context);
	EXPECT_EQ(FI_ECANCELED, err) TH_LOG("status %s", err ? FE(-err) : "success");
	EXPECT_EQ(0, cq_quiet(_metadata, s, 500, "server"));
	EXPECT_EQ(0, cq_quiet(_metadata, c, 500, "client"));
}

/*
 * Receives posted after fi_enable and before fi_connect/fi_accept (the
 * order of fabtests' ft_enable_ep_recv) take the first message of each
 * direction.
 */
TEST_F_TIMEOUT(fab, msg_recv_before_connect, 300)
{
	struct fend *c = &self->cli[0], *s = &self->srv[0];
	long off;

	self->prepost = true;
	ASSERT_EQ(0, fab_open(_metadata, self, 7608));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	xr_fill(c->buf + FAB_MAXMSG, 3000, 21);
	ASSERT_EQ(0, fsend(c, FAB_MAXMSG, 3000, &c->ctx[1]));
	ASSERT_EQ(0, cq_expect(_metadata, c, &c->ctx[1], 0, "client send"));
	ASSERT_EQ(0, cq_expect(_metadata, s, &s->ctx[0], 3000, "server receive"));
	off = xr_check(s->buf, 3000, 21);
	ASSERT_EQ(-1, off) TH_LOG("bad byte at %ld", off);
	xr_fill(s->buf + FAB_MAXMSG, 5000, 22);
	ASSERT_EQ(0, fsend(s, FAB_MAXMSG, 5000, &s->ctx[1]));
	ASSERT_EQ(0, cq_expect(_metadata, s, &s->ctx[1], 0, "server send"));
	ASSERT_EQ(0, cq_expect(_metadata, c, &c->ctx[0], 5000, "client receive"));
	off = xr_check(c->buf, 5000, 22);
	ASSERT_EQ(-1, off) TH_LOG("bad byte at %ld", off);
	ASSERT_EQ(0, shutdown_both(_metadata, self));
	EXPECT_EQ(0, cq_quiet(_metadata, s, 200, "server"));
	EXPECT_EQ(0, cq_quiet(_metadata, c, 200, "client"));
}

/*
 * The shared receive context: SRX_DEPTH receives posted before any
 * endpoint exists, each reposted as it completes, ROUNDS rounds of
 * SRX_BURST messages from each client (so the SRQ ring wraps many times
 * and never runs dry: iWARP has no RNR retry, a Send finding no receive
 * breaks the connection). Message: client, round, number, then a
 * pattern of their seed, 8 + 100 to 4000 bytes.
 */
#define SRX_DEPTH	16
#define SRX_BURST	(SRX_DEPTH / 2)
#define SRX_ROUNDS	8
#define SRX_SLOT	8192

static int srx_post(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fab) *self, unsigned int slot)
{
	int rc = fi_recv(self->srx, self->srx_buf + slot * SRX_SLOT,
			 SRX_SLOT, fi_mr_desc(self->srx_mr), 0,
			 &self->srx_ctx[slot]);

	if (rc)
		TH_LOG("fi_recv(srx) slot %u: %s", slot, FE(rc));
	return rc;
}

static size_t srx_len(unsigned int r, unsigned int k)
{
	return 8 + 100 + ((r * SRX_BURST + k) * 397) % 3900;
}

TEST_F_TIMEOUT(fab, srx_two_endpoints, 300)
{
	uint8_t seen[2][SRX_ROUNDS][SRX_BURST] = {};
	struct fi_cq_msg_entry e;
	struct fi_rx_attr rxa;
	unsigned int r, k, i, got, slot;
	int err, rc;

	ASSERT_EQ(0, fab_open(_metadata, self, 7604));
	/* As fabtests does: the provider's receive attributes. */
	rxa = *self->cinfo->rx_attr;
	rxa.size = SRX_DEPTH;
	rc = fi_srx_context(self->domain, &rxa, &self->srx, NULL);
	ASSERT_EQ(0, rc) TH_LOG("fi_srx_context: %s", FE(rc));
	self->srx_buf = aligned_alloc(4096, SRX_DEPTH * SRX_SLOT);
	ASSERT_NE(NULL, self->srx_buf);
	rc = fi_mr_reg(self->domain, self->srx_buf, SRX_DEPTH * SRX_SLOT,
		       FI_RECV, 0, 0, 0, &self->srx_mr, NULL);
	ASSERT_EQ(0, rc) TH_LOG("fi_mr_reg: %s", FE(rc));
	/* Posted before any endpoint uses the context (fabtests' order). */
	for (slot = 0; slot < SRX_DEPTH; slot++)
		ASSERT_EQ(0, srx_post(_metadata, self, slot));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	ASSERT_EQ(0, fab_connect(_metadata, self, 1));
	for (r = 0; r < SRX_ROUNDS; r++) {
		for (k = 0; k < SRX_BURST; k++) {
			for (i = 0; i < 2; i++) {
				struct fend *c = &self->cli[i];
				uint32_t hdr[3] = { i, r, k };
				uint8_t *m = c->buf + FAB_MAXMSG + k * SRX_SLOT;
				size_t len = srx_len(r, k);

				memcpy(m, hdr, 12);
				xr_fill(m + 12, len - 12, 1000 * i + 100 * r + k);
				ASSERT_EQ(0, fsend(c, FAB_MAXMSG + k * SRX_SLOT,
						   len, &c->ctx[k]));
			}
		}
		for (i = 0; i < 2; i++)
			for (k = 0; k < SRX_BURST; k++)
				ASSERT_EQ(0, cq_expect(_metadata, &self->cli[i],
						       &self->cli[i].ctx[k], 0,
						       "client"))
					TH_LOG("client %u round %u send %u", i, r, k);
		/* Each server endpoint's receives complete on its own CQ. */
		for (got = 0; got < 2 * SRX_BURST;) {
			bool any = false;

			for (i = 0; i < 2; i++) {
				uint32_t hdr[3];
				uint8_t *m;
				long off;

				rc = cq_get(self->srv[i].cq, &e, &err, 100);
				if (rc == 0)
					continue;
				ASSERT_EQ(1, rc) TH_LOG("server cq: %s", FE(rc));
				ASSERT_EQ(0, err)
					TH_LOG("server %u round %u: completion %s (flags 0x%llx)",
					       i, r, FE(-err),
					       (unsigned long long)e.flags);
				any = true;
				got++;
				slot = (struct fi_context *)e.op_context -
				       self->srx_ctx;
				ASSERT_LT(slot, SRX_DEPTH);
				m = self->srx_buf + slot * SRX_SLOT;
				memcpy(hdr, m, 12);
				ASSERT_LT(hdr[0], 2);
				ASSERT_EQ(r, hdr[1]);
				ASSERT_LT(hdr[2], SRX_BURST);
				EXPECT_EQ(i, hdr[0]);
				ASSERT_EQ(srx_len(hdr[1], hdr[2]), e.len);
				off = xr_check(m + 12, e.len - 12,
					       1000 * hdr[0] + 100 * hdr[1] + hdr[2]);
				ASSERT_EQ(-1, off)
					TH_LOG("client %u round %u msg %u: bad byte at %ld",
					       hdr[0], hdr[1], hdr[2], off);
				ASSERT_EQ(0, seen[hdr[0]][r][hdr[2]])
					TH_LOG("client %u msg %u arrived twice",
					       hdr[0], hdr[2]);
				seen[hdr[0]][r][hdr[2]] = 1;
				memset(m, 0, 12);
				ASSERT_EQ(0, srx_post(_metadata, self, slot));
			}
			ASSERT_TRUE(any || got == 2 * SRX_BURST)
				TH_LOG("round %u: %u of %u messages arrived", r,
				       got, 2 * SRX_BURST);
		}
	}
	for (i = 0; i < 2; i++)
		for (r = 0; r < SRX_ROUNDS; r++)
			for (k = 0; k < SRX_BURST; k++)
				ASSERT_EQ(1, seen[i][r][k]);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, cq_quiet(_metadata, &self->srv[i], 200, "server"));
		EXPECT_EQ(0, cq_quiet(_metadata, &self->cli[i], 200, "client"));
	}
}

TEST_F_TIMEOUT(fab, rma_write, 300)
{
	struct fend *c = &self->cli[0], *s = &self->srv[0];
	const size_t lens[] = { 1, 4096, 65536, FAB_MAXMSG };
	unsigned int i;
	long off;
	int rc;

	ASSERT_EQ(0, fab_open(_metadata, self, 7605));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		memset(s->buf + FAB_MAXMSG, 0, lens[i]);
		xr_fill(c->buf, lens[i], 50 + i);
		rc = fi_write(c->ep, c->buf, lens[i], c->desc, 0,
			      (uint64_t)(uintptr_t)(s->buf + FAB_MAXMSG),
			      fi_mr_key(s->mr), &c->ctx[2]);
		ASSERT_EQ(0, rc) TH_LOG("fi_write: %s", FE(rc));
		ASSERT_EQ(0, cq_expect(_metadata, c, &c->ctx[2], 0, "write"));
		/* The Send after it finds the data placed. */
		ASSERT_EQ(0, xfer(_metadata, c, s, 8, 7, "notify"));
		off = xr_check(s->buf + FAB_MAXMSG, lens[i], 50 + i);
		ASSERT_EQ(-1, off) TH_LOG("%zu bytes: bad byte at %ld",
					  lens[i], off);
	}
	ASSERT_EQ(0, shutdown_both(_metadata, self));
	EXPECT_EQ(0, cq_quiet(_metadata, s, 200, "server"));
	EXPECT_EQ(0, cq_quiet(_metadata, c, 200, "client"));
}

/* window Reads of chunk bytes outstanding at once, rounds times. */
static void read_window(struct __test_metadata *_metadata,
			FIXTURE_DATA(fab) *self, int port, unsigned int window)
{
	struct fend *c = &self->cli[0], *s = &self->srv[0];
	const size_t chunk = FAB_BUF / 256;
	unsigned int r, k, done;
	struct fi_cq_msg_entry e;
	int err, rc;
	long off;

	ASSERT_EQ(0, fab_open(_metadata, self, port));
	ASSERT_EQ(0, fab_connect(_metadata, self, 0));
	if (window > self->cinfo->tx_attr->size)
		window = self->cinfo->tx_attr->size;
	TH_LOG("%u reads of %zu bytes outstanding (tx size %zu)", window,
	       chunk, self->cinfo->tx_attr->size);
	for (r = 0; r < 3; r++) {
		for (k = 0; k < window; k++)
			xr_fill(s->buf + k * chunk, chunk, 100 * r + k);
		memset(c->buf, 0, FAB_BUF);
		for (k = 0; k < window; k++) {
			rc = fi_read(c->ep, c->buf + k * chunk, chunk, c->desc, 0,
				     (uint64_t)(uintptr_t)(s->buf + k * chunk),
				     fi_mr_key(s->mr), &c->ctx[k]);
			ASSERT_EQ(0, rc) TH_LOG("round %u: fi_read %u: %s", r, k,
						FE(rc));
		}
		for (done = 0; done < window; done++) {
			rc = cq_get(c->cq, &e, &err, XR_WAIT_MS);
			ASSERT_EQ(1, rc) TH_LOG("round %u: %u of %u reads completed",
						r, done, window);
			ASSERT_EQ(0, err) TH_LOG("round %u, read %ld: %s", r,
						 (long)((struct fi_context *)e.op_context - c->ctx),
						 FE(-err));
		}
		for (k = 0; k < window; k++) {
			off = xr_check(c->buf + k * chunk, chunk, 100 * r + k);
			ASSERT_EQ(-1, off) TH_LOG("round %u read %u: bad byte at %ld",
						  r, k, off);
		}
	}
	ASSERT_EQ(0, shutdown_both(_metadata, self));
	EXPECT_EQ(0, cq_quiet(_metadata, s, 200, "server"));
	EXPECT_EQ(0, cq_quiet(_metadata, c, 200, "client"));
}

TEST_F_TIMEOUT(fab, rma_read_window, 300)
{
	read_window(_metadata, self, 7606, 16);
}

TEST_F_TIMEOUT(fab, rma_read_deep, 300)
{
	read_window(_metadata, self, 7607, 256);
}

/* ---- RDM endpoints: verbs;ofi_rxm ---- */

struct rdm {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fend e[2];
	fi_addr_t addr[2];
};

static void rdm_close(struct rdm *r)
{
	int i;

	for (i = 0; i < 2; i++)
		fend_close(&r->e[i]);
	if (r->av)
		fi_close(&r->av->fid);
	if (r->domain)
		fi_close(&r->domain->fid);
	if (r->fabric)
		fi_close(&r->fabric->fid);
	fi_freeinfo(r->info);
}

/*
 * Poll both endpoints' CQs until the send (ctx[1]) of e[i] and the
 * receive (ctx[0], len bytes) of e[1 - i] have completed, in any order;
 * any other completion fails. 0 or -1.
 */
static int rdm_wait(struct __test_metadata *_metadata, struct rdm *r,
		    int i, size_t len)
{
	long long end = now_ms() + XR_WAIT_MS;
	struct fi_cq_msg_entry c;
	bool done[2] = {};
	int err, rc, j;

	while (now_ms() < end && !(done[0] && done[1])) {
		for (j = 0; j < 2; j++) {
			bool rx = j != i;

			rc = cq_get(r->e[j].cq, &c, &err, 2);
			if (rc == 0)
				continue;
			if (rc < 0 || err) {
				TH_LOG("ep %d: %s", j, FE(rc < 0 ? rc : -err));
				return -1;
			}
			if (done[rx] || c.op_context != &r->e[j].ctx[rx ? 0 : 1]) {
				TH_LOG("ep %d: stray completion (context %p, flags 0x%llx)",
				       j, c.op_context, (unsigned long long)c.flags);
				return -1;
			}
			if (rx && c.len != len) {
				TH_LOG("received %zu bytes, expected %zu", c.len,
				       len);
				return -1;
			}
			done[rx] = true;
		}
	}
	if (done[0] && done[1])
		return 0;
	TH_LOG("timed out: send %s, receive %s", done[0] ? "done" : "pending",
	       done[1] ? "done" : "pending");
	return -1;
}

/*
 * Send from e[i] to e[1 - i]. rxm answers FI_EAGAIN while it sets the
 * connection up (or its queues are full): progress both endpoints, which
 * reading their CQs does, and try again. Nothing may complete meanwhile.
 */
static int rdm_tsend(struct __test_metadata *_metadata, struct rdm *r,
		     int i, size_t len, uint64_t tag)
{
	long long end = now_ms() + XR_WAIT_MS;
	struct fend *a = &r->e[i];
	struct fi_cq_msg_entry c;
	int err, rc, j, tries = 0;

	for (;;) {
		rc = fi_tsend(a->ep, a->buf + FAB_MAXMSG, len, a->desc,
			      r->addr[1 - i], tag, &a->ctx[1]);
		if (rc != -FI_EAGAIN || now_ms() >= end)
			break;
		tries++;
		for (j = 0; j < 2; j++) {
			rc = cq_get(r->e[j].cq, &c, &err, 1);
			if (rc) {
				TH_LOG("ep %d: completion while sending (%d, %s)",
				       j, rc, FE(rc < 0 ? rc : -err));
				return -FI_EOTHER;
			}
		}
	}
	if (tries)
		xr_trace("tsend: %d EAGAIN", tries);
	return rc;
}

TEST_F_TIMEOUT(fab, rdm_rxm, 300)
{
	struct fi_info *h = fab_hints("verbs;ofi_rxm", FI_EP_RDM,
				      FI_MSG | FI_TAGGED, NULL);
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_MSG,
				  .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	static const size_t lens[] = { 1, 4000, 16384, 65536, 262144 };
	struct rdm r = {};
	struct fi_info *all = NULL, *fi;
	const char *what = "";
	char name[2][64];
	size_t nl;
	unsigned int k;
	int i, rc;

	ASSERT_NE(NULL, h);
	rc = fi_getinfo(FAB_VERSION, XR_ADDR, NULL, FI_SOURCE, h, &all);
	fi_freeinfo(h);
	ASSERT_EQ(0, rc) TH_LOG("fi_getinfo(verbs;ofi_rxm, %s): %s", XR_ADDR,
				FE(rc));
	/* rxm's domain is named after the verbs one (the RDMA device). */
	for (fi = all; fi; fi = fi->next)
		if (!strncmp(fi->domain_attr->name, self->link.ibdev,
			     strlen(self->link.ibdev)))
			break;
	if (fi)
		r.info = fi_dupinfo(fi);
	fi_freeinfo(all);
	ASSERT_NE(NULL, r.info) TH_LOG("no rxm domain on %s", self->link.ibdev);
	rc = fi_fabric(r.info->fabric_attr, &r.fabric, NULL);
	if (!rc)
		rc = fi_domain(r.fabric, r.info, &r.domain, NULL);
	if (!rc)
		rc = fi_av_open(r.domain, &ava, &r.av, NULL);
	ASSERT_EQ(0, rc) TH_LOG("fabric/domain/av: %s", FE(rc));
	for (i = 0; i < 2 && !rc; i++) {
		struct fend *e = &r.e[i];

		e->buf = aligned_alloc(4096, FAB_BUF);
		ASSERT_NE(NULL, e->buf);
		what = "cq";
		rc = fi_cq_open(r.domain, &cqa, &e->cq, NULL);
		if (!rc) {
			what = "endpoint";
			rc = fi_endpoint(r.domain, r.info, &e->ep, NULL);
		}
		if (!rc) {
			what = "bind";
			rc = fi_ep_bind(e->ep, &r.av->fid, 0);
		}
		if (!rc)
			rc = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV);
		if (!rc) {
			what = "fi_enable";
			rc = fi_enable(e->ep);
		}
		if (!rc) {
			what = "fi_mr_reg";
			rc = fi_mr_reg(r.domain, e->buf, FAB_BUF,
				       FI_SEND | FI_RECV | FI_READ | FI_WRITE |
				       FI_REMOTE_READ | FI_REMOTE_WRITE,
				       0, 0, 0, &e->mr, NULL);
		}
		if (!rc) {
			e->desc = fi_mr_desc(e->mr);
			what = "fi_getname";
			nl = sizeof(name[i]);
			rc = fi_getname(&e->ep->fid, name[i], &nl);
		}
		if (!rc) {
			what = "fi_av_insert";
			rc = fi_av_insert(r.av, name[i], 1, &r.addr[i], 0, NULL);
			rc = rc == 1 ? 0 : (rc < 0 ? rc : -FI_EOTHER);
		}
	}
	if (rc) {
		TH_LOG("endpoint %d: %s: %s", i - 1, what, FE(rc));
		rdm_close(&r);
		ASSERT_EQ(0, rc);
	}
	for (k = 0; k < ARRAY_SIZE(lens) && !rc; k++) {
		for (i = 0; i < 2 && !rc; i++) {
			struct fend *a = &r.e[i], *b = &r.e[1 - i];
			uint64_t tag = 0x7700 + k;
			size_t len = lens[k];
			long off;

			memset(b->buf, 0, len);
			xr_fill(a->buf + FAB_MAXMSG, len, 10 * k + i);
			rc = fi_trecv(b->ep, b->buf, len, b->desc, r.addr[i],
				      tag, 0, &b->ctx[0]);
			if (!rc)
				rc = rdm_tsend(_metadata, &r, i, len, tag);
			if (rc) {
				TH_LOG("%zu bytes ep %d->%d: post: %s", len, i,
				       1 - i, FE(rc));
				break;
			}
			rc = rdm_wait(_metadata, &r, i, len);
			off = xr_check(b->buf, len, 10 * k + i);
			if (!rc && off >= 0) {
				TH_LOG("%zu bytes ep %d->%d: bad byte at %ld",
				       len, i, 1 - i, off);
				rc = -1;
			}
			if (rc)
				TH_LOG("%zu bytes ep %d->%d failed", len, i, 1 - i);
		}
	}
	rdm_close(&r);
	ASSERT_EQ(0, rc);
}

static void __attribute__((destructor)) purge(void)
{
	xr_link_purge();
}

TEST_HARNESS_MAIN
