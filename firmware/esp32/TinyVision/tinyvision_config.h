// What this firmware starts from when it finds no model. A model on the SD card (/header/model.tvb) or
// baked in (a model.h placed next to this sketch) brings its own network, input size and labels: with
// one of those nothing here needs editing.
#pragma once

// The network of a new model (He-init, trained on the board): "tinyvision" (tvtrain's default, our
// depthwise-separable network) or "webmcu" (the reference network; reads the reference's myWeights.bin).
#define TV_PRESET "tinyvision"

// The classes of a new model, in label order (2 to 16), which are also the folder names under /images
// on the card. Leave it commented out to use the class folders found in /images on the card.
// #define TV_CLASS_LABELS "0Blank", "1Circle"

// Training epochs; 0 = the recipe's (the model's own, or the preset's).
#define TV_EPOCHS 0

// 1: a new model starts from the built-in backbone (the tinyvision network pretrained on drawn images,
// docs/few-shot.md): Learn makes a model from a few photos per class in seconds. 0: from He-init (random).
#define TV_BACKBONE 1

// microSD chip select (21 on the XIAO ESP32-S3 Sense expansion board).
#define TV_SD_CS 21

// To bake a trained model into the firmware (used when the card has none): put the model.h that
// tvexport wrote (or the board's own /header/model.h) next to TinyVision.ino and rebuild.
