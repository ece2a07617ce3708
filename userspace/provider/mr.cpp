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

} // namespace xiw
