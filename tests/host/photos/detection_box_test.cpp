// tvh::orient_box: a box follows the pixels tvh::apply_orientation moves, for all 8 EXIF orientations.
#include "host/photos/detection_box.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "host/photos/image.h"

namespace {

// A w x h gray image, 0 everywhere but the pixels [x0, x1) x [y0, y1), which are 255.
tvh::Image detbox_painted_image(int w, int h, int x0, int y0, int x1, int y1) {
  tvh::Image img;
  img.width = w;
  img.height = h;
  img.channels = 1;
  img.pixels.assign((size_t)w * h, 0);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) img.pixels[(size_t)y * w + x] = 255;
  }
  return img;
}

// The normalised box around the image's 255 pixels.
tvh::DetectionBox detbox_painted_box(const tvh::Image& img) {
  int x0 = img.width, y0 = img.height, x1 = 0, y1 = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      if (img.pixels[(size_t)y * img.width + x] != 255) continue;
      x0 = std::min(x0, x);
      y0 = std::min(y0, y);
      x1 = std::max(x1, x + 1);
      y1 = std::max(y1, y + 1);
    }
  }
  tvh::DetectionBox b;
  b.cx = (x0 + x1) * 0.5f / img.width;
  b.cy = (y0 + y1) * 0.5f / img.height;
  b.w = (float)(x1 - x0) / img.width;
  b.h = (float)(y1 - y0) / img.height;
  return b;
}

TEST(OrientBox, FollowsThePixelsForAllEightOrientations) {
  // An off-centre, non-square box in a non-square photo, so that every mirror and swap shows.
  const tvh::Image stored = detbox_painted_image(40, 30, 4, 6, 14, 26);
  tvh::DetectionBox box = detbox_painted_box(stored);
  box.label = 3;
  for (int orientation = 1; orientation <= 8; ++orientation) {
    SCOPED_TRACE(orientation);
    const tvh::DetectionBox want = detbox_painted_box(tvh::apply_orientation(stored, orientation));
    const tvh::DetectionBox got = tvh::orient_box(box, orientation);
    EXPECT_EQ(got.label, 3);
    EXPECT_NEAR(got.cx, want.cx, 1e-6);
    EXPECT_NEAR(got.cy, want.cy, 1e-6);
    EXPECT_NEAR(got.w, want.w, 1e-6);
    EXPECT_NEAR(got.h, want.h, 1e-6);
  }
}

TEST(OrientBox, OutsideOneToEightLeavesTheBoxAlone) {
  tvh::DetectionBox box;
  box.cx = 0.2f;
  box.cy = 0.7f;
  box.w = 0.1f;
  box.h = 0.3f;
  for (int orientation : {0, 1, 9, -1}) {
    const tvh::DetectionBox got = tvh::orient_box(box, orientation);
    EXPECT_EQ(got.cx, box.cx);
    EXPECT_EQ(got.cy, box.cy);
    EXPECT_EQ(got.w, box.w);
    EXPECT_EQ(got.h, box.h);
  }
}

}  // namespace
