// Whole-file reads and atomic whole-file writes.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace tvh {

// Opens `path` for reading the one safe way every file input goes through: O_NONBLOCK (opening a FIFO
// never waits for a writer), then fstat on the open descriptor: anything but a regular file (a FIFO,
// device, socket, directory) is refused. Returns the descriptor (O_CLOEXEC, back in blocking mode); the
// caller closes it. Throws tvh::Error with one sentence naming the file, what it is and what to give
// instead ("a symbolic link loop" is said as such, never "missing").
int open_regular_file(const std::string& path);

// Reads the whole file at `path` (opened by open_regular_file); throws tvh::Error naming the file when it
// cannot be opened or read, is not a regular file, or is larger than max_bytes.
std::vector<uint8_t> read_file(const std::string& path, size_t max_bytes = size_t(1) << 30);

// Writes `text` to standard output and flushes it; throws tvh::Error ("cannot write the results to
// standard output: No space left on device.") when the write or the flush fails (a full disk, a closed
// pipe). Every result a tool prints on stdout goes through it.
void write_stdout(const std::string& text);
// Flushes and closes standard output at the end of a run; returns "" or the sentence of what failed
// (a write buffered earlier that the disk refused). tvcli::run_main turns it into exit status 1.
std::string close_stdout();

// Replaces the file at `path` with `bytes` atomically: writes a temporary file
// (".NAME.tmp.PID.XXXXXX", NAME shortened with a hash so that the temporary's name fits NAME_MAX
// whenever NAME does) in the same directory, fsyncs it, then renames it over `path`. Only regular
// files are written: an existing target that is a directory, device, FIFO or socket is refused, naming
// what it is; so is a read-only file (as cp refuses it: make it writable or write elsewhere); a symbolic
// link to a regular file is followed (the file it points to is replaced, the link stays). On any
// failure the temporary file is removed, the old file (if any) is left untouched, and tvh::Error is
// thrown. Temporaries an earlier, killed write of the same file left behind are removed: only names
// of exactly that form, regular files of this user, whose writer's process is gone and whose lock
// (the writer holds an flock on its temporary) is free. A new file gets mode 0644 (an existing file's
// mode is kept).
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

// Throws tvh::Error (one sentence naming both files) when an output is the same file as an input:
// compared by device and inode after following symbolic links (hard links included) when both exist,
// by their resolved absolute paths otherwise. Empty paths and "-" (stdout/stdin) are never compared.
// The one comparison every tool's outputs go through (check_output, and list_dataset for the files of a
// folder dataset).
void refuse_output_among_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Checks an output before any long work starts (decoding, training, quantizing), so a bad path never
// costs a finished run. Throws tvh::Error naming the option, the path and the fix when:
//  - the target exists and is not a regular file (says what it is), or is read-only;
//  - it is the same file as one of `others` (inputs of the command, or its other outputs), see
//    refuse_output_among_inputs;
//  - the folder it will be written in (that of the file a symbolic link points to) does not exist, is
//    not a folder, or a file cannot be created in it (tried for real: a temporary file is created and
//    removed, which also catches read-only file systems and quotas);
//  - that file system says fewer than `expected_bytes` are free for us (statvfs; unknown = not checked).
// "-" (standard output elsewhere) is a tvh::UsageError: these outputs are files.
// Also removes temporaries an earlier, killed write of the same output left behind.
void check_output(const NamedPath& out, const std::vector<NamedPath>& others, uint64_t expected_bytes = 0);

// Checks several outputs that land on the same file systems together: each with check_output, and the
// free space of each file system against the sum of what its outputs need (bytes[i] for outs[i]).
void check_outputs(const std::vector<NamedPath>& outs, const std::vector<uint64_t>& bytes,
                   const std::vector<NamedPath>& others);

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
