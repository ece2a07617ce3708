# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The provider declares libibverbs's private ABI itself
# (provider/ibverbs_private.h), and that layout is right for a range of
# rdma-core releases only. These functions find out which libibverbs the
# build would load into and refuse to configure outside the range, which is
# read from provider/rdma_core_version.h so that it is written down once.

set(_XIW_RANGE_HEADER "${CMAKE_CURRENT_LIST_DIR}/../provider/rdma_core_version.h")

# Sets <out_min> and <out_max> to the supported rdma-core majors.
function(xiw_rdma_core_range out_min out_max)
	file(STRINGS "${_XIW_RANGE_HEADER}" lines
		REGEX "^inline constexpr std::uint32_t kRdmaCoreMajor(Min|Max) = [0-9]+;$")
	foreach(line IN LISTS lines)
		if(line MATCHES "kRdmaCoreMajorMin = ([0-9]+);")
			set(min "${CMAKE_MATCH_1}")
		elseif(line MATCHES "kRdmaCoreMajorMax = ([0-9]+);")
			set(max "${CMAKE_MATCH_1}")
		endif()
	endforeach()
	if(NOT DEFINED min OR NOT DEFINED max)
		message(FATAL_ERROR
			"Cannot read kRdmaCoreMajorMin/kRdmaCoreMajorMax from ${_XIW_RANGE_HEADER}")
	endif()
	set(${out_min} "${min}" PARENT_SCOPE)
	set(${out_max} "${max}" PARENT_SCOPE)
endfunction()

# libibverbs is versioned 1.<library ABI minor>.<rdma-core major>[.<minor>]
# (1.14.44.0 is rdma-core 44.0). Sets <out> to the rdma-core major, or to ""
# if <version> is not of that form. Mirrors
# xiw::rdma_core_major_from_libibverbs_version().
function(xiw_rdma_core_major out version)
	if(version MATCHES "^1\\.[0-9]+\\.([0-9]+)(\\.[0-9]+)?$")
		set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
	else()
		set(${out} "" PARENT_SCOPE)
	endif()
endfunction()

# Stops with FATAL_ERROR unless libibverbs <version> (found via <source>)
# is in the supported range.
function(xiw_require_supported_libibverbs version source)
	xiw_rdma_core_range(min max)
	xiw_rdma_core_major(major "${version}")
	if(major STREQUAL "")
		message(FATAL_ERROR
			"libibverbs version '${version}' (from ${source}) is not of the "
			"form 1.<abi>.<rdma-core major>.<minor>, so the build cannot tell "
			"whether the xiw provider's private-ABI layout fits it.")
	endif()
	if(major LESS min OR major GREATER max)
		message(FATAL_ERROR
			"libibverbs ${version} (from ${source}) is rdma-core ${major}; the "
			"xiw provider's private-ABI layout (provider/ibverbs_private.h) is "
			"valid for rdma-core ${min} to ${max} only. Build against a "
			"libibverbs-dev in that range, or port the layout and then widen "
			"the range in provider/rdma_core_version.h.")
	endif()
	message(STATUS
		"libibverbs ${version} (rdma-core ${major}, from ${source}): within ${min}..${max}")
endfunction()

# Sets <out_version> and <out_source> for the installed libibverbs:
# pkg-config's answer, or else the version in the file name that
# <library> (the libibverbs.so to link) resolves to.
function(xiw_installed_libibverbs_version out_version out_source library)
	find_package(PkgConfig QUIET)
	if(PKG_CONFIG_FOUND)
		execute_process(
			COMMAND "${PKG_CONFIG_EXECUTABLE}" --modversion libibverbs
			OUTPUT_VARIABLE version
			RESULT_VARIABLE rc
			OUTPUT_STRIP_TRAILING_WHITESPACE
			ERROR_QUIET)
		if(rc EQUAL 0 AND NOT version STREQUAL "")
			set(${out_version} "${version}" PARENT_SCOPE)
			set(${out_source} "pkg-config" PARENT_SCOPE)
			return()
		endif()
	endif()
	if(library)
		file(REAL_PATH "${library}" real)
		get_filename_component(name "${real}" NAME)
		if(name MATCHES "^libibverbs\\.so\\.(.+)$")
			set(${out_version} "${CMAKE_MATCH_1}" PARENT_SCOPE)
			set(${out_source} "${real}" PARENT_SCOPE)
			return()
		endif()
	endif()
	message(FATAL_ERROR
		"Cannot tell the libibverbs version: pkg-config knows no libibverbs "
		"and '${library}' does not resolve to libibverbs.so.<version>. "
		"Install libibverbs-dev.")
endfunction()
