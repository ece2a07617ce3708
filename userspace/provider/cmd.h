// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The buffers xiw hands to the ibv_cmd_*() helpers: libibverbs's core part
 * (ibverbs_private.h) with xiw's driver part (rdma/xiw-abi.h) straight after
 * it. libibverbs sends whatever follows the core part to the kernel driver
 * as its udata, so there must be no padding in between; each layout is
 * asserted.
 *
 * A verb that has no driver data uses the core structs alone.
 */
#ifndef XIW_CMD_H
#define XIW_CMD_H

#include <cstddef>

#include <rdma/xiw-abi.h>

#include "ibverbs_private.h"

namespace xiw {

/* GET_CONTEXT: the request is the core command alone. */
struct GetContextResp {
	ibv_get_context_resp ibv_resp;
	xiw_alloc_ucontext_resp drv;
};
static_assert(offsetof(GetContextResp, drv) == sizeof(ibv_get_context_resp));
static_assert(sizeof(GetContextResp) ==
	      sizeof(ibv_get_context_resp) + sizeof(xiw_alloc_ucontext_resp));

} // namespace xiw

#endif // XIW_CMD_H
