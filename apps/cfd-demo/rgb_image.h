// RgbImage: an 8-bit RGB picture, written to and read from PNG with libpng's simplified API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "colour_map.h"

namespace lp::cfd {

class RgbImage {
 public:
  RgbImage() = default;
  RgbImage(int width, int height, Rgb fill = {0, 0, 0});

  int width() const { return width_; }
  int height() const { return height_; }
  Rgb pixel(int x, int y) const;
  void set_pixel(int x, int y, Rgb colour);
  // Copies `tile` with its top-left corner at (x, y); the parts outside this image are cut off.
  void paste(const RgbImage& tile, int x, int y);

  // Variance of the luminance (Rec. 709 weights, 0..255) over a rectangle: 0 for a blank picture.
  double luminance_variance(int x0, int y0, int x1, int y1) const;
  double luminance_variance() const { return luminance_variance(0, 0, width_, height_); }
  double mean_luminance(int x0, int y0, int x1, int y1) const;

  // Throws std::runtime_error with libpng's message on failure.
  void write_png(const std::string& path) const;
  static RgbImage read_png(const std::string& path);

 private:
  double luminance(int x, int y) const;

  int width_ = 0;
  int height_ = 0;
  std::vector<uint8_t> pixels_;  // row-major from the top row, 3 bytes a pixel
};

}  // namespace lp::cfd
