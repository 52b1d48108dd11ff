// An in-memory board for the firmware app (a card of files, camera frames, a serial port, PSRAM whose
// every allocation is measured), shared by the 32-bit app tests and the link protocol's fuzz target.
// The board's JPEG decoder checks that the buffer the app hands it holds width * height * 3 bytes, so
// an overflowed size is caught where the real decoder would write past the buffer.
#pragma once
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "hal.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace m32test {

using Bytes = std::vector<uint8_t>;

// The start of a baseline JPEG: SOI and a frame header declaring width x height (what the app reads).
inline Bytes jpeg_header(int width, int height, uint8_t seed) {
  Bytes b = {0xFF,
             0xD8,
             0xFF,
             0xC0,
             0x00,
             0x11,
             0x08,
             (uint8_t)(height >> 8),
             (uint8_t)height,
             (uint8_t)(width >> 8),
             (uint8_t)width,
             0x03,
             1,
             0x11,
             0,
             2,
             0x11,
             1,
             3,
             0x11,
             1};
  b.push_back(seed);
  b.push_back(0xFF);
  b.push_back(0xD9);
  return b;
}

class MemoryBoard : public tvfw::Hal {
 public:
  std::string out;
  std::deque<char> serial_in;
  std::deque<Bytes> frames;
  std::map<std::string, Bytes> files;
  std::set<std::string> dirs = {"/"};
  std::map<void*, size_t> blocks;
  size_t psram_budget = 8u << 20, psram_used = 0;
  int decodes = 0, overflows = 0;

  // What the app still holds when the board goes (it never frees its model: the board just loses power).
  ~MemoryBoard() override {
    for (auto& b : blocks) free(b.first);
  }

  uint32_t millis() override { return (uint32_t)(now_us_ / 1000); }
  uint64_t micros() override { return now_us_ += 10; }
  void delay_ms(uint32_t ms) override { now_us_ += 1000ull * ms; }
  void serial_write(const char* t, size_t n) override { out.append(t, n); }
  int serial_read() override {
    if (serial_in.empty()) return -1;
    const char c = serial_in.front();
    serial_in.pop_front();
    return (unsigned char)c;
  }
  int touch_read() override { return 0; }
  void start_tick(uint32_t, tvfw::TickFn, void*) override {}
  bool display_present() override { return false; }
  void display_lines(const char* const*, int) override {}
  bool camera_grab(const uint8_t** jpeg, size_t* size) override {
    if (frames.empty()) return false;
    frame_ = frames.front();
    frames.pop_front();
    *jpeg = frame_.data();
    *size = frame_.size();
    return true;
  }
  void camera_release() override {}
  bool jpeg_decode_rgb(const uint8_t* jpeg, size_t size, int width, int height, uint8_t* rgb) override {
    decodes++;
    const auto b = blocks.find(rgb);
    const unsigned long long need = (unsigned long long)width * (unsigned long long)height * 3ull;
    if (b == blocks.end() || need > b->second) {
      overflows++;  // the real decoder would write past the buffer here
      return false;
    }
    const uint8_t seed = size > 3 ? jpeg[size - 3] : 0;
    for (unsigned long long i = 0; i < need; ++i) rgb[i] = (uint8_t)(seed * 37 + (i % 3) * 80 + (i / 3) % 7);
    return true;
  }
  bool sd_ready() override { return true; }
  int file_open(const char* path, bool write) override {
    if (write) {
      files[path].clear();
    } else if (!files.count(path)) {
      return -1;
    }
    open_.push_back({path, 0});
    return (int)open_.size() - 1;
  }
  long file_read(int h, void* buf, size_t n) override {
    const Bytes& f = files[open_[h].first];
    size_t& pos = open_[h].second;
    const size_t k = std::min(n, f.size() - pos);
    memcpy(buf, f.data() + pos, k);
    pos += k;
    return (long)k;
  }
  long file_write(int h, const void* buf, size_t n) override {
    Bytes& f = files[open_[h].first];
    f.insert(f.end(), (const uint8_t*)buf, (const uint8_t*)buf + n);
    return (long)n;
  }
  bool file_close(int) override { return true; }
  long file_size(const char* path) override { return files.count(path) ? (long)files[path].size() : -1; }
  bool exists(const char* path) override { return files.count(path) || dirs.count(path); }
  bool remove(const char* path) override { return files.erase(path) > 0; }
  bool rename(const char* from, const char* to) override {
    if (!files.count(from) || files.count(to)) return false;
    files[to] = files[from];
    files.erase(from);
    return true;
  }
  bool mkdir(const char* path) override { return dirs.insert(path).second; }
  bool list_dir(const char* path, tvfw::DirEntryFn fn, void* ctx) override {
    if (!dirs.count(path)) return false;
    const std::string prefix = std::string(path) + "/";
    for (const auto& d : dirs)
      if (d.compare(0, prefix.size(), prefix) == 0 && d.find('/', prefix.size()) == std::string::npos)
        fn(ctx, d.c_str() + prefix.size(), true);
    for (const auto& f : files)
      if (f.first.compare(0, prefix.size(), prefix) == 0 && f.first.find('/', prefix.size()) == std::string::npos)
        fn(ctx, f.first.c_str() + prefix.size(), false);
    return true;
  }
  void* psram_alloc(size_t bytes) override {
    if (bytes > psram_budget - psram_used) return nullptr;
    void* p = aligned_alloc(16, (bytes + 15) / 16 * 16 + 16);
    if (p) {
      blocks[p] = bytes;
      psram_used += bytes;
    }
    return p;
  }
  void psram_free(void* p) override {
    if (!p) return;
    psram_used -= blocks[p];
    memset(p, 0xA5, blocks[p]);  // freed PSRAM poisoned: a read after free shows as garbage in tests
    blocks.erase(p);
    free(p);
  }
  size_t psram_free_bytes() override { return psram_budget - psram_used; }
  void run_lanes(int lanes, tvfw::LaneWorkFn fn, void* arg) override {
    for (int l = 0; l < lanes; ++l) fn(arg, l);
  }
  int cores() override { return 1; }
  void halt() override { throw std::runtime_error("the app halted: " + out.substr(out.rfind("FATAL"))); }

 private:
  uint64_t now_us_ = 0;
  Bytes frame_;
  std::vector<std::pair<std::string, size_t>> open_;
};

const char* const kLabels[] = {"0blank", "1circle", "2cross"};

// /images/<folder>/img_<i>.jpg for each of `count` folders, `per_folder` photos each (JPEG headers of a
// size and seed that differ by folder and photo).
inline void put_photos(MemoryBoard& board, const char* const* folders, int count, int per_folder) {
  board.dirs.insert("/images");
  for (int c = 0; c < count; ++c) {
    const std::string dir = std::string("/images/") + folders[c];
    board.dirs.insert(dir);
    for (int i = 0; i < per_folder; ++i)
      board.files[dir + "/img_" + std::to_string(i) + ".jpg"] = jpeg_header(40 + 8 * c, 40, (uint8_t)(c * 50 + i));
  }
}

// A tinyvision model for 3 classes (kLabels unless given) with He-init weights, as .tvb bytes (empty
// if the core refuses it).
inline Bytes tinyvision_blob(uint64_t seed, const char* const* labels = kLabels) {
  tv::ModelDesc desc;
  if (!tv::preset_model("tinyvision", 3, &desc)) return Bytes();
  static tv::ModelPlan plan;
  if (!tv::plan_model(desc, &plan).ok()) return Bytes();
  std::vector<float> params(plan.param_count);
  tv::he_init(plan, params.data(), seed);
  std::vector<tv::BlobTensor> tensors(tv::kMaxBlobTensors);
  tv::BlobContents c;
  c.model = &desc;
  c.labels = labels;
  c.num_labels = 3;
  c.tensors = tensors.data();
  c.num_tensors = tv::float_tensors(plan, params.data(), tensors.data());
  Bytes blob(tv::blob_encoded_size(c));
  size_t size = 0;
  if (!tv::blob_encode(c, blob.data(), blob.size(), &size).ok()) return Bytes();
  blob.resize(size);
  return blob;
}

}  // namespace m32test
