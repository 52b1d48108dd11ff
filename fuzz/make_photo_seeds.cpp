// Writes the seed corpora of fuzz_image and fuzz_zip: real JPEGs (baseline, progressive, gray, CMYK,
// with EXIF orientations in both byte orders) and PNGs (every layout, 8/16-bit, interlaced, eXIf) to
// argv[1], and small zip datasets of them (nested folders, junk, an unsafe name) to argv[2].
#include <zip.h>

#include <cstdio>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "photo_fixture.h"

namespace {

void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::vector<uint8_t>>>& entries) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) return;
  for (const auto& [name, bytes] : entries) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    if (zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8) < 0) zip_source_free(src);
  }
  zip_close(z);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_photo_seeds IMAGE_CORPUS_DIR ZIP_CORPUS_DIR\n");
    return 2;
  }
  const std::string images = argv[1], zips = argv[2];
  const int w = 24, h = 16;
  const auto rgb = tvtest::quadrant_picture(w, h, true);
  const auto rgba = tvtest::to_rgba(rgb, w, h);
  std::vector<uint8_t> gray((size_t)w * h);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = rgb[3 * i];
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  files.push_back({"baseline.jpg", tvh::encode_jpeg(rgb.data(), w, h, 3, 80)});
  files.push_back({"progressive.jpg", tvh::encode_jpeg(rgb.data(), w, h, 3, 80, true)});
  files.push_back({"gray.jpg", tvh::encode_jpeg(gray.data(), w, h, 1, 80)});
  files.push_back({"cmyk.jpg", tvtest::encode_cmyk_jpeg(rgb, w, h)});
  files.push_back({"exif6-ii.jpg", tvtest::with_exif_orientation(files[0].second, 6)});
  files.push_back({"exif3-mm.jpg", tvtest::with_exif_orientation(files[0].second, 3, true)});
  const tvtest::PngKind kinds[] = {tvtest::PngKind::Gray, tvtest::PngKind::GrayAlpha, tvtest::PngKind::Rgb,
                                   tvtest::PngKind::Rgba, tvtest::PngKind::Palette,   tvtest::PngKind::PaletteTrns};
  int k = 0;
  for (tvtest::PngKind kind : kinds) {
    const bool palette = kind == tvtest::PngKind::Palette || kind == tvtest::PngKind::PaletteTrns;
    files.push_back({"png" + std::to_string(k) + ".png", tvtest::encode_png(rgba, w, h, kind, 8, k % 8 + 1, k % 2)});
    if (!palette) files.push_back({"png16-" + std::to_string(k) + ".png", tvtest::encode_png(rgba, w, h, kind, 16)});
    ++k;
  }
  for (const auto& [name, bytes] : files) tvh::write_file_atomic(images + "/" + name, bytes);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> entries;
  for (size_t i = 0; i < files.size(); ++i) {
    entries.push_back({std::string(i % 2 ? "photos/b/" : "photos/a/nested/") + files[i].first, files[i].second});
  }
  entries.push_back({"photos/a/.DS_Store", {0, 0, 0, 1}});
  entries.push_back({"__MACOSX/photos/a/._x.jpg", {0, 5, 22, 7}});
  entries.push_back({"photos/b/notes.txt", {'h', 'i'}});
  entries.push_back({"../escape.jpg", files[0].second});
  write_zip(zips + "/dataset.zip", entries);
  write_zip(zips + "/flat.zip", {{"a/x.jpg", files[0].second}, {"b/y.png", files[8].second}});
  return 0;
}
