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

// Replaces the file at `path` with `bytes` atomically: writes a temporary file
// (".NAME.tmp.PID.XXXXXX") in the same directory, fsyncs it, then renames it over `path`. Only regular
// files are written: an existing target that is a directory, device, FIFO or socket is refused, naming
// what it is; a symbolic link to a regular file is followed (the file it points to is replaced, the link
// stays). On any failure the temporary file is removed, the old file (if any) is left untouched, and
// tvh::Error is thrown. Temporaries an earlier, killed write of the same file left behind are removed.
// A new file gets mode 0644 (an existing file's mode is kept).
void write_file_atomic(const std::string& path, const uint8_t* bytes, size_t size);
void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes);
void write_file_atomic(const std::string& path, const std::string& text);

// What stands at `path` when it is not a regular file, as a noun phrase ("a directory", "a character
// device", "a FIFO", "a socket", "a block device", "a symbolic link to a missing file"); "" when nothing
// is there or it is a regular file (symbolic links followed).
std::string non_regular_kind(const std::string& path);

// One file a command reads or writes, with the words that name it in a message ("-o", "--init", "the
// model"...).
struct NamedPath {
  std::string role;
  std::string path;
};

// Checks an output before any long work starts (decoding, training, quantizing), so a bad path never
// costs a finished run. Throws tvh::Error naming the option, the path and the fix when:
//  - the target exists and is not a regular file (says what it is);
//  - it is the same file as one of `others` (inputs of the command, or its other outputs): compared by
//    device and inode when both exist, by their resolved absolute paths otherwise;
//  - its folder does not exist, is not a folder, or a file cannot be created in it (tried for real: a
//    temporary file is created and removed, which also catches read-only file systems and quotas);
//  - the file system says fewer than `expected_bytes` are free for us (statvfs; unknown = not checked).
// Also removes temporaries an earlier, killed write of the same output left behind.
void check_output(const NamedPath& out, const std::vector<NamedPath>& others, uint64_t expected_bytes = 0);

// Refuses (tvh::Error, naming `role`, the path and the fix) an output name whose extension says another
// format than the one written: `allowed` lists the extensions of what is written (e.g. {".tvb"}); an
// extension that belongs to another TinyVision or common format (.tvb .h .hpp .bin .espdl .svg .json
// .zip .jpg .jpeg .png .txt .csv) is refused, any other extension (or none) is accepted. `fix` is appended
// ("name it X.h or give --format").
void check_output_extension(const std::string& role, const std::string& path, const std::vector<std::string>& allowed,
                            const std::string& what, const std::string& fix);

// Side outputs: files a tool writes next to the one the user named (tvtrain's X.curve.svg) without being
// told their name. They start with kSideOutputMarker so that a later run recognises them as its own:
// such a file is replaced when the same output is written again; any other existing file of that name is
// never replaced (check_side_output refuses before any long work).
extern const char kSideOutputMarker[];
// `text` (an SVG or XML document) with the marker comment in front.
std::string with_side_output_marker(const std::string& text);
// check_output, plus: refuses an existing `out.path` that does not start with the marker, saying how to
// name or skip it (`fix`, e.g. "give --curve PATH to choose its name or --no-curve to skip it").
void check_side_output(const NamedPath& out, const std::vector<NamedPath>& others, const std::string& fix);

}  // namespace tvh
