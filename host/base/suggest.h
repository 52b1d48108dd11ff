// "Did you mean": the known name nearest to a mistyped one.
#pragma once
#include <string>
#include <vector>

namespace tvh {

// The entry of `known` nearest to `typed` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours), or "" when none is close enough to be a plausible typo (more than a third of
// the longer name differs). Ties go to the first entry.
std::string nearest_name(const std::string& typed, const std::vector<std::string>& known);

}  // namespace tvh
