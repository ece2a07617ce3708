// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The xiw provider's objects and the entry points libibverbs calls.
 *
 * Every object embeds the libibverbs object it stands for as its first
 * member, so that the pointer libibverbs hands back converts to ours by a
 * plain cast. Entry points are noexcept and report failure the way
 * libibverbs expects: an errno value, or null with errno set. Objects the
 * provider allocates itself are made by static create() factories that
 * return null on failure.
 */
#ifndef XIW_H
#define XIW_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"

namespace xiw {

/* ---- provider.cpp: the device ------------------------------------------ */

struct Device {
	verbs_device vdev;

	/* Zero-filled, as libibverbs requires of a new verbs_device. */
	static std::unique_ptr<Device> create() noexcept;

	static Device *from(verbs_device *vdev) noexcept
	{
		return reinterpret_cast<Device *>(vdev);
	}
};
static_assert(std::is_standard_layout_v<Device>);
static_assert(offsetof(Device, vdev) == 0);

extern const verbs_device_ops kDeviceOps;

verbs_device *alloc_device(verbs_sysfs_dev *sysfs_dev) noexcept;
void uninit_device(verbs_device *vdev) noexcept;

/* ---- context.cpp: the user context --------------------------------------- */

struct Context;

/* Undoes _verbs_init_and_alloc_context(): closes cmd_fd, frees the memory. */
struct ContextDeleter {
	void operator()(Context *ctx) const noexcept;
};
using ContextPtr = std::unique_ptr<Context, ContextDeleter>;

/*
 * libibverbs allocates this with calloc() and the provider releases it with
 * free(), so it is created without a constructor call: it must stay an
 * implicit-lifetime type (C++20 [intro.object]). Members that own resources
 * with destructors have to be held through pointers that ContextDeleter
 * releases.
 */
struct Context {
	verbs_context vctx;

	/* Takes cmd_fd: it is closed if this fails. */
	static ContextPtr create(ibv_device *ibdev, int cmd_fd) noexcept;

	static Context *from(ibv_context *ibctx) noexcept
	{
		/* ibctx is vctx.context; vctx is the first member. */
		auto *bytes = reinterpret_cast<std::byte *>(ibctx);
		return reinterpret_cast<Context *>(
			bytes - offsetof(verbs_context, context));
	}
};
static_assert(std::is_standard_layout_v<Context>);
static_assert(std::is_trivially_default_constructible_v<Context>);
static_assert(std::is_trivially_destructible_v<Context>);
static_assert(offsetof(Context, vctx) == 0);

/* 0 if the kernel's half of the GET_CONTEXT response is acceptable, else EINVAL. */
int check_ucontext_resp(const xiw_alloc_ucontext_resp &resp) noexcept;

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd,
			     void *private_data) noexcept;
void free_context(ibv_context *ibctx) noexcept;

/* ---- verbs.cpp: device queries and protection domains -------------------- */

struct Pd {
	ibv_pd ibpd;

	/* Allocates the kernel PD too; null with errno set on failure. */
	static std::unique_ptr<Pd> create(ibv_context *ibctx) noexcept;

	static Pd *from(ibv_pd *ibpd) noexcept
	{
		return reinterpret_cast<Pd *>(ibpd);
	}
};
static_assert(std::is_standard_layout_v<Pd>);
static_assert(offsetof(Pd, ibpd) == 0);

int query_device_ex(ibv_context *ibctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, std::size_t attr_size) noexcept;
int query_port(ibv_context *ibctx, std::uint8_t port_num,
	       ibv_port_attr *port_attr) noexcept;
ibv_pd *alloc_pd(ibv_context *ibctx) noexcept;
int dealloc_pd(ibv_pd *ibpd) noexcept;

} // namespace xiw

#endif // XIW_H
