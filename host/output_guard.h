// An output that must not be one of many input files (the photos of a folder dataset), compared by
// device and inode after following links. (tvtrain's and tvquant's --report use it; check_output in
// host/files.h compares an output with the named inputs only.)
#pragma once
#include <string>
#include <vector>

#include "host/files.h"

namespace tvh {

// Throws tvh::Error naming the output, the file and the fix when `out.path` exists and is the same file
// as one of `files` (e.g. a link named report.html pointing at a photo of the dataset). Files that do
// not exist (zip entries "a.zip:inner") are passed over.
void check_output_not_among(const NamedPath& out, const std::vector<std::string>& files, const std::string& what);

}  // namespace tvh
