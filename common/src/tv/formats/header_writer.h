// The one C-header writer: a decoded .tvb blob -> a C header, streamed as text into a sink.
//
// Device-safe (no heap, no snprintf, no I/O): the firmware writes the same header to its SD card
// after training on the device, and it must be byte-identical to what tvexport writes on the host.
// Numbers are formatted by the integer routines below, which are exact (correctly rounded on the
// exact binary value, as glibc's printf), so host and device produce the same bytes.
//
// Two styles:
//  - TinyVision (write_tinyvision_header): include guard and identifiers from a prefix; a banner with
//    the tool, its version and the blob's CRC-32 (no timestamp: same blob -> same header); #defines for
//    the input, classes and exact arena sizes; the labels; every tensor as a named, 16-byte-aligned
//    const array (for people to read); and the complete blob as PREFIX_blob, which is what the
//    firmware decodes (blob_decode), so a baked model is validated exactly like an SD-card blob.
//  - webmcu (write_webmcu_header_raw): the reference firmware's myWeights.h, byte for byte its shape
//    (CRLF lines, "%.6f" + "f", 8 values per line), from raw myWeights.bin bytes (tv::raw_weights_export).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/c_text.h"
#include "tv/float_text.h"
#include "tv/formats/raw_weights.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/status.h"

namespace tv {

struct HeaderOptions {
  const char* prefix = "TV_MODEL";  // a C identifier; the include guard is its upper-case form + "_H"
  const char* tool = "tvexport";    // named in the banner
  const char* version = "";         // the tool's version (the host passes TV_VERSION)
};

// Writes the TinyVision-style header of a decoded blob. blob_crc is the CRC-32 (zlib crc32) of the
// blob's bytes [blob.base, blob.base + blob.size); it is checked, then printed in the banner and
// as PREFIX_BLOB_CRC32. `plan` may be null (the writer then plans blob.model itself, which needs
// about sizeof(ModelPlan) of stack); when given it must be the plan of blob.model.
// Refusals (nothing is guaranteed about the partial text already written, so write into a temporary):
//   InvalidArgument (bad prefix or sink), BlobBadCrc (blob_crc does not match),
//   BlobModelMismatch (plan is not blob.model's), plan_model's status for an invalid model, and
//   BadParameter with layer = the tensor's layer, a = tensor index (-1: input scale/offset),
//   b = element index, when a value is infinite or NaN (a C header cannot hold it exactly).
Status write_tinyvision_header(const BlobView& blob, uint32_t blob_crc, const HeaderOptions& opt, const TextSink& sink,
                               const ModelPlan* plan = nullptr);

}  // namespace tv
