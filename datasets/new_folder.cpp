#include "datasets/new_folder.h"

#include <unistd.h>

#include <fstream>
#include <system_error>

#include "host/base/error.h"

namespace tvgen {

namespace fs = std::filesystem;

void write_whole_file(const fs::path& path, const void* bytes, size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write((const char*)bytes, (std::streamsize)size);
  f.close();
  if (!f) throw tvh::Error("cannot write '" + path.string() + "' (disk full or no permission?).");
}

void write_new_folder(const std::string& out_dir, const std::function<void(const fs::path&)>& fill) {
  std::error_code ec;
  fs::path out = fs::path(out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();  // "dir/"
  if (fs::exists(fs::symlink_status(out, ec)))
    throw tvh::Error("'" + out_dir + "' already exists; choose a new folder (nothing is overwritten).");
  fs::path parent = out.parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec))
    throw tvh::Error("the folder '" + parent.string() + "' that should hold '" + out_dir + "' does not exist.");
  const fs::path tmp = parent / (out.filename().string() + ".partial-" + std::to_string((long long)::getpid()));
  try {
    fs::create_directories(tmp);
    fill(tmp);
    fs::rename(tmp, out);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace tvgen
