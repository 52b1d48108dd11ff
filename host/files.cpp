#include "host/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace

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

void write_file_atomic(const std::string& path, const uint8_t* bytes, size_t size) {
  if (path.empty()) throw Error("cannot write a file with an empty path.");
  const std::string dir = directory_of(path);
  std::string tmpl = dir + "/." + base_name_of(path) + ".tmp.XXXXXX";
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

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomic(path, bytes.data(), bytes.size());
}

void write_file_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace tvh
