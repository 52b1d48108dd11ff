#include "host/base/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "host/base/error.h"

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

// The name a temporary of the file `base` carries in place of `base`: `base` itself, or, when
// ".BASE.tmp.PID.XXXXXX" would pass NAME_MAX (a legal 250-character name), its first bytes and a hash
// of the whole name, so that the temporary of every legal name can be created.
std::string temp_base(const std::string& base) {
  constexpr size_t kRoom = 255 - 1 - 5 - 10 - 1 - 6;  // "." BASE ".tmp." PID(<= 10 digits) "." XXXXXX
  if (base.size() <= kRoom) return base;
  uint32_t h = 2166136261u;
  for (unsigned char c : base) h = (h ^ c) * 16777619u;
  char hex[9];
  snprintf(hex, sizeof hex, "%08x", (unsigned)h);
  return base.substr(0, kRoom - 9) + "~" + hex;
}

// The prefix of the temporaries write_file_atomic makes for `path`: ".NAME.tmp.".
std::string temp_prefix(const std::string& base) {
  return "." + temp_base(base) + ".tmp.";
}

// The template of a temporary of `path` in `dir`: ".NAME.tmp.PID.XXXXXX".
std::string temp_template(const std::string& dir, const std::string& path) {
  return dir + "/" + temp_prefix(base_name_of(path)) + std::to_string((long)getpid()) + ".XXXXXX";
}

// The writer's PID when `rest` (a name after the prefix) is exactly "PID.XXXXXX" as mkostemp makes it
// (PID: 1..10 digits without a leading zero; XXXXXX: six letters or digits); -1 otherwise.
long temp_writer_pid(const std::string& rest) {
  const size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 10 || rest.size() != dot + 7 || rest[0] == '0') return -1;
  for (size_t i = 0; i < dot; ++i)
    if (rest[i] < '0' || rest[i] > '9') return -1;
  for (size_t i = dot + 1; i < rest.size(); ++i)
    if (!std::isalnum((unsigned char)rest[i])) return -1;
  const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
  return pid > 0 && pid <= 0x7fffffffL ? pid : -1;
}

// True when the temporary `full`, written by process `pid`, is provably abandoned: the process is gone,
// the file is a regular file of this user, and no one holds the writer's lock on it.
bool temp_is_abandoned(const std::string& full, long pid) {
  if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) return false;
  FdGuard fd;
  fd.fd = open(full.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd.fd < 0 || fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return false;
  return flock(fd.fd, LOCK_EX | LOCK_NB) == 0;
}

// Removes the temporaries an earlier write of `path` left when it was killed (see write_file_atomic):
// nothing but names of exactly our form whose writer is provably gone; a user's file that merely looks
// like one (".NAME.tmp.backup") and a live writer's file are left alone.
void remove_stale_temporaries(const std::string& path) {
  const std::string dir = directory_of(path), prefix = temp_prefix(base_name_of(path));
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const long pid = temp_writer_pid(name.substr(prefix.size()));
    if (pid > 0 && temp_is_abandoned(dir + "/" + name, pid)) stale.push_back(dir + "/" + name);
  }
  closedir(d);
  for (const std::string& f : stale) unlink(f.c_str());
}

// The sentence part saying that the regular file `st` describes is read-only ("" when it is writable):
// refused like cp refuses it, whoever runs (root included).
std::string read_only_refusal(const struct stat& st, const std::string& path) {
  if ((st.st_mode & 0222) != 0 && access(path.c_str(), W_OK) == 0) return "";
  char mode[8];
  snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
  return std::string("the file is read-only (mode ") + mode +
         "), so it is not replaced; make it writable (chmod u+w) or write to another name";
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
    if (stat(path.c_str(), &st) != 0)
      return errno == ELOOP ? "a symbolic link loop (links that lead back to themselves)"
                            : "a symbolic link to a missing file";
  }
  return kind_of(st.st_mode);
}

int open_regular_file(const std::string& path) {
  FdGuard guard;
  guard.fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (guard.fd < 0) {
    const int err = errno;
    if (err == ELOOP)
      throw Error("cannot open '" + path +
                  "': it is a symbolic link loop (links that lead back to themselves); give the file itself.");
    throw Error("cannot open '" + path + "': " + errno_text(err) + ".");
  }
  struct stat st;
  if (fstat(guard.fd, &st) != 0) {
    const int err = errno;
    throw Error("cannot read '" + path + "': " + errno_text(err) + ".");
  }
  if (!S_ISREG(st.st_mode))
    throw Error("cannot read '" + path + "': it is " + kind_of(st.st_mode) +
                ", not a regular file; give the file itself.");
  const int flags = fcntl(guard.fd, F_GETFL);
  if (flags < 0 || fcntl(guard.fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    throw Error("cannot read '" + path + "': " + errno_text(err) + ".");
  }
  const int fd = guard.fd;
  guard.fd = -1;
  return fd;
}

std::vector<uint8_t> read_file(const std::string& path, size_t max_bytes) {
  FdGuard guard;
  guard.fd = open_regular_file(path);
  struct stat st;
  if (fstat(guard.fd, &st) != 0) {
    const int err = errno;
    throw Error("cannot read '" + path + "': " + errno_text(err) + ".");
  }
  if ((uint64_t)st.st_size > (uint64_t)max_bytes) {
    throw Error("cannot read '" + path + "': it is " + std::to_string((long long)st.st_size) +
                " bytes, more than the limit of " + std::to_string(max_bytes) + ".");
  }
  std::vector<uint8_t> bytes;
  bytes.reserve((size_t)st.st_size);
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
  struct stat existing;
  if (stat(path.c_str(), &existing) == 0) {
    const std::string refusal = read_only_refusal(existing, path);
    if (!refusal.empty()) throw Error("cannot write '" + named_path + "': " + refusal + ".");
  }
  remove_stale_temporaries(path);
  const std::string dir = directory_of(path);
  const std::string tmpl = temp_template(dir, path);
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
  flock(guard.fd, LOCK_EX | LOCK_NB);  // ours while we live: a later run never takes it for abandoned
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

void refuse_output_among_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (const NamedPath& out : outputs) {
    if (out.path.empty() || out.path == "-") continue;
    struct stat ost;
    const bool exists = stat(out.path.c_str(), &ost) == 0;
    const std::string out_abs = exists ? std::string() : resolved(out.path);
    for (const NamedPath& in : inputs) {
      if (in.path.empty() || in.path == "-") continue;
      struct stat ist;
      const bool in_exists = stat(in.path.c_str(), &ist) == 0;
      bool same = false;
      if (exists && in_exists)
        same = ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino;
      else if (!exists && !in_exists && !out_abs.empty())
        same = resolved(in.path) == out_abs;
      if (same)
        throw Error(out.role + " " + out.path + ": it is the same file as " + in.role + " " + in.path +
                    ", which writing would destroy; write to another name.");
    }
  }
}

namespace {

// The folder an output is really written in: that of the file a symbolic link points to.
std::string target_folder(const std::string& path) {
  struct stat lst;
  if (lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    const std::string r = resolved(path);
    if (!r.empty()) return directory_of(r);
  }
  return directory_of(path);
}

// Free bytes for us in the file system holding `dir`; false when it cannot be told.
bool free_bytes_in(const std::string& dir, uint64_t* free_bytes) {
  struct statvfs vfs;
  if (statvfs(dir.c_str(), &vfs) != 0 || vfs.f_frsize == 0) return false;
  *free_bytes = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
  return true;
}

}  // namespace

void check_output(const NamedPath& out, const std::vector<NamedPath>& others, uint64_t expected_bytes) {
  const std::string& path = out.path;
  const std::string who = out.role + " " + path;
  if (path.empty()) throw Error(out.role + ": the output name is empty.");
  if (path == "-")  // "-" is standard output where a tool writes there (tvexport -o -), never a file name
    throw UsageError(out.role + " -: this output is written to a file, not to standard output; give a file name.");
  const std::string kind = non_regular_kind(path);
  if (!kind.empty())
    throw Error(who + ": it is " + kind + ", not a regular file; only regular files are written (name a file).");
  struct stat ost;
  const bool exists = stat(path.c_str(), &ost) == 0;
  if (exists) {
    const std::string refusal = read_only_refusal(ost, path);
    if (!refusal.empty()) throw Error(who + ": " + refusal + ".");
  }
  refuse_output_among_inputs({out}, others);
  const std::string dir = target_folder(path);
  struct stat dst;
  if (stat(dir.c_str(), &dst) != 0)
    throw Error(who + ": the folder '" + dir + "' does not exist; create it first or write elsewhere.");
  if (!S_ISDIR(dst.st_mode)) throw Error(who + ": '" + dir + "' is not a folder.");
  // Try for real: create and remove a temporary file where the output will be written.
  const std::string probe = temp_template(dir, path);
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
  uint64_t free_bytes = 0;
  if (expected_bytes > 0 && free_bytes_in(dir, &free_bytes) && free_bytes < expected_bytes)
    throw Error(who + ": the folder '" + dir + "' has " + std::to_string(free_bytes) + " bytes free, fewer than the " +
                std::to_string(expected_bytes) + " needed; free some space or write elsewhere.");
  remove_stale_temporaries(exists ? resolved(path) : path);
}

void check_outputs(const std::vector<NamedPath>& outs, const std::vector<uint64_t>& bytes,
                   const std::vector<NamedPath>& others) {
  struct OnFs {
    uint64_t need = 0;
    std::string names, dir;
  };
  std::map<dev_t, OnFs> by_fs;  // what the outputs on one file system need together
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].path.empty()) continue;
    const uint64_t need = i < bytes.size() ? bytes[i] : 0;
    check_output(outs[i], others, need);
    const std::string dir = target_folder(outs[i].path);
    struct stat dst;
    if (stat(dir.c_str(), &dst) != 0) continue;
    OnFs& f = by_fs[dst.st_dev];
    f.need += need;
    f.names += (f.names.empty() ? "" : ", ") + outs[i].role + " " + outs[i].path;
    f.dir = dir;
  }
  for (const auto& entry : by_fs) {
    const OnFs& f = entry.second;
    uint64_t free_bytes = 0;
    if (free_bytes_in(f.dir, &free_bytes) && free_bytes < f.need)
      throw Error(f.names + ": the file system of '" + f.dir + "' has " + std::to_string(free_bytes) +
                  " bytes free, fewer than the " + std::to_string(f.need) +
                  " they need together; free some space or write elsewhere.");
  }
}

void write_stdout(const std::string& text) {
  const size_t put = fwrite(text.data(), 1, text.size(), stdout);
  if (put != text.size() || fflush(stdout) != 0 || ferror(stdout)) {
    const int err = errno;
    throw Error("cannot write the results to standard output: " + errno_text(err ? err : EIO) + ".");
  }
}

std::string close_stdout() {
  errno = 0;
  const bool flushed = fflush(stdout) == 0 && !ferror(stdout);
  int err = errno;
  const bool closed = fclose(stdout) == 0;
  if (flushed && !closed) err = errno;
  if (flushed && closed) return "";
  return "cannot write the results to standard output: " + errno_text(err ? err : EIO) + ".";
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
