// tvgen-pretrain: writes the procedural pretraining images (tv/image/procedural.h) as class folders of
// JPEGs (quality 95), to look at them or to train on them with any tool; tvtrain draws the same images in memory.
//
//   tvgen-pretrain OUT_DIR [--family fractal|leaves] [--classes N] [--per-class M] [--size S]
//                          [--channels 1|3] [--seed S] [--threads T]
//
// OUT_DIR/<family><i>/img_NNNN.jpg: image k of class i depends only on (family, seed, i, k), so every run
// on every machine writes the same pixels. Nothing is overwritten: OUT_DIR must not exist yet.
#include <cstdio>
#include <filesystem>
#include <string>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "host/photos/procedural_dataset.h"
#include "tools/common/cli.h"

namespace {

int pretrain_main(int argc, char** argv) {
  std::string out_dir, family = "fractal";
  tvh::ProceduralSpec spec;
  int size = 64;
  CLI::App app{"tvgen-pretrain: writes procedural pretraining images (fractals or dead leaves) as class folders.",
               "tvgen-pretrain"};
  app.add_option("OUT_DIR", out_dir, "The folder to create and write into")->required();
  app.add_option("--family", family, "fractal (iterated function systems) or leaves (dead leaves)");
  app.add_option("--classes", spec.classes, "How many classes (default 16)")->check(tvcli::whole(1, 10000));
  app.add_option("--per-class", spec.per_class, "Images per class (default 32)")->check(tvcli::whole(1, 100000));
  app.add_option("--size", size, "Square image side in pixels (default 64)")->check(tvcli::whole(8, 1024));
  app.add_option("--channels", spec.channels, "1 (gray) or 3 (colour, the default)")->check(tvcli::whole(1, 3));
  app.add_option("--seed", spec.seed, "Generator seed (default 1)")->check(tvcli::whole(0, 2147483647));
  app.add_option("--threads", spec.threads, "Threads (default: one per hardware thread)")->check(tvcli::whole(0, 256));
  if (const int rc = tvcli::parse(app, argc, argv, "tvgen-pretrain"); rc >= 0) return rc;
  if (!tv::parse_procedural_family(family.c_str(), &spec.family))
    throw tvh::UsageError("--family '" + family + "': give fractal or leaves.");
  if (spec.channels == 2) throw tvh::UsageError("--channels 2: give 1 (gray) or 3 (colour).");
  spec.height = spec.width = size;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(out_dir, ec)))
    throw tvh::Error(out_dir + " exists: name a new folder (nothing is written over).");
  const tvh::Dataset ds = tvh::procedural_dataset(spec);
  for (const std::string& c : ds.classes) {
    std::filesystem::create_directories(out_dir + "/" + c, ec);
    if (ec) throw tvh::Error("cannot create the folder '" + out_dir + "/" + c + "': " + ec.message() + ".");
  }
  for (size_t i = 0; i < ds.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/img_%04d.jpg", (int)(i % (size_t)spec.per_class));
    tvh::write_file_atomic(out_dir + "/" + ds.classes[(size_t)ds.labels[i]] + name,
                           tvh::encode_jpeg(ds.image(i), ds.width, ds.height, ds.channels, 95, false));
  }
  std::printf("wrote %zu %s images (%d classes x %d, %dx%dx%d) to %s\n", ds.size(), family.c_str(), spec.classes,
              spec.per_class, size, size, spec.channels, out_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tvcli::run_main("tvgen-pretrain", pretrain_main, argc, argv);
}
