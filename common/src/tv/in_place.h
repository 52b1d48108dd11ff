// Resetting a large struct where it lies: `*p = T()` first builds a temporary T on the caller's stack
// (ModelPlan 3.6 KB, BlobView 5.5 KB, Q8Model 9 KB: much of the 16 KB the board's loop task has).
#pragma once
#include <new>

namespace tv {

// *p becomes a value-initialized T (every field at its default, the rest zero), with no temporary.
template <class T>
inline void reset_in_place(T* p) {
  p->~T();
  ::new (static_cast<void*>(p)) T();
}

}  // namespace tv
