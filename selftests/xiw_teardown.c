// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Teardown with connections in their first moments: a passive connection
 * whose peer never sends the MPA Request, held across the listener's
 * exit, "rdma link delete", rmmod and the exit of the network namespace
 * its listener lives in; and resets right after the TCP handshake, in a
 * loop, at the passive and at the active end.
 *
 * The listener is an rdma_cm id in a child process (killing it is how a
 * listener goes in real life); the half-open peer is a plain TCP socket
 * in this process. xiw takes a connection off TCP's accept queue as soon
 * as it is there, so "accepted" is read off the listening socket's
 * Recv-Q (ss). The VM runs with panic_on_warn: the use-after-free,
 * workqueue and unloaded-module faults these paths had before would end
 * the run; each test also asserts what a peer sees.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>

#include "kselftest_harness.h"
#include "xiw_util.h"

#define TD_NETDEV	"xtd0"
#define TD_IBDEV	"xiwTD0"
#define TD_ADDR		"10.98.0.1"
#define TD_NS		"xtdns"
#define TD_NS_IBDEV	"xiwTN0"
#define TD_NS_ADDR	"10.97.0.1"	/* xtv1, in TD_NS */
#define TD_HOST_ADDR	"10.97.0.2"	/* xtv0, here */
/* Short, so that a timer left behind fires while the test still runs. */
#define TD_MPA_TIMEOUT_MS	1500
#define TD_PARAM "/sys/module/xiw/parameters/mpa_timeout_ms"

/* A listener in a child process; its port comes back through a pipe. */
struct td_listener {
	pid_t pid;
	int port;
};

static void td_listen_child(int wfd, const char *addr, const char *ns)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	char path[64];
	int port = -1, fd;

	if (ns) {
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		fd = open(path, O_RDONLY);
		if (fd < 0 || setns(fd, CLONE_NEWNET))
			goto out;
		close(fd);
	}
	inet_pton(AF_INET, addr, &sa.sin_addr);
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(id, (struct sockaddr *)&sa) || rdma_listen(id, 8))
		goto out;
	port = ntohs(rdma_get_src_port(id));
out:
	if (write(wfd, &port, sizeof(port)) != sizeof(port))
		_exit(1);
	for (;;)
		pause();
}

static int td_listen(struct td_listener *l, const char *addr, const char *ns)
{
	int p[2];

	l->pid = -1;
	l->port = -1;
	if (pipe(p))
		return -1;
	l->pid = fork();
	if (l->pid < 0)
		return -1;
	if (!l->pid) {
		close(p[0]);
		td_listen_child(p[1], addr, ns);
	}
	close(p[1]);
	if (read(p[0], &l->port, sizeof(l->port)) != sizeof(l->port))
		l->port = -1;
	close(p[0]);
	return l->port > 0 ? 0 : -1;
}

/* kill -9, as a listener's process dies; reaped. */
static void td_kill(struct td_listener *l)
{
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
	}
	l->pid = -1;
}

/* A TCP connection to addr:port that sends nothing; -1 on failure. */
static int td_connect(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &sa.sin_addr);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The Recv-Q of the TCP listener on port (in namespace ns, or here):
 * connections in its accept queue; -1 if there is no such listener.
 */
static int td_accept_queue(const char *ns, int port)
{
	char out[512];
	int q;

	if (xsh(out, sizeof(out), "%s%s ss -Hltn 'sport = :%d'",
		ns ? "ip netns exec " : "", ns ? ns : "", port))
		return -1;
	if (sscanf(out, "LISTEN %d", &q) != 1)
		return -1;
	return q;
}

/*
 * Milliseconds until fd's connection is ended by its peer (a reset or a
 * FIN), or -1 if it is still up after ms.
 */
static long long td_wait_end(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLRDHUP };
	long long t0 = now_ms();
	char c;

	if (poll(&pf, 1, ms) <= 0)
		return -1;
	if (recv(fd, &c, 1, MSG_DONTWAIT) > 0)
		return -1;	/* data: not what a half-open peer gets */
	return now_ms() - t0;
}

/* Close with a reset (SO_LINGER 0). */
static void td_reset(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

FIXTURE(td) {
	struct td_listener l;
	int fd;
	char out[4096];
};

FIXTURE_SETUP(td)
{
	self->l.pid = -1;
	self->fd = -1;
	ASSERT_EQ(0, sh("modprobe -a ib_uverbs iw_cm rdma_ucm dummy veth xiw"));
	ASSERT_EQ(0, sh("echo %d > " TD_PARAM, TD_MPA_TIMEOUT_MS));
	ASSERT_EQ(0, dummy_add(TD_NETDEV, "02:00:00:00:7d:01"));
	ASSERT_EQ(0, sh("ip addr add " TD_ADDR "/24 dev " TD_NETDEV " && "
			"rdma link add " TD_IBDEV " type xiw netdev " TD_NETDEV));
	ASSERT_TRUE(WAIT_UNTIL(ibdev_exists(TD_IBDEV), 5000));
}

FIXTURE_TEARDOWN(td)
{
	td_kill(&self->l);
	if (self->fd >= 0)
		close(self->fd);
	sh("rdma link delete " TD_IBDEV " 2>/dev/null; ip link del " TD_NETDEV
	   " 2>/dev/null; ip netns del " TD_NS " 2>/dev/null;"
	   " ip link del xtv0 2>/dev/null");
	/* Leave the module loaded, with its defaults, for what follows. */
	if (!xiw_loaded())
		sh("modprobe xiw");
	sh("echo 10000 > " TD_PARAM);
}

/*
 * A half-open connection to the listener of self->l, taken off the
 * accept queue by xiw (the handshake's last ACK is processed before we
 * look: it was sent before connect() returned, over a local link).
 */
static int td_half_open(FIXTURE_DATA(td) *self, const char *addr,
			const char *ns)
{
	self->fd = td_connect(addr, self->l.port);
	if (self->fd < 0)
		return -1;
	usleep(100 * 1000);
	return WAIT_UNTIL(td_accept_queue(ns, self->l.port) == 0, 5000) ? 0 : -1;
}

/* The listener's process dies: its half-open connection is reset. */
TEST_F_TIMEOUT(td, listener_exit_resets_half_open, 120)
{
	long long ms;

	ASSERT_EQ(0, td_listen(&self->l, TD_ADDR, NULL));
	ASSERT_EQ(0, td_half_open(self, TD_ADDR, NULL));
	td_kill(&self->l);
	ms = td_wait_end(self->fd, TD_MPA_TIMEOUT_MS / 2);
	ASSERT_LE(0, ms) TH_LOG("still up %d ms after the listener went (its MPA timer would end it at %d)",
				TD_MPA_TIMEOUT_MS / 2, TD_MPA_TIMEOUT_MS);
	/* Nothing is left to fire: the device and the module go cleanly. */
	ASSERT_EQ(0, sh("rdma link delete " TD_IBDEV));
	ASSERT_EQ(0, sh("rmmod xiw"));
	usleep(2 * TD_MPA_TIMEOUT_MS * 1000);
	close(self->fd);
	self->fd = -1;
	usleep(300 * 1000);
}

/* rdma link delete with the listener alive and a half-open connection. */
TEST_F_TIMEOUT(td, half_open_across_link_delete, 120)
{
	long long t0, ms;

	ASSERT_EQ(0, td_listen(&self->l, TD_ADDR, NULL));
	ASSERT_EQ(0, td_half_open(self, TD_ADDR, NULL));
	t0 = now_ms();
	ASSERT_EQ(0, sh("rdma link delete " TD_IBDEV));
	EXPECT_FALSE(ibdev_exists(TD_IBDEV));
	ms = td_wait_end(self->fd, TD_MPA_TIMEOUT_MS / 2);
	ASSERT_LE(0, ms) TH_LOG("the half-open connection outlived its device");
	TH_LOG("link delete and reset in %lld ms", now_ms() - t0);
	usleep(2 * TD_MPA_TIMEOUT_MS * 1000);
	close(self->fd);
	self->fd = -1;
	td_kill(&self->l);
	usleep(300 * 1000);
}

/* rmmod with the listener alive and a half-open connection. */
TEST_F_TIMEOUT(td, half_open_across_rmmod, 120)
{
	ASSERT_EQ(0, td_listen(&self->l, TD_ADDR, NULL));
	ASSERT_EQ(0, td_half_open(self, TD_ADDR, NULL));
	ASSERT_EQ(0, sh("rmmod xiw"));
	EXPECT_FALSE(xiw_loaded());
	ASSERT_LE(0, td_wait_end(self->fd, TD_MPA_TIMEOUT_MS / 2))
		TH_LOG("the half-open connection outlived the module");
	/* Its timer would fire now, its peer's FIN would arrive now. */
	usleep(2 * TD_MPA_TIMEOUT_MS * 1000);
	close(self->fd);
	self->fd = -1;
	td_kill(&self->l);
	usleep(300 * 1000);
}

/*
 * The listener lives in a network namespace, on one end of a veth pair;
 * the half-open peer is here, on the other. The listener's process dies,
 * then the namespace goes (and with it the veth and the device) while
 * the peer's socket stays open.
 */
TEST_F_TIMEOUT(td, half_open_across_netns_exit, 300)
{
	ASSERT_EQ(0, sh("ip netns add " TD_NS " && "
			"ip link add xtv0 type veth peer name xtv1 && "
			"ip link set xtv1 netns " TD_NS " && "
			"ip addr add " TD_HOST_ADDR "/24 dev xtv0 && ip link set xtv0 up && "
			"ip -n " TD_NS " link set lo up && "
			"ip -n " TD_NS " addr add " TD_NS_ADDR "/24 dev xtv1 && "
			"ip -n " TD_NS " link set xtv1 up && "
			"ip netns exec " TD_NS " rdma link add " TD_NS_IBDEV
			" type xiw netdev xtv1"));
	ASSERT_TRUE(WAIT_UNTIL(ibdev_exists(TD_NS_IBDEV), 5000));
	ASSERT_EQ(0, td_listen(&self->l, TD_NS_ADDR, TD_NS));
	ASSERT_EQ(0, td_half_open(self, TD_NS_ADDR, TD_NS));
	td_kill(&self->l);
	ASSERT_LE(0, td_wait_end(self->fd, TD_MPA_TIMEOUT_MS / 2))
		TH_LOG("the half-open connection outlived its listener");
	ASSERT_EQ(0, sh("ip netns del " TD_NS));
	/* Namespace exit is asynchronous: the device goes with its veth. */
	ASSERT_TRUE(WAIT_UNTIL(!ibdev_exists(TD_NS_IBDEV), 30000));
	usleep(2 * TD_MPA_TIMEOUT_MS * 1000);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, sh("rmmod xiw"));
}

/*
 * A flood of connections that send nothing holds no more of xiw than the
 * listen backlog (8 here): xiw takes 8 off TCP's accept queue to wait for
 * their MPA Requests, and leaves the rest there, where TCP's own limit
 * applies. When the first 8 time out, the waiting ones are taken.
 */
TEST_F_TIMEOUT(td, half_open_flood_held_to_backlog, 300)
{
	/*
	 * Long enough that no timer fires while the queue is looked at,
	 * even on the debug kernel on a slow emulated host (8 s was not).
	 */
	enum { BACKLOG = 8, MORE = 4, TMO_MS = 20000 };
	int fds[BACKLOG + MORE], i, q = -1;
	long long ms;

	for (i = 0; i < BACKLOG + MORE; i++)
		fds[i] = -1;
	ASSERT_EQ(0, sh("echo %d > " TD_PARAM, TMO_MS));
	ASSERT_EQ(0, td_listen(&self->l, TD_ADDR, NULL));
	for (i = 0; i < BACKLOG; i++) {
		fds[i] = td_connect(TD_ADDR, self->l.port);
		ASSERT_LE(0, fds[i]) TH_LOG("connect %d: %s", i, strerror(errno));
	}
	ASSERT_TRUE(WAIT_UNTIL(td_accept_queue(NULL, self->l.port) == 0, 5000))
		TH_LOG("xiw did not take the first %d", BACKLOG);
	for (; i < BACKLOG + MORE; i++) {
		fds[i] = td_connect(TD_ADDR, self->l.port);
		ASSERT_LE(0, fds[i]) TH_LOG("connect %d: %s", i, strerror(errno));
	}
	/* Well within the MPA timeout: the extra ones stay queued. */
	usleep(300 * 1000);
	q = td_accept_queue(NULL, self->l.port);
	ASSERT_EQ(MORE, q) TH_LOG("accept queue %d, want %d: xiw took more than the backlog",
				  q, MORE);
	/* The first ones end at their MPA timeout; then the others are taken. */
	ms = td_wait_end(fds[0], 3 * TMO_MS);
	ASSERT_LE(0, ms) TH_LOG("the first connection outlived its MPA timeout");
	ASSERT_TRUE(WAIT_UNTIL(td_accept_queue(NULL, self->l.port) == 0, TMO_MS))
		TH_LOG("the queued connections were not taken when room was made");
	ms = td_wait_end(fds[BACKLOG], 3 * TMO_MS);
	ASSERT_LE(0, ms) TH_LOG("a connection taken later outlived its MPA timeout");
	for (i = 0; i < BACKLOG + MORE; i++)
		close(fds[i]);
	ASSERT_EQ(0, sh("rdma link delete " TD_IBDEV));
}

/*
 * 200 peers reset their connection right after the handshake, some
 * after part of an MPA Request; the listener then still takes a
 * connection off its queue at once.
 */
TEST_F_TIMEOUT(td, passive_reset_after_handshake_loop, 300)
{
	static const char part[] = "MPA ID Req Frame";
	int i, fd;

	ASSERT_EQ(0, td_listen(&self->l, TD_ADDR, NULL));
	for (i = 0; i < 200; i++) {
		fd = td_connect(TD_ADDR, self->l.port);
		ASSERT_LE(0, fd) TH_LOG("connect %d: %s", i, strerror(errno));
		if (i % 2)
			ASSERT_EQ((ssize_t)(i % 16 + 1),
				  send(fd, part, i % 16 + 1, MSG_NOSIGNAL));
		if (i % 3 == 0)
			usleep(2000);
		td_reset(fd);
	}
	ASSERT_EQ(0, td_half_open(self, TD_ADDR, NULL));
	ASSERT_EQ(0, sh("rdma link delete " TD_IBDEV));
}

/* A TCP server that resets every connection it accepts, until stopped. */
struct td_rst_server {
	int lfd;
	int accepted;
	volatile bool stop;
	pthread_t th;
};

static void *td_rst_loop(void *arg)
{
	struct td_rst_server *s = arg;
	struct pollfd pf = { .fd = s->lfd, .events = POLLIN };
	int fd;

	while (!s->stop) {
		if (poll(&pf, 1, 100) <= 0)
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		s->accepted++;
		td_reset(fd);
	}
	return NULL;
}

/*
 * 100 active connects to a TCP server that resets each one right after
 * the handshake: each ends in one failure event, and the QP can go.
 */
TEST_F_TIMEOUT(td, active_reset_after_handshake_loop, 300)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct td_rst_server srv = { .lfd = -1 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	socklen_t sl = sizeof(sa);
	int i, type, failed = 0;
	struct pollfd pf;
	long long end;

	inet_pton(AF_INET, TD_ADDR, &sa.sin_addr);
	srv.lfd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, srv.lfd);
	ASSERT_EQ(0, bind(srv.lfd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, listen(srv.lfd, 64));
	ASSERT_EQ(0, getsockname(srv.lfd, (struct sockaddr *)&sa, &sl));
	ASSERT_EQ(0, pthread_create(&srv.th, NULL, td_rst_loop, &srv));
	ch = rdma_create_event_channel();
	ASSERT_NE(NULL, ch);
	pf.fd = ch->fd;
	pf.events = POLLIN;
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
		ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa,
					       2000));
		end = now_ms() + 10000;
		type = -1;
		while (now_ms() < end && poll(&pf, 1, 1000) >= 0) {
			if (!(pf.revents & POLLIN) || rdma_get_cm_event(ch, &ev))
				continue;
			type = ev->event;
			rdma_ack_cm_event(ev);
			if (type == RDMA_CM_EVENT_ADDR_RESOLVED) {
				ASSERT_EQ(0, rdma_resolve_route(id, 2000));
			} else if (type == RDMA_CM_EVENT_ROUTE_RESOLVED) {
				if (!pd) {
					pd = ibv_alloc_pd(id->verbs);
					cq = ibv_create_cq(id->verbs, 16, NULL,
							   NULL, 0);
					ASSERT_NE(NULL, pd);
					ASSERT_NE(NULL, cq);
					qa.send_cq = cq;
					qa.recv_cq = cq;
				}
				ASSERT_EQ(0, rdma_create_qp(id, pd, &qa));
				ASSERT_EQ(0, rdma_connect(id, &cp));
			} else {
				break;
			}
		}
		/* Refused or unreachable: never established. */
		ASSERT_NE(RDMA_CM_EVENT_ESTABLISHED, type);
		ASSERT_NE(-1, type) TH_LOG("connect %d: no event in 10 s", i);
		failed++;
		if (id->qp)
			rdma_destroy_qp(id);
		ASSERT_EQ(0, rdma_destroy_id(id));
	}
	srv.stop = true;
	pthread_join(srv.th, NULL);
	close(srv.lfd);
	TH_LOG("%d connects failed, the server reset %d", failed, srv.accepted);
	ASSERT_EQ(100, failed);
	ASSERT_LE(90, srv.accepted);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ch);
}

TEST_HARNESS_MAIN
