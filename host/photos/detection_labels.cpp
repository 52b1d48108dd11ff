#include "host/photos/detection_labels.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <set>

#include "host/base/error.h"
#include "tv/names.h"

namespace tvh {
namespace {

using json = nlohmann::json;

// The whitespace-separated fields of one line.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace((unsigned char)line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !std::isspace((unsigned char)line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// `text` cut into lines ("\n", "\r\n" or "\r" ends a line).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r') {
      out.push_back(line);
      line.clear();
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      line += c;
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

std::string trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace((unsigned char)s[b])) ++b;
  while (e > b && std::isspace((unsigned char)s[e - 1])) --e;
  return s.substr(b, e - b);
}

// A whole field as a finite number (locale-independent); false otherwise.
bool finite_number(const std::string& field, double* out) {
  const char* first = field.data();
  const char* last = first + field.size();
  if (first != last && *first == '+' && (first + 1 == last || first[1] != '-')) ++first;
  double v = 0;
  const auto r = std::from_chars(first, last, v);
  if (r.ec != std::errc() || r.ptr != last || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// A whole field as an integer (an optional '-' then digits); false otherwise or out of range.
bool integer_field(const std::string& field, long long* out) {
  long long v = 0;
  const auto r = std::from_chars(field.data(), field.data() + field.size(), v);
  if (r.ec != std::errc() || r.ptr != field.data() + field.size()) return false;
  *out = v;
  return true;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The box from its normalised corners, an overshoot past the photo's edge up to kBoxEdgeTolerance
// clipped; "" or why it cannot be a box.
std::string box_from_corners(double x0, double y0, double x1, double y1, int label, DetectionBox* box) {
  if (!(x1 > x0) || !(y1 > y0)) return "the box has no area (its right or bottom edge is not past its left or top)";
  const double tol = kBoxEdgeTolerance;
  if (x0 < -tol || y0 < -tol || x1 > 1.0 + tol || y1 > 1.0 + tol) {
    return "the box reaches past the photo's edge (from " + number_text(x0) + "," + number_text(y0) + " to " +
           number_text(x1) + "," + number_text(y1) + " of its width and height; more than " + number_text(tol) +
           " past it is refused)";
  }
  x0 = std::max(0.0, x0);
  y0 = std::max(0.0, y0);
  x1 = std::min(1.0, x1);
  y1 = std::min(1.0, y1);
  if (!(x1 > x0) || !(y1 > y0)) return "the box lies outside the photo";
  box->label = label;
  box->cx = (float)((x0 + x1) / 2);
  box->cy = (float)((y0 + y1) / 2);
  box->w = (float)(x1 - x0);
  box->h = (float)(y1 - y0);
  return "";
}

// One YOLO line's box; "" or why not.
std::string yolo_line_box(const std::vector<std::string>& f, size_t num_classes, DetectionBox* box) {
  if (f.size() >= 7 && f.size() % 2 == 1)
    return "it is a segmentation label (a class and " + std::to_string((f.size() - 1) / 2) +
           " polygon points), not a box: export the dataset in YOLO detection format (class cx cy w h)";
  if (f.size() != 5)
    return "it has " + std::to_string(f.size()) +
           " fields where a YOLO box has 5 (class cx cy w h): write one object per line";
  long long cls = 0;
  if (!integer_field(f[0], &cls))
    return "the class '" + f[0] + "' is not a whole number: write the class number (0 for the first name)";
  if (cls < 0 || (unsigned long long)cls >= num_classes)
    return "class " + f[0] + " is not one of the " + std::to_string(num_classes) + " class names (0.." +
           std::to_string((long long)num_classes - 1) + "): fix the number or add its name to data.yaml or classes.txt";
  double v[4];
  static const char* const kNames[4] = {"cx", "cy", "w", "h"};
  for (int k = 0; k < 4; ++k) {
    if (!finite_number(f[(size_t)k + 1], &v[k]))
      return std::string(kNames[k]) + " '" + f[(size_t)k + 1] + "' is not a finite number";
  }
  for (int k = 0; k < 2; ++k) {
    if (v[k] < 0 || v[k] > 1)
      return std::string(kNames[k]) + " " + f[(size_t)k + 1] +
             " is outside 0..1: YOLO coordinates are fractions of the photo's size (divide pixels by it)";
  }
  for (int k = 2; k < 4; ++k) {
    if (v[k] <= 0 || v[k] > 1)
      return std::string(kNames[k]) + " " + f[(size_t)k + 1] +
             " is not in (0, 1]: a box's size is a fraction of the photo's size, above 0";
  }
  return box_from_corners(v[0] - v[2] / 2, v[1] - v[3] / 2, v[0] + v[2] / 2, v[1] + v[3] / 2, (int)cls, box);
}

// The strings of a data.yaml path key: one string, or a list of strings.
std::vector<std::string> yaml_paths(const YAML::Node& node, const char* key, const std::string& display) {
  std::vector<std::string> out;
  if (!node || node.IsNull()) return out;
  if (node.IsScalar()) {
    out.push_back(node.Scalar());
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar())
        throw Error("'" + display + "': the `" + key + "` list holds something that is not a path: give folder paths.");
      out.push_back(item.Scalar());
    }
  } else {
    throw Error("'" + display + "': `" + key + "` is neither a path nor a list of paths.");
  }
  return out;
}

std::vector<std::string> yaml_names(const YAML::Node& names, const std::string& display) {
  std::vector<std::string> out;
  if (names.IsSequence()) {
    for (const auto& item : names) {
      if (!item.IsScalar())
        throw Error("'" + display + "': a name in the `names` list is not text: give one name per class.");
      out.push_back(item.Scalar());
    }
    return out;
  }
  if (!names.IsMap()) throw Error("'" + display + "': `names` is neither a list nor a map of class numbers to names.");
  std::map<long long, std::string> by_number;
  for (const auto& kv : names) {
    long long k = 0;
    if (!kv.first.IsScalar() || !integer_field(kv.first.Scalar(), &k) || k < 0)
      throw Error("'" + display + "': the `names` map has the key '" +
                  (kv.first.IsScalar() ? kv.first.Scalar() : std::string("?")) +
                  "', which is not a class number: write `0: name`, `1: name`, ...");
    if (!kv.second.IsScalar())
      throw Error("'" + display + "': the name of class " + std::to_string(k) + " in `names` is not text.");
    if (!by_number.emplace(k, kv.second.Scalar()).second)
      throw Error("'" + display + "': `names` gives class " + std::to_string(k) + " twice.");
  }
  long long expect = 0;
  for (const auto& kv : by_number) {
    if (kv.first != expect)
      throw Error("'" + display + "': `names` has no class " + std::to_string(expect) +
                  ": number the classes 0, 1, 2, ... without gaps.");
    out.push_back(kv.second);
    ++expect;
  }
  return out;
}

// Integers of a JSON entry (a number with no fraction); false otherwise.
bool json_integer(const json& j, int64_t* out) {
  if (j.is_number_integer()) {
    *out = j.get<int64_t>();
    return true;
  }
  if (j.is_number_float()) {
    const double d = j.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      *out = (int64_t)d;
      return true;
    }
  }
  return false;
}

// A required integer member of a COCO entry; throws naming it.
int64_t coco_integer(const json& entry, const char* key, const std::string& where, const std::string& display) {
  int64_t v = 0;
  if (!entry.is_object() || !entry.contains(key) || !json_integer(entry[key], &v))
    throw Error("'" + display + "': " + where + " has no whole-number \"" + key +
                "\": export the dataset again in COCO format.");
  return v;
}

const json& coco_array(const json& doc, const char* key, const std::string& display) {
  if (!doc.contains(key) || !doc[key].is_array())
    throw Error("'" + display + "' has no \"" + key + "\" array: it is not a COCO object-detection JSON.");
  return doc[key];
}

// A positive pixel size as text; throws naming the file and what holds it.
int positive_size(const std::string& text, const char* what, const std::string& display) {
  double d = 0;
  const std::string t = trimmed(text);
  if (finite_number(t, &d) && d == std::floor(d) && d > 0 && d <= 1000000) return (int)d;
  throw Error("'" + display + "' gives the photo's " + what + " as '" + t +
              "': it must be a positive number of pixels; fix <size> or export the annotation again.");
}

}  // namespace

std::vector<DetectionBox> parse_yolo_labels(const std::string& text, const std::string& display, size_t num_classes) {
  std::vector<DetectionBox> boxes;
  const std::vector<std::string> lines = lines_of(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::vector<std::string> f = fields_of(lines[n]);
    if (f.empty()) continue;
    DetectionBox box;
    const std::string why = yolo_line_box(f, num_classes, &box);
    if (!why.empty()) throw Error("'" + display + "' line " + std::to_string(n + 1) + ": " + why + ".");
    boxes.push_back(box);
  }
  return boxes;
}

DataYaml parse_data_yaml(const std::string& text, const std::string& display) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error("'" + display + "' line " + std::to_string(e.mark.line + 1) + " is not valid YAML (" + e.msg +
                "): fix it or export the dataset again.");
  }
  if (!doc.IsMap())
    throw Error("'" + display + "' is not a YAML map with a `names:` key: it is not an Ultralytics data.yaml.");
  DataYaml out;
  try {
    const YAML::Node names = doc["names"];
    if (!names || names.IsNull())
      throw Error("'" + display + "' has no `names:` key: list the class names (names: [cat, dog]).");
    out.names = yaml_names(names, display);
    const YAML::Node nc = doc["nc"];
    if (nc && !nc.IsNull()) {
      long long n = 0;
      if (!nc.IsScalar() || !integer_field(nc.Scalar(), &n))
        throw Error("'" + display + "': `nc` is not a whole number.");
      if (n != (long long)out.names.size())
        throw Error("'" + display + "' says nc: " + std::to_string(n) + " but names " +
                    std::to_string(out.names.size()) + " classes: make them agree.");
    }
    const YAML::Node path = doc["path"];
    if (path && path.IsScalar()) out.path = path.Scalar();
    out.train = yaml_paths(doc["train"], "train", display);
    out.val = yaml_paths(doc["val"], "val", display);
    out.test = yaml_paths(doc["test"], "test", display);
  } catch (const YAML::Exception& e) {
    throw Error("'" + display + "' line " + std::to_string(e.mark.line + 1) + " cannot be read (" + e.msg + ").");
  }
  return out;
}

std::vector<std::string> parse_class_names(const std::string& text, const std::string& display) {
  std::vector<std::string> lines = lines_of(text);
  while (!lines.empty() && trimmed(lines.back()).empty()) lines.pop_back();
  std::vector<std::string> names;
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string name = trimmed(lines[n]);
    if (name.empty())
      throw Error("'" + display + "' line " + std::to_string(n + 1) +
                  " is blank between class names: it would shift every class number after it; remove it.");
    names.push_back(name);
  }
  return names;
}

void check_detection_classes(const std::vector<std::string>& classes, const std::string& display) {
  if (classes.empty()) throw Error("'" + display + "' names no object class: give at least one class name.");
  if (classes.size() > (size_t)tv::kBoardMaxClasses)
    throw Error("'" + display + "' names " + std::to_string(classes.size()) +
                " object classes; the board keeps at most " + std::to_string(tv::kBoardMaxClasses) +
                ": merge or leave out classes.");
  std::set<std::string> seen;
  for (const auto& name : classes) {
    if (!tv::name_allowed(name.data(), name.size(), (size_t)tv::kMaxClassNameBytes))
      throw Error("'" + display + "' names the class '" + name + "', which cannot name a class: " + tv::kClassNameRule +
                  "; rename it.");
    if (!seen.insert(name).second)
      throw Error("'" + display + "' names the class '" + name + "' twice: give each class one name.");
  }
}

bool is_coco_json(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return false;
  for (const char* key : {"images", "annotations", "categories"}) {
    if (!doc.contains(key) || !doc[key].is_array()) return false;
  }
  return true;
}

CocoLabels parse_coco_json(const std::string& text, const std::string& display) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error("'" + display + "' is not valid JSON (" + e.what() + "): export it again.");
  }
  if (!doc.is_object()) throw Error("'" + display + "' is not a JSON object: it is not a COCO object-detection JSON.");
  const json& images = coco_array(doc, "images", display);
  const json& annotations = coco_array(doc, "annotations", display);
  const json& categories = coco_array(doc, "categories", display);
  CocoLabels out;

  // Categories: by id, with their supercategory; the used ones become classes.
  struct Category {
    std::string name, super;
  };
  std::map<int64_t, Category> by_id;
  for (size_t k = 0; k < categories.size(); ++k) {
    const json& c = categories[k];
    const int64_t id = coco_integer(c, "id", "category " + std::to_string(k + 1), display);
    if (!c.contains("name") || !c["name"].is_string())
      throw Error("'" + display + "': category " + std::to_string(id) + " has no name: give every category a name.");
    Category cat{c["name"].get<std::string>(), ""};
    if (c.contains("supercategory") && c["supercategory"].is_string())
      cat.super = c["supercategory"].get<std::string>();
    if (!by_id.emplace(id, cat).second)
      throw Error("'" + display + "' has category id " + std::to_string(id) + " twice: give each category its own id.");
  }
  std::set<int64_t> used;
  for (size_t k = 0; k < annotations.size(); ++k) {
    const std::string where = "annotation " + std::to_string(k + 1);
    const int64_t cat = coco_integer(annotations[k], "category_id", where, display);
    if (!by_id.count(cat))
      throw Error("'" + display + "': " + where + " has category_id " + std::to_string(cat) +
                  ", which is not in \"categories\": export the dataset again.");
    used.insert(cat);
  }
  std::set<std::string> supers;
  for (const auto& kv : by_id) {
    if (!kv.second.super.empty() && kv.second.super != kv.second.name) supers.insert(kv.second.super);
  }
  std::map<int64_t, int> label_of;
  for (const auto& kv : by_id) {
    if (!used.count(kv.first) && supers.count(kv.second.name)) continue;  // a parent, not a class (Roboflow's 0)
    label_of[kv.first] = (int)out.classes.size();
    out.classes.push_back(kv.second.name);
  }

  std::map<int64_t, size_t> image_of;
  for (size_t k = 0; k < images.size(); ++k) {
    const json& im = images[k];
    const std::string where = "image " + std::to_string(k + 1);
    CocoImage ci;
    ci.id = coco_integer(im, "id", where, display);
    if (!im.contains("file_name") || !im["file_name"].is_string() || im["file_name"].get<std::string>().empty())
      throw Error("'" + display + "': image id " + std::to_string(ci.id) + " has no file_name.");
    ci.file_name = im["file_name"].get<std::string>();
    const int64_t w = coco_integer(im, "width", "image '" + ci.file_name + "'", display);
    const int64_t h = coco_integer(im, "height", "image '" + ci.file_name + "'", display);
    if (w < 1 || h < 1 || w > 1000000 || h > 1000000)
      throw Error("'" + display + "': image '" + ci.file_name + "' has the size " + std::to_string(w) + "x" +
                  std::to_string(h) + ": a photo's width and height must be positive pixel counts.");
    ci.width = (int)w;
    ci.height = (int)h;
    if (!image_of.emplace(ci.id, out.images.size()).second)
      throw Error("'" + display + "' has image id " + std::to_string(ci.id) + " twice: give each image its own id.");
    out.images.push_back(std::move(ci));
  }

  size_t crowd = 0;
  for (size_t k = 0; k < annotations.size(); ++k) {
    const json& a = annotations[k];
    std::string where = "annotation " + std::to_string(k + 1);
    int64_t ann_id = 0;
    if (a.contains("id") && json_integer(a["id"], &ann_id)) where += " (id " + std::to_string(ann_id) + ")";
    const int64_t image_id = coco_integer(a, "image_id", where, display);
    const auto it = image_of.find(image_id);
    if (it == image_of.end())
      throw Error("'" + display + "': " + where + " is for image_id " + std::to_string(image_id) +
                  ", which is not in \"images\": export the dataset again.");
    int64_t is_crowd = 0;
    if (a.contains("iscrowd") && json_integer(a["iscrowd"], &is_crowd) && is_crowd != 0) {
      ++crowd;
      continue;
    }
    CocoImage& im = out.images[it->second];
    if (!a.contains("bbox") || !a["bbox"].is_array() || a["bbox"].size() != 4)
      throw Error("'" + display + "': " + where + " of '" + im.file_name +
                  "' has no \"bbox\" of 4 numbers [x, y, width, height]: export the dataset again.");
    double b[4];
    for (size_t q = 0; q < 4; ++q) {
      const json& v = a["bbox"][q];
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        throw Error("'" + display + "': " + where + " of '" + im.file_name +
                    "' has a bbox value that is not a finite number.");
      b[q] = v.get<double>();
    }
    DetectionBox box;
    const int label = label_of.at(coco_integer(a, "category_id", where, display));
    const std::string why = box_from_corners(b[0] / im.width, b[1] / im.height, (b[0] + b[2]) / im.width,
                                             (b[1] + b[3]) / im.height, label, &box);
    if (!why.empty())
      throw Error("'" + display + "': " + where + " of '" + im.file_name + "' (" + std::to_string(im.width) + "x" +
                  std::to_string(im.height) + " pixels): " + why + "; fix or delete the annotation.");
    im.boxes.push_back(box);
  }
  if (crowd)
    out.warnings.push_back(
        "'" + display + "': " + std::to_string(crowd) +
        " crowd annotation(s) (iscrowd 1, a region of many objects with no single centre) left out.");
  return out;
}

bool is_voc_xml(const std::string& text) {
  pugi::xml_document doc;
  if (!doc.load_buffer(text.data(), text.size())) return false;
  return std::string(doc.document_element().name()) == "annotation";
}

VocAnnotation parse_voc_xml(const std::string& text, const std::string& display) {
  pugi::xml_document doc;
  const pugi::xml_parse_result r = doc.load_buffer(text.data(), text.size());
  if (!r)
    throw Error("'" + display + "' is not valid XML (" + r.description() + " at byte " + std::to_string(r.offset) +
                "): export the annotation again.");
  const pugi::xml_node root = doc.document_element();
  if (std::string(root.name()) != "annotation")
    throw Error("'" + display + "' has no <annotation> root element: it is not a Pascal VOC annotation.");
  VocAnnotation out;
  out.filename = trimmed(root.child_value("filename"));
  const pugi::xml_node size = root.child("size");
  if (!size) throw Error("'" + display + "' has no <size>: give the photo's <width> and <height>.");
  out.width = positive_size(size.child_value("width"), "width", display);
  out.height = positive_size(size.child_value("height"), "height", display);
  int n = 0;
  for (const pugi::xml_node obj : root.children("object")) {
    ++n;
    VocAnnotation::Object o;
    o.name = trimmed(obj.child_value("name"));
    if (o.name.empty())
      throw Error("'" + display + "': object " + std::to_string(n) + " has no <name>: give its class name.");
    const pugi::xml_node bb = obj.child("bndbox");
    if (!bb) throw Error("'" + display + "': object " + std::to_string(n) + " ('" + o.name + "') has no <bndbox>.");
    static const char* const kCorners[4] = {"xmin", "ymin", "xmax", "ymax"};
    double* dst[4] = {&o.xmin, &o.ymin, &o.xmax, &o.ymax};
    for (int k = 0; k < 4; ++k) {
      const std::string t = trimmed(bb.child_value(kCorners[k]));
      double v = 0;
      if (!finite_number(t, &v))
        throw Error("'" + display + "': object " + std::to_string(n) + " ('" + o.name + "') has <" + kCorners[k] +
                    "> '" + t + "', which is not a finite number of pixels.");
      *dst[k] = v;
    }
    out.objects.push_back(o);
  }
  return out;
}

std::vector<DetectionBox> voc_boxes(const VocAnnotation& voc, const std::vector<std::string>& classes,
                                    const std::string& display) {
  std::vector<DetectionBox> boxes;
  for (size_t k = 0; k < voc.objects.size(); ++k) {
    const auto& o = voc.objects[k];
    const auto it = std::find(classes.begin(), classes.end(), o.name);
    if (it == classes.end())
      throw Error("'" + display + "': object " + std::to_string(k + 1) + " is of class '" + o.name +
                  "', which is not one of the dataset's classes.");
    DetectionBox box;
    const std::string why = box_from_corners(o.xmin / voc.width, o.ymin / voc.height, o.xmax / voc.width,
                                             o.ymax / voc.height, (int)(it - classes.begin()), &box);
    if (!why.empty())
      throw Error("'" + display + "': object " + std::to_string(k + 1) + " ('" + o.name + "', in a " +
                  std::to_string(voc.width) + "x" + std::to_string(voc.height) + " photo): " + why +
                  "; fix or delete the object.");
    boxes.push_back(box);
  }
  return boxes;
}

}  // namespace tvh
