#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jpeg_info.h"
#include "tv/image/image.h"
#include "tv/link/link_frame.h"
#include "tv/names.h"

namespace tvfw {

const char* tier_name(WeightTier t) {
  switch (t) {
    case WeightTier::SD: return "SD";
    case WeightTier::Baked: return "baked";
    case WeightTier::Backbone: return "backbone";
    case WeightTier::HeInit: return "He-init";
    case WeightTier::None: return "no model";
  }
  return "?";
}

App::App(Hal& hal, const AppConfig& config) : hal_(hal), cfg_(config) {}

// ---------------------------------------------------------------- output

void App::say(const char* fmt, ...) {
  char line[320];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  hal_.serial_write(line, (size_t)n);
}

void App::show(const char* l0, const char* l1, const char* l2, const char* l3) {
  if (!hal_.display_present()) return;
  const char* lines[kDisplayLines] = {l0, l1, l2, l3};
  hal_.display_lines(lines, kDisplayLines);
}

void App::fatal(const char* fmt, ...) {
  char line[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  say("FATAL: %s", line);
  show("FATAL", "see serial");
  hal_.halt();
  for (;;) hal_.delay_ms(1000);
}

// ---------------------------------------------------------------- boot

void App::setup() {
  say("%s", "");
  say("=== TinyVision " TV_FIRMWARE_VERSION " ===");
  if (cfg_.num_labels == 1 || cfg_.num_labels > kMaxClasses)
    fatal("the firmware is configured with %d class labels; a model needs 2 to %d", cfg_.num_labels, kMaxClasses);
  for (int i = 0; i < cfg_.num_labels; ++i) {
    const char* l = cfg_.labels[i];
    if (!l || !tv::name_allowed(l, strlen(l), kMaxLabelLength))
      fatal("class label %d ('%s') must be a folder name of 1 to %d characters", i, l ? l : "", kMaxLabelLength);
    for (int j = 0; j < i; ++j)
      if (tv::same_folder_name(cfg_.labels[j], strlen(cfg_.labels[j]), l, strlen(l)))
        fatal(
            "class labels %d ('%s') and %d ('%s') name the same card folder (FAT ignores letter case and trailing "
            "dots and spaces): make them differ",
            j, cfg_.labels[j], i, l);
  }
  say("SD card: %s", hal_.sd_ready() ? "mounted" : "not found (capture, training and saving need one)");
  load_weights();
  print_model();
  scan_new_folders();

  hal_.start_tick(kTouchPollMs, &App::on_tick, this);
  say("Ready. Touch: 1-2 taps = next, 3+ taps = select. Serial: t = next, l = select, ? = help.");
  print_menu();
}

// ---------------------------------------------------------------- input

void App::on_tick(void* ctx) {
  App* app = (App*)ctx;
  if (app->touch_reset_.exchange(false)) app->touch_.reset();
  const Gesture g = app->touch_.update(app->hal_.millis(), app->hal_.touch_read());
  if (g != Gesture::None) {
    app->pending_taps_.store((uint8_t)(app->touch_.last_taps() > 255 ? 255 : app->touch_.last_taps()));
    app->pending_gesture_.store((uint8_t)g);
  }
}

App::Input App::poll_input(bool training) {
  // A completed touch gesture first: it happened before anything still waiting on the serial port.
  const uint8_t g = pending_gesture_.exchange(0);
  if (g != (uint8_t)Gesture::None) {
    const int taps = pending_taps_.load();
    if (g == (uint8_t)Gesture::Hold) {
      if (training) {
        say("Touch: long press ignored while training (3+ taps stop it)");
      } else if (mode_ == Mode::Infer) {
        say("Touch: long press (correct the frame just seen)");
        return Input::Hold;
      } else {
        say("Touch: long press (next)");
        return Input::Next;
      }
    } else if (g == (uint8_t)Gesture::Select) {
      say("Touch: %d taps (select)", taps);
      return Input::Select;
    }
    if (!training) {
      say("Touch: %d tap%s (next)", taps, taps > 1 ? "s" : "");
      return Input::Next;
    }
    say("Touch: %d tap%s ignored while training (3+ taps stop it)", taps, taps > 1 ? "s" : "");
  }
  for (;;) {
    const int c = hal_.serial_read();
    if (c < 0) return Input::None;
    if ((training || link_skip_pos_) && skip_link_byte(c)) continue;
    switch (c) {
      case 't':
      case 'T': return Input::Next;
      case 'l':
      case 'L': return Input::Select;
      case 'x':
      case 'X': return Input::Stop;
      case '?':
      case 'h':
      case 'H': return Input::Help;
      case 'n':
      case 'N':
        if (training) continue;  // a new class waits until the run ends (the key is dropped then)
        return Input::NewClass;
      case 'c':
      case 'C':
        if (training) continue;  // as 'n'
        return Input::Correct;
      case tv::link::kMagic0:  // a tvlink frame (the menu ignores bytes >= 127)
        return Input::Link;
      case '\r':
      case '\n':
      case ' ':
      case '\t': continue;
      default:
        if (c >= 32 && c < 127) say("Unknown command '%c' (t = next, l = select, ? = help)", c);
        continue;
    }
  }
}

bool App::skip_link_byte(int c) {
  namespace lk = tv::link;
  const uint32_t at = link_skip_pos_;
  if (at == 0) {
    if (c != lk::kMagic0) return false;
    link_skip_total_ = lk::kHeaderBytes;
  } else if (at == 1 && c != lk::kMagic1) {
    link_skip_pos_ = 0;  // not a frame after all: c is read as usual
    return false;
  } else if (at == 8) {  // the length's high byte (its low byte was at 7)
    const uint32_t len = (uint32_t)link_skip_low_ | (uint32_t)c << 8;
    if (len <= lk::kMaxPayload) link_skip_total_ = (uint32_t)(lk::kHeaderBytes + len + lk::kCrcBytes);
  } else if (at == 7) {
    link_skip_low_ = (uint8_t)c;
  }
  link_skip_pos_ = at + 1 >= link_skip_total_ ? 0 : at + 1;
  return true;
}

void App::drop_queued_input() {
  int dropped = 0;
  for (int c; (c = hal_.serial_read()) >= 0;)
    if (!skip_link_byte(c) && c > 32 && c < 127) dropped++;
  touch_reset_.store(true);
  const bool gesture = pending_gesture_.exchange(0) != 0;
  if (dropped || gesture)
    say("Ignored %d key%s%s sent during training (send them again now)", dropped, dropped == 1 ? "" : "s",
        gesture ? " and a touch gesture" : "");
}

void App::print_help() {
  say("Commands: t = next / capture, l = select / back, x = stop training, n NAME = new class, c NAME = in Infer, "
      "the frame just seen is of class NAME (saved into its folder as a correction for the next Learn), ? = this "
      "help");
  say("Touch pad: 1-2 taps = next / capture, 3+ taps = select / back / stop training, a press held %u s = in "
      "Infer, the class picker for the frame just seen",
      (unsigned)(kLongPressMs / 1000));
  say("Weights in use: %s (%s)", tier_name(tier_), weights_source_);
  print_model();
  if (mode_ == Mode::Menu) print_menu();
  if (mode_ == Mode::Capture)
    say("Capturing %s: %d photos on the card; t = take one, l = back to the menu", capture_label_, capture_count_);
  if (inferring()) say("Inferring: %d correction%s since the last Learn", corrections_, corrections_ == 1 ? "" : "s");
  if (mode_ == Mode::Pick) print_picker();
}

bool App::waiting_for_input() const {
  return mode_ == Mode::Menu || mode_ == Mode::Capture || mode_ == Mode::Pick ||
         (mode_ == Mode::Infer && camera_missing_);
}

void App::loop() {
  const Input in = poll_input(false);
  if (in == Input::Link) {
    serve_link_session();
    return;
  }
  if (in == Input::Help) print_help();
  if (in == Input::NewClass) {
    char name[kMaxLabelLength + 8];
    read_class_name(name, sizeof name);
    if (inferring()) leave_infer();
    new_class(name);
    return;
  }
  if (in == Input::Correct) {
    char name[kMaxLabelLength + 8];
    read_class_name(name, sizeof name);
    correct_frame(name);
    return;
  }
  switch (mode_) {
    case Mode::Menu:
      if (in == Input::Next) {
        menu_index_ = (menu_index_ + 1) % menu_items();
        print_menu();
      } else if (in == Input::Select) {
        select_item();
      }
      break;
    case Mode::Capture:
      if (in == Input::Next) {
        capture_one();
      } else if (in == Input::Select || in == Input::Stop) {
        say("Leaving capture mode: %d images of %s on the card", capture_count_, capture_label_);
        mode_ = Mode::Menu;
        print_menu();
      }
      break;
    case Mode::Infer:
      if (in == Input::Hold) {
        enter_picker();
        break;
      }
      if (in == Input::Next || in == Input::Select || in == Input::Stop) {
        leave_infer();
        break;
      }
      infer_frame();
      break;
    case Mode::Pick: picker_input(in); break;
  }
  hal_.delay_ms(mode_ == Mode::Infer && !camera_missing_ ? 1 : kIdleDelayMs);
}

// ---------------------------------------------------------------- menu

App::Item App::item_kind(int i) const {
  if (i < menu_classes()) return Item::Class;
  const int j = i - menu_classes();
  if (j >= fixed_items()) return Item::NewFolder;
  if (!has_model()) return j == fixed_items() - 1 ? Item::NewClass : Item::Learn;
  const Item with_model[] = {Item::Train, Item::Infer, Item::Learn, Item::NewClass};
  return with_model[j];
}

const char* App::item_name(int i) const {
  switch (item_kind(i)) {
    case Item::Class: return labels_[first_class() + i];
    case Item::Train: return "Train";
    case Item::Infer: return "Infer";
    case Item::Learn: return "Learn";
    case Item::NewClass: return "New class";
    case Item::NewFolder: return new_labels_[i - menu_classes() - fixed_items()];
  }
  return "?";
}

void App::print_menu() {
  if (menu_index_ >= menu_items()) menu_index_ = 0;
  say("%s", "");
  say("=== MENU ===");
  for (int i = 0; i < menu_items(); ++i)
    say("%s%d. %s%s", i == menu_index_ ? "> " : "", i + 1, item_name(i),
        item_kind(i) == Item::NewFolder ? " (new: Learn adds it)" : "");
  say("Commands: t=next (tap)  l=select (3+ taps)  n NAME=new class");
  char l1[24], l2[24];
  snprintf(l1, sizeof l1, "%d/%d", menu_index_ + 1, menu_items());
  snprintf(l2, sizeof l2, "> %s", item_name(menu_index_));
  show("MENU", l1, l2, tier_name(tier_));
}

void App::select_item() {
  switch (item_kind(menu_index_)) {
    case Item::Class:
    case Item::NewFolder: enter_capture(item_name(menu_index_)); break;
    case Item::Train:
    case Item::Learn:
      if (detector()) {
        refuse_detector_training(item_kind(menu_index_) == Item::Train ? "Train" : "Learn");
        break;
      }
      if (item_kind(menu_index_) == Item::Train)
        train();
      else
        learn();
      if (report_.saved) corrections_learned();
      drop_queued_input();
      print_menu();
      break;
    case Item::Infer: enter_infer(); break;
    case Item::NewClass: new_class(""); break;
  }
}

// ---------------------------------------------------------------- capture

namespace {

void scan_capture_entry(void* ctx, const char* name, bool is_dir) {
  CaptureScan& s = *(CaptureScan*)ctx;
  const size_t len = strlen(name);
  if (!is_dir && strncmp(name, "img_", 4) == 0 && len > 4 && strcmp(name + len - 4, ".tmp") == 0 &&
      s.stale_count < CaptureScan::kStaleMax)
    snprintf(s.stale[s.stale_count++], kPathMax, "%s", name);  // a capture cut short by a power cut
  if (is_dir || !is_jpeg_name(name)) return;
  s.count++;
  // img_<n>.jpg: remember the largest n so new names never collide
  if (strncmp(name, "img_", 4) != 0) return;
  long n = 0;
  const char* p = name + 4;
  if (*p < '0' || *p > '9') return;
  while (*p >= '0' && *p <= '9' && n < 1000000000L) n = n * 10 + (*p++ - '0');
  if (*p == 'c') ++p;  // img_<n>c.jpg: a correction (corrections.cpp), numbered with the photos
  if (*p == '.' && n > s.max_n && n < 2000000000L) s.max_n = (int)n;
}

}  // namespace

void App::enter_capture(const char* label) {
  say("%s", "");
  say(">>> Collection mode: %s", label);
  say("  TAP (1-2 taps) or 't' = capture image");
  say("  3+ taps or 'l' = back to the menu");
  if (!hal_.sd_ready()) {
    say("No SD card: cannot save images");
    show("No SD card");
    print_menu();
    return;
  }
  char dir[kPathMax];
  join_path(dir, kImagesDir, "/", label);
  Reason why;
  if (!make_images_folder(hal_, dir, &why)) {
    say("Cannot capture: %s", why.text);
    print_menu();
    return;
  }
  scan_capture_folder(dir);
  const CaptureScan& scan = capture_scan_;
  snprintf(capture_label_, sizeof capture_label_, "%s", label);
  capture_count_ = scan.count;
  capture_next_ = scan.max_n + 1;
  mode_ = Mode::Capture;
  touch_reset_.store(true);
  pending_gesture_.store(0);
  say("%s holds %d images; the next one is img_%d.jpg", dir, scan.count, capture_next_);
  char l2[24];
  snprintf(l2, sizeof l2, "%d images", capture_count_);
  show("CAPTURE", capture_label_, l2, "tap=shoot");
}

bool make_images_folder(Hal& hal, const char* dir, Reason* why) {
  if (!hal.exists(kImagesDir)) hal.mkdir(kImagesDir);
  if (hal.file_size(dir) >= 0) {
    why->set("%s is a file, not a folder: rename or remove it on the card", dir);
    return false;
  }
  if (!hal.exists(dir) && !hal.mkdir(dir)) {
    why->set("cannot create %s (is the card full or write-protected?)", dir);
    return false;
  }
  return true;
}

void App::scan_capture_folder(const char* dir) {
  CaptureScan& scan = capture_scan_;  // a member: off the loop task's stack
  scan = CaptureScan();
  hal_.list_dir(dir, scan_capture_entry, &scan);
  for (int i = 0; i < scan.stale_count; ++i) {
    char stale[kPathMax];
    if (join_path(stale, dir, "/", scan.stale[i]) && hal_.remove(stale))
      say("Removed %s, a capture cut short by a power cut", stale);
  }
}

bool App::next_photo_path(const char* dir, const char* mark, int* next, char* path, char* tmp) {
  for (;; ++*next) {  // never overwrite: step over any name that exists already
    char name[48];
    snprintf(name, sizeof name, "/img_%d%s", *next, mark);
    if (!join_path(path, dir, name, ".jpg")) return false;
    if (hal_.exists(path)) continue;
    // written under a name training ignores, then renamed: a power cut never leaves half a JPEG
    return join_path(tmp, dir, name, ".tmp");
  }
}

void App::capture_one() {
  const uint8_t* jpeg = nullptr;
  size_t size = 0;
  if (!hal_.camera_grab(&jpeg, &size)) {
    say("Camera: no frame, nothing saved");
    return;
  }
  char dir[kPathMax], path[kPathMax], tmp[kPathMax];
  join_path(dir, kImagesDir, "/", capture_label_);
  Reason why;
  bool ok = false;
  if (!next_photo_path(dir, "", &capture_next_, path, tmp))
    why.set("the name of a new photo in %s is too long for the card", dir);
  else
    ok = write_new_file(hal_, tmp, path, jpeg, size, &why);
  hal_.camera_release();
  if (!ok) {
    say("Capture failed: %s", why.text);
    return;
  }
  capture_next_++;
  capture_count_++;
  say("Saved: %s (%u bytes, Total: %d)", path, (unsigned)size, capture_count_);
  char l2[24];
  snprintf(l2, sizeof l2, "%d images", capture_count_);
  show("CAPTURE", capture_label_, l2, "saved");
}

// ---------------------------------------------------------------- infer

bool App::ensure_rgb(int width, int height) {
  const uint64_t need64 = (uint64_t)width * (uint64_t)height * 3u;
  if (width <= 0 || height <= 0 || need64 > (uint64_t)kMaxDecodePixels * 3u) return false;
  const size_t need = (size_t)need64;
  if (need <= rgb_cap_) return true;
  if (rgb_) hal_.psram_free(rgb_);
  rgb_ = (uint8_t*)hal_.psram_alloc(need);
  rgb_cap_ = rgb_ ? need : 0;
  return rgb_ != nullptr;
}

bool App::jpeg_to_input(const uint8_t* jpeg, size_t size, uint8_t* dst, Reason* why) {
  int w = 0, h = 0;
  decode_fail_ = DecodeFail::NotJpeg;
  if (!jpeg_dimensions(jpeg, size, &w, &h)) {
    why->set("not a JPEG (no frame header)");
    return false;
  }
  // 64-bit: w * h of two 16-bit sides overflows a 32-bit long (the board's)
  decode_fail_ = DecodeFail::TooLarge;
  if ((uint64_t)w * (uint64_t)h > kMaxDecodePixels) {
    why->set("%dx%d is larger than the %u pixels this firmware decodes", w, h, (unsigned)kMaxDecodePixels);
    return false;
  }
  decode_fail_ = DecodeFail::NoMemory;
  if (!ensure_rgb(w, h)) {
    why->set("no memory to decode a %dx%d JPEG", w, h);
    return false;
  }
  decodes_++;
  decode_fail_ = DecodeFail::Corrupt;
  if (!hal_.jpeg_decode_rgb(jpeg, size, w, h, rgb_)) {
    why->set("the JPEG data is corrupt");
    return false;
  }
  decode_fail_ = DecodeFail::Resize;
  frame_w_ = w;
  frame_h_ = h;
  // A detector sees the whole frame stretched (its centroids then scale back to the frame's pixels, as
  // tvtrain detect's photos); a classifier the centre crop.
  const bool resized =
      detector()
          ? tv::resize_nearest(rgb_, w, h, 3, dst, plan_.input.w, plan_.input.h, desc_.input.order, lut_)
          : tv::resize_nearest_crop(rgb_, w, h, 3, dst, plan_.input.w, plan_.input.h, desc_.input.order, false, lut_);
  if (!resized) {
    why->set("cannot resize %dx%d to the model input", w, h);
    return false;
  }
  decode_fail_ = DecodeFail::None;
  return true;
}

void App::enter_infer() {
  say("%s", "");
  say(">>> Inference mode");
  say("Instructions: t, l or any tap = back to the menu");
  if (detector()) {
    say("Detector: per frame the objects of each class (the whole frame, stretched to the %dx%d input), each "
        "object's class, centre in the frame's pixels and probability; a cell is an object at %.2f or more",
        plan_.input.w, plan_.input.h, (double)desc_.detect_threshold);
    say("Weights: %s (%s), %s engine", tier_name(tier_), weights_source_, int8_engine() ? "int8" : "float");
    mode_ = Mode::Infer;
    frame_number_ = 0;
    frame_kept_ = 0;
    camera_missing_ = false;
    touch_reset_.store(true);
    pending_gesture_.store(0);
    show("INFER", "detector", "...");
    return;
  }
  say("A frame seen wrong: send c NAME (its right class) or hold the pad %u s (a class picker): it is saved into the "
      "class's folder for the next Learn",
      (unsigned)(kLongPressMs / 1000));
  if (!trained_weights_)
    say(tier_ == WeightTier::Backbone
            ? "Note: the model has not learned its classes yet (built-in backbone, no head): select Learn first (no "
              "unsure frames are kept)"
            : "Note: the weights are He-init random (no model on the card or baked in): train first (no unsure frames "
              "are kept)");
  else if (cfg_.unsure_margin > 0 && hal_.sd_ready())
    say("Frames whose top two classes are less than %.2f apart are kept in %s for sorting on the PC (at most one a "
        "second, the newest %d)",
        (double)cfg_.unsure_margin, kUnsureDir, kUnsureMaxFiles);
  say("Weights: %s (%s), %s engine", tier_name(tier_), weights_source_, int8_engine() ? "int8" : "float");
  mode_ = Mode::Infer;
  frame_number_ = 0;
  frame_kept_ = 0;
  corrected_frame_ = 0;
  unsure_stopped_ = false;
  camera_missing_ = false;
  touch_reset_.store(true);
  pending_gesture_.store(0);
  show("INFER", "...");
}

void App::leave_infer() {
  say("Leaving inference mode after %u frames", (unsigned)frame_number_);
  if (corrections_ > 0)
    say("%d correction%s since the last Learn: Learn (or Train) uses them with the other photos", corrections_,
        corrections_ == 1 ? "" : "s");
  void** bufs[] = {(void**)&rgb_, (void**)&frame_};
  for (void** b : bufs) {
    if (*b) hal_.psram_free(*b);
    *b = nullptr;
  }
  rgb_cap_ = frame_cap_ = 0;
  frame_kept_ = 0;
  mode_ = Mode::Menu;
  print_menu();
}

void App::infer_frame() {
  const uint64_t t0 = hal_.micros();
  const uint8_t* jpeg = nullptr;
  size_t size = 0;
  if (!hal_.camera_grab(&jpeg, &size)) {
    if (!camera_missing_) say("Camera: no frame");
    camera_missing_ = true;
    return;
  }
  camera_missing_ = false;
  Reason why;
  const bool ok = jpeg_to_input(jpeg, size, input_, &why);
  // the frame a correction saves, while the camera holds it (a detector's frames are not corrected)
  const bool kept = ok && !detector() && keep_frame(jpeg, size);
  hal_.camera_release();
  frame_number_++;
  if (!ok) {
    say("Frame %u: skipped, %s", (unsigned)frame_number_, why.text);
    return;
  }
  frame_kept_ = 0;  // frame_ holds this frame (or nothing): kept only once it is classified
  float* out = detector() ? grid_probs_ : probs_;  // a detector: its grid, a softmax per cell
  if (int8_engine()) {
    const tv::Status st = tv::q8_infer_u8(q8_, input_, q8_work_, out);
    if (!st.ok()) {
      say("Frame %u: the int8 model failed: %s", (unsigned)frame_number_, StatusWords(st, &plan_.desc).text);
      return;
    }
  } else {
    const tv::Status st = tv::infer_u8(inf_, input_, out);
    if (!st.ok()) {
      say("Frame %u: the model cannot run: layer %d (%s) outputs infinite or NaN values (its weights overflow float)",
          (unsigned)frame_number_, (int)st.layer, tv::layer_type_name(plan_.desc.layers[st.layer].type));
      return;
    }
  }
  if (detector()) {
    report_objects(t0);
    return;
  }
  const int best = tv::argmax(probs_, num_classes_);
  if (kept) {
    frame_kept_ = frame_number_;
    frame_best_ = best;
    frame_prob_ = probs_[best];
  }
  const double ms = (double)(hal_.micros() - t0) / 1000.0;
  char all[kMaxClasses * 6 + 1];
  size_t used = 0;
  for (int k = 0; k < num_classes_; ++k) {
    const int n = snprintf(all + used, sizeof all - used, "%s%.0f%%", k ? " " : "", (double)(100.f * probs_[k]));
    if (n > 0) used += (size_t)n;
  }
  say("Frame %u: %.1f ms (%.1f FPS) Pred: %s (%.1f%%) | All: %s", (unsigned)frame_number_, ms,
      ms > 0 ? 1000.0 / ms : 0.0, labels_[best], (double)(100.f * probs_[best]), all);
  char l0[24], l2[24], l3[24];
  snprintf(l0, sizeof l0, "INFER");
  if (corrections_ > 0) snprintf(l0, sizeof l0, "INFER fix %d", corrections_);  // saved since the last Learn
  snprintf(l2, sizeof l2, "%.1f%%", (double)(100.f * probs_[best]));
  snprintf(l3, sizeof l3, "%.0f ms", ms);
  show(l0, labels_[best], l2, l3);
  if (kept) keep_if_unsure(best);
}

bool App::keep_frame(const uint8_t* jpeg, size_t size) {
  frame_size_ = 0;
  if (size > kMaxImageFileBytes) return false;  // larger than a photo the board reads back
  if (size > frame_cap_) {
    if (frame_) hal_.psram_free(frame_);
    frame_ = (uint8_t*)hal_.psram_alloc(size);
    frame_cap_ = frame_ ? size : 0;
    if (!frame_) return false;
  }
  memcpy(frame_, jpeg, size);
  frame_size_ = size;
  return true;
}

}  // namespace tvfw
