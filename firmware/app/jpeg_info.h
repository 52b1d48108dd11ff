// Reading a JPEG's size from its header (SOFn marker) without decoding it.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tvfw {

// Finds the frame header of the JPEG in data[0 .. size) and returns its width and height.
// False when the bytes are not a JPEG or end before the frame header.
bool jpeg_dimensions(const uint8_t* data, size_t size, int* width, int* height);

}  // namespace tvfw
