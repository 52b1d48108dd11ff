// What this firmware is built for. Change the labels to your classes (they are also the folder
// names under /images on the SD card), then rebuild.
#pragma once

// One string per class, in label order (0, 1, ...): 2 to 16 classes.
#define TV_CLASS_LABELS "0Blank", "1Circle"

// Model and training recipe: "webmcu" (the reference network, reads the reference's myWeights.bin)
// or "tinyvision" (our depthwise-separable network).
#define TV_PRESET "webmcu"

// Training epochs; 0 = the preset's recipe (20 for webmcu).
#define TV_EPOCHS 0

// microSD chip select (21 on the XIAO ESP32-S3 Sense expansion board).
#define TV_SD_CS 21

// To bake a trained model into the firmware (used when the card has none), build with
//   -DTV_BAKED_HEADER=\"/absolute/path/model.h\"
// where model.h is what tvexport (or the board itself, /header/model.h) wrote.
