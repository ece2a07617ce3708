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

/*
 * CREATE_CQ, CREATE_QP, CREATE_SRQ: the requests are the core commands
 * alone.
 */
struct CreateCqResp {
	ibv_create_cq_resp ibv_resp;
	xiw_create_cq_resp drv;
};
static_assert(offsetof(CreateCqResp, drv) == sizeof(ibv_create_cq_resp));
static_assert(sizeof(CreateCqResp) ==
	      sizeof(ibv_create_cq_resp) + sizeof(xiw_create_cq_resp));

/* The extended CREATE_CQ (ibv_create_cq_ex()): its core response is longer. */
struct CreateCqExResp {
	ibv_ex_create_cq_resp ibv_resp;
	xiw_create_cq_resp drv;
};
static_assert(offsetof(CreateCqExResp, drv) == sizeof(ibv_ex_create_cq_resp));

/* RESIZE_CQ: the request is the core command alone. */
struct ResizeCqResp {
	ibv_resize_cq_resp ibv_resp;
	xiw_resize_cq_resp drv;
};
static_assert(offsetof(ResizeCqResp, drv) == sizeof(ibv_resize_cq_resp));
static_assert(sizeof(ResizeCqResp) ==
	      sizeof(ibv_resize_cq_resp) + sizeof(xiw_resize_cq_resp));

struct CreateQpResp {
	ibv_create_qp_resp ibv_resp;
	xiw_create_qp_resp drv;
};
static_assert(offsetof(CreateQpResp, drv) == sizeof(ibv_create_qp_resp));
static_assert(sizeof(CreateQpResp) ==
	      sizeof(ibv_create_qp_resp) + sizeof(xiw_create_qp_resp));

struct CreateSrqResp {
	ibv_create_srq_resp ibv_resp;
	xiw_create_srq_resp drv;
};
static_assert(offsetof(CreateSrqResp, drv) == sizeof(ibv_create_srq_resp));
static_assert(sizeof(CreateSrqResp) ==
	      sizeof(ibv_create_srq_resp) + sizeof(xiw_create_srq_resp));

} // namespace xiw

#endif // XIW_CMD_H
