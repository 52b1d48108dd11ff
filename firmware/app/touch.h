// The touch-pad gesture reader: raw pad readings in, "next" or "select" out.
//
// Behaviour of the reference firmware, with its constants named: a press starts when the reading
// rises above kTouchPressThreshold and ends when it falls below kTouchReleaseThreshold (hysteresis);
// a press that starts less than kTouchDebounceMs after the previous release is ignored; taps are
// counted from the first tap for kTapWindowMs; when the window has passed and the pad is released,
// 1-2 taps give Next and kSelectTaps or more give Select (the reference calls it a "long press").
// Added here: a gesture's first press held for kLongPressMs gives Hold at once, while the finger is still
// down (its release is then no tap); Infer opens its class picker with it, elsewhere it counts as Next.
#pragma once
#include <stdint.h>

namespace tvfw {

constexpr int kTouchPressThreshold = 1100;
constexpr int kTouchReleaseThreshold = 900;
constexpr uint32_t kTouchDebounceMs = 50;
constexpr uint32_t kTapWindowMs = 800;
constexpr int kSelectTaps = 3;
constexpr uint32_t kTouchPollMs = 20;  // how often the pad is read (by the HAL's tick)
// A held press: longer than a tap's window, so a slow tap is never taken for one.
constexpr uint32_t kLongPressMs = 1000;

enum class Gesture : uint8_t { None = 0, Next = 1, Select = 2, Hold = 3 };

class TouchReader {
 public:
  // Feeds one reading taken at time now_ms; returns the gesture completed by it, if any.
  Gesture update(uint32_t now_ms, int raw);
  // Forgets taps in progress (used when a mode starts); a press still held then counts for nothing.
  void reset();
  // Taps of the last completed gesture (for messages).
  int last_taps() const { return last_taps_; }

 private:
  bool touching_ = false;
  int taps_ = 0;
  uint32_t press_ms_ = 0;  // when the press in progress started
  uint32_t first_tap_ms_ = 0;
  uint32_t last_release_ms_ = 0;
  bool released_once_ = false;
  int last_taps_ = 0;
};

}  // namespace tvfw
