// Diagnostics for a stalled benchmark process: the call stack of every
// thread of this process, written to a file descriptor. Header-only;
// benchmarks only (never the library): gpu_bench calls it when a
// factorisation is abandoned by the executor's watchdog, to see where
// StarPU's workers and the CUDA driver's threads wait.
#pragma once

#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace starfront::bench {
namespace detail {

inline std::atomic<int> g_stack_fd{2};
inline std::atomic<bool> g_stack_done{false};
inline std::atomic<long> g_stack_target{-1};  ///< the thread asked now (a late answer of another is dropped)

/// Signal handler: this thread's return addresses, written raw (one
/// "lib(+offset)" line each, symbolised where the library exports the
/// function; resolve the rest offline with addr2line on the same library).
inline void write_own_stack(int) {
  if (static_cast<long>(syscall(SYS_gettid)) != g_stack_target.load()) return;  // answered too late
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, g_stack_fd.load());
  g_stack_done.store(true);
}

/// First line of /proc/self/task/TID/FILE, or "?".
inline std::string task_file(const char* tid, const char* file) {
  const std::string path = std::string("/proc/self/task/") + tid + "/" + file;
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return "?";
  char buf[256] = {0};
  const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  std::string s = ok ? buf : "?";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace detail

/// Writes, for every thread of this process, its name, kernel state and
/// wait channel (/proc/self/task/TID/{comm,stat,wchan}) and its call stack
/// (glibc backtrace() run in the thread by a real-time signal, one thread at
/// a time; a thread that blocks the signal, e.g. some of the CUDA driver's,
/// is reported as not answering within 2 s). For a process that is stuck
/// anyway: the handler is not async-signal-safe on the first call (backtrace
/// may load libgcc), so it is primed here first.
inline void dump_thread_stacks(int fd) {
  {
    void* warm[4];
    (void)backtrace(warm, 4);
  }
  detail::g_stack_fd.store(fd);
  const int sig = SIGRTMIN + 7;
  struct sigaction sa {};
  sa.sa_handler = detail::write_own_stack;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  struct sigaction old {};
  sigaction(sig, &sa, &old);
  const pid_t pid = getpid();
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  DIR* d = opendir("/proc/self/task");
  if (!d) return;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    const std::string stat = detail::task_file(e->d_name, "stat");
    const std::size_t close_paren = stat.rfind(')');
    const char state = close_paren != std::string::npos && close_paren + 2 < stat.size() ? stat[close_paren + 2] : '?';
    dprintf(fd, "--- thread %d '%s' state %c wchan %s%s\n", tid, detail::task_file(e->d_name, "comm").c_str(), state,
            detail::task_file(e->d_name, "wchan").c_str(), tid == self ? " (this thread: dumping)" : "");
    if (tid == self) continue;
    detail::g_stack_done.store(false);
    detail::g_stack_target.store(static_cast<long>(tid));
    if (syscall(SYS_tgkill, pid, tid, sig) != 0) {
      dprintf(fd, "(cannot signal it: %s)\n", std::strerror(errno));
      continue;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!detail::g_stack_done.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!detail::g_stack_done.load()) dprintf(fd, "(no answer within 2 s: the signal is blocked)\n");
  }
  closedir(d);
  // A late handler may still run; it only writes to fd.
}

}  // namespace starfront::bench
