// Helpers shared by the test suites: where things are, and skipping when ../shared is absent.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace tvtest {

// FNV-1a over the bits of 32-bit floats: the checksums the pinned same-bits tests compare.
struct Fnv1a {
  uint32_t h = 2166136261u;
  void add(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    h = (h ^ u) * 16777619u;
  }
};
// Absolute path of a file in the source tree.
std::string source_path(const std::string& rel);
// Absolute path of ../shared/<rel>; "" when ../shared is absent.
std::string shared_path(const std::string& rel);
// Path of a built tool (build/bin/<name>).
std::string bin_path(const std::string& name);
// `s` in single quotes for a shell command line (paths from temp_dir hold no quote).
std::string quoted(const std::string& s);
// The quoted path of a built tool, ready to start a command line.
std::string tool_command(const std::string& name);
// True when `needle` occurs in `hay`.
bool contains(const std::string& hay, const std::string& needle);
// True when build/bin/<name> exists.
bool binary_exists(const std::string& name);
// A fresh empty directory under the system temp dir, removed at process exit.
std::string temp_dir(const std::string& tag);
// True when CI=true is set: data that must be present makes a missing ../shared a failure.
bool in_ci();
// A whole file as bytes ("" when it cannot be read); writes bytes as a file.
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
// Runs a shell command; returns its exit status and captures stdout (and stderr when asked).
int run_command(const std::string& cmd, std::string* out = nullptr, std::string* err = nullptr);
// A finished command: exit status, stdout and stderr.
struct CommandResult {
  int status = -1;
  std::string out, err;
};
CommandResult run_capture(const std::string& cmd);
// Runs a shell command and parses its stdout as JSON. A non-zero exit gives null JSON and, when rc
// is not asked for, a test failure naming the command and its stderr; output that is not JSON is
// always a failure.
nlohmann::json run_json(const std::string& cmd, int* rc = nullptr, std::string* err = nullptr);
// The message of the exception `op` throws; "(no error)" when it throws none.
std::string thrown_message(const std::function<void()>& op);
// Every first capture group of `pattern` (std::regex) in `text`, as a set.
std::set<std::string> regex_captures(const std::string& text, const std::string& pattern);
// The bytes of a "data:...;base64,..." URI (the HTML report's pictures).
std::vector<uint8_t> decode_data_uri(const std::string& uri);
// A fresh copy of datasets/shapes holding the first `per_class` images (by name) of each class.
std::string shapes_subset(const std::string& tag, int per_class);
// Espressif's golden .espdl files in ../shared/espdl-golden the tests read: the first kEspdlGemmFiles
// hold only Gemm nodes, the last one a streaming convolution.
constexpr int kEspdlGemmFiles = 7;
extern const char* const kEspdlGoldenFiles[kEspdlGemmFiles + 1];
// A small file system of its own: a tmpfs of `free_bytes` (rounded up to whole pages) mounted on a
// fresh temp dir, for the full-disk tests. `dir` is "" when it cannot be mounted (not root, no mount
// permission in a container): the test skips. Unmounted when it goes out of scope.
struct SmallDisk {
  std::string dir;
  SmallDisk(const std::string& tag, uint64_t free_bytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
};
// A googletest parameter name from a file name: the part before the first '.', with every character
// other than a letter or digit as '_'.
std::string file_param_name(const ::testing::TestParamInfo<const char*>& info);
}  // namespace tvtest

// Skips the current test (or fails under CI=true) when a binary the test runs is not built
// (build/bin/<name>; the test targets depend on the binaries they spawn, so this is a partial build).
#define TV_REQUIRE_BINARY(name)                                                                      \
  do {                                                                                               \
    if (!tvtest::binary_exists(name)) {                                                              \
      if (tvtest::in_ci()) FAIL() << "CI=true but " << tvtest::bin_path(name) << " is not built";    \
      GTEST_SKIP() << tvtest::bin_path(name) << " is not built (build the " << (name) << " target)"; \
    }                                                                                                \
  } while (0)

// Skips the current test (or fails in CI) when ../shared is not present.
#define TV_REQUIRE_SHARED(rel)                                                           \
  do {                                                                                   \
    if (tvtest::shared_path(rel).empty()) {                                              \
      if (tvtest::in_ci()) FAIL() << "CI=true but ../shared/" << (rel) << " is missing"; \
      GTEST_SKIP() << "../shared/" << (rel) << " is absent (a fresh clone): skipped";    \
    }                                                                                    \
  } while (0)
