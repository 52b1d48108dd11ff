// One image's decoding failure stays its own (issue 20): a malformed JPEG left libjpeg-turbo's
// per-thread handle mid-stream, and every later decode on that thread failed ("two SOI markers",
// "0x0 pixels"): "none of the 91 images could be decoded" for a folder with one bad file. Each kind of
// malformed header is decoded between good images, through the decoder and through a real dataset
// folder on one decoding thread.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "host/base/error.h"
#include "host/photos/dataset.h"
#include "host/photos/jpeg.h"
#include "photo_fixture.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> good_jpeg(int seed, bool progressive = false) {
  std::vector<uint8_t> px(48 * 40 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = (uint8_t)(i * (7 + seed) + seed * 31);
  return tvh::encode_jpeg(px.data(), 48, 40, 3, 90, progressive);
}

// Byte offset of the first marker 0xFF `code` (its 0xFF), or 0.
size_t marker_at(const std::vector<uint8_t>& j, uint8_t code) {
  for (size_t i = 2; i + 1 < j.size(); ++i)
    if (j[i] == 0xFF && j[i + 1] == code) return i;
  return 0;
}

// Malformed JPEGs whose failure happens in the header (the kinds that poisoned the handle) and in the data.
std::vector<std::pair<std::string, std::vector<uint8_t>>> bad_jpegs() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  const std::vector<uint8_t> g = good_jpeg(1);
  std::vector<uint8_t> b = g;
  b[marker_at(b, 0xC0) + 4] = 12;  // a 12-bit frame
  out.push_back({"12-bit precision", b});
  b = g;
  b[marker_at(b, 0xC4) + 4] = 0x77;  // a Huffman table of an impossible class
  out.push_back({"bad Huffman table", b});
  b = g;
  b[marker_at(b, 0xDA) + 5] = 9;  // a scan naming a component that does not exist
  out.push_back({"bad scan header", b});
  out.push_back({"no scan", {0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 64, 0, 64, 1, 1, 0x11, 0}});
  out.push_back({"truncated", std::vector<uint8_t>(g.begin(), g.begin() + (long)g.size() / 2)});
  return out;
}

}  // namespace

TEST(DecoderFailure, AGoodImageDecodesAfterEveryKindOfBadOneOnTheSameThread) {
  const std::vector<uint8_t> good = good_jpeg(2), progressive = good_jpeg(3, true);
  const tvh::Image want = tvh::decode_jpeg(good, "good", 3), want_p = tvh::decode_jpeg(progressive, "prog", 3);
  for (const auto& bad : bad_jpegs()) {
    EXPECT_THROW(tvh::decode_jpeg(bad.second, bad.first, 3), tvh::Error) << bad.first;
    try {  // the header alone (a truncated file's header is intact: it may pass)
      tvh::read_jpeg_header(bad.second.data(), bad.second.size(), bad.first);
    } catch (const tvh::Error&) {
    }
    try {
      EXPECT_EQ(tvh::decode_jpeg(good, "good", 3).pixels, want.pixels) << "after " << bad.first;
      EXPECT_EQ(tvh::decode_jpeg(progressive, "prog", 3).pixels, want_p.pixels) << "after " << bad.first;
      EXPECT_EQ(tvh::read_jpeg_header(good.data(), good.size(), "good").width, 48) << "after " << bad.first;
    } catch (const tvh::Error& e) {
      ADD_FAILURE() << "a good image failed after '" << bad.first << "': " << e.what();
    }
  }
}

TEST(DecoderFailure, AFolderWithOneBadJpegAmongManyGoodOnesLoadsEveryGoodOne) {
  const std::string dir = tvtest::temp_dir("poison-ds");
  const auto bads = bad_jpegs();
  int good_count = 0;
  for (const char* c : {"a", "b"}) {
    fs::create_directories(dir + "/" + c);
    for (int i = 0; i < 20; ++i) {
      const std::vector<uint8_t> j = good_jpeg(i + (c[0] == 'b' ? 50 : 0));
      char name[32];
      snprintf(name, sizeof name, "/%s/img_%02d.jpg", c, i);
      std::ofstream(dir + name, std::ios::binary).write((const char*)j.data(), (std::streamsize)j.size());
      ++good_count;
    }
  }
  // One bad file of each kind, in the middle of class a (by name: decoded between good ones).
  for (size_t k = 0; k < bads.size(); ++k)
    std::ofstream(dir + "/a/img_10_bad" + std::to_string(k) + ".jpg", std::ios::binary)
        .write((const char*)bads[k].second.data(), (std::streamsize)bads[k].second.size());
  tvh::DatasetOptions o;
  o.path = dir;
  o.height = o.width = 16;
  o.threads = 1;  // one thread: every image after the bad ones goes through the same decoder
  const tvh::Dataset ds = tvh::load_dataset(o);
  EXPECT_EQ((int)ds.size(), good_count);
  ASSERT_EQ(ds.skipped.size(), bads.size());
  for (const auto& s : ds.skipped) EXPECT_NE(s.path.find("_bad"), std::string::npos) << s.path << ": " << s.message;
}
