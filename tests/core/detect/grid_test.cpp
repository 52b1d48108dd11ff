// Detection's grid (tv/detect/grid.h): targets from boxes and objects from hand-made grids of probabilities.
#include "tv/detect/grid.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

// A grid_h x grid_w grid of n channels, every cell background (p0 = 1).
struct ProbGrid {
  int h, w, n;
  std::vector<float> p;
  ProbGrid(int h_, int w_, int n_) : h(h_), w(w_), n(n_), p((size_t)h_ * w_ * n_, 0.f) {
    for (int c = 0; c < h * w; ++c) p[(size_t)c * n] = 1.f;
  }
  // Cell (row, col): object channel k (1..n-1) at probability q, background the rest.
  void set(int row, int col, int k, float q) {
    float* c = &p[((size_t)row * w + col) * n];
    for (int j = 0; j < n; ++j) c[j] = 0.f;
    c[0] = 1.f - q;
    c[k] = q;
  }
  std::vector<tv::GridObject> objects(float threshold, int input_h, int input_w, int max_out = 32) const {
    std::vector<int> scratch(tv::grid_objects_scratch_ints(h, w));
    std::vector<tv::GridObject> out((size_t)max_out);
    const int found =
        tv::grid_objects(p.data(), h, w, n, threshold, input_h, input_w, scratch.data(), out.data(), max_out);
    out.resize((size_t)(found < max_out ? found : max_out));
    return out;
  }
};

TEST(DetectGrid, TargetsMarkTheCellHoldingEachCentre) {
  const tv::DetectBox boxes[] = {{0, 0.05f, 0.05f, 0.1f, 0.1f},  // cell (0, 0)
                                 {2, 0.99f, 0.51f, 0.2f, 0.2f},  // row 2 of 4, last column
                                 {1, 1.0f, 1.0f, 0.1f, 0.1f},    // the corner: the last cell
                                 {1, -0.3f, 0.3f, 0.1f, 0.1f}};  // clamped into column 0, row 1
  std::vector<uint8_t> t(4 * 4, 77);
  EXPECT_EQ(tv::grid_targets(boxes, 4, 4, 4, t.data()), 0);
  std::vector<uint8_t> want(16, 0);
  want[0] = 1;
  want[2 * 4 + 3] = 3;
  want[15] = 2;
  want[1 * 4 + 0] = 2;
  EXPECT_EQ(t, want);
}

TEST(DetectGrid, TwoCentresInOneCellTheSmallerBoxKeepsIt) {
  const tv::DetectBox big_first[] = {{0, 0.1f, 0.1f, 0.5f, 0.5f}, {1, 0.12f, 0.11f, 0.1f, 0.1f}};
  uint8_t t[4];
  EXPECT_EQ(tv::grid_targets(big_first, 2, 2, 2, t), 1);
  EXPECT_EQ(t[0], 2);
  const tv::DetectBox small_first[] = {{1, 0.12f, 0.11f, 0.1f, 0.1f}, {0, 0.1f, 0.1f, 0.5f, 0.5f}};
  EXPECT_EQ(tv::grid_targets(small_first, 2, 2, 2, t), 1);
  EXPECT_EQ(t[0], 2);
  const tv::DetectBox equal[] = {{0, 0.1f, 0.1f, 0.2f, 0.2f}, {1, 0.1f, 0.1f, 0.2f, 0.2f}, {-1, 0.9f, 0.9f, 1, 1}};
  EXPECT_EQ(tv::grid_targets(equal, 3, 2, 2, t), 1);
  EXPECT_EQ(t[0], 1);  // the first of equal boxes; the negative label is ignored
  EXPECT_EQ(t[3], 0);
}

TEST(DetectGrid, TouchingSameClassCellsAreOneObjectAtTheirWeightedCentroid) {
  ProbGrid g(6, 6, 3);
  g.set(1, 1, 1, 0.9f);
  g.set(2, 2, 1, 0.6f);  // diagonal: 8-connected to (1, 1)
  g.set(1, 4, 2, 0.8f);  // another class
  g.set(1, 5, 1, 0.7f);  // touches the class-2 cell, but is class 1: its own object
  g.set(4, 0, 1, 0.4f);  // under the threshold
  const auto objs = g.objects(0.5f, 48, 48);
  ASSERT_EQ(objs.size(), 3u);
  EXPECT_EQ(objs[0].label, 0);
  EXPECT_EQ(objs[0].cells, 2);
  EXPECT_FLOAT_EQ(objs[0].prob, 0.9f);
  // centres 12 and 20 pixels (cells of 8), weighted 0.9 and 0.6
  EXPECT_NEAR(objs[0].x, (0.9f * 12 + 0.6f * 20) / 1.5f, 1e-4);
  EXPECT_NEAR(objs[0].y, (0.9f * 12 + 0.6f * 20) / 1.5f, 1e-4);
  EXPECT_EQ(objs[1].label, 1);
  EXPECT_NEAR(objs[1].x, 36, 1e-4);
  EXPECT_EQ(objs[2].label, 0);
  EXPECT_NEAR(objs[2].x, 44, 1e-4);
  EXPECT_EQ(objs[2].cells, 1);
  // a lower threshold adds the 0.4 cell as a fourth object
  EXPECT_EQ(g.objects(0.4f, 48, 48).size(), 4u);
}

TEST(DetectGrid, ARingOfCellsIsOneObjectAndCountsPastMaxOut) {
  ProbGrid g(5, 5, 2);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 5; ++c)
      if (r == 0 || r == 4 || c == 0 || c == 4) g.set(r, c, 1, 0.75f);
  auto objs = g.objects(0.5f, 40, 40);
  ASSERT_EQ(objs.size(), 1u);
  EXPECT_EQ(objs[0].cells, 16);
  EXPECT_NEAR(objs[0].x, 20, 1e-4);  // a symmetric ring: the centre
  EXPECT_NEAR(objs[0].y, 20, 1e-4);

  ProbGrid many(4, 8, 2);
  for (int c = 0; c < 8; c += 2) many.set(0, c, 1, 0.9f);
  std::vector<int> scratch(tv::grid_objects_scratch_ints(4, 8));
  tv::GridObject out[2];
  EXPECT_EQ(tv::grid_objects(many.p.data(), 4, 8, 2, 0.5f, 32, 64, scratch.data(), out, 2), 4);
  EXPECT_NEAR(out[1].x, 2.5f * 8, 1e-4);  // a non-square input: x steps by 64 / 8
}

TEST(DetectGrid, NothingFromBackgroundNaNOrNonsense) {
  ProbGrid g(3, 3, 4);
  EXPECT_TRUE(g.objects(0.5f, 24, 24).empty());
  g.p[4 * 4 + 2] = std::nanf("");
  EXPECT_TRUE(g.objects(0.5f, 24, 24).empty());
  std::vector<int> scratch(18);
  tv::GridObject out[1];
  EXPECT_EQ(tv::grid_objects(g.p.data(), 3, 3, 1, 0.5f, 24, 24, scratch.data(), out, 1), 0);
  EXPECT_EQ(tv::grid_objects(g.p.data(), 0, 3, 4, 0.5f, 24, 24, scratch.data(), out, 1), 0);
  EXPECT_EQ(tv::grid_objects_scratch_ints(0, 5), 0u);
  // a threshold of 0 still gives finite centroids (cells weigh at least 1e-30)
  ProbGrid z(2, 2, 2);
  for (float& v : z.p) v = 0.f;
  EXPECT_TRUE(z.objects(0.f, 16, 16).empty());  // a probability of 0 is never an object
  for (int c = 0; c < 4; ++c) z.p[(size_t)c * 2 + 1] = 1e-30f;
  const auto objs = z.objects(0.f, 16, 16);
  ASSERT_EQ(objs.size(), 1u);
  EXPECT_TRUE(std::isfinite(objs[0].x));
}

// One cell's class, the rule grid_objects decodes every cell by (and tvquant compares float and int8 grids by).
TEST(DetectGrid, ACellsClassIsItsMostProbableObjectChannelAtTheThreshold) {
  const float background[] = {0.9f, 0.05f, 0.05f};
  EXPECT_EQ(tv::grid_cell_class(background, 3, 0.5f), -1);
  const float second[] = {0.3f, 0.1f, 0.6f};
  EXPECT_EQ(tv::grid_cell_class(second, 3, 0.5f), 1);
  EXPECT_EQ(tv::grid_cell_class(second, 3, 0.6f), 1);  // reaching the threshold is enough
  EXPECT_EQ(tv::grid_cell_class(second, 3, 0.61f), -1);
  const float tie[] = {0.f, 0.5f, 0.5f};
  EXPECT_EQ(tv::grid_cell_class(tie, 3, 0.5f), 0);  // the first on ties
  // below the threshold the most probable object still loses to the background, even when background is lower
  const float split[] = {0.2f, 0.4f, 0.4f};
  EXPECT_EQ(tv::grid_cell_class(split, 3, 0.5f), -1);
  EXPECT_EQ(tv::grid_cell_class(split, 1, 0.5f), -1);  // no object channel
  // grid_objects decodes each cell by it
  ProbGrid g(1, 3, 3);
  g.set(0, 0, 2, 0.7f);
  g.set(0, 2, 1, 0.4f);
  const auto objs = g.objects(0.5f, 8, 24);
  ASSERT_EQ(objs.size(), 1u);
  EXPECT_EQ(objs[0].label, tv::grid_cell_class(&g.p[0], 3, 0.5f));
  EXPECT_EQ(tv::grid_cell_class(&g.p[6], 3, 0.5f), -1);
}

std::string line_of(const std::vector<tv::GridObject>& objects, float sx, float sy, int cap = 256) {
  const char* names[] = {"cup", "mouse"};
  std::vector<char> out((size_t)cap, 'x');
  const int n = tv::objects_line(objects.data(), (int)objects.size(), names, 2, sx, sy, out.data(), cap);
  EXPECT_EQ((size_t)n, std::string(out.data()).size());
  return out.data();
}

TEST(DetectGrid, TheObjectsLineCountsPerClassThenNamesEachObjectInThePhotosPixels) {
  tv::GridObject cup1{0, 0.934f, 20.f, 25.f, 2}, mouse{1, 0.5549f, 4.f, 44.f, 1}, cup2{0, 1.f, 61.2f, 0.4f, 1};
  // the photo is 1.5 times the input's width and 2 times its height
  EXPECT_EQ(line_of({cup1, mouse, cup2}, 1.5f, 2.f),
            "2 cup, 1 mouse: cup (30,50) 0.93, mouse (6,88) 0.55, cup (92,1) 1.00");
  EXPECT_EQ(line_of({}, 1.f, 1.f), "no objects");
  tv::GridObject stranger{7, 0.05f, 1.f, 1.f, 1};  // a label the names do not cover
  EXPECT_EQ(line_of({stranger}, 1.f, 1.f), "1 ?: ? (1,1) 0.05");
}

TEST(DetectGrid, AnObjectsLineTooLongForItsBufferEndsInDotsAndNeverOverruns) {
  std::vector<tv::GridObject> many(50, tv::GridObject{1, 0.5f, 10.f, 10.f, 1});
  const std::string full = line_of(many, 1.f, 1.f, 4096);
  EXPECT_EQ(full.substr(0, 10), "50 mouse: ");
  for (int cap : {1, 2, 4, 5, 40}) {
    std::vector<char> out((size_t)cap + 8, '#');
    const char* names[] = {"cup", "mouse"};
    const int n = tv::objects_line(many.data(), 50, names, 2, 1.f, 1.f, out.data(), cap);
    EXPECT_LT(n, cap);
    EXPECT_EQ(out[(size_t)n], 0);
    EXPECT_EQ(out[(size_t)cap], '#');  // nothing past the buffer
    if (cap >= 5) EXPECT_EQ(std::string(out.data()).substr((size_t)n - 3), "...");
    if (cap >= 5) EXPECT_EQ(std::string(out.data(), (size_t)n - 3), full.substr(0, (size_t)n - 3));
  }
}

}  // namespace
