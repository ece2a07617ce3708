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

__attribute__((constructor)) void register_xiw() noexcept
{
	verbs_register_driver_34(&xiw::kDeviceOps);
}

} // namespace
