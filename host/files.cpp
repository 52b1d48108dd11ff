#include "host/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "host/error.h"

namespace tvh {
namespace {

std::string errno_text(int err) {
  return std::string(strerror(err));
}

// Closes a descriptor on scope exit unless released.
struct FdGuard {
  int fd = -1;
  ~FdGuard() {
    if (fd >= 0) close(fd);
  }
};

// Directory part of `path` ("." when it has none).
std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A noun phrase for a file type.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "";
  return "not a regular file";
}

// The prefix of the temporaries write_file_atomic makes for `path`: ".NAME.tmp.".
std::string temp_prefix(const std::string& base) {
  return "." + base + ".tmp.";
}

// Removes the temporaries an earlier write of `path` left when it was killed: ".NAME.tmp.PID.XXXXXX"
// whose process no longer exists, and ".NAME.tmp.XXXXXX" of versions that did not record the PID.
// Only regular files are removed; a live writer's file is left alone.
void remove_stale_temporaries(const std::string& path) {
  const std::string dir = directory_of(path), prefix = temp_prefix(base_name_of(path));
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    bool is_stale = false;
    if (rest.size() == 6) {
      is_stale = true;  // no PID recorded
    } else {
      const size_t dot = rest.find('.');
      if (dot == std::string::npos || dot == 0 || rest.size() - dot - 1 != 6) continue;
      const std::string pid_text = rest.substr(0, dot);
      if (!std::all_of(pid_text.begin(), pid_text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          pid_text.size() > 9)
        continue;
      const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
      is_stale = pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    }
    if (!is_stale) continue;
    struct stat st;
    const std::string full = dir + "/" + name;
    if (lstat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode)) stale.push_back(full);
  }
  closedir(d);
  for (const std::string& f : stale) unlink(f.c_str());
}

// The absolute, symlink-resolved form of `path` (its folder resolved when the file does not exist yet);
// "" when even the folder cannot be resolved.
std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  if (!realpath(directory_of(path).c_str(), buf)) return "";
  return std::string(buf) + "/" + base_name_of(path);
}

std::string lower_extension(const std::string& path) {
  const std::string base = base_name_of(path);
  const size_t dot = base.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string ext = base.substr(dot);
  for (char& c : ext) c = (char)std::tolower((unsigned char)c);
  return ext;
}

}  // namespace

std::string non_regular_kind(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode)) {
    if (stat(path.c_str(), &st) != 0) return "a symbolic link to a missing file";
  }
  return kind_of(st.st_mode);
}

std::vector<uint8_t> read_file(const std::string& path, size_t max_bytes) {
  FdGuard guard;
  guard.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (guard.fd < 0) {
    const int err = errno;
    throw Error("cannot open '" + path + "': " + errno_text(err) + ".");
  }
  struct stat st;
  if (fstat(guard.fd, &st) != 0) {
    const int err = errno;
    throw Error("cannot read '" + path + "': " + errno_text(err) + ".");
  }
  if (S_ISDIR(st.st_mode)) throw Error("cannot read '" + path + "': it is a directory, not a file.");
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max_bytes) {
    throw Error("cannot read '" + path + "': it is " + std::to_string((long long)st.st_size) +
                " bytes, more than the limit of " + std::to_string(max_bytes) + ".");
  }
  std::vector<uint8_t> bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve((size_t)st.st_size);
  uint8_t buffer[65536];
  for (;;) {
    const ssize_t got = ::read(guard.fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw Error("cannot read '" + path + "': " + errno_text(err) + ".");
    }
    if (got == 0) break;
    if (bytes.size() + (size_t)got > max_bytes) {
      throw Error("cannot read '" + path + "': it is larger than the limit of " + std::to_string(max_bytes) +
                  " bytes.");
    }
    bytes.insert(bytes.end(), buffer, buffer + got);
  }
  return bytes;
}

void write_file_atomic(const std::string& named_path, const uint8_t* bytes, size_t size) {
  if (named_path.empty()) throw Error("cannot write a file with an empty path.");
  const std::string kind = non_regular_kind(named_path);
  if (!kind.empty())
    throw Error("cannot write '" + named_path + "': it is " + kind +
                ", and only regular files are written; name a file instead.");
  // A symbolic link to a file: replace the file it points to, keep the link.
  std::string path = named_path;
  struct stat lst;
  if (lstat(named_path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) path = resolved(named_path);
  remove_stale_temporaries(path);
  const std::string dir = directory_of(path);
  std::string tmpl = dir + "/" + temp_prefix(base_name_of(path)) + std::to_string((long)getpid()) + ".XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');

  FdGuard guard;
  guard.fd = mkostemp(name.data(), O_CLOEXEC);
  if (guard.fd < 0) {
    const int err = errno;
    throw Error("cannot write '" + path + "': creating a temporary file in '" + dir + "' failed (" + errno_text(err) +
                ").");
  }
  const std::string temp(name.data());
  auto fail = [&](const std::string& what, int err) {
    close(guard.fd);
    guard.fd = -1;
    unlink(temp.c_str());
    throw Error("cannot write '" + path + "': " + what + " failed (" + errno_text(err) +
                "); the old file is unchanged.");
  };

  // Keep an existing file's permissions; a new file gets 0644.
  mode_t mode = 0644;
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) mode = st.st_mode & 07777;
  if (fchmod(guard.fd, mode) != 0) fail("setting permissions", errno);

  size_t done = 0;
  while (done < size) {
    const ssize_t put = ::write(guard.fd, bytes + done, size - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      fail("writing the temporary file", errno);
    }
    if (put == 0) fail("writing the temporary file", EIO);
    done += (size_t)put;
  }
  if (fsync(guard.fd) != 0) fail("flushing the temporary file", errno);
  if (close(guard.fd) != 0) {
    const int err = errno;
    guard.fd = -1;
    unlink(temp.c_str());
    throw Error("cannot write '" + path + "': closing the temporary file failed (" + errno_text(err) +
                "); the old file is unchanged.");
  }
  guard.fd = -1;
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    throw Error("cannot write '" + path + "': renaming the temporary file over it failed (" + errno_text(err) +
                "); the old file is unchanged.");
  }
  // Make the rename itself durable; a failure here does not undo the (already visible) new file.
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
}

void check_output(const NamedPath& out, const std::vector<NamedPath>& others, uint64_t expected_bytes) {
  const std::string& path = out.path;
  const std::string who = out.role + " " + path;
  if (path.empty()) throw Error(out.role + ": the output name is empty.");
  const std::string kind = non_regular_kind(path);
  if (!kind.empty())
    throw Error(who + ": it is " + kind + ", not a regular file; only regular files are written (name a file).");
  struct stat ost;
  const bool exists = stat(path.c_str(), &ost) == 0;
  const std::string out_abs = resolved(path);
  for (const NamedPath& o : others) {
    if (o.path.empty() || o.path == "-") continue;
    struct stat ist;
    bool same = false;
    if (exists && stat(o.path.c_str(), &ist) == 0)
      same = ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino;
    else if (!out_abs.empty())
      same = resolved(o.path) == out_abs;
    if (same)
      throw Error(who + ": it is the same file as " + o.role + " " + o.path +
                  ", which writing would destroy; write to another name.");
  }
  const std::string dir = directory_of(path);
  struct stat dst;
  if (stat(dir.c_str(), &dst) != 0)
    throw Error(who + ": the folder '" + dir + "' does not exist; create it first or write elsewhere.");
  if (!S_ISDIR(dst.st_mode)) throw Error(who + ": '" + dir + "' is not a folder.");
  // Try for real: create and remove a temporary file where the output will be written.
  std::string probe = dir + "/" + temp_prefix(base_name_of(path)) + std::to_string((long)getpid()) + ".XXXXXX";
  std::vector<char> name(probe.begin(), probe.end());
  name.push_back('\0');
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(who + ": cannot create a file in the folder '" + dir + "' (" + errno_text(err) +
                "); choose a writable folder.");
  }
  close(fd);
  unlink(name.data());
  struct statvfs vfs;
  if (expected_bytes > 0 && statvfs(dir.c_str(), &vfs) == 0 && vfs.f_frsize > 0) {
    const uint64_t free_bytes = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
    if (free_bytes < expected_bytes)
      throw Error(who + ": the folder '" + dir + "' has " + std::to_string(free_bytes) +
                  " bytes free, fewer than the " + std::to_string(expected_bytes) +
                  " needed; free some space or write elsewhere.");
  }
  remove_stale_temporaries(exists ? resolved(path) : path);
}

void check_output_extension(const std::string& role, const std::string& path, const std::vector<std::string>& allowed,
                            const std::string& what, const std::string& fix) {
  static const char* const kKnown[][2] = {{".tvb", "a TinyVision model (.tvb)"},
                                          {".h", "a C header"},
                                          {".hpp", "a C++ header"},
                                          {".bin", "a raw myWeights.bin"},
                                          {".espdl", "an ESP-DL model"},
                                          {".svg", "an SVG picture"},
                                          {".json", "a JSON file"},
                                          {".zip", "a zip archive"},
                                          {".jpg", "a JPEG image"},
                                          {".jpeg", "a JPEG image"},
                                          {".png", "a PNG image"},
                                          {".txt", "a text file"},
                                          {".csv", "a CSV table"}};
  const std::string ext = lower_extension(path);
  if (ext.empty() || std::find(allowed.begin(), allowed.end(), ext) != allowed.end()) return;
  for (const auto& k : kKnown)
    if (ext == k[0])
      throw Error(role + " " + path + ": the name says " + k[1] + " but this writes " + what + "; " + fix + ".");
}

const char kSideOutputMarker[] = "<!-- TinyVision side output: a later run writing the same model replaces it -->";

std::string with_side_output_marker(const std::string& text) {
  return std::string(kSideOutputMarker) + "\n" + text;
}

void check_side_output(const NamedPath& out, const std::vector<NamedPath>& others, const std::string& fix) {
  check_output(out, others);
  struct stat st;
  if (stat(out.path.c_str(), &st) != 0) return;
  const size_t n = sizeof kSideOutputMarker - 1;
  std::vector<uint8_t> head;
  const int fd = open(out.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    head.resize(n);
    const ssize_t got = ::read(fd, head.data(), n);
    head.resize(got > 0 ? (size_t)got : 0);
    close(fd);
  }
  if (head.size() != n || memcmp(head.data(), kSideOutputMarker, n) != 0)
    throw Error(out.role + " " + out.path +
                ": the file exists and was not written by TinyVision, so it is not replaced; " + fix + ".");
}

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomic(path, bytes.data(), bytes.size());
}

void write_file_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace tvh
