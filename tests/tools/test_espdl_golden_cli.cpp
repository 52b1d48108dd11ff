// Espressif's golden .espdl files pass the loader checks, reserialise to the same `flatc --json`, and
// `tvexport verify` reproduces their embedded outputs; `tvexport ... -o FILE.espdl` and `tvexport verify`
// on the command line, end to end from photos (tvtrain -> tvquant -> tvexport -> verify).
#include "espdl_export_fixtures.h"

namespace {
using namespace espdl_fixtures;

// ---------------------------------------------------------------- Espressif's golden files

class GoldenEspdl : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenEspdl, PassesTheLoaderChecksAndRewritesToTheSameJson) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::string path = tvtest::shared_path(std::string("espdl-golden/") + GetParam());
  const std::vector<uint8_t> original = tvh::read_file(path);
  const tvh::EspdlModel m = tvh::espdl_parse(original.data(), original.size(), GetParam());
  const std::vector<std::string> problems = tvh::espdl_loader_problems(m);
  EXPECT_TRUE(problems.empty()) << problems[0];
  EXPECT_TRUE(flatbuffer_verifies(original));
  const std::vector<uint8_t> rewritten = tvh::espdl_serialize(m);
  EXPECT_TRUE(flatbuffer_verifies(rewritten));
  const tvh::EspdlModel back = tvh::espdl_parse(rewritten.data(), rewritten.size(), "rewritten");
  expect_same_model(m, back);
  EXPECT_TRUE(tvh::espdl_run_test_vectors(back).passed);
  if (have_flatc()) {
    const std::string dir = tvtest::temp_dir("espdl-golden-json");
    const std::string theirs = flatc_json(original, dir, "theirs"), ours = flatc_json(rewritten, dir, "ours");
    ASSERT_FALSE(theirs.empty());
    EXPECT_TRUE(theirs == ours) << "flatc --json differs between " << GetParam() << " and our rewrite";
  }
}

TEST_P(GoldenEspdl, TvexportVerifyReproducesTheEmbeddedOutputs) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::string path = tvtest::shared_path(std::string("espdl-golden/") + GetParam());
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(path), &out, &err), 0) << out << err;
  EXPECT_EQ(out.rfind("OK: all ", 0), 0u) << out;
}

INSTANTIATE_TEST_SUITE_P(AllGoldenFiles, GoldenEspdl, ::testing::ValuesIn(tvtest::kEspdlGoldenFiles),
                         tvtest::file_param_name);

// ---------------------------------------------------------------- the command line

TEST(TvexportEspdl, ExportsVerifiesAndDecodesWithFlatc) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl");
  const std::vector<uint8_t> blob = q8_blob(every_op_model(), 31);
  tvh::write_file_atomic(dir + "/a.q8.tvb", blob);
  tvh::write_file_atomic(dir + "/b.q8.tvb", blob);
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " " + q(dir + "/a.q8.tvb") + " -o " + q(dir + "/a.espdl"), &out, &err), 0)
      << err;
  EXPECT_TRUE(out.empty());  // results go to the file, the summary to stderr
  EXPECT_NE(err.find("l0_conv2d + l1_relu -> Conv"), std::string::npos) << err;
  EXPECT_NE(err.find("wrote " + dir + "/a.espdl"), std::string::npos) << err;
  ASSERT_EQ(
      tvtest::run_command("cd " + q(dir) + " && " + tvexport() + " b.q8.tvb --format espdl -o b.model", &out, &err), 0)
      << err;
  const std::vector<uint8_t> a = tvh::read_file(dir + "/a.espdl");
  EXPECT_EQ(a, tvh::read_file(dir + "/b.model"));  // same model, other names: same bytes
  tvh::EspdlExportOptions o;
  o.version = TV_VERSION;  // the CLI records its version as producer_version
  EXPECT_EQ(a, export_of(blob, o).bytes);

  ASSERT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/a.espdl"), &out, &err), 0) << out << err;
  EXPECT_EQ(out.rfind("OK: all 1 test outputs", 0), 0u) << out;
  EXPECT_TRUE(err.empty()) << err;  // no loader problems noted
  ASSERT_EQ(tvtest::run_command(tvexport() + " verify --json " + q(dir + "/a.espdl"), &out, &err), 0) << err;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["target"], "esp32s3");
  EXPECT_EQ(j["nodes"], 11);
  EXPECT_EQ(j["loader_problems"].size(), 0u);
  if (have_flatc()) {
    const std::string json = flatc_json(a, dir, "a");
    ASSERT_FALSE(json.empty());
    const nlohmann::json f = nlohmann::json::parse(json);
    EXPECT_EQ(f["graph"]["node"][0]["op_type"], "Conv");
    EXPECT_EQ(f["graph"]["output"][0]["name"], "output");
    EXPECT_EQ(f["metadata_props"][0]["value"], "esp32s3");
  }
}

// Writes a copy of `file` changed by `edit` (through the reader and the writer).
template <typename F>
std::string edited(const std::string& file, const std::string& to, F edit) {
  tvh::EspdlModel m = tvh::espdl_read_file(file);
  edit(m);
  tvh::write_file_atomic(to, tvh::espdl_serialize(m));
  return to;
}

TEST(TvexportEspdl, VerifyNamesTheFirstDifferenceAndRefusesUnknownOps) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl-verify");
  tvh::write_file_atomic(dir + "/m.q8.tvb", q8_blob(averaging_model(), 8));
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " " + q(dir + "/m.q8.tvb") + " -o " + q(dir + "/m.espdl"), &out, &err), 0)
      << err;
  EXPECT_NE(err.find("note: layer 1 (avgpool2d) averages over 9 cells"), std::string::npos) << err;
  // One logit changed: the tensor and the index are named, exit 1.
  const std::string bad = edited(dir + "/m.espdl", dir + "/bad.espdl", [](tvh::EspdlModel& m) {
    m.test_outputs[0].raw[1] = uint8_t(m.test_outputs[0].raw[1] ^ 0x10);
  });
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(bad), &out, &err), 1);
  EXPECT_NE(out.find("MISMATCH"), std::string::npos) << out;
  EXPECT_NE(out.find("test output 'output' differs first at index 1"), std::string::npos) << out;
  ASSERT_EQ(tvtest::run_command(tvexport() + " verify --json " + q(bad), &out, &err), 1);
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["mismatch"]["tensor"], "output");
  EXPECT_EQ(j["mismatch"]["index"], 1);
  // An op our interpreter does not implement is refused by name.
  const std::string odd =
      edited(dir + "/m.espdl", dir + "/odd.espdl", [](tvh::EspdlModel& m) { m.nodes[1].op_type = "HardSwish"; });
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(odd), &out, &err), 1);
  EXPECT_NE(err.find("node 'l1_avgpool2d' (HardSwish)"), std::string::npos) << err;
  // Not an .espdl; a missing file.
  tvh::write_file_atomic(dir + "/text.espdl", std::string("hello, this is not a model file"));
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/text.espdl"), &out, &err), 1);
  EXPECT_NE(err.find("text.espdl: is not an .espdl file"), std::string::npos) << err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/missing.espdl"), &out, &err), 1);
  EXPECT_NE(err.find("missing.espdl"), std::string::npos) << err;
}

TEST(TvexportEspdl, BadRequestsGetOneSentence) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl-bad");
  const std::string blob = dir + "/m.q8.tvb";
  tvh::write_file_atomic(blob, q8_blob(averaging_model(), 9));
  std::string out, err;
  // Options that cannot work together: usage errors (2).
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + q(blob) + " --format espdl -o -", &out, &err), 2);
  EXPECT_NE(err.find("not stdout"), std::string::npos) << err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + q(blob) + " -o " + q(dir + "/m.h") + " --test-images x", &out, &err),
            2);
  EXPECT_NE(err.find("--test-images only applies"), std::string::npos) << err;
  // A float model: quantize first; nothing is written.
  auto plan = tvh::plan_or_throw(averaging_model(), "f");
  std::vector<float> p(plan->param_count, 0.01f);
  tvh::save_float_model(dir + "/f.tvb", *plan, p.data(), labels_for(plan->desc), "tool=test\n");
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + q(dir + "/f.tvb") + " -o " + q(dir + "/f.espdl"), &out, &err), 1);
  EXPECT_NE(err.find("tvquant"), std::string::npos) << err;
  EXPECT_FALSE(std::ifstream(dir + "/f.espdl").good());
}

// tvtrain (short) -> tvquant -> tvexport .espdl (first dataset image as the test input) -> verify.
TEST(TvexportEspdl, EndToEndFromPhotosToAVerifiedEspdl) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl-e2e");
  const std::string data = tvtest::source_path("datasets/shapes");
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(q(tvtest::bin_path("tvtrain")) + " " + q(data) + " -o " + q(dir + "/m.tvb") +
                                    " --epochs 1 --threads 2 --no-curve",
                                &out, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(q(tvtest::bin_path("tvquant")) + " " + q(dir + "/m.tvb") + " --calib " + q(data) +
                                    " -o " + q(dir + "/m.q8.tvb") + " -q",
                                &out, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(
                tvexport() + " " + q(dir + "/m.q8.tvb") + " -o " + q(dir + "/m.espdl") + " --test-images " + q(data),
                &out, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/m.espdl"), &out, &err), 0) << out << err;
  EXPECT_EQ(out.rfind("OK: ", 0), 0u) << out;

  // The embedded test input is the dataset's first image, decoded and resized as tvtrain does.
  const tvh::EspdlModel m = tvh::espdl_read_file(dir + "/m.espdl");
  const tvh::LoadedModel q8 = tvh::load_model(dir + "/m.q8.tvb");
  tvh::DatasetOptions o;
  o.path = data;
  o.height = q8.plan->desc.input.height;
  o.width = q8.plan->desc.input.width;
  o.channels = q8.plan->desc.input.channels;
  o.order = q8.plan->desc.input.order;
  const tvh::Dataset ds = tvh::load_dataset(o);
  const std::vector<int8_t> in = m.test_inputs[0].as_int8();
  ASSERT_EQ(in.size(), ds.image_bytes());
  const int e0 = int(m.test_inputs[0].exponents[0]);
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(in[i],
              tv::quantize_one_s8(float(ds.image(0)[i]) * q8.plan->desc.input.scale + q8.plan->desc.input.offset, e0))
        << i;
  std::map<std::string, std::string> meta(m.metadata.begin(), m.metadata.end());
  EXPECT_EQ(meta["test_image"], ds.classes[size_t(ds.labels[0])] + "/" + "img_000.jpg");
  EXPECT_TRUE(tvh::espdl_loader_problems(m).empty());
}

}  // namespace
