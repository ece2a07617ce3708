/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Fault injection at xiw's own allocation sites, for the debug kernel's
 * tests (Documentation/testing.rst). With CONFIG_FAULT_INJECTION_DEBUG_FS,
 * the module's debugfs directory, /sys/kernel/debug/xiw/ (on every
 * kernel, xiw_main.c), also holds:
 *   fail_alloc/  a fault_attr (probability, interval, times, verbose,
 *                task-filter...), as every fault-injection capability has;
 *   fail_site    0: any site may fail, else only the site of that number;
 *   sites        per site: number, name, times reached, times failed.
 * A site is consulted just before its allocation (or the call that
 * allocates) and, when it fails, the allocation is not attempted: the
 * caller takes its -ENOMEM path. Without the option every check is a
 * constant false.
 */
#ifndef XIW_FAULT_H
#define XIW_FAULT_H

struct dentry;

enum xiw_fault_site {
	XIW_FAULT_ANY,
	XIW_FAULT_CONN_CONNECT,		/* a conn for iw_connect */
	XIW_FAULT_CONN_LISTEN,		/* a conn for a listening socket */
	XIW_FAULT_CONN_ACCEPT,		/* a conn for an accepted socket */
	XIW_FAULT_LISTEN,		/* a listen's address list */
	XIW_FAULT_SOCK,			/* sock_create_kern */
	XIW_FAULT_MPA_FRAME,		/* an MPA Request or Reply to send */
	XIW_FAULT_WIRE_RINGS,		/* ORQ and IRQ at RTS */
	XIW_FAULT_DEV_COUNTERS,		/* a device's per-CPU counters */
	XIW_FAULT_QP_COUNTER,		/* a bound QP counter */
	XIW_FAULT_QP_COUNTER_ID,	/* its id */
	XIW_FAULT_MR,			/* an MR */
	XIW_FAULT_MR_ID,		/* its STag index */
	XIW_FAULT_MR_UMEM,		/* ib_umem_get of a user MR */
	XIW_FAULT_MR_PAGES,		/* a user MR's page array */
	XIW_FAULT_MR_FRMR_LIST,		/* a fast-register MR's page lists */
	XIW_FAULT_MW,			/* a memory window */
	XIW_FAULT_QP_SQ_PEND,		/* a QP's send-side bookkeeping */
	XIW_FAULT_QP_ID,		/* its QP number */
	XIW_FAULT_RX,			/* a QP's receive state */
	XIW_FAULT_TX,			/* a QP's transmit state */
	XIW_FAULT_RING,			/* a queue's ring memory */
	XIW_FAULT_RING_MMAP,		/* its mmap entry */
	XIW_FAULT_ZC_CTX,		/* zero-copy context at RTS */
	XIW_FAULT_ZC_MSG,		/* one zero-copy message */
	XIW_FAULT_ZC_PAGE,		/* a zero-copy batch's header page */
	XIW_FAULT_TX_MARKERS,		/* transmit arrays for markers, at RTS */
	XIW_FAULT_TX_SET,		/* a batch's arrays, cached or new */
	XIW_FAULT_TX_OWN_PAGE,		/* a page to copy payload into */
	XIW_FAULT_CRC_PROBE,		/* the bytes crc_impl=auto times */
	XIW_FAULT_NR
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool xiw_fault(enum xiw_fault_site site);
void xiw_fault_init(struct dentry *d);
#else
static inline bool xiw_fault(enum xiw_fault_site site)
{
	return false;
}

static inline void xiw_fault_init(struct dentry *d)
{
}
#endif

#endif /* XIW_FAULT_H */
