// tvfashion-mnist: writes Fashion-MNIST (Debian package dataset-fashion-mnist) as class folders of
// grayscale JPEGs, the layout every TinyVision tool reads, so the figures measured on it can be re-run.
//
//   tvfashion-mnist OUT_DIR [--source DIR] [--quality Q] [--train-limit N] [--test-limit N]
//
// Reads the four gzip-compressed IDX files of DIR (default /usr/share/datasets/fashion-mnist):
// train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
// t10k-labels-idx1-ubyte.gz, and writes OUT_DIR/train/<class>/img_NNNNN.jpg (60,000 images) and
// OUT_DIR/test/<class>/img_NNNNN.jpg (10,000), NNNNN = the image's index in its IDX file, classes named
// 0tshirt, 1trouser, ... 9boot so that sorted names give the dataset's label order. --train-limit and
// --test-limit keep the first N images of each file (for quick experiments).
//
// Nothing is overwritten: OUT_DIR must not exist; everything is written into a temporary sibling
// folder that is renamed to OUT_DIR only when complete (and removed on failure).
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "datasets/new_folder.h"
#include "host/base/error.h"
#include "host/photos/jpeg.h"
#include "tools/common/cli.h"

namespace {

namespace fs = std::filesystem;

const char* const kClassNames[10] = {"0tshirt", "1trouser", "2pullover", "3dress", "4coat",
                                     "5sandal", "6shirt",   "7sneaker",  "8bag",   "9boot"};

// The whole decompressed content of a .gz file; throws naming the file when it is missing or corrupt.
std::vector<uint8_t> read_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw tvh::Error("cannot open '" + path +
                     "': install Debian's dataset-fashion-mnist package or pass --source with its folder.");
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      throw tvh::Error("'" + path + "' is not a readable gzip file (" + msg + "); re-install the dataset package.");
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
    if (out.size() > (size_t(1) << 28)) {
      gzclose(f);
      throw tvh::Error("'" + path + "' decompresses to more than 256 MB; it is not a Fashion-MNIST file.");
    }
  }
  gzclose(f);
  return out;
}

uint32_t be32(const uint8_t* p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

struct Images {
  int count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> bytes;  // the file; pixels start at offset 16
  const uint8_t* image(int i) const { return bytes.data() + 16 + (size_t)i * rows * cols; }
};

Images read_images(const std::string& path) {
  Images im;
  im.bytes = read_gz(path);
  if (im.bytes.size() < 16 || be32(im.bytes.data()) != 0x00000803)
    throw tvh::Error("'" + path + "' is not an IDX image file (magic 0x00000803 expected).");
  const uint32_t n = be32(im.bytes.data() + 4), r = be32(im.bytes.data() + 8), c = be32(im.bytes.data() + 12);
  if (r == 0 || c == 0 || r > 4096 || c > 4096 || n > 10000000u || im.bytes.size() != 16 + (size_t)n * r * c)
    throw tvh::Error("'" + path + "' has a header (" + std::to_string(n) + " images of " + std::to_string(r) + "x" +
                     std::to_string(c) + ") that does not match its size of " + std::to_string(im.bytes.size()) +
                     " bytes.");
  im.count = (int)n;
  im.rows = (int)r;
  im.cols = (int)c;
  return im;
}

std::vector<uint8_t> read_labels(const std::string& path, int expected_count) {
  std::vector<uint8_t> b = read_gz(path);
  if (b.size() < 8 || be32(b.data()) != 0x00000801)
    throw tvh::Error("'" + path + "' is not an IDX label file (magic 0x00000801 expected).");
  const uint32_t n = be32(b.data() + 4);
  if (b.size() != 8 + (size_t)n || (int)n != expected_count)
    throw tvh::Error("'" + path + "' holds " + std::to_string(n) + " labels in " + std::to_string(b.size()) +
                     " bytes, but its image file holds " + std::to_string(expected_count) + " images.");
  for (uint32_t i = 0; i < n; ++i)
    if (b[8 + i] > 9)
      throw tvh::Error("'" + path + "': label " + std::to_string(i) + " is " + std::to_string(b[8 + i]) +
                       ", outside 0..9.");
  return std::vector<uint8_t>(b.begin() + 8, b.end());
}

// Writes one split (images + labels) below dir/<split>/<class>/; returns the JPEG bytes written.
size_t write_split(const std::string& source, const char* prefix, const fs::path& dir, int limit, int quality,
                   int* written) {
  const Images im = read_images(source + "/" + prefix + "-images-idx3-ubyte.gz");
  const std::vector<uint8_t> labels = read_labels(source + "/" + prefix + "-labels-idx1-ubyte.gz", im.count);
  for (const char* c : kClassNames) fs::create_directories(dir / c);
  const int n = limit > 0 && limit < im.count ? limit : im.count;
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<uint8_t> jpeg = tvh::encode_jpeg(im.image(i), im.cols, im.rows, 1, quality, false);
    char name[32];
    std::snprintf(name, sizeof name, "img_%05d.jpg", i);
    tvgen::write_whole_file(dir / kClassNames[labels[(size_t)i]] / name, jpeg.data(), jpeg.size());
    total += jpeg.size();
  }
  *written = n;
  return total;
}

int fashion_main(int argc, char** argv) {
  std::string out_dir, source = "/usr/share/datasets/fashion-mnist";
  int quality = 95, train_limit = 0, test_limit = 0;
  CLI::App app{
      "tvfashion-mnist: writes Fashion-MNIST as OUT_DIR/{train,test}/<class>/img_NNNNN.jpg (28x28 grayscale "
      "JPEGs). OUT_DIR must not exist; it appears only when everything was written.",
      "tvfashion-mnist"};
  app.add_option("OUT_DIR", out_dir, "The folder to create")->required();
  app.add_option("--source", source,
                 "Folder of the four .gz IDX files (default /usr/share/datasets/fashion-mnist, Debian package "
                 "dataset-fashion-mnist)");
  app.add_option("--quality", quality, "JPEG quality (default 95)")->check(tvcli::whole(1, 100));
  app.add_option("--train-limit", train_limit, "Only the first N training images (default: all 60,000)")
      ->check(tvcli::whole(1, 10000000));
  app.add_option("--test-limit", test_limit, "Only the first N test images (default: all 10,000)")
      ->check(tvcli::whole(1, 10000000));
  if (const int rc = tvcli::parse(app, argc, argv, "tvfashion-mnist"); rc >= 0) return rc;
  int n_train = 0, n_test = 0;
  size_t bytes = 0;
  tvgen::write_new_folder(out_dir, [&](const fs::path& tmp) {
    bytes = write_split(source, "train", tmp / "train", train_limit, quality, &n_train);
    bytes += write_split(source, "t10k", tmp / "test", test_limit, quality, &n_test);
  });
  std::printf("wrote %d training and %d test images (28x28 grayscale JPEG, quality %d, %zu bytes) to %s\n", n_train,
              n_test, quality, bytes, out_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tvcli::run_main("tvfashion-mnist", fashion_main, argc, argv);
}
