// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libibverbs dlopen()s libxiw-rdmav34.so and learns of the provider only
 * through this registration, made while the library loads. Kept apart from
 * the rest so that the unit tests can link the provider without
 * registering it.
 */
#include "ibverbs_private.h"
#include "xiw.h"

namespace {

/*
 * rdma-core 34 and 35 load providers of the same private ABI (34), but
 * their verbs_context_ops ends earlier than the one ibverbs_private.h
 * declares (query_qp_data_in_order and what follows came with 36), and
 * verbs_set_ops() would read this provider's table with their layout.
 * Referring to a symbol libibverbs first exported in 36
 * (ibv_query_qp_data_in_order, IBVERBS_1.14) makes the dynamic loader
 * refuse the library there ("version IBVERBS_1.14 not found"), so no
 * context is ever made with a table the library reads wrongly. (A
 * function cannot be const: the check below mistakes it for data.)
 */
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
[[gnu::used]] int (*const kNeedsRdmaCore36)(ibv_qp *, ibv_wr_opcode,
					    std::uint32_t) =
	&ibv_query_qp_data_in_order;

__attribute__((constructor)) void register_xiw() noexcept
{
	verbs_register_driver_34(&xiw::kDeviceOps);
}

} // namespace
