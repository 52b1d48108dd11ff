// Nothing a user owns is damaged (issue 13): outputs are regular files only, never an input, named by
// their format, checked before any long work; stale temporaries are cleaned; a model with an infinite or
// NaN weight is refused by every tool that loads it; the exit statuses are the same across the tools.
// Everything runs through the real binaries as child processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/model/model_io.h"
#include "test_support.h"
#include "tv/formats/raw_weights.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;

namespace {

std::string bin(const std::string& tool) {
  return tvtest::quoted(tvtest::bin_path(tool));
}
const std::vector<std::string> kShapeClasses = {"0blank", "1circle", "2cross"};

// A he-initialized webmcu model for the shapes classes; `poison` >= 0 puts `value` at that parameter.
std::string make_model(const std::string& path, long poison = -1, float value = NAN) {
  tv::ModelDesc d;
  tv::webmcu_model((int)kShapeClasses.size(), &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count);
  tv::he_init(*plan, p.data(), 3);
  if (poison >= 0) p[(size_t)poison] = value;
  // encode_float_blob does not judge the values: the readers must.
  const std::vector<uint8_t> bytes =
      tvh::encode_float_blob(*plan, p.data(), kShapeClasses, "tool=test\npreset=webmcu\n");
  std::ofstream(path, std::ios::binary).write((const char*)bytes.data(), (std::streamsize)bytes.size());
  return path;
}

std::vector<uint8_t> bytes_of(const std::string& path) {
  return tvh::read_file(path);
}

using tvtest::contains;

using Result = tvtest::CommandResult;
Result run(const std::string& cmd) {
  return tvtest::run_capture(cmd);
}

bool is_char_device(const std::string& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

// ---- outputs: only regular files

TEST(NeverDamage, ADeviceNodeAsOutputIsRefusedAndStaysADevice) {
  if (geteuid() != 0) {
    if (tvtest::in_ci()) FAIL() << "CI=true: this test makes a device node with mknod and must run as root";
    GTEST_SKIP() << "not root: cannot make a device node with mknod, skipped";
  }
  const std::string dir = tvtest::temp_dir("nd-device");
  const std::string dev = dir + "/full", model = make_model(dir + "/m.tvb");
  ASSERT_EQ(mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << "mknod /dev/full's twin";  // like /dev/full
  const std::string ds = tvtest::shapes_subset("nd-device-ds", 4);
  for (const std::string& cmd :
       {bin("tvexport") + " " + tvtest::quoted(model) + " --format header -o " + tvtest::quoted(dev),
        bin("tvexport") + " " + tvtest::quoted(model) + " --format webmcu-bin -o " + tvtest::quoted(dev),
        bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -q -o " + tvtest::quoted(dev),
        bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -q -o " +
            tvtest::quoted(dir + "/x.tvb") + " --curve " + tvtest::quoted(dev),
        bin("tvquant") + " " + tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) + " -o " +
            tvtest::quoted(dev)}) {
    const Result r = run(cmd);
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "character device")) << cmd << "\n" << r.err;
    EXPECT_TRUE(is_char_device(dev)) << "replaced by: " << cmd;
  }
  EXPECT_FALSE(fs::exists(dir + "/x.tvb"));
}

TEST(NeverDamage, AFifoOrADirectoryAsOutputIsRefusedNamingWhatItIs) {
  const std::string dir = tvtest::temp_dir("nd-fifo");
  const std::string fifo = dir + "/pipe.h", folder = dir + "/folder.h", model = make_model(dir + "/m.tvb");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  fs::create_directories(folder);
  Result r = run(bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(fifo));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "a FIFO")) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  r = run(bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(folder));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "a directory")) << r.err;
  EXPECT_TRUE(fs::is_directory(folder));
  // The library function refuses too, whoever calls it.
  EXPECT_THROW(tvh::write_file_atomic(fifo, std::string("x")), tvh::Error);
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(NeverDamage, ASymlinkToAFileIsFollowedAndKept) {
  const std::string dir = tvtest::temp_dir("nd-link");
  const std::string model = make_model(dir + "/m.tvb");
  fs::create_directories(dir + "/real");
  std::ofstream(dir + "/real/model.h") << "old";
  fs::create_symlink(dir + "/real/model.h", dir + "/link.h");
  const Result r = run(bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/link.h"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir + "/link.h"));
  const std::vector<uint8_t> h = bytes_of(dir + "/real/model.h");
  EXPECT_TRUE(contains(std::string(h.begin(), h.end()), "#define TV_MODEL_")) << "the file behind the link was written";
}

// ---- outputs: never an input, and named by their format

TEST(NeverDamage, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  const std::string dir = tvtest::temp_dir("nd-same");
  const std::string model = make_model(dir + "/m.tvb");
  const std::vector<uint8_t> before = bytes_of(model);
  const std::string ds = tvtest::shapes_subset("nd-same-ds", 4);
  fs::create_hard_link(model, dir + "/alias.h");
  fs::create_symlink(model, dir + "/link.bin");
  struct Case {
    std::string cmd, says;
  } cases[] = {
      // The .tvb name says a model: a header never lands there.
      {bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(model),
       "the name says a TinyVision model (.tvb)"},
      {bin("tvexport") + " " + tvtest::quoted(model) + " --format header -o " + tvtest::quoted(model),
       "the name says a TinyVision model"},
      // The same file under another name (hard link, symbolic link): refused by identity.
      {bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/alias.h"),
       "is the same file as the model"},
      {bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/link.bin"),
       "is the same file as the model"},
      {bin("tvquant") + " " + tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) + " -o " + tvtest::quoted(model),
       "same file as the float model"},
      {bin("tvquant") + " prune " + tvtest::quoted(model) + " " + tvtest::quoted(ds) + " -o " + tvtest::quoted(model),
       "same file as the model"},
      {bin("tvtrain") + " " + tvtest::quoted(ds) + " --init " + tvtest::quoted(model) + " --epochs 1 -o " +
           tvtest::quoted(model),
       "same file as --init"},
      {bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -o " + tvtest::quoted(dir + "/n.tvb") +
           " --raw-out " + tvtest::quoted(dir + "/link.bin"),
       "same file as --init"},
      {bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -o " + tvtest::quoted(dir + "/n.tvb") +
           " --curve " + tvtest::quoted(dir + "/n.tvb"),
       "is the same file as the curve"},
  };
  // The raw-out case names --init only when there is one: give it.
  cases[7].cmd += " --init " + tvtest::quoted(model);
  for (const Case& c : cases) {
    const Result r = run(c.cmd);
    EXPECT_EQ(r.status, 1) << c.cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.says)) << c.cmd << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "epoch 1/")) << "refused only after training: " << c.cmd;
    EXPECT_EQ(bytes_of(model), before) << "the input changed: " << c.cmd;
  }
  EXPECT_FALSE(fs::exists(dir + "/n.tvb"));
}

TEST(NeverDamage, TheFormatFollowsTheExtensionOrAnExplicitFormat) {
  const std::string dir = tvtest::temp_dir("nd-format");
  const std::string model = make_model(dir + "/m.tvb");
  // An .espdl named output of a float model gets the ESP-DL refusal, not a header.
  Result r = run(bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/x.svg"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "the name says an SVG picture but this writes a C header")) << r.err;
  r = run(bin("tvexport") + " " + tvtest::quoted(model) + " --format webmcu-bin -o " + tvtest::quoted(dir + "/x.h"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "the name says a C header but this writes a raw myWeights.bin")) << r.err;
  r = run(bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/X.BIN"));  // case-insensitive
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(fs::file_size(dir + "/X.BIN"), tv::raw_weights_size(3));
  const std::string ds = tvtest::shapes_subset("nd-format-ds", 4);
  r = run(bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -o " +
          tvtest::quoted(dir + "/model.h"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "the name says a C header but this writes a TinyVision model")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/model.h"));
  for (const std::string f : {"x.svg", "x.h"}) EXPECT_FALSE(fs::exists(dir + "/" + f)) << f;
}

// ---- side outputs: named in --help, skippable, never replacing a file nobody named

TEST(NeverDamage, TheCurveNeverReplacesAFileTheUserDidNotName) {
  const std::string ds = tvtest::shapes_subset("nd-curve-ds", 4);
  const std::string dir = tvtest::temp_dir("nd-curve");
  const std::string mine = "my own drawing, not a curve\n";
  std::ofstream(dir + "/x.curve.svg") << mine;
  const std::string train =
      bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 -q -o " + tvtest::quoted(dir + "/x.tvb");
  Result r = run(train);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "x.curve.svg: the file exists and was not written by TinyVision")) << r.err;
  EXPECT_TRUE(contains(r.err, "--curve PATH")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.tvb")) << "refused before training";
  const std::vector<uint8_t> kept = bytes_of(dir + "/x.curve.svg");
  EXPECT_EQ(std::string(kept.begin(), kept.end()), mine);
  // Skipped, or named elsewhere: trains, the user's file untouched.
  r = run(train + " --no-curve");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(train + " --curve " + tvtest::quoted(dir + "/named.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/named.svg"));
  const std::vector<uint8_t> still = bytes_of(dir + "/x.curve.svg");
  EXPECT_EQ(std::string(still.begin(), still.end()), mine);
  // A curve we wrote is replaced by the next run of the same model.
  fs::remove(dir + "/x.curve.svg");
  ASSERT_EQ(run(train).status, 0);
  ASSERT_TRUE(fs::exists(dir + "/x.curve.svg"));
  r = run(train);
  EXPECT_EQ(r.status, 0) << r.err;
  // --help names the side output and how to skip it; --curve and --no-curve together is a usage error.
  r = run(bin("tvtrain") + " --help");
  EXPECT_TRUE(contains(r.out, "--curve") && contains(r.out, "--no-curve") && contains(r.out, "curve.svg")) << r.out;
  EXPECT_EQ(run(train + " --no-curve --curve " + tvtest::quoted(dir + "/c.svg")).status, 2);
}

TEST(NeverDamage, TheConfusionPictureFollowsTheSameRule) {
  const std::string ds = tvtest::shapes_subset("nd-conf-ds", 4);
  const std::string dir = tvtest::temp_dir("nd-conf");
  const std::string mine = "<svg>mine</svg>\n";
  std::ofstream(dir + "/x.confusion.svg") << mine;
  const std::string train = bin("tvtrain") + " " + tvtest::quoted(ds) +
                            " --preset webmcu --epochs 1 -q --no-curve -o " + tvtest::quoted(dir + "/x.tvb");
  Result r = run(train);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "x.confusion.svg: the file exists and was not written by TinyVision")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.tvb")) << "refused before training";
  r = run(train + " --no-confusion");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<uint8_t> kept = bytes_of(dir + "/x.confusion.svg");
  EXPECT_EQ(std::string(kept.begin(), kept.end()), mine);
  // Named, it may not be an input or the model; a .tvb name is refused for a picture.
  r = run(train + " --confusion " + tvtest::quoted(dir + "/x.tvb"));
  EXPECT_EQ(r.status, 1);
  r = run(train + " --confusion " + tvtest::quoted(ds + "/0blank/img_000.jpg"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "the name says a JPEG image")) << r.err;
  EXPECT_TRUE(fs::exists(ds + "/0blank/img_000.jpg"));
  // Ours is replaced by the next run.
  fs::remove(dir + "/x.confusion.svg");
  ASSERT_EQ(run(train).status, 0);
  EXPECT_EQ(run(train).status, 0);
}

// ---- the output location, checked before any long work

TEST(NeverDamage, ABadOutputFolderIsFoundBeforeTraining) {
  const std::string ds = tvtest::shapes_subset("nd-folder-ds", 4);
  const std::string dir = tvtest::temp_dir("nd-folder");
  std::ofstream(dir + "/plainfile") << "x";
  for (const std::string& out : {dir + "/missing/m.tvb", dir + "/plainfile/m.tvb"}) {
    const Result r =
        run(bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 50 -o " + tvtest::quoted(out));
    EXPECT_EQ(r.status, 1) << out;
    EXPECT_TRUE(contains(r.err, out)) << r.err;
    EXPECT_FALSE(contains(r.err, "epoch 1/")) << "trained before refusing: " << r.err;
    EXPECT_FALSE(contains(r.err, "dataset ")) << "decoded before refusing: " << r.err;
  }
  if (geteuid() != 0) {  // root writes anywhere: a read-only folder only stops other users
    fs::create_directories(dir + "/ro");
    fs::permissions(dir + "/ro", fs::perms::owner_read | fs::perms::owner_exec);
    const Result r = run(bin("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 50 -o " +
                         tvtest::quoted(dir + "/ro/m.tvb"));
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(contains(r.err, "cannot create a file in the folder")) << r.err;
    fs::permissions(dir + "/ro", fs::perms::owner_all);
  }
  // A full file system (when the test runs where /dev/shm is small enough to know) is covered by the
  // free-space check of check_output; here the check itself is exercised with an impossible size.
  EXPECT_THROW(tvh::check_output({"-o", dir + "/big.tvb"}, {}, uint64_t(1) << 62), tvh::Error);
  try {
    tvh::check_output({"-o", dir + "/big.tvb"}, {}, uint64_t(1) << 62);
  } catch (const tvh::Error& e) {
    EXPECT_TRUE(contains(e.what(), "bytes free, fewer than the")) << e.what();
  }
}

TEST(NeverDamage, TemporariesOfAKilledWriteAreRemovedALiveOnesAreKept) {
  const std::string dir = tvtest::temp_dir("nd-tmp");
  const std::string model = make_model(dir + "/m.tvb");
  // What a kill -9 during the final write leaves: the old unnamed form and the PID-named form of a
  // process that no longer exists; and one of a process that is alive (this test).
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  int ws = 0;
  waitpid(dead, &ws, 0);
  const std::string old_form = dir + "/.out.h.tmp.Ab12Cd";
  const std::string dead_form = dir + "/.out.h.tmp." + std::to_string(dead) + ".Qw34Er";
  const std::string live_form = dir + "/.out.h.tmp." + std::to_string(getppid()) + ".Zx56Cv";
  const std::string other = dir + "/.other.h.tmp.Ab12Cd";
  for (const std::string& f : {old_form, dead_form, live_form, other}) std::ofstream(f) << "partial";
  const Result r = run(bin("tvexport") + " " + tvtest::quoted(model) + " -o " + tvtest::quoted(dir + "/out.h"));
  ASSERT_EQ(r.status, 0) << r.err;
  // The unnamed form records no writer, so nothing proves it abandoned: kept (issue 20).
  EXPECT_TRUE(fs::exists(old_form));
  EXPECT_FALSE(fs::exists(dead_form));
  EXPECT_TRUE(fs::exists(live_form)) << "a live writer's temporary was removed";
  EXPECT_TRUE(fs::exists(other)) << "another output's temporary was removed";
  int temporaries = 0;
  for (auto& e : fs::directory_iterator(dir)) temporaries += contains(e.path().filename().string(), ".out.h.tmp.");
  EXPECT_EQ(temporaries, 2);
}

// ---- models with infinite or NaN weights: refused by every loader, naming the tensor

TEST(NeverDamage, ANonFiniteWeightIsRefusedByEveryToolNamingTheTensor) {
  const std::string dir = tvtest::temp_dir("nd-nan");
  const std::string ds = tvtest::shapes_subset("nd-nan-ds", 4);
  tv::ModelDesc d;
  tv::webmcu_model(3, &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  const tv::LayerPlan& dense = plan->layers[8];
  const std::string nan = make_model(dir + "/nan.tvb", (long)(dense.param_offset + 7), NAN);
  const std::string inf =
      make_model(dir + "/inf.tvb", (long)plan->layers[0].param_offset + plan->layers[0].weight_count,
                 -INFINITY);  // conv bias 0
  struct Case {
    std::string cmd, says;
  } cases[] = {
      {bin("tvtrain") + " " + tvtest::quoted(ds) + " --eval --init " + tvtest::quoted(nan),
       "tensor l8_dense.w (layer 8) holds an infinite or NaN value at element 7"},
      {bin("tvtrain") + " " + tvtest::quoted(ds) + " --init " + tvtest::quoted(nan) + " --epochs 1 -o " +
           tvtest::quoted(dir + "/r.tvb"),
       "l8_dense.w"},
      {bin("tvtrain") + " " + tvtest::quoted(ds) + " --init " + tvtest::quoted(inf) + " --epochs 1 -o " +
           tvtest::quoted(dir + "/r.tvb"),
       "tensor l0_conv2d.b"},
      {bin("tvquant") + " " + tvtest::quoted(nan) + " --calib " + tvtest::quoted(ds) + " -o " +
           tvtest::quoted(dir + "/q.tvb"),
       "l8_dense.w"},
      {bin("tvexport") + " " + tvtest::quoted(nan) + " -o " + tvtest::quoted(dir + "/h.h"), "l8_dense.w"},
      {bin("tvexport") + " info " + tvtest::quoted(inf), "l0_conv2d.b"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.cmd);
    EXPECT_EQ(r.status, 1) << c.cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.says)) << c.cmd << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "accuracy")) << c.cmd << "\n" << r.err;
  }
  for (const char* f : {"r.tvb", "q.tvb", "h.h"}) EXPECT_FALSE(fs::exists(dir + "/" + f)) << f;
  // The reference's raw myWeights.bin: the same refusal, naming the layer.
  std::vector<uint8_t> raw(tv::raw_weights_size(3), 0);
  const float bad = NAN;
  std::memcpy(raw.data() + 4 * 100, &bad, 4);  // inside conv1's weights
  std::ofstream(dir + "/myWeights.bin", std::ios::binary).write((const char*)raw.data(), (std::streamsize)raw.size());
  const Result r =
      run(bin("tvtrain") + " " + tvtest::quoted(ds) + " --eval --init " + tvtest::quoted(dir + "/myWeights.bin"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "layer 0 (conv2d) holds an infinite or NaN value (float 100 of the file)")) << r.err;
}

TEST(NeverDamage, TheSharedDecoderRefusesNonFiniteValuesForTheBoardToo) {
  // blob_decode and raw_weights_import are what the firmware calls: the refusal lives there.
  tv::ModelDesc d;
  tv::webmcu_model(2, &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count, 0.01f);
  p[plan->layers[4].param_offset + 3] = INFINITY;
  std::vector<uint8_t> blob = tvh::encode_float_blob(*plan, p.data(), {"a", "b"}, "");
  static tv::BlobView view;
  const tv::Status st = tv::blob_decode(blob.data(), blob.size(), &view);
  EXPECT_EQ(st.code, tv::StatusCode::NonFiniteWeight);
  EXPECT_EQ(st.layer, 4);
  ASSERT_GE(st.a, 0);
  EXPECT_STREQ(view.tensors[st.a].name, "l4_conv2d.w");
  EXPECT_EQ(st.b, 3);
  p[plan->layers[4].param_offset + 3] = 0.f;
  tv::InputDesc& in = d.input;
  in.scale = NAN;
  auto nan_scale = tvh::plan_or_throw(d, "webmcu");
  blob = tvh::encode_float_blob(*nan_scale, p.data(), {"a", "b"}, "");
  EXPECT_EQ(tv::blob_decode(blob.data(), blob.size(), &view).code, tv::StatusCode::NonFiniteWeight);
  std::vector<uint8_t> raw(tv::raw_weights_size(2), 0);
  const uint32_t nan_bits = 0x7FC00001u;
  std::memcpy(raw.data() + raw.size() - 4, &nan_bits, 4);  // the last dense bias
  std::vector<float> params(plan->param_count, 5.f);
  const tv::Status ls = tv::raw_weights_import(raw.data(), raw.size(), *plan, params.data());
  EXPECT_EQ(ls.code, tv::StatusCode::NonFiniteWeight);
  EXPECT_EQ(ls.layer, 8);
  EXPECT_EQ(params[0], 5.f) << "nothing written on a refusal";
  EXPECT_EQ(tv::first_non_finite_f32(raw.data(), raw.size() / 4), raw.size() / 4 - 1);
}

// ---- exit statuses and help, the same across the tools (issue 9)

TEST(NeverDamage, ExitStatusesAreTheSameAcrossTheTools) {
  for (const char* tool : {"tvtrain", "tvquant", "tvexport"}) {
    Result r = run(bin(tool) + " --help");
    EXPECT_EQ(r.status, 0) << tool;
    EXPECT_TRUE(contains(r.out, "Exit status: 0 success, 1 failure")) << tool << "\n" << r.out;
    r = run(bin(tool) + " --version");
    EXPECT_EQ(r.status, 0) << tool;
    r = run(bin(tool) + " --no-such-option x");
    EXPECT_EQ(r.status, 2) << tool << "\n" << r.err;
  }
  Result r = run(bin("tvsim") + " --version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "tvsim " TV_VERSION)) << r.out;
  r = run(bin("tvsim") + " --help");
  EXPECT_TRUE(contains(r.out, "1 the app halted") && contains(r.out, "2 bad")) << r.out;
  // A mistyped option: the nearest one is suggested.
  r = run(bin("tvtrain") + " x --epoch 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "did you mean --epochs?")) << r.err;
  r = run(bin("tvquant") + " m.tvb --calib d -o x.tvb --percentil 99");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "did you mean --percentile?")) << r.err;
  r = run(bin("tvexport") + " info m.tvb --jsno");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "did you mean --json?")) << r.err;
  r = run(bin("tvsim") + " --seeed 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "did you mean --seed?")) << r.err;
  // Usage mistakes caught by the tools themselves are usage errors too.
  EXPECT_EQ(run(bin("tvtrain") + " somewhere --eval").status, 2);
  EXPECT_EQ(run(bin("tvexport") + " m.tvb").status, 2);
}

TEST(NeverDamage, InfoBudgetAndHeaderUseTheInt8EnginesFiguresForAnInt8Model) {
  const std::string dir = tvtest::temp_dir("nd-int8");
  const std::string ds = tvtest::shapes_subset("nd-int8-ds", 4);
  const std::string model = make_model(dir + "/m.tvb");
  Result r = run(bin("tvquant") + " " + tvtest::quoted(model) + " --calib " + tvtest::quoted(ds) +
                 " --val-last 1 -q -o " + tvtest::quoted(dir + "/m.q8.tvb"));
  ASSERT_EQ(r.status, 0) << r.err;
  const tvh::LoadedModel q8 = tvh::load_model(dir + "/m.q8.tvb");
  const tv::Q8Memory qm = tv::q8_memory(*q8.plan);
  const tv::InferenceMemory fm = tv::inference_memory(*q8.plan);
  ASSERT_LT(qm.total_bytes, fm.total_bytes);
  r = run(bin("tvexport") + " info " + tvtest::quoted(dir + "/m.q8.tvb") + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["memory"]["engine"], "int8");
  EXPECT_EQ(j["memory"]["inference"]["total_bytes"], qm.total_bytes);
  EXPECT_EQ(j["memory"]["inference"]["work_bytes"], qm.work_bytes);
  // A budget between the int8 and the float figure: fits (exit 0) for the int8 model only.
  const std::string budget = std::to_string((qm.total_bytes + fm.total_bytes) / 2);
  EXPECT_EQ(run(bin("tvexport") + " info " + tvtest::quoted(dir + "/m.q8.tvb") + " --budget " + budget).status, 0);
  EXPECT_EQ(run(bin("tvexport") + " info " + tvtest::quoted(model) + " --budget " + budget).status, 1);
  r = run(bin("tvexport") + " " + tvtest::quoted(dir + "/m.q8.tvb") + " -o " + tvtest::quoted(dir + "/m.h"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<uint8_t> h = bytes_of(dir + "/m.h");
  const std::string text(h.begin(), h.end());
  EXPECT_TRUE(contains(text, "#define TV_MODEL_INFERENCE_ARENA_BYTES " + std::to_string(qm.work_bytes)))
      << text.substr(0, 3000);
  EXPECT_TRUE(contains(text, "#define TV_MODEL_PARAMS_BYTES " + std::to_string(qm.weight_bytes)));
}
