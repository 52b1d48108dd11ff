// Whole-file reads and atomic whole-file writes.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace tvh {

// Reads the whole file at `path`; throws tvh::Error naming the file when it cannot be opened or read,
// is a directory, or is larger than max_bytes.
std::vector<uint8_t> read_file(const std::string& path, size_t max_bytes = size_t(1) << 30);

// Replaces the file at `path` with `bytes` atomically: writes a temporary file in the same directory,
// fsyncs it, then renames it over `path`. On any failure the temporary file is removed, the old file
// (if any) is left untouched, and tvh::Error is thrown. A new file gets mode 0644 (an existing file's
// mode is kept).
void write_file_atomic(const std::string& path, const uint8_t* bytes, size_t size);
void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes);
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace tvh
