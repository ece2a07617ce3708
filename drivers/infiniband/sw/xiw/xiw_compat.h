/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The kernel interfaces that differ between the kernels xiw builds for
 * (Debian 12's 6.1, Debian 13's 6.12), each in one place. The Makefile
 * tells them apart by the headers' declarations and defines XIW_HAVE_*;
 * the code elsewhere uses only what this file defines.
 */
#ifndef XIW_COMPAT_H
#define XIW_COMPAT_H

#include <linux/shrinker.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Zero-copy transmit: a ubuf_info names its completion function through
 * a table of operations (6.12) or a member of its own (6.1). xiw keeps
 * the table form; XIW_UBUF_OPS() defines one, xiw_ubuf_set_ops() points
 * a ubuf_info at it.
 */
#ifdef XIW_HAVE_UBUF_INFO_OPS
#define XIW_UBUF_OPS(name, fn)						\
	static const struct ubuf_info_ops name = { .complete = (fn) }
#define xiw_ubuf_set_ops(u, table) ((u)->ops = (table))
#else
struct xiw_ubuf_ops {
	void (*complete)(struct sk_buff *skb, struct ubuf_info *u,
			 bool zerocopy_success);
};

#define XIW_UBUF_OPS(name, fn)						\
	static const struct xiw_ubuf_ops name = { .complete = (fn) }
#define xiw_ubuf_set_ops(u, table) ((u)->callback = (table)->complete)
#endif

/*
 * create_cq receives the uverbs attribute bundle, NULL for a kernel
 * consumer, where it used to receive the udata: the driver's entry point
 * keeps the udata form, XIW_CREATE_CQ is what the device ops name.
 */
int xiw_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata);
#ifdef XIW_HAVE_CREATE_CQ_ATTRS
static inline int xiw_create_cq_attrs(struct ib_cq *ibcq,
				      const struct ib_cq_init_attr *attr,
				      struct uverbs_attr_bundle *attrs)
{
	return xiw_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}

#define XIW_CREATE_CQ xiw_create_cq_attrs
#else
#define XIW_CREATE_CQ xiw_create_cq
#endif

/*
 * How TCP takes a batch's pages by reference without a ubuf_info: a
 * sendmsg() flag for a bvec iterator (6.12), or sendpage, one page a
 * call (6.1, whose later releases define the flag but copy; 0 then).
 * XIW_TX_BY_REF: one of the two is there; without, such a batch would
 * be copied, and none is made.
 */
#ifdef XIW_HAVE_TCP_SPLICE
#define XIW_MSG_SPLICE_PAGES MSG_SPLICE_PAGES
#define XIW_TX_SENDPAGE 0
#elif defined(XIW_HAVE_SENDPAGE)
#define XIW_MSG_SPLICE_PAGES 0
#define XIW_TX_SENDPAGE 1
#else
#define XIW_MSG_SPLICE_PAGES 0
#define XIW_TX_SENDPAGE 0
#endif
#define XIW_TX_BY_REF (XIW_MSG_SPLICE_PAGES || XIW_TX_SENDPAGE)

/*
 * A shrinker is allocated and registered by the kernel (6.12), or
 * embedded by its user and registered with a name (6.1). Either way
 * xiw_shrinker_new() gives a registered one or NULL, and
 * xiw_shrinker_free() (NULL allowed) unregisters and frees it.
 */
typedef unsigned long (*xiw_shrink_fn)(struct shrinker *s,
				       struct shrink_control *sc);
#ifdef XIW_HAVE_SHRINKER_ALLOC
static inline struct shrinker *xiw_shrinker_new(xiw_shrink_fn count,
						xiw_shrink_fn scan,
						const char *name)
{
	struct shrinker *s = shrinker_alloc(0, "%s", name);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	shrinker_register(s);
	return s;
}

static inline void xiw_shrinker_free(struct shrinker *s)
{
	shrinker_free(s);
}
#else
static inline struct shrinker *xiw_shrinker_new(xiw_shrink_fn count,
						xiw_shrink_fn scan,
						const char *name)
{
	struct shrinker *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = DEFAULT_SEEKS;
	if (register_shrinker(s, "%s", name)) {
		kfree(s);
		return NULL;
	}
	return s;
}

static inline void xiw_shrinker_free(struct shrinker *s)
{
	if (!s)
		return;
	unregister_shrinker(s);
	kfree(s);
}
#endif

#endif /* XIW_COMPAT_H */
