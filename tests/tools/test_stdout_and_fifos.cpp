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

std::string bin(const std::string& tool) {
  return "timeout 30 " + tvtest::quoted(tvtest::bin_path(tool));
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
    tvtest::run_capture(bin("tvtrain") + " " + tvtest::quoted(x.ds) + " --preset webmcu --epochs 1 -q -o " +
                        tvtest::quoted(x.float_model));
    tvtest::run_capture(bin("tvquant") + " " + tvtest::quoted(x.float_model) + " --calib " + tvtest::quoted(x.ds) +
                        " -q -o " + tvtest::quoted(x.int8_model));
    tvtest::run_capture(bin("tvexport") + " " + tvtest::quoted(x.int8_model) + " -o " + tvtest::quoted(x.espdl));
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
      bin("tvexport") + " " + tvtest::quoted(m.float_model) + " -o -",
      bin("tvexport") + " " + tvtest::quoted(m.float_model) + " --style webmcu -o -",
      bin("tvexport") + " info " + tvtest::quoted(m.float_model),
      bin("tvexport") + " info --json " + tvtest::quoted(m.int8_model),
      bin("tvexport") + " verify " + tvtest::quoted(m.espdl),
      bin("tvexport") + " verify --json " + tvtest::quoted(m.espdl),
      bin("tvtrain") + " classify " + tvtest::quoted(m.float_model) + " " + tvtest::quoted(photo),
      bin("tvtrain") + " classify " + tvtest::quoted(m.int8_model) + " " + tvtest::quoted(photo) + " --json",
      bin("tvtrain") + " " + tvtest::quoted(m.ds) + " --init " + tvtest::quoted(m.float_model) + " --eval --json -q",
      bin("tvtrain") + " " + tvtest::quoted(m.ds) + " --preset webmcu --epochs 1 --kfold 2 --json -q",
      bin("tvquant") + " " + tvtest::quoted(m.float_model) + " --calib " + tvtest::quoted(m.ds) + " -q -o " +
          tvtest::quoted(m.dir + "/full.q8.tvb"),
      bin("tvquant") + " " + tvtest::quoted(m.float_model) + " --calib " + tvtest::quoted(m.ds) + " --json -q -o " +
          tvtest::quoted(m.dir + "/full2.q8.tvb"),
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
      {bin("tvexport") + " " + tvtest::quoted(fifo_model) + " -o " + tvtest::quoted(dir + "/o.h"), fifo_model},
      {bin("tvexport") + " info " + tvtest::quoted(fifo_model), fifo_model},
      {bin("tvexport") + " verify " + tvtest::quoted(fifo_espdl), fifo_espdl},
      {bin("tvquant") + " " + tvtest::quoted(fifo_model) + " --calib " + tvtest::quoted(m.ds) + " -o " +
           tvtest::quoted(dir + "/o.tvb"),
       fifo_model},
      {bin("tvquant") + " prune " + tvtest::quoted(fifo_model) + " " + tvtest::quoted(m.ds) + " -o " +
           tvtest::quoted(dir + "/o.tvb"),
       fifo_model},
      {bin("tvtrain") + " " + tvtest::quoted(m.ds) + " --init " + tvtest::quoted(fifo_model) + " --eval", fifo_model},
      {bin("tvtrain") + " " + tvtest::quoted(m.ds) + " --init " + tvtest::quoted(fifo_model) + " --epochs 1 -o " +
           tvtest::quoted(dir + "/o.tvb"),
       fifo_model},
      {bin("tvtrain") + " " + tvtest::quoted(m.ds) + " --config " + tvtest::quoted(fifo_config) + " -o " +
           tvtest::quoted(dir + "/o.tvb"),
       fifo_config},
      {bin("tvtrain") + " classify " + tvtest::quoted(fifo_model) + " " + tvtest::quoted(m.ds + "/0blank/img_000.jpg"),
       fifo_model},
      {bin("tvtrain") + " classify " + tvtest::quoted(m.float_model) + " " + tvtest::quoted(fifo_image), fifo_image},
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
      bin("tvexport") + " " + tvtest::quoted(dir + "/a") + " -o " + tvtest::quoted(dir + "/o.h"),
      bin("tvexport") + " " + tvtest::quoted(m.float_model) + " -o " + tvtest::quoted(dir + "/a"),
      bin("tvtrain") + " " + tvtest::quoted(dir + "/a") + " -o " + tvtest::quoted(dir + "/o.tvb"),
      bin("tvtrain") + " classify " + tvtest::quoted(m.float_model) + " " + tvtest::quoted(dir + "/a"),
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
      bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -q --json --no-report -o " +
          tvtest::quoted(dir + "/t.tvb"),
      bin("tvtrain") + " classify " + tvtest::quoted(model) + " " + tvtest::quoted(dir + "/photo\xff.jpg") + " --json",
      bin("tvquant") + " " + tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) + " -q --json -o " +
          tvtest::quoted(dir + "/q.tvb")};
  for (const std::string& cmd : commands) {
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "json.exception")) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << cmd << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "\xef\xbf\xbd")) << "the 0xFF byte as U+FFFD: " << r.out;
  }
}
