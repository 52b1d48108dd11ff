// The card's training images (train_images.cpp lists and decodes them; train.cpp trains on them).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "config.h"

namespace tvfw {

// The card's training images: names in one pool, grouped by class, sorted within a class; and what
// the class folders hold that training cannot use.
struct ImageList {
  char* pool = nullptr;
  size_t pool_cap = 0, pool_used = 0;
  uint32_t* name_at = nullptr;  // offset of image i's name in pool
  int* label = nullptr;
  int cap = 0, count = 0;
  bool overflow = false;
  int current_label = 0;
  int per_class[kMaxClasses] = {};  // JPEG names found by the counting pass
  int subdirs = 0, others = 0;      // sub-folders, files that are not JPEG
  char first_subdir[kMaxLabelLength + 1] = {0}, first_other[48] = {0};
  int subdir_class = 0, other_class = 0;
};

}  // namespace tvfw
