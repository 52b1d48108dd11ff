#include "host/photos/layout_check.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "host/base/error.h"
#include "host/base/text.h"
#include "host/photos/image.h"

namespace tvh {

namespace {

namespace fs = std::filesystem;

// The quoted, comma-separated names ("'2024', '2025', 'DCIM'"), at most `max` of them.
std::string quoted(const std::vector<std::string>& names, size_t max = 8) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > max) s += " and " + std::to_string(names.size() - max) + " more";
  return s;
}

// "a,b,c": the form --classes takes.
std::string comma_list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// The path a user would type for `rel` below the dataset folder (folders only; zips have none).
std::string below(const DatasetListing& l, const std::string& rel) {
  return l.source + "/" + rel;
}

// The sub-folders (first path component below the class folder) that hold images of class `c`.
std::vector<std::string> image_subfolders(const DatasetListing& l, int c) {
  const std::string prefix = (l.root.empty() ? "" : l.root + "/") + l.classes[(size_t)c] + "/";
  std::set<std::string> subs;
  for (const auto& e : l.images) {
    if (e.label != c || e.rel.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = e.rel.substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash != std::string::npos) subs.insert(rest.substr(0, slash));
  }
  return {subs.begin(), subs.end()};
}

// The images lying directly in the folder that holds the class folders (left out as outside them).
size_t loose_images(const DatasetListing& l) {
  const std::string prefix = l.is_zip ? l.source + ":" + (l.root.empty() ? "" : l.root + "/")
                                      : l.source + "/" + (l.root.empty() ? "" : l.root + "/");
  size_t n = 0;
  for (const auto& s : l.skipped) {
    if (s.reason != "outside_class_folders" || s.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string leaf = s.path.substr(prefix.size());
    if (leaf.find('/') == std::string::npos && is_image_name(leaf)) ++n;
  }
  return n;
}

// "did you mean PARENT?" when the dataset folder has sibling folders (it is then likely one class of
// its parent), else "".
std::string parent_suggestion(const DatasetListing& l) {
  if (l.is_zip || !l.root.empty()) return "";
  std::error_code ec;
  // Lexically, as the user sees the path ("." and ".." resolved, links not).
  fs::path self = fs::absolute(l.source, ec).lexically_normal();
  if (self.filename().empty()) self = self.parent_path();  // "/a/b/" (from ".") names b
  if (ec || !self.has_parent_path() || self.filename().empty()) return "";
  std::vector<std::string> siblings;
  for (fs::directory_iterator it(self.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] != '.' && it->is_directory(ec) && name != self.filename().string())
      siblings.push_back(name);
  }
  if (siblings.empty()) return "";
  std::sort(siblings.begin(), siblings.end());
  std::string shown = (fs::path(l.source) / "..").lexically_normal().string();
  while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
  return " Did you mean the folder above it, '" + (shown.empty() ? std::string(".") : shown) + "' ('" +
         self.filename().string() + "' looks like one class folder beside " + quoted(siblings, 4) + ")?";
}

}  // namespace

bool looks_like_photo_library_folder(const std::string& name) {
  static const std::regex dated("^(19|20)[0-9]{2}([-_. ]?[01][0-9]([-_. ]?[0-3][0-9])?)?$");
  static const std::regex dcf("^[1-9][0-9]{2}[A-Z0-9_]{5}$");  // DCF (upper case): 100APPLE, 101_PANA
  static const std::set<std::string> library = {"dcim",
                                                "camera",
                                                "camera roll",
                                                "screenshots",
                                                "screen recordings",
                                                "whatsapp images",
                                                "whatsapp",
                                                "telegram images",
                                                "instagram",
                                                "pictures",
                                                "photos",
                                                "download",
                                                "downloads",
                                                "burst",
                                                "recents",
                                                "favorites",
                                                "favourites",
                                                "selfies",
                                                "panoramas",
                                                "live photos",
                                                "videos",
                                                "movies",
                                                "snapchat",
                                                "messenger",
                                                "facebook",
                                                "twitter",
                                                "saved pictures",
                                                "imported",
                                                "icloud photos",
                                                "google photos",
                                                "photos from",
                                                "edited",
                                                "camera uploads",
                                                "thumbnails",
                                                "portrait",
                                                "raw"};
  return std::regex_match(name, dated) || std::regex_match(name, dcf) || library.count(ascii_lower(name)) > 0;
}

std::vector<std::string> check_layout(const DatasetListing& l, const LayoutCheck& check) {
  std::vector<std::string> warnings;
  const size_t k = l.classes.size();
  const std::string where = l.is_zip ? l.source : "'" + l.source + "'";
  // The parent of a dataset: one class folder, its images in sub-folders that look like classes.
  if (check.needs_classes && k == 1) {
    const std::vector<std::string> subs = image_subfolders(l, 0);
    const std::string inner = (l.root.empty() ? "" : l.root + "/") + l.classes[0];
    if (subs.size() >= 2)
      throw Error(where + " holds one folder with images, '" + l.classes[0] + "', and its sub-folders " + quoted(subs) +
                  " hold the images: did you mean " + (l.is_zip ? "its folder '" + inner + "'" : below(l, inner)) +
                  "? Point the tool at the folder whose sub-folders are the classes.");
    throw Error(where + " has one class folder, '" + l.classes[0] +
                "': training needs at least two (one sub-folder of images per class)." + parent_suggestion(l));
  }
  // Class folders named like a photo library's.
  std::vector<std::string> library;
  for (const auto& c : l.classes)
    if (looks_like_photo_library_folder(c)) library.push_back(c);
  std::vector<size_t> counts(k, 0);
  for (const auto& e : l.images) ++counts[(size_t)e.label];
  const size_t total = l.images.size();
  const size_t big = k ? (size_t)(std::max_element(counts.begin(), counts.end()) - counts.begin()) : 0;
  const std::string most =
      k >= 2 && total && counts[big] * 3 >= total * 2
          ? "; '" + l.classes[big] + "' holds " + std::to_string(counts[big] * 100 / total) + " % of the images"
          : "";
  if (k >= 2 && library.size() == k && !check.classes_given)
    throw Error(where + ": the class folders " + quoted(library) +
                " are named like a photo library's years, months or camera folders, not like classes" + most +
                ": this looks like one class's folder or a phone's photo library." + parent_suggestion(l) +
                " If these really are your classes, name them with --classes " + comma_list(library) + ".");
  if (!library.empty() && library.size() < k)
    warnings.push_back("the class folder" + std::string(library.size() == 1 ? " " : "s ") + quoted(library) +
                       (library.size() == 1 ? " is" : " are") +
                       " named like a photo library's year, month or camera folder: check that the dataset path is "
                       "the folder whose sub-folders are the classes (" +
                       where + ").");
  const size_t loose = loose_images(l);
  if (loose && k >= 1)
    warnings.push_back(std::to_string(loose) + " image" + (loose == 1 ? " lies" : "s lie") + " directly in " +
                       (l.root.empty() ? where : "'" + below(l, l.root) + "'") + " beside the class folders " +
                       quoted(l.classes, 4) + " and " + (loose == 1 ? "is" : "are") +
                       " not used: if that folder is one class, point the tool at the folder above it." +
                       (library.empty() ? "" : parent_suggestion(l)));
  return warnings;
}

}  // namespace tvh
