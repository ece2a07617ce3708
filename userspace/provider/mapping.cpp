// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Shared mappings of kernel rings: see mapping.h.
 */
#include "mapping.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

namespace xiw {

MappedArea::MappedArea(MappedArea &&other) noexcept
	: addr_(std::exchange(other.addr_, nullptr)),
	  len_(std::exchange(other.len_, 0))
{
}

MappedArea &MappedArea::operator=(MappedArea &&other) noexcept
{
	if (this != &other) {
		reset();
		addr_ = std::exchange(other.addr_, nullptr);
		len_ = std::exchange(other.len_, 0);
	}
	return *this;
}

MappedArea MappedArea::map(int fd, std::uint64_t key, std::size_t len) noexcept
{
	/* mmap() takes the key as a signed file offset. */
	if (key > static_cast<std::uint64_t>(
			  std::numeric_limits<off_t>::max()) ||
	    len == 0) {
		errno = EINVAL;
		return {};
	}
	void *addr = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			  static_cast<off_t>(key));
	if (addr == MAP_FAILED) {
		return {}; /* errno set by mmap() */
	}
	return {static_cast<std::byte *>(addr), len};
}

void MappedArea::reset() noexcept
{
	if (addr_ != nullptr) {
		/* Fails only for an address range mmap() never returned. */
		munmap(addr_, len_);
		addr_ = nullptr;
		len_ = 0;
	}
}

PageSize page_size() noexcept
{
	const long page = sysconf(_SC_PAGESIZE);

	/* POSIX requires it; 4 KiB is the smallest Linux has. */
	return {page > 0 ? static_cast<std::size_t>(page) : std::size_t{4096}};
}

} // namespace xiw
