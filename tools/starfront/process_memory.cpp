#include "process_memory.hpp"

#include <fstream>
#include <string>

namespace starfront::tools {
namespace {

/// Value of a "Key:  N kB" line of /proc/self/status, in bytes.
double status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string k;
  double v = 0;
  while (f >> k) {
    if (k == key) return f >> v ? v * 1024.0 : 0.0;
    std::getline(f, k);
  }
  return 0.0;
}

}  // namespace

double current_rss_bytes() { return status_bytes("VmRSS:"); }
double peak_rss_bytes() { return status_bytes("VmHWM:"); }

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5" << std::flush;
  return static_cast<bool>(f);
}

}  // namespace starfront::tools
