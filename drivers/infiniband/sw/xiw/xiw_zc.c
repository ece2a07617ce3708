// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Transmit: zero-copy, and the lifetime of the user pages and the
 * ubuf_info a batch refers to.
 *
 * Zero-copy transmit
 * ==================
 * A message from user MRs of at least tx_zcopy_min bytes is handed to
 * TCP by reference: the socket's MSG_ZEROCOPY machinery (a ubuf_info
 * per message, struct xiw_zc) lets the skbs point at the registered
 * pages, and calls back when the last skb lets go of them, that is once
 * the peer acknowledged the data and no clone is left. Only then does
 * the work request complete: the application may rewrite its buffer
 * after the completion, and a retransmission must still carry the bytes
 * the CRC was computed over. The stack itself copies where the pages
 * would otherwise reach another socket of this host (loopback, veth:
 * skb_orphan_frags_rx), so local peers stay correct too; on such routes
 * the copy buys nothing, hence tx_zcopy=1 only uses it on routes out of
 * the host, through a device that checksums (xiw_tx_route()). A Read
 * Response, which nothing completes, goes by reference without a ubuf
 * on such routes too; __xiw_tx_ref_begin() decides.
 *
 * Headers, trailers and markers of a zero-copy batch are in a page of
 * their own (tx->zpage), which the skbs reference like the payload; it
 * is reused once nothing else holds it. Without such a page a batch is
 * copied (no msg_ubuf): the message still completes through its ubuf,
 * which the skbs of its other batches hold.
 *
 * struct xiw_zc_ctx outlives the QP (skbs may stay in an orphaned socket
 * after the QP is gone): the callbacks reach the QP only through it,
 * under its lock, and xiw_tx_stop() cuts that link. Each message holds
 * a reference to the module, whose code the callback is.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/dst.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "xiw_fault.h"
#include "xiw_tx.h"

static uint tx_zcopy = 1;
module_param(tx_zcopy, uint, 0644);
MODULE_PARM_DESC(tx_zcopy,
		 "Zero-copy transmit of large messages from user memory: 0 off, 1 on routes that leave the host through a device with checksum offload (default), 2 (or more) on every route; with 1, Read Responses by reference on loopback too");

uint xiw_tx_zcopy_min = 16384;
module_param_named(tx_zcopy_min, xiw_tx_zcopy_min, uint, 0644);
MODULE_PARM_DESC(tx_zcopy_min,
		 "Smallest message sent zero-copy, in bytes (default 16384)");

static bool tx_own_pages = true;
module_param(tx_own_pages, bool, 0644);
MODULE_PARM_DESC(tx_own_pages,
		 "Copy a message of at least tx_zcopy_min bytes that does not go zero-copy into pages xiw reuses, which TCP then references, rather than have TCP copy it into pages it allocates (default on)");

static void xiw_zc_ctx_put(struct xiw_zc_ctx *ctx)
{
	if (refcount_dec_and_test(&ctx->ref))
		kfree(ctx);
}

/*
 * The last reference to a zero-copy message went: no skb holds its
 * pages. Complete its SQ entry if it was all handed over, unless the
 * connection broke with the data unacknowledged or the QP is in ERR:
 * the QP's flush reports that one (and may have, its slot then being
 * another entry's). Any context, interrupts possibly off.
 */
static void xiw_zc_release(struct xiw_zc *z)
{
	struct xiw_zc_ctx *ctx = z->ctx;
	unsigned long flags;
	bool lost;

	lost = READ_ONCE(z->sk->sk_err) &&
	       before(READ_ONCE(tcp_sk(z->sk)->snd_una), z->end_seq);
	if (z->complete && z->sent && !lost) {
		spin_lock_irqsave(&ctx->lock, flags);
		if (ctx->qp && READ_ONCE(ctx->qp->state) != IB_QPS_ERR)
			xiw_sq_done(ctx->qp, z->sq_idx, IB_WC_SUCCESS);
		spin_unlock_irqrestore(&ctx->lock, flags);
	}
	sock_put(z->sk);
	xiw_zc_ctx_put(ctx);
	kfree(z);
	/* Last; see xiw_zc_callback() for why this text is still there. */
	module_put(THIS_MODULE);
}

/* ubuf_info callback: one call per reference dropped (skb or ours). */
void xiw_zc_callback(struct sk_buff *skb, struct ubuf_info *u,
		     bool zerocopy_success)
{
	if (!refcount_dec_and_test(&u->refcnt))
		return;
	/*
	 * The release may drop the module's last reference (taken in
	 * xiw_tx_zc_take()), and an rmmod may then go ahead while we
	 * still run here. The module's memory is freed only after an RCU
	 * grace period (free_module() waits for one), so this read-side
	 * section keeps our text there until we are on the way out.
	 */
	rcu_read_lock();
	xiw_zc_release(container_of(u, struct xiw_zc, u));
	rcu_read_unlock();
}

XIW_UBUF_OPS(xiw_zc_ubuf_ops, xiw_zc_callback);

/* What the socket's route offers to pages sent by reference. */
enum {
	XIW_ROUTE_REF = 1,	/* its device gathers and checksums */
	XIW_ROUTE_OUT = 2,	/* and it leaves the host */
};

/*
 * Do references pay on the socket's route? Its device must gather (SG)
 * and checksum: without checksum offload the stack linearizes every skb
 * with shared frags to checksum it, a copy and a large allocation per
 * segment, slower than TCP's own copy. A ubuf's pages are also copied
 * on delivery to a socket of this host (skb_orphan_frags_rx), so for
 * those only a route out of the host gains anything.
 */
static unsigned int xiw_tx_route(struct sock *sk)
{
	struct dst_entry *dst = sk_dst_get(sk);
	struct net_device *dev = dst ? dst->dev : NULL;
	unsigned int r = 0;

	/*
	 * The device's own features: sk_route_caps claims SG and checksum
	 * for any route that software GSO serves, checksum in software.
	 */
	if (dev && (dev->features & NETIF_F_SG) &&
	    (dev->features & NETIF_F_CSUM_MASK)) {
		r = XIW_ROUTE_REF;
		if (!(dev->flags & IFF_LOOPBACK))
			r |= XIW_ROUTE_OUT;
	}
	dst_release(dst);
	return r;
}

/*
 * May TCP take the message's pages by reference? Its payload must come
 * from user MRs only (their pages are pinned pages, never slab memory;
 * kernel consumers' buffers may be); xiw_tx_ref_begin() let through only
 * a message of at least tx_zcopy_min bytes.
 */
static bool xiw_tx_by_ref_ok(const struct xiw_txmsg *m)
{
	u32 i;

	if (m->src != XIW_SRC_SGE)
		return false;
	for (i = 0; i < m->nsge; i++)
		if (m->mr[i] && m->mr[i]->type != XIW_MR_USER)
			return false;
	return true;
}

/* Give the message a ubuf_info, so that it goes zero-copy. */
static bool xiw_tx_zc_take(struct xiw_qp *qp, struct xiw_txmsg *m)
{
	struct xiw_tx *tx = qp->tx;
	struct sock *sk = qp->wire.sock->sk;
	struct xiw_zc *z;

	z = xiw_fault(XIW_FAULT_ZC_MSG) ? NULL : kzalloc(sizeof(*z), GFP_KERNEL);
	if (!z)
		return false;
	xiw_ubuf_set_ops(&z->u, &xiw_zc_ubuf_ops);
	z->u.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	refcount_set(&z->u.refcnt, 1);
	refcount_inc(&tx->zc_ctx->ref);
	z->ctx = tx->zc_ctx;
	sock_hold(sk);
	z->sk = sk;
	z->complete = m->fin == XIW_FIN_SQ;
	z->sq_idx = m->sq_idx;
	/*
	 * skbs may outlive the QP, the device and the socket's release (a
	 * clone in a NIC's ring, an orphaned socket's queue) and will call
	 * xiw_zc_callback(): the module stays until the last one has.
	 */
	__module_get(THIS_MODULE);
	m->zc = z;
	return true;
}

/*
 * How does the message just taken reach TCP: zero-copy, by reference
 * or copied? At most one look at the route decides.
 *
 * Zero-copy (a ubuf_info) with tx_zcopy=2 (or more), or with 1 on a
 * route out of the host; not a Write with Immediate, whose completion
 * rides on the Immediate Data message after it.
 *
 * Otherwise a Read Response goes by reference without a ubuf_info
 * (MSG_SPLICE_PAGES, or sendpage before 6.5: xiw_tx_send()) on any
 * route whose device gathers and checksums, loopback included. Nothing
 * waits for its skbs to let go: the Read completes at the requester,
 * once every byte arrived, so no later rewrite of the source can reach
 * a completed Read (a retransmission the requester needs means it has
 * not completed; one it does not need, TCP drops). With no ubuf the
 * stack does not copy the pages on delivery to a socket of this host
 * either: the requester's receive copies straight from the responder's
 * registered pages, where a copied Response cost a page allocation and
 * clearing per 4 KiB and a copy more (performance.rst, twenty-second
 * run). The skbs hold references to the pages, so a deregistration
 * meanwhile cannot free them under TCP.
 */
void __xiw_tx_ref_begin(struct xiw_qp *qp, struct xiw_txmsg *m)
{
	unsigned int mode = READ_ONCE(tx_zcopy), route = 0;
	bool resp = XIW_TX_BY_REF && m->fin == XIW_FIN_IRQ;
	bool own = XIW_TX_BY_REF && READ_ONCE(tx_own_pages);
	bool zc = qp->tx->zc_ctx;

	if ((!mode && !own) ||
	    (m->fin != XIW_FIN_SQ && m->fin != XIW_FIN_IRQ) ||
	    !xiw_tx_by_ref_ok(m))
		return;
	if (zc && mode >= 2 && xiw_tx_zc_take(qp, m))
		goto taken;
	/* The route, where it decides. */
	if ((zc && mode == 1) || (mode && resp) || own)
		route = xiw_tx_route(qp->wire.sock->sk);
	if (zc && mode == 1 && (route & XIW_ROUTE_OUT) &&
	    xiw_tx_zc_take(qp, m))
		goto taken;
	/* Not zero-copy: by reference, from its own pages or ours. */
	if (!(route & XIW_ROUTE_REF))
		return;
	if (mode && resp) {
		m->splice = true;
		goto taken;
	}
	m->splice = own;
	m->own = own;
	return;
taken:
	xiw_count_tx_zcopy(qp, m->len);
}

/* Callbacks still to come must not reach the QP any more. */
void xiw_tx_zc_detach(struct xiw_tx *tx)
{
	struct xiw_zc_ctx *ctx = tx->zc_ctx;
	unsigned long flags;

	if (!ctx)
		return;
	spin_lock_irqsave(&ctx->lock, flags);
	ctx->qp = NULL;
	spin_unlock_irqrestore(&ctx->lock, flags);
	xiw_zc_ctx_put(ctx);
	tx->zc_ctx = NULL;
}

/*
 * A user MR's pages, n pieces at bv, seen in the caller's RCU section:
 * the batch holds a reference to each until TCP has all of it, so that
 * dereg need not wait for a batch a full socket holds back.
 */
int xiw_tx_pin(struct xiw_tx *tx, const struct bio_vec *bv, int n)
{
	int i;

	if (tx->npinned + n > tx->cap)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		get_page(bv[i].bv_page);
		tx->pinned[tx->npinned++] = bv[i].bv_page;
	}
	return 0;
}

/*
 * A page for a zero-copy batch's own bytes: the last one again if no
 * skb holds it any more, else a fresh one; NULL if none can be had.
 */
u8 *xiw_tx_zpage(struct xiw_tx *tx)
{
	if (tx->zpage && page_ref_count(tx->zpage) != 1) {
		put_page(tx->zpage);
		tx->zpage = NULL;
	}
	if (!tx->zpage && !xiw_fault(XIW_FAULT_ZC_PAGE))
		tx->zpage = alloc_page(GFP_KERNEL);
	return tx->zpage ? page_address(tx->zpage) : NULL;
}

/*
 * Pages a copied message's payload goes to TCP in (tx_own_pages), so
 * that TCP references them rather than copying into page fragments it
 * allocates, which the kernel clears on allocation (init_on_alloc): a
 * page allocated and cleared per 4 KiB of payload, which over the
 * loopback cost about as much as the copy itself (performance.rst,
 * twenty-fifth run). Each CPU keeps a ring of them; the next one is
 * reused when its only reference is the ring's, that is when no skb
 * holds it any more, and replaced by a fresh one otherwise, the busy
 * one left to the skbs. Only transmit passes take pages, in process
 * context, with preemption off while they look at their CPU's ring.
 *
 * A slot changes hands only by xchg(): a pass takes its page out while
 * it looks at it and puts it back if it reuses it, and whoever empties
 * rings (the shrinker, the idle work, module exit) takes pages out the
 * same way, from any CPU. So each page in a ring has one owner at a
 * time and the ring's reference is dropped once.
 */
#define XIW_OWN_PAGES	128

struct xiw_own_ring {
	struct page *page[XIW_OWN_PAGES];
	unsigned int next;
};

static DEFINE_PER_CPU(struct xiw_own_ring, xiw_own_ring);

/*
 * A page to copy payload into, with a reference for the caller (the
 * batch's, dropped once TCP has it: xiw_tx_unpin()), *fresh telling
 * whether it was allocated now; NULL if none can be had.
 */
struct page *xiw_tx_own_page(bool *fresh)
{
	struct xiw_own_ring *r;
	struct page *page, *old;

	/* Consulted for every page, reused or not: as if none could be had. */
	if (xiw_fault(XIW_FAULT_TX_OWN_PAGE))
		return NULL;
	*fresh = false;
	r = get_cpu_ptr(&xiw_own_ring);
	page = xchg(&r->page[r->next], NULL);
	if (page && page_ref_count(page) == 1) {
		get_page(page);
		/* Back in its slot; taken since by nobody: it was empty. */
		WRITE_ONCE(r->page[r->next], page);
		r->next = (r->next + 1) % XIW_OWN_PAGES;
		put_cpu_ptr(&xiw_own_ring);
		return page;
	}
	put_cpu_ptr(&xiw_own_ring);
	/* An skb still holds it: the ring lets it go. */
	if (page)
		put_page(page);
	/* Rather than reclaim hard, let TCP copy (it allocates less). */
	page = alloc_page(GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN);
	if (!page)
		return NULL;
	*fresh = true;
	get_page(page);
	/* Into the slot now next on this CPU, which may be another. */
	r = get_cpu_ptr(&xiw_own_ring);
	old = xchg(&r->page[r->next], page);
	r->next = (r->next + 1) % XIW_OWN_PAGES;
	put_cpu_ptr(&xiw_own_ring);
	if (old)
		put_page(old);
	return page;
}

/*
 * Take up to max pages out of the rings, every CPU's, online or not,
 * and drop the rings' references (skbs keep theirs). How many.
 */
static unsigned long xiw_own_take(unsigned long max)
{
	unsigned long n = 0;
	struct page *page;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct xiw_own_ring *r = per_cpu_ptr(&xiw_own_ring, cpu);

		for (i = 0; i < XIW_OWN_PAGES && n < max; i++) {
			page = xchg(&r->page[i], NULL);
			if (page) {
				put_page(page);
				n++;
			}
		}
		cond_resched();
	}
	return n;
}

/* The pages CPU cpu's ring holds; a moment's count. */
static unsigned int xiw_own_held_on(int cpu)
{
	struct xiw_own_ring *r = per_cpu_ptr(&xiw_own_ring, cpu);
	unsigned int n = 0;
	int i;

	for (i = 0; i < XIW_OWN_PAGES; i++)
		n += !!READ_ONCE(r->page[i]);
	return n;
}

/* The pages the rings hold, every CPU's. */
static unsigned long xiw_own_held(void)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += xiw_own_held_on(cpu);
	return n;
}

/*
 * Under memory pressure the rings give their pages back (and
 * echo 2 > /proc/sys/vm/drop_caches empties them): a ring is a cache,
 * refilled by the next messages.
 */
static unsigned long xiw_own_count(struct shrinker *s,
				   struct shrink_control *sc)
{
	return xiw_own_held() ?: SHRINK_EMPTY;
}

static unsigned long xiw_own_scan(struct shrinker *s,
				  struct shrink_control *sc)
{
	return xiw_own_take(sc->nr_to_scan) ?: SHRINK_STOP;
}

static struct shrinker *xiw_own_shrinker;

/*
 * The rings hold pages only while some QP exists: one may transmit.
 * Once the module's last QP has been gone for XIW_OWN_IDLE (a run of
 * one connection after another keeps its pages), xiw_own_idle empties
 * every CPU's ring. The ring's reference goes; skbs may hold theirs for
 * a while.
 */
#define XIW_OWN_IDLE	(2 * HZ)

static atomic_t xiw_own_users = ATOMIC_INIT(0);

static void xiw_own_idle_fn(struct work_struct *work)
{
	/* A QP came since: it may use the pages. */
	if (!atomic_read(&xiw_own_users))
		xiw_own_take(ULONG_MAX);
}

static DECLARE_DELAYED_WORK(xiw_own_idle, xiw_own_idle_fn);

/* A QP was created: the rings may fill. */
void xiw_tx_own_pages_hold(void)
{
	atomic_inc(&xiw_own_users);
}

/* A QP is gone; the last one has the rings emptied a little later. */
void xiw_tx_own_pages_release(void)
{
	if (atomic_dec_and_test(&xiw_own_users))
		mod_delayed_work(system_unbound_wq, &xiw_own_idle,
				 XIW_OWN_IDLE);
}

/* Module init: the shrinker. 0 or -ENOMEM. */
int xiw_tx_own_pages_init(void)
{
	xiw_own_shrinker = xiw_shrinker_new(xiw_own_count, xiw_own_scan,
					    "xiw-own-pages");
	return xiw_own_shrinker ? 0 : -ENOMEM;
}

/* The pages each CPU's ring holds, for tests (debugfs: own_pages). */
static int xiw_own_pages_show(struct seq_file *m, void *v)
{
	unsigned int n, total = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		n = xiw_own_held_on(cpu);
		seq_printf(m, "cpu%d %u\n", cpu, n);
		total += n;
	}
	seq_printf(m, "total %u\n", total);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xiw_own_pages);

void xiw_tx_own_pages_debugfs(struct dentry *dir)
{
	debugfs_create_file("own_pages", 0400, dir, NULL, &xiw_own_pages_fops);
}

/* Module exit, every QP gone: what the rings still hold. */
void xiw_tx_own_pages_free(void)
{
	WARN_ON_ONCE(atomic_read(&xiw_own_users));
	xiw_shrinker_free(xiw_own_shrinker);
	cancel_delayed_work_sync(&xiw_own_idle);
	xiw_own_take(ULONG_MAX);
}
