// tvsim: the TinyVision firmware running on Linux against the simulated board (hal_sim/).
// It boots like the device, reads serial input from stdin, prints the serial output on stdout, and
// exits when its input has ended and the app is waiting for more.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/numbers.h"
#include "host/base/suggest.h"
#include "sim_hal.h"

// The baked tier, exactly as in the sketch: a model.h (tvexport's) found on the include path is compiled
// in. tvsim has none; tvsim-baked is built with the folder of a generated model.h on its include path.
#if defined(__has_include)
#if __has_include("model.h")
#include "model.h"
#define TVSIM_BAKED 1
#endif
#endif

namespace {

const char* kUsage =
    "usage: tvsim --sd DIR [--camera DIR] [options] < script\n"
    "\n"
    "Runs the TinyVision firmware against a simulated XIAO ESP32-S3 Sense. stdin is the serial input\n"
    "(t = next, l = select, x = stop training, ? = help); lines starting with '~' script the board:\n"
    "  ~tap [N]  ~hold MS  ~touch VALUE MS  ~wait MS  ~frames N\n"
    "stdout is the serial output; tvsim's own notes go to stderr.\n"
    "\n"
    "options:\n"
    "  --sd DIR             the SD card (a folder); without it the board has no card\n"
    "  --camera DIR         camera frames: the .jpg files of DIR, one per grab, in name order\n"
    "  --labels A,B,...     the classes of a new (He-init) model (default: the folders in DIR/images);\n"
    "                       a model on the card or baked in brings its own\n"
    "  --preset NAME        the network of a new (He-init) model (webmcu, tinyvision; default tinyvision)\n"
    "  --epochs N           override the recipe's epochs\n"
    "  --val-last N         validation images per class (default: the recipe's, 3)\n"
    "  --seed N             seed for He-init and shuffling (default 1)\n"
    "  --no-backbone        a new model starts from He-init, not from the built-in backbone (as a build\n"
    "                       with TV_BACKBONE 0)\n"
    "  --cores N            simulated cores for the gradient lanes (default 2)\n"
    "  --oled FILE|-        render the OLED as text (appended to FILE, or - for stderr)\n"
    "  --psram-bytes N      PSRAM budget (default 8388608)\n"
    "  --sd-fail-write-at N the card accepts N bytes of writes, then every write fails\n"
    "  --power-cut-at N     the power goes after N card units (a byte written, a file created,\n"
    "                       renamed or removed, a folder made): exit status 86\n"
    "  --pty                the serial port is a pseudo-terminal instead of stdin/stdout: its path is\n"
    "                       printed as the first line of stdout, and the board serves one PC program\n"
    "                       after another on it (tvlink, a terminal) until tvsim is stopped\n"
    "  --sd-free-bytes N    the free card space the board reports (default: the folder's file system)\n"
    "  --link-rate N        with --pty: the serial link carries N bytes per second each way\n"
    "  --frame-ms N         each camera frame takes N ms of the board's clock (default 0)\n"
    "  --unsure-margin P    Infer keeps frames whose top two classes are less than P percentage\n"
    "                       points apart in /images/_unsure (0 to 100; default the firmware's 20)\n"
    "  --exact-objects      Infer of a detector: after each frame's objects line, a line with every\n"
    "                       object's class, centroid (input pixels) and probability as float bits\n"
    "                       (tests compare them with tvtrain detect --json)\n"
    "  --version            print the version and exit\n"
    "exit status: 0 at the end of the input, 1 the app halted (a failure, as for every tool), 2 bad\n"
    "arguments (usage), 86 the simulated power cut of --power-cut-at\n";

// Every option that takes a value (for suggesting the nearest to a mistyped one).
const std::vector<std::string> kValueOptions = {"--sd",
                                                "--camera",
                                                "--labels",
                                                "--preset",
                                                "--epochs",
                                                "--val-last",
                                                "--seed",
                                                "--cores",
                                                "--oled",
                                                "--psram-bytes",
                                                "--sd-fail-write-at",
                                                "--power-cut-at",
                                                "--sd-free-bytes",
                                                "--link-rate",
                                                "--frame-ms",
                                                "--unsure-margin"};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "tvsim: %s\n\n%s", msg.c_str(), kUsage);
  std::exit(tvh::kExitUsage);
}

// A whole number from lo to hi, read by the tools' one strict reader (no sign, no wrap-around).
uint64_t number(const std::string& flag, const char* v, uint64_t lo, uint64_t hi) {
  const std::string problem = tvh::whole_number_problem(v, lo, hi);
  if (!problem.empty()) usage_error(flag + ": " + problem);
  return std::strtoull(v, nullptr, 10);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    out.push_back(s.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int main(int argc, char** argv) {
  tvsim::SimOptions opt;
  tvfw::AppConfig cfg;
  std::string preset = "tinyvision";
  std::vector<std::string> labels;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--pty") {
      opt.pty = true;
      continue;
    }
    if (a == "--no-backbone") {
      cfg.backbone = false;
      continue;
    }
    if (a == "--exact-objects") {
      cfg.exact_objects = true;
      continue;
    }
    if (a == "--version") {
      std::printf("tvsim %s\n", TV_VERSION);
      return 0;
    }
    const bool known = std::find(kValueOptions.begin(), kValueOptions.end(), a) != kValueOptions.end();
    if (!known) {
      std::vector<std::string> all = kValueOptions;
      all.insert(all.end(), {"--help", "--version", "--pty", "--no-backbone", "--exact-objects"});
      const std::string near = tvh::nearest_name(a.substr(0, a.find('=')), all);
      usage_error("unknown option " + a + (near.empty() ? std::string() : "; did you mean " + near + "?"));
    }
    if (i + 1 >= argc) usage_error(a + " needs a value");
    const char* v = argv[++i];
    if (a == "--sd")
      opt.sd_dir = v;
    else if (a == "--camera")
      opt.camera_dir = v;
    else if (a == "--labels") {
      labels = split_commas(v);
      if (labels.size() < 2) usage_error("--labels needs at least two classes (A,B,...)");
    } else if (a == "--preset")
      preset = v;
    else if (a == "--epochs")
      cfg.epochs = (int)number(a, v, 1, 100000);
    else if (a == "--val-last")
      cfg.val_last_n = (int)number(a, v, 0, 100000);
    else if (a == "--seed")
      cfg.seed = number(a, v, 0, UINT64_MAX);
    else if (a == "--cores")
      opt.cores = (int)number(a, v, 1, 64);
    else if (a == "--oled")
      opt.oled = v;
    else if (a == "--psram-bytes")
      opt.psram_bytes = (size_t)number(a, v, 0, SIZE_MAX);
    else if (a == "--sd-fail-write-at")
      opt.fail_write_at = (long long)number(a, v, 0, LLONG_MAX);
    else if (a == "--power-cut-at")
      opt.power_cut_at = (long long)number(a, v, 0, LLONG_MAX);
    else if (a == "--link-rate")
      opt.link_rate = (long long)number(a, v, 0, LLONG_MAX);
    else if (a == "--sd-free-bytes")
      opt.sd_free_bytes = (long long)number(a, v, 0, LLONG_MAX);
    else if (a == "--frame-ms")
      opt.frame_ms = (uint32_t)number(a, v, 0, 60000);
    else if (a == "--unsure-margin")
      cfg.unsure_margin = (float)number(a, v, 0, 100) / 100.f;
  }
  if (!opt.sd_dir.empty() && !is_dir(opt.sd_dir)) usage_error("--sd " + opt.sd_dir + " is not a folder");
  if (!opt.camera_dir.empty() && !is_dir(opt.camera_dir))
    usage_error("--camera " + opt.camera_dir + " is not a folder");
  if (labels.size() > (size_t)tvfw::kMaxClasses) usage_error("at most 16 classes");
  cfg.preset = preset.c_str();
  cfg.num_labels = (int)labels.size();
  for (size_t i = 0; i < labels.size(); ++i) cfg.labels[i] = labels[i].c_str();
#ifdef TVSIM_BAKED
  cfg.baked_blob = TV_MODEL_blob;
  cfg.baked_size = sizeof TV_MODEL_blob;
  cfg.baked_source = "model.h";
#endif

  std::unique_ptr<tvsim::SimHal> board;
  try {
    board.reset(new tvsim::SimHal(opt));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return tvh::kExitFailure;
  }
  tvsim::SimHal& hal = *board;
  if (opt.pty) {  // the first line: where a PC program finds the board
    std::printf("%s\n", hal.pty_path().c_str());
    std::fflush(stdout);
  }
  static tvfw::App* app = nullptr;  // the board's one application, as in the sketch
  app = new tvfw::App(hal, cfg);
  app->setup();
  for (;;) {
    app->loop();
    if (app->waiting_for_input()) {
      if (hal.input_finished()) break;
      hal.wait_for_input(5);
    }
  }
  hal.start_tick(tvfw::kTouchPollMs, nullptr, nullptr);  // no more ticks into the app
  std::fflush(stdout);
  std::fprintf(stderr,
               "tvsim: %llu JPEG decodes, %llu bytes written to the card (%llu card units), PSRAM peak %zu bytes\n",
               (unsigned long long)hal.decodes(), (unsigned long long)hal.card_bytes_written(),
               (unsigned long long)hal.card_units(), hal.psram_peak());
  delete app;
  // The serial output is the result: a write the disk refused is a failure, said in one sentence.
  const std::string out_error = tvh::close_stdout();
  if (!out_error.empty() && hal.stdout_error().empty()) std::fprintf(stderr, "tvsim: %s\n", out_error.c_str());
  return out_error.empty() && hal.stdout_error().empty() ? 0 : tvh::kExitFailure;
}
