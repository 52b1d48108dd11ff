#include "host/photos/procedural_dataset.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "host/base/error.h"
#include "host/base/numbers.h"

namespace tvh {

namespace {

// FNV-1a of an image's pixels: the dataset's "file hash" (copies of one picture are found by it).
uint64_t pixel_hash(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

constexpr const char* kSourcePrefix = "procedural:";
constexpr const char* kSourceForm =
    "procedural:FAMILY[,classes=N][,images=M][,seed=S] with FAMILY fractal, leaves or mixed (e.g. "
    "procedural:fractal,classes=64,images=100)";

// The family of class c of a spec.
tv::ProceduralFamily family_of(const ProceduralSpec& s, int c) {
  return s.mixed ? (c % 2 == 0 ? tv::ProceduralFamily::Fractal : tv::ProceduralFamily::DeadLeaves) : s.family;
}

}  // namespace

bool parse_procedural_source(const std::string& text, ProceduralSpec* spec) {
  const std::string prefix = kSourcePrefix;
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  ProceduralSpec s = *spec;
  std::vector<std::string> items;
  size_t start = prefix.size();
  for (;;) {
    const size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string& family = items[0];
  s.mixed = family == "mixed";
  if (!s.mixed && !tv::parse_procedural_family(family.c_str(), &s.family))
    throw UsageError(text + ": '" + family + "' is not a family; write " + kSourceForm + ".");
  for (size_t k = 1; k < items.size(); ++k) {
    const size_t eq = items[k].find('=');
    const std::string key = items[k].substr(0, eq), value = eq == std::string::npos ? "" : items[k].substr(eq + 1);
    if (key == "classes")
      s.classes = (int)parse_whole_number(text + ": classes", value, 1, 100000);
    else if (key == "images")
      s.per_class = (int)parse_whole_number(text + ": images", value, 1, 100000);
    else if (key == "seed")
      s.seed = parse_whole_number(text + ": seed", value, 0, UINT32_MAX);
    else
      throw UsageError(text + ": '" + items[k] + "' is not a setting; write " + kSourceForm + ".");
  }
  *spec = s;
  return true;
}

std::string procedural_source_text(const ProceduralSpec& s) {
  return std::string(kSourcePrefix) + (s.mixed ? "mixed" : tv::procedural_family_name(s.family)) +
         ",classes=" + std::to_string(s.classes) + ",images=" + std::to_string(s.per_class) +
         ",seed=" + std::to_string(s.seed);
}

Dataset procedural_dataset(const ProceduralSpec& s) {
  const std::string what =
      std::string("the ") + (s.mixed ? "mixed" : tv::procedural_family_name(s.family)) + " pretraining set";
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
    ds.classes.push_back(tv::procedural_family_name(family_of(s, c)) + std::string((size_t)digits - index.size(), '0') +
                         index);
    tv::procedural_class(family_of(s, c), s.seed, c, &classes[(size_t)c]);
  }
  const size_t n = (size_t)s.classes * (size_t)s.per_class;
  ds.labels.resize(n);
  ds.file_hashes.resize(n);
  ds.pixels.resize(n * ds.image_bytes());
  ds.paths.resize(n);
  for (size_t i = 0; i < n; ++i) {
    ds.labels[i] = (int)(i / (size_t)s.per_class);
    ds.paths[i] = ds.classes[(size_t)ds.labels[i]] + "/" + std::to_string(i % (size_t)s.per_class);
  }
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
