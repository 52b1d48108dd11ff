// The .tvb blob and the raw myWeights.bin: round trips and every kind of corruption refused.
#include "tv/model/blob.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/model/model_io.h"
#include "test_support.h"
#include "tv/crc32.h"
#include "tv/formats/raw_weights.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

using namespace tv;

namespace {

struct Fixture {
  ModelDesc desc;
  ModelPlan plan;
  std::vector<float> params;
  std::vector<std::string> labels{"0Blank", "1Cup", "2Pen"};
  explicit Fixture(const char* preset = "webmcu", int classes = 3) {
    preset_model(preset, classes, &desc);
    labels.resize(classes);
    for (int i = 3; i < classes; ++i) labels[i] = "c" + std::to_string(i);
    EXPECT_TRUE(plan_model(desc, &plan).ok());
    params.resize(plan.param_count);
    he_init(plan, params.data(), 42);
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i] == 0.f) params[i] = 0.001f * (float)i;  // make biases distinct too
  }
  std::vector<uint8_t> blob() const {
    return tvh::encode_float_blob(plan, params.data(), labels, "tool=test\nseed=42\n");
  }
};

// Re-seals a blob after an edit so that only the edit (not the CRC) is what the decoder sees.
void reseal(std::vector<uint8_t>& b) {
  uint32_t c = crc32(0, b.data() + 16, b.size() - 16);
  for (int i = 0; i < 4; ++i) b[12 + i] = (uint8_t)(c >> (8 * i));
}

}  // namespace

TEST(Blob, FloatRoundTripIsExact) {
  for (const char* preset : {"webmcu", "tinyvision"}) {
    Fixture f(preset, 3);
    std::vector<uint8_t> b = f.blob();
    EXPECT_EQ(b.size() % 16, 0u);
    BlobView v;
    ASSERT_TRUE(blob_decode(b.data(), b.size(), &v).ok());
    EXPECT_TRUE(same_model(v.model, f.desc));
    EXPECT_FALSE(v.is_int8());
    ASSERT_EQ(v.num_labels, 3);
    const char* t;
    size_t n;
    ASSERT_TRUE(blob_label(v, 1, &t, &n));
    EXPECT_EQ(std::string(t, n), "1Cup");
    EXPECT_EQ(std::string(v.provenance, v.provenance_len), "tool=test\nseed=42\n");
    for (int i = 0; i < v.num_tensors; ++i)
      EXPECT_EQ(((uintptr_t)v.tensors[i].data - (uintptr_t)b.data()) % 16, 0u) << "tensor data must be 16-aligned";
    std::vector<float> back(f.plan.param_count, -1.f);
    ASSERT_TRUE(blob_load_float_params(v, f.plan, back.data()).ok());
    EXPECT_EQ(0, std::memcmp(back.data(), f.params.data(), back.size() * 4)) << preset;
    // Encoding again gives the same bytes.
    EXPECT_EQ(b, f.blob());
  }
}

TEST(Blob, TensorsAreNamedPerLayer) {
  Fixture f;
  std::vector<uint8_t> b = f.blob();
  BlobView v;
  ASSERT_TRUE(blob_decode(b.data(), b.size(), &v).ok());
  ASSERT_EQ(v.num_tensors, 6);
  EXPECT_STREQ(v.tensors[0].name, "l0_conv2d.w");
  EXPECT_STREQ(v.tensors[5].name, "l8_dense.b");
  EXPECT_EQ(v.tensors[0].dims[0], 4u);
  EXPECT_EQ(v.tensors[0].dims[3], 3u);
  EXPECT_EQ(v.tensors[4].dims[1], 6728u);
}

TEST(Blob, EveryTruncationIsRefused) {
  Fixture f("webmcu", 2);
  std::vector<uint8_t> b = f.blob();
  BlobView v;
  for (size_t len = 0; len < b.size(); len += (len < 256 ? 1 : 97)) {
    Status st = blob_decode(b.data(), len, &v);
    EXPECT_FALSE(st.ok()) << len;
  }
}

TEST(Blob, CorruptionsAreRefusedWithTheirOwnStatus) {
  Fixture f("webmcu", 2);
  const std::vector<uint8_t> good = f.blob();
  BlobView v;
  {  // wrong magic
    auto b = good;
    b[0] = 'X';
    EXPECT_EQ(blob_decode(b.data(), b.size(), &v).code, StatusCode::BlobBadMagic);
  }
  {  // newer major version
    auto b = good;
    b[4] = 2;
    EXPECT_EQ(blob_decode(b.data(), b.size(), &v).code, StatusCode::BlobBadVersion);
  }
  {  // a flipped bit anywhere after the CRC field: CRC mismatch
    for (size_t pos : {size_t(20), size_t(100), good.size() / 2, good.size() - 1}) {
      auto b = good;
      b[pos] ^= 0x10;
      EXPECT_EQ(blob_decode(b.data(), b.size(), &v).code, StatusCode::BlobBadCrc) << pos;
    }
  }
  {  // declared size larger than the buffer: truncated
    auto b = good;
    b.resize(b.size() - 16);
    EXPECT_EQ(blob_decode(b.data(), b.size(), &v).code, StatusCode::BlobTruncated);
  }
  {  // an inconsistent section length, CRC recomputed so only the structure is wrong
    auto b = good;
    b[32 + 4] = 0xFF;
    b[32 + 5] = 0xFF;
    reseal(b);
    EXPECT_EQ(blob_decode(b.data(), b.size(), &v).code, StatusCode::BlobCorrupt);
  }
  {  // an unknown layer type in the model record
    auto b = good;
    b[32 + 16 + 4 + 16] = 99;
    reseal(b);
    EXPECT_EQ(blob_decode(b.data(), b.size(), &v).code, StatusCode::BlobCorrupt);
  }
}

TEST(Blob, ADetectorSaysSoInItsTaskSectionAndAClassifierKeepsMinorZero) {
  Fixture c("tinyvision", 3);
  const std::vector<uint8_t> classifier = c.blob();
  EXPECT_EQ(classifier[6], 0);  // minor 0, no TASK section: the bytes every classifier had
  EXPECT_EQ(std::search(classifier.begin(), classifier.end(), std::begin("TASK"), std::end("TASK") - 1),
            classifier.end());
  BlobView v;
  ASSERT_TRUE(blob_decode(classifier.data(), classifier.size(), &v).ok());
  EXPECT_EQ(v.model.task, Task::Classify);

  Fixture f("detect", 3);
  f.desc.detect_threshold = 0.625f;
  f.plan.desc.detect_threshold = 0.625f;
  const std::vector<uint8_t> good = f.blob();
  EXPECT_EQ(good[6], kBlobMinorTask);
  ASSERT_TRUE(blob_decode(good.data(), good.size(), &v).ok());
  EXPECT_EQ(v.model.task, Task::Detect);
  EXPECT_EQ(v.model.detect_threshold, 0.625f);
  EXPECT_TRUE(same_model(v.model, f.desc));
  ModelPlan plan;
  EXPECT_TRUE(plan_model(v.model, &plan).ok());

  // the section's payload: task, three zero bytes, the threshold
  const auto at = std::search(good.begin(), good.end(), std::begin("TASK"), std::end("TASK") - 1);
  ASSERT_NE(at, good.end());
  const size_t payload = (size_t)(at - good.begin()) + 16;
  const auto refused = [&](size_t offset, std::vector<uint8_t> bytes) {
    auto b = good;
    std::copy(bytes.begin(), bytes.end(), b.begin() + (long)(payload + offset));
    reseal(b);
    BlobView w;
    return blob_decode(b.data(), b.size(), &w).code == StatusCode::BlobCorrupt;
  };
  EXPECT_TRUE(refused(0, {0}));                       // "classify" is said by having no section
  EXPECT_TRUE(refused(0, {2}));                       // an unknown task
  EXPECT_TRUE(refused(2, {1}));                       // padding not zero
  EXPECT_TRUE(refused(4, {0, 0, 0, 0}));              // threshold 0
  EXPECT_TRUE(refused(4, {0, 0, 0xC0, 0x7F}));        // NaN
  EXPECT_TRUE(refused(4, {0x01, 0x00, 0x80, 0x3F}));  // just above 1
  EXPECT_FALSE(refused(4, {0, 0, 0x80, 0x3F}));       // exactly 1
}

TEST(Blob, AModelOtherThanExpectedIsRefusedAndNothingIsWritten) {
  Fixture two("webmcu", 2), three("webmcu", 3);
  std::vector<uint8_t> b = two.blob();
  BlobView v;
  ASSERT_TRUE(blob_decode(b.data(), b.size(), &v).ok());
  std::vector<float> dst(three.plan.param_count, 7.f);
  EXPECT_EQ(blob_load_float_params(v, three.plan, dst.data()).code, StatusCode::BlobModelMismatch);
  for (float x : dst) ASSERT_EQ(x, 7.f);
}

TEST(Blob, HostLoaderNamesTheFileAndTheProblem) {
  std::string dir = tvtest::temp_dir("blob");
  Fixture f("webmcu", 2);
  std::vector<uint8_t> b = f.blob();
  b[200] ^= 1;
  tvh::write_file_atomic(dir + "/bad.tvb", b);
  try {
    tvh::load_model(dir + "/bad.tvb");
    FAIL() << "a corrupted blob loaded";
  } catch (const tvh::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.tvb"), std::string::npos) << msg;
    EXPECT_NE(msg.find("CRC"), std::string::npos) << msg;
  }
}

TEST(RawWeights, RawFileRoundTripsThroughOurLayout) {
  Fixture f("webmcu", 3);
  std::vector<uint8_t> raw(raw_weights_size(3));
  ASSERT_TRUE(raw_weights_export(f.plan, f.params.data(), raw.data(), raw.size()).ok());
  EXPECT_EQ(raw.size(), 82380u);
  std::vector<float> back(f.plan.param_count);
  ASSERT_TRUE(raw_weights_import(raw.data(), raw.size(), f.plan, back.data()).ok());
  EXPECT_EQ(0, std::memcmp(back.data(), f.params.data(), back.size() * 4));
  EXPECT_EQ(raw_weights_classes_for_size(55464), 2);
  EXPECT_EQ(raw_weights_classes_for_size(82380), 3);
  EXPECT_EQ(raw_weights_classes_for_size(82381), 0);
  EXPECT_EQ(raw_weights_import(raw.data(), raw.size() - 4, f.plan, back.data()).code,
            StatusCode::RawWeightsSizeMismatch);
}

TEST(RawWeights, PermutationMatchesTheReferenceIndexRules) {
  // Write a raw file whose every float is its own index, import it, and check a few of the
  // reference's index rules land where our HWC layout expects them.
  Fixture f("webmcu", 2);
  std::vector<uint8_t> raw(raw_weights_size(2));
  for (size_t i = 0; i < raw.size() / 4; ++i) {
    float x = (float)i;
    std::memcpy(raw.data() + 4 * i, &x, 4);
  }
  std::vector<float> p(f.plan.param_count);
  ASSERT_TRUE(raw_weights_import(raw.data(), raw.size(), f.plan, p.data()).ok());
  const LayerPlan& c2 = f.plan.layers[4];
  // raw conv2_w[f*36 + c*9 + ky*3 + kx] at file offset 112: ours [f][ky][kx][c].
  int fo = 5, c = 2, ky = 1, kx = 2;
  EXPECT_EQ(p[c2.param_offset + fo * 36 + (ky * 3 + kx) * 4 + c], (float)(112 + fo * 36 + c * 9 + ky * 3 + kx));
  const LayerPlan& d = f.plan.layers[8];
  // raw dense_w[k*6728 + filter*841 + y*29 + x] at file offset 408: ours [k][(y*29+x)*8 + filter].
  int k = 1, fil = 6, y = 10, x = 3;
  EXPECT_EQ(p[d.param_offset + k * 6728 + (y * 29 + x) * 8 + fil], (float)(408 + k * 6728 + fil * 841 + y * 29 + x));
  // conv1 is identical in both layouts.
  EXPECT_EQ(p[f.plan.layers[0].param_offset + 50], 50.f);
}

TEST(Blob, TheSameLabelTwiceIsRefusedByTheEncoderAndTheDecoder) {
  Fixture f;
  f.labels = {"cup", "pen", "cup"};
  EXPECT_ANY_THROW(f.blob());  // the encoder refuses
  std::vector<const char*> ptrs = {"cup", "pen", "cup"};
  BlobContents c;
  c.model = &f.desc;
  c.labels = ptrs.data();
  c.num_labels = 3;
  std::vector<uint8_t> out(1 << 16);
  size_t size = 0;
  Status st = blob_encode(c, out.data(), out.size(), &size);
  EXPECT_EQ(st.code, StatusCode::BlobDuplicateLabel);
  EXPECT_EQ(st.a, 0);
  EXPECT_EQ(st.b, 2);
  // a blob edited to hold it: refused by the decoder, naming the two classes
  f.labels = {"cup", "pen", "cuq"};
  std::vector<uint8_t> b = f.blob();
  const uint8_t want[] = {3, 0, 'c', 'u', 'q'};
  auto at = std::search(b.begin(), b.end(), std::begin(want), std::end(want));
  ASSERT_NE(at, b.end());
  at[4] = 'p';
  reseal(b);
  BlobView v;
  st = blob_decode(b.data(), b.size(), &v);
  EXPECT_EQ(st.code, StatusCode::BlobDuplicateLabel);
  EXPECT_EQ(st.a, 0);
  EXPECT_EQ(st.b, 2);
  // labels differing only in case are different labels to the format (the board renames one folder)
  f.labels = {"Cup", "pen", "cup"};
  b = f.blob();
  EXPECT_TRUE(blob_decode(b.data(), b.size(), &v).ok());
}

namespace {

// A decoded blob encoded again with `labels` (blob_contents_relabeled).
std::vector<uint8_t> relabeled(const std::vector<uint8_t>& b, const std::vector<const char*>& labels) {
  BlobView v;
  EXPECT_TRUE(blob_decode(b.data(), b.size(), &v).ok());
  const BlobContents c = blob_contents_relabeled(v, labels.data());
  std::vector<uint8_t> out(blob_encoded_size(c));
  size_t n = 0;
  EXPECT_TRUE(blob_encode(c, out.data(), out.size(), &n).ok());
  EXPECT_EQ(n, out.size());
  return out;
}

}  // namespace

TEST(Blob, RelabelingChangesTheLabelsAndNothingElse) {
  Fixture f("tinyvision", 3);
  const std::vector<uint8_t> b = f.blob();
  EXPECT_EQ(relabeled(b, {"0Blank", "1Cup", "2Pen"}), b) << "its own labels give the same bytes";
  const std::vector<uint8_t> r = relabeled(b, {"0Blank", "a much longer name for the cup", "2Pen"});
  BlobView v;
  ASSERT_TRUE(blob_decode(r.data(), r.size(), &v).ok());
  const char* t;
  size_t n;
  ASSERT_TRUE(blob_label(v, 1, &t, &n));
  EXPECT_EQ(std::string(t, n), "a much longer name for the cup");
  EXPECT_EQ(std::string(v.provenance, v.provenance_len), "tool=test\nseed=42\n");
  std::vector<float> back(f.plan.param_count);
  ASSERT_TRUE(blob_load_float_params(v, f.plan, back.data()).ok());
  EXPECT_EQ(0, std::memcmp(back.data(), f.params.data(), back.size() * 4));
  // Relabeled back, the original bytes again; a duplicate label is refused by the encoder.
  EXPECT_EQ(relabeled(r, {"0Blank", "1Cup", "2Pen"}), b);
  BlobView rv;
  ASSERT_TRUE(blob_decode(r.data(), r.size(), &rv).ok());
  const char* dup[] = {"0Blank", "0Blank", "2Pen"};
  const BlobContents c = blob_contents_relabeled(rv, dup);
  std::vector<uint8_t> out(blob_encoded_size(c));
  EXPECT_EQ(blob_encode(c, out.data(), out.size(), nullptr).code, StatusCode::BlobDuplicateLabel);
}

TEST(Blob, RelabelingKeepsAnEmptyProvenanceSection) {
  Fixture f("webmcu", 2);
  const std::vector<uint8_t> b = tvh::encode_float_blob(f.plan, f.params.data(), {"a", "b"}, "");
  EXPECT_EQ(relabeled(b, {"a", "b"}), b);
}
