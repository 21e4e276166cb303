#include "colour_map.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace lp::cfd {

namespace {

// CIE colour spaces, D65 white point.
struct Lab {
  double l, a, b;
};
struct Msh {
  double m, s, h;
};

constexpr double kWhiteX = 0.95047, kWhiteY = 1.0, kWhiteZ = 1.08883;

double srgb_to_linear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }
double linear_to_srgb(double c) { return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1.0 / 2.4) - 0.055; }
double lab_f(double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; }
double lab_f_inverse(double t) { return t * t * t > 216.0 / 24389 ? t * t * t : (116 * t - 16) / (24389.0 / 27); }

Lab rgb_to_lab(double r8, double g8, double b8) {
  const double r = srgb_to_linear(r8 / 255), g = srgb_to_linear(g8 / 255), b = srgb_to_linear(b8 / 255);
  const double x = 0.4124564 * r + 0.3575761 * g + 0.1804375 * b;
  const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
  const double z = 0.0193339 * r + 0.1191920 * g + 0.9503041 * b;
  const double fx = lab_f(x / kWhiteX), fy = lab_f(y / kWhiteY), fz = lab_f(z / kWhiteZ);
  return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

Rgb lab_to_rgb(const Lab& lab) {
  const double fy = (lab.l + 16) / 116, fx = fy + lab.a / 500, fz = fy - lab.b / 200;
  const double x = kWhiteX * lab_f_inverse(fx), y = kWhiteY * lab_f_inverse(fy), z = kWhiteZ * lab_f_inverse(fz);
  const double linear[3] = {3.2404542 * x - 1.5371385 * y - 0.4985314 * z,
                            -0.9692660 * x + 1.8760108 * y + 0.0415560 * z,
                            0.0556434 * x - 0.2040259 * y + 1.0572252 * z};
  uint8_t out[3];
  for (int i = 0; i < 3; ++i) {
    // Colours outside the sRGB gamut are clipped channel by channel.
    out[i] = static_cast<uint8_t>(std::lround(255 * std::clamp(linear_to_srgb(std::clamp(linear[i], 0.0, 1.0)), 0.0, 1.0)));
  }
  return {out[0], out[1], out[2]};
}

Msh lab_to_msh(const Lab& lab) {
  const double m = std::sqrt(lab.l * lab.l + lab.a * lab.a + lab.b * lab.b);
  return {m, m > 0 ? std::acos(lab.l / m) : 0.0, std::atan2(lab.b, lab.a)};
}

Lab msh_to_lab(const Msh& msh) {
  return {msh.m * std::cos(msh.s), msh.m * std::sin(msh.s) * std::cos(msh.h), msh.m * std::sin(msh.s) * std::sin(msh.h)};
}

// Moreland: when interpolating from a saturated colour to an unsaturated one, spin the hue so that
// the unsaturated end does not look tinted.
double adjust_hue(const Msh& saturated, double unsaturated_m) {
  if (saturated.m >= unsaturated_m) return saturated.h;
  const double spin = saturated.s * std::sqrt(unsaturated_m * unsaturated_m - saturated.m * saturated.m) /
                      (saturated.m * std::sin(saturated.s));
  return saturated.h > -std::numbers::pi / 3 ? saturated.h + spin : saturated.h - spin;
}

// Moreland's diverging interpolation between two saturated end colours through a white middle.
Lab diverging(Msh from, Msh to, double t) {
  const double mid_m = std::max({from.m, to.m, 88.0});  // 88: the Msh magnitude of a bright white
  if (t < 0.5) {
    to = {mid_m, 0, 0};
    t *= 2;
  } else {
    from = {mid_m, 0, 0};
    t = 2 * t - 1;
  }
  if (from.s < 0.05 && to.s > 0.05) from.h = adjust_hue(to, from.m);
  if (to.s < 0.05 && from.s > 0.05) to.h = adjust_hue(from, to.m);
  return msh_to_lab({(1 - t) * from.m + t * to.m, (1 - t) * from.s + t * to.s, (1 - t) * from.h + t * to.h});
}

}  // namespace

ColourMap ColourMap::cool_warm() {
  // Moreland's end points: a blue and a red of equal lightness.
  const Msh blue = lab_to_msh(rgb_to_lab(59, 76, 192)), red = lab_to_msh(rgb_to_lab(180, 4, 38));
  ColourMap map;
  for (int i = 0; i < kEntries; ++i) map.table_[i] = lab_to_rgb(diverging(blue, red, i / double(kEntries - 1)));
  return map;
}

ColourMap ColourMap::lightness_ramp() {
  // Control points at L* 15, 55, 95: lightness is linear in t, hue turns blue -> red -> yellow.
  const Lab stops[3] = {{15, 30, -50}, {55, 60, 35}, {95, -5, 50}};
  ColourMap map;
  for (int i = 0; i < kEntries; ++i) {
    const double t = 2.0 * i / (kEntries - 1);
    const int k = t < 1.0 ? 0 : 1;
    const double u = t - k;
    const Lab& a = stops[k];
    const Lab& b = stops[k + 1];
    map.table_[i] = lab_to_rgb({a.l + u * (b.l - a.l), a.a + u * (b.a - a.a), a.b + u * (b.b - a.b)});
  }
  return map;
}

Rgb ColourMap::at(double t) const {
  if (!(t > 0.0)) return table_.front();  // also NaN
  if (t >= 1.0) return table_.back();
  return table_[static_cast<size_t>(t * (kEntries - 1) + 0.5)];
}

}  // namespace lp::cfd
