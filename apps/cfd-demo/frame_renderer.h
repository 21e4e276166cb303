// FrameRenderer: turns a frame's field into a colour-mapped picture (y up, as in the flow).
//   vorticity: cool-warm diverging map, symmetric about zero (white = no rotation);
//   speed:     lightness ramp from 0 to the top of the scale.
// The scale is a high percentile of |value| in the frame, so that one spike does not wash the
// picture out; cells with no fluid (NaN) are drawn in a neutral grey.
#pragma once

#include <vector>

#include "colour_map.h"
#include "frame.h"
#include "rgb_image.h"

namespace lp::cfd {

class FrameRenderer {
 public:
  // Share of the |values| below the top of the colour scale (the rest saturate).
  static constexpr double kScalePercentile = 0.99;
  static constexpr Rgb kNoFluid = {96, 96, 96};

  // `zoom`: each cell becomes zoom x zoom pixels (small grids are hard to see at 1:1).
  explicit FrameRenderer(int zoom = 1);

  RgbImage render(const Frame& frame) const;

  // The top of the colour scale for these values: the kScalePercentile-th |value| among the finite
  // ones (1 if there are none or all are 0).
  static double colour_scale(const std::vector<float>& values);

 private:
  int zoom_;
  ColourMap diverging_;
  ColourMap sequential_;
};

}  // namespace lp::cfd
