// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * NFS over RDMA on the device under test, both ends in this guest: the
 * kernel's nfsd serving a tmpfs on "rdma 20049" (svcrdma), and the
 * kernel's NFS client mounting it with proto=rdma (xprtrdma), as NFSv4.2
 * (where the client has it; the debug kernel has not), NFSv4.0 and
 * NFSv3. svcrdma and xprtrdma are the kernel ULPs that take the
 * IRD/ORD of a CONNECT_REQUEST at their word: a client asks ORD 0, so
 * the server's initiator_depth is the client's IRD or nothing (a refused
 * accept). Both also use fast registration and RDMA Read and Write.
 *
 * Each test ends with rdma link delete, which must return and leave no
 * restrack object behind (the core warns in rdma_restrack_clean
 * otherwise, a panic under panic_on_warn): after a mount and unmount,
 * after mounts that fail, and under a mount still in place.
 *
 * The server (rpcbind, rpc.mountd, nfsd threads, the export) is set up
 * by the first test and taken down when the program ends, so that no
 * rdma listener stays for the next program. Every command runs under
 * timeout(1). The tools come from nfs-kernel-server and nfs-common
 * (scripts/setup.sh installs them on the host, which the guest sees).
 *
 * XIW_TEST_LINK_TYPE selects the device type as for xiw_rdma ("xiw" by
 * default, "siw" to validate the test); the counter checks are xiw's.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "xiw_rdma_util.h"

#define NFS_DIR		"/run/xiw_nfs"
#define EXPORT		NFS_DIR "/export"
#define MNT		NFS_DIR "/mnt"
#define PORT		"20049"
#define PAT		"/tmp/xiw_nfs.pat"
#define IO_MB		4
/* Seconds for one mount or unmount; a refused connection retries. */
#define MOUNT_S		90

FIXTURE(nfs) {
	struct xr_link link;
	char mark[64];
	bool mounted;
	bool quiet;		/* failures expected: no dmesg */
	long long rejects, established;
	char out[16384];
};


/* Kernel warnings since the mark (without panic_on_warn): 0 if none. */
static int klog_warnings(FIXTURE_DATA(nfs) *self)
{
	return xr_klog_since(self->out, sizeof(self->out), self->mark,
			     "WARNING:|BUG:|restrack");
}

static bool serving(void)
{
	char buf[256];

	return read_text("/proc/fs/nfsd/portlist", buf, sizeof(buf)) > 0 &&
	       strstr(buf, "rdma " PORT);
}

/*
 * nfsd on rdma 20049 exporting a tmpfs (nfsd cannot export the guest's
 * 9p root or its overlay) as the NFSv4 root, with rpcbind and
 * rpc.mountd for NFSv3; kept when it is up already. The grace period is
 * cut to its minimum, 10 s, before nfsd starts: NFSv4 opens wait it out.
 */
static int server_up(struct __test_metadata *_metadata)
{
	if (serving())
		return 0;
	if (sh("modprobe -a nfsd rpcrdma nfsv3 nfsv4")) {
		TH_LOG("cannot load nfsd, rpcrdma, nfsv3, nfsv4");
		return -1;
	}
	if (sh("mkdir -p " EXPORT " " MNT " /var/lib/nfs/v4recovery "
	       "/run/rpcbind && (mountpoint -q /proc/fs/nfsd || "
	       "mount -t nfsd nfsd /proc/fs/nfsd) && (mountpoint -q " EXPORT
	       " || mount -t tmpfs -o size=64m xiw_nfs " EXPORT ")")) {
		TH_LOG("cannot mount nfsd's file system or the export's tmpfs");
		return -1;
	}
	sh("echo 10 > /proc/fs/nfsd/nfsv4gracetime; "
	   "echo 10 > /proc/fs/nfsd/nfsv4leasetime");
	if (sh("timeout 60 sh -c '(pidof rpcbind >/dev/null || rpcbind -w) && "
	       "exportfs -o rw,no_root_squash,insecure,fsid=0 \"*:" EXPORT "\" && "
	       "(pidof rpc.mountd >/dev/null || rpc.mountd) && rpc.nfsd 4 && "
	       "echo \"rdma " PORT "\" > /proc/fs/nfsd/portlist'")) {
		TH_LOG("cannot start rpcbind, rpc.mountd or nfsd on rdma " PORT);
		show_dmesg();
		return -1;
	}
	return serving() ? 0 : -1;
}

/* Everything server_up made, and any mount left; quiet. */
static void server_down(void)
{
	sh("(umount -f " MNT "; umount -l " MNT "; rpc.nfsd 0; exportfs -ua; "
	   "kill $(pidof rpc.mountd) $(pidof rpcbind); umount " EXPORT ") >/dev/null 2>&1");
}

/*
 * The kernel's NFS client speaks NFSv4.2 (CONFIG_NFS_V4_2; the debug
 * kernel has NFSv4.0 only): a function of nfs42proc.c is in the
 * kernel's symbols once nfsv4 is loaded.
 */
static bool have_v42(void)
{
	return !sh("grep -q ' nfs42_proc_allocate' /proc/kallsyms");
}

/* The NFSv4 minor version the client speaks: 4.2, else 4.0. */
static const char *v4(void)
{
	return have_v42() ? "4.2" : "4.0";
}

static long long counter(FIXTURE_DATA(nfs) *self, const char *name)
{
	return xr_is_siw() ? 0 : xr_port_counter(self->link.ibdev, name);
}

FIXTURE_SETUP(nfs)
{
	ASSERT_EQ(0, xr_link_add(&self->link))
		TH_LOG("cannot create %s on %s", self->link.ibdev,
		       self->link.netdev);
	ASSERT_EQ(0, server_up(_metadata));
	xr_klog_mark(self->mark, sizeof(self->mark), "xiw_nfs",
		     _metadata->name);
	self->rejects = counter(self, "mpa_rejects_sent");
	self->established = counter(self, "conn_established");
}

FIXTURE_TEARDOWN(nfs)
{
	if (self->mounted)
		sh("timeout -k 5 60 umount -f " MNT " >/dev/null 2>&1 || "
		   "umount -l " MNT);
	unlink(PAT);
}

/*
 * Mount on MNT over rdma, vers "3" or "4.2": path "" is the export, NULL
 * the export on a port without a listener. 0 or mount's status.
 */
static int nfs_mount(FIXTURE_DATA(nfs) *self, const char *vers,
		     const char *path, const char *opts)
{
	bool v3 = !strcmp(vers, "3");
	const char *p = path && *path ? path : v3 ? EXPORT : "/";
	int rc;

	if (self->quiet) {
		rc = xsh(self->out, sizeof(self->out), "timeout -k 5 %d mount "
			 "-t %s -o vers=%s,proto=rdma,port=%s%s " XR_ADDR ":%s "
			 MNT, MOUNT_S, v3 ? "nfs" : "nfs4", vers,
			 path ? PORT : "20050", opts, p);
		fprintf(stderr, "# NFSv%s mount of %s: %d: %s", vers, p, rc,
			self->out);
	} else {
		rc = RUN(self, MOUNT_S, "mount -t %s -o vers=%s,proto=rdma,"
			 "port=%s%s " XR_ADDR ":%s " MNT, v3 ? "nfs" : "nfs4",
			 vers, path ? PORT : "20050", opts, p);
	}
	self->mounted = rc == 0;
	return rc;
}

static int nfs_umount(FIXTURE_DATA(nfs) *self)
{
	self->mounted = false;
	return RUN(self, MOUNT_S, "umount " MNT);
}

/*
 * No object of NFS is left on the device: its only resources are the
 * two wildcard listeners of nfsd (IPv4 and IPv6), cm_ids in LISTEN.
 * svcrdma and xprtrdma free theirs from work items, so this may take a
 * moment after an unmount.
 */
static bool res_clean(const char *ibdev, char *line, size_t len)
{
	char out[8192], *s;

	if (!xr_res_zero_but(ibdev, "cm_id", line, len))
		return false;
	if (xsh(out, sizeof(out), "rdma res show cm_id dev %s", ibdev) != 0)
		return false;
	for (s = out; (s = strstr(s, " state ")); s++)
		if (strncmp(s + 7, "LISTEN ", 7))
			return false;
	return true;
}

static void expect_res_clean(struct __test_metadata *_metadata,
			     FIXTURE_DATA(nfs) *self)
{
	char line[512] = "";
	bool ok;

	ok = WAIT_UNTIL(res_clean(self->link.ibdev, line, sizeof(line)), 20000);
	if (!ok) {
		fflush(NULL);
		sh("(rdma res show; rdma res show cm_id; rdma res show qp; "
		   "rdma res show cq; rdma res show pd) | sed 's/^/# /' >&2");
	}
	ASSERT_TRUE(ok) TH_LOG("resources left: %s", line);
}

/*
 * rdma link delete: returns, the device goes, the core found nothing
 * of it left (no warning; under panic_on_warn the guest would be dead).
 */
static void link_delete(struct __test_metadata *_metadata,
			FIXTURE_DATA(nfs) *self)
{
	ASSERT_EQ(0, RUN(self, 60, "flock -w 60 " XR_LOCK " rdma link delete %s",
			 self->link.ibdev));
	ASSERT_TRUE(WAIT_UNTIL(!ibdev_exists(self->link.ibdev), 10000));
	ASSERT_EQ(0, klog_warnings(self))
		TH_LOG("kernel warnings:\n%s", self->out);
}

/* xiw's counters: no MPA Reject sent, at least one connection made. */
static void expect_connected(struct __test_metadata *_metadata,
			     FIXTURE_DATA(nfs) *self)
{
	if (xr_is_siw())
		return;
	EXPECT_EQ(self->rejects, counter(self, "mpa_rejects_sent"));
	EXPECT_LT(self->established, counter(self, "conn_established"));
}

/*
 * IO_MB MiB of a pseudo-random pattern written through the mount, then
 * read back through a fresh mount (so not from the page cache) and from
 * the export itself, each compared byte for byte.
 */
static void write_read(struct __test_metadata *_metadata,
		       FIXTURE_DATA(nfs) *self, const char *vers)
{
	long long t0;

	ASSERT_EQ(0, xr_pattern_file(PAT, (size_t)IO_MB << 20));

	t0 = now_ms();
	ASSERT_EQ(0, nfs_mount(self, vers, "", "")) TH_LOG("NFSv%s mount", vers);
	xr_trace("mount: %lld ms", now_ms() - t0);
	t0 = now_ms();
	ASSERT_EQ(0, RUN(self, 300, "dd if=" PAT " of=" MNT "/f%s bs=1M "
			 "conv=fsync status=none", vers));
	xr_trace("write %d MiB: %lld ms", IO_MB, now_ms() - t0);
	ASSERT_EQ(0, nfs_umount(self));
	ASSERT_EQ(0, RUN(self, 60, "cmp " PAT " " EXPORT "/f%s", vers))
		TH_LOG("the export's copy differs");
	ASSERT_EQ(0, nfs_mount(self, vers, "", ""));
	t0 = now_ms();
	ASSERT_EQ(0, RUN(self, 300, "cmp " PAT " " MNT "/f%s", vers))
		TH_LOG("data read back differs");
	xr_trace("read %d MiB: %lld ms", IO_MB, now_ms() - t0);
	ASSERT_EQ(0, nfs_umount(self));
	RUN(self, 10, "rm -f " EXPORT "/f%s", vers);
	expect_connected(_metadata, self);
}

/*
 * What svcrdma relies on, without NFS: a listener's CONNECT_REQUEST
 * carries the initiator's IRD as initiator_depth (the most RDMA Reads
 * the listener may issue on this connection) and its ORD as
 * responder_resources, as with siw and on InfiniBand. The initiator
 * asks IRD 5, ORD 3; the listener rejects once it has looked.
 */
FIXTURE(cm) {
};

FIXTURE_SETUP(cm)
{
}

FIXTURE_TEARDOWN(cm)
{
}

TEST_F_TIMEOUT(cm, connect_request_ird_ord, 120)
{
	struct xr_opts o = { .buflen = 4096, .wr = 4, .sge = 1 };
	struct rdma_conn_param cp = { .responder_resources = 5,
				      .initiator_depth = 3 };
	struct rdma_cm_event *ev = NULL;
	struct rdma_cm_id *req;
	struct xr_side cli = {};
	struct xr_link link;
	struct xr_net net;
	int other = -1;

	ASSERT_EQ(0, xr_link_add(&link));
	ASSERT_EQ(0, xr_net_init(&net)) TH_LOG("%s", net.err);
	ASSERT_EQ(0, rdma_create_id(net.cch, &cli.id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(cli.id, NULL,
				       (struct sockaddr *)&net.addr, 2000));
	ASSERT_TRUE(xr_wait_cm(net.cch, cli.id, RDMA_CM_EVENT_ADDR_RESOLVED,
			       XR_WAIT_MS, &other)) TH_LOG("event %d", other);
	ASSERT_EQ(0, rdma_resolve_route(cli.id, 2000));
	ASSERT_TRUE(xr_wait_cm(net.cch, cli.id, RDMA_CM_EVENT_ROUTE_RESOLVED,
			       XR_WAIT_MS, &other)) TH_LOG("event %d", other);
	ASSERT_EQ(0, xr_side_init(&net, &cli, cli.id, &o)) TH_LOG("%s", net.err);
	ASSERT_EQ(0, rdma_connect(cli.id, &cp));
	ev = xr_get_event(net.sch, XR_WAIT_MS);
	ASSERT_NE(NULL, ev);
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, ev->event);
	EXPECT_EQ(5, ev->param.conn.initiator_depth);
	EXPECT_EQ(3, ev->param.conn.responder_resources);
	req = ev->id;
	EXPECT_EQ(0, rdma_reject(req, NULL, 0));
	rdma_ack_cm_event(ev);
	rdma_destroy_id(req);
	EXPECT_TRUE(xr_wait_cm(net.cch, cli.id, RDMA_CM_EVENT_REJECTED,
			       XR_WAIT_MS, &other)) TH_LOG("event %d", other);
	xr_side_fini(&cli);
	xr_net_fini(&net);
}

/* NFSv4.2: write, read back, unmount; the device then goes cleanly. */
TEST_F_TIMEOUT(nfs, v42_rw, 900)
{
	if (!have_v42())
		SKIP(return, "the kernel's NFS client has no NFSv4.2");
	write_read(_metadata, self, "4.2");
	expect_res_clean(_metadata, self);
	link_delete(_metadata, self);
}

/* The same with NFSv4.0 (no session, no backchannel over rdma). */
TEST_F_TIMEOUT(nfs, v40_rw, 900)
{
	write_read(_metadata, self, "4.0");
	expect_res_clean(_metadata, self);
	link_delete(_metadata, self);
}

/* The same with NFSv3 (MOUNT and NLM over TCP, NFS over rdma). */
TEST_F_TIMEOUT(nfs, v3_rw, 900)
{
	write_read(_metadata, self, "3");
	expect_res_clean(_metadata, self);
	link_delete(_metadata, self);
}

/*
 * Mounts that fail: a path the server does not export (the RDMA
 * connection is made, NFS says no), and a port nobody listens on (the
 * connection is refused). Then nothing is left and the device goes.
 */
TEST_F_TIMEOUT(nfs, failed_mount, 900)
{
	self->quiet = true;
	EXPECT_NE(0, nfs_mount(self, v4(), "/xiw_nfs_none", ""));
	EXPECT_NE(0, nfs_mount(self, "3", "/xiw_nfs_none", ""));
	expect_connected(_metadata, self);
	EXPECT_NE(0, nfs_mount(self, "3", NULL, ",retry=0"));
	self->quiet = false;
	expect_res_clean(_metadata, self);
	link_delete(_metadata, self);
}

/*
 * The device goes under a mount: rpcrdma's client and svcrdma's
 * connection get DEVICE_REMOVAL and let go. The mount is soft, so that
 * what NFS retries later fails instead of hanging; it is then unmounted
 * (forced: the server is unreachable without an RDMA device).
 */
TEST_F_TIMEOUT(nfs, delete_under_mount, 900)
{
	ASSERT_EQ(0, nfs_mount(self, v4(), "", ",soft,timeo=50,retrans=1"));
	ASSERT_EQ(0, RUN(self, 120, "dd if=/dev/urandom of=" MNT "/g bs=64k "
			 "count=16 conv=fsync status=none && cmp " MNT "/g "
			 EXPORT "/g"));
	expect_connected(_metadata, self);
	link_delete(_metadata, self);
	self->mounted = false;
	ASSERT_EQ(0, RUN(self, 120, "umount -f " MNT " || umount -l " MNT));
	ASSERT_EQ(0, klog_warnings(self))
		TH_LOG("kernel warnings:\n%s", self->out);
	RUN(self, 10, "rm -f " EXPORT "/g");
}

/* Once every test process is gone: no server, no mount, no link. */
static void __attribute__((destructor)) purge(void)
{
	server_down();
	xr_link_purge();
}

TEST_HARNESS_MAIN
