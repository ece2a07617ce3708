// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Interoperability with the kernel's siw in one guest: xiw on the dummy
 * netdev xr0 (10.99.0.1, device xiwT0), siw (build/siw/siw.ko, see
 * scripts/siw-build.sh) on xr1 (10.99.1.1, device siwT1). A client that
 * resolves from one device's address to a listener on the other's makes
 * a connection between the two drivers: rdma_cm picks the client's device
 * by its source address. Both directions:
 *
 *   xiw_to_siw  xiw is the MPA initiator, under mpa_crc 1/0 with
 *               mpa_rev 1, and mpa_rev 2 with p2p_rtr 0 (no RTR, what
 *               admin-guide.rst advises towards siw);
 *   siw_to_xiw  siw initiates (revision 2, no CRC asked, no peer-to-peer:
 *               its fixed defaults), xiw answers under mpa_crc 1/0.
 *
 * Each variant moves data through Send (both ways), Write-then-Send and
 * Read at 1, 4096, 65536 + 3 and 1 MiB bytes, zero-length Send/Write/Read
 * (DDP-05, RDMAP-02), and checks the start-up on lo: with xiw's mpa_crc=1
 * CRC32c must be in use both ways although siw does not ask for it
 * (MPA-05), every FPDU's CRC valid (MPA-42), RTR as offered (E-06).
 *
 * The markers fixture: with xiw's mpa_markers=1 the connection fails at
 * once with REJECTED in both directions (siw has no markers).
 *
 * Not covered, siw's known deviation (E-06, Documentation/requirements.rst):
 * siw never picks a zero-length Send RTR (an initiator offering only Send
 * gets a Write), so p2p_rtr 1 towards siw is not a variant.
 *
 * The dynamic debug of xiw and siw is on (XIW_TEST_DYNDBG=0 turns it
 * off): the guest's dmesg then tells what each side did when a test
 * fails.
 */
#include "kselftest_harness.h"
#include "xiw_wire_checks.h"
#include "xiw_bulk.h"

#define XI_SIW_NETDEV	"xr1"
#define XI_SIW_DEV	"siwT1"
#define XI_SIW_ADDR	"10.99.1.1"
#define XI_XIW_NETDEV	"xr0"
#define XI_XIW_DEV	"xiwT0"

/* Dynamic debug for both drivers, once per boot. */
static void xi_dyndbg(void)
{
	const char *env = getenv("XIW_TEST_DYNDBG");
	const char *ctl = "/sys/kernel/debug/dynamic_debug/control";

	if (env && !strcmp(env, "0"))
		return;
	if (!path_exists(ctl))
		sh("mount -t debugfs none /sys/kernel/debug >/dev/null 2>&1");
	sh("echo 'module xiw +p' > %s; echo 'module siw +p' > %s", ctl, ctl);
}

/* The two links, xiw's and siw's, made once per program. */
#define XI_MAKE_LINKS(self) do {					\
	ASSERT_EQ(0, xr_link_make(&(self)->xl, "xiw", XI_XIW_NETDEV,	\
				  XI_XIW_DEV, XR_ADDR))			\
		TH_LOG("cannot create " XI_XIW_DEV);			\
	ASSERT_EQ(0, xr_link_make(&(self)->sl, "siw", XI_SIW_NETDEV,	\
				  XI_SIW_DEV, XI_SIW_ADDR))		\
		TH_LOG("cannot create " XI_SIW_DEV			\
		       " (scripts/siw-build.sh builds build/siw/siw.ko)"); \
} while (0)

FIXTURE(interop) {
	struct xr_link xl, sl;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;	/* client (MPA initiator), server */
	struct xm_cap *cap;
	uint64_t seed;
};

FIXTURE_VARIANT(interop) {
	bool xiw_initiates;	/* else siw initiates */
	int crc, rev, rtr;	/* xiw's parameters */
};

/*
 * Not variants: xiw initiating towards siw with a peer-to-peer RTR
 * (mpa_rev 2, p2p_rtr 2 or 3, xiw's default). siw switches its socket
 * callbacks to the data path only after its Reply went out; on one host
 * xiw's RTR, sent right after the Reply as E-06 asks, often arrives in
 * that window and siw never sees it. siw then reports CLOSE for an iw_cm
 * id still in CONN_RECV, which is "kernel BUG at iwcm.c:969" and kills
 * the guest (seen under TCG in 3 of 4 runs). A siw race, documented in
 * Documentation/testing.rst; across a real network the window is rarely
 * hit.
 */
FIXTURE_VARIANT_ADD(interop, xiw_to_siw_crc1_rev1) {
	.xiw_initiates = true, .crc = 1, .rev = 1, .rtr = 2 };
FIXTURE_VARIANT_ADD(interop, xiw_to_siw_crc0_rev1) {
	.xiw_initiates = true, .crc = 0, .rev = 1, .rtr = 2 };
FIXTURE_VARIANT_ADD(interop, xiw_to_siw_crc1_rev2_rtr0) {
	.xiw_initiates = true, .crc = 1, .rev = 2, .rtr = 0 };
FIXTURE_VARIANT_ADD(interop, siw_to_xiw_crc1) {
	.xiw_initiates = false, .crc = 1, .rev = 2, .rtr = 2 };
FIXTURE_VARIANT_ADD(interop, siw_to_xiw_crc0) {
	.xiw_initiates = false, .crc = 0, .rev = 2, .rtr = 2 };
/* xiw's mpa_rev only applies to what it asks for, not to its answers. */
FIXTURE_VARIANT_ADD(interop, siw_to_xiw_crc1_xiw_rev1) {
	.xiw_initiates = false, .crc = 1, .rev = 1, .rtr = 2 };

FIXTURE_SETUP(interop)
{
	struct xr_opts o = { .buflen = XW_BUFLEN, .wr = 16, .sge = 1,
			     .rd_atom = 4 };
	int rc;

	xr_unlimit_memlock();
	XI_MAKE_LINKS(self);
	xi_dyndbg();
	xr_lo_mtu(1500);
	rc = xm_params(variant->crc, variant->rev, variant->rtr);
	ASSERT_EQ(0, rc) TH_LOG("setting MPA parameters: %s", strerror(-rc));
	ASSERT_EQ(0, xr_net_init_at(&self->net, variant->xiw_initiates ?
				    XI_SIW_ADDR : XR_ADDR))
		TH_LOG("%s", self->net.err);
	xr_net_set_src(&self->net, variant->xiw_initiates ? XR_ADDR : XI_SIW_ADDR);
	self->cap = malloc(sizeof(*self->cap));
	ASSERT_NE(NULL, self->cap);
	rc = xm_cap_open(self->cap, ntohs(self->net.addr.sin_port));
	ASSERT_EQ(0, rc) TH_LOG("packet capture on lo: %s", strerror(-rc));
	rc = xr_connect(&self->net, &self->p, 1, &o);
	if (rc)	/* the evidence, before teardown changes it */
		sh("echo '# dmesg:'; dmesg | grep -E 'xiw|siw|iw_cm|iwcm' | tail -n 60 | sed 's/^/#   /'");
	ASSERT_EQ(0, rc)
		TH_LOG("%s -> %s, xiw mpa_crc %d mpa_rev %d p2p_rtr %d: %s",
		       variant->xiw_initiates ? "xiw" : "siw",
		       variant->xiw_initiates ? "siw" : "xiw", variant->crc,
		       variant->rev, variant->rtr, self->net.err);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	/* Each end is on the device asked for, not both on one. */
	ASSERT_STREQ(variant->xiw_initiates ? XI_XIW_DEV : XI_SIW_DEV,
		     ibv_get_device_name(self->c->id->verbs->device));
	ASSERT_STREQ(variant->xiw_initiates ? XI_SIW_DEV : XI_XIW_DEV,
		     ibv_get_device_name(self->s->id->verbs->device));
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(interop)
{
	if (!_metadata->passed)
		xw_log_wire(_metadata, self->cap);
	xm_cap_close(self->cap);
	free(self->cap);
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xm_params_default();
}

TEST_F_TIMEOUT(interop, send_both_ways, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_send_both_ways(_metadata, self->c, self->s, self->seed);
}

TEST_F_TIMEOUT(interop, write_then_send, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_write_then_send(_metadata, self->c, self->s, self->seed);
}

TEST_F_TIMEOUT(interop, rdma_read, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_read(_metadata, self->c, self->s, self->seed);
}

/*
 * Also the other way: the server (MPA responder) reads from the client,
 * after the client's first FPDU (MPA-12: xiw as responder waits for it
 * when there is no RTR; siw does not). The capture stays on: a failure logs what went on the wire.
 */
TEST_F_TIMEOUT(interop, rdma_read_reverse, XW_TIMEOUT)
{
	xw_initiator_first(_metadata, self->c, self->s);
	xw_read(_metadata, self->s, self->c, self->seed);
}

/*
 * An RFC 7306 atomic towards siw, which has none: siw refuses the opcode
 * with a Terminate (0x02/0x06, no headers) and closes. The atomic fails
 * as an invalid request, or flushes if siw closed before its Terminate
 * went out; siw's memory is untouched and neither kernel complains.
 */
/* FPDUs of opcode op the initiator (ini) or the responder sent. */
static int xi_count_op(struct xm_cap *cap, bool ini, int op)
{
	struct xm_stream *st = ini ? &cap->ini : &cap->rsp;
	struct xm_frame fr = xm_frame(st, ini ? "MPA ID Req Frame" :
					      "MPA ID Rep Frame");
	struct xm_stream *other = ini ? &cap->rsp : &cap->ini;
	bool mrk = xm_frame(other, ini ? "MPA ID Rep Frame" :
					 "MPA ID Req Frame").flags & XM_F_M;
	size_t off = fr.end;
	struct xm_fpdu f;
	int n = 0;

	while (fr.ok && xm_fpdu(st, fr.end, mrk, &off, &f, NULL))
		n += f.opcode == op;
	return n;
}

TEST_F_TIMEOUT(interop, atomic_refused_by_siw, XW_TIMEOUT)
{
	struct xr_side *x = variant->xiw_initiates ? self->c : self->s;
	struct xr_side *w = variant->xiw_initiates ? self->s : self->c;
	struct ibv_wc wc;
	int req, term;

	if (!variant->xiw_initiates)
		xw_initiator_first(_metadata, self->c, self->s);
	memset(w->buf, 0, 8);
	ASSERT_EQ(0, xr_atomic(x, IBV_WR_ATOMIC_FETCH_AND_ADD, 0xa7, 0,
			       w->mr->rkey, (uintptr_t)w->buf, 1, 0));
	ASSERT_EQ(1, xr_poll(x->cq, &wc, 1, XR_WAIT_MS));
	ASSERT_EQ(0xa7, wc.wr_id);
	ASSERT_TRUE(wc.status == IBV_WC_REM_INV_REQ_ERR ||
		    wc.status == IBV_WC_WR_FLUSH_ERR)
		TH_LOG("%s", xr_wc_str(&wc));
	EXPECT_EQ(0, *(uint64_t *)w->buf);
	/* On the wire: the Atomic Request went out, once. */
	usleep(100000);
	xm_cap_drain(self->cap);
	req = xi_count_op(self->cap, variant->xiw_initiates, 10);
	term = xi_count_op(self->cap, !variant->xiw_initiates, 7);
	EXPECT_EQ(1, req);
	TH_LOG("the atomic completed %s; siw sent %d Terminate(s)",
	       ibv_wc_status_str(wc.status), term);
}

TEST_F_TIMEOUT(interop, zero_length, XW_TIMEOUT)
{
	xm_cap_close(self->cap);
	xw_zero_length(_metadata, self->c, self->s, self->seed);
}

/*
 * MPA-05: CRC is used when either side sets C; siw never sets it in a
 * Request, and as a responder echoes what it got. E-06: siw picks the
 * RTR offered (Write or Read). siw initiating asks for rev 2 without
 * peer-to-peer; xiw answers rev 2 whatever its own mpa_rev.
 */
TEST_F_TIMEOUT(interop, wire_startup, XW_TIMEOUT)
{
	/* Both drivers' FPDUs must fit the EMSS (MPA-23/24). */
	struct xw_expect e = { .rd = -1, .fit = true };

	if (variant->xiw_initiates) {
		e.rev = variant->rev;
		e.req_c = variant->crc;
		e.rep_c = -1;
		e.crc = variant->crc;
		e.rtr = variant->rev == 2 ? variant->rtr : 0;
	} else {
		e.rev = 2;
		e.req_c = 0;
		e.rep_c = variant->crc;
		e.crc = variant->crc;
		e.rtr = 0;
	}
	xw_wire_traffic(_metadata, self->c, self->s, self->seed);
	xw_wire(_metadata, self->cap, &e);
}

/*
 * 64 MiB each way of working (Write then Send, Send, Read) between xiw
 * and siw, in both directions, checked in full, and a Read by the MPA
 * responder. xiw initiating uses MPA revision 1 (peer-to-peer RTR towards
 * siw: see above); siw initiating uses its defaults. CRC is off here:
 * with CRC on, siw sends 64 MiB at about 1 MiB/s under TCG, over the
 * minute a transfer is given (seen: every direction in which siw sends
 * timed out but one Read, which took 51 s; with CRC off 6-34 s). The
 * CRC-on variants above move up to 1 MiB.
 */
FIXTURE(bulk) {
	struct xr_link xl, sl;
	struct xr_net net;
	struct xr_pair p;
	struct xr_side *c, *s;
	uint64_t seed;
};

FIXTURE_VARIANT(bulk) {
	bool xiw_initiates;
	int crc;
};

FIXTURE_VARIANT_ADD(bulk, xiw_to_siw_crc0) { .xiw_initiates = true };
FIXTURE_VARIANT_ADD(bulk, siw_to_xiw_crc0) { .xiw_initiates = false };

FIXTURE_SETUP(bulk)
{
	struct xr_opts o = { .buflen = XW_BUFLEN, .wr = 16, .sge = 1,
			     .rd_atom = 4 };

	xr_unlimit_memlock();
	XI_MAKE_LINKS(self);
	xr_lo_mtu(1500);
	ASSERT_EQ(0, xm_params(variant->crc, variant->xiw_initiates ? 1 : 2,
			       2));
	ASSERT_EQ(0, xr_net_init_at(&self->net, variant->xiw_initiates ?
				    XI_SIW_ADDR : XR_ADDR))
		TH_LOG("%s", self->net.err);
	xr_net_set_src(&self->net, variant->xiw_initiates ? XR_ADDR : XI_SIW_ADDR);
	ASSERT_EQ(0, xr_connect(&self->net, &self->p, 1, &o))
		TH_LOG("%s", self->net.err);
	self->c = &self->p.cli;
	self->s = &self->p.srv;
	ASSERT_STREQ(variant->xiw_initiates ? XI_XIW_DEV : XI_SIW_DEV,
		     ibv_get_device_name(self->c->id->verbs->device));
	self->seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
}

FIXTURE_TEARDOWN(bulk)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xm_params_default();
}

TEST_F_TIMEOUT(bulk, write_64mib, 600)
{
	xb_write(_metadata, self->c, self->s, self->seed);
}

TEST_F_TIMEOUT(bulk, send_64mib, 600)
{
	xb_send(_metadata, self->c, self->s, self->seed);
}

TEST_F_TIMEOUT(bulk, read_64mib, 600)
{
	xb_read(_metadata, self->c, self->s, self->seed);
}

/* And the other way: the MPA responder reads from the initiator. */
TEST_F_TIMEOUT(bulk, read_64mib_reverse, 600)
{
	xw_initiator_first(_metadata, self->c, self->s);
	xb_read(_metadata, self->s, self->c, self->seed);
}

/*
 * Markers against siw, which does not implement them: with xiw's
 * mpa_markers=1 the connection must fail cleanly and at once, in both
 * directions, never hang or come up half-made. siw as responder rejects
 * a Request with M (an MPA Reply with R set: xiw's ULP sees REJECTED);
 * siw as initiator refuses a Reply with M (its ULP sees REJECTED, and it
 * closes the TCP connection under xiw's accepted end).
 */
FIXTURE(markers) {
	struct xr_link xl, sl;
	struct xr_net net;
	struct xr_pair p;
};

FIXTURE_VARIANT(markers) {
	bool xiw_initiates;
};

FIXTURE_VARIANT_ADD(markers, xiw_to_siw) { .xiw_initiates = true };
FIXTURE_VARIANT_ADD(markers, siw_to_xiw) { .xiw_initiates = false };

FIXTURE_SETUP(markers)
{
	xr_unlimit_memlock();
	XI_MAKE_LINKS(self);
	ASSERT_EQ(0, xm_param_set("mpa_markers", 1));
	ASSERT_EQ(0, xr_net_init_at(&self->net, variant->xiw_initiates ?
				    XI_SIW_ADDR : XR_ADDR))
		TH_LOG("%s", self->net.err);
	xr_net_set_src(&self->net, variant->xiw_initiates ? XR_ADDR : XI_SIW_ADDR);
}

FIXTURE_TEARDOWN(markers)
{
	xr_pairs_fini(&self->p, 1);
	xr_net_fini(&self->net);
	xm_params_default();
}

TEST_F_TIMEOUT(markers, refused_cleanly, XW_TIMEOUT)
{
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1, .rd_atom = 4 };
	long long t = now_ms();

	ASSERT_NE(0, xr_connect(&self->net, &self->p, 1, &o))
		TH_LOG("a connection with markers came up against siw");
	t = now_ms() - t;
	TH_LOG("refused in %lld ms: %s", t, self->net.err);
	/* The initiator hears the refusal, not a timeout. */
	ASSERT_NE(NULL, strstr(self->net.err, "REJECTED")) TH_LOG("%s",
								   self->net.err);
	ASSERT_GT(XR_WAIT_MS, t);
}

/* Delete both links once every test process is gone. */
static void __attribute__((destructor)) purge(void)
{
	if (!ibdev_exists(XI_SIW_DEV) && !ibdev_exists(XI_XIW_DEV))
		return;
	xm_params_default();
	sh("flock -w 60 " XR_LOCK " sh -c 'rdma link delete " XI_SIW_DEV
	   "; ip link del " XI_SIW_NETDEV "; rdma link delete " XI_XIW_DEV
	   "; ip link del " XI_XIW_NETDEV "; ip link set lo mtu 65536'"
	   " >/dev/null 2>&1");
}

TEST_HARNESS_MAIN
