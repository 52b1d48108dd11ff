// The TinyVision device application: menu, capture, train, infer and the weight tiers, over the
// hardware layer in hal.h. The same code runs on the ESP32-S3 and in the Linux simulator (tvsim).
//
// Menu: one item per class (capture images of it), then Train, Infer, Learn and New class, then the
// class folders on the card the model has no class for yet (capture into them; Learn adds them).
//   Touch: 1-2 taps = next item, 3+ taps = select, a 1 s press = Infer's class picker.  Serial: t = next,
//   l = select, n NAME = new class, c NAME = in Infer, the right class of the frame just seen,
//   ? = help.
// Capture (a class item): a tap / 't' saves the camera's current JPEG as /images/<label>/img_<n>.jpg
//   (never overwriting a file); 3+ taps / 'l' go back to the menu.
// Train: trains on the card's images with the core, starting from the loaded weights; 3+ taps or
//   'l' / 'x' stop within a batch and save. Saves /header/model.tvb atomically (previous model kept as
//   model.tvb.bak), the C header /header/model.h, and for the webmcu preset /header/myWeights.bin.
// Learn: the new class folders imprinted, then the head update on features cached once per photo: the
//   same bytes as tvtrain --init MODEL --update head (learn.cpp).
// Infer: camera -> JPEG decode -> resize (the core's LUT crop-resize) -> forward, one line per frame;
//   any tap or t / l goes back to the menu. A detector (tv::Task::Detect) sees the whole frame stretched to its
//   input and prints its objects (tv::objects_line, in the frame's pixels) and shows their counts (detect.cpp);
//   Train, Learn and corrections refuse a detector. A frame seen wrong is corrected with 'c NAME' or a long press
//   (a class picker): saved as /images/<class>/img_<n>c.jpg for the next Learn (corrections.cpp). Frames
//   it is unsure of are kept in /images/_unsure/ for sorting on the PC.
// Boot: the model from the SD card (model.tvb, its interrupted-save and backup copies, then the
//   reference's myWeights.bin) > the baked header > He-init of the configured preset. A model brings
//   its network, input and labels; the firmware sizes its memory from it with the core's figures and
//   refuses only what does not fit the board's memory (with the numbers) or what its engines cannot
//   run, naming the reason and trying the next tier.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "card.h"
#include "config.h"
#include "hal.h"
#include "touch.h"
#include "tv/detect/grid.h"
#include "tv/formats/header_writer.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"
#include "tv/train/train_session.h"

namespace tvfw {

// Where the weights in use came from.
// Where the weights came from: the card, the baked header, the built-in backbone (its layers pretrained on
// drawn images, the head not learned yet: Learn imprints it), He-init, or no model yet (a blank card).
enum class WeightTier : uint8_t { SD, Baked, Backbone, HeInit, None };
const char* tier_name(WeightTier t);

// Card paths.
constexpr const char* kImagesDir = "/images";
constexpr const char* kHeaderDir = "/header";
constexpr const char* kModelPath = "/header/model.tvb";
constexpr const char* kModelTmpPath = "/header/model.tvb.tmp";
constexpr const char* kModelBakPath = "/header/model.tvb.bak";
constexpr const char* kHeaderPath = "/header/model.h";
constexpr const char* kRawWeightsPath = "/header/myWeights.bin";
constexpr const char* kHeaderTmpPath = "/header/model.h.tmp";
constexpr const char* kRawWeightsTmpPath = "/header/myWeights.bin.tmp";
constexpr const char* kUnsureDir = "/images/_unsure";  // the board's own folder: never a class (tv/names.h)

constexpr size_t kMaxBlobBytes = 4u << 20;            // largest model file read from the card
constexpr size_t kMaxImageFileBytes = 2u << 20;       // largest JPEG read from the card
constexpr uint32_t kMaxDecodePixels = 1024u * 1024u;  // largest JPEG decoded (its RGB lives in PSRAM)
constexpr uint32_t kIdleDelayMs = 10;                 // main-loop pause while waiting for input

// The first of labels[0..n) that names the same card folder as `name` (tv::same_folder_name), or -1.
int first_same_card_folder(const char (*labels)[kMaxLabelLength + 1], int n, const char* name);

// Makes dir (a folder below /images) and /images when they are missing; false with why (dir a file, or
// the card refuses).
bool make_images_folder(Hal& hal, const char* dir, Reason* why);

// The header options of every model.h the board writes: tvexport's, so both write the same bytes.
tv::HeaderOptions board_header_options();

// Why the last jpeg_to_input failed.
enum class DecodeFail : uint8_t { None, NotJpeg, TooLarge, NoMemory, Corrupt, Resize, Count };

// What entering capture finds in a class folder: its photos, the largest img_<n> number, and the
// img_<n>.tmp files a power cut left.
struct CaptureScan {
  static constexpr int kStaleMax = 4;
  int count = 0;
  int max_n = -1;
  char stale[kStaleMax][kPathMax];
  int stale_count = 0;
};

struct ImageList;
struct TrainRun;
struct LearnRun;
struct SessionPlan;
struct BoardProgress;

// What a detector needs beside its engine, per frame, sized from its plan at load (detect.cpp): its grid of
// probabilities (tv::plan_outputs floats), tv::grid_objects' scratch, room for an object in every cell and
// the longest objects line those objects can make. One PSRAM block of `total` bytes.
struct DetectMemory {
  int grid_h = 0, grid_w = 0, max_objects = 0;
  size_t probs_bytes = 0, scratch_bytes = 0, objects_bytes = 0, line_bytes = 0;
  size_t total = 0;
};
// A detector plan's DetectMemory (all 0 for a classifier).
DetectMemory detect_memory(const tv::ModelPlan& plan);

// What the last training run did (also printed).
struct TrainReport {
  bool ran = false;
  bool stopped = false;
  bool saved = false;
  int images = 0, train_images = 0, val_images = 0, skipped = 0;
  int epochs_run = 0;
  int samples = 0;
  int val_correct = 0;
  uint32_t decodes = 0;            // JPEG decodes of this run (one per image)
  uint32_t reference_decodes = 0;  // what the reference firmware would decode for the same run
  const char* update = nullptr;    // Learn: the update it ran ("head"); null for Train
  int classes_added = 0;           // Learn: classes imprinted
  bool distilled = false;          // Learn: the old classes kept the model's soft targets (tv::distill_new_classes)
};

class App {
 public:
  App(Hal& hal, const AppConfig& config);
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Boot: plans the model, allocates its memory, loads weights by tier, shows the menu.
  void setup();
  // One pass of the main loop: handles input, and in Infer classifies one frame.
  void loop();
  // True when the app is waiting for input (menu, capture, or Infer without camera frames).
  bool waiting_for_input() const;

  WeightTier tier() const { return tier_; }
  uint32_t jpeg_decodes() const { return decodes_; }
  const TrainReport& last_train() const { return report_; }

 private:
  // Pick: Infer's class picker (a long press), choosing the class of the frame just seen.
  enum class Mode : uint8_t { Menu, Capture, Infer, Pick };
  bool inferring() const { return mode_ == Mode::Infer || mode_ == Mode::Pick; }
  // Which engine runs the loaded model: none while one is being loaded, the float engine (params_,
  // inf_; also every model training has touched), or the core's int8 engine (q8_).
  enum class Engine : uint8_t { None, Float, Int8 };
  bool int8_engine() const { return engine_ == Engine::Int8; }
  // True when the loaded model is a detector (a grid of objects, tv::Task::Detect).
  bool detector() const { return has_model() && desc_.task == tv::Task::Detect; }
  enum class Input : uint8_t { None, Next, Select, Stop, Help, Link, NewClass, Correct, Hold };

  // ---- output ----
  void say(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void show(const char* l0, const char* l1 = "", const char* l2 = "", const char* l3 = "");
  [[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  // ---- input ----
  static void on_tick(void* ctx);
  Input poll_input(bool training);
  void print_help();
  // Drops the keys and the touch gesture that queued up while training (a stop key pressed several
  // times would otherwise start Train again after the save), and says so.
  void drop_queued_input();
  // True when byte c belongs to a tvlink frame that arrived while the menu could not serve it
  // (training): from its first byte to its last, as its header's length says, it holds no keys.
  bool skip_link_byte(int c);

  // ---- menu ----
  // The model's classes, Train, Infer, Learn, New class, then the class folders on the card the model
  // does not have yet (captured for, learned by Learn).
  enum class Item : uint8_t { Class, Train, Infer, Learn, NewClass, NewFolder };
  int menu_items() const { return menu_classes() + fixed_items() + num_new_; }
  // The classes the menu lists (capture items): every class of a classifier, a detector's object classes
  // (its label 0 is the background, no folder).
  int menu_classes() const { return num_classes_ - first_class(); }
  int first_class() const { return detector() ? 1 : 0; }
  // The items between the classes and the new folders: Train, Infer, Learn, New class with a model;
  // without one (a blank card) Learn (once two new class folders exist) and New class.
  int fixed_items() const { return has_model() ? 4 : (num_new_ >= 2 ? 2 : 1); }
  bool has_model() const { return num_classes_ > 0; }
  Item item_kind(int i) const;
  const char* item_name(int i) const;
  void print_menu();
  void select_item();

  // ---- capture ----
  // Capture into /images/<label>/ (a class's folder, or a new class's).
  void enter_capture(const char* label);
  void capture_one();
  // The first photo name of `dir` from number *next on that no file has: img_<n><mark>.jpg into path and
  // its temporary img_<n><mark>.tmp into tmp (kPathMax each); *next becomes n. False when too long.
  bool next_photo_path(const char* dir, const char* mark, int* next, char* path, char* tmp);
  // Lists a class folder into capture_scan_ (its photos, the largest img_<n>) and removes the capture
  // temporaries a power cut left.
  void scan_capture_folder(const char* dir);

  // ---- new classes (learn.cpp) ----
  // Reads the rest of an 'n name' line from the serial port into name (empty: none given).
  void read_class_name(char* name, size_t cap);
  // Creates /images/<name>/ (an automatic class<k> when name is empty) and starts capturing into it.
  void new_class(const char* name);
  // The class folders on the card the model has no class for into new_labels_: the first by name, up to
  // the board's 16 classes; the rest counted (and the first named) in left_out_.
  void scan_new_folders();
  // Says which class folders are left out (none: nothing).
  void say_left_out();
  // The card folder of the class a name means, as FAT compares names (letter case, trailing dots and
  // spaces): a model class's or a new class folder's, spelled as the board spells it, into folder
  // (kMaxLabelLength + 1). False when no class has that folder.
  bool find_class_folder(const char* name, char* folder);

  // ---- renaming a class (rename.cpp) ----
  // Renames the class (or new class folder) `from` to `to` in one step: /images/<from> becomes
  // /images/<to> and, for a class of a trained model, the model on the card (or the baked one) is
  // written again with the new label and loaded. True with what was done; false with why (the card and
  // the model then as they were).
  bool rename_class(const char* from, size_t from_len, const char* to, size_t to_len, Reason* done, Reason* why);
  bool find_rename(const char* from, size_t from_len, const char* to, size_t to_len, Reason* why);
  bool move_class_folder(Reason* why);
  void put_class_folder_back();
  bool relabel_card_model(Reason* why);

  // ---- infer ----
  void enter_infer();
  void infer_frame();
  void leave_infer();
  bool ensure_rgb(int width, int height);
  // Copies the frame being classified into frame_ (its JPEG bytes, for a correction); false without memory.
  bool keep_frame(const uint8_t* jpeg, size_t size);

  // ---- a detector (detect.cpp) ----
  // Allocates the detector's buffers (detect_memory) from PSRAM; false with the numbers.
  bool allocate_detect_buffers(Reason* why);
  // A frame's objects from grid_probs_ (the model has run): one serial line with tv::objects_line in the
  // frame's pixels (frame_w_ x frame_h_), their counts on the display.
  void report_objects(uint64_t t0);
  // With AppConfig::exact_objects: "Frame N exact:" and each object's label, x, y, probability (float bits,
  // hex) and cells, on one line.
  void write_exact_objects(int n);
  // Train and Learn refuse a detector: one sentence on serial and the display, back to the menu.
  void refuse_detector_training(const char* what);

  // ---- corrections from the field and unsure frames (corrections.cpp) ----
  // 'c NAME': the frame Infer classified last is of class NAME: saved as /images/<class>/img_<n>c.jpg (a
  // new class folder made when the class limit allows), counted; refused with one sentence otherwise.
  void correct_frame(const char* asked);
  // Saves the kept frame into the folder of the class `asked` names (a checked name), or says why not.
  void save_correction(const char* asked);
  // The class picker a long press opens in Infer: the classes and the new class folders, then Cancel.
  void enter_picker();
  void picker_input(Input in);
  int picker_items() const { return num_classes_ + num_new_ + 1; }
  const char* picker_name(int i) const;
  void print_picker();
  // After a frame is classified: keeps it in /images/_unsure/ when its top-two margin is below the
  // configured one (at most one a second, at most kUnsureMaxFiles files, the oldest removed first).
  void keep_if_unsure(int best);
  // Writes the kept frame as the next /images/_unsure/<counter>_<label>.jpg into path (the oldest removed
  // while kUnsureMaxFiles are there); false with why.
  bool save_unsure_frame(const char* label, char* path, Reason* why);
  // Resets the count of corrections after a model learned them (Train or Learn saved a model).
  void corrections_learned();
  // Decodes a JPEG and resizes it to the model input in `dst`; counts the decode.
  bool jpeg_to_input(const uint8_t* jpeg, size_t size, uint8_t* dst, Reason* why);

  // ---- the model and its weights (weights.cpp) ----
  void load_weights();
  // A new model of the preset for the card's class folders (or the configured labels): the built-in
  // backbone's layers with a zero head (the Backbone tier) when one is built in for its network and the
  // configuration allows it, else He-init; false, and the no-model state, when there are fewer than 2.
  bool start_new_model();
  // The built-in backbone's weights into params_ for every layer but the logits' (zero: Learn imprints
  // them); false with the reason when none fits the planned network.
  bool take_backbone(Reason* why);
  // Takes a blob's network, labels and weights when the board can run it (float: copied into params_;
  // int8: bound in place). *file, when given, is the PSRAM buffer `data` was read into: try_blob may
  // keep it (int8: blob_keep_) or free it as soon as the float weights are copied (so a model that fits
  // is not refused for its own file), setting *file to null; the caller frees what is left. False
  // with the reason otherwise (the previous model is then released).
  bool try_blob(const uint8_t* data, size_t size, uint8_t** file, Reason* why);
  bool try_blob_file(const char* path, Reason* why);
  bool try_raw_weights_file(const char* path, Reason* why);
  // ---- the card tier and what a power cut left (recover.cpp) ----
  // model.tvb, else its interrupted save's verified .tmp (the save then finished), else the backup,
  // else myWeights.bin; then the temporaries. False when nothing loaded (*have_main: model.tvb exists).
  bool load_card_model(bool* have_main);
  bool try_interrupted_save(bool main_refused, Reason* why);
  // Finishes or removes model.h.tmp and myWeights.bin.tmp: finished when main_loaded and the temporary
  // holds exactly what a save of the loaded model writes, removed when it does not, kept when the
  // board cannot tell.
  void settle_side_temporaries(bool main_loaded);
  int expected_side_file(const char* path, uint32_t* crc, size_t* bytes);
  // Plans `desc` into plan_ and allocates what inference needs (float: weights and work buffer;
  // int8: its work buffer) after checking the free PSRAM. False with the numbers otherwise. With a
  // float blob's *file (file_bytes), the weights, labels and recipe are taken from view_ and the file
  // freed before the rest is allocated (its bytes count as free); view_ then points at freed memory.
  bool adopt_network(const tv::ModelDesc& desc, bool int8, Reason* why, uint8_t** file = nullptr,
                     size_t file_bytes = 0);
  // The float engine's buffers (weights, work buffer) for the current plan; false with the numbers.
  bool ensure_float_buffers(Reason* why);
  void release_model();
  // He-init classes: the configured labels, else the class folders in /images on the card (the
  // folders no class can be named after are listed in `ignored`, when given). Returns their count.
  int he_init_labels(char* ignored, size_t ignored_cap);
  // The model's labels as distinct card folder names into labels_ (labels.cpp).
  void name_classes(const tv::BlobView& view);
  // The recipe named by a model's provenance ("preset=NAME"), else webmcu's for the reference network,
  // else the configured preset's.
  void choose_recipe(const char* provenance, size_t len);
  // name_classes and choose_recipe from view_, while the blob it points into is still held.
  void read_labels_and_recipe();
  void print_model();
  bool save_model(Reason* why);
  // Writes a model's bytes to the card as /header/model.tvb (atomically; the model it replaces kept as
  // the backup when keep_backup) and the C header of the same bytes, as tvexport writes it. view_ is the
  // header's scratch: call it only while no int8 model is bound to view_.
  bool write_card_model(const uint8_t* blob, size_t size, bool keep_backup, Reason* why);
  // False (with what to remove) when a save could not write its files: /header a file, or a folder
  // where model.tvb, model.h, myWeights.bin or their .tmp/.bak belong. Checked before training.
  bool check_save_targets(Reason* why);

  // ---- the USB link (link_app.cpp, protocol in link.cpp) ----
  friend class AppLink;
  // Serves a tvlink session (its first byte has been read), then shows the menu again.
  void serve_link_session();

  // ---- training (train.cpp; the card's images in train_images.cpp) ----
  // Train, as its steps: ready_to_train, load_training_images, split_training_images, run_training
  // (start_session, the session, report_training), release_training, save_trained_model.
  void train();
  bool ready_to_train();
  bool load_training_images(TrainRun& run);
  bool split_training_images(TrainRun& run);
  bool choose_start(TrainRun& run);
  void warn_thin_classes(const TrainRun& run);
  bool start_session(TrainRun& run, const SessionPlan& plan, tv::TrainSession& s);
  tv::SessionHooks training_hooks(BoardProgress& progress);
  bool run_session(TrainRun& run, tv::TrainSession& s, const char* title, tv::SessionResult* result);
  bool run_training(TrainRun& run);
  void report_training(TrainRun& run, float train_seconds);
  void release_training(TrainRun& run);
  void save_trained_model();
  bool list_images(ImageList& list, int* class_begin, uint64_t cache_per_photo, bool empty_ok);
  bool decode_images(const ImageList& list, uint8_t* pixels, size_t stride, int* keep, LearnRun* learn);

  // ---- Learn (learn.cpp): new classes imprinted, then the head update on cached features ----
  // Learn, as its steps: ready_to_train, plan_learning, cache_card_features, split_training_images,
  // imprint_new_classes, run_head_update, adopt_learned, release_learning, save_trained_model.
  void learn();
  void learn_first_model();
  // Learn's steps on the loaded model; from_backbone: every class is new (the backbone's head is dropped).
  void learn_classes(bool from_backbone);
  bool measure_old_classes(LearnRun& run, const tv::ModelPlan& model, const float* params, int* correct);
  void compare_old_classes(const LearnRun& run);
  bool plan_learning(LearnRun& run);
  bool cache_card_features(LearnRun& run);
  bool cache_features(LearnRun& run, int index, const char* path);
  bool imprint_new_classes(LearnRun& run);
  // One sentence for imprint_classes' refusal (st.layer: the class).
  void say_imprint_refusal(const tv::Status& st);
  bool balance_new_classes(TrainRun& data, int first_new);
  bool run_head_update(LearnRun& run);
  int distilled_photos(const LearnRun& run) const;
  void report_learning(LearnRun& run, float total_seconds);
  bool adopt_learned(LearnRun& run);
  void release_learning_buffers(LearnRun& run);
  void release_learning(LearnRun* run);

  Hal& hal_;
  AppConfig cfg_;
  int num_classes_ = 0;
  char labels_[kMaxClasses][kMaxLabelLength + 1] = {};

  // the model
  char recipe_name_[24] = {0};
  tv::ModelDesc desc_;
  tv::ModelPlan plan_;
  tv::TrainRecipe recipe_;
  float* params_ = nullptr;
  void* infer_arena_ = nullptr;
  tv::Inference inf_;
  uint8_t* input_ = nullptr;  // one image at the model's input size
  uint16_t* lut_ = nullptr;   // resize lookup tables (input width + height)
  float probs_[kMaxClasses] = {};
  // a detector's per-frame buffers (one PSRAM block, detect_mem_; null for a classifier)
  void* detect_mem_ = nullptr;
  DetectMemory detect_sizes_;
  float* grid_probs_ = nullptr;
  int* grid_scratch_ = nullptr;
  tv::GridObject* objects_ = nullptr;
  char* objects_line_ = nullptr;
  int frame_w_ = 0, frame_h_ = 0;  // the last decoded frame's size (a detector's centroids are in its pixels)
  tv::BlobView view_;              // scratch for decoding blobs
  Engine engine_ = Engine::None;
  tv::Q8Model q8_;
  int8_t* q8_work_ = nullptr;
  uint8_t* blob_keep_ = nullptr;  // an int8 blob read from the card (its tensors are used in place)
  WeightTier tier_ = WeightTier::HeInit;
  bool trained_weights_ = false;  // the weights came from a file or from training (not He-init)
  char weights_source_[kPathMax] = {0};

  // decoding
  uint8_t* rgb_ = nullptr;
  size_t rgb_cap_ = 0;
  uint32_t decodes_ = 0;
  DecodeFail decode_fail_ = DecodeFail::None;

  // user interface
  Mode mode_ = Mode::Menu;
  int menu_index_ = 0;
  char capture_label_[kMaxLabelLength + 1] = {0};  // the folder capture writes into
  char new_labels_[kMaxClasses][kMaxLabelLength + 1] = {};
  int num_new_ = 0;
  int left_out_ = 0;  // class folders past the board's classes (scan_new_folders, he_init_labels)
  char left_out_names_[120] = {};
  int capture_next_ = 0;   // next img_<n> number
  int capture_count_ = 0;  // images of the class on the card
  CaptureScan capture_scan_;
  TouchReader touch_;
  std::atomic<uint8_t> pending_gesture_{0};
  std::atomic<uint8_t> pending_taps_{0};
  std::atomic<bool> touch_reset_{false};  // asks the tick to forget taps in progress (it owns touch_)
  uint32_t link_skip_pos_ = 0;            // bytes of a skipped tvlink frame read so far (0: none)
  uint32_t link_skip_total_ = 0;          // its length (header, payload, CRC) once its header is read
  uint8_t link_skip_low_ = 0;             // its length's low byte
  uint32_t frame_number_ = 0;
  bool camera_missing_ = false;
  // the frame Infer classified last (its JPEG in PSRAM), for a correction
  uint8_t* frame_ = nullptr;
  size_t frame_cap_ = 0, frame_size_ = 0;
  uint32_t frame_kept_ = 0;  // its frame number (0: none yet)
  int frame_best_ = 0;       // the class Infer gave it
  float frame_prob_ = 0;
  int corrections_ = 0;                 // saved since boot or since the last Train or Learn saved a model
  uint32_t corrected_frame_ = 0;        // the frame the last correction saved (0: none in this Infer)
  char corrected_path_[kPathMax] = {};  // where
  int pick_index_ = 0;
  // unsure frames
  uint32_t unsure_last_ms_ = 0;  // when the last one was kept
  bool unsure_kept_any_ = false;
  bool unsure_stopped_ = false;  // a write failed: none kept until Infer starts again
  TrainReport report_;
};

}  // namespace tvfw
