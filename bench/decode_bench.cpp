// tv_bench_decode: 12-megapixel photos (4000x3000 JPEGs) to the 64x64 model input, against djpeg's full
// decode of the same files. Prints figures; asserts nothing about time.
//
//   tv_bench_decode [--images N] [--runs R] [--size WxH] [--input S] [--photos DIR]
//
// The JPEGs are made here (quality 90, 4:2:0, photo-like content: smooth gradients, edges and sensor
// noise) in a temporary folder laid out as a 2-class dataset. Timed, each R times (median kept):
//   djpeg   `djpeg -rgb -outfile /dev/null FILE` for every file, one process after the other (1 thread)
//   tvtrain's loading: tvh::load_dataset to SxS (read, decode at the scaled-DCT size, crop, resize)
//           with 1 thread and with 2 threads
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "host/base/files.h"
#include "host/photos/dataset.h"
#include "host/photos/jpeg.h"

namespace fs = std::filesystem;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

// A photo-like picture: two smooth gradients, a few hard edges and +-8 of noise per sample.
std::vector<uint8_t> photo(int w, int h, uint32_t seed) {
  std::vector<uint8_t> px((size_t)w * h * 3);
  uint32_t s = seed * 2654435761u + 1;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const bool band = ((x / 300 + y / 250 + (int)seed) % 3) == 0;
      for (int c = 0; c < 3; ++c) {
        s = s * 1664525u + 1013904223u;
        int v = (x * (60 + 40 * c)) / w + (y * (120 - 30 * c)) / h + (band ? 70 : 20) + (int)(s >> 28) - 8;
        px[((size_t)y * w + x) * 3 + c] = (uint8_t)std::clamp(v, 0, 255);
      }
    }
  }
  return px;
}

// A real photo enlarged to w x h by bilinear interpolation (what a phone's 12-megapixel picture of the
// same scene looks like to the decoder: smooth areas and edges, no per-pixel noise).
std::vector<uint8_t> enlarged(const tvh::Image& src, int w, int h) {
  std::vector<uint8_t> px((size_t)w * h * 3);
  for (int y = 0; y < h; ++y) {
    const double fy = std::max(0.0, (y + 0.5) * src.height / h - 0.5);
    const int y0 = std::min((int)fy, src.height - 1), y1 = std::min(y0 + 1, src.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < w; ++x) {
      const double fx = std::max(0.0, (x + 0.5) * src.width / w - 0.5);
      const int x0 = std::min((int)fx, src.width - 1), x1 = std::min(x0 + 1, src.width - 1);
      const double wx = fx - x0;
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int xx, int yy) { return (double)src.pixels[((size_t)yy * src.width + xx) * 3 + c]; };
        const double v =
            (1 - wy) * ((1 - wx) * at(x0, y0) + wx * at(x1, y0)) + wy * ((1 - wx) * at(x0, y1) + wx * at(x1, y1));
        px[((size_t)y * w + x) * 3 + c] = (uint8_t)std::clamp((int)(v + 0.5), 0, 255);
      }
    }
  }
  return px;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times djpeg and tvtrain's loading on the JPEGs in dir (a 2-class dataset); prints one block.
bool run_set(const std::string& label, const std::string& dir, const std::vector<std::string>& files, size_t bytes,
             int w, int h, int input, int runs) {
  const int images = (int)files.size();
  std::printf("%s: %d JPEGs of %dx%d (quality 90, 4:2:0, %.2f MB on average) to %dx%d, median of %d runs\n",
              label.c_str(), images, w, h, bytes / 1e6 / images, input, input, runs);
  std::vector<double> djpeg_t;
  for (int r = 0; r < runs; ++r) {
    const double t0 = now();
    for (const auto& f : files) {
      const std::string cmd = "djpeg -rgb -outfile /dev/null '" + f + "'";
      if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "djpeg failed on %s\n", f.c_str());
        return false;
      }
    }
    djpeg_t.push_back(now() - t0);
  }
  const double djpeg_ms = 1e3 * median(djpeg_t) / images;
  std::printf("  djpeg full decode, 1 thread:   %7.1f ms/image\n", djpeg_ms);
  size_t scaled = 0;
  std::vector<uint8_t> first;
  for (int threads : {1, 2}) {
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) {
      tvh::DatasetOptions o;
      o.path = dir;
      o.height = o.width = input;
      o.threads = threads;
      const double t0 = now();
      const tvh::Dataset ds = tvh::load_dataset(o);
      t.push_back(now() - t0);
      scaled = ds.scaled_decodes;
      if (first.empty()) first = ds.pixels;
      if (ds.pixels != first) {
        std::fprintf(stderr, "the decoded images differ between runs or thread counts\n");
        return false;
      }
    }
    const double ms = 1e3 * median(t) / images;
    std::printf("  tvtrain loading, %d thread%s:   %7.1f ms/image = %.2fx djpeg's speed\n", threads,
                threads == 1 ? " " : "s", ms, djpeg_ms / ms);
  }
  std::printf("  %zu of %d took the scaled-DCT path; 1 and 2 threads gave identical pixels\n", scaled, images);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int images = 8, runs = 3, w = 4000, h = 3000, input = 64;
  std::string photos = std::string(TV_SOURCE_DIR) + "/../shared/datasets/webmcu-b";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--images" && i + 1 < argc) {
      images = std::atoi(argv[++i]);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--size" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%dx%d", &w, &h) != 2) return 2;
    } else if (a == "--input" && i + 1 < argc) {
      input = std::atoi(argv[++i]);
    } else if (a == "--photos" && i + 1 < argc) {
      photos = argv[++i];
    } else {
      std::fprintf(stderr, "usage: tv_bench_decode [--images N] [--runs R] [--size WxH] [--input S] [--photos DIR]\n");
      return 2;
    }
  }
  if (images < 2 || runs < 1 || w < 16 || h < 16 || input < 1) return 2;
  if (std::system("command -v djpeg >/dev/null 2>&1") != 0) {
    std::printf("djpeg not found (Debian package libjpeg-turbo-progs): skipped\n");
    return 0;
  }
  std::printf("CPU: %s (%u hardware threads)\n", cpu_model().c_str(), std::thread::hardware_concurrency());
  const std::string base = (fs::temp_directory_path() / ("tv_bench_decode." + std::to_string(getpid()))).string();

  // Set 1: real photos (webmcu-b's, or --photos DIR's JPEGs) enlarged to w x h.
  std::vector<std::string> sources;
  std::error_code ec;
  if (fs::is_directory(photos, ec)) {
    for (auto it = fs::recursive_directory_iterator(photos, ec); it != fs::recursive_directory_iterator(); ++it) {
      if (it->is_regular_file() && it->path().extension() == ".jpg") sources.push_back(it->path().string());
    }
    std::sort(sources.begin(), sources.end());
  }
  bool ok = true;
  if (sources.empty()) {
    std::printf("%s has no JPEGs: the enlarged-photo set is skipped\n", photos.c_str());
  } else {
    std::vector<std::string> files;
    size_t bytes = 0;
    for (int i = 0; i < images; ++i) {
      const std::string src = sources[(size_t)i * sources.size() / (size_t)images];
      const tvh::Image img = tvh::decode_jpeg(tvh::read_file(src), src, 3);
      const auto px = enlarged(img, w, h);
      const std::string path = base + "/photos" + (i % 2 ? "/b/" : "/a/") + "photo" + std::to_string(i) + ".jpg";
      fs::create_directories(fs::path(path).parent_path());
      const auto jpeg = tvh::encode_jpeg(px.data(), w, h, 3, 90);
      tvh::write_file_atomic(path, jpeg);
      files.push_back(path);
      bytes += jpeg.size();
    }
    ok = run_set("real photos enlarged (" + photos + ")", base + "/photos", files, bytes, w, h, input, runs);
  }

  // Set 2: synthetic pictures with sensor-like noise in every pixel (the entropy decoder's worst case).
  std::vector<std::string> files;
  size_t bytes = 0;
  for (int i = 0; i < images && ok; ++i) {
    const std::string path = base + "/noisy" + (i % 2 ? "/b/" : "/a/") + "photo" + std::to_string(i) + ".jpg";
    fs::create_directories(fs::path(path).parent_path());
    const auto px = photo(w, h, (uint32_t)i);
    const auto jpeg = tvh::encode_jpeg(px.data(), w, h, 3, 90);
    tvh::write_file_atomic(path, jpeg);
    files.push_back(path);
    bytes += jpeg.size();
  }
  if (ok) ok = run_set("noisy synthetic pictures", base + "/noisy", files, bytes, w, h, input, runs);
  fs::remove_all(base, ec);
  return ok ? 0 : 1;
}
