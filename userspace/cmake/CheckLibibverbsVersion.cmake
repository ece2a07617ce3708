# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# cmake -DVERSION=<libibverbs version> -P CheckLibibverbsVersion.cmake
#
# Runs the configure-time version check on a given version string, so that
# the tests can show which versions it accepts and which it refuses.
include("${CMAKE_CURRENT_LIST_DIR}/LibibverbsVersion.cmake")
xiw_require_supported_libibverbs("${VERSION}" "the command line")
