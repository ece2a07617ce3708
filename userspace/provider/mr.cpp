// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory regions: the kernel pins the memory and hands out the keys; the
 * provider only keeps the verbs_mr libibverbs expects.
 */
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "ibverbs_private.h"
#include "xiw.h"

namespace xiw {

std::unique_ptr<Mr> Mr::create(ibv_pd *pd, void *addr, std::size_t length,
			       std::uint64_t hca_va, int access) noexcept
{
	std::unique_ptr<Mr> mr(new (std::nothrow) Mr{});
	struct ibv_reg_mr cmd {};
	ibv_reg_mr_resp resp{};

	if (!mr) {
		errno = ENOMEM;
		return nullptr;
	}
	const int err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access,
				       &mr->vmr, &cmd, sizeof(cmd), &resp,
				       sizeof(resp));
	if (err != 0) {
		mr.reset();
		errno = err;
		return nullptr;
	}
	return mr;
}

struct ibv_mr *reg_mr(ibv_pd *pd, void *addr, std::size_t length,
		      std::uint64_t hca_va, int access) noexcept
{
	std::unique_ptr<Mr> mr = Mr::create(pd, addr, length, hca_va, access);

	if (!mr) {
		return nullptr;
	}
	return &mr.release()->vmr.ibv_mr;
}

int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
	     std::size_t length, int access) noexcept
{
	struct ibv_rereg_mr cmd {};
	ibv_rereg_mr_resp resp{};

	/* The address is the I/O virtual address, as for ibv_reg_mr(). */
	return ibv_cmd_rereg_mr(vmr, static_cast<std::uint32_t>(flags), addr,
				length, reinterpret_cast<std::uintptr_t>(addr),
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

int dereg_mr(verbs_mr *vmr) noexcept
{
	const int err = ibv_cmd_dereg_mr(vmr);

	/* If the kernel still holds the MR, so does the application. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<Mr> mr(Mr::from(vmr));
	return 0;
}

ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type) noexcept
{
	std::unique_ptr<ibv_mw> mw(new (std::nothrow) ibv_mw{});
	struct ibv_alloc_mw cmd {};
	ib_uverbs_alloc_mw_resp resp{};

	if (!mw) {
		errno = ENOMEM;
		return nullptr;
	}
	const int err = ibv_cmd_alloc_mw(pd, type, mw.get(), &cmd, sizeof(cmd),
					 &resp, sizeof(resp));
	if (err != 0) {
		errno = err;
		return nullptr;
	}
	return mw.release();
}

int dealloc_mw(ibv_mw *mw) noexcept
{
	const int err = ibv_cmd_dealloc_mw(mw);

	/* If the kernel still holds the window, so does the application. */
	if (err != 0) {
		return err;
	}
	const std::unique_ptr<ibv_mw> owned(mw);
	return 0;
}

/*
 * ibv_bind_mw(): type 1 windows only (type 2 binds by IBV_WR_BIND_MW).
 * The window's rkey changes when the request is posted, so that a chain
 * of binds names it right; the kernel gives it that STag when it
 * executes the bind, or fails it with IBV_WC_MW_BIND_ERR.
 */
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept
{
	if (qp == nullptr || mw == nullptr || mw_bind == nullptr ||
	    mw->type != IBV_MW_TYPE_1) {
		return EINVAL;
	}
	const ibv_mw_bind_info &info = mw_bind->bind_info;
	/* As libibverbs' own check, for a caller that bypasses it. */
	if (info.mr != nullptr && info.mr->pd != qp->pd) {
		return EPERM;
	}
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;

	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = info;
	const int err = post_send(qp, &wr, &bad);
	if (err == 0) {
		mw->rkey = wr.bind_mw.rkey;
	}
	// NOLINTEND(cppcoreguidelines-pro-type-union-access)
	return err;
}

} // namespace xiw
