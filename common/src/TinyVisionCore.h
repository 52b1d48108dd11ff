// Arduino entry header of the TinyVision core library: the Arduino builder finds a library through
// a header at the top of its src/ folder. Including it pulls in the core's public headers.
#pragma once
#include "tv/crc32.h"
#include "tv/formats/header_writer.h"
#include "tv/formats/raw_weights.h"
#include "tv/image/image.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"
#include "tv/train/train_loop.h"
#include "tv/train/train_session.h"
