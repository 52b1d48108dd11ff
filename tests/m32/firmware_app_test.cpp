// The firmware application as a 32-bit program (long and size_t of 32 bits, as on the ESP32-S3), on an
// in-memory board: a card of files, camera frames, a serial port, PSRAM whose every allocation is
// measured. The board's JPEG decoder checks that the buffer the app hands it holds width * height * 3
// bytes, so an overflowed size is caught where the real decoder would write past the buffer.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.h"
#include "core/forged_model.h"
#include "tv/blob.h"
#include "tv/net.h"
#include "tv/presets.h"

static_assert(sizeof(long) == 4 && sizeof(size_t) == 4, "this test is built with -m32 (scripts/test.sh)");

namespace {

using Bytes = std::vector<uint8_t>;

// The start of a baseline JPEG: SOI and a frame header declaring width x height (what the app reads).
Bytes jpeg_header(int width, int height, uint8_t seed) {
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

// A tinyvision model (He-init weights), as a .tvb on the card.
void put_model(MemoryBoard& board) {
  tv::ModelDesc desc;
  ASSERT_TRUE(tv::preset_model("tinyvision", 3, &desc));
  static tv::ModelPlan plan;
  ASSERT_TRUE(tv::plan_model(desc, &plan).ok());
  std::vector<float> params(plan.param_count);
  tv::he_init(plan, params.data(), 5);
  std::vector<tv::BlobTensor> tensors(tv::kMaxBlobTensors);
  tv::BlobContents c;
  c.model = &desc;
  c.labels = kLabels;
  c.num_labels = 3;
  c.tensors = tensors.data();
  c.num_tensors = tv::float_tensors(plan, params.data(), tensors.data());
  Bytes blob(tv::blob_encoded_size(c));
  size_t size = 0;
  ASSERT_TRUE(tv::blob_encode(c, blob.data(), blob.size(), &size).ok());
  blob.resize(size);
  board.dirs.insert("/header");
  board.files["/header/model.tvb"] = blob;
}

// Runs the app until it waits for input with none left.
void run(tvfw::App& app, MemoryBoard& board) {
  for (int i = 0; i < 100000; ++i) {
    app.loop();
    if (board.serial_in.empty() && app.waiting_for_input()) return;
  }
  FAIL() << "the app never came back to waiting for input";
}

}  // namespace

TEST(Firmware32, ACraftedJpegSizeIsSkippedNotDecodedIntoATooSmallBuffer) {
  MemoryBoard board;
  put_model(board);
  // 43692 x 65535 x 3 = 8,590,062,060 bytes: 127,468 modulo 2^32, the overflowed size_t of the board
  board.frames = {jpeg_header(43692, 65535, 1), jpeg_header(48, 48, 2)};
  tvfw::AppConfig cfg;
  tvfw::App app(board, cfg);
  app.setup();
  ASSERT_NE(board.out.find("Weights: SD (/header/model.tvb"), std::string::npos) << board.out;
  for (char c : std::string("ttttl")) board.serial_in.push_back(c);  // Infer
  run(app, board);
  EXPECT_NE(board.out.find("Frame 1: skipped, 43692x65535 is larger than the 1048576 pixels this firmware decodes"),
            std::string::npos)
      << board.out;
  EXPECT_NE(board.out.find("Frame 2: "), std::string::npos);
  EXPECT_NE(board.out.find("Pred: "), std::string::npos);
  EXPECT_EQ(board.overflows, 0);
  EXPECT_EQ(board.decodes, 1);  // only the honest frame
}

TEST(Firmware32, BootsTheCardsModelInfersAndTrainsFurther) {
  MemoryBoard board;
  put_model(board);
  board.dirs.insert("/images");
  for (int c = 0; c < 3; ++c) {
    const std::string dir = std::string("/images/") + kLabels[c];
    board.dirs.insert(dir);
    for (int i = 0; i < 5; ++i)
      board.files[dir + "/img_" + std::to_string(i) + ".jpg"] = jpeg_header(40 + 8 * c, 40, (uint8_t)(c * 50 + i));
  }
  tvfw::AppConfig cfg;
  cfg.epochs = 1;
  tvfw::App app(board, cfg);
  app.setup();
  for (char c : std::string("tttl")) board.serial_in.push_back(c);  // to Train
  run(app, board);
  EXPECT_NE(board.out.find("Val: 9 images  Train: 6 images"), std::string::npos) << board.out;
  EXPECT_NE(board.out.find("Weights saved to SD: /header/model.tvb"), std::string::npos) << board.out;
  EXPECT_EQ(board.overflows, 0);
  EXPECT_TRUE(board.files.count("/header/model.tvb.bak"));
  static tv::BlobView saved;
  const Bytes& blob = board.files["/header/model.tvb"];
  EXPECT_TRUE(tv::blob_decode(blob.data(), blob.size(), &saved).ok());
  EXPECT_EQ(saved.model.num_classes, 3);
}

// A forged model whose work buffer is 2^31 floats (8 GiB; 0 bytes in a 32-bit size_t): refused at boot
// with the real figure, never planned into a wrapped, too-small buffer.
TEST(Firmware32, AForgedModelWhoseSizesWrapIsRefusedWithTheRealFigure) {
  MemoryBoard board;
  board.dirs.insert("/header");
  board.files["/header/model.tvb"] = tvtest::forged_blob();
  ASSERT_FALSE(board.files["/header/model.tvb"].empty());
  board.dirs.insert("/images");
  board.dirs.insert("/images/a");
  board.dirs.insert("/images/b");
  tvfw::AppConfig cfg;
  tvfw::App app(board, cfg);
  app.setup();
  EXPECT_NE(board.out.find("SD /header/model.tvb refused: its network is too large: a tensor would hold 2147418112 "
                           "floats (8589672448 bytes) at layer 0, more than the 33554431 a model may have"),
            std::string::npos)
      << board.out;
  EXPECT_NE(board.out.find("Weights: He-init"), std::string::npos);
  EXPECT_EQ(board.overflows, 0);
}
