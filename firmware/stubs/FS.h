// Stand-in for arduino-esp32 libraries/FS/src/FS.h (see README.md).
#pragma once
#include <memory>

#include "Arduino.h"

namespace fs {

#define FILE_READ "r"
#define FILE_WRITE "w"
#define FILE_APPEND "a"

class FileImpl;
typedef std::shared_ptr<FileImpl> FileImplPtr;
class FSImpl;
typedef std::shared_ptr<FSImpl> FSImplPtr;

enum SeekMode { SeekSet = 0, SeekCur = 1, SeekEnd = 2 };

class File : public Stream {
 public:
  File(FileImplPtr p = FileImplPtr()) : _p(p) {}
  size_t write(uint8_t) override;
  size_t write(const uint8_t* buf, size_t size) override;
  int available() override;
  int read() override;
  int peek() override;
  void flush() override;
  size_t read(uint8_t* buf, size_t size);
  bool seek(uint32_t pos, SeekMode mode);
  size_t position() const;
  size_t size() const;
  void close();
  operator bool() const;
  const char* path() const;
  const char* name() const;
  boolean isDirectory(void);
  File openNextFile(const char* mode = FILE_READ);
  void rewindDirectory(void);

 protected:
  FileImplPtr _p;
};

class FS {
 public:
  FS(FSImplPtr impl) : _impl(impl) {}
  File open(const char* path, const char* mode = FILE_READ, const bool create = false);
  bool exists(const char* path);
  bool remove(const char* path);
  bool rename(const char* pathFrom, const char* pathTo);
  bool mkdir(const char* path);
  bool rmdir(const char* path);

 protected:
  FSImplPtr _impl;
};

}  // namespace fs

using fs::File;
using fs::FS;
