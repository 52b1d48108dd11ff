// Writing ESP-DL (v3) model files (.espdl): any model view (tvh::EspdlModel, what the reader returns)
// serialised with our schema (host/espdl/espdl.fbs), and the ESP32-S3 export of a TinyVision int8 model.
//
// What an exported file holds (docs/espdl.md, docs/espdl-numerics.md; checked against
// esp-dl's fbs_loader and module sources and against Espressif's golden files):
// - the "EDL2" header (mode 0, FlatBuffer length) and a FlatBuffer rooted at espdl.Model, laid out
//   like esp-ppq's files: ir_version 8, an empty opset_import, metadata target = esp32s3;
// - one node per ESP-DL module with ONNX op names and attributes, every node carrying quant_type
//   "S8"; Conv/Gemm carry activation "Linear" or "Relu" (a ReLU right after them is fused);
// - channels-last activations ([1, H, W, C], [1, N] after Flatten) described in value_info with
//   their exponents; weights in the S3 packing (16 output channels per block, doc string
//   "layout ==> (N/16)HWC16[_UNALIGNED]"), int32 biases at e_in + e_w, 256-entry int8 lookup tables
//   for LeakyRelu and Clip (esp-ppq's representation, the "lut" attribute naming the table);
// - one test input (a quantized image) and the test output our int8 engine computes for it, which
//   ESP-DL's Model::test() compares on the board.
// Errors are tvh::Error with one sentence naming the file (and the layer, for refusals).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/espdl/espdl.h"
#include "host/model/model_io.h"

namespace tvh {

// The whole .espdl file of a model view: header + FlatBuffer. Deterministic (the same view gives the
// same bytes). Every tensor is written with its dims, type, exponents and raw_data in 16-byte blocks
// (zero padded); every node with an attribute list (ESP-DL's loader walks it without a null check);
// graph vectors are written even when empty. `model.source` is not stored. Throws tvh::Error when a
// tensor's payload is shorter than its dims need.
std::vector<uint8_t> espdl_serialize(const EspdlModel& model);

// What ESP-DL's loader and Model::test() rely on, checked on a parsed file (ours or Espressif's):
// unique node names; op types ESP-DL registers; every node input an initializer, a graph input or an
// earlier node's output; value_info with a shape and exponent for every activation; exponents on
// every initializer; the attributes Conv/MaxPool/AveragePool read without defaults; lookup tables of
// 256 values at the output's exponent; a test input for every graph input and test outputs whose
// dims and exponent equal the tensor's value_info. Returns one sentence per problem, each once (empty = none).
std::vector<std::string> espdl_loader_problems(const EspdlModel& model);

struct EspdlExportOptions {
  // One uint8 image in the model's channel order, height x width x channels (HWC), used as the
  // embedded test input; empty = espdl_synthetic_image().
  std::vector<uint8_t> test_image;
  std::string test_image_source = "synthetic";  // recorded in the file's metadata
  std::string version;                          // producer_version ("" = none)
};

struct EspdlExport {
  EspdlModel model;                  // the graph as written (source = the model file)
  std::vector<uint8_t> bytes;        // the .espdl file
  std::vector<std::string> mapping;  // one line per node: "l0_conv2d + l1_relu -> Conv (activation Relu)"
  std::vector<std::string> notes;    // device caveats, one sentence each (also in the model's doc string)
  std::vector<int8_t> test_input, test_output;
  // Per layer: the largest |running sum| any input image can produce in a conv / depthwise / dense
  // layer (0 for the others), from the int8 values each tensor can hold; a note when > 2^19 - 1.
  std::vector<int64_t> acc_bound;
  int test_class = -1;  // argmax of the test output
};

// The ESP32-S3 .espdl of an int8 model (a .tvb with kBlobFlagInt8, as tvquant writes it). The graph
// input is the int8 image at act_exps[0] ([1, H, W, C]: pixel * scale + offset quantized half up, as
// tv::q8_infer_u8 does); the graph output is the last layer's int8 output (the logits, [1, classes])
// at act_exps[L]: no Softmax node (see the README). The test output is computed by tv::q8_run and
// cross-checked against the reference interpreter (host/quant/q8_reference.h); the written
// bytes are parsed back and their test vectors run through espdl_run_test_vectors before returning.
// Refuses, naming the layer: float models, per-output-channel weight exponents (the S3 has one
// exponent per tensor), biases outside the S3's 20-bit range, adaptive pools with unequal bins, window
// ops after a Flatten. `source` names the model in messages.
EspdlExport espdl_export(const LoadedModel& m, const std::string& source, const EspdlExportOptions& options);

// A deterministic test picture for a model input: smooth colour gradients with a bright disc and a
// dark bar, so every channel spans most of [0, 255] (h * w * c bytes, HWC).
std::vector<uint8_t> espdl_synthetic_image(int height, int width, int channels);

}  // namespace tvh
