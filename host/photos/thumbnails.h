// Small JPEG pictures embedded in the HTML report as data: URIs, within a byte budget so the report
// stays small whatever the dataset size.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/jpeg.h"

namespace tvh {

// RFC 4648 base64 of bytes (with "=" padding).
std::string base64(const std::vector<uint8_t>& bytes);

// "data:image/jpeg;base64,..." of the JPEG bytes.
std::string jpeg_data_uri(const std::vector<uint8_t>& jpeg);

// The image scaled down (area average) so that its longer side is at most max_side; unchanged when it
// already fits.
Image shrink_to_fit(const Image& image, int max_side);

// Makes the report's pictures and counts the bytes they take; once `budget` bytes of data URIs are
// spent, every further request returns "" (the caller shows the name alone and says why).
class ThumbnailMaker {
 public:
  ThumbnailMaker(const Dataset& ds, size_t budget_bytes, int max_side = 96)
      : ds_(ds), budget_(budget_bytes), max_side_(max_side) {}
  // Photo i as its file holds it, upright (EXIF), at most max_side pixels a side; "" when over budget or
  // when the file cannot be read again (a photo inside a .zip, or changed since it was decoded).
  std::string original(size_t i);
  // Photo i as the model saw it: the decoded input at its real size (width x height of the dataset).
  std::string model_input(size_t i);
  // Why the last request returned "" (for the page: "(picture left out: ...)").
  const std::string& why() const { return why_; }
  size_t spent() const { return spent_; }
  size_t left_out() const { return left_out_; }  // pictures not embedded because of the budget

 private:
  std::string admit(const std::vector<uint8_t>& jpeg);
  const Dataset& ds_;
  size_t budget_, spent_ = 0, left_out_ = 0;
  std::string why_;
  int max_side_;
};

}  // namespace tvh
