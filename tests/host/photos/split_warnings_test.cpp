// The warnings a split gives before training (host/photos/split.h): the board's class limit among them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/split.h"

namespace {

// A dataset in memory of `classes` classes with 8 images each (labels only: warnings read no pixels).
tvh::Dataset split_warnings_dataset(int classes) {
  tvh::Dataset ds;
  ds.source = "mem";
  for (int c = 0; c < classes; ++c) {
    ds.classes.push_back("c" + std::to_string(c));
    for (int i = 0; i < 8; ++i) {
      ds.labels.push_back(c);
      ds.file_hashes.push_back((uint64_t)(c * 100 + i + 1));
    }
  }
  return ds;
}

bool split_warnings_mention(const std::vector<std::string>& w, const std::string& what) {
  for (const std::string& s : w)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(SplitWarnings, MoreClassesThanTheBoardRunsAreSaid) {
  for (int k : {2, 16, 17, 200}) {
    const tvh::Dataset ds = split_warnings_dataset(k);
    const std::vector<std::string> w = tvh::split_warnings(ds, tvh::reference_split(ds, 3));
    EXPECT_EQ(
        split_warnings_mention(w, std::to_string(k) + " classes: the board's firmware runs 2 to 16, so this model "
                                                      "runs on the PC only"),
        k > 16)
        << k;
  }
}
