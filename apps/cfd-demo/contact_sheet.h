// ContactSheet: several pictures of one size laid out in a grid on one picture, in order, left to
// right then top to bottom, with a thin light border between them.
#pragma once

#include <string>
#include <vector>

#include "rgb_image.h"

namespace lp::cfd {

class ContactSheet {
 public:
  static constexpr int kGap = 4;  // pixels between tiles and around the edge
  static constexpr Rgb kBackground = {235, 235, 235};

  static RgbImage compose(const std::vector<RgbImage>& tiles, int columns);
  // Up to `max_tiles` of the PNG files, evenly spaced, including the first and
  // the last (only the last if max_tiles is 1).
  static std::vector<std::string> pick(const std::vector<std::string>& paths, int max_tiles);
};

}  // namespace lp::cfd
