/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers for the data-path selftests (xiw_rdma.c, xiw_tools.c): an RDMA
 * link on a dummy netdev that carries 10.99.0.1, and connected RC QP pairs
 * made through librdmacm inside one process.
 *
 * The device type under test comes from XIW_TEST_LINK_TYPE: "xiw" (the
 * default) or "siw", the kernel's soft-iWARP built out of tree by
 * scripts/siw-build.sh, used to validate the tests themselves.
 *
 * Every wait has a deadline (XR_WAIT_MS), so a broken driver makes a test
 * fail instead of hang.
 */
#ifndef XIW_RDMA_UTIL_H
#define XIW_RDMA_UTIL_H

#include <endian.h>
#include <arpa/inet.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <rdma/rdma_cma.h>

#include "xiw_util.h"

#define XR_ADDR		"10.99.0.1"
/* A program may give itself longer (defining it before the include). */
#ifndef XR_WAIT_MS
#define XR_WAIT_MS	10000
#endif
/* Private data the client sends with its connect request (MPA-01). */
#define XR_MAGIC	0x5849574bU	/* "XIWK" */

static __attribute__((unused)) const char *xr_type(void)
{
	const char *t = getenv("XIW_TEST_LINK_TYPE");

	return t && *t ? t : "xiw";
}

static bool __attribute__((unused)) xr_is_siw(void)
{
	return !strcmp(xr_type(), "siw");
}

/* Timing notes on stderr when XIW_TEST_TRACE is set. */
#define xr_trace(fmt, ...) do {						\
	if (getenv("XIW_TEST_TRACE"))					\
		fprintf(stderr, "# trace %lld: " fmt "\n", now_ms() % 1000000, \
			##__VA_ARGS__);					\
} while (0)

/*
 * $env if set, else rel taken from the directory of this program
 * (build/selftests/): build/siw/siw.ko is "../siw/siw.ko".
 */
static void __attribute__((unused))
xr_beside_exe(char *p, size_t len, const char *env, const char *rel)
{
	const char *e = getenv(env);
	char exe[PATH_MAX - 64];
	ssize_t n;
	char *s;

	if (e && *e) {
		snprintf(p, len, "%s", e);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	s = strrchr(exe, '/');
	if (s)
		*s = '\0';
	snprintf(p, len, "%s/%s", exe, rel);
}

/* build/siw/siw.ko next to build/selftests/, or $XIW_SIW_KO. */
static void xr_siw_ko(char *p, size_t len)
{
	xr_beside_exe(p, len, "XIW_SIW_KO", "../siw/siw.ko");
}

/* Load the RDMA CM stack and the module of device type t ("xiw", "siw"). */
static int __attribute__((unused)) xr_load_type(const char *t)
{
	char ko[PATH_MAX + 16];
	char mod[64];

	snprintf(mod, sizeof(mod), "/sys/module/%s", t);
	if (path_exists(mod) && path_exists("/sys/module/rdma_ucm") &&
	    path_exists("/sys/module/ib_uverbs") && path_exists("/sys/module/dummy"))
		return 0;	/* modprobe is slow under emulation */
	if (sh("modprobe -a ib_uverbs iw_cm rdma_ucm dummy"))
		return -1;
	if (path_exists(mod))
		return 0;
	if (strcmp(t, "siw"))
		return sh("modprobe %s", t);
	if (sh("modprobe -a ib_core iw_cm libcrc32c"))
		return -1;
	xr_siw_ko(ko, sizeof(ko));
	return sh("insmod %s", ko);
}

/* Load the RDMA CM stack and the module of the device type under test. */
static int __attribute__((unused)) xr_load_modules(void)
{
	return xr_load_type(xr_type());
}

struct xr_link {
	char netdev[16];
	char ibdev[32];
};

/*
 * Links are created and deleted under this lock (two test programs may
 * run at once).
 *
 * A link is made by the first fixture set-up that needs it and kept for
 * the rest of the program; a destructor in the program's main process
 * deletes it at exit (xr_link_purge). Two reasons: a device can only go
 * away once every process using it has closed it (siw cannot disassociate
 * user contexts, and librdmacm keeps every device open until exit), and
 * under TCG with the root over 9p every exec costs 0.2-0.8 s: creating
 * and deleting the link around each test cost about 8 s per test.
 */
#define XR_LOCK "/run/xiw-selftest-link.lock"

/* Both programs use the same names: xr0 and <type>T0 (xiwT0, siwT0). */
static void xr_names(struct xr_link *l)
{
	snprintf(l->netdev, sizeof(l->netdev), "xr0");
	snprintf(l->ibdev, sizeof(l->ibdev), "%sT0", xr_type());
}

/* Delete the link now (under the lock), whatever state it is in. */
static void __attribute__((unused)) xr_link_purge(void)
{
	struct xr_link l;

	xr_names(&l);
	if (!ibdev_exists(l.ibdev) && !path_exists("/sys/class/net/xr0"))
		return;
	sh("flock -w 60 " XR_LOCK " sh -c 'rdma link delete %s; ip link del %s;"
	   " ip link set lo mtu 65536' >/dev/null 2>&1", l.ibdev, l.netdev);
}

/*
 * One port counter of ibdev (counters.rst); -1 if unreadable. Waits 25 ms
 * first: the core refreshes hw_counters at most every 10 ms.
 */
static long long __attribute__((unused))
xr_port_counter(const char *ibdev, const char *name)
{
	char p[256], buf[64];

	usleep(25000);
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibdev, name);
	if (read_text(p, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

static bool xr_netdev_ok(const char *netdev)
{
	char p[128], buf[32];

	snprintf(p, sizeof(p), "/sys/class/net/%s/operstate", netdev);
	return read_text(p, buf, sizeof(buf)) > 0 && strcmp(buf, "down");
}

/*
 * A dummy netdev xr0 with 10.99.0.1/24, up, and an RDMA link <type>T0 on
 * it: kept when it is there already, else made afresh after removing any
 * remains.
 */
static int __attribute__((unused))
xr_link_make(struct xr_link *l, const char *type, const char *netdev,
	     const char *ibdev, const char *addr)
{
	snprintf(l->netdev, sizeof(l->netdev), "%s", netdev);
	snprintf(l->ibdev, sizeof(l->ibdev), "%s", ibdev);
	if (xr_load_type(type))
		return -1;
	if (ibdev_exists(l->ibdev) && xr_netdev_ok(l->netdev))
		return 0;
	if (sh("flock -w 60 " XR_LOCK " sh -c '"
	       "rdma link delete %s >/dev/null 2>&1; ip link del %s >/dev/null 2>&1; "
	       "ip link add %s type dummy && ip addr add %s/24 dev %s && "
	       "ip link set %s up && rdma link add %s type %s netdev %s'",
	       l->ibdev, l->netdev, l->netdev, addr, l->netdev, l->netdev,
	       l->ibdev, type, l->netdev))
		return -1;
	return WAIT_UNTIL(ibdev_exists(l->ibdev), 5000) ? 0 : -1;
}

static int __attribute__((unused)) xr_link_add(struct xr_link *l)
{
	struct xr_link names;

	xr_names(&names);
	return xr_link_make(l, xr_type(), names.netdev, names.ibdev, XR_ADDR);
}

/* The kernel log's last 40 lines, on stderr as "# dmesg: " lines. */
static void __attribute__((unused)) show_dmesg(void)
{
	fflush(NULL);
	sh("dmesg | tail -n 40 | sed 's/^/# dmesg: /' >&2");
}

/*
 * Run a command under timeout(1) with its output in (self)->out; on
 * failure print that output and the kernel log's end. Its exit status.
 */
#define RUN(self, secs, fmt, ...) ({					\
	int __rc = xsh((self)->out, sizeof((self)->out),		\
		       "timeout -k 5 %d " fmt, secs, ##__VA_ARGS__);	\
	if (__rc) {							\
		fprintf(stderr, "# exit %d: " fmt "\n# output:\n%s\n",	\
			__rc, ##__VA_ARGS__, (self)->out);		\
		show_dmesg();						\
	}								\
	__rc;								\
})

/*
 * Put "<prog>: begin <name> <pid>.<seq>" in the kernel log, into mark, to
 * find a test's part of the log later (xr_klog_since); mark is left
 * empty if the log cannot be written.
 */
static void __attribute__((unused))
xr_klog_mark(char *mark, size_t len, const char *prog, const char *name)
{
	static int seq;
	int fd = open("/dev/kmsg", O_WRONLY);

	snprintf(mark, len, "%s: begin %s %d.%d", prog, name, getpid(), ++seq);
	if (fd >= 0) {
		if (write(fd, mark, strlen(mark)) < 0)
			mark[0] = '\0';
		close(fd);
	}
}

/*
 * Kernel log lines since mark that match the extended regex re (at most
 * 20, as "# " lines, into out): -1 if there are any, else 0 (also when
 * there is no mark).
 */
static int __attribute__((unused))
xr_klog_since(char *out, size_t len, const char *mark, const char *re)
{
	int rc;

	if (!mark[0])
		return 0;
	rc = xsh(out, len, "dmesg | sed -n '/%s$/,$p' | sed 1d | "
		 "grep -E '%s' | head -n 20 | sed 's/^/# /'", mark, re);
	return rc == 0 && out[0] ? -1 : 0;
}

/*
 * The line of "rdma res show" for ibdev ("<dev>: pd 0 cq 0 qp 0 cm_id 0
 * mr 0 ctx 0 srq 0") into line; true when every count in it is 0 except
 * that of the resource named except (NULL: none).
 */
static bool __attribute__((unused))
xr_res_zero_but(const char *ibdev, const char *except, char *line,
		size_t len)
{
	char out[8192], *s, *e, *name;

	if (xsh(out, sizeof(out), "rdma res show") != 0)
		return false;
	s = strstr(out, ibdev);
	if (!s)
		return false;
	e = strchr(s, '\n');
	if (e)
		*e = '\0';
	snprintf(line, len, "%s", s);
	for (s += strlen(ibdev) + 1; (name = strtok_r(s, " ", &e)); s = NULL) {
		s = strtok_r(NULL, " ", &e);
		if (!s)
			break;
		if (strtol(s, NULL, 10) && (!except || strcmp(name, except)))
			return false;
	}
	return true;
}

/* Set lo's MTU (the TCP streams between local addresses run over lo). */
static void __attribute__((unused)) xr_lo_mtu(int mtu)
{
	char buf[32];

	if (read_text("/sys/class/net/lo/mtu", buf, sizeof(buf)) > 0 &&
	    atoi(buf) == mtu)
		return;
	sh("ip link set lo mtu %d", mtu);
}

/* Pinning is limited by RLIMIT_MEMLOCK (siw checks it even for root). */
static void __attribute__((unused)) xr_unlimit_memlock(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	setrlimit(RLIMIT_MEMLOCK, &r);
}

/* The next word of xr_fill()'s xorshift64* sequence. */
static uint64_t __attribute__((unused)) xr_word(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return htole64(*x * 0x2545f4914f6cdd1dULL);
}

/*
 * Deterministic pseudo-random bytes (xorshift64*) from a seed: each word
 * of the sequence gives eight bytes, lowest first. Whole words are
 * stored at once: under TCG a byte loop costs seconds per 64 MiB.
 */
static void __attribute__((unused))
xr_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1, w;
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		w = xr_word(&x);
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		w = xr_word(&x);
		memcpy(p + i, &w, len - i);
	}
}

/* A file of len bytes of xr_fill()'s pattern (seed: our pid); 0 or -1. */
static int __attribute__((unused)) xr_pattern_file(const char *path,
						   size_t len)
{
	void *buf = malloc(len);
	FILE *f;
	int rc = -1;

	if (!buf)
		return -1;
	xr_fill(buf, len, getpid());
	f = fopen(path, "w");
	if (f) {
		rc = fwrite(buf, len, 1, f) == 1 ? 0 : -1;
		if (fclose(f))
			rc = -1;
	}
	free(buf);
	return rc;
}

/* Offset of the first byte that differs from xr_fill(seed), or -1. */
static long __attribute__((unused))
xr_check(const void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1, w;
	const uint8_t *p = buf;
	size_t i, k;

	for (i = 0; i < len; i += 8) {
		size_t n = len - i < 8 ? len - i : 8;

		w = xr_word(&x);
		if (!memcmp(p + i, &w, n))
			continue;
		for (k = 0; p[i + k] == ((const uint8_t *)&w)[k]; k++)
			;
		return (long)(i + k);
	}
	return -1;
}

/* One end of a connection: its cm id and verbs objects, one MR. */
struct xr_side {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;	/* with xr_opts.srq */
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	bool established;
	bool pd_shared;		/* pd is xr_opts.srv_pd: not ours to free */
};

struct xr_pair {
	struct xr_side srv, cli;
	struct sockaddr_in to;	/* the client connects here, when set */
};

/* Queue sizes and the buffer each side registers. */
struct xr_opts {
	size_t buflen;
	int wr;		/* send and receive queue depth; CQ is 2*wr+1 */
	int sge;
	int rd_atom;	/* ORD and IRD asked for */
	bool srq;	/* receives through an SRQ of wr entries */
	/* Each side's CQ made with ibv_create_cq_ex() (IBV_WC_STANDARD_FLAGS). */
	bool cq_ex;
	/*
	 * Each side's QP made with rdma_create_qp_ex(), for ibv_wr_*(): Send,
	 * Send with Invalidate, RDMA Write (with Immediate), Read and the
	 * two atomics, with inline_data bytes of inline data.
	 */
	bool qp_ex;
	uint32_t inline_data;
	/* The client's QP is given these remote rights before it connects. */
	bool cli_access_set;
	int cli_access;
	/*
	 * Receives posted on each QP before it connects (wr_id 0, 1, ...):
	 * prepost of prepost_len bytes each, from buf offset prepost_off.
	 */
	int prepost;
	size_t prepost_off, prepost_len;
	/* The servers' QPs in this PD, which stays its owner's to free. */
	struct ibv_pd *srv_pd;
};

/* The listener and the two event channels, shared by all pairs. */
struct xr_net {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listen;
	struct sockaddr_in addr;
	struct sockaddr_in src;	/* clients bind here first, when set */
	char err[256];
};

static int __attribute__((format(printf, 2, 3)))
xr_fail(struct xr_net *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(n->err, sizeof(n->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void xr_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * Channels and a listener on laddr, on a port the kernel picks. rdma_cm
 * picks it from its own port space, which TCP does not share: another
 * program's TCP listener (NFS's mountd and statd take ports in the same
 * range) may hold it, and an iWARP device then cannot listen there. Like
 * any application, take another port then, a few times.
 */
static int __attribute__((unused))
xr_net_init_at(struct xr_net *n, const char *laddr)
{
	int tries;

	memset(n, 0, sizeof(*n));
	n->sch = rdma_create_event_channel();
	n->cch = rdma_create_event_channel();
	if (!n->sch || !n->cch)
		return xr_fail(n, "rdma_create_event_channel: %s", strerror(errno));
	xr_nonblock(n->sch->fd);
	xr_nonblock(n->cch->fd);
	for (tries = 1; ; tries++) {
		if (rdma_create_id(n->sch, &n->listen, NULL, RDMA_PS_TCP))
			return xr_fail(n, "rdma_create_id: %s", strerror(errno));
		n->addr.sin_family = AF_INET;
		n->addr.sin_port = 0;
		inet_pton(AF_INET, laddr, &n->addr.sin_addr);
		if (rdma_bind_addr(n->listen, (struct sockaddr *)&n->addr))
			return xr_fail(n, "rdma_bind_addr %s: %s", laddr,
				       strerror(errno));
		if (!rdma_listen(n->listen, 1024))
			break;
		if (errno != EADDRINUSE || tries == 5)
			return xr_fail(n, "rdma_listen: %s (try %d)",
				       strerror(errno), tries);
		rdma_destroy_id(n->listen);
		n->listen = NULL;
	}
	n->addr.sin_port = rdma_get_src_port(n->listen);
	return 0;
}

/* Channels and a listener on 10.99.0.1, on a port the kernel picks. */
static int __attribute__((unused)) xr_net_init(struct xr_net *n)
{
	return xr_net_init_at(n, XR_ADDR);
}

/*
 * Clients made by xr_connect() from now on resolve from the local address
 * saddr (any port): rdma_cm then uses the RDMA device of the netdev that
 * holds saddr, whichever device the listener is on.
 */
static void __attribute__((unused))
xr_net_set_src(struct xr_net *n, const char *saddr)
{
	memset(&n->src, 0, sizeof(n->src));
	n->src.sin_family = AF_INET;
	inet_pton(AF_INET, saddr, &n->src.sin_addr);
}

static void __attribute__((unused)) xr_net_fini(struct xr_net *n)
{
	if (n->listen)
		rdma_destroy_id(n->listen);
	if (n->sch)
		rdma_destroy_event_channel(n->sch);
	if (n->cch)
		rdma_destroy_event_channel(n->cch);
	memset(n, 0, sizeof(*n));
}

/* Allocate and register len bytes (at least a page) with all access. */
static __attribute__((unused)) struct ibv_mr *
xr_reg(struct ibv_pd *pd, size_t len, uint8_t **buf)
{
	size_t sz = (len + 4095) & ~(size_t)4095;
	struct ibv_mr *mr;

	if (!sz)
		sz = 4096;
	*buf = aligned_alloc(4096, sz);
	if (!*buf)
		return NULL;
	memset(*buf, 0, sz);
	mr = ibv_reg_mr(pd, *buf, sz, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		free(*buf);
		*buf = NULL;
	}
	return mr;
}

static int xr_recv(struct xr_side *s, uint64_t wr_id, size_t off, size_t len);

static int xr_side_init(struct xr_net *n, struct xr_side *s,
			struct rdma_cm_id *id, const struct xr_opts *o)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = o->wr, .max_recv_wr = o->wr,
			 .max_send_sge = o->sge, .max_recv_sge = o->sge },
	};
	size_t i;

	s->id = id;
	if (!s->pd_shared)
		s->pd = ibv_alloc_pd(id->verbs);
	if (!s->pd)
		return xr_fail(n, "ibv_alloc_pd: %s", strerror(errno));
	s->cc = ibv_create_comp_channel(id->verbs);
	if (!s->cc)
		return xr_fail(n, "ibv_create_comp_channel: %s", strerror(errno));
	xr_nonblock(s->cc->fd);
	if (o->cq_ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 2 * o->wr + 1, .cq_context = s, .channel = s->cc,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
		};
		struct ibv_cq_ex *cx = ibv_create_cq_ex(id->verbs, &ca);

		s->cq = cx ? ibv_cq_ex_to_cq(cx) : NULL;
	} else {
		s->cq = ibv_create_cq(id->verbs, 2 * o->wr + 1, s, s->cc, 0);
	}
	if (!s->cq)
		return xr_fail(n, "ibv_create_cq%s: %s", o->cq_ex ? "_ex" : "",
			       strerror(errno));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	if (o->srq) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = o->wr, .max_sge = o->sge },
		};

		s->srq = ibv_create_srq(s->pd, &sa);
		if (!s->srq)
			return xr_fail(n, "ibv_create_srq: %s", strerror(errno));
		qa.srq = s->srq;
	}
	qa.cap.max_inline_data = o->inline_data;
	if (o->qp_ex) {
		struct ibv_qp_init_attr_ex qx = {
			.send_cq = qa.send_cq, .recv_cq = qa.recv_cq,
			.srq = qa.srq, .cap = qa.cap, .qp_type = IBV_QPT_RC,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = s->pd,
			.send_ops_flags = IBV_QP_EX_WITH_SEND |
					  IBV_QP_EX_WITH_SEND_WITH_INV |
					  IBV_QP_EX_WITH_RDMA_WRITE |
					  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
					  IBV_QP_EX_WITH_RDMA_READ |
					  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
					  IBV_QP_EX_WITH_LOCAL_INV |
					  IBV_QP_EX_WITH_BIND_MW,
		};

		if (rdma_create_qp_ex(id, &qx))
			return xr_fail(n, "rdma_create_qp_ex: %s",
				       strerror(errno));
	} else if (rdma_create_qp(id, s->pd, &qa)) {
		return xr_fail(n, "rdma_create_qp: %s", strerror(errno));
	}
	s->qp = id->qp;
	s->len = o->buflen;
	s->mr = xr_reg(s->pd, o->buflen, &s->buf);
	if (!s->mr)
		return xr_fail(n, "ibv_reg_mr %zu bytes: %s", o->buflen,
			       strerror(errno));
	for (i = 0; i < (size_t)o->prepost; i++)
		if (xr_recv(s, (uint64_t)i, o->prepost_off + i * o->prepost_len,
			    o->prepost_len))
			return xr_fail(n, "ibv_post_recv: %s", strerror(errno));
	return 0;
}

static void xr_side_fini(struct xr_side *s)
{
	if (s->qp)
		rdma_destroy_qp(s->id);
	if (s->id)
		rdma_destroy_id(s->id);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->cc)
		ibv_destroy_comp_channel(s->cc);
	if (s->pd && !s->pd_shared)
		ibv_dealloc_pd(s->pd);
	memset(s, 0, sizeof(*s));
}

static void __attribute__((unused)) xr_pairs_fini(struct xr_pair *p, int count)
{
	int i;

	for (i = 0; i < count; i++) {
		xr_side_fini(&p[i].cli);
		xr_side_fini(&p[i].srv);
	}
}

/* Read one CM event from ch within ms; NULL on timeout. */
static struct rdma_cm_event *
xr_get_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pf, 1, ms) <= 0)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/*
 * Wait for a CM event of the given type on ch, for the given id (NULL:
 * any). Other events are acknowledged and, when other is not NULL,
 * the last one is recorded there. True when it arrived in time.
 */
static bool __attribute__((unused))
xr_wait_cm(struct rdma_event_channel *ch, struct rdma_cm_id *id,
	   enum rdma_cm_event_type type, int ms, int *other)
{
	long long end = now_ms() + ms;
	struct rdma_cm_event *ev;
	bool hit;

	while (now_ms() < end) {
		ev = xr_get_event(ch, (int)(end - now_ms()));
		if (!ev)
			continue;
		hit = ev->event == type && (!id || ev->id == id);
		if (!hit && other)
			*other = ev->event;
		rdma_ack_cm_event(ev);
		if (hit)
			return true;
	}
	return false;
}

static struct xr_pair *xr_find(struct xr_pair *p, int count,
			       struct rdma_cm_id *id, bool srv)
{
	int i;

	for (i = 0; i < count; i++)
		if ((srv ? p[i].srv.id : p[i].cli.id) == id)
			return &p[i];
	return NULL;
}

static void xr_conn_param(struct rdma_conn_param *cp,
			  const struct xr_opts *o, const uint32_t *pdata)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = o->rd_atom;
	cp->initiator_depth = o->rd_atom;
	cp->private_data = pdata;
	cp->private_data_len = pdata ? 2 * sizeof(*pdata) : 0;
}

/* A client event during connection set-up; 0, or -1 with n->err set. */
static int xr_cli_event(struct xr_net *n, struct xr_pair *p, int count,
			const struct xr_opts *o, struct rdma_cm_event *ev)
{
	struct xr_pair *x = xr_find(p, count, ev->id, false);
	struct rdma_conn_param cp;
	uint32_t pd[2];

	if (!x && ev->event == RDMA_CM_EVENT_DISCONNECTED)
		return 0;	/* late news of an earlier connection */
	if (!x)
		return xr_fail(n, "client event %s for an unknown id",
			       rdma_event_str(ev->event));
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(ev->id, 2000))
			return xr_fail(n, "rdma_resolve_route: %s", strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (xr_side_init(n, &x->cli, ev->id, o))
			return -1;
		if (o->cli_access_set) {
			struct ibv_qp_attr qa = {
				.qp_access_flags = (unsigned int)o->cli_access,
			};

			if (ibv_modify_qp(x->cli.qp, &qa, IBV_QP_ACCESS_FLAGS))
				return xr_fail(n, "ibv_modify_qp access %#x: %s",
					       o->cli_access, strerror(errno));
		}
		pd[0] = htonl(XR_MAGIC);
		pd[1] = htonl((uint32_t)(x - p));
		xr_conn_param(&cp, o, pd);
		if (rdma_connect(ev->id, &cp))
			return xr_fail(n, "rdma_connect: %s", strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		x->cli.established = true;
		return 0;
	default:
		return xr_fail(n, "client %d: %s (status %d) during connect",
			       (int)(x - p), rdma_event_str(ev->event),
			       ev->status);
	}
}

/*
 * A server event during set-up. A connect request is matched to its pair
 * by the index in its private data, or else to the first pair without a
 * server side.
 */
static int xr_srv_event(struct xr_net *n, struct xr_pair *p, int count,
			const struct xr_opts *o, struct rdma_cm_event *ev)
{
	const uint32_t *pd = ev->param.conn.private_data;
	struct rdma_conn_param cp;
	struct xr_pair *x = NULL;
	uint32_t i;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (pd && ev->param.conn.private_data_len >= 8 &&
		    ntohl(pd[0]) == XR_MAGIC && ntohl(pd[1]) < (uint32_t)count)
			x = &p[ntohl(pd[1])];
		for (i = 0; !x && i < (uint32_t)count; i++)
			if (!p[i].srv.id)
				x = &p[i];
		if (!x || x->srv.id) {
			rdma_reject(ev->id, NULL, 0);
			return xr_fail(n, "unexpected connect request");
		}
		if (o->srv_pd) {
			x->srv.pd = o->srv_pd;
			x->srv.pd_shared = true;
		}
		if (xr_side_init(n, &x->srv, ev->id, o)) {
			rdma_reject(ev->id, NULL, 0);
			return -1;
		}
		xr_conn_param(&cp, o, NULL);
		if (rdma_accept(ev->id, &cp))
			return xr_fail(n, "rdma_accept: %s", strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		x = xr_find(p, count, ev->id, true);
		if (!x)
			return xr_fail(n, "server ESTABLISHED for an unknown id");
		x->srv.established = true;
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!xr_find(p, count, ev->id, true))
			return 0;	/* an earlier connection */
		/* fall through */
	default:
		return xr_fail(n, "server: %s (status %d) during connect",
			       rdma_event_str(ev->event), ev->status);
	}
}

static int xr_count_established(struct xr_pair *p, int count)
{
	int i, k = 0;

	for (i = 0; i < count; i++)
		k += p[i].cli.established + p[i].srv.established;
	return k;
}

/*
 * Connect count client/server pairs at once through the listener of n,
 * making here the server ends (srv), the client ends (cli) or both: the
 * other ends may be another process's. A client connects to its pair's
 * "to" when that is set, else to the listener of n. On failure n->err
 * says why; the caller frees with xr_pairs_fini().
 */
static int __attribute__((unused))
xr_connect_ends(struct xr_net *n, struct xr_pair *p, int count,
		const struct xr_opts *o, bool srv, bool cli)
{
	long long end = now_ms() + XR_WAIT_MS + 100LL * count;
	struct rdma_event_channel *ch[2] = { n->cch, n->sch };
	struct pollfd pf[2] = {
		{ .fd = cli ? n->cch->fd : -1, .events = POLLIN },
		{ .fd = srv ? n->sch->fd : -1, .events = POLLIN },
	};
	int i, k, rc, want = (srv + cli) * count;
	struct rdma_cm_event *ev;

	for (i = 0; cli && i < count; i++) {
		if (rdma_create_id(n->cch, &p[i].cli.id, NULL, RDMA_PS_TCP))
			return xr_fail(n, "rdma_create_id: %s", strerror(errno));
		if (rdma_resolve_addr(p[i].cli.id, n->src.sin_family ?
				      (struct sockaddr *)&n->src : NULL,
				      p[i].to.sin_family ?
				      (struct sockaddr *)&p[i].to :
				      (struct sockaddr *)&n->addr, 2000))
			return xr_fail(n, "rdma_resolve_addr: %s", strerror(errno));
	}
	while (xr_count_established(p, count) < want) {
		if (now_ms() >= end)
			return xr_fail(n, "%d of %d ends established in %lld ms",
				       xr_count_established(p, count), want,
				       XR_WAIT_MS + 100LL * count);
		if (poll(pf, 2, (int)(end - now_ms())) <= 0)
			continue;
		for (k = 0; k < 2; k++) {
			if (!(pf[k].revents & POLLIN) ||
			    rdma_get_cm_event(ch[k], &ev))
				continue;
			rc = k ? xr_srv_event(n, p, count, o, ev)
			       : xr_cli_event(n, p, count, o, ev);
			rdma_ack_cm_event(ev);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Both ends of count pairs here (see xr_connect_ends()). */
static int __attribute__((unused))
xr_connect(struct xr_net *n, struct xr_pair *p, int count,
	   const struct xr_opts *o)
{
	return xr_connect_ends(n, p, count, o, true, true);
}

/* Poll cq until n completions arrived or ms passed; returns how many. */
static int __attribute__((unused))
xr_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	long long end = now_ms() + ms;
	int got = 0, r, idle = 0;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (r) {
			idle = 0;
			continue;
		}
		if (now_ms() >= end)
			break;
		if (++idle > 64)
			usleep(200);
		else
			sched_yield();
	}
	return got;
}

/* Wait for a completion-channel event on s's CQ; true when it came. */
static bool __attribute__((unused)) xr_wait_cq_event(struct xr_side *s, int ms)
{
	struct pollfd pf = { .fd = s->cc->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pf, 1, ms) <= 0)
		return false;
	if (ibv_get_cq_event(s->cc, &cq, &ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == s->cq;
}

static struct ibv_sge xr_sge(struct xr_side *s, size_t off, size_t len)
{
	struct ibv_sge g = {
		.addr = (uintptr_t)(s->buf + off),
		.length = (uint32_t)len,
		.lkey = s->mr->lkey,
	};

	return g;
}

/* Post a receive of n SGEs (n may be 0). */
static int __attribute__((unused))
xr_recv_sgl(struct xr_side *s, uint64_t wr_id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = n,
	}, *bad = NULL;

	if (s->srq)
		return ibv_post_srq_recv(s->srq, &wr, &bad);
	return ibv_post_recv(s->qp, &wr, &bad);
}

/* Post a receive into s->buf[off, off + len) (one SGE, even for 0). */
static int __attribute__((unused))
xr_recv(struct xr_side *s, uint64_t wr_id, size_t off, size_t len)
{
	struct ibv_sge g = xr_sge(s, off, len);

	return xr_recv_sgl(s, wr_id, &g, 1);
}

static int __attribute__((unused))
xr_send_sgl(struct xr_side *s, enum ibv_wr_opcode op, uint64_t wr_id,
	    struct ibv_sge *sg, int n, unsigned int flags,
	    uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = n,
		.opcode = op, .send_flags = flags,
	}, *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

/*
 * Post a signalled send, write or read of s->buf[off, off + len) (the
 * local source or sink); for writes and reads the remote side is
 * peer->buf[roff...] through peer's MR.
 */
static int __attribute__((unused))
xr_post(struct xr_side *s, enum ibv_wr_opcode op, uint64_t wr_id,
	size_t off, size_t len, unsigned int flags,
	struct xr_side *peer, size_t roff)
{
	struct ibv_sge g = xr_sge(s, off, len);

	return xr_send_sgl(s, op, wr_id, &g, len ? 1 : 0,
			   flags | IBV_SEND_SIGNALED,
			   peer ? (uintptr_t)(peer->buf + roff) : 0,
			   peer ? peer->mr->rkey : 0);
}

/*
 * Post a signalled atomic (IBV_WR_ATOMIC_FETCH_AND_ADD or _CMP_AND_SWP) on
 * the 64-bit word at raddr of rkey; the old value lands at s->buf + off.
 */
static int __attribute__((unused))
xr_atomic(struct xr_side *s, enum ibv_wr_opcode op, uint64_t wr_id,
	  size_t off, uint32_t rkey, uint64_t raddr, uint64_t compare_add,
	  uint64_t swap)
{
	struct ibv_sge g = xr_sge(s, off, sizeof(uint64_t));
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &g, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(s->qp, &wr, &bad);
}

static __attribute__((unused)) const char *xr_wc_str(const struct ibv_wc *wc)
{
	static char s[160];

	snprintf(s, sizeof(s), "wr_id %#llx status %s opcode %d byte_len %u",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->opcode, wc->byte_len);
	return s;
}

#endif /* XIW_RDMA_UTIL_H */
