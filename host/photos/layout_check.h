// The likely mistakes in pointing a tool at a dataset, found from the listing before any image is
// decoded: the parent of a dataset (one folder whose sub-folders are the classes), one class folder of
// a photo library (class folders named like a library's years, months or camera folders), images lying
// beside the class folders, one class holding most of the images.
#pragma once
#include <string>
#include <vector>

#include "host/photos/dataset.h"

namespace tvh {

// True when a folder name looks like one a phone, camera or photo app makes rather than a class: a year
// (2024), a month or day (2024-05, 2024_05_17, 20240517), DCIM, a DCF camera folder (100APPLE,
// 101_PANA, 100CANON) or a library folder (Camera, Camera Roll, Screenshots, WhatsApp Images, ...).
bool looks_like_photo_library_folder(const std::string& name);

// What the layout check needs beyond the listing.
struct LayoutCheck {
  bool classes_given = false;  // --classes named the classes: the user meant them, no refusal for names
  bool needs_classes = true;   // training needs at least two classes (an --init model may bring its own)
};

// Refuses (tvh::Error, one sentence with "did you mean ...?") the listings that cannot be what the user
// meant: a single class folder whose sub-folders hold the images (the parent of a dataset: the
// sub-folder is suggested), or class folders that all look like a photo library's (the folder holding
// the dataset path and its siblings is suggested; --classes overrides). Returns warnings, one sentence
// each, for the weaker signs: some class folders named like a library's, images lying directly beside
// the class folders, one class holding most of the images.
std::vector<std::string> check_layout(const DatasetListing& listing, const LayoutCheck& check);

}  // namespace tvh
