#include "touch.h"

namespace tvfw {

void TouchReader::reset() {
  taps_ = 0;  // a press still held (a long press that opened a mode) ends as no tap: the pad's state is kept
  first_tap_ms_ = 0;
  released_once_ = false;
}

Gesture TouchReader::update(uint32_t now, int raw) {
  const bool active = touching_ ? raw > kTouchReleaseThreshold : raw > kTouchPressThreshold;
  if (active && !touching_) {
    if (released_once_ && now - last_release_ms_ < kTouchDebounceMs) return Gesture::None;  // bounce
    touching_ = true;
    press_ms_ = now;
    if (taps_ == 0 || now - first_tap_ms_ >= kTapWindowMs) {
      taps_ = 1;
      first_tap_ms_ = now;
    } else {
      taps_++;
    }
  } else if (!active && touching_) {
    touching_ = false;
    last_release_ms_ = now;
    released_once_ = true;
  }
  if (touching_ && taps_ == 1 && now - press_ms_ >= kLongPressMs) {
    taps_ = 0;  // the gesture is this long press: its release is no tap
    last_taps_ = 1;
    return Gesture::Hold;
  }
  if (taps_ > 0 && !touching_ && now - first_tap_ms_ >= kTapWindowMs) {
    last_taps_ = taps_;
    taps_ = 0;
    return last_taps_ >= kSelectTaps ? Gesture::Select : Gesture::Next;
  }
  return Gesture::None;
}

}  // namespace tvfw
