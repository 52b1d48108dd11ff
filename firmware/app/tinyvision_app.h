// The TinyVision application as an Arduino / PlatformIO library: include this from a sketch.
#pragma once
#include "app.h"
#include "config.h"
#include "hal.h"
#include "link.h"
