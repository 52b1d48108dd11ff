// Suspect labels (host/train/suspects.h) on constructed out-of-fold predictions: thresholds, floors, ranking,
// a clean set, ties, and bad sizes.
#include "host/train/suspects.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "host/base/error.h"
#include "host/photos/dataset.h"

namespace {

// Appends one photo with label `label` and probabilities `p` (k values).
void add(std::vector<int>* labels, std::vector<float>* probs, int label, std::vector<float> p) {
  labels->push_back(label);
  probs->insert(probs->end(), p.begin(), p.end());
}

// Appends `per_class` photos of each class c with probabilities `rows[c]`.
void add_classes(std::vector<int>* labels, std::vector<float>* probs, int per_class,
                 const std::vector<std::vector<float>>& rows) {
  for (size_t c = 0; c < rows.size(); ++c)
    for (int n = 0; n < per_class; ++n) add(labels, probs, (int)c, rows[c]);
}

// (index, given, suggested) of each suspect, in rank order.
std::vector<std::vector<int>> summary(const std::vector<tvh::SuspectLabel>& s) {
  std::vector<std::vector<int>> out;
  for (const auto& x : s) out.push_back({x.index, x.given, x.suggested});
  return out;
}

}  // namespace

TEST(SuspectLabels, ThresholdsAreTheMeanSelfProbabilityPerClass) {
  std::vector<int> l;
  std::vector<float> p;
  add(&l, &p, 0, {0.9f, 0.1f, 0.0f});
  add(&l, &p, 0, {0.5f, 0.5f, 0.0f});
  add(&l, &p, 1, {0.2f, 0.8f, 0.0f});
  const auto t = tvh::class_thresholds(l, p, 3);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_FLOAT_EQ(t[0], 0.7f);
  EXPECT_FLOAT_EQ(t[1], 0.8f);
  EXPECT_FLOAT_EQ(t[2], 2.f) << "a class without photos is never confident";
}

TEST(SuspectLabels, FloorsAreTheMeanProbabilityOverTheOtherClassesPhotos) {
  std::vector<int> l;
  std::vector<float> p;
  add(&l, &p, 0, {0.5f, 0.25f, 0.25f});
  add(&l, &p, 1, {0.25f, 0.75f, 0.f});
  add(&l, &p, 1, {0.75f, 0.25f, 0.f});
  const auto u = tvh::other_class_means(l, p, 3);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_FLOAT_EQ(u[0], 0.5f) << "class 0 over the two photos of class 1";
  EXPECT_FLOAT_EQ(u[1], 0.25f) << "class 1 over the photo of class 0";
  EXPECT_FLOAT_EQ(u[2], 0.25f / 3) << "class 2 has no photo: over all three";
  const auto only = tvh::other_class_means({0, 0}, {0.5f, 0.5f, 1.f, 0.f}, 2);
  EXPECT_FLOAT_EQ(only[0], -1.f) << "every photo is in class 0: no floor";
  EXPECT_FLOAT_EQ(only[1], 0.25f);
}

TEST(SuspectLabels, CleanSetHasNone) {
  std::vector<int> l;
  std::vector<float> p;
  for (int n = 0; n < 30; ++n) {
    const int c = n % 3;
    const float self = 0.6f + 0.01f * (float)n;
    std::vector<float> v(3, (1 - self) / 2);
    v[(size_t)c] = self;
    add(&l, &p, c, v);
  }
  EXPECT_TRUE(tvh::find_suspect_labels(l, p, 3).empty());
}

TEST(SuspectLabels, FindsAndRanksMislabelledPhotosWorstFirst) {
  std::vector<int> l;
  std::vector<float> p;
  add_classes(&l, &p, 10, {{0.9f, 0.05f, 0.05f}, {0.05f, 0.9f, 0.05f}, {0.05f, 0.05f, 0.9f}});  // cats, dogs, birds
  add(&l, &p, 0, {0.1f, 0.85f, 0.05f});   // 30: a dog in the cat folder, margin 0.75
  add(&l, &p, 1, {0.02f, 0.03f, 0.95f});  // 31: a bird in the dog folder, margin 0.92
  add(&l, &p, 2, {0.3f, 0.3f, 0.4f});     // 32: unsure, no class confident: not suspect
  add(&l, &p, 0, {0.6f, 0.35f, 0.05f});   // 33: a weak cat: below t_cat but nothing else confident
  const auto s = tvh::find_suspect_labels(l, p, 3);
  EXPECT_EQ(summary(s), (std::vector<std::vector<int>>{{31, 1, 2}, {30, 0, 1}}));
  ASSERT_FALSE(s.empty());
  EXPECT_FLOAT_EQ(s[0].p_given, 0.03f);
  EXPECT_FLOAT_EQ(s[0].p_suggested, 0.95f);
}

// A photo whose given class gets less than the model gives that class on other classes' photos is
// flagged even when no other class reaches its threshold (here a class the model is always very sure
// of); a misclassified photo above the floor is not.
TEST(SuspectLabels, BelowTheFloorOfItsClassIsSuspectWithoutAConfidentClass) {
  std::vector<int> l;
  std::vector<float> p;
  add_classes(&l, &p, 10, {{0.9f, 0.f, 0.1f}, {0.1f, 0.9f, 0.f}, {0.1f, 0.f, 0.9f}});
  add(&l, &p, 0, {0.01f, 0.59f, 0.4f});  // 30: p0 far below the floor; 1 and 2 below their thresholds
  add(&l, &p, 0, {0.3f, 0.6f, 0.1f});    // 31: misclassified, p0 above the floor: not suspect
  add(&l, &p, 2, {0.16f, 0.8f, 0.04f});  // 32: p2 below its floor -> 1 (margin 0.76)
  const auto t = tvh::class_thresholds(l, p, 3);
  const auto u = tvh::other_class_means(l, p, 3);
  ASSERT_LT(p[30 * 3 + 1], t[1]);
  ASSERT_LT(p[30 * 3 + 2], t[2]);
  ASSERT_LT(p[32 * 3 + 0], t[0]);
  ASSERT_LT(p[32 * 3 + 1], t[1]);
  ASSERT_LT(p[30 * 3 + 0], u[0]);
  ASSERT_GT(p[31 * 3 + 0], u[0]);
  ASSERT_LT(p[32 * 3 + 2], u[2]);
  const auto s = tvh::find_suspect_labels(l, p, 3);
  EXPECT_EQ(summary(s), (std::vector<std::vector<int>>{{32, 2, 1}, {30, 0, 1}}));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FLOAT_EQ(s[1].p_given, 0.01f);
  EXPECT_FLOAT_EQ(s[1].p_suggested, 0.59f);
}

// Below the floor but no other class more probable (probabilities that do not sum to 1): not suspect,
// there is nothing to suggest.
TEST(SuspectLabels, TheFloorNeedsAMoreProbableClass) {
  std::vector<int> l;
  std::vector<float> p;
  add(&l, &p, 0, {1.f, 0.f});
  add(&l, &p, 0, {0.25f, 0.25f});  // p0 0.25 < u0 0.5, but class 1 is no more probable
  add(&l, &p, 1, {0.5f, 0.5f});    // u0 = 0.5, t1 = 0.5
  add(&l, &p, 1, {0.5f, 0.5f});
  const auto u = tvh::other_class_means(l, p, 2);
  EXPECT_FLOAT_EQ(u[0], 0.5f);
  EXPECT_FLOAT_EQ(u[1], (0.f + 0.25f) / 2);
  EXPECT_TRUE(tvh::find_suspect_labels(l, p, 2).empty()) << "photo 1: nothing more probable to suggest";
}

TEST(SuspectLabels, TiesPickTheLowerClassAndKeepPhotoOrder) {
  std::vector<int> l;
  std::vector<float> p;
  // Exact binary fractions, every threshold 0.5.
  add(&l, &p, 0, {1.f, 0.f, 0.f});
  add(&l, &p, 0, {1.f, 0.f, 0.f});
  add(&l, &p, 0, {0.f, 0.5f, 0.5f});  // 2: classes 1 and 2 tie -> 1; margin 0.5
  add(&l, &p, 0, {0.f, 0.5f, 0.5f});  // 3: the same -> after 2
  add(&l, &p, 1, {0.f, 0.75f, 0.25f});
  add(&l, &p, 1, {0.25f, 0.25f, 0.5f});  // 5: -> 2, margin 0.25
  add(&l, &p, 2, {0.f, 0.25f, 0.75f});
  add(&l, &p, 2, {0.25f, 0.5f, 0.25f});  // 7: -> 1, margin 0.25
  const auto t = tvh::class_thresholds(l, p, 3);
  EXPECT_EQ(t, (std::vector<float>{0.5f, 0.5f, 0.5f}));
  const auto s = tvh::find_suspect_labels(l, p, 3);
  std::vector<int> order, suggested;
  for (const auto& x : s) order.push_back(x.index), suggested.push_back(x.suggested);
  EXPECT_EQ(order, (std::vector<int>{2, 3, 5, 7}));
  EXPECT_EQ(suggested, (std::vector<int>{1, 1, 2, 1}));
}

TEST(SuspectLabels, AtTheThresholdIsConfidentBelowItIsNot) {
  std::vector<int> l;
  std::vector<float> p;
  add(&l, &p, 0, {1.0f, 0.0f});
  add(&l, &p, 0, {0.5f, 0.5f});  // t0 = 0.75
  add(&l, &p, 1, {0.5f, 0.5f});  // t1 = 0.5: photo 1 reaches it exactly
  const auto s = tvh::find_suspect_labels(l, p, 2);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].index, 1);
  EXPECT_EQ(s[0].suggested, 1);
}

TEST(SuspectLabels, RefusesMismatchedInput) {
  EXPECT_THROW(tvh::find_suspect_labels({0, 1}, {0.5f, 0.5f}, 2), tvh::Error);
  EXPECT_THROW(tvh::find_suspect_labels({0, 3}, {0.5f, 0.5f, 0.5f, 0.5f}, 2), tvh::Error);
  EXPECT_THROW(tvh::other_class_means({0, 1}, {0.5f}, 2), tvh::Error);
  EXPECT_THROW(tvh::other_class_means({-1}, {0.5f, 0.5f}, 2), tvh::Error);
  EXPECT_TRUE(tvh::find_suspect_labels({}, {}, 2).empty());
}

TEST(SuspectLabels, TheStderrListPrintsNamesAsOneVisibleLine) {
  // A class folder or photo name holding a newline or a terminal escape is written visibly (tvh::one_line),
  // as the misclassified list writes it: one photo per line, no raw escape reaches the terminal.
  tvh::Dataset ds;
  ds.classes = {"cat\x1b[2J", "dog\nfake: in cat"};
  ds.paths = {"ds/cat\x1b[2J/a\r.jpg", "ds/dog/b.jpg"};
  ds.labels = {0, 1};
  tvh::SuspectLabel s;
  s.index = 0;
  s.given = 0;
  s.suggested = 1;
  s.p_given = 0.05f;
  s.p_suggested = 0.9f;
  const std::string text = tvh::suspects_text(ds, {s});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "a heading and one photo line: " << text;
  EXPECT_NE(text.find(tvh::one_line(ds.classes[1])), std::string::npos) << text;
}
