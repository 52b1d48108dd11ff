// tvh::read_file and tvh::write_file_atomic, including the failure paths that must keep the old file.
#include "host/base/files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// Files in `dir` other than `keep` (temporary leftovers would show up here).
std::vector<std::string> other_entries(const std::string& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  }
  return out;
}

}  // namespace

TEST(Files, WriteThenReadBack) {
  const std::string dir = tvtest::temp_dir("files");
  const std::string path = dir + "/out.bin";
  std::vector<uint8_t> data(200000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = (uint8_t)(i * 7 + (i >> 9));
  tvh::write_file_atomic(path, data);
  EXPECT_EQ(tvh::read_file(path), data);
  tvh::write_file_atomic(path, std::string("replaced"));
  EXPECT_EQ(tvh::read_file(path), bytes_of("replaced"));
  tvh::write_file_atomic(path, std::vector<uint8_t>());
  EXPECT_TRUE(tvh::read_file(path).empty());
  EXPECT_TRUE(other_entries(dir, "out.bin").empty());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(Files, KeepsExistingPermissions) {
  const std::string dir = tvtest::temp_dir("files");
  const std::string path = dir + "/script.sh";
  tvh::write_file_atomic(path, std::string("#!/bin/sh\n"));
  ASSERT_EQ(chmod(path.c_str(), 0750), 0);
  tvh::write_file_atomic(path, std::string("#!/bin/sh\necho hi\n"));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
}

TEST(Files, ReadErrorsNameTheFile) {
  const std::string dir = tvtest::temp_dir("files");
  try {
    tvh::read_file(dir + "/missing.bin");
    FAIL();
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.bin"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tvh::read_file(dir), tvh::Error);
  tvh::write_file_atomic(dir + "/big.bin", std::vector<uint8_t>(100, 1));
  EXPECT_THROW(tvh::read_file(dir + "/big.bin", 99), tvh::Error);
  EXPECT_EQ(tvh::read_file(dir + "/big.bin", 100).size(), 100u);
}

TEST(Files, MissingDirectoryFailsCleanly) {
  const std::string dir = tvtest::temp_dir("files");
  try {
    tvh::write_file_atomic(dir + "/no/such/dir/out.bin", std::string("x"));
    FAIL();
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("out.bin"), std::string::npos) << e.what();
  }
}

TEST(Files, FailedWriteKeepsOldFileAndRemovesTemp) {
  const std::string dir = tvtest::temp_dir("files");
  const std::string path = dir + "/model.tvb";
  tvh::write_file_atomic(path, std::string("old contents"));

  // A file-size limit makes write() fail with EFBIG part-way (root is subject to it too).
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  std::string message;
  try {
    tvh::write_file_atomic(path, std::vector<uint8_t>(100000, 42));
  } catch (const tvh::Error& e) {
    threw = true;
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  sigaction(SIGXFSZ, &old_action, nullptr);

  EXPECT_TRUE(threw);
  EXPECT_NE(message.find("model.tvb"), std::string::npos) << message;
  EXPECT_EQ(tvh::read_file(path), bytes_of("old contents"));
  EXPECT_TRUE(other_entries(dir, "model.tvb").empty());
}

TEST(Files, FailedRenameKeepsTargetAndRemovesTemp) {
  const std::string dir = tvtest::temp_dir("files");
  // The target is a non-empty directory: rename() over it fails after the temp file is complete.
  const std::string target = dir + "/taken";
  fs::create_directory(target);
  tvh::write_file_atomic(target + "/inside.txt", std::string("keep me"));
  EXPECT_THROW(tvh::write_file_atomic(target, std::string("new")), tvh::Error);
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(tvh::read_file(target + "/inside.txt"), bytes_of("keep me"));
  EXPECT_TRUE(other_entries(dir, "taken").empty());
}

TEST(Files, UnwritableDirectoryKeepsOldFile) {
  const std::string dir = tvtest::temp_dir("files");
  const std::string path = dir + "/config.json";
  tvh::write_file_atomic(path, std::string("{\"old\": true}"));
  ASSERT_EQ(chmod(dir.c_str(), 0555), 0);
  if (geteuid() != 0) {
    EXPECT_THROW(tvh::write_file_atomic(path, std::string("{\"new\": true}")), tvh::Error);
  } else {
    // root ignores directory permissions: try the write from a child that drops to user "nobody".
    fflush(nullptr);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
      try {
        tvh::write_file_atomic(path, std::string("{\"new\": true}"));
      } catch (const tvh::Error&) {
        _exit(0);
      }
      _exit(1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 3) {
      chmod(dir.c_str(), 0755);
      if (tvtest::in_ci()) FAIL() << "CI=true: running as root and cannot drop to user nobody (uid 65534)";
      GTEST_SKIP() << "running as root and cannot drop to user nobody: skipped";
    }
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the write into a read-only directory did not throw";
  }
  chmod(dir.c_str(), 0755);
  EXPECT_EQ(tvh::read_file(path), bytes_of("{\"old\": true}"));
  EXPECT_TRUE(other_entries(dir, "config.json").empty());
}
