#include "tv/model/blob.h"

#include <string.h>

#include "tv/crc32.h"
#include "tv/in_place.h"
#include "tv/little_endian.h"

namespace tv {

namespace {

constexpr uint8_t kMagic[4] = {'T', 'V', 'B', '1'};
constexpr uint32_t tag(char a, char b, char c, char d) {
  return (uint32_t)(uint8_t)a | (uint32_t)(uint8_t)b << 8 | (uint32_t)(uint8_t)c << 16 | (uint32_t)(uint8_t)d << 24;
}
constexpr uint32_t kTagModel = tag('M', 'O', 'D', 'L');
constexpr uint32_t kTagLabels = tag('L', 'A', 'B', 'L');
constexpr uint32_t kTagProv = tag('P', 'R', 'O', 'V');
constexpr uint32_t kTagTensor = tag('T', 'E', 'N', 'S');
constexpr uint32_t kTagActExps = tag('Q', 'A', 'C', 'T');
constexpr uint32_t kTagTask = tag('T', 'A', 'S', 'K');
constexpr size_t kTaskPayload = 8;  // u8 task, 3 zero bytes, f32 detect threshold
constexpr size_t kSectionHeader = 16;
constexpr size_t kModelHeader = 16;
constexpr size_t kLayerRecord = 32;
constexpr size_t kTensorEntry = 64;

size_t pad16(size_t n) {
  return (n + 15) & ~(size_t)15;
}

size_t model_payload(const ModelDesc& m) {
  return kModelHeader + kLayerRecord * m.num_layers;
}

size_t labels_payload(const BlobContents& c) {
  size_t n = 2;
  for (int i = 0; i < c.num_labels; ++i) n += 2 + strlen(c.labels[i]);
  return n;
}

size_t tensor_payload(const BlobTensor& t) {
  return kTensorEntry + pad16(t.exp_count) + t.bytes;
}

void encode_model(const ModelDesc& m, uint8_t* p) {
  write_le16(p + 0, m.input.height);
  write_le16(p + 2, m.input.width);
  write_le16(p + 4, m.input.channels);
  p[6] = (uint8_t)m.input.order;
  p[7] = 0;
  write_le_f32(p + 8, m.input.scale);
  write_le_f32(p + 12, m.input.offset);
  // num_classes and num_layers live in the section's first record slot header below.
  for (int i = 0; i < m.num_layers; ++i) {
    const LayerDesc& l = m.layers[i];
    uint8_t* r = p + kModelHeader + kLayerRecord * i;
    r[0] = (uint8_t)l.type;
    r[1] = (uint8_t)l.padding;
    write_le16(r + 2, l.units);
    r[4] = l.kernel_h;
    r[5] = l.kernel_w;
    r[6] = l.stride_h;
    r[7] = l.stride_w;
    write_le16(r + 8, l.out_h);
    write_le16(r + 10, l.out_w);
    write_le_f32(r + 12, l.alpha);
    write_le_f32(r + 16, l.lo);
    write_le_f32(r + 20, l.hi);
  }
}

bool valid_dtype(uint8_t d) {
  return d >= 1 && d <= 3;
}

}  // namespace

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::I8: return 1;
    case DType::I32: return 4;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::I8: return "int8";
    case DType::I32: return "int32";
  }
  return "?";
}

size_t BlobTensor::elements() const {
  if (ndim == 0) return 0;
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[i];
  return n;
}

namespace {

size_t provenance_bytes(const BlobContents& c) {
  return c.provenance_len ? c.provenance_len : strlen(c.provenance);
}

}  // namespace

BlobContents blob_contents_relabeled(const BlobView& v, const char* const* labels) {
  BlobContents c;
  c.model = &v.model;
  c.labels = labels;
  c.num_labels = v.num_labels;
  c.provenance = v.provenance_len ? v.provenance : (v.provenance ? "" : nullptr);  // an empty section stays
  c.provenance_len = v.provenance_len;
  c.tensors = v.tensors;
  c.num_tensors = v.num_tensors;
  c.act_exps = v.act_exps;
  c.num_act_exps = v.num_act_exps;
  c.flags = v.flags;
  return c;
}

size_t blob_encoded_size(const BlobContents& c) {
  size_t n = kBlobHeaderBytes;
  n += kSectionHeader + pad16(4 + model_payload(*c.model));
  n += kSectionHeader + pad16(labels_payload(c));
  if (c.provenance) n += kSectionHeader + pad16(provenance_bytes(c));
  for (int i = 0; i < c.num_tensors; ++i) n += kSectionHeader + pad16(tensor_payload(c.tensors[i]));
  if (c.num_act_exps > 0) n += kSectionHeader + pad16(1 + (size_t)c.num_act_exps);
  if (c.model->task != Task::Classify) n += kSectionHeader + pad16(kTaskPayload);
  return n;
}

Status blob_encode(const BlobContents& c, uint8_t* out, size_t cap, size_t* written) {
  if (!c.model || !out || (c.num_labels > 0 && !c.labels) || (c.num_tensors > 0 && !c.tensors))
    return status_plain(StatusCode::InvalidArgument);
  if (c.num_labels != c.model->num_classes || c.num_tensors > kMaxBlobTensors || c.num_act_exps > kMaxLayers + 1)
    return status_plain(StatusCode::InvalidArgument);
  for (int i = 0; i < c.num_labels; ++i) {
    if (strlen(c.labels[i]) > 0xFFFF) return status_plain(StatusCode::InvalidArgument);
    for (int j = 0; j < i; ++j)
      if (strcmp(c.labels[j], c.labels[i]) == 0) return status_classes(StatusCode::BlobDuplicateLabel, j, i);
  }
  const size_t total = blob_encoded_size(c);
  if (total > cap) return status_too_small(StatusCode::BlobTooSmall, -1, (int32_t)cap, (int32_t)total);
  if (total > 0xFFFFFFFFu) return status_plain(StatusCode::Overflow);
  memset(out, 0, total);
  memcpy(out, kMagic, 4);
  write_le16(out + 4, kBlobMajor);
  write_le16(out + 6, c.model->task == Task::Classify ? kBlobMinor : kBlobMinorTask);
  write_le32(out + 8, (uint32_t)total);
  uint32_t sections = 0;
  uint8_t* p = out + kBlobHeaderBytes;
  auto begin = [&](uint32_t t, size_t payload) {
    write_le32(p, t);
    write_le32(p + 4, (uint32_t)payload);
    uint8_t* body = p + kSectionHeader;
    p = body + pad16(payload);
    sections++;
    return body;
  };
  // MODL: u16 num_classes, u8 num_layers, u8 0, then the model record.
  uint8_t* b = begin(kTagModel, 4 + model_payload(*c.model));
  write_le16(b, c.model->num_classes);
  b[2] = c.model->num_layers;
  encode_model(*c.model, b + 4);
  // TASK (what is not a classifier): the task and a detector's threshold.
  if (c.model->task != Task::Classify) {
    b = begin(kTagTask, kTaskPayload);
    b[0] = (uint8_t)c.model->task;
    write_le_f32(b + 4, c.model->detect_threshold);
  }
  // LABL
  b = begin(kTagLabels, labels_payload(c));
  write_le16(b, (uint16_t)c.num_labels);
  b += 2;
  for (int i = 0; i < c.num_labels; ++i) {
    size_t len = strlen(c.labels[i]);
    write_le16(b, (uint16_t)len);
    memcpy(b + 2, c.labels[i], len);
    b += 2 + len;
  }
  if (c.provenance) {
    const size_t len = provenance_bytes(c);
    b = begin(kTagProv, len);
    memcpy(b, c.provenance, len);
  }
  for (int i = 0; i < c.num_tensors; ++i) {
    const BlobTensor& t = c.tensors[i];
    if (t.ndim < 1 || t.ndim > 4 || t.elements() * dtype_size(t.dtype) != t.bytes || (t.bytes && !t.data) ||
        (t.exp_count && !t.channel_exps))
      return status_plain(StatusCode::InvalidArgument, t.layer);
    b = begin(kTagTensor, tensor_payload(t));
    b[0] = (uint8_t)t.dtype;
    b[1] = t.ndim;
    b[2] = (uint8_t)t.exponent;
    b[3] = (uint8_t)t.role;
    write_le16(b + 4, t.layer);
    write_le16(b + 6, t.exp_count);
    for (int d = 0; d < 4; ++d) write_le32(b + 8 + 4 * d, t.dims[d]);
    write_le32(b + 24, t.bytes);
    memcpy(b + 32, t.name, strnlen(t.name, kTensorNameMax));
    b += kTensorEntry;
    if (t.exp_count) memcpy(b, t.channel_exps, t.exp_count);
    b += pad16(t.exp_count);
    if (t.bytes) memcpy(b, t.data, t.bytes);
  }
  if (c.num_act_exps > 0) {
    b = begin(kTagActExps, 1 + (size_t)c.num_act_exps);
    b[0] = (uint8_t)c.num_act_exps;
    memcpy(b + 1, c.act_exps, (size_t)c.num_act_exps);
  }
  write_le32(out + 16, sections);
  write_le32(out + 20, c.flags);
  write_le32(out + 12, crc32(0, out + 16, total - 16));
  if (written) *written = total;
  return ok_status();
}

namespace {

// True (with the two class indices) when two labels of a decoded LABL section are equal.
bool duplicate_label(const BlobView& v, int* first, int* second) {
  const uint8_t* li = v.labels;
  for (int i = 0; i < v.num_labels; ++i) {
    const size_t len_i = read_le16(li);
    const uint8_t* lj = li + 2 + len_i;
    for (int j = i + 1; j < v.num_labels; ++j) {
      const size_t len_j = read_le16(lj);
      if (len_j == len_i && memcmp(lj + 2, li + 2, len_i) == 0) {
        *first = i;
        *second = j;
        return true;
      }
      lj += 2 + len_j;
    }
    li += 2 + len_i;
  }
  return false;
}

}  // namespace

namespace {

// The model section: the input and every layer's record.
Status read_model_section(const uint8_t* b, size_t len, BlobView* v, const uint8_t** input_scale_offset) {
  if (len < 4 + kModelHeader) return status_plain(StatusCode::BlobCorrupt);
  ModelDesc& m = v->model;
  m.num_classes = read_le16(b);
  m.num_layers = b[2];
  if (m.num_layers > kMaxLayers || len != 4 + kModelHeader + kLayerRecord * m.num_layers)
    return status_plain(StatusCode::BlobCorrupt);
  const uint8_t* p = b + 4;
  m.input.height = read_le16(p);
  m.input.width = read_le16(p + 2);
  m.input.channels = read_le16(p + 4);
  if (p[6] > 2) return status_plain(StatusCode::BlobCorrupt);
  m.input.order = (ChannelOrder)p[6];
  *input_scale_offset = p + 8;
  m.input.scale = read_le_f32(p + 8);
  m.input.offset = read_le_f32(p + 12);
  for (int i = 0; i < m.num_layers; ++i) {
    const uint8_t* r = p + kModelHeader + kLayerRecord * i;
    LayerDesc& l = m.layers[i];
    if (!layer_type_from_byte(r[0], &l.type) || r[1] > 1) return status_plain(StatusCode::BlobCorrupt, i);
    l.padding = (Padding)r[1];
    l.units = read_le16(r + 2);
    l.kernel_h = r[4];
    l.kernel_w = r[5];
    l.stride_h = r[6];
    l.stride_w = r[7];
    l.out_h = read_le16(r + 8);
    l.out_w = read_le16(r + 10);
    l.alpha = read_le_f32(r + 12);
    l.lo = read_le_f32(r + 16);
    l.hi = read_le_f32(r + 20);
  }
  return ok_status();
}

// The task section: a detector (the only task besides the default, classification) and its threshold, a
// finite number in (0, 1].
Status read_task_section(const uint8_t* b, size_t len, BlobView* v) {
  if (len != kTaskPayload || b[0] != (uint8_t)Task::Detect || b[1] || b[2] || b[3])
    return status_plain(StatusCode::BlobCorrupt);
  const float threshold = read_le_f32(b + 4);
  if (!(threshold > 0.f && threshold <= 1.f)) return status_plain(StatusCode::BlobCorrupt);
  v->model.task = Task::Detect;
  v->model.detect_threshold = threshold;
  return ok_status();
}

// The labels section: a count, then each label's length and bytes, filling the section exactly.
Status read_labels_section(const uint8_t* b, size_t len, BlobView* v) {
  if (len < 2) return status_plain(StatusCode::BlobCorrupt);
  const int count = read_le16(b);
  size_t q = 2;
  for (int i = 0; i < count; ++i) {
    if (len - q < 2) return status_plain(StatusCode::BlobCorrupt);
    size_t l = read_le16(b + q);
    if (len - q - 2 < l) return status_plain(StatusCode::BlobCorrupt);
    q += 2 + l;
  }
  if (q != len) return status_plain(StatusCode::BlobCorrupt);
  v->num_labels = count;
  v->labels = b + 2;
  v->labels_bytes = len - 2;
  return ok_status();
}

// One tensor section: its entry (type, shape, exponents, name), then its per-channel exponents and data.
Status read_tensor_section(const uint8_t* b, size_t len, BlobView* v) {
  if (v->num_tensors >= kMaxBlobTensors || len < kTensorEntry) return status_plain(StatusCode::BlobCorrupt);
  BlobTensor& x = v->tensors[v->num_tensors];
  if (!valid_dtype(b[0]) || b[1] < 1 || b[1] > 4 || b[3] > 1) return status_plain(StatusCode::BlobCorrupt);
  x.dtype = (DType)b[0];
  x.ndim = b[1];
  x.exponent = (int8_t)b[2];
  x.role = (TensorRole)b[3];
  x.layer = read_le16(b + 4);
  x.exp_count = read_le16(b + 6);
  uint64_t elems = 1;
  for (int d = 0; d < 4; ++d) {
    x.dims[d] = read_le32(b + 8 + 4 * d);
    if (d < x.ndim) {
      elems *= x.dims[d];
      if (elems > 0xFFFFFFFFull) return status_plain(StatusCode::BlobCorrupt);
    } else if (x.dims[d] != 0) {
      return status_plain(StatusCode::BlobCorrupt);
    }
  }
  x.bytes = read_le32(b + 24);
  if (elems * dtype_size(x.dtype) != x.bytes) return status_plain(StatusCode::BlobCorrupt);
  memcpy(x.name, b + 32, kTensorNameMax);
  x.name[kTensorNameMax] = 0;
  if (b[32 + kTensorNameMax] != 0) return status_plain(StatusCode::BlobCorrupt);
  if (len != kTensorEntry + pad16(x.exp_count) + x.bytes) return status_plain(StatusCode::BlobCorrupt);
  x.channel_exps = x.exp_count ? (const int8_t*)(b + kTensorEntry) : nullptr;
  x.data = b + kTensorEntry + pad16(x.exp_count);
  v->num_tensors++;
  return ok_status();
}

// What the sections say together: one label per class, no label twice, tensors of existing layers, and
// finite float weights (an infinite or NaN weight computes nothing useful: refused here, once, for every
// loader).
Status check_decoded(const BlobView& v, const uint8_t* input_scale_offset) {
  if (v.num_labels != v.model.num_classes) return status_plain(StatusCode::BlobCorrupt);
  // Two classes with one label cannot be told apart (nor kept in separate folders).
  int first = 0, second = 0;
  if (duplicate_label(v, &first, &second)) return status_classes(StatusCode::BlobDuplicateLabel, first, second);
  for (int i = 0; i < v.num_tensors; ++i)
    if (v.tensors[i].layer >= v.model.num_layers) return status_plain(StatusCode::BlobCorrupt, v.tensors[i].layer);
  if (first_non_finite_f32(input_scale_offset, 2) != 2)
    return status_at_tensor_element(StatusCode::NonFiniteWeight, -1, -1, 0);
  for (int i = 0; i < v.num_tensors; ++i) {
    const BlobTensor& x = v.tensors[i];
    if (x.dtype != DType::F32) continue;
    const size_t n = x.elements();
    const size_t bad = first_non_finite_f32((const uint8_t*)x.data, n);
    if (bad != n) return status_at_tensor_element(StatusCode::NonFiniteWeight, x.layer, i, (int32_t)bad);
  }
  return ok_status();
}

}  // namespace

Status blob_decode(const uint8_t* data, size_t size, BlobView* v) {
  if (!data || !v) return status_plain(StatusCode::InvalidArgument);
  if (size < kBlobHeaderBytes)
    return status_too_small(StatusCode::BlobTruncated, -1, (int32_t)size, (int32_t)kBlobHeaderBytes);
  if (memcmp(data, kMagic, 4) != 0) return status_plain(StatusCode::BlobBadMagic);
  const uint16_t major = read_le16(data + 4), minor = read_le16(data + 6);
  if (major != kBlobMajor) return status_not_expected(StatusCode::BlobBadVersion, -1, major, kBlobMajor);
  const uint32_t total = read_le32(data + 8);
  if (total > size) return status_too_small(StatusCode::BlobTruncated, -1, (int32_t)size, (int32_t)total);
  if (total < kBlobHeaderBytes || total % 16) return status_plain(StatusCode::BlobCorrupt);
  const uint32_t crc = read_le32(data + 12);
  if (crc32(0, data + 16, total - 16) != crc) return status_plain(StatusCode::BlobBadCrc);

  reset_in_place(v);
  v->base = data;
  v->size = total;
  v->major = major;
  v->minor = minor;
  v->crc = crc;
  v->flags = read_le32(data + 20);
  const uint32_t sections = read_le32(data + 16);
  bool have_model = false, have_labels = false, have_task = false;
  const uint8_t* input_scale_offset = nullptr;  // the model's input scale and offset (two float32)
  size_t off = kBlobHeaderBytes;
  for (uint32_t s = 0; s < sections; ++s) {
    if (total - off < kSectionHeader) return status_plain(StatusCode::BlobCorrupt);
    const uint32_t t = read_le32(data + off);
    const size_t len = read_le32(data + off + 4);
    const uint8_t* b = data + off + kSectionHeader;
    const size_t room = total - off - kSectionHeader;
    if (len > room || pad16(len) > room) return status_plain(StatusCode::BlobCorrupt);
    Status st = ok_status();
    if (t == kTagModel) {
      st = have_model ? status_plain(StatusCode::BlobCorrupt) : read_model_section(b, len, v, &input_scale_offset);
      have_model = true;
    } else if (t == kTagTask) {
      st = have_task ? status_plain(StatusCode::BlobCorrupt) : read_task_section(b, len, v);
      have_task = true;
    } else if (t == kTagLabels) {
      st = have_labels ? status_plain(StatusCode::BlobCorrupt) : read_labels_section(b, len, v);
      have_labels = true;
    } else if (t == kTagProv) {
      v->provenance = (const char*)b;
      v->provenance_len = len;
    } else if (t == kTagTensor) {
      st = read_tensor_section(b, len, v);
    } else if (t == kTagActExps) {
      if (len < 1 || b[0] > kMaxLayers + 1 || len != 1 + (size_t)b[0]) return status_plain(StatusCode::BlobCorrupt);
      v->num_act_exps = b[0];
      memcpy(v->act_exps, b + 1, b[0]);
    }
    if (!st.ok()) return st;
    // Unknown tags from newer minor versions are skipped.
    off += kSectionHeader + pad16(len);
  }
  if (off != total) return status_plain(StatusCode::BlobCorrupt);
  if (!have_model || !have_labels) return status_plain(StatusCode::BlobCorrupt);
  return check_decoded(*v, input_scale_offset);
}

size_t first_non_finite_f32(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if ((read_le32(p + 4 * i) & 0x7F800000u) == 0x7F800000u) return i;  // exponent all ones: Inf or NaN
  return n;
}

bool blob_label(const BlobView& v, int i, const char** text, size_t* len) {
  if (i < 0 || i >= v.num_labels) return false;
  const uint8_t* p = v.labels;
  for (int k = 0; k < i; ++k) p += 2 + read_le16(p);
  *len = read_le16(p);
  *text = (const char*)(p + 2);
  return true;
}

const BlobTensor* blob_find(const BlobView& v, int layer, TensorRole role) {
  for (int i = 0; i < v.num_tensors; ++i)
    if (v.tensors[i].layer == layer && v.tensors[i].role == role) return &v.tensors[i];
  return nullptr;
}

static void tensor_name(char* dst, int layer, LayerType type, char suffix) {
  // "l<index>_<type>.<w|b>", truncated to the name field.
  char buf[64];
  int n = 0;
  buf[n++] = 'l';
  char digits[8];
  int nd = 0, x = layer;
  do {
    digits[nd++] = (char)('0' + x % 10);
    x /= 10;
  } while (x && nd < 8);
  while (nd) buf[n++] = digits[--nd];
  buf[n++] = '_';
  for (const char* t = layer_type_name(type); *t && n < 60; ++t) buf[n++] = *t;
  buf[n++] = '.';
  buf[n++] = suffix;
  if (n > kTensorNameMax) n = kTensorNameMax;
  memcpy(dst, buf, (size_t)n);
  dst[n] = 0;
}

int float_tensors(const ModelPlan& plan, const float* params, BlobTensor* out) {
  int n = 0;
  for (int i = 0; i < plan.num_layers; ++i) {
    const LayerPlan& lp = plan.layers[i];
    const LayerDesc& d = plan.desc.layers[i];
    if (!layer_has_params(d.type)) continue;
    BlobTensor w;
    tensor_name(w.name, i, d.type, 'w');
    w.dtype = DType::F32;
    w.role = TensorRole::Weight;
    w.layer = (uint16_t)i;
    w.ndim = (uint8_t)weight_dims(d, lp.in, lp.out, w.dims);
    w.data = params + lp.param_offset;
    w.bytes = (uint32_t)(lp.weight_count * sizeof(float));
    out[n++] = w;
    BlobTensor b;
    tensor_name(b.name, i, d.type, 'b');
    b.dtype = DType::F32;
    b.role = TensorRole::Bias;
    b.layer = (uint16_t)i;
    b.ndim = 1;
    b.dims[0] = (uint32_t)lp.bias_count;
    b.data = params + lp.param_offset + lp.weight_count;
    b.bytes = (uint32_t)(lp.bias_count * sizeof(float));
    out[n++] = b;
  }
  return n;
}

Status blob_load_float_params(const BlobView& v, const ModelPlan& expected, float* params) {
  if (!params) return status_plain(StatusCode::InvalidArgument);
  if (v.is_int8()) return status_plain(StatusCode::NotSupported);
  if (!same_model(v.model, expected.desc))
    return status_not_expected(StatusCode::BlobModelMismatch, -1, v.model.num_classes, expected.desc.num_classes);
  // Check every tensor first, copy after: no partial loads.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < expected.num_layers; ++i) {
      const LayerPlan& lp = expected.layers[i];
      if (!layer_has_params(expected.desc.layers[i].type)) continue;
      const BlobTensor* w = blob_find(v, i, TensorRole::Weight);
      const BlobTensor* b = blob_find(v, i, TensorRole::Bias);
      if (!w || !b) return status_plain(StatusCode::BlobMissingTensor, i);
      if (w->dtype != DType::F32 || b->dtype != DType::F32 || w->elements() != lp.weight_count ||
          b->elements() != lp.bias_count)
        return status_not_expected(StatusCode::BlobModelMismatch, i, (int32_t)w->elements(), (int32_t)lp.weight_count);
      if (pass == 1) {
        memcpy(params + lp.param_offset, w->data, w->bytes);
        memcpy(params + lp.param_offset + lp.weight_count, b->data, b->bytes);
      }
    }
  }
  return ok_status();
}

}  // namespace tv
