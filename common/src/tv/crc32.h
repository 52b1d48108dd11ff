// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {
// Continues a CRC: crc32(crc32(0, a), b) == crc32(0, a + b).
uint32_t crc32(uint32_t crc, const void* data, size_t size);
}  // namespace tv
