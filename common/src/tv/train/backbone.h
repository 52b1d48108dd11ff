// Starting a model from a backbone: a network of the same preset pretrained on images the project draws
// itself (tv/image/procedural.h), whose pretraining classes mean nothing. Its layers' weights are the
// start; the logits' dense layer (imprint_layer) is dropped and made again for the new classes, by
// imprinting (tv/train/imprint.h) and then training.
//
// Device-safe: no allocation, no exceptions, float only.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/status.h"

namespace tv {

// Where training starts: He-init (scratch) or a backbone; Auto picks by backbone_helps().
enum class StartMode : uint8_t { Scratch = 0, Backbone = 1, Auto = 2 };
// "scratch", "backbone", "auto"; parse_start_mode is its inverse (false when unknown).
const char* start_mode_name(StartMode mode);
bool parse_start_mode(const char* text, StartMode* mode);

// True when `target` is `backbone`'s network with other classes: the same input, the same layers with
// the same settings, every layer's parameters the same size except the logits' dense layer's rows.
bool backbone_fits(const ModelPlan& backbone, const ModelPlan& target);

// The target's parameters from the backbone's: every layer's as they are, the logits' dense layer's
// weights and biases zero (imprint_classes fills them). InvalidArgument when !backbone_fits or a
// pointer is null; `params` holds target.param_count floats.
Status backbone_params(const ModelPlan& backbone, const float* backbone_params, const ModelPlan& target, float* params);

// The head of a backbone start (the logits' dense layer of `plan`): every class's row imprinted from its
// photos' features in class order (imprint_class: features, labels, n, scratch as there). A class that
// cannot be imprinted (no photo, or its photos' features no different from the others') keeps a zero row
// for training to learn; a non-finite feature or logit stops it (NonFiniteActivation, layer = the class).
Status imprint_head(const ModelPlan& plan, float* params, const float* features, const int* labels, int n,
                    float* scratch);

// The rule Auto follows, the same on the PC and the board: start from the backbone when the fewest
// photos of a class is at most kBackboneMaxPhotosPerClass, and when a backbone is built in for the
// preset's network at this input (tv/backbones). Measured in docs/few-shot.md: at 5, 10 and 20 photos per
// class the backbone gains 9.5, 7.3 and 4.7 points on webmcu-b's photos, costs 0.4-1.0 on the drawn
// shapes; past 20 nothing was measured, so scratch.
constexpr int kBackboneMaxPhotosPerClass = 20;
bool backbone_helps(int fewest_photos_per_class);

}  // namespace tv
