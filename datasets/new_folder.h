// Writing a new output folder whole, for the dataset writers (tvgen-detect, tvfashion-mnist): the files
// are written into a temporary sibling that is renamed when complete, every write checked.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

namespace tvgen {

// Writes `bytes` to `path` (a new file in a folder being built); throws tvh::Error naming the file when
// any part of the write fails.
void write_whole_file(const std::filesystem::path& path, const void* bytes, size_t size);
// Creates the folder `out_dir` holding what `fill` writes into the folder it is given. Nothing is
// overwritten: an existing `out_dir` is refused (tvh::Error, one sentence). `fill` writes into a temporary
// sibling folder ("NAME.partial-PID") that is renamed to `out_dir` when it returns and removed when it
// throws (the exception goes on).
void write_new_folder(const std::string& out_dir, const std::function<void(const std::filesystem::path&)>& fill);

}  // namespace tvgen
