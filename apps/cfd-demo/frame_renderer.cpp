#include "frame_renderer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace lp::cfd {

FrameRenderer::FrameRenderer(int zoom)
    : zoom_(zoom), diverging_(ColourMap::cool_warm()), sequential_(ColourMap::lightness_ramp()) {
  if (zoom < 1 || zoom > 16) throw std::invalid_argument("zoom must be in [1, 16]");
}

double FrameRenderer::colour_scale(const std::vector<float>& values) {
  std::vector<float> magnitudes;
  magnitudes.reserve(values.size());
  for (float v : values) {
    if (std::isfinite(v)) magnitudes.push_back(std::fabs(v));
  }
  if (magnitudes.empty()) return 1.0;
  const size_t k = std::min(magnitudes.size() - 1, static_cast<size_t>(kScalePercentile * magnitudes.size()));
  std::nth_element(magnitudes.begin(), magnitudes.begin() + k, magnitudes.end());
  return magnitudes[k] > 0 ? magnitudes[k] : 1.0;
}

RgbImage FrameRenderer::render(const Frame& frame) const {
  const double scale = colour_scale(frame.values);
  const bool signed_field = frame.kind == FieldKind::kVorticity;
  const ColourMap& map = signed_field ? diverging_ : sequential_;
  const int w = static_cast<int>(frame.width), h = static_cast<int>(frame.height);
  RgbImage image(w * zoom_, h * zoom_);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const float v = frame.at(x, y);
      Rgb colour = kNoFluid;
      if (std::isfinite(v)) colour = map.at(signed_field ? 0.5 + 0.5 * v / scale : v / scale);
      const int top = (h - 1 - y) * zoom_;  // image rows run top-down, the flow's y runs up
      for (int dy = 0; dy < zoom_; ++dy) {
        for (int dx = 0; dx < zoom_; ++dx) image.set_pixel(x * zoom_ + dx, top + dy, colour);
      }
    }
  }
  return image;
}

}  // namespace lp::cfd
