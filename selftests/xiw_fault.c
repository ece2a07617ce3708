// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Allocation failures, on a kernel with fault injection (the debug kernel
 * of make check-debug; elsewhere every test skips, saying so).
 *
 * site: each of xiw's own allocation sites (/sys/kernel/debug/xiw/sites,
 * listed in Documentation/testing.rst) is made to fail exactly once
 * under the operation that reaches it: that operation fails cleanly (an
 * errno, a failed connection) or falls back (zero-copy sends copied),
 * the site's failure count goes up by one, and the same operation then
 * succeeds. The fixture's teardown deletes the RDMA link, which waits
 * for every connection of the device: a leaked one would hang it.
 *
 * nth: the kernel's own failslab and fail_page_alloc, through the
 * calling thread's fail-nth, fail the first, second, ... allocation of a
 * verb's system call (ib_core's, uverbs' and xiw's alike) until the verb
 * gets through; after each failure the device holds no more objects of
 * that kind than before.
 *
 * The debug kernel's kmemleak scan after this program (run_vm.sh) says
 * whether anything failed here leaked.
 */
#include <fcntl.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"
#include "xiw_fault_util.h"

#define XF_NETDEV	"xf0"
#define XF_IBDEV	"xiwF0"
#define XF_ADDR		"10.96.0.1"
#define XF_PARAMS	"/sys/module/xiw/parameters/"

/* Objects of a kind ("qp", "mr", "cq", "srq") the device holds. */
static int xf_res_count(const char *kind)
{
	char out[64];

	if (xsh(out, sizeof(out), "rdma res show %s | grep -c ' %s[/ ]'",
		kind, XF_IBDEV) > 1)
		return -1;
	return atoi(out);
}

enum xf_op {
	XF_REG_MR,
	XF_ALLOC_MW,
	XF_CREATE_QP,
	XF_CREATE_CQ,
	XF_RESIZE_CQ,
	XF_CREATE_SRQ,
	XF_LISTEN,
	XF_CONNECT,
	XF_CONNECT_MARKERS,
	XF_LINK_ADD,
	XF_QP_COUNTER,
	XF_ZCOPY,
	XF_READ_BY_REF,
	XF_TX_SET,
	XF_OWN_PAGE,
	XF_OWN_PAGE_LATER,
	XF_CRC_PROBE,
};

FIXTURE(site) {
	struct xr_link link;
	struct xr_net net;
	struct xr_pair p;
	bool have;
	char out[4096];
};

FIXTURE_VARIANT(site) {
	const char *site;
	enum xf_op op;
};

#define XF_SITE(name, o) \
	FIXTURE_VARIANT_ADD(site, name) { .site = #name, .op = o }

XF_SITE(mr, XF_REG_MR);
XF_SITE(mr_id, XF_REG_MR);
XF_SITE(mr_umem, XF_REG_MR);
XF_SITE(mr_pages, XF_REG_MR);
XF_SITE(mw, XF_ALLOC_MW);
/* A window's STag index comes from the MRs' table. */
FIXTURE_VARIANT_ADD(site, mw_id) { .site = "mr_id", .op = XF_ALLOC_MW };
XF_SITE(qp_sq_pend, XF_CREATE_QP);
XF_SITE(qp_id, XF_CREATE_QP);
XF_SITE(rx, XF_CREATE_QP);
XF_SITE(tx, XF_CREATE_QP);
XF_SITE(ring, XF_CREATE_QP);
XF_SITE(ring_mmap, XF_CREATE_QP);
FIXTURE_VARIANT_ADD(site, ring_cq) { .site = "ring", .op = XF_CREATE_CQ };
FIXTURE_VARIANT_ADD(site, ring_mmap_cq) {
	.site = "ring_mmap", .op = XF_CREATE_CQ
};
FIXTURE_VARIANT_ADD(site, ring_resize_cq) {
	.site = "ring", .op = XF_RESIZE_CQ
};
FIXTURE_VARIANT_ADD(site, ring_mmap_resize_cq) {
	.site = "ring_mmap", .op = XF_RESIZE_CQ
};
FIXTURE_VARIANT_ADD(site, ring_srq) { .site = "ring", .op = XF_CREATE_SRQ };
XF_SITE(conn_listen, XF_LISTEN);
XF_SITE(listen, XF_LISTEN);
FIXTURE_VARIANT_ADD(site, sock_listen) { .site = "sock", .op = XF_LISTEN };
XF_SITE(conn_connect, XF_CONNECT);
XF_SITE(conn_accept, XF_CONNECT);
XF_SITE(mpa_frame, XF_CONNECT);
XF_SITE(wire_rings, XF_CONNECT);
/* Only a connection with markers needs them. */
XF_SITE(tx_markers, XF_CONNECT_MARKERS);
FIXTURE_VARIANT_ADD(site, sock_connect) { .site = "sock", .op = XF_CONNECT };
XF_SITE(dev_counters, XF_LINK_ADD);
XF_SITE(qp_counter, XF_QP_COUNTER);
XF_SITE(qp_counter_id, XF_QP_COUNTER);
XF_SITE(zc_ctx, XF_ZCOPY);
XF_SITE(zc_msg, XF_ZCOPY);
XF_SITE(zc_page, XF_ZCOPY);
/* The same page, for a Read Response sent by reference without a ubuf. */
FIXTURE_VARIANT_ADD(site, zc_page_read) {
	.site = "zc_page", .op = XF_READ_BY_REF
};
XF_SITE(tx_set, XF_TX_SET);
XF_SITE(tx_own_page, XF_OWN_PAGE);
/* The same, for a page of the Write's second FPDU. */
FIXTURE_VARIANT_ADD(site, tx_own_page_later) {
	.site = "tx_own_page", .op = XF_OWN_PAGE_LATER
};
XF_SITE(crc_probe, XF_CRC_PROBE);

FIXTURE_SETUP(site)
{
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_load_type("xiw"));
	self->have = xf_present();
	if (!self->have)
		return;
	ASSERT_EQ(0, xf_prepare());
	ASSERT_EQ(0, xr_link_make(&self->link, "xiw", XF_NETDEV, XF_IBDEV,
				  XF_ADDR));
}

FIXTURE_TEARDOWN(site)
{
	if (!self->have)
		return;
	xf_disarm();
	xf_attr("space", "0");
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	sh("echo 1 > " XF_PARAMS "tx_zcopy");
	sh("echo 0 > " XF_PARAMS "mpa_markers");
	/* Waits for every connection of the device: a leak would hang. */
	EXPECT_EQ(0, sh("timeout 60 rdma link delete " XF_IBDEV));
	sh("rdma link delete xiwF1 >/dev/null 2>&1; ip link del " XF_NETDEV
	   "; ip link del xf1 >/dev/null 2>&1");
}

static struct ibv_context *xf_open(void)
{
	return open_dev(XF_IBDEV);
}

/* One Send of 64 bytes from client to server, checked. */
static int xf_exchange(struct xr_pair *p)
{
	struct ibv_wc wc;

	xr_fill(p->cli.buf, 64, 11);
	if (xr_recv(&p->srv, 1, 0, 64) ||
	    xr_post(&p->cli, IBV_WR_SEND, 2, 0, 64, 0, NULL, 0))
		return -1;
	if (xr_poll(p->srv.cq, &wc, 1, XR_WAIT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS)
		return -2;
	if (xr_poll(p->cli.cq, &wc, 1, XR_WAIT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS)
		return -3;
	return xr_check(p->srv.buf, 64, 11) == -1 ? 0 : -4;
}

/*
 * After a failed connection or a lost QP: drop the pair and the
 * rdma_cm state (the server may hear of the failure late), connect
 * afresh and exchange a message. 0, or which step failed.
 */
static int xf_reconnect(struct xr_net *net, struct xr_pair *p,
			const struct xr_opts *o)
{
	xr_pairs_fini(p, 1);
	xr_net_fini(net);
	if (xr_net_init_at(net, XF_ADDR))
		return -10;
	if (xr_connect(net, p, 1, o))
		return -11;
	return xf_exchange(p);
}

TEST_F_TIMEOUT(site, fails_once_then_recovers, 300)
{
	struct xr_opts o = { .buflen = 1 << 17, .wr = 8, .sge = 1,
			     .rd_atom = 1 };
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	long before;
	void *buf;

	if (!self->have)
		SKIP(return, "no " XF_DIR "fail_site (a kernel without fault injection)");
	before = xf_failed(variant->site);
	ASSERT_LE(0, before) TH_LOG("no site %s", variant->site);
	if (variant->op <= XF_CREATE_SRQ) {
		ctx = xf_open();
		ASSERT_NE(NULL, ctx);
		pd = ibv_alloc_pd(ctx);
		ASSERT_NE(NULL, pd);
		if (variant->op != XF_CREATE_CQ) {
			cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
			ASSERT_NE(NULL, cq);
		}
	}
	buf = aligned_alloc(4096, 1 << 20);
	ASSERT_NE(NULL, buf);

	switch (variant->op) {
	case XF_REG_MR: {
		struct ibv_mr *mr;

		ASSERT_EQ(0, xf_arm(variant->site));
		mr = ibv_reg_mr(pd, buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
		xf_disarm();
		ASSERT_EQ(NULL, mr);
		mr = ibv_reg_mr(pd, buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(NULL, mr) TH_LOG("after: %s", strerror(errno));
		ibv_dereg_mr(mr);
		break;
	}
	case XF_ALLOC_MW: {
		struct ibv_mw *mw;

		ASSERT_EQ(0, xf_arm(variant->site));
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		xf_disarm();
		ASSERT_EQ(NULL, mw);
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		ASSERT_NE(NULL, mw) TH_LOG("after: %s", strerror(errno));
		ibv_dealloc_mw(mw);
		break;
	}
	case XF_CREATE_QP: {
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *qp;
		int n0 = xf_res_count("qp");

		ASSERT_EQ(0, xf_arm(variant->site));
		qp = ibv_create_qp(pd, &qa);
		xf_disarm();
		ASSERT_EQ(NULL, qp);
		ASSERT_EQ(n0, xf_res_count("qp"));
		qp = ibv_create_qp(pd, &qa);
		ASSERT_NE(NULL, qp) TH_LOG("after: %s", strerror(errno));
		ibv_destroy_qp(qp);
		break;
	}
	case XF_CREATE_CQ: {
		struct ibv_cq *c;

		ASSERT_EQ(0, xf_arm(variant->site));
		c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		xf_disarm();
		ASSERT_EQ(NULL, c);
		c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		ASSERT_NE(NULL, c) TH_LOG("after: %s", strerror(errno));
		ibv_destroy_cq(c);
		break;
	}
	case XF_RESIZE_CQ: {
		struct ibv_wc wc;

		/* A failed resize leaves the CQ as it was, and usable. */
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_NE(0, ibv_resize_cq(cq, 256));
		xf_disarm();
		ASSERT_EQ(16, cq->cqe);
		ASSERT_EQ(0, ibv_poll_cq(cq, 1, &wc));
		ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
		ASSERT_EQ(0, ibv_resize_cq(cq, 256))
			TH_LOG("after: %s", strerror(errno));
		ASSERT_LE(256, cq->cqe);
		ASSERT_EQ(0, ibv_poll_cq(cq, 1, &wc));
		break;
	}
	case XF_CREATE_SRQ: {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 8, .max_sge = 1 },
		};
		struct ibv_srq *srq;

		ASSERT_EQ(0, xf_arm(variant->site));
		srq = ibv_create_srq(pd, &sa);
		xf_disarm();
		ASSERT_EQ(NULL, srq);
		srq = ibv_create_srq(pd, &sa);
		ASSERT_NE(NULL, srq) TH_LOG("after: %s", strerror(errno));
		ibv_destroy_srq(srq);
		break;
	}
	case XF_LISTEN:
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_NE(0, xr_net_init_at(&self->net, XF_ADDR));
		xf_disarm();
		xr_net_fini(&self->net);
		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR))
			TH_LOG("after: %s", self->net.err);
		ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("%s", self->net.err);
		ASSERT_EQ(0, xf_exchange(&self->p));
		break;
	case XF_CONNECT_MARKERS:
		/* Both ends ask for markers (MPA-30): both send them. */
		ASSERT_EQ(0, xf_write(XF_PARAMS "mpa_markers", "1"));
		/* fall through */
	case XF_CONNECT:
		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR))
			TH_LOG("%s", self->net.err);
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_NE(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("connected with %s failing", variant->site);
		xf_disarm();
		ASSERT_EQ(0, xf_reconnect(&self->net, &self->p, &o))
			TH_LOG("after: %s", self->net.err);
		break;
	case XF_LINK_ADD:
		ASSERT_EQ(0, dummy_add("xf1", "02:00:00:00:f1:01"));
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_NE(0, sh("rdma link add xiwF1 type xiw netdev xf1 2>/dev/null"));
		xf_disarm();
		ASSERT_FALSE(ibdev_exists("xiwF1"));
		ASSERT_EQ(0, sh("rdma link add xiwF1 type xiw netdev xf1"));
		ASSERT_EQ(0, sh("rdma link delete xiwF1"));
		break;
	case XF_QP_COUNTER: {
		uint32_t qpn;

		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR));
		ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("%s", self->net.err);
		qpn = self->p.cli.qp->qp_num;
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_NE(0, xsh(self->out, sizeof(self->out),
				 "rdma statistic qp bind link " XF_IBDEV
				 "/1 lqpn %u", qpn));
		xf_disarm();
		ASSERT_EQ(0, xsh(self->out, sizeof(self->out),
				 "rdma statistic qp bind link " XF_IBDEV
				 "/1 lqpn %u", qpn)) TH_LOG("%s", self->out);
		ASSERT_EQ(0, xf_exchange(&self->p));
		break;
	}
	case XF_ZCOPY: {
		bool ctx_site = !strcmp(variant->site, "zc_ctx");
		struct ibv_wc wc;

		/* Zero-copy on lo, for the messages of 16 KiB and more. */
		ASSERT_EQ(0, sh("echo 2 > " XF_PARAMS "tx_zcopy"));
		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR));
		if (ctx_site)
			ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("%s", self->net.err);
		if (!ctx_site)
			ASSERT_EQ(0, xf_arm(variant->site));
		xr_fill(self->p.cli.buf, 65536, 21);
		ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_RDMA_WRITE, 3, 0,
				     65536, 0, &self->p.srv, 65536));
		ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1, XR_WAIT_MS));
		xf_disarm();
		/* Copied instead: the Write is whole all the same. */
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_EQ(0, xf_exchange(&self->p));
		ASSERT_EQ(-1, xr_check(self->p.srv.buf + 65536, 65536, 21));
		break;
	}
	case XF_READ_BY_REF: {
		long long m0;
		struct ibv_wc wc;

		/*
		 * tx_zcopy=1, the default: lo carries a Read Response of
		 * 64 KiB by reference. Its first batch finds no header page
		 * and is copied instead; the Read is whole all the same.
		 */
		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR));
		ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("%s", self->net.err);
		m0 = xr_port_counter(XF_IBDEV, "tx_zcopy_messages");
		ASSERT_LE(0, m0);
		xr_fill(self->p.srv.buf, 65536, 23);
		memset(self->p.cli.buf + 65536, 0xee, 65536);
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_RDMA_READ, 5, 65536,
				     65536, 0, &self->p.srv, 0));
		ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1, XR_WAIT_MS));
		xf_disarm();
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_EQ(5, wc.wr_id);
		ASSERT_EQ(-1, xr_check(self->p.cli.buf + 65536, 65536, 23));
		/* Taken by reference: its other batches were. */
		ASSERT_EQ(m0 + 1,
			  xr_port_counter(XF_IBDEV, "tx_zcopy_messages"));
		ASSERT_EQ(0, xf_exchange(&self->p));
		break;
	}
	case XF_OWN_PAGE:
	case XF_OWN_PAGE_LATER: {
		bool later = variant->op == XF_OWN_PAGE_LATER;
		long long p0, p1, f0;
		struct ibv_wc wc;

		/*
		 * tx_own_pages, the default: lo takes a Write of 128 KiB in
		 * pages of xiw's own, by reference, 32 of them, each FPDU's
		 * payload going on in the page the last one's ended in. An
		 * FPDU carries at most about 64 KiB (the loopback's MSS, or
		 * less: TCP bounds it by half the largest window the peer
		 * offered), so there are three or more. No page for the
		 * first FPDU: TCP copies all of the Write. No page at the
		 * 17th taken ("space" letting 16 pass), in the second FPDU
		 * or a later one: the FPDUs before it go in their pages, the
		 * rest is copied. The Write is whole either way.
		 */
		xr_lo_mtu(65536);
		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR));
		ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("%s", self->net.err);
		p0 = xr_port_counter(XF_IBDEV, "tx_page_reuses") +
		     xr_port_counter(XF_IBDEV, "tx_page_allocs");
		f0 = xr_port_counter(XF_IBDEV, "tx_fpdus");
		ASSERT_LE(0, f0);
		xr_fill(self->p.cli.buf, 1 << 17, 29);
		memset(self->p.srv.buf, 0xee, 1 << 17);
		ASSERT_EQ(0, xf_arm(variant->site));
		if (later)
			ASSERT_EQ(0, xf_attr("space", "17"));
		ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_RDMA_WRITE, 6, 0,
				     1 << 17, 0, &self->p.srv, 0));
		ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1, XR_WAIT_MS));
		xf_disarm();
		ASSERT_EQ(0, xf_attr("space", "0"));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_EQ(6, wc.wr_id);
		ASSERT_LE(f0 + 3, xr_port_counter(XF_IBDEV, "tx_fpdus"));
		/*
		 * The Write's completion says it was handed to TCP; the
		 * exchange's Send, behind it, says it was placed. The Send
		 * lands on the Write's first 64 bytes and takes the client's
		 * too: the rest is compared, with the client's own.
		 */
		ASSERT_EQ(0, xf_exchange(&self->p));
		ASSERT_EQ(0, memcmp(self->p.srv.buf + 64, self->p.cli.buf + 64,
				    (1 << 17) - 64));
		p1 = xr_port_counter(XF_IBDEV, "tx_page_reuses") +
		     xr_port_counter(XF_IBDEV, "tx_page_allocs");
		ASSERT_LE(0, p0);
		/* The pages taken: none, or the 16 before the failure. */
		ASSERT_EQ(later ? 16 : 0, p1 - p0);
		break;
	}
	case XF_TX_SET: {
		struct ibv_wc wc;
		int i;

		ASSERT_EQ(0, xr_net_init_at(&self->net, XF_ADDR))
			TH_LOG("%s", self->net.err);
		ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
			TH_LOG("%s", self->net.err);
		/*
		 * A pass keeps its set until it ends, and a message it finds
		 * after the one it sent needs no other, so the site is not
		 * reached: a Send posted while the pass that carried the RTR
		 * message is still ending goes out. Such a Send must not have
		 * used the fault; the server has a receive for it, and the
		 * next try comes a little later.
		 */
		for (i = 0; i < 5; i++) {
			ASSERT_EQ(0, xr_recv(&self->p.srv, 5, 0, 64));
			ASSERT_EQ(0, xf_arm(variant->site));
			ASSERT_EQ(0, xr_post(&self->p.cli, IBV_WR_SEND, 4, 0,
					     64, 0, NULL, 0));
			ASSERT_EQ(1, xr_poll(self->p.cli.cq, &wc, 1,
					     XR_WAIT_MS));
			xf_disarm();
			if (wc.status != IBV_WC_SUCCESS)
				break;
			ASSERT_EQ(before, xf_failed(variant->site));
			TH_LOG("try %d: the site was not reached", i + 1);
			ASSERT_EQ(1, xr_poll(self->p.srv.cq, &wc, 1,
					     XR_WAIT_MS));
			ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
			usleep(200000);
		}
		/* Nothing to build the message in: a local error. */
		ASSERT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status)
			TH_LOG("%s", xr_wc_str(&wc));
		ASSERT_EQ(4, wc.wr_id);
		/* The QP is lost; the next connection sends. */
		ASSERT_EQ(0, xf_reconnect(&self->net, &self->p, &o))
			TH_LOG("after: %s", self->net.err);
		break;
	}
	case XF_CRC_PROBE: {
		char out[256];

		/*
		 * crc_impl=auto with nothing to time: the crypto API's CRC
		 * (what a kernel without the choice uses), no times; the
		 * next auto times both again.
		 */
		ASSERT_EQ(0, xf_arm(variant->site));
		ASSERT_EQ(0, sh("echo auto > " XF_PARAMS "crc_impl"));
		xf_disarm();
		ASSERT_EQ(0, xsh(out, sizeof(out), "cat " XF_DIR "crc32c"));
		EXPECT_NE(NULL, strstr(out, "crypto_ns 0\n")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "using crypto\n")) TH_LOG("%s", out);
		ASSERT_EQ(0, sh("echo auto > " XF_PARAMS "crc_impl"));
		ASSERT_EQ(0, xsh(out, sizeof(out), "cat " XF_DIR "crc32c"));
		EXPECT_EQ(NULL, strstr(out, "crypto_ns 0\n")) TH_LOG("%s", out);
		EXPECT_EQ(NULL, strstr(out, "generic_ns 0\n")) TH_LOG("%s", out);
		break;
	}
	}
	EXPECT_EQ(before + 1, xf_failed(variant->site))
		TH_LOG("site %s did not fail exactly once", variant->site);
	free(buf);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
}

FIXTURE(nth) {
	struct xr_link link;
	bool have;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *buf;
};

FIXTURE_VARIANT(nth) {
	enum xf_op op;
	const char *kind;
};

FIXTURE_VARIANT_ADD(nth, create_qp) { .op = XF_CREATE_QP, .kind = "qp" };
FIXTURE_VARIANT_ADD(nth, create_cq) { .op = XF_CREATE_CQ, .kind = "cq" };
FIXTURE_VARIANT_ADD(nth, resize_cq) { .op = XF_RESIZE_CQ, .kind = "cq" };
FIXTURE_VARIANT_ADD(nth, create_srq) { .op = XF_CREATE_SRQ, .kind = "srq" };
FIXTURE_VARIANT_ADD(nth, reg_mr) { .op = XF_REG_MR, .kind = "mr" };
/*
 * rdma res shows no windows: a window left behind by a failed call is
 * kmemleak's to find (run_vm.sh's kernel checks after the program).
 */
FIXTURE_VARIANT_ADD(nth, alloc_mw) { .op = XF_ALLOC_MW, .kind = NULL };

FIXTURE_SETUP(nth)
{
	xr_unlimit_memlock();
	ASSERT_EQ(0, xr_load_type("xiw"));
	self->have = xf_nth_present();
	if (!self->have)
		return;
	ASSERT_EQ(0, xf_nth_prepare());
	ASSERT_EQ(0, xr_link_make(&self->link, "xiw", XF_NETDEV, XF_IBDEV,
				  XF_ADDR));
	self->ctx = xf_open();
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = aligned_alloc(4096, 1 << 20);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(nth)
{
	if (!self->have)
		return;
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	free(self->buf);
	EXPECT_EQ(0, sh("timeout 60 rdma link delete " XF_IBDEV));
	sh("ip link del " XF_NETDEV);
}

/* The verb once; 0 if it succeeded (its object freed again), else -1. */
static int xf_verb(FIXTURE_DATA(nth) *self, enum xf_op op)
{
	switch (op) {
	case XF_CREATE_QP: {
		struct ibv_qp_init_attr qa = {
			.send_cq = self->cq, .recv_cq = self->cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *qp = ibv_create_qp(self->pd, &qa);

		return qp ? ibv_destroy_qp(qp) : -1;
	}
	case XF_CREATE_CQ: {
		struct ibv_cq *c = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);

		return c ? ibv_destroy_cq(c) : -1;
	}
	case XF_RESIZE_CQ: {
		struct ibv_wc wc;
		int rv = ibv_resize_cq(self->cq, 64);

		/* Resized or not, the CQ still answers. */
		return ibv_poll_cq(self->cq, 1, &wc) ? -2 : rv ? -1 : 0;
	}
	case XF_CREATE_SRQ: {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 8, .max_sge = 1 },
		};
		struct ibv_srq *s = ibv_create_srq(self->pd, &sa);

		return s ? ibv_destroy_srq(s) : -1;
	}
	case XF_ALLOC_MW: {
		struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);

		return mw ? ibv_dealloc_mw(mw) : -1;
	}
	default: {
		struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf, 1 << 20,
					       IBV_ACCESS_LOCAL_WRITE);

		return mr ? ibv_dereg_mr(mr) : -1;
	}
	}
}

TEST_F_TIMEOUT(nth, every_allocation_of_the_call, 600)
{
	int n, n0, rv, failures = 0;
	bool fired;

	if (!self->have)
		SKIP(return, "no fail-nth or failslab (a kernel without fault injection)");
	n0 = variant->kind ? xf_res_count(variant->kind) : 0;
	for (n = 1; n < 1000; n++) {
		ASSERT_EQ(0, xf_nth_set(n));
		rv = xf_verb(self, variant->op);
		fired = xf_nth_fired();
		if (!fired) {
			ASSERT_EQ(0, rv) TH_LOG("no fault at %d, yet it failed", n);
			break;
		}
		/* A fault may be absorbed (a fallback): then it succeeds. */
		if (rv)
			failures++;
		if (variant->kind)
			ASSERT_EQ(n0, xf_res_count(variant->kind))
				TH_LOG("%s objects left after failing at %d",
				       variant->kind, n);
	}
	TH_LOG("%d allocations in the call, %d of them fatal", n - 1, failures);
	ASSERT_LT(1, n);
	ASSERT_LT(0, failures);
	/* And it still works. */
	ASSERT_EQ(0, xf_verb(self, variant->op));
}

TEST_HARNESS_MAIN
