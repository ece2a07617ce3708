// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The user context: one per ibv_open_device(), holding the command file
 * descriptor and the table of verbs libibverbs dispatches through.
 */
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/xiw-abi.h>

#include "cmd.h"
#include "ibverbs_private.h"
#include "xiw.h"

namespace xiw {
namespace {

constexpr verbs_context_ops make_context_ops() noexcept
{
	verbs_context_ops ops{};

	ops.alloc_mw = alloc_mw;
	ops.alloc_pd = alloc_pd;
	ops.bind_mw = bind_mw;
	ops.create_cq = create_cq;
	ops.create_cq_ex = create_cq_ex;
	ops.create_qp = create_qp;
	ops.create_qp_ex = create_qp_ex;
	ops.create_srq = create_srq;
	ops.dealloc_mw = dealloc_mw;
	ops.dealloc_pd = dealloc_pd;
	ops.dereg_mr = dereg_mr;
	ops.destroy_cq = destroy_cq;
	ops.destroy_qp = destroy_qp;
	ops.destroy_srq = destroy_srq;
	ops.free_context = free_context;
	ops.modify_qp = modify_qp;
	ops.modify_srq = modify_srq;
	/* The data path; libibverbs copies these into ibv_context.ops too. */
	ops.poll_cq = poll_cq;
	ops.post_recv = post_recv;
	ops.post_send = post_send;
	ops.post_srq_recv = post_srq_recv;
	ops.req_notify_cq = req_notify_cq;
	ops.resize_cq = resize_cq;
	ops.query_device_ex = query_device_ex;
	ops.query_port = query_port;
	ops.query_qp = query_qp;
	ops.query_srq = query_srq;
	ops.reg_mr = reg_mr;
	ops.rereg_mr = rereg_mr;
	return ops;
}

constexpr verbs_context_ops kContextOps = make_context_ops();

/*
 * _verbs_init_and_alloc_context() takes the offset of the verbs_context
 * inside the provider's context in the guise of a pointer.
 */
verbs_context *vctx_offset() noexcept
{
	constexpr std::uintptr_t kOffset = offsetof(Context, vctx);
	// The ABI passes an offset as a pointer; it is never dereferenced.
	// NOLINTNEXTLINE(performance-no-int-to-ptr)
	return reinterpret_cast<verbs_context *>(kOffset);
}

void report_abi_mismatch(verbs_context &vctx,
			 const xiw_alloc_ucontext_resp &resp) noexcept
{
	if (__verbs_log == nullptr) {
		return; /* rdma-core v36 has no provider log */
	}
	__verbs_log(&vctx, VERBS_LOG_ERR,
		    "xiw: %s: kernel driver speaks xiw ABI %u, this provider %u\n",
		    static_cast<const char *>(vctx.context.device->name),
		    static_cast<unsigned int>(resp.abi_version),
		    static_cast<unsigned int>(XIW_ABI_VERSION));
}

/* Returns 0 or an errno value. */
int get_context(Context &ctx) noexcept
{
	struct ibv_get_context cmd {};
	GetContextResp resp{};

	const int err = ibv_cmd_get_context(&ctx.vctx, &cmd, sizeof(cmd),
					    &resp.ibv_resp, sizeof(resp));
	if (err != 0) {
		return err;
	}
	if (check_ucontext_resp(resp.drv) != 0) {
		report_abi_mismatch(ctx.vctx, resp.drv);
		return EINVAL;
	}
	return 0;
}

} // namespace

void ContextDeleter::operator()(Context *ctx) const noexcept
{
	verbs_uninit_context(&ctx->vctx);
	// libibverbs allocated the context with calloc().
	// NOLINTNEXTLINE(cppcoreguidelines-no-malloc,cppcoreguidelines-owning-memory)
	std::free(ctx);
}

ContextPtr Context::create(ibv_device *ibdev, int cmd_fd) noexcept
{
	/*
	 * The kernel driver has no RDMA_DRIVER_* id; the ioctl header must
	 * carry the one it reports, or every command fails with EINVAL.
	 */
	void *mem = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(Context),
						  vctx_offset(),
						  RDMA_DRIVER_UNKNOWN);
	if (mem == nullptr) {
		return nullptr; /* cmd_fd closed, errno set */
	}
	ContextPtr ctx(static_cast<Context *>(mem));

	const int err = get_context(*ctx);
	if (err != 0) {
		ctx.reset(); /* before errno: the cleanup may clobber it */
		errno = err;
		return nullptr;
	}
	verbs_set_ops(&ctx->vctx, &kContextOps);
	return ctx;
}

int check_ucontext_resp(const xiw_alloc_ucontext_resp &resp) noexcept
{
	/*
	 * A kernel that wrote no driver response leaves abi_version zero, and
	 * is refused with the same error as a mismatched one.
	 */
	return resp.abi_version == XIW_ABI_VERSION ? 0 : EINVAL;
}

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd,
			     void * /*private_data*/) noexcept
{
	ContextPtr ctx = Context::create(ibdev, cmd_fd);

	if (!ctx) {
		return nullptr;
	}
	return &ctx.release()->vctx;
}

/* ibv_close_device(): libibverbs has already dropped everything it held. */
void free_context(ibv_context *ibctx) noexcept
{
	ContextDeleter{}(Context::from(ibctx));
}

} // namespace xiw
