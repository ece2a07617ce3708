// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The port counters (/sys/class/infiniband/<dev>/ports/1/hw_counters,
 * "rdma statistic show link") and the QP details of "rdma res show qp
 * -dd", as Documentation/counters.rst defines them.
 *
 * Two xiw devices in this guest: the server's xiwC0 on dummy xc0
 * (10.99.2.1) and the client's xiwC1 on dummy xc1 (10.99.3.1); the TCP
 * stream between them runs over lo. Each device then counts one end
 * only, so what one sends can be compared with what the other receives.
 * Every check is a difference of two readings around a known event:
 * other traffic on these devices would show up as a mismatch.
 */
#include <ctype.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"
#include "xiw_mpa_util.h"

#define XC_SRV_NETDEV	"xc0"
#define XC_SRV_DEV	"xiwC0"
#define XC_SRV_ADDR	"10.99.2.1"
#define XC_CLI_NETDEV	"xc1"
#define XC_CLI_DEV	"xiwC1"
#define XC_CLI_ADDR	"10.99.3.1"

/* Exactly the documented set, in the driver's order. */
static const char * const xc_names[] = {
	"req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
	"req_remote_invalid_request", "resp_cqe_error",
	"resp_cqe_flush_error", "resp_local_length_error",
	"resp_remote_access_errors",
	"tx_fpdus", "tx_bytes", "tx_zcopy_messages", "tx_zcopy_bytes",
	"tx_page_reuses", "tx_page_allocs",
	"rx_fpdus", "rx_bytes", "rx_crc_errors",
	"rx_marker_errors", "tx_terminate_rdmap", "tx_terminate_ddp",
	"tx_terminate_llp", "rx_terminate_rdmap", "rx_terminate_ddp",
	"rx_terminate_llp", "mpa_rejects_sent", "mpa_rejects_received",
	"mpa_timeouts", "conn_established", "conn_failed",
};

#define XC_N	(sizeof(xc_names) / sizeof(xc_names[0]))

enum {
	REQ_CQE_ERROR, REQ_CQE_FLUSH_ERROR, REQ_REMOTE_ACCESS_ERRORS,
	REQ_REMOTE_INVALID_REQUEST, RESP_CQE_ERROR, RESP_CQE_FLUSH_ERROR,
	RESP_LOCAL_LENGTH_ERROR, RESP_REMOTE_ACCESS_ERRORS,
	TX_FPDUS, TX_BYTES, TX_ZCOPY_MESSAGES, TX_ZCOPY_BYTES,
	TX_PAGE_REUSES, TX_PAGE_ALLOCS, RX_FPDUS,
	RX_BYTES, RX_CRC_ERRORS, RX_MARKER_ERRORS, TX_TERMINATE_RDMAP,
	TX_TERMINATE_DDP, TX_TERMINATE_LLP, RX_TERMINATE_RDMAP,
	RX_TERMINATE_DDP, RX_TERMINATE_LLP, MPA_REJECTS_SENT,
	MPA_REJECTS_RECEIVED, MPA_TIMEOUTS, CONN_ESTABLISHED, CONN_FAILED,
	XC_COUNT
};
_Static_assert(XC_COUNT == XC_N, "xc_names and the index enum disagree");

struct xc_snap {
	long long v[XC_N];
};

/* One counter of dev; -1 if unreadable or not a plain decimal number. */
static long long xc_read(const char *dev, const char *name)
{
	char p[256], buf[64], *end;
	unsigned long long v;

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 dev, name);
	if (read_text(p, buf, sizeof(buf)) <= 0 || !isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end || v > LLONG_MAX)
		return -1;
	return (long long)v;
}

/*
 * The core serves hw_counters from a copy refreshed at most every
 * "lifespan" ms (10): wait that out so a reading is never older than
 * the event it is meant to follow.
 */
static void xc_fresh(void)
{
	usleep(25000);
}

static int xc_snap(const char *dev, struct xc_snap *s)
{
	size_t i;

	xc_fresh();
	for (i = 0; i < XC_N; i++) {
		s->v[i] = xc_read(dev, xc_names[i]);
		if (s->v[i] < 0)
			return -1;
	}
	return 0;
}

/* Counter i of dev now, minus its value in s. */
static long long xc_delta(const char *dev, const struct xc_snap *s, int i)
{
	long long v;

	xc_fresh();
	v = xc_read(dev, xc_names[i]);
	return v < 0 ? -1 : v - s->v[i];
}

/* Wait (the CM and the data path count asynchronously) for a delta. */
#define XC_WAIT_DELTA(dev, snap, i, want)				\
	WAIT_UNTIL(xc_delta(dev, snap, i) == (want), XR_WAIT_MS)

/* Log every counter that moved since s (to explain a failure). */
static void xc_log_moves(struct __test_metadata *_metadata, const char *dev,
			 const struct xc_snap *s)
{
	size_t i;

	for (i = 0; i < XC_N; i++) {
		long long d = xc_delta(dev, s, (int)i);

		if (d)
			TH_LOG("%s %s %+lld", dev, xc_names[i], d);
	}
}

/*
 * "rdma -dd res show qp" for one QP of dev, into out. iproute2 shows the
 * driver's attributes with a "drv_" prefix: "drv_term_sent 0x1/0x2/0x02".
 */
static int xc_res_qp(const char *dev, uint32_t qpn, char *out, size_t len)
{
	return xsh(out, len, "rdma -dd res show qp link %s/1 lqpn %u", dev, qpn);
}

static void xc_links_purge(void)
{
	if (!ibdev_exists(XC_SRV_DEV) && !ibdev_exists(XC_CLI_DEV) &&
	    !path_exists("/sys/class/net/" XC_SRV_NETDEV) &&
	    !path_exists("/sys/class/net/" XC_CLI_NETDEV))
		return;
	sh("flock -w 60 " XR_LOCK " sh -c 'rdma link delete " XC_SRV_DEV
	   "; ip link del " XC_SRV_NETDEV "; rdma link delete " XC_CLI_DEV
	   "; ip link del " XC_CLI_NETDEV "' >/dev/null 2>&1");
}

/*
 * Both links, made once and kept for the whole program (as
 * xiw_rdma_util.h does, for the same reasons). Under TCG every exec
 * costs up to a second or two: one "ip -b" and one "rdma -b"
 * make both instead of a dozen commands.
 */
static int xc_links(void)
{
	if (xr_load_type("xiw"))
		return -1;
	if (ibdev_exists(XC_SRV_DEV) && ibdev_exists(XC_CLI_DEV))
		return 0;
	xc_links_purge();
	if (sh("flock -w 60 " XR_LOCK " sh -c '"
	       "printf \"%%s\\n\" \"link add " XC_SRV_NETDEV " type dummy\" "
	       "\"addr add " XC_SRV_ADDR "/24 dev " XC_SRV_NETDEV "\" "
	       "\"link set " XC_SRV_NETDEV " up\" "
	       "\"link add " XC_CLI_NETDEV " type dummy\" "
	       "\"addr add " XC_CLI_ADDR "/24 dev " XC_CLI_NETDEV "\" "
	       "\"link set " XC_CLI_NETDEV " up\" | ip -b - && "
	       "printf \"%%s\\n\" "
	       "\"link add " XC_SRV_DEV " type xiw netdev " XC_SRV_NETDEV "\" "
	       "\"link add " XC_CLI_DEV " type xiw netdev " XC_CLI_NETDEV "\" "
	       "| rdma -b -'"))
		return -1;
	return WAIT_UNTIL(ibdev_exists(XC_SRV_DEV) && ibdev_exists(XC_CLI_DEV),
			  5000) ? 0 : -1;
}

/* Does text hold "key value" as two whole words? */
static bool xc_has(const char *text, const char *key, const char *value)
{
	char pat[128];
	const char *p = text;
	size_t n;

	n = (size_t)snprintf(pat, sizeof(pat), "%s %s", key, value);
	while ((p = strstr(p, pat))) {
		bool start = p == text || isspace((unsigned char)p[-1]);
		bool end = !p[n] || isspace((unsigned char)p[n]);

		if (start && end)
			return true;
		p++;
	}
	return false;
}

/* A 64-byte Send from a to b, both completions successful: 0. */
static int xc_exchange(struct xr_side *a, struct xr_side *b)
{
	struct ibv_wc wc[2];

	if (xr_recv(b, 0xe0, 0, 64) ||
	    xr_post(a, IBV_WR_SEND, 0xe1, 0, 64, 0, NULL, 0))
		return -1;
	if (xr_poll(b->cq, wc, 1, XR_WAIT_MS) != 1 ||
	    xr_poll(a->cq, wc + 1, 1, XR_WAIT_MS) != 1)
		return -2;
	return wc[0].status || wc[1].status ? -3 : 0;
}

FIXTURE(ctr) {
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;	/* client (on xiwC1), server (on xiwC0) */
	struct xc_snap cs, ss;	/* both devices after the connection */
};

FIXTURE_SETUP(ctr)
{
	struct xr_opts o = { .buflen = 1 << 20, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	long long t0 = now_ms(), t1, t2;

	xr_unlimit_memlock();
	ASSERT_EQ(0, xc_links()) TH_LOG("cannot create " XC_SRV_DEV " and " XC_CLI_DEV);
	/* The documented defaults: CRC on, MPA v2, Write RTR. */
	ASSERT_EQ(0, xm_params(1, 2, 2));
	/* A failed qp_counter_rx_errors may have left markers on. */
	ASSERT_EQ(0, xm_param_set("mpa_markers", 0));
	t1 = now_ms();
	ASSERT_EQ(0, xr_net_init_at(&self->net, XC_SRV_ADDR))
		TH_LOG("%s", self->net.err);
	xr_net_set_src(&self->net, XC_CLI_ADDR);
	ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
		TH_LOG("%s", self->net.err);
	t2 = now_ms();
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	ASSERT_STREQ(XC_CLI_DEV, ibv_get_device_name(self->c->id->verbs->device));
	ASSERT_STREQ(XC_SRV_DEV, ibv_get_device_name(self->s->id->verbs->device));
	/*
	 * One Send each way settles the start-up: the client's RTR (a
	 * zero-length Write, p2p_rtr 2) has arrived before this Send did.
	 */
	ASSERT_EQ(0, xc_exchange(self->c, self->s));
	ASSERT_EQ(0, xc_exchange(self->s, self->c));
	ASSERT_EQ(0, xc_snap(XC_CLI_DEV, &self->cs));
	ASSERT_EQ(0, xc_snap(XC_SRV_DEV, &self->ss));
	xr_trace("links %lld ms, connect %lld ms, exchange and snapshots %lld ms",
		 t1 - t0, t2 - t1, now_ms() - t2);
}

FIXTURE_TEARDOWN(ctr)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
}

/* Every counter file reads as a number; the set is exactly the documented one. */
TEST_F(ctr, names_exact_and_numeric)
{
	const char *devs[] = { XC_SRV_DEV, XC_CLI_DEV };
	struct dirent *de;
	char p[256];
	size_t i, d, found;
	DIR *dir;

	for (d = 0; d < 2; d++) {
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters",
			 devs[d]);
		dir = opendir(p);
		ASSERT_NE(NULL, dir) TH_LOG("%s: %s", p, strerror(errno));
		found = 0;
		while ((de = readdir(dir))) {
			bool known = false;

			/* "lifespan" is the core's cache setting, no counter. */
			if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
				continue;
			for (i = 0; i < XC_N; i++)
				known |= !strcmp(de->d_name, xc_names[i]);
			EXPECT_TRUE(known) TH_LOG("%s: undocumented counter %s",
						  devs[d], de->d_name);
			EXPECT_LE(0, xc_read(devs[d], de->d_name))
				TH_LOG("%s: %s is not a number", devs[d], de->d_name);
			found++;
		}
		closedir(dir);
		EXPECT_EQ(XC_N, found);
	}
	/* The connection made by the set-up: one on each device. */
	EXPECT_LE(1, self->ss.v[CONN_ESTABLISHED]);
	EXPECT_LE(1, self->cs.v[CONN_ESTABLISHED]);
}

/*
 * An N-byte RDMA Write then a 64-byte Send, client to server: the client
 * sent at least N + 64 bytes in at least N / 65535 + 2 FPDUs, the server
 * received exactly what the client sent, and nothing went the other way
 * (RDMAP has no acknowledgements).
 */
TEST_F(ctr, write_moves_fpdu_and_byte_counters)
{
	const size_t n = 256 * 1024;
	long long tx_f, tx_b, pages;

	xr_fill(self->c->buf, n, 7);
	ASSERT_EQ(0, xr_recv(self->s, 2, n, 64));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_RDMA_WRITE, 1, 0, n, 0, self->s, 0));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 3, n, 64, 0, NULL, 0));
	{
		struct ibv_wc wc[3];

		ASSERT_EQ(2, xr_poll(self->c->cq, wc, 2, XR_WAIT_MS));
		ASSERT_EQ(1, xr_poll(self->s->cq, wc + 2, 1, XR_WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[2].status) TH_LOG("%s", xr_wc_str(&wc[2]));
	}
	ASSERT_EQ(-1, xr_check(self->s->buf, n, 7));
	tx_f = xc_delta(XC_CLI_DEV, &self->cs, TX_FPDUS);
	tx_b = xc_delta(XC_CLI_DEV, &self->cs, TX_BYTES);
	EXPECT_LE((long long)n + 64, tx_b);
	EXPECT_LE((long long)(n / 65535 + 2), tx_f);
	/* Headers, pad and CRC: less than 64 bytes per FPDU. */
	EXPECT_GT((long long)n + 64 + 64 * tx_f, tx_b);
	/* The Send arrived, so everything before it did: tx == rx. */
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &self->ss, RX_BYTES, tx_b))
		TH_LOG("server rx_bytes %+lld, client tx_bytes %+lld",
		       xc_delta(XC_SRV_DEV, &self->ss, RX_BYTES), tx_b);
	EXPECT_EQ(tx_f, xc_delta(XC_SRV_DEV, &self->ss, RX_FPDUS));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, TX_FPDUS));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, TX_BYTES));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, RX_FPDUS));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, RX_BYTES));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RX_CRC_ERRORS));
	/* On lo the default tx_zcopy=1 copies (xiw_rdma tests zero-copy). */
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, TX_ZCOPY_MESSAGES));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, TX_ZCOPY_BYTES));
	/*
	 * ... into pages of xiw's own (tx_own_pages), reused or new, which
	 * one FPDU's payload goes on filling where the last one's ended: a
	 * page per 4 KiB of the Write; none for the small Send.
	 */
	pages = xc_delta(XC_CLI_DEV, &self->cs, TX_PAGE_REUSES) +
		xc_delta(XC_CLI_DEV, &self->cs, TX_PAGE_ALLOCS);
	EXPECT_EQ((long long)(n / 4096), pages);
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, TX_PAGE_REUSES) +
		     xc_delta(XC_SRV_DEV, &self->ss, TX_PAGE_ALLOCS));
	if (_metadata->passed == 0) {
		xc_log_moves(_metadata, XC_CLI_DEV, &self->cs);
		xc_log_moves(_metadata, XC_SRV_DEV, &self->ss);
	}
}

/*
 * V-05: a Send with no receive posted. The server (responder) sends the
 * Terminate DDP / untagged buffer / no buffer (0x1/0x2/0x02), the client
 * receives it, and the client's completions match its counters. Both
 * QPs' details name the Terminate.
 */
TEST_F(ctr, send_without_receive_counts_terminate)
{
	long long flushed_req = 0, err_req = 0;
	struct ibv_wc wc[2];
	char out[4096];
	int n, i;

	ASSERT_EQ(0, xr_recv(self->c, 0xf1, 0, 64));
	ASSERT_EQ(0, xr_post(self->c, IBV_WR_SEND, 0xf2, 0, 64, 0, NULL, 0));
	n = xr_poll(self->c->cq, wc, 2, XR_WAIT_MS);
	ASSERT_EQ(2, n) TH_LOG("the client's receive did not flush");
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id == 0xf1) {
			ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
		} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
			flushed_req++;
		} else if (wc[i].status != IBV_WC_SUCCESS) {
			err_req++;
		}
	}
	EXPECT_EQ(1, xc_delta(XC_SRV_DEV, &self->ss, TX_TERMINATE_DDP));
	EXPECT_EQ(1, xc_delta(XC_CLI_DEV, &self->cs, RX_TERMINATE_DDP));
	EXPECT_EQ(1, xc_delta(XC_CLI_DEV, &self->cs, REQ_REMOTE_INVALID_REQUEST));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, REQ_REMOTE_ACCESS_ERRORS));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RESP_REMOTE_ACCESS_ERRORS));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RX_TERMINATE_DDP));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, TX_TERMINATE_DDP));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, TX_TERMINATE_RDMAP));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, TX_TERMINATE_LLP));
	/* Completions, as the client's CQ reported them. */
	EXPECT_EQ(1, xc_delta(XC_CLI_DEV, &self->cs, RESP_CQE_FLUSH_ERROR));
	EXPECT_EQ(flushed_req, xc_delta(XC_CLI_DEV, &self->cs, REQ_CQE_FLUSH_ERROR));
	EXPECT_EQ(err_req, xc_delta(XC_CLI_DEV, &self->cs, REQ_CQE_ERROR));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, RESP_CQE_ERROR));

	ASSERT_EQ(0, xc_res_qp(XC_SRV_DEV, self->s->qp->qp_num, out, sizeof(out)));
	EXPECT_TRUE(xc_has(out, "drv_term_sent", "0x1/0x2/0x02")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_term_rcvd", "none")) TH_LOG("%s", out);
	ASSERT_EQ(0, xc_res_qp(XC_CLI_DEV, self->c->qp->qp_num, out, sizeof(out)));
	EXPECT_TRUE(xc_has(out, "drv_term_rcvd", "0x1/0x2/0x02")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_term_sent", "none")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_iwarp_state", "error")) TH_LOG("%s", out);
	if (_metadata->passed == 0) {
		xc_log_moves(_metadata, XC_CLI_DEV, &self->cs);
		xc_log_moves(_metadata, XC_SRV_DEV, &self->ss);
	}
}

/* A QP moved to ERR flushes its K receives: resp_cqe_flush_error += K. */
TEST_F(ctr, error_state_flush_counts_receives)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[5];
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, xr_recv(self->s, 0x50 + i, i * 64, 64));
	ASSERT_EQ(0, ibv_modify_qp(self->s->qp, &qa, IBV_QP_STATE));
	ASSERT_EQ(5, xr_poll(self->s->cq, wc, 5, XR_WAIT_MS));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status) TH_LOG("%s", xr_wc_str(&wc[i]));
	EXPECT_EQ(5, xc_delta(XC_SRV_DEV, &self->ss, RESP_CQE_FLUSH_ERROR));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RESP_CQE_ERROR));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, REQ_CQE_FLUSH_ERROR));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &self->cs, RESP_CQE_FLUSH_ERROR));
}

/* "rdma statistic show link" lists every counter with the sysfs value. */
TEST_F(ctr, rdma_statistic_lists_counters)
{
	char out[4096], val[32];
	size_t i;

	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic show link %s/1",
			 XC_SRV_DEV)) TH_LOG("%s", out);
	/* No traffic meanwhile: the values are those of the set-up. */
	for (i = 0; i < XC_N; i++) {
		snprintf(val, sizeof(val), "%lld", self->ss.v[i]);
		EXPECT_TRUE(xc_has(out, xc_names[i], val))
			TH_LOG("no \"%s %s\" in: %s", xc_names[i], val, out);
	}
}

/* "rdma res show qp -dd": the driver details of a connected QP. */
TEST_F(ctr, rdma_res_qp_driver_details)
{
	char out[4096], want[64];
	struct sockaddr_in *a;
	int k;

	ASSERT_EQ(0, xc_res_qp(XC_SRV_DEV, self->s->qp->qp_num, out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_iwarp_state", "rts")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_mpa_rev", "2")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_mpa_crc", "1")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_mpa_markers_tx", "0")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_mpa_markers_rx", "0")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_ird", "4")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_ord", "4")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_term_sent", "none")) TH_LOG("%s", out);
	EXPECT_TRUE(xc_has(out, "drv_term_rcvd", "none")) TH_LOG("%s", out);
	/* The server's peer is the client's address and port. */
	a = (struct sockaddr_in *)rdma_get_local_addr(self->c->id);
	k = snprintf(want, sizeof(want), XC_CLI_ADDR ":%u", ntohs(a->sin_port));
	ASSERT_LT(k, (int)sizeof(want));
	EXPECT_TRUE(xc_has(out, "drv_peer", want)) TH_LOG("want peer %s: %s", want, out);
	ASSERT_EQ(0, xc_res_qp(XC_CLI_DEV, self->c->qp->qp_num, out, sizeof(out)))
		TH_LOG("%s", out);
	snprintf(want, sizeof(want), XC_SRV_ADDR ":%u", ntohs(self->net.addr.sin_port));
	EXPECT_TRUE(xc_has(out, "drv_peer", want)) TH_LOG("want peer %s: %s", want, out);
	EXPECT_TRUE(xc_has(out, "drv_iwarp_state", "rts")) TH_LOG("%s", out);
}

/*
 * A rejected connection: the server's ULP refuses (MPA-06). Rejects sent
 * on the server, received on the client, a failed connection on each.
 */
TEST_F(ctr, reject_counts)
{
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 4 };
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct xr_side cli = {};
	struct rdma_cm_id *id;
	struct xc_snap cs, ss;

	ASSERT_EQ(0, xc_snap(XC_CLI_DEV, &cs));
	ASSERT_EQ(0, xc_snap(XC_SRV_DEV, &ss));
	ASSERT_EQ(0, rdma_create_id(self->net.cch, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(id, (struct sockaddr *)&self->net.src,
				       (struct sockaddr *)&self->net.addr, 2000));
	ASSERT_TRUE(xr_wait_cm(self->net.cch, id, RDMA_CM_EVENT_ADDR_RESOLVED,
			       XR_WAIT_MS, NULL));
	ASSERT_EQ(0, rdma_resolve_route(id, 2000));
	ASSERT_TRUE(xr_wait_cm(self->net.cch, id, RDMA_CM_EVENT_ROUTE_RESOLVED,
			       XR_WAIT_MS, NULL));
	ASSERT_EQ(0, xr_side_init(&self->net, &cli, id, &o)) TH_LOG("%s", self->net.err);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	ASSERT_EQ(0, rdma_connect(id, &cp));
	ev = xr_get_event(self->net.sch, XR_WAIT_MS);
	ASSERT_NE(NULL, ev);
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, ev->event);
	EXPECT_EQ(0, rdma_reject(ev->id, NULL, 0));
	id = ev->id;
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	EXPECT_TRUE(xr_wait_cm(self->net.cch, cli.id, RDMA_CM_EVENT_REJECTED,
			       XR_WAIT_MS, NULL));
	xr_side_fini(&cli);
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &ss, MPA_REJECTS_SENT, 1));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_CLI_DEV, &cs, MPA_REJECTS_RECEIVED, 1));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &ss, CONN_FAILED, 1));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_CLI_DEV, &cs, CONN_FAILED, 1));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &ss, CONN_ESTABLISHED));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &cs, CONN_ESTABLISHED));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &ss, MPA_REJECTS_RECEIVED));
	EXPECT_EQ(0, xc_delta(XC_CLI_DEV, &cs, MPA_REJECTS_SENT));
	if (_metadata->passed == 0) {
		xc_log_moves(_metadata, XC_CLI_DEV, &cs);
		xc_log_moves(_metadata, XC_SRV_DEV, &ss);
	}
}

/* A TCP connection to the listener from a raw socket. */
static int xc_tcp_connect(const struct sockaddr_in *to)
{
	struct sockaddr_in from = { .sin_family = AF_INET };
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, XC_CLI_ADDR, &from.sin_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
	    connect(fd, (const struct sockaddr *)to, sizeof(*to))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * MPA-14: a TCP peer that never sends its MPA Request. With the start-up
 * timer at 300 ms the server counts one MPA timeout and one failed
 * connection.
 */
TEST_F(ctr, mpa_timeout_counts)
{
	char was[32];
	int fd, rc;

	ASSERT_LT(0, read_text(XM_PARAMS "mpa_timeout_ms", was, sizeof(was)));
	ASSERT_EQ(0, xm_param_set("mpa_timeout_ms", 300));
	fd = xc_tcp_connect(&self->net.addr);
	EXPECT_LE(0, fd) TH_LOG("connect: %s", strerror(errno));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &self->ss, MPA_TIMEOUTS, 1));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &self->ss, CONN_FAILED, 1));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, CONN_ESTABLISHED));
	rc = xm_param_set("mpa_timeout_ms", atoi(was));
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(0, rc);
}

/*
 * A raw MPA v1 initiator (CRC on, no markers asked) connected to the
 * server, which accepts it into srv: the socket, the MPA Reply read.
 */
static int xc_raw_peer(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ctr) *self, struct xr_side *srv)
{
	static const char req_key[] = "MPA ID Req Frame";
	static const char rep_key[] = "MPA ID Rep Frame";
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 4 };
	uint32_t pd[2] = { htonl(XR_MAGIC), htonl(99) };
	uint8_t req[20 + 8], rep[20 + 512];
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	size_t want = 20, got = 0;
	ssize_t r;
	int fd;

	/* The MPA Request: key, flags (CRC), revision 1, private data. */
	memcpy(req, req_key, 16);
	req[16] = XM_F_C;
	req[17] = 1;
	req[18] = 0;
	req[19] = sizeof(pd);
	memcpy(req + 20, pd, sizeof(pd));
	fd = xc_tcp_connect(&self->net.addr);
	ASSERT_LE(0, fd) TH_LOG("connect: %s", strerror(errno));
	ASSERT_EQ((ssize_t)sizeof(req), write(fd, req, sizeof(req)));
	ev = xr_get_event(self->net.sch, XR_WAIT_MS);
	ASSERT_NE(NULL, ev);
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, ev->event);
	ASSERT_EQ(0, xr_side_init(&self->net, srv, ev->id, &o))
		TH_LOG("%s", self->net.err);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	ASSERT_EQ(0, rdma_accept(ev->id, &cp));
	rdma_ack_cm_event(ev);
	ASSERT_TRUE(xr_wait_cm(self->net.sch, srv->id, RDMA_CM_EVENT_ESTABLISHED,
			       XR_WAIT_MS, NULL));
	/* The Reply: 20 bytes, then its private data if any. */
	while (got < want) {
		r = read(fd, rep + got, want - got);
		ASSERT_LT(0, r);
		got += (size_t)r;
		if (got == 20)
			want += (size_t)(rep[18] << 8 | rep[19]);
		ASSERT_GE(sizeof(rep), want);
	}
	ASSERT_EQ(0, memcmp(rep, rep_key, 16));
	ASSERT_EQ(0, rep[16] & XM_F_R);
	return fd;
}

/* A zero-length RDMA Write (MPA length 14), its CRC off by one bit. */
static void xc_bad_crc_fpdu(uint8_t fpdu[2 + 14 + 4])
{
	uint32_t crc;
	int i;

	memset(fpdu, 0, 2 + 14 + 4);
	fpdu[1] = 14;
	fpdu[2] = 0x80 | 0x40 | 0x01;	/* DDP: tagged, last, version 1 */
	fpdu[3] = 0x40 | XM_OP_WRITE;	/* RDMAP version 1 */
	crc = xm_crc32c(fpdu, 16) ^ 1;
	for (i = 0; i < 4; i++)		/* least significant byte first */
		fpdu[16 + i] = (uint8_t)(crc >> (8 * i));
}

/*
 * MPA-50: an FPDU with a wrong CRC from a raw MPA v1 initiator (CRC on).
 * The server counts a CRC error and sends the LLP Terminate "MPA CRC
 * error" (0x2/0x0/0x02), which the QP's details show.
 */
TEST_F(ctr, crc_error_counts)
{
	struct xr_side srv = {};
	uint8_t fpdu[2 + 14 + 4];
	char out[4096];
	int fd;

	fd = xc_raw_peer(_metadata, self, &srv);
	xc_bad_crc_fpdu(fpdu);
	ASSERT_EQ((ssize_t)sizeof(fpdu), write(fd, fpdu, sizeof(fpdu)));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &self->ss, RX_CRC_ERRORS, 1));
	EXPECT_TRUE(XC_WAIT_DELTA(XC_SRV_DEV, &self->ss, TX_TERMINATE_LLP, 1));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RX_FPDUS));
	ASSERT_EQ(0, xc_res_qp(XC_SRV_DEV, srv.qp->qp_num, out, sizeof(out)));
	EXPECT_TRUE(xc_has(out, "drv_term_sent", "0x2/0x0/0x02")) TH_LOG("%s", out);
	close(fd);
	xr_side_fini(&srv);
	if (_metadata->passed == 0)
		xc_log_moves(_metadata, XC_SRV_DEV, &self->ss);
}

/*
 * Value of counter name in the "rdma statistic qp show" output text:
 * the number after the word name, -1 if there is none.
 */
static long long xc_word_val(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;
	char *end;

	while ((p = strstr(p, name))) {
		if ((p == text || isspace((unsigned char)p[-1])) && p[n] == ' ' &&
		    isdigit((unsigned char)p[n + 1]))
			return strtoll(p + n + 1, &end, 10);
		p++;
	}
	return -1;
}

/* A Write of len bytes from a to b, completed: 0. */
static int xc_write(struct xr_side *a, struct xr_side *b, size_t len)
{
	struct ibv_wc wc;

	if (xr_post(a, IBV_WR_RDMA_WRITE, 0xe2, 0, len, 0, b, 0))
		return -1;
	if (xr_poll(a->cq, &wc, 1, XR_WAIT_MS) != 1)
		return -2;
	return wc.status ? -3 : 0;
}

/*
 * Per-QP counters ("rdma statistic qp", manual mode): a counter bound to
 * the client's QP counts its Write and not the Write of a second client
 * QP; bound to the counter too, the second QP's later Write counts, and
 * stays counted after it unbinds (the counter keeps what its QPs
 * counted). The port's values are the driver's plus the counters' plus
 * the history of freed ones (core counters.c): each byte must be there
 * exactly once, before and after the counter is freed.
 */
TEST_F(ctr, qp_counter_bind_unbind)
{
	struct xr_opts o = { .buflen = 1 << 20, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	const size_t n = 64 * 1024, m = 256 * 1024, m2 = 128 * 1024;
	const char *d = XC_CLI_DEV;
	struct xr_pair p2 = {};
	uint32_t q1, q2;
	long long cntn, v, f, port;
	char out[8192];

	ASSERT_EQ(0, xr_connect(&self->net, &p2, 1, &o)) TH_LOG("%s", self->net.err);
	ASSERT_STREQ(d, ibv_get_device_name(p2.cli.id->verbs->device));
	q1 = self->c->id->qp->qp_num;
	q2 = p2.cli.id->qp->qp_num;
	ASSERT_EQ(0, xc_snap(d, &self->cs));

	ASSERT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp bind link %s/1 lqpn %u", d, q1))
		TH_LOG("%s", out);
	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1", d))
		TH_LOG("%s", out);
	cntn = xc_word_val(out, "cntn");
	ASSERT_LT(0, cntn) TH_LOG("no counter in: %s", out);

	ASSERT_EQ(0, xc_write(self->c, self->s, n));
	ASSERT_EQ(0, xc_write(&p2.cli, &p2.srv, m));
	xc_fresh();
	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1", d));
	v = xc_word_val(out, "tx_bytes");
	f = xc_word_val(out, "tx_fpdus");
	/* This QP's Write, headers and CRC included; not the other QP's. */
	EXPECT_LE((long long)n, v) TH_LOG("%s", out);
	EXPECT_LE((long long)(n / 65535 + 1), f) TH_LOG("%s", out);
	EXPECT_GE((long long)n + 64 * f, v) TH_LOG("%s", out);
	EXPECT_EQ(0, xc_word_val(out, "rx_bytes")) TH_LOG("%s", out);
	/* The CM counters are the port's only. */
	EXPECT_EQ(0, xc_word_val(out, "conn_established")) TH_LOG("%s", out);

	/* The second QP joins, sends, leaves: what it sent stays. */
	ASSERT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp bind link %s/1 lqpn %u cntn %lld",
			 d, q2, cntn)) TH_LOG("%s", out);
	ASSERT_EQ(0, xc_write(&p2.cli, &p2.srv, m2));
	ASSERT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp unbind link %s/1 cntn %lld lqpn %u",
			 d, cntn, q2)) TH_LOG("%s", out);
	xc_fresh();
	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1", d));
	v = xc_word_val(out, "tx_bytes");
	f = xc_word_val(out, "tx_fpdus");
	EXPECT_LE((long long)(n + m2), v) TH_LOG("%s", out);
	EXPECT_GE((long long)(n + m2) + 64 * f, v) TH_LOG("%s", out);

	/* Counted once on the port while the counter lives... */
	f = xc_delta(d, &self->cs, TX_FPDUS);
	port = xc_delta(d, &self->cs, TX_BYTES);
	EXPECT_LE((long long)(n + m + m2), port);
	EXPECT_GE((long long)(n + m + m2) + 64 * f, port);
	/* ...and after: the last QP unbinds, the core frees the counter. */
	ASSERT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp unbind link %s/1 cntn %lld lqpn %u",
			 d, cntn, q1)) TH_LOG("%s", out);
	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1", d));
	EXPECT_EQ(-1, xc_word_val(out, "cntn")) TH_LOG("%s", out);
	f = xc_delta(d, &self->cs, TX_FPDUS);
	port = xc_delta(d, &self->cs, TX_BYTES);
	EXPECT_LE((long long)(n + m + m2), port);
	EXPECT_GE((long long)(n + m + m2) + 64 * f, port);
	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic show link %s/1", d));
	EXPECT_EQ(port + self->cs.v[TX_BYTES], xc_word_val(out, "tx_bytes"))
		TH_LOG("%s", out);
	/* Manual mode ends with its last counter; make sure it is off. */
	EXPECT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp set link %s/1 auto off", d))
		TH_LOG("%s", out);
	xr_pairs_fini(&p2, 1);
}

/*
 * Auto mode by QP type: a QP the client connects after it is set up
 * (rdma_cm moves it to INIT with the port) lands on a counter that
 * counts its Write; destroying the QP frees the counter; mode back off.
 */
TEST_F(ctr, qp_counter_auto_mode)
{
	struct xr_opts o = { .buflen = 1 << 20, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	const size_t n = 96 * 1024;
	const char *d = XC_CLI_DEV;
	struct xr_pair p3 = {};
	long long v, f;
	char out[8192];
	int rv;

	ASSERT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp set link %s/1 auto type on", d))
		TH_LOG("%s", out);
	rv = xr_connect(&self->net, &p3, 1, &o);
	EXPECT_EQ(0, rv) TH_LOG("%s", self->net.err);
	if (!rv) {
		EXPECT_EQ(0, xc_write(&p3.cli, &p3.srv, n));
		xc_fresh();
		EXPECT_EQ(0, xsh(out, sizeof(out),
				 "rdma statistic qp show link %s/1", d));
		v = xc_word_val(out, "tx_bytes");
		f = xc_word_val(out, "tx_fpdus");
		EXPECT_LT(0, xc_word_val(out, "cntn")) TH_LOG("%s", out);
		EXPECT_LE((long long)n, v) TH_LOG("%s", out);
		EXPECT_GE((long long)n + 64 * f, v) TH_LOG("%s", out);
	}
	xr_pairs_fini(&p3, 1);
	EXPECT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1", d));
	EXPECT_EQ(-1, xc_word_val(out, "cntn")) TH_LOG("%s", out);
	EXPECT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp set link %s/1 auto off", d))
		TH_LOG("%s", out);
}

/*
 * One bad frame from a raw peer into a server QP bound to its own
 * counter: that counter reads want_crc/want_marker in rx_crc_errors and
 * rx_marker_errors (counted on the QP where the error is found, not via
 * the Terminate); destroying the QP frees the counter. Each "rdma" exec
 * costs a second or so under TCG: two here.
 */
static void xc_qp_rx_error(struct __test_metadata *_metadata,
			   FIXTURE_DATA(ctr) *self, const uint8_t *bad,
			   size_t len, int port_ctr, long long want_crc,
			   long long want_marker, long long port_llp)
{
	const char *d = XC_SRV_DEV;
	struct xr_side srv = {};
	char out[8192];
	int fd;

	fd = xc_raw_peer(_metadata, self, &srv);
	ASSERT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp bind link %s/1 lqpn %u", d,
			 srv.qp->qp_num)) TH_LOG("%s", out);
	ASSERT_EQ((ssize_t)len, write(fd, bad, len));
	EXPECT_TRUE(XC_WAIT_DELTA(d, &self->ss, port_ctr, 1))
		TH_LOG("port %s %+lld", xc_names[port_ctr],
		       xc_delta(d, &self->ss, port_ctr));
	/* port_llp: the port's LLP Terminates since the set-up */
	EXPECT_TRUE(XC_WAIT_DELTA(d, &self->ss, TX_TERMINATE_LLP, port_llp));
	/* The one counter there is (the last one went with its QP). */
	ASSERT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1", d))
		TH_LOG("%s", out);
	EXPECT_LT(0, xc_word_val(out, "cntn")) TH_LOG("no counter in: %s", out);
	EXPECT_EQ(want_crc, xc_word_val(out, "rx_crc_errors")) TH_LOG("%s", out);
	EXPECT_EQ(want_marker, xc_word_val(out, "rx_marker_errors"))
		TH_LOG("%s", out);
	close(fd);
	xr_side_fini(&srv);
}

/*
 * Per-QP rx_crc_errors and rx_marker_errors (MPA-50, MPA-31): a QP
 * counter bound to the QP that receives a bad-CRC FPDU reads
 * rx_crc_errors 1; one bound to a QP that receives a bad marker (the
 * server asks for markers, mpa_markers=1; the peer leads with FPDUPTR 4
 * instead of 0) reads rx_marker_errors 1. The port moves by exactly 1
 * each (never counted twice), and the server's own QP of the set-up
 * counts nothing.
 */
TEST_F(ctr, qp_counter_rx_errors)
{
	static const uint8_t bad_marker[8] = { 0, 0, 0, 4, 0, 18, 0x41, 0x43 };
	uint8_t fpdu[2 + 14 + 4];
	long long t = now_ms();
	char out[8192];
	int rc;

	xc_bad_crc_fpdu(fpdu);
	xc_qp_rx_error(_metadata, self, fpdu, sizeof(fpdu), RX_CRC_ERRORS, 1, 0, 1);
	EXPECT_EQ(1, xc_delta(XC_SRV_DEV, &self->ss, RX_CRC_ERRORS));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RX_MARKER_ERRORS));
	ASSERT_EQ(0, xm_param_set("mpa_markers", 1));
	xc_qp_rx_error(_metadata, self, bad_marker, sizeof(bad_marker),
		       RX_MARKER_ERRORS, 0, 1, 2);
	rc = xm_param_set("mpa_markers", 0);
	EXPECT_EQ(1, xc_delta(XC_SRV_DEV, &self->ss, RX_MARKER_ERRORS));
	EXPECT_EQ(1, xc_delta(XC_SRV_DEV, &self->ss, RX_CRC_ERRORS));
	EXPECT_EQ(2, xc_delta(XC_SRV_DEV, &self->ss, TX_TERMINATE_LLP));
	EXPECT_EQ(0, xc_delta(XC_SRV_DEV, &self->ss, RX_FPDUS));
	/* Both counters were freed with their last QP. */
	EXPECT_EQ(0, xsh(out, sizeof(out), "rdma statistic qp show link %s/1",
			 XC_SRV_DEV));
	EXPECT_EQ(-1, xc_word_val(out, "cntn")) TH_LOG("%s", out);
	EXPECT_EQ(0, xsh(out, sizeof(out),
			 "rdma statistic qp set link %s/1 auto off", XC_SRV_DEV))
		TH_LOG("%s", out);
	TH_LOG("%lld ms", now_ms() - t);
	ASSERT_EQ(0, rc);
	if (_metadata->passed == 0)
		xc_log_moves(_metadata, XC_SRV_DEV, &self->ss);
}

/* Delete both links once every test process is gone. */
static void __attribute__((destructor)) purge(void)
{
	xc_links_purge();
}

TEST_HARNESS_MAIN
