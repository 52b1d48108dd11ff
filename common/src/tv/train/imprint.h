// New classes without retraining: weight imprinting (Qi, Brown, Lowe 2018) of the logits' dense layer.
//
// A new class is appended as a new row of the last dense layer (old classes keep their outputs and
// order). Its weights are the L2-normalised mean of its photos' L2-normalised features (the dense
// layer's input) less the mean of the other classes' photos' normalised features (when there are
// any), normalised and scaled to the existing rows' mean norm. ReLU features of all photos share much
// of one direction: the mean alone scores every photo high (measured on webmcu-b and datasets/shapes,
// docs/on-device-learning.md: the difference recognises 2-3x more of the new class's photos). Its
// bias is CALIBRATED: with a naive bias (the mean of the others, or zero) the new row wins on nearly
// every photo. The bias is instead the threshold that best separates, on the photos at hand, the new
// class's photos from the other classes' photos by
//   gap(x) = new_row . f(x) - max over existing classes c of (row_c . f(x) + bias_c):
// the fewest photos on the wrong side, ties broken by the widest margin, the threshold in the middle
// of that margin (the new class wins exactly on the photos with gap(x) > -bias).
//
// Device-safe: no allocation (the caller hands in scratch), no exceptions, float only.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/status.h"

namespace tv {

// The layer imprinting writes: the last layer with weights when it is a Dense layer that produces the
// logits (only in-place layers after it, such as webmcu's Clip; the bias is calibrated on the dense
// layer's outputs); -1 otherwise.
int imprint_layer(const ModelPlan& plan);

// Plans `old` with num_classes classes (>= old's; the logits' dense layer grows by as many rows).
// NotSupported when imprint_layer(old) < 0.
Status plan_with_classes(const ModelPlan& old, int num_classes, ModelPlan* grown);

// The grown model's parameters from the old ones: every layer as before; the logits' dense layer
// keeps rows 0..old-1 and their biases, the new rows and biases are zero. `params` holds
// grown.param_count floats and must not overlap old_params.
void grow_class_params(const ModelPlan& old, const float* old_params, const ModelPlan& grown, float* params);

// Imprints class `cls` of `plan` (a row of imprint_layer's dense layer) into params. features: n rows
// of the dense layer's input (plan.layers[imprint_layer].in.size() floats each), labels: their
// classes. Photos of class cls set the row; photos of classes 0..cls-1 (the rows already there:
// imprint new classes in order) calibrate the bias; photos of other classes are ignored. scratch:
// 2 * n floats. InvalidArgument when class cls has no photo or its features are all zero;
// NonFiniteActivation when a feature or logit is not finite.
Status imprint_class(const ModelPlan& plan, float* params, int cls, const float* features, const int* labels, int n,
                     float* scratch);

// Copies class cls's row and bias of imprint_layer's dense layer from `from` to `to` (both plan's
// layout): a class without photos in an update keeps its row as it was.
void copy_class_row(const ModelPlan& plan, int cls, const float* from, float* to);

// Imprints classes first_new..num_classes-1 in order (each calibrated against the rows before it):
// imprint_class for each; stops at the first refusal (its status, layer = the class).
Status imprint_classes(const ModelPlan& plan, float* params, int first_new, const float* features, const int* labels,
                       int n, float* scratch);

}  // namespace tv
