#include "host/link/link_pull.h"

#include <errno.h>
#include <sys/stat.h>

#include <cstring>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/image.h"
#include "tv/crc32.h"
#include "tv/names.h"

namespace tvh {

namespace {

// A name from the board that may be one path part inside dest: the core's class-name rule (tv/names.h:
// what a FAT card can hold, so no '/', '\\', control character, '.' or '..'), at most max_bytes, and not
// hidden (a leading dot).
bool safe_part(const std::string& n, size_t max_bytes) {
  if (n.size() > 1 && n[0] == '_') return safe_part(n.substr(1), max_bytes - 1);  // the board's own (_unsure)
  return !n.empty() && n[0] != '.' && tv::name_allowed(n.data(), n.size(), max_bytes);
}
constexpr size_t kMaxFileNameBytes = 255;  // a FAT long file name

// Makes dest/<name> a real folder (never through a symbolic link).
void ensure_folder(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return;
    throw Error(path + " exists and is not a folder (" + (S_ISLNK(st.st_mode) ? "a symbolic link" : "a file") +
                "): move it away and pull again");
  }
  if (::mkdir(path.c_str(), 0755) != 0) throw Error("cannot create the folder " + path + ": " + strerror(errno));
}

}  // namespace

PullReport pull_photos(LinkClient& link, const std::string& dest,
                       const std::function<void(const std::string&)>& progress) {
  struct stat st;
  if (::stat(dest.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw Error(dest + " is not a folder: name a folder for the photos");
  if (::stat(dest.c_str(), &st) != 0 && ::mkdir(dest.c_str(), 0755) != 0)
    throw Error("cannot create the folder " + dest + ": " + strerror(errno));
  PullReport r;
  struct Item {
    std::string cls, name;
    uint32_t size;
  };
  std::vector<Item> todo;
  for (const RemoteEntry& c : link.list("")) {
    if (!c.is_dir) continue;
    if (!safe_part(c.name, tv::kMaxClassNameBytes)) {
      r.refused.push_back("/images/" + one_line(c.name) + "/ (not a class folder name: " + tv::kClassNameRule + ")");
      continue;
    }
    for (const RemoteEntry& f : link.list(c.name)) {
      if (f.is_dir || !is_image_name(f.name)) continue;
      if (!safe_part(f.name, kMaxFileNameBytes))
        r.refused.push_back("/images/" + c.name + "/" + one_line(f.name) +
                            " (not a file name a card holds: a '/', '\\', control character or one of :*?\"<>|)");
      else
        todo.push_back({c.name, f.name, f.size});
    }
  }
  uint64_t total = 0;
  for (const Item& it : todo) total += it.size;
  uint64_t done = 0;
  size_t n = 0;
  for (const Item& it : todo) {
    ++n;
    const std::string folder = dest + "/" + it.cls, local = folder + "/" + it.name;
    const std::string rel = it.cls + "/" + it.name;
    if (::lstat(local.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode)) {
        r.kept.push_back(local + " (" +
                         (S_ISLNK(st.st_mode) ? std::string("a symbolic link") : non_regular_kind(local)) + ")");
      } else {
        uint32_t size = 0, crc = 0;
        try {
          link.crc(rel, &size, &crc);
        } catch (const BoardRefused& e) {
          r.failed.push_back("/images/" + rel + " (the board: " + one_line(e.what()) + ")");
          continue;
        }
        const std::vector<uint8_t> have = read_file(local);
        if (have.size() == size && tv::crc32(0, have.data(), have.size()) == crc)
          ++r.unchanged;
        else
          r.kept.push_back(local + " (differs from the board's " + std::to_string(size) + "-byte file)");
      }
      done += it.size;
      continue;
    }
    ensure_folder(folder);
    const uint64_t before = done;
    std::vector<uint8_t> data;
    try {
      data = link.read(rel, [&](uint64_t got) {
        if (progress)
          progress("file " + std::to_string(n) + "/" + std::to_string(todo.size()) + ", " +
                   std::to_string((before + got) / 1024) + " of " + std::to_string(total / 1024) + " KB");
      });
    } catch (const BoardRefused& e) {  // that file only: the others still come
      r.failed.push_back("/images/" + rel + " (the board: " + one_line(e.what()) + ")");
      done += it.size;
      continue;
    }
    write_file_atomic(local, data);
    ++r.copied;
    r.bytes += data.size();
    done += it.size;
  }
  return r;
}

void check_model_dest(const NamedPath& dest, const std::vector<NamedPath>& others) {
  struct stat st;
  if (::lstat(dest.path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))  // as pull, never written through a link
    throw Error(dest.role + " " + dest.path + ": it is a symbolic link; name the file itself, or a new one.");
  check_output_extension(dest.role, dest.path, {".tvb"}, "a TinyVision model", "name it MODEL.tvb");
  check_output(dest, others);
}

ModelPull pull_model(LinkClient& link, uint8_t which, const NamedPath& dest, bool overwrite,
                     const std::function<void(uint64_t)>& progress) {
  check_model_dest(dest, {});
  ModelPull r;
  const std::vector<uint8_t> data = link.read_model(which, &r.card_path, progress);
  r.bytes = (uint32_t)data.size();
  r.crc = tv::crc32(0, data.data(), data.size());
  struct stat st;
  if (::lstat(dest.path.c_str(), &st) == 0) {
    check_model_dest(dest, {});  // still a regular file
    if ((uint64_t)st.st_size == data.size() && read_file(dest.path, data.size()) == data) {
      r.outcome = ModelPull::kUnchanged;
      return r;
    }
    if (!overwrite) {
      r.outcome = ModelPull::kKept;
      return r;
    }
  }
  write_file_atomic(dest.path, data);
  return r;
}

}  // namespace tvh
