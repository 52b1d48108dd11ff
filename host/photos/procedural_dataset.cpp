#include "host/photos/procedural_dataset.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "host/base/error.h"

namespace tvh {

namespace {

// FNV-1a of an image's pixels: the dataset's "file hash" (copies of one picture are found by it).
uint64_t pixel_hash(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace

Dataset procedural_dataset(const ProceduralSpec& s) {
  const std::string what = std::string("the ") + tv::procedural_family_name(s.family) + " pretraining set";
  if (s.classes < 1 || s.per_class < 1 || (uint64_t)s.classes * (uint64_t)s.per_class > 10000000u)
    throw Error(what + ": give 1 or more classes and images per class, at most 10,000,000 images in all.");
  if (s.height < 8 || s.width < 8 || s.height > 1024 || s.width > 1024 || (s.channels != 1 && s.channels != 3))
    throw Error(what + ": the images are 8 to 1024 pixels a side, with 1 or 3 channels.");
  Dataset ds;
  ds.source = what;
  ds.height = s.height;
  ds.width = s.width;
  ds.channels = s.channels;
  const int digits = (int)std::to_string(s.classes - 1).size() < 3 ? 3 : (int)std::to_string(s.classes - 1).size();
  std::vector<tv::ProceduralClass> classes((size_t)s.classes);
  for (int c = 0; c < s.classes; ++c) {
    std::string index = std::to_string(c);
    ds.classes.push_back(tv::procedural_family_name(s.family) + std::string((size_t)digits - index.size(), '0') +
                         index);
    tv::procedural_class(s.family, s.seed, c, &classes[(size_t)c]);
  }
  const size_t n = (size_t)s.classes * (size_t)s.per_class;
  ds.labels.resize(n);
  ds.file_hashes.resize(n);
  ds.pixels.resize(n * ds.image_bytes());
  for (size_t i = 0; i < n; ++i) ds.labels[i] = (int)(i / (size_t)s.per_class);
  const int threads = std::max(1, std::min<int>(s.threads > 0 ? s.threads : (int)std::thread::hardware_concurrency(),
                                                (int)std::min<size_t>(n, 64)));
  auto render = [&](int t) {  // image i on thread i % threads: each image depends on (class, instance) only
    for (size_t i = (size_t)t; i < n; i += (size_t)threads) {
      uint8_t* out = ds.pixels.data() + i * ds.image_bytes();
      tv::procedural_image(classes[(size_t)ds.labels[i]], s.seed, (int)(i % (size_t)s.per_class), s.height, s.width,
                           s.channels, out);
      ds.file_hashes[i] = pixel_hash(out, ds.image_bytes());
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(render, t);
  render(0);
  for (std::thread& th : pool) th.join();
  ds.decode_threads = threads;
  return ds;
}

}  // namespace tvh
