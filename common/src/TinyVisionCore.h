// Arduino entry header of the TinyVision core library: the Arduino builder finds a library through
// a header at the top of its src/ folder. Including it pulls in the core's public headers.
#pragma once
#include "tv/blob.h"
#include "tv/crc32.h"
#include "tv/header_writer.h"
#include "tv/image.h"
#include "tv/int8/q8_model.h"
#include "tv/model.h"
#include "tv/net.h"
#include "tv/presets.h"
#include "tv/raw_weights.h"
#include "tv/train_loop.h"
#include "tv/train_session.h"
