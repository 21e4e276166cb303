#include "rgb_image.h"

#include <png.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace lp::cfd {

RgbImage::RgbImage(int width, int height, Rgb fill) : width_(width), height_(height) {
  if (width <= 0 || height <= 0) throw std::invalid_argument("image size must be positive");
  pixels_.resize(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = fill.r;
    pixels_[i + 1] = fill.g;
    pixels_[i + 2] = fill.b;
  }
}

Rgb RgbImage::pixel(int x, int y) const {
  const uint8_t* p = &pixels_[(static_cast<size_t>(y) * width_ + x) * 3];
  return {p[0], p[1], p[2]};
}

void RgbImage::set_pixel(int x, int y, Rgb colour) {
  uint8_t* p = &pixels_[(static_cast<size_t>(y) * width_ + x) * 3];
  p[0] = colour.r;
  p[1] = colour.g;
  p[2] = colour.b;
}

void RgbImage::paste(const RgbImage& tile, int x, int y) {
  const int x0 = std::max(0, x), x1 = std::min(width_, x + tile.width_);
  if (x0 >= x1) return;
  for (int row = std::max(0, y); row < std::min(height_, y + tile.height_); ++row) {
    std::memcpy(&pixels_[(static_cast<size_t>(row) * width_ + x0) * 3],
                &tile.pixels_[(static_cast<size_t>(row - y) * tile.width_ + (x0 - x)) * 3], static_cast<size_t>(x1 - x0) * 3);
  }
}

double RgbImage::luminance(int x, int y) const {
  const Rgb p = pixel(x, y);
  return 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b;
}

double RgbImage::mean_luminance(int x0, int y0, int x1, int y1) const {
  double sum = 0;
  long count = 0;
  for (int y = std::max(0, y0); y < std::min(height_, y1); ++y) {
    for (int x = std::max(0, x0); x < std::min(width_, x1); ++x, ++count) sum += luminance(x, y);
  }
  return count ? sum / count : 0.0;
}

double RgbImage::luminance_variance(int x0, int y0, int x1, int y1) const {
  const double mean = mean_luminance(x0, y0, x1, y1);
  double sum = 0;
  long count = 0;
  for (int y = std::max(0, y0); y < std::min(height_, y1); ++y) {
    for (int x = std::max(0, x0); x < std::min(width_, x1); ++x, ++count) {
      const double d = luminance(x, y) - mean;
      sum += d * d;
    }
  }
  return count ? sum / count : 0.0;
}

void RgbImage::write_png(const std::string& path) const {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width_);
  image.height = static_cast<png_uint_32>(height_);
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, path.c_str(), 0, pixels_.data(), 0, nullptr)) {
    const std::string message = image.message;
    png_image_free(&image);
    throw std::runtime_error("writing " + path + ": " + message);
  }
}

RgbImage RgbImage::read_png(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    throw std::runtime_error("reading " + path + ": " + image.message);
  }
  image.format = PNG_FORMAT_RGB;
  RgbImage result(static_cast<int>(image.width), static_cast<int>(image.height));
  if (!png_image_finish_read(&image, nullptr, result.pixels_.data(), 0, nullptr)) {
    const std::string message = image.message;
    png_image_free(&image);
    throw std::runtime_error("decoding " + path + ": " + message);
  }
  return result;
}

}  // namespace lp::cfd
