// tvlink push against the simulated board (tvsim --pty): a model installed and inferring without a
// reboot; corrupt, oversized and unrunnable models refused with the card unchanged; the host killed
// mid-transfer; and the README's board loop (capture, pull, train, quantize, push, infer) end to end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/link/link.h"
#include "host/model/model_io.h"
#include "link_support.h"
#include "sim_support.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;
using linktest::PtyBoard;
using linktest::tvlink;
using simtest::has;
using simtest::quote;

namespace {

// tvtrain with its defaults on `images`, then tvquant: the int8 model's path (and the float one's).
std::string trained_int8(const std::string& images, std::string* float_tvb = nullptr) {
  const std::string dir = tvtest::temp_dir("linkmodel");
  run_tool("tvtrain", quote(images) + " -o " + quote(dir + "/model.tvb") + " -q --no-curve");
  run_tool("tvquant", quote(dir + "/model.tvb") + " --calib " + quote(images) + " -o " + quote(dir + "/model.q8.tvb"));
  if (float_tvb) *float_tvb = dir + "/model.tvb";
  return dir + "/model.q8.tvb";
}

// The first two classes of the shapes dataset (a fresh folder of class folders).
std::string shapes2() {
  return simtest::make_card(simtest::shapes_dir(), simtest::kShapes2) + "/images";
}

// A card whose model is `model` (as /header/model.tvb), with a few photos.
std::string card_with(const std::string& model) {
  const std::string card = simtest::make_card(simtest::shapes_dir(), simtest::kShapes2, 3);
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb");
  return card;
}

// The free card space the boards report (a fixed figure: the real file system's changes under us).
const char* const kFree = " --sd-free-bytes 50000000";

struct Refusal {
  std::string reason;
};

// Pushes `model` with the link's client itself (tvlink refuses some models before sending them: the
// board must refuse whatever a client sends) and expects the board's refusal, the card byte for byte
// unchanged, the old model still in use.
Refusal expect_refused(const PtyBoard& board, const std::string& card, const std::string& model) {
  const auto before = linktest::snapshot(card);
  const std::string status_before = tvlink("status " + quote(board.port())).out;
  std::string reason;
  {
    std::unique_ptr<tvh::SerialPort> port = tvh::open_serial(board.port());
    tvh::LinkClient link(*port);
    try {
      const std::string done = link.push(tvh::read_file(model));
      ADD_FAILURE() << model << " was installed: " << done;
    } catch (const tvh::BoardRefused& e) {
      reason = std::string(": ") + e.what();
    }
  }
  EXPECT_EQ(linktest::snapshot(card), before);
  const tvtest::CommandResult after = tvlink("status " + quote(board.port()));
  EXPECT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(after.out.substr(0, after.out.find("psram_free")),
            status_before.substr(0, status_before.find("psram_free")));
  return Refusal{reason};
}

// Bytes a process has written so far (wchar of /proc/PID/io); -1 when it cannot be read.
long long written_bytes(pid_t pid) {
  const std::string io = tvtest::read_text("/proc/" + std::to_string(pid) + "/io");
  const size_t at = io.find("wchar: ");
  return at == std::string::npos ? -1 : std::atoll(io.c_str() + at + 7);
}

std::string status_weights(const std::string& port) {
  const std::string s = tvlink("status " + quote(port)).out;
  const size_t at = s.find("weights=");
  return at == std::string::npos ? "" : s.substr(at, s.find('\n', at) - at);
}

}  // namespace

TEST(TvlinkPush, AnInt8ModelIsInstalledAndInfersWithoutAReboot) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  std::string float_tvb;
  const std::string images = shapes2();
  const std::string q8 = trained_int8(images, &float_tvb);
  const std::string card = card_with(float_tvb);
  const std::string cam = simtest::make_camera(simtest::shapes_dir(), simtest::kShapes2);
  PtyBoard board("--sd " + quote(card) + " --camera " + quote(cam));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink("push " + quote(board.port()) + " " + quote(q8));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "installed /header/model.tvb (" + std::to_string(fs::file_size(q8)) + " bytes")) << r.out;
  EXPECT_TRUE(has(r.out, "2 classes, int8 engine, in use now")) << r.out;
  // byte for byte on the card, the previous model kept as the backup
  EXPECT_EQ(tvtest::read_text(card + "/header/model.tvb"), tvtest::read_text(q8));
  EXPECT_EQ(tvtest::read_text(card + "/header/model.tvb.bak"), tvtest::read_text(float_tvb));
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb.tmp"));
  EXPECT_TRUE(has(status_weights(board.port()), "weights=SD (/header/model.tvb, ")) << status_weights(board.port());
  // the board infers every frame with it, as tvtrain --eval does with the same model
  const size_t frames = simtest::sorted_jpegs(cam).size();
  const std::string out = linktest::console(board.port(), simtest::to_infer(2), "Camera: no frame");
  EXPECT_TRUE(has(out, ", int8), int8 engine")) << out;
  const auto preds = simtest::predictions(out);
  ASSERT_EQ(preds.size(), frames) << out;
  EXPECT_EQ(simtest::confusion(preds, cam, simtest::kShapes2), simtest::tvtrain_eval_confusion(images, q8, ""));
}

TEST(TvlinkPush, CorruptOversizedAndUnrunnableModelsAreRefusedAndChangeNothing) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  std::string float_tvb;
  const std::string q8 = trained_int8(shapes2(), &float_tvb);
  const std::string dir = tvtest::temp_dir("badmodels");
  // corrupt: one byte flipped in the middle (the .tvb's own CRC-32 no longer matches)
  std::string bytes = tvtest::read_text(q8);
  bytes[bytes.size() / 2] ^= 0x40;
  tvtest::write_text(dir + "/corrupt.tvb", bytes);
  // not a model at all, and truncated
  tvtest::write_text(dir + "/photo.tvb", tvtest::read_text(simtest::shapes_dir() + "/0blank/img_000.jpg"));
  tvtest::write_text(dir + "/short.tvb", tvtest::read_text(q8).substr(0, 100));
  // a network this firmware cannot run: the reference network with 17 classes (it takes 2 to 16)
  tv::ModelDesc desc;
  tv::webmcu_model(17, &desc);
  tv::ModelPlan plan;
  ASSERT_TRUE(tv::plan_model(desc, &plan).ok());
  std::vector<float> params(plan.param_count);
  tv::he_init(plan, params.data(), 1);
  std::vector<std::string> labels;
  for (int i = 0; i < 17; ++i) labels.push_back("c" + std::to_string(i));
  const std::vector<uint8_t> wide = tvh::encode_float_blob(plan, params.data(), labels, "tool=test\n");
  tvtest::write_text(dir + "/17classes.tvb", std::string(wide.begin(), wide.end()));

  const std::string card = card_with(q8);
  {
    PtyBoard board("--sd " + quote(card) + kFree);
    ASSERT_FALSE(board.port().empty()) << board.err();
    EXPECT_TRUE(
        has(expect_refused(board, card, dir + "/corrupt.tvb").reason, ": CRC-32 mismatch: the blob is corrupted"));
    EXPECT_TRUE(has(expect_refused(board, card, dir + "/photo.tvb").reason, ": not a TinyVision blob (bad magic)"));
    EXPECT_TRUE(has(expect_refused(board, card, dir + "/short.tvb").reason, ": the blob is truncated"));
    EXPECT_TRUE(has(expect_refused(board, card, dir + "/17classes.tvb").reason,
                    ": it has 17 classes; this firmware handles 2 to 16"));
  }
  {  // larger than the card's free space
    PtyBoard board("--sd " + quote(card) + " --sd-free-bytes 1000");
    ASSERT_FALSE(board.port().empty()) << board.err();
    EXPECT_TRUE(has(
        expect_refused(board, card, float_tvb).reason,
        "the model is " + std::to_string(fs::file_size(float_tvb)) + " bytes but the card has only 1000 bytes free"));
  }
  {  // the float model needs more PSRAM than the board has (the int8 one in use fits)
    const tvh::LoadedModel model = tvh::load_model(float_tvb);
    const tv::InferenceMemory im = tv::inference_memory(*model.plan);
    PtyBoard board("--sd " + quote(card) + kFree + " --psram-bytes " + std::to_string(im.params_bytes + im.work_bytes));
    ASSERT_FALSE(board.port().empty()) << board.err();
    const Refusal r = expect_refused(board, card, float_tvb);
    EXPECT_TRUE(has(r.reason, ": it needs ")) << r.reason;
    EXPECT_TRUE(has(r.reason, " bytes of PSRAM to run (float weights + work buffer ")) << r.reason;
  }
  {  // larger than this firmware takes at all
    const std::string huge = dir + "/huge.tvb";
    tvtest::write_text(huge, std::string((5u << 20), 'x'));
    PtyBoard board("--sd " + quote(card) + kFree);
    EXPECT_TRUE(has(expect_refused(board, card, huge).reason, "this firmware takes 1 to 4194304"));
  }
}

// What the board cannot run as it is — more classes than it has, labels FAT takes for one folder — tvlink
// refuses before it opens the port: one sentence, exit 1, no byte sent.
TEST(TvlinkPush, AModelTheBoardCannotRunIsRefusedBeforeAnythingIsSent) {
  TV_REQUIRE_BINARY("tvlink");
  const std::string dir = tvtest::temp_dir("notforboard");
  auto model_of = [&](const std::vector<std::string>& labels, const std::string& name) {
    tv::ModelDesc desc;
    tv::webmcu_model((int)labels.size(), &desc);
    tv::ModelPlan plan;
    EXPECT_TRUE(tv::plan_model(desc, &plan).ok());
    std::vector<float> params(plan.param_count);
    tv::he_init(plan, params.data(), 1);
    const std::vector<uint8_t> b = tvh::encode_float_blob(plan, params.data(), labels, "tool=test\n");
    tvtest::write_text(dir + "/" + name, std::string(b.begin(), b.end()));
    return dir + "/" + name;
  };
  std::vector<std::string> many;
  for (int i = 0; i < 17; ++i) many.push_back("c" + std::to_string(i));
  const std::string wide = model_of(many, "17.tvb"), clash = model_of({"cup", "pen", "Cup"}, "clash.tvb");
  // the port does not exist: the model is refused before it is looked for
  const tvtest::CommandResult r = tvlink("push /nonexistent/port " + quote(wide));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "tvlink: nothing was sent: " + wide + ": it has 17 classes; the board's firmware runs 2 to 16.\n");
  const tvtest::CommandResult c = tvlink("push /nonexistent/port " + quote(clash));
  EXPECT_EQ(c.status, 1);
  EXPECT_TRUE(has(c.err, "tvlink: nothing was sent: " + clash +
                             ": its classes 0 ('cup') and 2 ('Cup') would share one card folder"))
      << c.err;
}

TEST(TvlinkPush, KillingTheHostMidTransferKeepsTheOldModelAndTheMenu) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  std::string float_tvb;
  const std::string q8 = trained_int8(shapes2(), &float_tvb);
  const std::string card = card_with(q8);
  const auto before = linktest::snapshot(card);
  // a slow link (20 KB/s): the float model takes about two seconds to send
  PtyBoard board("--sd " + quote(card) + " --link-rate 20000");
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string weights = status_weights(board.port());
  ASSERT_TRUE(has(weights, "int8")) << weights;
  const pid_t host = fork();
  if (host == 0) {
    const std::string cmd = "exec " + quote(tvtest::bin_path("tvlink")) + " push " + quote(board.port()) + " " +
                            quote(float_tvb) + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), (char*)nullptr);
    _exit(127);
  }
  // killed once it has written 10 KB of the model to the port (its /proc/PID/io), a quarter of the way
  for (int i = 0; i < 3000 && written_bytes(host) < 10000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(written_bytes(host), 10000);
  kill(host, SIGKILL);
  int status = 0;
  waitpid(host, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "tvlink finished before it was killed";
  // the board gives up on the silent PC and returns to its menu
  const std::string out = linktest::console(board.port(), "", "=== MENU ===");
  EXPECT_TRUE(has(out, "USB link: the PC fell silent; back to the menu")) << out;
  EXPECT_EQ(linktest::snapshot(card), before);
  EXPECT_EQ(status_weights(board.port()), weights);  // the next connection works; the old model is in use
}

// A detector goes over the cable like a classifier: tvlink sends it, the board installs it and Infer prints
// each frame's objects line.
TEST(TvlinkPush, ADetectorIsInstalledAndPrintsEachFramesObjects) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_BINARY("tvgen-detect");
  const std::string dir = tvtest::temp_dir("linkdet");
  run_tool("tvgen-detect", quote(dir + "/set") + " --train 60 --val 12 --seed 3");
  run_tool("tvtrain", quote(dir + "/set") + " --epochs 4 -q -o " + quote(dir + "/det.tvb"));
  run_tool("tvquant",
           quote(dir + "/det.tvb") + " --calib " + quote(dir + "/set") + " -o " + quote(dir + "/det.q8.tvb"));
  std::string float_tvb;
  const std::string card = card_with(trained_int8(shapes2(), &float_tvb));
  const std::string cam = simtest::make_camera(simtest::shapes_dir(), simtest::kShapes2);
  PtyBoard board("--sd " + quote(card) + " --camera " + quote(cam));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const tvtest::CommandResult r = tvlink("push " + quote(board.port()) + " " + quote(dir + "/det.q8.tvb"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "in use now")) << r.out;
  EXPECT_EQ(tvtest::read_text(card + "/header/model.tvb"), tvtest::read_text(dir + "/det.q8.tvb"));
  // its menu lists the three object classes before Train and Infer
  const std::string out = linktest::console(board.port(), simtest::to_infer(3), "Camera: no frame");
  EXPECT_TRUE(has(out, "Objects: ")) << out;
}
