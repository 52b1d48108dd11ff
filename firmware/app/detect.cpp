// A detector on the board (issue 27): Infer runs it on the whole camera frame stretched to its input, finds
// the objects on its grid with the core's tv::grid_objects at the model's threshold, prints them as the one
// line tv::objects_line makes (the same line `tvtrain detect` prints for a photo, centroids in the frame's own
// pixels) and shows their counts on the display. Every buffer is sized from the plan when the model loads
// (detect_memory): nothing is allocated per frame. Train, Learn and corrections are classifiers' for now.
#include <stdio.h>
#include <string.h>

#include "app.h"

namespace tvfw {

namespace {

size_t round16(size_t n) {
  return (n + 15u) & ~(size_t)15u;
}

// The longest text tv::objects_line writes per class count ("2 cup, ") and per object (", cup (31,40)
// 0.93"): names of at most kMaxLabelLength bytes, every integer at most 11 characters.
constexpr size_t kCountTextBytes = 2 + 11 + 1 + kMaxLabelLength;
constexpr size_t kObjectTextBytes = 2 + kMaxLabelLength + 2 + 11 + 1 + 11 + 2 + 11 + 1 + 1 + 2;

// "N name" for each class with objects, packed into `rows` display lines of kDisplayColumns characters: a
// count that does not fit the rest of a line starts the next one, a name longer than a line is cut. Counts
// that find no room are left out and the last line ends in '+' (the total above them still counts them).
void pack_counts(const int* counts, const char (*names)[kMaxLabelLength + 1], int n, char (*rows)[kDisplayColumns + 1],
                 int num_rows) {
  for (int r = 0; r < num_rows; ++r) rows[r][0] = 0;
  int row = 0;
  for (int k = 0; k < n && row < num_rows; ++k) {
    if (!counts[k]) continue;
    char token[kDisplayColumns + 1];
    snprintf(token, sizeof token, "%d %s", counts[k], names[k]);  // cut to a line
    const size_t len = strlen(token);
    size_t used = strlen(rows[row]);
    if (used && used + 1 + len > (size_t)kDisplayColumns) {
      if (++row == num_rows) {  // no room left: the last line says there is more
        char* last = rows[num_rows - 1];
        const size_t at = strlen(last) < (size_t)kDisplayColumns ? strlen(last) : (size_t)kDisplayColumns - 1;
        last[at] = '+';
        last[at + 1] = 0;
        return;
      }
      used = 0;
    }
    char* at = rows[row] + used;  // used + 1 + len <= kDisplayColumns, or an empty line and len <= it
    if (used) *at++ = ' ';
    memcpy(at, token, len + 1);
  }
}

}  // namespace

DetectMemory detect_memory(const tv::ModelPlan& plan) {
  DetectMemory m;
  if (plan.desc.task != tv::Task::Detect || plan.num_layers < 1) return m;
  const tv::Shape& grid = plan.layers[plan.num_layers - 1].out;
  m.grid_h = grid.h;
  m.grid_w = grid.w;
  m.max_objects = grid.h * grid.w;  // every cell may be an object of its own
  m.probs_bytes = round16(tv::plan_outputs(plan) * sizeof(float));
  m.scratch_bytes = round16(tv::grid_objects_scratch_ints(grid.h, grid.w) * sizeof(int));
  m.objects_bytes = round16((size_t)m.max_objects * sizeof(tv::GridObject));
  // the counts of every class and a "?" (none here: the board names every class), every object, the NUL
  m.line_bytes =
      round16((size_t)plan.desc.num_classes * kCountTextBytes + (size_t)m.max_objects * kObjectTextBytes + 16);
  m.total = m.probs_bytes + m.scratch_bytes + m.objects_bytes + m.line_bytes;
  return m;
}

bool App::allocate_detect_buffers(Reason* why) {
  const DetectMemory m = detect_memory(plan_);
  detect_mem_ = m.total <= hal_.psram_free_bytes() ? hal_.psram_alloc(m.total) : nullptr;
  if (!detect_mem_) {
    why->set("cannot allocate the detector's %u bytes of PSRAM (grid %u, scratch %u, objects %u, line %u; free: %u)",
             (unsigned)m.total, (unsigned)m.probs_bytes, (unsigned)m.scratch_bytes, (unsigned)m.objects_bytes,
             (unsigned)m.line_bytes, (unsigned)hal_.psram_free_bytes());
    return false;
  }
  uint8_t* p = (uint8_t*)detect_mem_;  // 16-byte aligned, and so is every part
  grid_probs_ = (float*)p;
  grid_scratch_ = (int*)(p += m.probs_bytes);
  objects_ = (tv::GridObject*)(p += m.scratch_bytes);
  objects_line_ = (char*)(p += m.objects_bytes);
  detect_sizes_ = m;
  return true;
}

void App::report_objects(uint64_t t0) {
  const DetectMemory& m = detect_sizes_;
  const int found = tv::grid_objects(grid_probs_, m.grid_h, m.grid_w, num_classes_, desc_.detect_threshold,
                                     plan_.input.h, plan_.input.w, grid_scratch_, objects_, m.max_objects);
  const int n = found < m.max_objects ? found : m.max_objects;  // never more: one object a cell at most
  // Object class k is label k + 1 (label 0 names the background).
  const char* names[kMaxClasses];
  for (int k = 1; k < num_classes_; ++k) names[k - 1] = labels_[k];
  // The frame's own pixels: the whole frame was stretched to the input (tvtrain detect's photo scale).
  const float sx = (float)frame_w_ / (float)plan_.input.w, sy = (float)frame_h_ / (float)plan_.input.h;
  const int len = tv::objects_line(objects_, n, names, num_classes_ - 1, sx, sy, objects_line_, (int)m.line_bytes);
  const float ms = (float)(hal_.micros() - t0) / 1000.f;
  char head[80];
  const int head_len = snprintf(head, sizeof head, "Frame %u: %.1f ms (%.1f FPS) Objects: ", (unsigned)frame_number_,
                                (double)ms, (double)(ms > 0 ? 1000.f / ms : 0.f));
  if (head_len > 0) hal_.serial_write(head, (size_t)head_len < sizeof head ? (size_t)head_len : sizeof head - 1);
  hal_.serial_write(objects_line_, (size_t)len);  // longer than say's line: written as it is
  hal_.serial_write("\n", 1);
  if (cfg_.exact_objects) write_exact_objects(n);

  // The display: the total, then the count of each class with objects.
  int counts[kMaxClasses] = {};
  for (int i = 0; i < n; ++i)
    if (objects_[i].label >= 0 && objects_[i].label < num_classes_ - 1) counts[objects_[i].label]++;
  char total[kDisplayColumns + 1];
  if (n == 0)
    snprintf(total, sizeof total, "no objects");
  else
    snprintf(total, sizeof total, "%d object%s", n, n == 1 ? "" : "s");
  char rows[2][kDisplayColumns + 1];
  pack_counts(counts, labels_ + 1, num_classes_ - 1, rows, 2);
  show("INFER", total, rows[0], rows[1]);
}

void App::write_exact_objects(int n) {
  char part[96];
  int len = snprintf(part, sizeof part, "Frame %u exact:", (unsigned)frame_number_);
  hal_.serial_write(part, (size_t)len);
  for (int i = 0; i < n; ++i) {
    const tv::GridObject& o = objects_[i];
    uint32_t x, y, p;
    memcpy(&x, &o.x, 4);
    memcpy(&y, &o.y, 4);
    memcpy(&p, &o.prob, 4);
    len =
        snprintf(part, sizeof part, " %d %08x %08x %08x %d;", o.label, (unsigned)x, (unsigned)y, (unsigned)p, o.cells);
    if (len > 0) hal_.serial_write(part, (size_t)len < sizeof part ? (size_t)len : sizeof part - 1);
  }
  hal_.serial_write("\n", 1);
}

void App::refuse_detector_training(const char* what) {
  say("%s: the model is a detector (a grid of objects), and the board trains classifiers only for now: train the "
      "detector on the PC (tvtrain DATASET -o det.tvb) and copy it to the card as %s",
      what, kModelPath);
  print_menu();
  show(what[0] == 'T' ? "NO TRAIN" : "NO LEARN", "detector:", "train it on", "the PC");
}

}  // namespace tvfw
