// ColourMap: perceptual colour maps as 256-entry tables.
//   cool_warm: Moreland's diverging map (blue - white - red), interpolated in his Msh space so that
//              both halves change lightness evenly; for signed fields such as vorticity.
//   lightness_ramp: a sequential map whose CIE L* rises linearly from dark blue through red to pale
//              yellow; for non-negative fields such as speed.
#pragma once

#include <array>
#include <cstdint>

namespace lp::cfd {

struct Rgb {
  uint8_t r, g, b;
  bool operator==(const Rgb&) const = default;
};

class ColourMap {
 public:
  static constexpr int kEntries = 256;

  static ColourMap cool_warm();
  static ColourMap lightness_ramp();

  // t in [0, 1]; values outside are clamped.
  Rgb at(double t) const;

 private:
  std::array<Rgb, kEntries> table_{};
};

}  // namespace lp::cfd
