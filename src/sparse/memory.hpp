// The memory this process may use, for refusing, before any allocation, an
// input whose declared size cannot fit (a Matrix Market size line of order
// 3e9 asks for at least 72 GB of column arrays, which Linux's overcommit grants and
// then kills the process for filling).
#pragma once

#include <cstdint>
#include <string>

#include "sparse/types.hpp"

namespace starfront {

/// Bytes of memory this process may use: the machine's physical memory
/// (sysconf _SC_PHYS_PAGES × _SC_PAGE_SIZE), lowered to the control group's
/// limit where one is set (cgroup v2 memory.max, else v1
/// memory.limit_in_bytes). 0 when none of these can be read (unknown).
std::uint64_t usable_memory_bytes();

/// ok when `bytes` fits in usable_memory_bytes() (or that is unknown);
/// otherwise out_of_memory: "`what` needs B bytes (X GB), more than the U
/// bytes of memory this process may use". `bytes` is a double so that callers can pass a
/// product that would overflow 64 bits.
Status check_fits_in_memory(double bytes, const std::string& what);

}  // namespace starfront
