#include "sparse/memory.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace starfront {

namespace {

/// The first line of `path` as an unsigned number; 0 when it cannot be read
/// or is not a number ("max": no limit).
std::uint64_t read_limit(const char* path) {
  std::ifstream f(path);
  unsigned long long v = 0;
  if (!(f >> v)) return 0;
  return v;
}

}  // namespace

std::uint64_t usable_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const std::uint64_t limit = read_limit(path);
    if (limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  }
  return bytes;
}

Status check_fits_in_memory(double bytes, const std::string& what) {
  const std::uint64_t usable = usable_memory_bytes();
  if (usable == 0 || bytes <= static_cast<double>(usable)) return Status::success();
  char buf[160];
  std::snprintf(buf, sizeof buf, " needs %.0f bytes (%.3g GB), more than the %llu bytes of memory this process may use",
                bytes, bytes / 1e9, static_cast<unsigned long long>(usable));
  return Status::error(StatusCode::out_of_memory, what + buf);
}

}  // namespace starfront
