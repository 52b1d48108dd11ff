// Detection on a grid (FOMO's way, issue 27): the network's output is a grid of cells, each 1/8 of the input
// on a side, holding logits for background (channel 0) and each object class (1..K). The three steps every
// tool and the board share live here: the training targets from labelled boxes, and the objects (their
// class, probability and centroid) from a grid of probabilities.
//
// No allocation, no I/O: the caller hands in the buffers (grid_objects_scratch_ints says how many ints).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// A grid cell covers kGridStride x kGridStride input pixels: the input's sides are multiples of it.
constexpr int kGridStride = 8;
// The detection inputs: sides from 48 to 240 pixels, multiples of kGridStride.
constexpr int kDetectMinSide = 48;
constexpr int kDetectMaxSide = 240;
// The threshold a detector decodes with unless its blob says otherwise.
constexpr float kDefaultDetectThreshold = 0.5f;

// A labelled box: its object class (0..K-1) and its centre and size as fractions of the photo's width and height.
struct DetectBox {
  int label = 0;
  float cx = 0.f, cy = 0.f, w = 0.f, h = 0.f;
};

// The grid cell (column, row) holding the point (fx, fy) given as fractions of the input: points on the
// right or bottom edge (1.0) belong to the last cell; points outside [0, 1] are clamped.
int grid_cell_of(float fx, float fy, int grid_h, int grid_w);

// The training targets of one photo: target[grid_h * grid_w] (row-major) gets 0 (background) everywhere
// and label + 1 in the cell holding each box's centre. Two centres in one cell: the smaller box (by area)
// keeps it, the first of equal ones; a box whose label is negative or above 254 is ignored. Returns the
// number of boxes that lost their cell this way (a grid too coarse for the objects says so).
int grid_targets(const DetectBox* boxes, int n, int grid_h, int grid_w, uint8_t* target);

// An object found on the grid: touching (8-connected) cells of one class whose probability passes the
// threshold.
struct GridObject {
  int label = 0;     // object class, 0..K-1
  float prob = 0.f;  // the highest probability of its cells
  float x = 0.f;     // centroid in input pixels: the cells' centres weighted by their probabilities
  float y = 0.f;
  int cells = 0;  // the cells it covers
};

// The object class (0..n-2) of one cell's n probabilities (channel 0 background): its most probable object
// channel (the first on ties) when that reaches the threshold; -1 (background) otherwise. grid_objects's rule.
int grid_cell_class(const float* cell_probs, int n, float threshold);

// The ints grid_objects needs as scratch for a grid_h x grid_w grid.
size_t grid_objects_scratch_ints(int grid_h, int grid_w);

// The objects of a grid of probabilities probs[grid_h * grid_w * n] (HWC, channel 0 background, per-cell
// softmax). A cell is of class k - 1 when k is its most probable object channel (1..n-1, the first on ties)
// and p_k >= threshold (a threshold below 1e-30, or NaN, is taken as 1e-30); touching cells (8-connected) of one class
// are one object. Objects are numbered in the raster order of their first cell; the first max_out are written to out.
// Returns how many there are (all of them, also past max_out); 0 for a grid or n that makes no sense (n < 2, a side <
// 1). scratch: grid_objects_scratch_ints(grid_h, grid_w) ints. Cell (col, row)'s centre is at
// ((col + 0.5) * input_w / grid_w, (row + 0.5) * input_h / grid_h).
int grid_objects(const float* probs, int grid_h, int grid_w, int n, float threshold, int input_h, int input_w,
                 int* scratch, GridObject* out, int max_out);

// How many labelled boxes one photo may have (a dataset with more in one photo is refused when read).
constexpr int kMaxBoxesPerPhoto = 255;

// Right, false alarms and missed objects, and the F1 they make: 2 tp / (2 tp + fp + fn), 1 when all are 0.
struct DetectCounts {
  int tp = 0, fp = 0, fn = 0;
};
// True when a's F1 is higher than b's (compared exactly, in integers).
bool f1_better(const DetectCounts& a, const DetectCounts& b);

// Matches a photo's objects to its labelled boxes (fractions of the photo; objects' centroids in the pixels of
// an input_w x input_h input of the whole photo). An object is right when its centroid falls inside a box of
// its class (edges included). Greedy, the most probable object first (the earlier on ties): it takes the
// unmatched box of its class that holds its centroid, the one whose centre is nearest when several do; each
// box is matched at most once. box_of_object[n] gets each object's box (-1: a false alarm) and box_found[nb]
// 1 for a matched box; both are the caller's. Returns the counts (fn: the boxes left unmatched).
DetectCounts match_objects(const GridObject* objects, int n, const DetectBox* boxes, int nb, int input_h, int input_w,
                           int* box_of_object, uint8_t* box_found);

// One photo's objects as one line of text, the same on the board's serial and in `tvtrain detect`:
//   "2 cup, 1 mouse: cup (31,40) 0.93, cup (80,12) 0.71, mouse (5,60) 0.55"   or   "no objects"
// counts per class in class order, then each object in the order given: its class, its centroid in the
// photo's own pixels (input pixels times scale_x, scale_y, rounded) and its probability (two decimals).
// names[k] names object class k (NUL-terminated, num_names of them; a label outside gives "?"). Writes at
// most cap bytes with the terminating NUL (a line cut short ends in "..."); returns the length written.
int objects_line(const GridObject* objects, int n, const char* const* names, int num_names, float scale_x,
                 float scale_y, char* out, int cap);

}  // namespace tv
