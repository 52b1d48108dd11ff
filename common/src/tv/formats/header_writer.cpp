#include "tv/formats/header_writer.h"

#include <string.h>

#include "tv/c_text.h"
#include "tv/crc32.h"
#include "tv/formats/raw_weights.h"
#include "tv/int8/q8_model.h"
#include "tv/little_endian.h"
#include "tv/train/net.h"

namespace tv {

namespace {

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// ---------------------------------------------------------------- identifiers

// The C identifier suffix of tensor i: its name with every other character turned into '_'; or
// "tensor<i>" when that is reserved or an earlier tensor has the same sanitized name. Names of the
// form "tensor<digits>" are reserved, so the two kinds never clash.
struct Ident {
  char s[kTensorNameMax + 16];
};

void sanitize(const char* name, Ident* out) {
  size_t n = 0;
  for (; name[n] && n < (size_t)kTensorNameMax; ++n) out->s[n] = is_ident_char(name[n]) ? name[n] : '_';
  out->s[n] = 0;
}

bool ends_with(const char* s, const char* suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

// Reserved: the writer's own names (labels, blob, act_exps, *_exps, *_EXP, tensor<digits>) and
// anything without a lower-case letter (it could clash with the upper-case #defines).
bool reserved(const char* s) {
  if (!*s || !strcmp(s, "labels") || !strcmp(s, "blob") || !strcmp(s, "act_exps") || ends_with(s, "_exps") ||
      ends_with(s, "_EXP"))
    return true;
  if (!strncmp(s, "tensor", 6)) {
    const char* p = s + 6;
    while (*p >= '0' && *p <= '9') ++p;
    if (!*p) return true;
  }
  for (const char* p = s; *p; ++p)
    if (*p >= 'a' && *p <= 'z') return false;
  return true;
}

void tensor_ident(const BlobView& v, int i, Ident* out) {
  sanitize(v.tensors[i].name, out);
  bool taken = reserved(out->s);
  for (int j = 0; j < i && !taken; ++j) {
    Ident other;
    sanitize(v.tensors[j].name, &other);
    taken = !strcmp(other.s, out->s);
  }
  if (taken) {
    memcpy(out->s, "tensor", 6);
    out->s[6 + format_int(i, out->s + 6)] = 0;
  }
}

bool valid_prefix(const char* p) {
  if (!p || !*p || (*p >= '0' && *p <= '9')) return false;
  size_t n = 0;
  for (; p[n]; ++n)
    if (!is_ident_char(p[n]) || n > 64) return false;
  return true;
}

// ---------------------------------------------------------------- pieces of the TinyVision header

// The labels as C string literals separated by ", ".
void label_list(CTextOut& o, const BlobView& blob) {
  for (int i = 0; i < blob.num_labels; ++i) {
    const char* t;
    size_t len;
    blob_label(blob, i, &t, &len);
    o.str(i ? ", \"" : "\"");
    o.c_string_text(t, len);
    o.ch('"');
  }
}

void layer_summary(CTextOut& o, const ModelPlan& plan, int i) {
  const LayerDesc& d = plan.desc.layers[i];
  const LayerPlan& lp = plan.layers[i];
  o.str("//   ");
  if (i < 10) o.ch(' ');
  o.num(i);
  o.ch(' ');
  o.str(layer_type_name(d.type));
  char detail[96];
  if (layer_detail_text(d, lp.out, detail, (int)sizeof detail) > 0) {
    o.ch(' ');
    o.str(detail);
  }
  o.str(" -> ");
  o.num(lp.out.h);
  o.ch('x');
  o.num(lp.out.w);
  o.ch('x');
  o.num(lp.out.c);
  if (lp.weight_count + lp.bias_count) {
    o.str(", ");
    o.num((int64_t)(lp.weight_count + lp.bias_count));
    o.str(" parameters");
  }
  o.ch('\n');
}

// "#define <PREFIX>_<name> "
void define(CTextOut& o, const char* prefix, const char* name) {
  o.str("#define ");
  o.str(prefix);
  o.ch('_');
  o.str(name);
  o.ch(' ');
}

// "#define PREFIX_NAME value" and the rest of the line (a comment and the newline).
void define_num(CTextOut& o, const char* prefix, const char* name, int64_t value, const char* rest = "\n") {
  define(o, prefix, name);
  o.num(value);
  o.str(rest);
}

void float_literal_or_paren(CTextOut& o, float v) {
  char b[kFloatTextMax];
  size_t n = format_float_literal(v, b);
  if (b[0] == '-') {
    o.ch('(');
    o.put(b, n);
    o.ch(')');
  } else {
    o.put(b, n);
  }
}

// Values of one array, `per_line` to a line, each line indented by two spaces.
template <typename Emit>
void array_body(CTextOut& o, size_t count, int per_line, Emit emit) {
  for (size_t i = 0; i < count; ++i) {
    if (i % (size_t)per_line == 0) o.str("  ");
    emit(i);
    if (i + 1 < count) o.ch(',');
    o.ch((i + 1) % (size_t)per_line == 0 || i + 1 == count ? '\n' : ' ');
  }
}

void dims_text(CTextOut& o, const BlobTensor& t) {
  for (int d = 0; d < t.ndim; ++d) {
    o.ch('[');
    o.num(t.dims[d]);
    o.ch(']');
  }
}

void array_open(CTextOut& o, const char* prefix, const char* c_type, const char* ident, const char* suffix, size_t n) {
  o.str(prefix);
  o.str("_ALIGN16 const ");
  o.str(c_type);
  o.ch(' ');
  o.str(prefix);
  o.ch('_');
  o.str(ident);
  o.str(suffix);
  o.ch('[');
  o.num((int64_t)n);
  o.str("] = {\n");
}

Status check_tensor_values(const BlobView& v) {
  for (int i = 0; i < v.num_tensors; ++i) {
    const BlobTensor& t = v.tensors[i];
    if (t.dtype != DType::F32) continue;
    const uint8_t* p = (const uint8_t*)t.data;
    const size_t n = t.elements();
    for (size_t k = 0; k < n; ++k)
      if (!is_finite_float(read_le_f32(p + 4 * k)))
        return status_at_tensor_element(StatusCode::BadParameter, t.layer, i, (int32_t)k);
  }
  return ok_status();
}

void write_tensor(CTextOut& o, const char* prefix, const BlobView& v, int i) {
  const BlobTensor& t = v.tensors[i];
  Ident id;
  tensor_ident(v, i, &id);
  const size_t n = t.elements();
  const uint8_t* p = (const uint8_t*)t.data;
  o.str("\n// layer ");
  o.num(t.layer);
  o.str(" (");
  o.str(t.layer < v.model.num_layers ? layer_type_name(v.model.layers[t.layer].type) : "?");
  o.str(t.role == TensorRole::Weight ? ") weights \"" : ") biases \"");
  o.comment_text(t.name, strlen(t.name));
  o.str("\": ");
  o.str(dtype_name(t.dtype));
  o.ch(' ');
  dims_text(o, t);
  o.str(", ");
  o.num((int64_t)n);
  o.str(" values");
  if (t.dtype != DType::F32) {
    if (t.exp_count) {
      o.str(", real = q * 2^");
      o.str(prefix);
      o.ch('_');
      o.str(id.s);
      o.str("_exps[channel]");
    } else {
      o.str(", real = q * 2^");
      o.num(t.exponent);
    }
  }
  o.ch('\n');
  if (t.dtype != DType::F32) {
    o.str("#define ");
    o.str(prefix);
    o.ch('_');
    o.str(id.s);
    o.str("_EXP (");
    o.num(t.exponent);
    o.str(")\n");
    if (t.exp_count) {
      array_open(o, prefix, "int8_t", id.s, "_exps", t.exp_count);
      array_body(o, t.exp_count, 16, [&](size_t k) { o.num(t.channel_exps[k]); });
      o.str("};\n");
    }
  }
  if (n == 0) {
    o.str("// (no values)\n");
    return;
  }
  switch (t.dtype) {
    case DType::F32:
      array_open(o, prefix, "float", id.s, "", n);
      array_body(o, n, 8, [&](size_t k) {
        char b[kFloatTextMax];
        o.put(b, format_float_literal(read_le_f32(p + 4 * k), b));
      });
      break;
    case DType::I8:
      array_open(o, prefix, "int8_t", id.s, "", n);
      array_body(o, n, 16, [&](size_t k) { o.num((int8_t)p[k]); });
      break;
    case DType::I32:
      array_open(o, prefix, "int32_t", id.s, "", n);
      array_body(o, n, 8, [&](size_t k) {
        const int32_t x = (int32_t)read_le32(p + 4 * k);
        if (x == INT32_MIN)
          o.str("(-2147483647 - 1)");
        else
          o.num(x);
      });
      break;
  }
  o.str("};\n");
}

// The opening comment: where the header comes from, how to use it, the input, layers and labels.
void write_banner(CTextOut& o, const BlobView& blob, uint32_t blob_crc, const HeaderOptions& opt,
                  const ModelPlan* plan) {
  const char* P = opt.prefix;
  const InputDesc& in = blob.model.input;
  const bool q8 = blob.is_int8();
  o.str("// ");
  o.str(P);
  o.str(": a TinyVision model as a C header, written by ");
  o.str(opt.tool ? opt.tool : "tvexport");
  if (opt.version && *opt.version) {
    o.ch(' ');
    o.comment_text(opt.version, strlen(opt.version));
  }
  o.str(".\n// Source: a .tvb blob of ");
  o.num((int64_t)blob.size);
  o.str(" bytes, CRC-32 ");
  o.hex32(blob_crc);
  o.str(" (zlib crc32 of the whole blob). Same blob -> same header, byte for byte.\n");
  o.str("//\n// ");
  o.str(P);
  o.str("_blob below is the complete blob: the firmware decodes it with tv::blob_decode, the same\n");
  o.str("// code and checks as for a blob on the SD card. The named per-layer arrays after the #defines\n");
  o.str("// hold the same numbers for people to read; nothing needs them at run time.\n");
  o.str("// In C, include this header in one translation unit only (its arrays have external linkage).\n");
  o.str("//\n// Baking it in: copy it as model.h next to the TinyVision sketch (found by __has_include), or\n");
  o.str("// classify with the core's API as firmware/examples/ClassifyCamera does:\n");
  o.str("//   tv::BlobView view;  tv::ModelPlan plan;\n");
  o.str("//   tv::blob_decode(");
  o.str(P);
  o.str("_blob, sizeof ");
  o.str(P);
  o.str("_blob, &view);  tv::plan_model(view.model, &plan);\n");
  o.str("//   int8:  tv::q8_bind(view, plan, &q8);  then per image  tv::q8_infer_u8(q8, image, work, probs);\n");
  o.str("//          (work: tv::q8_memory(plan).work_bytes)\n");
  o.str("//   float: tv::blob_load_float_params(view, plan, params);  tv::inference_init(&inf, &plan, params,\n");
  o.str("//          work, bytes);  then per image  tv::infer_u8(inf, image, probs);  (tv::inference_memory(plan))\n");
  if (blob.model.task == Task::Detect) {  // a detector's grid (the blob's TASK section)
    o.str("//   image: the camera's RGB through tv::resize_nearest (the whole frame, never cropped) to the input\n");
    o.str("//          below; probs is the grid (");
    o.str(P);
    o.str("_GRID_HEIGHT x ");
    o.str(P);
    o.str("_GRID_WIDTH cells of NUM_CLASSES values,\n");
    o.str("//          channel 0 the background, a softmax per cell): tv::grid_objects at\n//          ");
    o.str(P);
    o.str("_DETECT_THRESHOLD gives the objects.\n");
  } else {
    o.str(
        "//   image: the camera's RGB through tv::resize_nearest_crop to the input below; tv::argmax(probs, "
        "classes).\n");
  }
  o.str("//\n// Input: ");
  o.num(in.height);
  o.ch('x');
  o.num(in.width);
  o.ch('x');
  o.num(in.channels);
  o.ch(' ');
  o.str(channel_order_name(in.order));
  o.str(", value = pixel * ");
  o.g9(in.scale);
  o.str(" + ");
  o.g9(in.offset);
  o.str(". Weights: ");
  o.str(q8 ? "int8 (power-of-two exponents)" : "float32");
  o.str(". Classes: ");
  o.num(blob.model.num_classes);
  o.str(".\n// Layers:\n");
  for (int i = 0; i < plan->num_layers; ++i) layer_summary(o, *plan, i);
  o.str("// Labels: ");
  label_list(o, blob);
  o.ch('\n');
}

// The blob's provenance lines as comments (NUL padding left out).
void write_provenance(CTextOut& o, const BlobView& blob) {
  if (!blob.provenance_len) return;
  o.str("// Provenance:\n");
  const char* s = blob.provenance;
  size_t left = blob.provenance_len;
  while (left) {
    size_t k = 0;
    while (k < left && s[k] != '\n') ++k;
    size_t shown = k;
    while (shown && s[shown - 1] == 0) --shown;  // NUL padding, if any
    if (shown) {
      o.str("//   ");
      o.comment_text(s, shown);
      o.ch('\n');
    }
    if (k < left) ++k;
    s += k;
    left -= k;
  }
}

// The include guard, the includes and the portable alignment and unused attributes.
void write_guard_and_attributes(CTextOut& o, const char* P) {
  o.str("#ifndef ");
  o.prefix(P, true);
  o.str("_H\n#define ");
  o.prefix(P, true);
  o.str("_H\n\n#include <stdint.h>\n\n");
  o.str("// 16-byte alignment for every array (the blob decoder and SIMD loads rely on it).\n");
  const char* align_lines[] = {
      "#if defined(__GNUC__) || defined(__clang__)\n",
      "#define P_ALIGN16 __attribute__((aligned(16)))\n",
      "#define P_UNUSED __attribute__((unused))\n",
      "#elif defined(_MSC_VER)\n",
      "#define P_ALIGN16 __declspec(align(16))\n",
      "#define P_UNUSED\n",
      "#elif defined(__cplusplus) && __cplusplus >= 201103L\n",
      "#define P_ALIGN16 alignas(16)\n",
      "#define P_UNUSED\n",
      "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n",
      "#define P_ALIGN16 _Alignas(16)\n",
      "#define P_UNUSED\n",
      "#else\n",
      "#define P_ALIGN16 /* unknown compiler: copy the blob to aligned memory before decoding */\n",
      "#define P_UNUSED\n",
      "#endif\n\n",
  };
  for (const char* line : align_lines) {
    if (line[0] == '#' && !strncmp(line, "#define P_", 10)) {
      o.str("#define ");
      o.str(P);
      o.str(line + 9);  // "_ALIGN16 ..." / "_UNUSED ..."
    } else {
      o.str(line);
    }
  }
}

// The model's facts as #defines: sizes, input scaling, memory on the ESP32-S3, the blob's size and CRC.
void write_model_facts(CTextOut& o, const char* P, const BlobView& blob, uint32_t blob_crc, const ModelPlan* plan) {
  const InputDesc& in = blob.model.input;
  const bool q8 = blob.is_int8();
  // The engine that runs the model: an int8 blob's figures are the int8 engine's.
  InferenceMemory im = inference_memory(*plan);
  if (q8) {
    const Q8Memory qm = q8_memory(*plan);
    im.params_bytes = qm.weight_bytes;
    im.work_bytes = qm.work_bytes;
    im.total_bytes = qm.total_bytes;
  }
  const TrainOptions defaults;
  const TrainMemory tm = training_memory(*plan, defaults);
  define_num(o, P, "NUM_CLASSES", blob.model.num_classes);
  define_num(o, P, "INPUT_HEIGHT", in.height);
  define_num(o, P, "INPUT_WIDTH", in.width);
  define_num(o, P, "INPUT_CHANNELS", in.channels);
  define_num(o, P, "CHANNEL_ORDER", (int)in.order, " /* tv::ChannelOrder: 0 RGB, 1 BGR, 2 GRAY; this model: ");
  o.str(channel_order_name(in.order));
  o.str(" */\n");
  define(o, P, "INPUT_SCALE");
  float_literal_or_paren(o, in.scale);
  o.str(" /* input value = pixel * SCALE + OFFSET */\n");
  define(o, P, "INPUT_OFFSET");
  float_literal_or_paren(o, in.offset);
  o.str("\n");
  define_num(o, P, "IS_INT8", q8 ? 1 : 0);
  if (blob.model.task == Task::Detect) {  // only a detector's header has these: a classifier's keeps its bytes
    const Shape& grid = plan->layers[plan->num_layers - 1].out;
    o.str("// A detector (the blob's TASK section): its output is a grid of cells, NUM_CLASSES values each.\n");
    define_num(o, P, "IS_DETECTOR", 1);
    define_num(o, P, "GRID_HEIGHT", grid.h);
    define_num(o, P, "GRID_WIDTH", grid.w);
    define(o, P, "DETECT_THRESHOLD");
    float_literal_or_paren(o, blob.model.detect_threshold);
    o.str(" /* an object: a cell's most probable object class at this probability or more */\n");
  }
  define_num(o, P, "PARAM_COUNT", (int64_t)plan->param_count);
  o.str("// Memory on the ESP32-S3 in bytes, from tv::inference_memory and tv::training_memory with the\n");
  o.str("// default TrainOptions (Adam, ");
  o.num(defaults.lanes);
  o.str(" gradient lanes, no best-weights snapshot)");
  o.str(q8 ? "; inference on the int8 engine (this is an int8 blob), training of its float model.\n" : ".\n");
  define_num(o, P, "PARAMS_BYTES", (int64_t)im.params_bytes,
             q8 ? " /* int8 weights and int32 biases */\n" : " /* float32 weights and biases */\n");
  define_num(o, P, "INFERENCE_ARENA_BYTES", (int64_t)im.work_bytes,
             " /* inference work arena; the weights can stay in flash */\n");
  define_num(o, P, "TRAINING_LANES", defaults.lanes);
  define_num(o, P, "TRAINING_ARENA_BYTES", (int64_t)tm.total_bytes,
             " /* the whole training arena (weights, gradients, Adam state, activations) */\n");
  define_num(o, P, "BLOB_SIZE", (int64_t)blob.size);
  define(o, P, "BLOB_CRC32");
  o.hex32(blob_crc);
  o.str("u /* zlib crc32 of the whole blob */\n\n");
}

// The labels, the named per-layer arrays (for people) and the int8 activation exponents.
void write_readable_arrays(CTextOut& o, const char* P, const BlobView& blob) {
  o.str(P);
  o.str("_UNUSED static const char* const ");
  o.str(P);
  o.str("_labels[");
  o.num(blob.num_labels);
  o.str("] = {");
  label_list(o, blob);
  o.str("};\n");
  for (int i = 0; i < blob.num_tensors; ++i) write_tensor(o, P, blob, i);
  if (blob.num_act_exps) {
    o.str("\n// int8 activation exponents: [0] the input, [i + 1] the output of layer i (real = q * 2^e)\n");
    array_open(o, P, "int8_t", "act_exps", "", (size_t)blob.num_act_exps);
    array_body(o, (size_t)blob.num_act_exps, 16, [&](size_t k) { o.num(blob.act_exps[k]); });
    o.str("};\n");
  }
}

// The complete blob, for the firmware, and the guard's end.
void write_blob_array(CTextOut& o, const char* P, const BlobView& blob) {
  o.str("\n// The complete .tvb blob (decode with tv::blob_decode(");
  o.str(P);
  o.str("_blob, ");
  o.str(P);
  o.str("_BLOB_SIZE, &view)).\n");
  array_open(o, P, "unsigned char", "blob", "", blob.size);
  array_body(o, blob.size, 16, [&](size_t k) { o.hex8(blob.base[k]); });
  o.str("};\n\n#endif /* ");
  o.prefix(P, true);
  o.str("_H */\n");
}

// The header of a blob whose plan is known and checked (the body of write_tinyvision_header).
Status write_planned(const BlobView& blob, uint32_t blob_crc, const HeaderOptions& opt, const TextSink& sink,
                     const ModelPlan* plan) {
  const InputDesc& in = blob.model.input;
  if (!is_finite_float(in.scale) || !is_finite_float(in.offset))
    return status_at_tensor_element(StatusCode::BadParameter, -1, -1, 0);
  Status st = check_tensor_values(blob);
  if (!st.ok()) return st;
  CTextOut o(sink);
  write_banner(o, blob, blob_crc, opt, plan);
  write_provenance(o, blob);
  write_guard_and_attributes(o, opt.prefix);
  write_model_facts(o, opt.prefix, blob, blob_crc, plan);
  write_readable_arrays(o, opt.prefix, blob);
  write_blob_array(o, opt.prefix, blob);
  return ok_status();
}

// Plans the blob's model on this function's own stack (about 4 KB), used only when the caller has no
// plan, so a caller that has one does not pay for it.
__attribute__((noinline)) Status write_self_planned(const BlobView& blob, uint32_t blob_crc, const HeaderOptions& opt,
                                                    const TextSink& sink) {
  ModelPlan own;
  Status st = plan_model(blob.model, &own);
  if (!st.ok()) return st;
  return write_planned(blob, blob_crc, opt, sink, &own);
}

}  // namespace

Status write_tinyvision_header(const BlobView& blob, uint32_t blob_crc, const HeaderOptions& opt, const TextSink& sink,
                               const ModelPlan* plan) {
  if (!sink.write || !blob.base || !valid_prefix(opt.prefix)) return status_plain(StatusCode::InvalidArgument);
  if (crc32(0, blob.base, blob.size) != blob_crc) return status_plain(StatusCode::BlobBadCrc);
  if (!plan) return write_self_planned(blob, blob_crc, opt, sink);
  if (!same_model(plan->desc, blob.model)) return status_plain(StatusCode::BlobModelMismatch);
  return write_planned(blob, blob_crc, opt, sink, plan);
}

}  // namespace tv
