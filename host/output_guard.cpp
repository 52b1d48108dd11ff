#include "host/output_guard.h"

#include <sys/stat.h>

#include "host/error.h"

namespace tvh {

void check_output_not_among(const NamedPath& out, const std::vector<std::string>& files, const std::string& what) {
  struct stat o;
  if (out.path.empty() || stat(out.path.c_str(), &o) != 0) return;
  for (const auto& f : files) {
    struct stat s;
    if (stat(f.c_str(), &s) == 0 && s.st_dev == o.st_dev && s.st_ino == o.st_ino)
      throw Error(out.role + " " + out.path + " is " + f + ", " + what +
                  " this run reads; it is not overwritten: name another file.");
  }
}

}  // namespace tvh
