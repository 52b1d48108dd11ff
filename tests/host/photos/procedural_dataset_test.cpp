// The procedural pretraining set in memory (host/photos/procedural_dataset.h): the same pixels for any
// thread count, classes named in order, every image drawn, impossible specs refused with a sentence.
#include "host/photos/procedural_dataset.h"

#include <gtest/gtest.h>

#include <string>

#include "host/base/error.h"

TEST(ProceduralDataset, TheSameBytesForAnyThreadCount) {
  for (tv::ProceduralFamily f : {tv::ProceduralFamily::Fractal, tv::ProceduralFamily::DeadLeaves}) {
    tvh::ProceduralSpec spec;
    spec.family = f;
    spec.classes = 5;
    spec.per_class = 7;
    spec.height = 40;
    spec.width = 48;
    spec.channels = 1;
    spec.threads = 1;
    const tvh::Dataset one = tvh::procedural_dataset(spec);
    spec.threads = 3;
    const tvh::Dataset three = tvh::procedural_dataset(spec);
    ASSERT_EQ(one.size(), 35u);
    EXPECT_EQ(one.pixels, three.pixels);
    EXPECT_EQ(one.labels, three.labels);
    EXPECT_EQ(one.file_hashes, three.file_hashes);
    EXPECT_EQ(one.classes[0], std::string(tv::procedural_family_name(f)) + "000");
    EXPECT_EQ(one.classes[4], std::string(tv::procedural_family_name(f)) + "004");
    EXPECT_EQ(one.labels[7], 1);
    EXPECT_EQ(one.image_bytes(), 40u * 48u);
  }
}

TEST(ProceduralDataset, ImpossibleSpecsAreRefused) {
  tvh::ProceduralSpec spec;
  spec.classes = 0;
  EXPECT_THROW(tvh::procedural_dataset(spec), tvh::Error);
  spec.classes = 2;
  spec.channels = 2;
  EXPECT_THROW(tvh::procedural_dataset(spec), tvh::Error);
  spec.channels = 3;
  spec.height = 4;
  EXPECT_THROW(tvh::procedural_dataset(spec), tvh::Error);
}
