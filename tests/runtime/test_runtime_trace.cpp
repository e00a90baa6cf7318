// StarpuRuntime's trace option: the raw FxT file lands in the trace folder
// at shutdown, the STARPU_FXT_* variables are set for starpu_init only, and
// a runtime without a trace folder records nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "runtime/starpu/runtime.hpp"

namespace starfront {
namespace {

namespace fs = std::filesystem;

std::string tmp(const std::string& name) { return std::string(STARFRONT_TEST_TMPDIR) + "/" + name; }

TEST(RuntimeTrace, RawTraceIsWrittenIntoTheFolderAtShutdown) {
  const std::string dir = tmp("runtime_trace/nested");
  fs::remove_all(tmp("runtime_trace"));
  unsetenv("STARPU_FXT_PREFIX");
  unsetenv("STARPU_FXT_SUFFIX");
  std::unique_ptr<StarpuRuntime> rt;
  const Status st = StarpuRuntime::start(RuntimeOptions(1, 0, "lws", dir), rt);
  ASSERT_TRUE(st.ok()) << st.message;
  EXPECT_TRUE(fs::is_directory(dir));
  // Restored right after starpu_init: nothing leaks into later starts.
  EXPECT_EQ(std::getenv("STARPU_FXT_PREFIX"), nullptr);
  EXPECT_EQ(std::getenv("STARPU_FXT_SUFFIX"), nullptr);
  ASSERT_NE(std::getenv("STARPU_FXT_TRACE"), nullptr);
  EXPECT_STREQ(std::getenv("STARPU_FXT_TRACE"), "0");
  rt.reset();
  ASSERT_TRUE(fs::exists(dir + "/prof_file_0"));
  EXPECT_GT(fs::file_size(dir + "/prof_file_0"), 0u);
}

TEST(RuntimeTrace, NoTraceFolderRecordsNothing) {
  const std::string dir = tmp("runtime_no_trace");
  fs::remove_all(dir);
  fs::create_directories(dir);
  setenv("STARPU_FXT_PREFIX", dir.c_str(), 1);  // where StarPU would write if it traced
  unsetenv("STARPU_FXT_TRACE");
  std::unique_ptr<StarpuRuntime> rt;
  ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions(1, 0, "lws"), rt).ok());
  rt.reset();
  EXPECT_TRUE(fs::is_empty(dir));
  unsetenv("STARPU_FXT_PREFIX");
}

TEST(RuntimeTrace, UncreatableFolderIsAnIoError) {
  std::unique_ptr<StarpuRuntime> rt;
  const Status st = StarpuRuntime::start(RuntimeOptions(1, 0, "lws", "/proc/no/such/folder"), rt);
  EXPECT_EQ(st.code, StatusCode::io_error);
  EXPECT_NE(st.message.find("/proc/no/such/folder"), std::string::npos) << st.message;
  EXPECT_EQ(rt, nullptr);
}

}  // namespace
}  // namespace starfront
