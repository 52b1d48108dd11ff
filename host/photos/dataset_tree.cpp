#include "host/photos/dataset_tree.h"

#include <errno.h>
#include <sys/stat.h>

#include <algorithm>

#include "host/base/error.h"
#include "host/photos/image.h"

namespace tvh {
namespace dataset_tree {

namespace fs = std::filesystem;

std::string parent_of(const std::string& rel) {
  const size_t slash = rel.find_last_of('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

std::string leaf_of(const std::string& rel) {
  const size_t slash = rel.find_last_of('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// True when `rel` is `dir` itself or lies below it ("" is the root: everything lies below it).
bool is_under(const std::string& rel, const std::string& dir) {
  if (dir.empty()) return true;
  return rel.size() > dir.size() && rel.compare(0, dir.size(), dir) == 0 && rel[dir.size()] == '/';
}

// OS junk: hidden names (.DS_Store, AppleDouble ._x, .git...), Windows' Thumbs.db/desktop.ini and
// recycle bins, macOS' __MACOSX archive folder and Icon\r files.
bool is_os_junk(const std::string& part) {
  if (part.empty()) return false;
  if (part[0] == '.' || part == "__MACOSX" || part == "Icon\r") return true;
  std::string lower = part;
  for (char& ch : lower) ch = (char)std::tolower((unsigned char)ch);
  return lower == "thumbs.db" || lower == "desktop.ini" || lower == "ehthumbs.db" || lower == "ehthumbs_vista.db" ||
         lower == "$recycle.bin" || lower == "system volume information";
}

// Adds `rel`'s parent directories to tree.dirs.
void add_parents(Tree& tree, const std::string& rel) {
  for (std::string p = parent_of(rel); !p.empty(); p = parent_of(p)) tree.dirs.insert(p);
}

const char* special_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::fifo: return "is a FIFO (named pipe)";
    case fs::file_type::socket: return "is a socket";
    case fs::file_type::block: return "is a block device";
    case fs::file_type::character: return "is a character device";
    default: return "is not a regular file";
  }
}

// Lists `rel_dir` below `root` into `tree`, entries in sorted name order so that a folder reached twice
// through links is always kept under the same (the first sorted) name, whatever order the file system
// lists it in. `seen` maps each folder's device and inode to where it was first reached.
void walk_folder(const fs::path& root, const std::string& rel_dir, int depth,
                 std::map<std::pair<dev_t, ino_t>, std::string>& seen, Tree& tree) {
  std::error_code ec;
  const fs::path dir = rel_dir.empty() ? root : root / rel_dir;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error("cannot list the dataset folder '" + dir.string() + "': " + ec.message() + ".");
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw Error("cannot list the dataset folder '" + dir.string() + "': " + ec.message() + ".");
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const fs::path path = dir / name;
    const std::string rel = join(rel_dir, name);
    if (is_os_junk(name)) {
      ++tree.junk;
      continue;
    }
    // stat() follows links; the file is never opened here.
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      tree.pending.push_back({rel, "not_a_regular_file",
                              errno == ELOOP ? "is a symbolic link loop (links that lead back to themselves)"
                                             : "is a broken link or cannot be examined"});
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (depth >= kMaxFolderDepth) {
        tree.loops.push_back({rel, "", true});
        continue;
      }
      const auto first = seen.emplace(std::make_pair(st.st_dev, st.st_ino), rel);
      if (!first.second) {
        tree.loops.push_back({rel, first.first->second, false});
        continue;
      }
      tree.dirs.insert(rel);
      walk_folder(root, rel, depth + 1, seen, tree);
    } else if (S_ISREG(st.st_mode)) {
      tree.files.push_back(rel);
    } else {
      tree.pending.push_back({rel, "not_a_regular_file",
                              std::string(special_kind(fs::status(path, ec))) + ", not a file: it was not opened"});
    }
  }
}

Tree list_folder(const std::string& root) {
  Tree tree;
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  struct stat st;
  if (::stat(root.c_str(), &st) == 0) seen.emplace(std::make_pair(st.st_dev, st.st_ino), "");
  walk_folder(fs::path(root), "", 0, seen, tree);
  std::sort(tree.files.begin(), tree.files.end());
  return tree;
}

void open_zip(const std::string& path, ZipArchive& archive) {
  int err = 0;
  archive.zip = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!archive.zip) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    if (err == ZIP_ER_NOZIP) {
      throw Error("the dataset '" + path +
                  "' is a file but not a zip archive: give a folder with one sub-folder per class, or a .zip of one.");
    }
    throw Error("cannot open the dataset '" + path + "' as a zip archive: " + msg + ".");
  }
}

// Why a zip entry's declared size refuses it unread ("" when it may be read).
std::string zip_size_refusal(const zip_stat_t& st) {
  if (!(st.valid & ZIP_STAT_SIZE)) return "";
  if (st.size > kMaxImageFileBytes) {
    return "declares " + std::to_string((unsigned long long)st.size) + " bytes, more than the limit of " +
           std::to_string(kMaxImageFileBytes) + " for one image: it was not inflated";
  }
  if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size > kZipRatioCheckBytes &&
      st.size / std::max<zip_uint64_t>(1, st.comp_size) > kMaxZipRatio) {
    return "declares " + std::to_string((unsigned long long)st.size) + " bytes packed into " +
           std::to_string((unsigned long long)st.comp_size) + " (more than " + std::to_string(kMaxZipRatio) +
           ":1, which no photo compresses to): it was not inflated";
  }
  return "";
}

Tree list_zip(zip_t* zip) {
  Tree tree;
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  if (count < 0) throw Error("cannot list the zip archive.");
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw = zip_get_name(zip, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
    if (!raw) continue;
    std::string name = raw;
    std::replace(name.begin(), name.end(), '\\', '/');
    const bool is_dir = !name.empty() && name.back() == '/';
    // Split into components; "." components are dropped, ".." and absolute paths make the entry unsafe.
    const bool absolute = (!name.empty() && name[0] == '/') ||
                          (name.size() >= 2 && name[1] == ':' && std::isalpha((unsigned char)name[0]));
    bool dotdot = false, junk = false;
    std::string clean;
    size_t start = 0;
    while (start <= name.size()) {
      size_t end = name.find('/', start);
      if (end == std::string::npos) end = name.size();
      const std::string part = name.substr(start, end - start);
      start = end + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..") dotdot = true;
      if (is_os_junk(part)) junk = true;
      clean = join(clean, part);
    }
    if (absolute || dotdot) {
      if (!is_dir) {
        tree.pending.push_back({name, "unsafe_zip_entry",
                                std::string("has ") + (absolute ? "an absolute path" : "a '..' component") +
                                    ", which would lie outside the archive's folder: it was not read"});
      }
      continue;
    }
    if (clean.empty()) continue;
    if (junk) {
      ++tree.junk;
      continue;
    }
    add_parents(tree, clean);
    if (is_dir) {
      tree.dirs.insert(clean);
      continue;
    }
    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    if (zip_file_get_external_attributes(zip, (zip_uint64_t)i, 0, &opsys, &attributes) == 0 &&
        opsys == ZIP_OPSYS_UNIX && ((attributes >> 16) & S_IFMT) != 0 && ((attributes >> 16) & S_IFMT) != S_IFREG) {
      tree.pending.push_back(
          {clean, "not_a_regular_file", "is a link or special file stored in the zip: it was not read"});
      continue;
    }
    if (tree.zip_index.count(clean)) {
      tree.pending.push_back({clean, "unsafe_zip_entry", "appears twice in the zip: only its first copy is used"});
      continue;
    }
    tree.files.push_back(clean);
    tree.zip_index[clean] = (zip_uint64_t)i;
  }
  std::sort(tree.files.begin(), tree.files.end());
  return tree;
}

std::vector<uint8_t> read_zip_entry(ZipArchive& archive, zip_uint64_t index, const std::string& display) {
  std::lock_guard<std::mutex> lock(archive.mutex);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive.zip, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
    throw Error("cannot read '" + display + "': " + zip_strerror(archive.zip) + ".");
  }
  const std::string refusal = zip_size_refusal(st);
  if (!refusal.empty()) throw Error("'" + display + "' " + refusal + ".");
  zip_file_t* file = zip_fopen_index(archive.zip, index, 0);
  if (!file) throw Error("cannot read '" + display + "': " + zip_strerror(archive.zip) + ".");
  std::vector<uint8_t> bytes((size_t)st.size);
  zip_int64_t done = 0;
  while ((zip_uint64_t)done < st.size) {
    const zip_int64_t got = zip_fread(file, bytes.data() + done, st.size - (zip_uint64_t)done);
    if (got <= 0) {
      const std::string msg = got < 0 ? zip_file_strerror(file) : "unexpected end of the entry";
      zip_fclose(file);
      throw Error("cannot read '" + display + "': " + msg + ".");
    }
    done += got;
  }
  // zip_fclose reports a CRC mismatch, i.e. a damaged entry.
  const int rc = zip_fclose(file);
  if (rc != 0) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, rc);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw Error("cannot read '" + display + "': " + msg + ".");
  }
  return bytes;
}

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

bool check_source_is_zip(const std::string& source, const std::string& what_to_give) {
  std::error_code ec;
  const fs::file_status status = fs::status(source, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    throw Error("the dataset '" + source +
                "' is a symbolic link loop (links that lead back to themselves); give the "
                "folder itself.");
  if (ec || !fs::exists(status)) throw Error("the dataset '" + source + "' does not exist.");
  const bool is_zip = fs::is_regular_file(status);
  if (!is_zip && !fs::is_directory(status)) {
    throw Error("the dataset '" + source + "' " + special_kind(status) + ": " + what_to_give + ".");
  }
  return is_zip;
}

Tree list_dataset_source(const std::string& source, bool is_zip, std::shared_ptr<ZipArchive>* archive) {
  if (!is_zip) return list_folder(source);
  *archive = std::make_shared<ZipArchive>();
  open_zip(source, **archive);
  return list_zip((*archive)->zip);
}

}  // namespace dataset_tree
}  // namespace tvh
