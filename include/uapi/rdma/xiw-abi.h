/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * The ABI between the xiw kernel driver and its user-space provider
 * (libxiw-rdmav34.so). Only fixed-width types and explicit padding: every
 * structure here has the same layout for 32- and 64-bit user space.
 */
#ifndef XIW_ABI_USER_H
#define XIW_ABI_USER_H

#include <linux/types.h>

/*
 * Published as ib_device_ops.uverbs_abi_ver; libibverbs refuses a provider
 * whose match range does not contain it. Bump on any incompatible change
 * to a structure below.
 */
#define XIW_ABI_VERSION 1

/*
 * Name of the sysfs attribute, in /sys/class/infiniband/<ibdev>/, that
 * identifies an xiw device whatever name it was given by "rdma link add".
 * Its content is XIW_ABI_VERSION in decimal followed by a newline.
 */
#define XIW_SYSFS_ABI_ATTR "xiw_abi_version"

/* Driver part of the IB_USER_VERBS_CMD_GET_CONTEXT response. */
struct xiw_alloc_ucontext_resp {
	__u32 abi_version;	/* XIW_ABI_VERSION, echoed for a cross-check */
	__u32 reserved;
};

#endif /* XIW_ABI_USER_H */
