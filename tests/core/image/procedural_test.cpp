// The procedural pretraining images (tv/image/procedural.h): the same bytes for the same (seed, class,
// instance) on every build (a pinned CRC-32, checked by the 64-bit, -m32 and AVX2 test runs), classes
// that differ, pictures that are not blank.
#include "tv/image/procedural.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tv/crc32.h"

namespace {

std::vector<uint8_t> procedural_render(tv::ProceduralFamily f, uint64_t seed, int cls, int instance, int side, int c) {
  tv::ProceduralClass k;
  tv::procedural_class(f, seed, cls, &k);
  std::vector<uint8_t> out((size_t)side * (size_t)side * (size_t)c, 0xAB);
  tv::procedural_image(k, seed, instance, side, side, c, out.data());
  return out;
}

// CRC-32 over 4 classes x 3 images, colour 64x64 and gray 32x48, of a family.
uint32_t procedural_crc(tv::ProceduralFamily f) {
  uint32_t crc = 0;
  for (int cls = 0; cls < 4; ++cls)
    for (int i = 0; i < 3; ++i) {
      const std::vector<uint8_t> a = procedural_render(f, 7, cls, i, 64, 3);
      crc = tv::crc32(crc, a.data(), a.size());
      tv::ProceduralClass k;
      tv::procedural_class(f, 7, cls, &k);
      std::vector<uint8_t> g(32 * 48);
      tv::procedural_image(k, 7, i, 32, 48, 1, g.data());
      crc = tv::crc32(crc, g.data(), g.size());
    }
  return crc;
}

}  // namespace

TEST(Procedural, TheSameDrawGivesTheSameBytesAndTheBytesArePinned) {
  for (tv::ProceduralFamily f : {tv::ProceduralFamily::Fractal, tv::ProceduralFamily::DeadLeaves}) {
    EXPECT_EQ(procedural_render(f, 3, 5, 2, 64, 3), procedural_render(f, 3, 5, 2, 64, 3));
    EXPECT_NE(procedural_render(f, 3, 5, 2, 64, 3), procedural_render(f, 3, 5, 3, 64, 3)) << "instances differ";
    EXPECT_NE(procedural_render(f, 3, 5, 2, 64, 3), procedural_render(f, 3, 6, 2, 64, 3)) << "classes differ";
    EXPECT_NE(procedural_render(f, 3, 5, 2, 64, 3), procedural_render(f, 4, 5, 2, 64, 3)) << "seeds differ";
  }
  // every build (64-bit, -m32, AVX2, any compiler flags the project uses) draws these bytes
  EXPECT_EQ(procedural_crc(tv::ProceduralFamily::Fractal), 3887116662u);
  EXPECT_EQ(procedural_crc(tv::ProceduralFamily::DeadLeaves), 3845661822u);
}

TEST(Procedural, PicturesAreNotBlankAndCoverTheirCanvas) {
  for (tv::ProceduralFamily f : {tv::ProceduralFamily::Fractal, tv::ProceduralFamily::DeadLeaves})
    for (int cls = 0; cls < 16; ++cls) {
      const std::vector<uint8_t> img = procedural_render(f, 1, cls, 0, 64, 1);
      std::set<uint8_t> levels(img.begin(), img.end());
      EXPECT_GE(levels.size(), 4u) << tv::procedural_family_name(f) << " class " << cls;
      // the picture's four quarters are not all alike: something is drawn in the middle of it
      int lit = 0;
      for (uint8_t v : img) lit += v != img[0];
      EXPECT_GT(lit, 64 * 64 / 20) << tv::procedural_family_name(f) << " class " << cls;
      EXPECT_NE(img[0], 0xAB);  // every pixel was written (the buffer's fill is gone)
    }
}

TEST(Procedural, FamilyNamesRoundTrip) {
  for (tv::ProceduralFamily f : {tv::ProceduralFamily::Fractal, tv::ProceduralFamily::DeadLeaves}) {
    tv::ProceduralFamily back;
    ASSERT_TRUE(tv::parse_procedural_family(tv::procedural_family_name(f), &back));
    EXPECT_EQ(back, f);
  }
  tv::ProceduralFamily x;
  EXPECT_FALSE(tv::parse_procedural_family("mandelbrot", &x));
}
