#include "host/photos/detection_dataset.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/parallel.h"
#include "host/base/text.h"
#include "host/photos/dataset_tree.h"
#include "host/photos/detection_labels.h"
#include "host/photos/image.h"

namespace tvh {
namespace {

using namespace dataset_tree;

// A listed dataset: its tree, the open zip, the folder that holds it all and how its files are named.
struct Listed {
  std::string source;
  bool is_zip = false;
  Tree tree;
  std::shared_ptr<ZipArchive> archive;
  std::string root;  // a zip's single top-level folder, looked through ("" = the source itself)
  DisplayNames show{"", false};

  std::vector<uint8_t> read(const std::string& rel, size_t max_bytes) const {
    if (is_zip) return read_zip_entry(*archive, tree.zip_index.at(rel), show.file(rel));
    return read_file(show.file(rel), max_bytes);
  }
  std::string read_text(const std::string& rel) const {
    const std::vector<uint8_t> bytes = read(rel, kMaxLabelFileBytes);
    return std::string(bytes.begin(), bytes.end());
  }
  bool has_file(const std::string& rel) const { return std::binary_search(tree.files.begin(), tree.files.end(), rel); }
};

Listed list_source(const std::string& path) {
  Listed l;
  l.source = strip_trailing_slashes(path);
  if (l.source.empty()) throw Error("no dataset path was given.");
  l.is_zip = check_source_is_zip(l.source, "give a folder of photos and label files, or a .zip of one");
  l.tree = list_dataset_source(l.source, l.is_zip, &l.archive);
  if (l.is_zip && !l.tree.has_files_in("")) {
    const std::vector<std::string> top = l.tree.child_dirs("");
    if (top.size() == 1) l.root = top[0];
  }
  l.show = DisplayNames{l.source, l.is_zip};
  return l;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string stem_of(const std::string& leaf) {
  const size_t dot = leaf.find_last_of('.');
  return dot == std::string::npos ? leaf : leaf.substr(0, dot);
}

// `rel` relative to `root` ("" when it is root itself).
std::string below(const std::string& rel, const std::string& root) {
  return root.empty() ? rel : rel.size() > root.size() ? rel.substr(root.size() + 1) : std::string();
}

std::vector<std::string> components(const std::string& rel) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t slash = rel.find('/', start);
    out.push_back(rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) return out;
    start = slash + 1;
  }
}

// "train", "val" or "test" for a folder name that says one (valid and validation are "val"), else "".
std::string subset_name(const std::string& folder) {
  const std::string f = ascii_lower(folder);
  if (f == "train") return "train";
  if (f == "val" || f == "valid" || f == "validation") return "val";
  if (f == "test") return "test";
  return "";
}

// The subset the folders of `rel` (below the root) name: its first folder that names one.
std::string subset_of_path(const std::string& rel_below_root) {
  const std::vector<std::string> parts = components(rel_below_root);
  for (size_t k = 0; k + 1 < parts.size(); ++k) {
    const std::string s = subset_name(parts[k]);
    if (!s.empty()) return s;
  }
  return "";
}

// `base` joined with the relative path `rel` ('/'-separated, "." and ".." resolved); false when it
// leaves the dataset ("" is its top).
bool resolve_relative(const std::string& base, const std::string& rel, std::string* out) {
  std::vector<std::string> parts;
  if (!base.empty()) parts = components(base);
  for (const std::string& p : components(rel)) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
    } else {
      parts.push_back(p);
    }
  }
  std::string joined;
  for (const auto& p : parts) joined = join(joined, p);
  *out = joined;
  return true;
}

// True when one of the folders `rel` lies in is named `folder`.
bool in_folder_named(const std::string& rel, const char* folder) {
  const std::vector<std::string> parts = components(rel);
  return std::find(parts.begin(), parts.end() - 1, folder) != parts.end() - 1;
}

bool is_label_txt(const std::string& rel_below_root) {
  return ends_with(ascii_lower(rel_below_root), ".txt") && in_folder_named(rel_below_root, "labels") &&
         leaf_of(rel_below_root) != "classes.txt";
}

// The YOLO label file of an image: images/ (its last such folder) replaced by labels/, extension .txt;
// an image outside any images/ folder has its .txt beside it.
std::string yolo_label_of(const std::string& image_rel) {
  const std::string txt = join(parent_of(image_rel), stem_of(leaf_of(image_rel)) + ".txt");
  const std::string key = "images/";
  size_t at = std::string::npos;
  for (size_t pos = 0; (pos = txt.find(key, pos)) != std::string::npos; ++pos) {
    if (pos == 0 || txt[pos - 1] == '/') at = pos;
  }
  if (at == std::string::npos) return txt;
  return txt.substr(0, at) + "labels/" + txt.substr(at + key.size());
}

// One photo to decode with its boxes (normalised to the stored photo).
struct Item {
  std::string rel, display;
  std::string subset;
  std::string label_display;  // the label file that gave its boxes
  std::vector<DetectionBox> boxes;
  int expect_w = 0, expect_h = 0;  // the stored size the label file gives (COCO, VOC); 0 = none
};

// What every format's listing gives the decoder.
struct Found {
  std::vector<std::string> classes;
  std::vector<Item> items;
  std::vector<std::string> warnings;
  std::vector<SkippedFile> skipped;
  bool keep_unlabelled = false;  // DetectionOptions::keep_unlabelled
  size_t unlabelled_kept = 0;
};

void skip(Found& f, const std::string& path, const std::string& reason, const std::string& message) {
  f.skipped.push_back({path, reason, message});
}

// A photo no label file names: left out as "no_label" with `why` and what to do, or (keep_unlabelled)
// kept as a photo with no objects.
void unlabelled(const Listed& l, Found& f, const std::string& rel, const std::string& why) {
  if (!f.keep_unlabelled) {
    skip(f, l.show.file(rel), "no_label", "'" + l.show.file(rel) + "' " + why);
    return;
  }
  f.items.push_back({rel, l.show.file(rel), subset_of_path(below(rel, l.root)), "", {}, 0, 0});
  ++f.unlabelled_kept;
}

// The image files below the root (path order); the unsupported pictures skipped with their reason.
std::vector<std::string> image_files(const Listed& l, Found& f) {
  std::vector<std::string> out;
  for (const auto& rel : l.tree.files) {
    if (!is_under(rel, l.root)) continue;
    const std::string leaf = leaf_of(rel);
    if (is_image_name(leaf)) {
      zip_stat_t st;
      zip_stat_init(&st);
      if (l.is_zip && zip_stat_index(l.archive->zip, l.tree.zip_index.at(rel), 0, &st) == 0) {
        const std::string refusal = zip_size_refusal(st);
        if (!refusal.empty()) {
          skip(f, l.show.file(rel), "too_large", "'" + l.show.file(rel) + "' " + refusal + ".");
          continue;
        }
      }
      out.push_back(rel);
    } else if (!unsupported_image_format(leaf).empty()) {
      skip(f, l.show.file(rel), "unsupported_format",
           "'" + l.show.file(rel) + "' is a " + unsupported_image_format(leaf) +
               " file, which is not read: convert it to JPEG or PNG.");
    } else if (in_folder_named(below(rel, l.root), "images")) {
      skip(f, l.show.file(rel), "not_an_image", "'" + l.show.file(rel) + "' is not a .jpg/.jpeg/.png image.");
    }
  }
  for (const auto& p : l.tree.pending) {
    if (p.reason == "unsafe_zip_entry" || is_under(p.rel, l.root))
      skip(f, l.show.file(p.rel), p.reason, "'" + l.show.file(p.rel) + "' " + p.what + ".");
  }
  return out;
}

// ---- YOLO ----

// The data.yaml or classes.txt that names a YOLO dataset's classes ("" when none).
std::string yolo_names_file(const Listed& l) {
  for (const char* name : {"data.yaml", "data.yml", "classes.txt", "labels/classes.txt", "obj.names"}) {
    if (l.has_file(join(l.root, name))) return join(l.root, name);
  }
  for (const auto& rel : l.tree.files) {
    if (is_under(rel, l.root) && (leaf_of(rel) == "data.yaml" || leaf_of(rel) == "classes.txt")) return rel;
  }
  return "";
}

// The folders data.yaml gives each subset, resolved in the dataset (relative to its `path:` or its own
// folder; Roboflow's "../train/images" read as "train/images" below the yaml).
std::map<std::string, std::string> yaml_subset_folders(const Listed& l, const DataYaml& yaml,
                                                       const std::string& yaml_rel, Found& f) {
  std::map<std::string, std::string> folder_subset;
  std::string base = parent_of(yaml_rel);
  if (!yaml.path.empty() && yaml.path[0] != '/' && yaml.path.find(':') == std::string::npos) {
    std::string with_path;
    if (resolve_relative(base, yaml.path, &with_path) && l.tree.dirs.count(with_path)) base = with_path;
  }
  const std::pair<const char*, const std::vector<std::string>*> keys[] = {
      {"train", &yaml.train}, {"val", &yaml.val}, {"test", &yaml.test}};
  for (const auto& key : keys) {
    for (const std::string& p : *key.second) {
      std::string dir;
      bool found = p.empty() || p[0] == '/' ? false : resolve_relative(base, p, &dir) && l.tree.dirs.count(dir);
      for (std::string q = p; !found && q.compare(0, 3, "../") == 0;) {
        q = q.substr(3);
        found = resolve_relative(base, q, &dir) && l.tree.dirs.count(dir);
      }
      if (found) {
        folder_subset[dir] = key.first;
      } else {
        f.warnings.push_back("'" + l.show.file(yaml_rel) + "' gives " + key.first + ": " + p +
                             ", which is not a folder of the dataset: the folders' own names (train, valid, val, "
                             "test) give the subsets.");
      }
    }
  }
  return folder_subset;
}

void find_yolo(const Listed& l, Found& f) {
  const std::string names_rel = yolo_names_file(l);
  if (names_rel.empty())
    throw Error("'" + l.show.dir(l.root) +
                "' has YOLO label files but no data.yaml or classes.txt naming the classes: add one (one class "
                "name per line in classes.txt, in the order of the class numbers).");
  const std::string names_display = l.show.file(names_rel);
  std::map<std::string, std::string> folder_subset;
  if (leaf_of(names_rel) == "classes.txt" || leaf_of(names_rel) == "obj.names") {
    f.classes = parse_class_names(l.read_text(names_rel), names_display);
  } else {
    const DataYaml yaml = parse_data_yaml(l.read_text(names_rel), names_display);
    f.classes = yaml.names;
    folder_subset = yaml_subset_folders(l, yaml, names_rel, f);
  }
  check_detection_classes(f.classes, names_display);

  std::set<std::string> labels_used;
  for (const std::string& rel : image_files(l, f)) {
    Item item{rel, l.show.file(rel), "", "", {}, 0, 0};
    for (const auto& fs : folder_subset) {
      if (is_under(rel, fs.first)) item.subset = fs.second;
    }
    if (item.subset.empty()) item.subset = subset_of_path(below(rel, l.root));
    const std::string label_rel = yolo_label_of(rel);
    labels_used.insert(label_rel);
    if (!l.has_file(label_rel)) {
      unlabelled(l, f, rel,
                 "has no label file '" + l.show.file(label_rel) +
                     "': left out (label it, or give it an empty label file if it shows no object).");
      continue;
    }
    item.label_display = l.show.file(label_rel);
    try {
      item.boxes = parse_yolo_labels(l.read_text(label_rel), item.label_display, f.classes.size());
    } catch (const Error& e) {
      skip(f, item.label_display, "bad_label", std::string(e.what()) + " ('" + item.display + "' is left out.)");
      continue;
    }
    f.items.push_back(std::move(item));
  }
  for (const auto& rel : l.tree.files) {
    if (!is_under(rel, l.root) || !is_label_txt(below(rel, l.root)) || labels_used.count(rel)) continue;
    skip(f, l.show.file(rel), "no_image",
         "'" + l.show.file(rel) +
             "' labels no photo of the dataset (its photo would be in the images/ folder beside "
             "labels/, with the same name): left out.");
  }
}

// ---- COCO ----

// The COCO JSONs at the top or one folder down, in path order.
std::vector<std::string> coco_files(const Listed& l, size_t limit) {
  std::vector<std::string> out;
  for (const auto& rel : l.tree.files) {
    if (out.size() >= limit) break;
    if (!is_under(rel, l.root) || !ends_with(ascii_lower(rel), ".json")) continue;
    if (components(below(rel, l.root)).size() > 2) continue;
    try {
      if (is_coco_json(l.read_text(rel))) out.push_back(rel);
    } catch (const Error&) {
    }
  }
  return out;
}

// The subset a COCO JSON gives: its folder (train/valid/test), else its name (instances_train2017.json).
std::string coco_subset(const std::string& json_rel) {
  const std::string s = subset_name(leaf_of(parent_of(json_rel)));
  if (!s.empty()) return s;
  const std::string name = ascii_lower(leaf_of(json_rel));
  if (name.find("train") != std::string::npos) return "train";
  if (name.find("val") != std::string::npos) return "val";
  if (name.find("test") != std::string::npos) return "test";
  return "";
}

void find_coco(const Listed& l, Found& f) {
  const std::vector<std::string> jsons = coco_files(l, 64);
  std::vector<std::string> images = image_files(l, f);
  std::map<std::string, std::vector<std::string>> by_leaf;
  for (const auto& rel : images) by_leaf[leaf_of(rel)].push_back(rel);
  std::set<std::string> labelled;
  std::string first_display;
  for (const std::string& json_rel : jsons) {
    const std::string display = l.show.file(json_rel);
    const CocoLabels coco = parse_coco_json(l.read_text(json_rel), display);
    if (first_display.empty()) {
      check_detection_classes(coco.classes, display);
      f.classes = coco.classes;
      first_display = display;
    } else if (coco.classes != f.classes) {
      throw Error("'" + display + "' has other categories than '" + first_display +
                  "': export every part of the dataset with the same classes.");
    }
    for (const auto& w : coco.warnings) f.warnings.push_back(w);
    const std::string dir = parent_of(json_rel);
    for (const CocoImage& im : coco.images) {
      std::string found;
      std::string candidate;
      for (const std::string& base : {dir, join(dir, "images"), l.root, join(l.root, "images")}) {
        if (found.empty() && resolve_relative(base, im.file_name, &candidate) && l.has_file(candidate) &&
            is_image_name(leaf_of(candidate)))
          found = candidate;
      }
      const auto leaf = by_leaf.find(leaf_of(im.file_name));
      if (found.empty() && leaf != by_leaf.end() && leaf->second.size() == 1) found = leaf->second[0];
      if (found.empty()) {
        skip(f, display + ":" + im.file_name, "no_image",
             "'" + display + "' labels '" + im.file_name +
                 "', which is not in the dataset (looked for beside the JSON, in images/ and by its name): left out.");
        continue;
      }
      if (!labelled.insert(found).second) {
        f.warnings.push_back("'" + display + "' labels '" + l.show.file(found) +
                             "' a second time: the first labels are used.");
        continue;
      }
      Item item{found, l.show.file(found), coco_subset(json_rel), display, im.boxes, im.width, im.height};
      f.items.push_back(std::move(item));
    }
  }
  for (const auto& rel : images) {
    if (!labelled.count(rel))
      unlabelled(l, f, rel,
                 "is in no COCO JSON's \"images\": left out (label it, or list it with no annotations if it "
                 "shows no object).");
  }
  std::sort(f.items.begin(), f.items.end(), [](const Item& a, const Item& b) { return a.rel < b.rel; });
}

// ---- Pascal VOC ----

// The .xml files below the root, in path order.
std::vector<std::string> xml_files(const Listed& l) {
  std::vector<std::string> out;
  for (const auto& rel : l.tree.files) {
    if (is_under(rel, l.root) && ends_with(ascii_lower(rel), ".xml")) out.push_back(rel);
  }
  return out;
}

// The photo a VOC annotation names: <filename> or its own name with a photo extension, beside it or in
// the JPEGImages/ folder beside Annotations/.
std::string voc_image_of(const std::string& xml_rel, const VocAnnotation& voc,
                         const std::map<std::string, std::vector<std::string>>& images_in_dir) {
  std::vector<std::string> dirs{parent_of(xml_rel)};
  if (leaf_of(parent_of(xml_rel)) == "Annotations") dirs.push_back(join(parent_of(parent_of(xml_rel)), "JPEGImages"));
  for (const std::string& dir : dirs) {
    const auto it = images_in_dir.find(dir);
    if (it == images_in_dir.end()) continue;
    const std::string wanted = leaf_of(voc.filename);
    for (const auto& leaf : it->second) {
      if (!wanted.empty() && leaf == wanted) return join(dir, leaf);
    }
    for (const auto& leaf : it->second) {
      if (stem_of(leaf) == stem_of(leaf_of(xml_rel))) return join(dir, leaf);
    }
  }
  return "";
}

void find_voc(const Listed& l, Found& f) {
  const std::vector<std::string> images = image_files(l, f);
  std::map<std::string, std::vector<std::string>> images_in_dir;
  for (const auto& rel : images) images_in_dir[parent_of(rel)].push_back(leaf_of(rel));
  struct Parsed {
    std::string rel, image;
    VocAnnotation voc;
  };
  std::vector<Parsed> parsed;
  std::set<std::string> names, labelled;
  for (const std::string& rel : xml_files(l)) {
    const std::string display = l.show.file(rel);
    Parsed p{rel, "", {}};
    try {
      const std::string text = l.read_text(rel);
      if (!is_voc_xml(text)) continue;  // another XML file (a tool's settings): not a label
      p.voc = parse_voc_xml(text, display);
    } catch (const Error& e) {
      skip(f, display, "bad_label", e.what());
      continue;
    }
    p.image = voc_image_of(rel, p.voc, images_in_dir);
    if (p.image.empty()) {
      skip(f, display, "no_image",
           "'" + display + "' labels '" + p.voc.filename +
               "', which is not beside it (nor in JPEGImages/ beside Annotations/): left out.");
      continue;
    }
    if (!labelled.insert(p.image).second) {
      f.warnings.push_back("'" + display + "' labels '" + l.show.file(p.image) +
                           "', which an earlier annotation labels: the first one is used.");
      continue;
    }
    for (const auto& o : p.voc.objects) names.insert(o.name);
    parsed.push_back(std::move(p));
  }
  f.classes.assign(names.begin(), names.end());
  check_detection_classes(f.classes, "the VOC annotations of '" + l.show.dir(l.root) + "'");
  for (const Parsed& p : parsed) {
    const std::string display = l.show.file(p.rel);
    Item item{p.image,     l.show.file(p.image), subset_of_path(below(p.image, l.root)), display, {},
              p.voc.width, p.voc.height};
    try {
      item.boxes = voc_boxes(p.voc, f.classes, display);  // every name is a class: only box problems throw
    } catch (const Error& e) {
      skip(f, display, "bad_label", std::string(e.what()) + " ('" + item.display + "' is left out.)");
      continue;
    }
    f.items.push_back(std::move(item));
  }
  for (const auto& rel : images) {
    if (!labelled.count(rel)) unlabelled(l, f, rel, "has no VOC annotation (.xml) naming it: left out.");
  }
  std::sort(f.items.begin(), f.items.end(), [](const Item& a, const Item& b) { return a.rel < b.rel; });
}

DetectionFormat format_of(const Listed& l) {
  for (const auto& rel : l.tree.files) {
    if (!is_under(rel, l.root)) continue;
    const std::string in_root = below(rel, l.root);
    if (in_root == "data.yaml" || in_root == "data.yml" || in_root == "obj.names" || is_label_txt(in_root))
      return DetectionFormat::Yolo;
  }
  if (!coco_files(l, 1).empty()) return DetectionFormat::Coco;
  for (const auto& rel : xml_files(l)) {
    const bool in_annotations = leaf_of(parent_of(rel)) == "Annotations";
    bool beside_image = false;
    for (const char* ext : {".jpg", ".jpeg", ".png", ".JPG", ".JPEG", ".PNG"})
      beside_image = beside_image || l.has_file(join(parent_of(rel), stem_of(leaf_of(rel)) + ext));
    if (!in_annotations && !beside_image) continue;
    try {
      if (is_voc_xml(l.read_text(rel))) return DetectionFormat::Voc;
    } catch (const Error&) {
    }
  }
  return DetectionFormat::None;
}

void check_detection_options(const DetectionOptions& o, const std::string& source) {
  if (o.channels != 1 && o.channels != 3)
    throw Error("cannot load '" + source + "' with " + std::to_string(o.channels) +
                " channels: the model input must have 1 (gray) or 3 (colour) channels.");
  if (o.height < 1 || o.width < 1 || o.height > 4096 || o.width > 4096)
    throw Error("cannot load '" + source + "' at " + std::to_string(o.height) + "x" + std::to_string(o.width) +
                ": the input size must be 1..4096 per side.");
  if (o.threads < 0) throw Error("cannot load '" + source + "' with " + std::to_string(o.threads) + " threads.");
}

// The stored photo's size (before its EXIF orientation) of a decoded input.
void stored_size(const InputImage& in, const std::vector<uint8_t>& bytes, const std::string& name, int* w, int* h) {
  if (in.scale_denom > 1) {
    const JpegHeader header = read_jpeg_header(bytes.data(), bytes.size(), name);
    *w = header.width;
    *h = header.height;
    return;
  }
  const bool swapped = in.orientation >= 5 && in.orientation <= 8;
  *w = swapped ? in.image.height : in.image.width;
  *h = swapped ? in.image.width : in.image.height;
}

}  // namespace

WholePhoto decode_whole_photo(const std::vector<uint8_t>& bytes, const std::string& name, int height, int width,
                              tv::ChannelOrder order, uint64_t decode_budget_bytes, uint8_t* dst) {
  const InputImage in = decode_for_input(bytes.data(), bytes.size(), name, width, height, decode_budget_bytes);
  WholePhoto photo;
  stored_size(in, bytes, name, &photo.stored_width, &photo.stored_height);
  std::vector<uint16_t> lut((size_t)width + (size_t)height);
  if (!tv::resize_nearest(in.image.pixels.data(), in.image.width, in.image.height, in.image.channels, dst, width,
                          height, order, lut.data()))
    throw Error("'" + name + "' could not be resized to " + std::to_string(width) + "x" + std::to_string(height) + ".");
  photo.orientation = in.orientation;
  const bool swapped = in.orientation >= 5 && in.orientation <= 8;
  photo.width = swapped ? photo.stored_height : photo.stored_width;
  photo.height = swapped ? photo.stored_width : photo.stored_height;
  return photo;
}

WholePhoto read_whole_photo(const std::string& path, int height, int width, tv::ChannelOrder order, uint8_t* dst) {
  return decode_whole_photo(read_image_file(path), path, height, width, order, 0, dst);
}

const char* detection_format_name(DetectionFormat format) {
  switch (format) {
    case DetectionFormat::Yolo: return "yolo";
    case DetectionFormat::Coco: return "coco";
    case DetectionFormat::Voc: return "voc";
    case DetectionFormat::None: break;
  }
  return "";
}

DetectionFormat detection_format(const std::string& path) {
  try {
    return format_of(list_source(path));
  } catch (const std::exception&) {
    return DetectionFormat::None;
  }
}

bool looks_like_detection_dataset(const std::string& path) {
  return detection_format(path) != DetectionFormat::None;
}

size_t DetectionDataset::object_count() const {
  size_t n = 0;
  for (const auto& b : boxes) n += b.size();
  return n;
}

size_t DetectionDataset::subset_count(const std::string& subset) const {
  return (size_t)std::count(subsets.begin(), subsets.end(), subset);
}

DetectionDataset load_detection_dataset(const DetectionOptions& options) {
  const Listed l = list_source(options.path);
  check_detection_options(options, l.source);
  const DetectionFormat format = format_of(l);
  Found f;
  f.keep_unlabelled = options.keep_unlabelled;
  switch (format) {
    case DetectionFormat::Yolo: find_yolo(l, f); break;
    case DetectionFormat::Coco: find_coco(l, f); break;
    case DetectionFormat::Voc: find_voc(l, f); break;
    case DetectionFormat::None:
      throw Error("'" + l.source +
                  "' is not a detection dataset: it has no labels/ folder or data.yaml (YOLO), no COCO JSON and no "
                  "Pascal VOC .xml annotations.");
  }
  DetectionDataset ds;
  ds.source = l.source;
  ds.format = detection_format_name(format);
  ds.classes = f.classes;
  ds.warnings = f.warnings;
  if (f.unlabelled_kept)
    ds.warnings.push_back(std::to_string(f.unlabelled_kept) +
                          " photo(s) without a label file are kept as photos with no objects.");
  ds.ignored_junk = l.tree.junk;
  ds.height = options.height;
  ds.width = options.width;
  ds.channels = options.channels;
  ds.order = options.channels == 1 ? tv::ChannelOrder::GRAY : options.order;

  // Each photo decoded into its own slot, so the result does not depend on the number of threads.
  const size_t n = f.items.size();
  const size_t image_bytes = ds.image_bytes();
  std::vector<uint8_t> pixels(n * image_bytes);
  std::vector<std::string> failure(n), failure_reason(n);
  std::vector<int> orientation(n, 1), upright_w(n, 0), upright_h(n, 0);
  const int threads = options.threads == 0 ? (int)std::max(1u, std::thread::hardware_concurrency()) : options.threads;
  for_each_run(n, threads, [&](int, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const Item& item = f.items[i];
      try {
        const std::vector<uint8_t> bytes = l.read(item.rel, kMaxImageFileBytes);
        const WholePhoto photo = decode_whole_photo(bytes, item.display, ds.height, ds.width, ds.order,
                                                    options.decode_budget_bytes, pixels.data() + i * image_bytes);
        if (item.expect_w && (photo.stored_width != item.expect_w || photo.stored_height != item.expect_h)) {
          failure_reason[i] = "size_mismatch";
          failure[i] = "'" + item.display + "' is " + std::to_string(photo.stored_width) + "x" +
                       std::to_string(photo.stored_height) + " pixels but '" + item.label_display + "' gives it as " +
                       std::to_string(item.expect_w) + "x" + std::to_string(item.expect_h) +
                       ": its boxes would land in the wrong place; export the labels again with this photo.";
          continue;
        }
        orientation[i] = photo.orientation;
        upright_w[i] = photo.width;
        upright_h[i] = photo.height;
      } catch (const std::bad_alloc&) {
        failure_reason[i] = "unreadable";
        failure[i] = "'" + item.display + "' needs more memory to decode than is available.";
      } catch (const std::exception& e) {
        failure_reason[i] = "unreadable";
        failure[i] = e.what();
      }
    }
  });

  size_t kept = 0;
  ds.skipped = f.skipped;
  for (size_t i = 0; i < n; ++i) {
    const Item& item = f.items[i];
    if (!failure[i].empty()) {
      ds.skipped.push_back({item.display, failure_reason[i], failure[i]});
      continue;
    }
    if (kept != i) std::copy_n(pixels.data() + i * image_bytes, image_bytes, pixels.data() + kept * image_bytes);
    ds.paths.push_back(item.display);
    ds.subsets.push_back(item.subset);
    std::vector<DetectionBox> upright;
    for (const DetectionBox& b : item.boxes) upright.push_back(orient_box(b, orientation[i]));
    ds.boxes.push_back(std::move(upright));
    ds.photo_width.push_back(upright_w[i]);
    ds.photo_height.push_back(upright_h[i]);
    ds.exif_rotated += orientation[i] > 1 ? 1 : 0;
    ++kept;
  }
  pixels.resize(kept * image_bytes);
  ds.pixels = std::move(pixels);
  std::stable_sort(ds.skipped.begin(), ds.skipped.end(),
                   [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  if (kept == 0) {
    const std::string first = ds.skipped.empty() ? std::string() : " The first problem: " + ds.skipped[0].message;
    throw Error("no photo of the detection dataset '" + l.source + "' could be used (" + std::to_string(n) +
                " labelled, " + std::to_string(ds.skipped.size()) + " file(s) left out)." + first);
  }
  return ds;
}

}  // namespace tvh
