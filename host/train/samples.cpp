#include "host/train/samples.h"

namespace tvh {

namespace {

const uint8_t* ds_image(void* ctx, int i) {
  return ((const Dataset*)ctx)->image((size_t)i);
}
int ds_label(void* ctx, int i) {
  return ((const Dataset*)ctx)->labels[(size_t)i];
}

}  // namespace

tv::SampleSource source_of(const Dataset& ds) {
  tv::SampleSource s;
  s.ctx = (void*)&ds;
  s.image = ds_image;
  s.label = ds_label;
  return s;
}

}  // namespace tvh
