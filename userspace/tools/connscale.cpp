// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// xiw-connscale: what connections cost the kernel. It makes N rdma_cm
// connections on one RDMA device, both ends on this machine, spread over
// processes of P connections each (siw refuses more than a few dozen QPs
// in one process), has every connection move data at once (an RDMA Write
// and a Send of S bytes from its active end, all completing), leaves
// them idle, and prints the kernel's slab, vmalloc and free-memory
// deltas from /proc/meminfo over the connections' lifetime:
//
//   xiw-connscale -a ADDR [-n CONNS] [-p PER_PROCESS] [-s BYTES]
//                 [-d DEPTH] [-P PORT]
//
// The baseline is taken once every process has opened the device and
// made its PD, CQ, MR and listener, so the deltas are what the
// connections themselves cost: both QPs, both rdma_cm IDs, both TCP
// sockets and whatever the driver holds per connection. After teardown
// it prints the deltas again: what was not given back.
//
// Output, one "key value" line each (memory in KiB):
//   connections N, processes K, slab_kib, vmalloc_kib, free_kib,
//   slab_per_conn_kib, vmalloc_per_conn_kib, kmem_per_conn_kib (the sum
//   of the two), free_per_conn_kib, then after_slab_kib,
//   after_vmalloc_kib, then "cache NAME KIB" per connection for each
//   slab cache that grew (from /proc/slabinfo). Exit 0 only if every
//   connection was made, moved its data and was torn down.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

struct Options {
	std::string addr;
	unsigned conns = 1000;
	unsigned per_proc = 16;
	unsigned bytes = 4096;
	unsigned depth = 64;
	unsigned port = 20100;
};

constexpr int kEventTimeoutMs = 30000;

[[noreturn]] void die(const char *what, int err)
{
	std::fprintf(stderr, "xiw-connscale[%d]: %s: %s\n", getpid(), what,
		     std::strerror(err));
	std::exit(1);
}

// One connection: its active (client) and passive (server) end.
struct Conn {
	rdma_cm_id *client = nullptr;
	rdma_cm_id *server = nullptr;
	bool client_up = false;
	bool server_up = false;
	bool client_down = false;
	bool server_down = false;
};

class Child {
public:
	Child(const Options &opt, unsigned index, unsigned count)
		: opt_(opt), index_(index), conns_(count)
	{
	}

	// The part that is not counted: device, PD, CQ, MR, listener.
	void prepare()
	{
		ch_ = rdma_create_event_channel();
		if (!ch_)
			die("rdma_create_event_channel", errno);
		if (rdma_create_id(ch_, &listen_, nullptr, RDMA_PS_TCP))
			die("rdma_create_id (listener)", errno);
		sockaddr_in sin{};
		sin.sin_family = AF_INET;
		sin.sin_port = htons(static_cast<uint16_t>(opt_.port + index_));
		if (inet_pton(AF_INET, opt_.addr.c_str(), &sin.sin_addr) != 1)
			die("address", EINVAL);
		dst_ = sin;
		if (rdma_bind_addr(listen_, reinterpret_cast<sockaddr *>(&sin)))
			die("rdma_bind_addr", errno);
		if (rdma_listen(listen_, static_cast<int>(conns_.size())))
			die("rdma_listen", errno);
		if (!listen_->verbs)
			die("listener has no device", ENODEV);
		pd_ = ibv_alloc_pd(listen_->verbs);
		if (!pd_)
			die("ibv_alloc_pd", errno);
		const unsigned cqe = static_cast<unsigned>(conns_.size()) * 4 + 16;
		cq_ = ibv_create_cq(listen_->verbs, static_cast<int>(cqe), nullptr,
				    nullptr, 0);
		if (!cq_)
			die("ibv_create_cq", errno);
		// Per connection: the client's source, the server's Write
		// target and its receive buffer.
		buf_.assign(static_cast<size_t>(opt_.bytes) * 3 * conns_.size(),
			    0x5a);
		mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(),
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!mr_)
			die("ibv_reg_mr", errno);
	}

	void connect_all()
	{
		for (size_t i = 0; i < conns_.size(); i++)
			connect_one(i);
	}

	void move_data()
	{
		for (size_t i = 0; i < conns_.size(); i++)
			post_data(i);
		// Two signalled sends per client, one receive per server.
		poll_cq(conns_.size() * 3);
	}

	void teardown()
	{
		for (auto &c : conns_)
			if (rdma_disconnect(c.client))
				die("rdma_disconnect", errno);
		size_t left = conns_.size() * 2;
		while (left) {
			rdma_cm_event *ev = next_event();
			if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
				Conn *c = owner(ev->id);
				bool &down = ev->id == c->client ? c->client_down
								 : c->server_down;
				if (!down) {
					down = true;
					left--;
				}
			} else if (ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT) {
				unexpected(ev);
			}
			rdma_ack_cm_event(ev);
		}
		for (auto &c : conns_) {
			rdma_destroy_qp(c.client);
			rdma_destroy_qp(c.server);
			rdma_destroy_id(c.client);
			rdma_destroy_id(c.server);
		}
		ibv_dereg_mr(mr_);
		ibv_destroy_cq(cq_);
		ibv_dealloc_pd(pd_);
		rdma_destroy_id(listen_);
		rdma_destroy_event_channel(ch_);
	}

private:
	rdma_cm_event *next_event()
	{
		pollfd pfd{ch_->fd, POLLIN, 0};
		rdma_cm_event *ev = nullptr;

		for (;;) {
			int n = poll(&pfd, 1, kEventTimeoutMs);
			if (n == 0)
				die("no rdma_cm event in 30 s", ETIMEDOUT);
			if (n < 0 && errno != EINTR)
				die("poll", errno);
			if (n > 0)
				break;
		}
		if (rdma_get_cm_event(ch_, &ev))
			die("rdma_get_cm_event", errno);
		return ev;
	}

	[[noreturn]] static void unexpected(const rdma_cm_event *ev)
	{
		std::fprintf(stderr, "xiw-connscale[%d]: unexpected event %s (status %d)\n",
			     getpid(), rdma_event_str(ev->event), ev->status);
		std::exit(1);
	}

	Conn *owner(rdma_cm_id *id)
	{
		auto it = by_id_.find(id);
		if (it == by_id_.end()) {
			std::fprintf(stderr, "xiw-connscale[%d]: event for an unknown id\n",
				     getpid());
			std::exit(1);
		}
		return &conns_[it->second];
	}

	ibv_qp_init_attr qp_attr()
	{
		ibv_qp_init_attr a{};
		a.send_cq = cq_;
		a.recv_cq = cq_;
		a.cap.max_send_wr = opt_.depth;
		a.cap.max_recv_wr = opt_.depth;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		a.qp_type = IBV_QPT_RC;
		return a;
	}

	uint8_t *slot(size_t conn, unsigned which)
	{
		return buf_.data() + (conn * 3 + which) * opt_.bytes;
	}

	void expect(rdma_cm_id *id, rdma_cm_event_type type)
	{
		rdma_cm_event *ev = next_event();
		if (ev->id != id || ev->event != type)
			unexpected(ev);
		rdma_ack_cm_event(ev);
	}

	// The active end resolves and connects; the passive end's request
	// arrives on the same channel, is accepted with a receive posted,
	// and both report ESTABLISHED in either order.
	void connect_one(size_t i)
	{
		Conn &c = conns_[i];

		if (rdma_create_id(ch_, &c.client, nullptr, RDMA_PS_TCP))
			die("rdma_create_id", errno);
		by_id_[c.client] = i;
		if (rdma_resolve_addr(c.client, nullptr,
				      reinterpret_cast<sockaddr *>(&dst_), 5000))
			die("rdma_resolve_addr", errno);
		expect(c.client, RDMA_CM_EVENT_ADDR_RESOLVED);
		if (rdma_resolve_route(c.client, 5000))
			die("rdma_resolve_route", errno);
		expect(c.client, RDMA_CM_EVENT_ROUTE_RESOLVED);
		ibv_qp_init_attr a = qp_attr();
		if (rdma_create_qp(c.client, pd_, &a))
			die("rdma_create_qp (active)", errno);
		rdma_conn_param p{};
		p.responder_resources = 1;
		p.initiator_depth = 1;
		if (rdma_connect(c.client, &p))
			die("rdma_connect", errno);
		while (!c.client_up || !c.server_up) {
			rdma_cm_event *ev = next_event();
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
				accept(i, ev->id);
			} else if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
				Conn *o = owner(ev->id);
				(ev->id == o->client ? o->client_up : o->server_up) = true;
			} else {
				unexpected(ev);
			}
			rdma_ack_cm_event(ev);
		}
	}

	void accept(size_t i, rdma_cm_id *id)
	{
		Conn &c = conns_[i];

		if (c.server) {
			std::fprintf(stderr, "xiw-connscale[%d]: a second request\n",
				     getpid());
			std::exit(1);
		}
		c.server = id;
		by_id_[id] = i;
		ibv_qp_init_attr a = qp_attr();
		if (rdma_create_qp(id, pd_, &a))
			die("rdma_create_qp (passive)", errno);
		ibv_sge sge{reinterpret_cast<uintptr_t>(slot(i, 2)), opt_.bytes,
			    mr_->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (ibv_post_recv(id->qp, &wr, &bad))
			die("ibv_post_recv", errno);
		rdma_conn_param p{};
		p.responder_resources = 1;
		p.initiator_depth = 1;
		if (rdma_accept(id, &p))
			die("rdma_accept", errno);
	}

	void post_data(size_t i)
	{
		Conn &c = conns_[i];
		ibv_sge sge{reinterpret_cast<uintptr_t>(slot(i, 0)), opt_.bytes,
			    mr_->lkey};
		ibv_send_wr wr[2]{};
		ibv_send_wr *bad = nullptr;

		wr[0].wr_id = i;
		wr[0].sg_list = &sge;
		wr[0].num_sge = 1;
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].send_flags = IBV_SEND_SIGNALED;
		wr[0].wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(slot(i, 1));
		wr[0].wr.rdma.rkey = mr_->rkey;
		wr[0].next = &wr[1];
		wr[1].wr_id = i;
		wr[1].sg_list = &sge;
		wr[1].num_sge = 1;
		wr[1].opcode = IBV_WR_SEND;
		wr[1].send_flags = IBV_SEND_SIGNALED;
		if (ibv_post_send(c.client->qp, wr, &bad))
			die("ibv_post_send", errno);
	}

	void poll_cq(size_t want)
	{
		ibv_wc wc[16];
		unsigned idle = 0;

		while (want) {
			int n = ibv_poll_cq(cq_, 16, wc);
			if (n < 0)
				die("ibv_poll_cq", EIO);
			for (int k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS) {
					std::fprintf(stderr,
						     "xiw-connscale[%d]: connection %lu: %s\n",
						     getpid(),
						     static_cast<unsigned long>(wc[k].wr_id),
						     ibv_wc_status_str(wc[k].status));
					std::exit(1);
				}
			}
			want -= static_cast<size_t>(n);
			if (n) {
				idle = 0;
				continue;
			}
			// About 30 s without a completion: give up.
			if (++idle > 30000)
				die("completions missing", ETIMEDOUT);
			usleep(1000);
		}
	}

	const Options &opt_;
	unsigned index_;
	std::vector<Conn> conns_;
	std::map<rdma_cm_id *, size_t> by_id_;
	sockaddr_in dst_{};
	rdma_event_channel *ch_ = nullptr;
	rdma_cm_id *listen_ = nullptr;
	ibv_pd *pd_ = nullptr;
	ibv_cq *cq_ = nullptr;
	ibv_mr *mr_ = nullptr;
	std::vector<uint8_t> buf_;
};

// The parent and each child talk over two pipes, a byte at a time.
struct Link {
	pid_t pid = -1;
	int to_child = -1;
	int from_child = -1;
};

bool put(int fd, char c)
{
	return write(fd, &c, 1) == 1;
}

char get(int fd)
{
	char c = 0;
	ssize_t n;

	do {
		n = read(fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	return n == 1 ? c : 0;
}

// Steps: the parent says 'C' (connect) and 'Q' (quit); a child answers
// 'B' (baseline: prepared), 'R' (connected, data moved, idle), 'D'
// (torn down), or exits non-zero.
[[noreturn]] void child_main(const Options &opt, unsigned index,
			     unsigned count, int in, int out)
{
	Child c(opt, index, count);

	c.prepare();
	if (!put(out, 'B') || get(in) != 'C')
		std::exit(1);
	c.connect_all();
	c.move_data();
	if (!put(out, 'R') || get(in) != 'Q')
		std::exit(1);
	c.teardown();
	put(out, 'D');
	std::exit(0);
}

struct Meminfo {
	long slab = 0;
	long vmalloc = 0;
	long free = 0;
	std::map<std::string, long> caches;	// KiB per slab cache
};

// Each slab cache's active objects times their size, in KiB, from
// /proc/slabinfo (readable by root only: empty otherwise).
void read_slabinfo(Meminfo &m)
{
	std::ifstream f("/proc/slabinfo");
	std::string line;

	while (std::getline(f, line)) {
		if (line.empty() || line[0] == '#' || line.rfind("slabinfo", 0) == 0)
			continue;
		char name[128];
		long active = 0, total = 0, size = 0;
		if (std::sscanf(line.c_str(), "%127s %ld %ld %ld", name, &active,
				&total, &size) == 4)
			m.caches[name] = active * size / 1024;
	}
}

Meminfo meminfo()
{
	std::ifstream f("/proc/meminfo");
	std::string key;
	long value;
	std::string unit;
	Meminfo m;

	while (f >> key >> value) {
		std::getline(f, unit);
		if (key == "Slab:")
			m.slab = value;
		else if (key == "VmallocUsed:")
			m.vmalloc = value;
		else if (key == "MemFree:")
			m.free = value;
	}
	read_slabinfo(m);
	return m;
}

// Freed objects reach the counters late (RCU, per-CPU caches, workers):
// wait a little before each reading.
Meminfo settled()
{
	sleep(2);
	return meminfo();
}

bool all_say(std::vector<Link> &kids, char want)
{
	bool ok = true;

	for (auto &k : kids) {
		char c = get(k.from_child);
		if (c != want) {
			std::fprintf(stderr,
				     "xiw-connscale: process %d failed before '%c'\n",
				     k.pid, want);
			ok = false;
		}
	}
	return ok;
}

void tell_all(std::vector<Link> &kids, char what)
{
	for (auto &k : kids)
		put(k.to_child, what);
}

int reap(std::vector<Link> &kids)
{
	int failed = 0;

	for (auto &k : kids) {
		int st = 0;
		close(k.to_child);
		close(k.from_child);
		if (waitpid(k.pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			failed++;
	}
	return failed;
}

void usage()
{
	std::fprintf(stderr,
		     "usage: xiw-connscale -a ADDR [-n CONNS] [-p PER_PROCESS]"
		     " [-s BYTES] [-d DEPTH] [-P PORT]\n");
	std::exit(2);
}

unsigned number(const char *s, unsigned lo, unsigned hi)
{
	char *end = nullptr;
	unsigned long v = std::strtoul(s, &end, 0);

	if (!*s || *end || v < lo || v > hi)
		usage();
	return static_cast<unsigned>(v);
}

} // namespace

int main(int argc, char **argv)
{
	Options opt;
	int c;

	while ((c = getopt(argc, argv, "a:n:p:s:d:P:")) != -1) {
		switch (c) {
		case 'a': opt.addr = optarg; break;
		case 'n': opt.conns = number(optarg, 1, 100000); break;
		case 'p': opt.per_proc = number(optarg, 1, 1024); break;
		case 's': opt.bytes = number(optarg, 1, 1U << 20); break;
		case 'd': opt.depth = number(optarg, 2, 4096); break;
		case 'P': opt.port = number(optarg, 1024, 60000); break;
		default: usage();
		}
	}
	// One listener port per process, all checked before any is forked.
	if (opt.addr.empty() || optind != argc ||
	    opt.port + (opt.conns - 1) / opt.per_proc > 65535)
		usage();
	// A child that died must not take the parent with it.
	std::signal(SIGPIPE, SIG_IGN);

	std::vector<Link> kids;
	for (unsigned done = 0, i = 0; done < opt.conns; i++) {
		unsigned count = std::min(opt.per_proc, opt.conns - done);
		int down[2], up[2];

		if (pipe(down) || pipe(up))
			die("pipe", errno);
		std::fflush(nullptr);
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0) {
			close(down[1]);
			close(up[0]);
			for (auto &k : kids) {
				close(k.to_child);
				close(k.from_child);
			}
			child_main(opt, i, count, down[0], up[1]);
		}
		close(down[0]);
		close(up[1]);
		kids.push_back({pid, down[1], up[0]});
		done += count;
	}

	bool ok = all_say(kids, 'B');
	Meminfo base = settled();
	if (ok) {
		tell_all(kids, 'C');
		ok = all_say(kids, 'R');
	}
	Meminfo busy = settled();
	tell_all(kids, 'Q');
	if (ok)
		ok = all_say(kids, 'D');
	int failed = reap(kids);
	Meminfo after = settled();

	const double n = opt.conns;
	const long slab = busy.slab - base.slab;
	const long vmalloc = busy.vmalloc - base.vmalloc;
	const long freed = base.free - busy.free;
	std::printf("connections %u\nprocesses %zu\n", opt.conns, kids.size());
	std::printf("slab_kib %ld\nvmalloc_kib %ld\nfree_kib %ld\n", slab,
		    vmalloc, freed);
	std::printf("slab_per_conn_kib %.2f\nvmalloc_per_conn_kib %.2f\n",
		    slab / n, vmalloc / n);
	std::printf("kmem_per_conn_kib %.2f\nfree_per_conn_kib %.2f\n",
		    (slab + vmalloc) / n, freed / n);
	std::printf("after_slab_kib %ld\nafter_vmalloc_kib %ld\n",
		    after.slab - base.slab, after.vmalloc - base.vmalloc);
	// Where the slab growth went: every cache that grew by 1 KiB or more.
	for (const auto &[name, kib] : busy.caches) {
		auto it = base.caches.find(name);
		long grew = kib - (it == base.caches.end() ? 0 : it->second);
		if (grew >= 1)
			std::printf("cache %s %.2f\n", name.c_str(), grew / n);
	}
	if (!ok || failed) {
		std::fprintf(stderr, "xiw-connscale: %d of %zu processes failed\n",
			     failed, kids.size());
		return 1;
	}
	return 0;
}
