// tvlink: the PC's end of the USB cable to a TinyVision board (or tvsim --pty).
//   tvlink status [PORT]            what the board runs and holds
//   tvlink pull [PORT] DEST         the card's /images/<class>/ photos into DEST/<class>/ (incremental)
//   tvlink push [PORT] MODEL.tvb    verified on the board, installed as /header/model.tvb, in use at once
//   tvlink pull-model [PORT] MODEL.tvb [--backup PREV.tvb] [--force]
//                                   the card's /header/model.tvb (and model.tvb.bak) byte for byte
//   tvlink capture [PORT] --class NAME [--count N]   photos taken by the board's camera
//   tvlink rename [PORT] OLD NEW    a class renamed on the board: its /images folder and the model's label
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/link/link.h"
#include "host/link/link_pull.h"
#include "host/model/model_io.h"
#include "tools/common/cli.h"
#include "tv/names.h"

namespace {

// tvlink pull: some photos are not in DEST (named on stderr); the others were copied.
constexpr int kExitSomeMissing = 3;

// [PORT] ARG: the port is optional when exactly one board is attached.
void split_args(const std::vector<std::string>& args, const char* what, std::string* port, std::string* arg) {
  if (args.size() == 2) {
    *port = args[0];
    *arg = args[1];
  } else if (args.size() == 1) {
    *arg = args[0];
  } else {
    throw tvh::UsageError(std::string("give [PORT] ") + what);
  }
}

// A progress line that rewrites itself on a terminal (nothing otherwise, nothing with -q).
struct Progress {
  bool on;
  mutable bool shown = false;  // a line is on the terminal, to be ended
  void operator()(const std::string& line) const {
    if (on) std::fprintf(stderr, "\r%s   ", line.c_str());
    shown = on;
  }
  void end() const {
    if (shown) std::fprintf(stderr, "\n");
    shown = false;
  }
};

// tvlink pull-model: the card's model into `dest` (and its backup into `backup`, when given), a line
// each; exit 1 when a file is missing on the card or a local file with other bytes was kept.
int pull_models(tvh::LinkClient& link, const tvh::NamedPath& dest, const tvh::NamedPath& backup, bool force,
                const Progress& progress) {
  int status = tvh::kExitOk;
  for (const tvh::NamedPath* d : {&dest, &backup}) {
    if (d->path.empty()) continue;
    const uint8_t which = d == &dest ? tv::link::kModelFile : tv::link::kModelBackup;
    tvh::ModelPull r;
    try {
      r = tvh::pull_model(link, which, *d, force, [&](uint64_t got) {
        progress("received " + std::to_string(got / 1024) + " KB of the " +
                 (which == tv::link::kModelFile ? "model" : "backup"));
      });
      progress.end();
    } catch (const tvh::BoardRefused& e) {
      progress.end();
      std::fprintf(stderr, "tvlink: nothing pulled into %s: %s\n", d->path.c_str(), tvh::one_line(e.what()).c_str());
      status = tvh::kExitFailure;
      continue;
    }
    char figures[64];
    std::snprintf(figures, sizeof figures, "%u bytes, CRC-32 0x%08x", (unsigned)r.bytes, (unsigned)r.crc);
    if (r.outcome == tvh::ModelPull::kKept) {
      std::fprintf(stderr,
                   "tvlink: kept %s, not overwritten: it differs from the board's %s (%s); give --force to replace "
                   "it, or name another file\n",
                   d->path.c_str(), r.card_path.c_str(), figures);
      status = tvh::kExitFailure;
    } else if (r.outcome == tvh::ModelPull::kUnchanged) {
      std::printf("%s already holds the board's %s (%s)\n", d->path.c_str(), r.card_path.c_str(), figures);
    } else {
      std::printf("pulled %s into %s (%s)\n", r.card_path.c_str(), d->path.c_str(), figures);
    }
  }
  return status;
}

int body(int argc, char** argv) {
  CLI::App app{"tvlink: status, photos and models between this computer and a TinyVision board over USB"};
  app.set_version_flag("--version", TV_VERSION);
  app.require_subcommand(1);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "no progress line");
  std::vector<std::string> status_args, pull_args, push_args;
  CLI::App* status = app.add_subcommand("status", "the board's firmware, model, photos per class, free card and PSRAM");
  status->add_option("PORT", status_args, "the board's serial port (default: the one USB serial port attached)")
      ->expected(0, 1);
  CLI::App* pull = app.add_subcommand("pull", "copy the card's photos into DEST/<class>/ (only what is missing)");
  pull->add_option("ARGS", pull_args, "[PORT] DEST")->expected(1, 2)->required();
  pull->footer("Exit status 3: some photos were not copied (each is named, with why); every other one was.");
  CLI::App* push = app.add_subcommand("push", "install a model (.tvb, float or int8) on the board, verified first");
  push->add_option("ARGS", push_args, "[PORT] MODEL.tvb")->expected(1, 2)->required();
  std::vector<std::string> model_args;
  std::string backup_dest;
  bool force = false;
  CLI::App* pull_model = app.add_subcommand(
      "pull-model", "copy the board's model (the card's /header/model.tvb) into MODEL.tvb, byte for byte");
  pull_model->add_option("ARGS", model_args, "[PORT] MODEL.tvb")->expected(1, 2)->required();
  pull_model->add_option("--backup", backup_dest, "also the model it replaced (/header/model.tvb.bak), into this file");
  pull_model->add_flag("--force", force, "replace MODEL.tvb (and the --backup file) when it holds other bytes");
  std::vector<std::string> capture_args;
  std::string capture_class;
  int capture_count = 1;
  CLI::App* capture = app.add_subcommand("capture", "take photos with the board's camera into /images/<class>/");
  capture->add_option("PORT", capture_args, "the board's serial port (default: the one USB serial port attached)")
      ->expected(0, 1);
  capture->add_option("--class", capture_class, "the class (one of the model's, as tvlink status lists them)")
      ->required();
  capture->add_option("--count", capture_count, "how many photos")->check(CLI::Range(1, tv::link::kMaxCaptures));
  std::vector<std::string> rename_args;
  CLI::App* rename = app.add_subcommand(
      "rename", "rename a class on the board in one step: its folder /images/OLD and the model's label");
  rename->add_option("ARGS", rename_args, "[PORT] OLD NEW")->expected(2, 3)->required();
  const int parsed = tvcli::parse(app, argc, argv, "tvlink");
  if (parsed >= 0) return parsed;

  std::string port, arg;
  std::string rename_from, rename_to;
  if (*rename) {  // the new name is checked before the board is disturbed
    port = rename_args.size() == 3 ? rename_args[0] : "";
    rename_from = rename_args[rename_args.size() - 2];
    rename_to = rename_args.back();
    if (!tv::name_allowed(rename_to.data(), rename_to.size(), tv::kMaxClassNameBytes))
      throw tvh::UsageError("'" + tvh::one_line(rename_to.substr(0, 40)) +
                            "' cannot name a class folder: " + tv::kClassNameRule + ".");
  } else if (*status || *capture)
    port = *status ? (status_args.empty() ? "" : status_args[0]) : (capture_args.empty() ? "" : capture_args[0]);
  else
    split_args(*pull ? pull_args : *push ? push_args : model_args, *pull ? "DEST" : "MODEL.tvb", &port, &arg);
  std::vector<uint8_t> blob;
  if (*push) {  // read and checked before the board is disturbed: nothing is sent of a model it cannot run
    blob = tvh::read_file(arg, size_t(64) << 20);
    const tvh::LoadedModel m = tvh::decode_model_file(blob, arg, tvh::RawOptions(), tvh::Tasks::Any);
    if (m.format != "tvb")
      throw tvh::Error("nothing was sent: " + arg +
                       " is a raw myWeights.bin; the board takes .tvb models (tvtrain, "
                       "tvquant write them).");
    const std::string problem = tvh::board_model_problem(m);
    if (!problem.empty()) throw tvh::Error("nothing was sent: " + arg + ": " + problem + ".");
  }
  const tvh::NamedPath model_dest{"the destination", *pull_model ? arg : ""}, backup{"--backup", backup_dest};
  if (*pull_model) {  // before the board is disturbed too
    tvh::check_model_dest(model_dest, {backup});
    if (!backup.path.empty()) tvh::check_model_dest(backup, {model_dest});
  }
  port = tvh::choose_port(port);
  std::unique_ptr<tvh::SerialPort> serial = tvh::open_serial(port);
  tvh::LinkClient link(*serial);
  const Progress progress{!quiet && isatty(2) != 0};

  if (*status) {
    std::fputs(link.status().c_str(), stdout);
    link.bye();
    return tvh::kExitOk;
  }
  if (*capture) {
    try {
      const std::string done = link.capture(capture_class, capture_count);
      link.bye();
      std::printf("%s\n", done.c_str());
      return tvh::kExitOk;
    } catch (const tvh::BoardRefused& e) {
      link.bye();
      std::fprintf(stderr, "tvlink: the board took no photo: %s\n", e.what());
      return tvh::kExitFailure;
    }
  }
  if (*rename) {
    try {
      const std::string done = link.rename(rename_from, rename_to);
      link.bye();
      std::printf("%s\n", tvh::one_line(done).c_str());
      return tvh::kExitOk;
    } catch (const tvh::BoardRefused& e) {
      link.bye();
      std::fprintf(stderr, "tvlink: nothing was renamed: %s\n", tvh::one_line(e.what()).c_str());
      return tvh::kExitFailure;
    }
  }
  if (*pull_model) {
    const int status = pull_models(link, model_dest, backup, force, progress);
    link.bye();
    return status;
  }
  if (*pull) {
    const tvh::PullReport r = tvh::pull_photos(link, arg, progress);
    progress.end();
    link.bye();
    std::printf("%d photos copied (%llu bytes), %d already there\n", r.copied, (unsigned long long)r.bytes,
                r.unchanged);
    for (const std::string& k : r.kept) std::fprintf(stderr, "tvlink: kept %s, not overwritten\n", k.c_str());
    if (!r.kept.empty())
      std::fprintf(stderr,
                   "tvlink: %zu local files differ from the board's and were left as they are: move them "
                   "away and pull again to get the board's\n",
                   r.kept.size());
    for (const std::string& k : r.refused) std::fprintf(stderr, "tvlink: not copied: %s\n", k.c_str());
    if (!r.refused.empty())
      std::fprintf(stderr,
                   "tvlink: %zu names on the board cannot be used on this computer: rename them on the card to "
                   "copy them\n",
                   r.refused.size());
    for (const std::string& k : r.failed) std::fprintf(stderr, "tvlink: not copied: %s\n", k.c_str());
    if (!r.failed.empty())
      std::fprintf(stderr, "tvlink: %zu files could not be read on the card; every other photo was copied\n",
                   r.failed.size());
    return r.complete() ? tvh::kExitOk : kExitSomeMissing;
  }
  try {
    const std::string done = link.push(blob, [&](uint64_t sent) {
      progress("sent " + std::to_string(sent / 1024) + " of " + std::to_string(blob.size() / 1024) + " KB");
    });
    progress.end();
    link.bye();
    std::printf("%s: %s\n", arg.c_str(), done.c_str());
    return tvh::kExitOk;
  } catch (const tvh::BoardRefused& e) {
    progress.end();
    link.bye();
    std::fprintf(stderr, "tvlink: the board refused %s: %s\n", arg.c_str(), e.what());
    return tvh::kExitFailure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return tvcli::run_main("tvlink", body, argc, argv);
}
