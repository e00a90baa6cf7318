// The process's resident memory (Linux /proc), for the measured peak that
// `starfront solve --json` reports beside the planned memory.
#pragma once

namespace starfront::tools {

/// Resident set size now, bytes (VmRSS); 0 when /proc/self/status is unreadable.
double current_rss_bytes();

/// Peak resident set size since start or since the last reset, bytes
/// (VmHWM); 0 when unreadable.
double peak_rss_bytes();

/// Resets the peak to the current resident set (writes "5" to
/// /proc/self/clear_refs, Linux >= 4.0). False when that is not permitted:
/// the peak then covers the whole process lifetime and is not reported.
bool reset_peak_rss();

}  // namespace starfront::tools
