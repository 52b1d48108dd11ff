// Pretraining images the project draws itself (no photo is needed or stored): two procedural families,
// each class a random system and each image a draw of it, as "Pre-training without Natural Images"
// (FractalDB) and "Learning to See by Looking at Noise" pretrain on.
//   Fractal:    a class is an iterated function system of 2 to kMaxIfsMaps contracting affine maps
//               (parameters uniform in [-1, 1], kept when the attractor fills enough of the picture);
//               an image is the chaos game of that system with one parameter reweighted, a flip, its
//               own placement and colours.
//   DeadLeaves: a class is a distribution of leaves (shape mix, size law, palette, stripes); an image
//               is a pile of leaves drawn from it, each covering the ones before.
// Every pixel comes from the core's splitmix64 and + - * / and sqrtf (correctly rounded everywhere;
// no other libm function), so the bytes are the same on every machine, build and thread count. Device-
// safe: no allocation, the caller hands the output.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

enum class ProceduralFamily : uint8_t { Fractal = 0, DeadLeaves = 1 };

constexpr int kMaxIfsMaps = 6;
constexpr int kLeavesPalette = 6;

struct IfsClass {
  int maps = 0;
  float m[kMaxIfsMaps][6] = {};  // x' = m0 x + m1 y + m4, y' = m2 x + m3 y + m5
  float colour[kMaxIfsMaps][3] = {};
};

struct LeavesClass {
  float shape_weight[3] = {};  // disc, square, triangle
  float min_radius = 0;        // of the picture's side
  float size_decay = 0;        // each size level (x1.25) this many times as likely as the one below
  int levels = 0;
  float palette[kLeavesPalette][3] = {};
  float stripes = 0;  // 0: flat leaves; else the stripes' period (of the picture's side)
};

struct ProceduralClass {
  ProceduralFamily family = ProceduralFamily::Fractal;
  uint64_t key = 0;  // the class's own stream: its images' draws start from it
  IfsClass ifs;
  LeavesClass leaves;
};

// Class `index` of a family, from `seed`: the same class for the same (seed, index) everywhere.
void procedural_class(ProceduralFamily family, uint64_t seed, int index, ProceduralClass* out);

// Image `instance` of a class: h x w x c bytes (c = 1 gray or 3 RGB, HWC) into out.
void procedural_image(const ProceduralClass& cls, uint64_t seed, int instance, int h, int w, int c, uint8_t* out);

// The name of a family ("fractal", "leaves"); parse_procedural_family is its inverse (false when unknown).
const char* procedural_family_name(ProceduralFamily f);
bool parse_procedural_family(const char* name, ProceduralFamily* out);

}  // namespace tv
