// Results on a full disk and inputs that are not files (issue 20), through the real binaries:
// every write to stdout is checked, to its final flush and close (/dev/full refuses every write: exit 1
// with a sentence, no success hint); a FIFO (or a symbolic link loop) given as any file input is refused
// in one sentence and never waited on. Each command runs under `timeout`, so a regression fails instead
// of hanging the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::string q(const std::string& s) {
  return tvtest::quoted(s);
}
std::string bin(const std::string& tool) {
  return "timeout 30 " + q(tvtest::bin_path(tool));
}
using tvtest::contains;
constexpr int kTimedOut = 124;  // timeout(1)'s status: the command hung

// A float model, its int8 twin and an .espdl of it, made by the real tools from a small dataset.
struct Made {
  std::string ds, dir, float_model, int8_model, espdl;
};
const Made& made() {
  static Made m = [] {
    Made x;
    x.ds = tvtest::shapes_subset("sf-ds", 4);
    x.dir = tvtest::temp_dir("sf");
    x.float_model = x.dir + "/m.tvb";
    x.int8_model = x.dir + "/m.q8.tvb";
    x.espdl = x.dir + "/m.espdl";
    tvtest::run_capture(bin("tvtrain") + " " + q(x.ds) + " --preset webmcu --epochs 1 -q -o " + q(x.float_model));
    tvtest::run_capture(bin("tvquant") + " " + q(x.float_model) + " --calib " + q(x.ds) + " -q -o " + q(x.int8_model));
    tvtest::run_capture(bin("tvexport") + " " + q(x.int8_model) + " -o " + q(x.espdl));
    return x;
  }();
  return m;
}

}  // namespace

TEST(StdoutErrors, AFullDiskOnStdoutIsExitOneWithASentenceAndNoSuccessHint) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  TV_REQUIRE_BINARY("tvexport");
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full is not available";
  const Made& m = made();
  ASSERT_TRUE(fs::exists(m.espdl));
  const std::string photo = m.ds + "/1circle/img_000.jpg";
  const std::vector<std::string> cmds = {
      bin("tvexport") + " " + q(m.float_model) + " -o -",
      bin("tvexport") + " " + q(m.float_model) + " --style webmcu -o -",
      bin("tvexport") + " info " + q(m.float_model),
      bin("tvexport") + " info --json " + q(m.int8_model),
      bin("tvexport") + " verify " + q(m.espdl),
      bin("tvexport") + " verify --json " + q(m.espdl),
      bin("tvtrain") + " classify " + q(m.float_model) + " " + q(photo),
      bin("tvtrain") + " classify " + q(m.int8_model) + " " + q(photo) + " --json",
      bin("tvtrain") + " " + q(m.ds) + " --init " + q(m.float_model) + " --eval --json -q",
      bin("tvtrain") + " " + q(m.ds) + " --preset webmcu --epochs 1 --kfold 2 --json -q",
      bin("tvquant") + " " + q(m.float_model) + " --calib " + q(m.ds) + " -q -o " + q(m.dir + "/full.q8.tvb"),
      bin("tvquant") + " " + q(m.float_model) + " --calib " + q(m.ds) + " --json -q -o " + q(m.dir + "/full2.q8.tvb"),
  };
  for (const std::string& cmd : cmds) {
    // Control: the same command succeeds when stdout takes its bytes.
    const tvtest::CommandResult ok = tvtest::run_capture(cmd);
    ASSERT_EQ(ok.status, 0) << cmd << "\n" << ok.err;
    ASSERT_FALSE(ok.out.empty()) << cmd;
    const tvtest::CommandResult r = tvtest::run_capture(cmd + " > /dev/full");
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "cannot write the results to standard output: No space left on device."))
        << cmd << r.err;
    EXPECT_FALSE(contains(r.err, "to bake it into the firmware")) << cmd << "\n" << r.err;
  }
}

TEST(FifoInputs, AFifoAsAnyFileInputIsRefusedInOneSentenceNeverWaitedOn) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  TV_REQUIRE_BINARY("tvexport");
  const Made& m = made();
  const std::string dir = tvtest::temp_dir("sf-fifo");
  const std::string fifo_model = dir + "/model.tvb", fifo_config = dir + "/cfg.json", fifo_image = dir + "/p.jpg",
                    fifo_espdl = dir + "/x.espdl";
  for (const std::string& f : {fifo_model, fifo_config, fifo_image, fifo_espdl})
    ASSERT_EQ(mkfifo(f.c_str(), 0644), 0) << f;
  struct Case {
    std::string cmd, fifo;
  };
  const std::vector<Case> cases = {
      {bin("tvexport") + " " + q(fifo_model) + " -o " + q(dir + "/o.h"), fifo_model},
      {bin("tvexport") + " info " + q(fifo_model), fifo_model},
      {bin("tvexport") + " verify " + q(fifo_espdl), fifo_espdl},
      {bin("tvquant") + " " + q(fifo_model) + " --calib " + q(m.ds) + " -o " + q(dir + "/o.tvb"), fifo_model},
      {bin("tvquant") + " prune " + q(fifo_model) + " " + q(m.ds) + " -o " + q(dir + "/o.tvb"), fifo_model},
      {bin("tvtrain") + " " + q(m.ds) + " --init " + q(fifo_model) + " --eval", fifo_model},
      {bin("tvtrain") + " " + q(m.ds) + " --init " + q(fifo_model) + " --epochs 1 -o " + q(dir + "/o.tvb"), fifo_model},
      {bin("tvtrain") + " " + q(m.ds) + " --config " + q(fifo_config) + " -o " + q(dir + "/o.tvb"), fifo_config},
      {bin("tvtrain") + " classify " + q(fifo_model) + " " + q(m.ds + "/0blank/img_000.jpg"), fifo_model},
      {bin("tvtrain") + " classify " + q(m.float_model) + " " + q(fifo_image), fifo_image},
  };
  for (const Case& c : cases) {
    const tvtest::CommandResult r = tvtest::run_capture(c.cmd);
    ASSERT_NE(r.status, kTimedOut) << "hung on a FIFO: " << c.cmd;
    EXPECT_EQ(r.status, 1) << c.cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "'" + c.fifo + "': it is a FIFO (named pipe), not a regular file")) << c.cmd << r.err;
    EXPECT_FALSE(fs::exists(dir + "/o.tvb") || fs::exists(dir + "/o.h")) << c.cmd;
  }
}

TEST(FifoInputs, ASymbolicLinkLoopIsCalledALoopNotAMissingFile) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvexport");
  const Made& m = made();
  const std::string dir = tvtest::temp_dir("sf-loop");
  fs::create_symlink(dir + "/b", dir + "/a");
  fs::create_symlink(dir + "/a", dir + "/b");
  const std::vector<std::string> cmds = {
      bin("tvexport") + " " + q(dir + "/a") + " -o " + q(dir + "/o.h"),
      bin("tvexport") + " " + q(m.float_model) + " -o " + q(dir + "/a"),
      bin("tvtrain") + " " + q(dir + "/a") + " -o " + q(dir + "/o.tvb"),
      bin("tvtrain") + " classify " + q(m.float_model) + " " + q(dir + "/a"),
  };
  for (const std::string& cmd : cmds) {
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "symbolic link loop")) << cmd << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "missing") || contains(r.err, "does not exist")) << cmd << "\n" << r.err;
  }
}

TEST(StdoutErrors, JsonResultsNameFilesThatAreNotUtf8) {
  // A file name in another encoding (a byte 0xFF) in the dataset, the model's path or an image to
  // classify: --json is still written (the bad byte as U+FFFD), exit 0; never a json exception after the work.
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const Made& m = made();
  const std::string ds = tvtest::shapes_subset("sf-utf8-ds", 4);
  const std::string dir = tvtest::temp_dir("sf-utf8");
  tvtest::write_text(ds + "/0blank/notes\xff.txt", "not a photo");  // listed as skipped in the JSON
  const std::string model = dir + "/m\xff.tvb";
  fs::copy_file(m.float_model, model);
  fs::copy_file(m.ds + "/1circle/img_000.jpg", dir + "/photo\xff.jpg");
  const std::vector<std::string> commands = {
      bin("tvtrain") + " " + q(ds) + " --preset webmcu --epochs 1 -q --json --no-report -o " + q(dir + "/t.tvb"),
      bin("tvtrain") + " classify " + q(model) + " " + q(dir + "/photo\xff.jpg") + " --json",
      bin("tvquant") + " " + q(model) + " --calib " + q(ds) + " -q --json -o " + q(dir + "/q.tvb")};
  for (const std::string& cmd : commands) {
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "json.exception")) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << cmd << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "\xef\xbf\xbd")) << "the 0xFF byte as U+FFFD: " << r.out;
  }
}
