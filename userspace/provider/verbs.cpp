// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device and port queries, and protection domains. None of them carries
 * driver data yet: the kernel answers from the core commands alone.
 */
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "ibverbs_private.h"
#include "xiw.h"

namespace xiw {

int query_device_ex(ibv_context *ibctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, std::size_t attr_size) noexcept
{
	/* Without a response buffer libibverbs uses one of its own. */
	return ibv_cmd_query_device_any(ibctx, input, attr, attr_size, nullptr,
					nullptr);
}

int query_port(ibv_context *ibctx, std::uint8_t port_num,
	       ibv_port_attr *port_attr) noexcept
{
	struct ibv_query_port cmd {};

	return ibv_cmd_query_port(ibctx, port_num, port_attr, &cmd,
				  sizeof(cmd));
}

std::unique_ptr<Pd> Pd::create(ibv_context *ibctx) noexcept
{
	std::unique_ptr<Pd> pd(new (std::nothrow) Pd{});
	struct ibv_alloc_pd cmd {};
	ibv_alloc_pd_resp resp{};

	if (!pd) {
		errno = ENOMEM;
		return nullptr;
	}
	const int err = ibv_cmd_alloc_pd(ibctx, &pd->ibpd, &cmd, sizeof(cmd),
					 &resp, sizeof(resp));
	if (err != 0) {
		pd.reset();
		errno = err;
		return nullptr;
	}
	return pd;
}

ibv_pd *alloc_pd(ibv_context *ibctx) noexcept
{
	std::unique_ptr<Pd> pd = Pd::create(ibctx);

	if (!pd) {
		return nullptr;
	}
	return &pd.release()->ibpd;
}

int dealloc_pd(ibv_pd *ibpd) noexcept
{
	const int err = ibv_cmd_dealloc_pd(ibpd);

	/* If the kernel still holds the PD, so does the application. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<Pd> pd(Pd::from(ibpd));
	return 0;
}

} // namespace xiw
