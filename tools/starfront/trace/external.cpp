#include "external.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace starfront::trace {
namespace {

bool is_executable(const std::string& path) {
  struct stat sb;
  return !path.empty() && ::stat(path.c_str(), &sb) == 0 && S_ISREG(sb.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_program(const std::string& name, const std::vector<std::string>& candidates,
                         const char* override_env) {
  if (override_env) {
    if (const char* o = std::getenv(override_env); o && *o) return is_executable(o) ? o : "";
  }
  for (const std::string& c : candidates)
    if (is_executable(c)) return c;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t b = 0;
  while (b <= dirs.size()) {
    std::size_t e = dirs.find(':', b);
    if (e == std::string::npos) e = dirs.size();
    const std::string d = dirs.substr(b, e - b);
    if (!d.empty() && is_executable(d + "/" + name)) return d + "/" + name;
    b = e + 1;
  }
  return {};
}

Status run_program(const std::string& program, const std::vector<std::string>& args,
                   const std::string& log_file) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  const char* out = log_file.empty() ? "/dev/null" : log_file.c_str();
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0)
    return Status::error(StatusCode::runtime_error,
                         "cannot run '" + program + "': " + std::strerror(err));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return Status::error(StatusCode::runtime_error, "waiting for '" + program + "' failed");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::success();
  const std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                            : "was killed by signal " + std::to_string(WTERMSIG(status));
  return Status::error(StatusCode::runtime_error,
                       "'" + program + "' " + how + (log_file.empty() ? "" : " (output in " + log_file + ")"));
}

std::string find_fxt_tool() {
  std::vector<std::string> candidates;
#ifdef STARFRONT_STARPU_BINDIR
  candidates.push_back(std::string(STARFRONT_STARPU_BINDIR) + "/starpu_fxt_tool");
#endif
  return find_program("starpu_fxt_tool", candidates, "STARFRONT_FXT_TOOL");
}

Status convert_fxt_trace(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string raw;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("prof_file_", 0) == 0) {
      if (!raw.empty())
        return Status::error(StatusCode::io_error, "several raw FxT traces (prof_file_*) in '" + dir + "'");
      raw = e.path().string();
    }
  if (ec) return Status::error(StatusCode::io_error, "cannot list '" + dir + "': " + ec.message());
  if (raw.empty())
    return Status::error(StatusCode::io_error,
                         "no raw FxT trace (prof_file_*) in '" + dir +
                             "': is StarPU built with FxT (--with-fxt)?");
  const std::string tool = find_fxt_tool();
  if (tool.empty())
    return Status::error(StatusCode::runtime_error,
                         "starpu_fxt_tool not found (looked at $STARFRONT_FXT_TOOL, "
#ifdef STARFRONT_STARPU_BINDIR
                         STARFRONT_STARPU_BINDIR
#else
                         "the StarPU prefix"
#endif
                         " and PATH); the raw trace is " + raw +
                             ": convert it with 'starpu_fxt_tool -i " + raw + " -d " + dir + "'");
  const std::string log = dir + "/starpu_fxt_tool.log";
  fs::remove(log, ec);
  if (Status st = run_program(tool, {"-i", raw, "-d", dir}, log); !st.ok()) {
    st.message += "; the raw trace is kept in " + raw;
    if (st.message.find("signal") != std::string::npos)
      st.message += " (StarPU 1.4.10's converter overflows a stack buffer on tasks with many data "
                    "handles unless built with tools/deps/patches/starpu-fxt-string-overflow.sh)";
    return st;
  }
  for (const char* f : {"paje.trace", "dag.dot", "tasks.rec", "trace.rec", "activity.data"})
    if (!fs::exists(dir + "/" + f, ec))
      return Status::error(StatusCode::io_error, "starpu_fxt_tool did not write " + dir + "/" + f +
                                                     " (output in " + log + ")");
  return Status::success();
}

}  // namespace starfront::trace
