// Rendering: colour maps, PNG round trip, frames of a real flow, contact sheets.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <vector>

#include "contact_sheet.h"
#include "frame_renderer.h"
#include "lattice_boltzmann.h"
#include "temp_folder.h"

using namespace lp::cfd;

namespace {

int grey_spread(Rgb c) { return std::max({c.r, c.g, c.b}) - std::min({c.r, c.g, c.b}); }
double luminance(Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

// A vorticity frame from a real flow: 128 x 64 after 2500 steps, the wake has started to swing.
Frame flow_frame() {
  FlowConfig config;
  config.width = 128;
  config.height = 64;
  LatticeBoltzmann flow(config);
  flow.advance(2500);
  Frame frame;
  frame.width = 128;
  frame.height = 64;
  frame.values = flow.vorticity();
  return frame;
}

}  // namespace

TEST_CASE("cool-warm runs from Moreland's blue through a neutral middle to his red", "[cfd][render]") {
  const ColourMap map = ColourMap::cool_warm();
  CHECK(map.at(0.0) == Rgb{59, 76, 192});
  CHECK(map.at(1.0) == Rgb{180, 4, 38});
  CHECK(grey_spread(map.at(0.5)) <= 6);
  CHECK(luminance(map.at(0.5)) > 200);
  // Lightness rises towards the middle from both ends: equal |value| looks equally strong.
  for (double t = 0.05; t <= 0.5; t += 0.05) CHECK(luminance(map.at(t)) > luminance(map.at(t - 0.05)));
  for (double t = 0.55; t <= 1.0; t += 0.05) CHECK(luminance(map.at(t)) < luminance(map.at(t - 0.05)));
  CHECK(map.at(-3.0) == map.at(0.0));
  CHECK(map.at(std::nan("")) == map.at(0.0));
}

TEST_CASE("the lightness ramp gets lighter all the way", "[cfd][render]") {
  const ColourMap map = ColourMap::lightness_ramp();
  for (double t = 0.02; t <= 1.0; t += 0.02) CHECK(luminance(map.at(t)) > luminance(map.at(t - 0.02)));
}

TEST_CASE("a PNG reads back exactly as written; a bad file is a clear error", "[cfd][render]") {
  TempFolder folder;
  RgbImage image(7, 5, {10, 20, 30});
  image.set_pixel(6, 4, {255, 0, 128});
  image.write_png(folder / "a.png");
  const RgbImage back = RgbImage::read_png(folder / "a.png");
  REQUIRE(back.width() == 7);
  REQUIRE(back.height() == 5);
  CHECK(back.pixel(0, 0) == Rgb{10, 20, 30});
  CHECK(back.pixel(6, 4) == Rgb{255, 0, 128});
  CHECK(image.luminance_variance() > 0);
  CHECK(RgbImage(4, 4, {9, 9, 9}).luminance_variance() == 0);
  CHECK_THROWS_WITH(RgbImage::read_png(folder / "missing.png"), Catch::Contains("missing.png"));
  CHECK_THROWS_WITH(image.write_png(folder / "no/such/folder.png"), Catch::Contains("folder.png"));
}

TEST_CASE("the colour scale is a high percentile of |value|: no-fluid cells and one spike do not set it",
          "[cfd][render]") {
  // |values| 0.000 .. 0.998 with alternating signs, one spike, and cells with no fluid (NaN).
  std::vector<float> values;
  for (int i = 0; i < 999; ++i) values.push_back((i % 2 ? 1.0f : -1.0f) * static_cast<float>(i) / 1000);
  values.push_back(1e6f);
  values.insert(values.end(), 50, std::nanf(""));
  CHECK(FrameRenderer::colour_scale(values) == Approx(0.990).margin(1e-6));  // the 990th of 1000
  CHECK(FrameRenderer::colour_scale(std::vector<float>(10, 0.0f)) == 1.0);
  CHECK(FrameRenderer::colour_scale(std::vector<float>(10, std::nanf(""))) == 1.0);
}

TEST_CASE("a flow frame renders to a picture that shows the wake", "[cfd][render]") {
  TempFolder folder;
  const Frame frame = flow_frame();
  const FrameRenderer renderer(2);
  renderer.render(frame).write_png(folder / "wake.png");
  const RgbImage picture = RgbImage::read_png(folder / "wake.png");
  REQUIRE(picture.width() == 256);
  REQUIRE(picture.height() == 128);
  // Not blank.
  CHECK(picture.luminance_variance() > 100);
  // The cylinder (centre x = 48, y = 32 cells; zoom 2) is drawn in the no-fluid grey.
  CHECK(picture.pixel(96, 64) == FrameRenderer::kNoFluid);
  // Upstream the flow is irrotational: near-uniform, neutral. Behind the cylinder the shear layers
  // and vortices vary strongly. Rows are flipped (y up); both boxes span the cylinder's height.
  const double upstream = picture.luminance_variance(4, 40, 60, 88);
  const double wake = picture.luminance_variance(116, 40, 250, 88);
  INFO("upstream variance " << upstream << ", wake variance " << wake);
  CHECK(wake > 20 * upstream);
  CHECK(wake > 200);
  CHECK(grey_spread(picture.pixel(8, 64)) <= 12);
}

TEST_CASE("a contact sheet lays the pictures out in order", "[cfd][render]") {
  std::vector<RgbImage> tiles;
  for (uint8_t i = 0; i < 5; ++i) tiles.emplace_back(10, 6, Rgb{static_cast<uint8_t>(40 * i), 0, 0});
  const RgbImage sheet = ContactSheet::compose(tiles, 3);
  const int gap = ContactSheet::kGap;
  CHECK(sheet.width() == gap + 3 * (10 + gap));
  CHECK(sheet.height() == gap + 2 * (6 + gap));
  CHECK(sheet.pixel(0, 0) == ContactSheet::kBackground);
  for (int i = 0; i < 5; ++i) {
    const int x = gap + (i % 3) * (10 + gap), y = gap + (i / 3) * (6 + gap);
    CHECK(sheet.pixel(x, y) == tiles[i].pixel(0, 0));
    CHECK(sheet.pixel(x + 9, y + 5) == tiles[i].pixel(0, 0));
  }
  CHECK(sheet.pixel(gap + 2 * (10 + gap) + 1, gap + 6 + gap + 1) == ContactSheet::kBackground);  // no 6th tile

  tiles.emplace_back(11, 6);
  CHECK_THROWS_WITH(ContactSheet::compose(tiles, 3), Catch::Contains("differ in size"));
  CHECK_THROWS(ContactSheet::compose({}, 3));
}

TEST_CASE("the contact sheet picks evenly spaced frames including both ends", "[cfd][render]") {
  std::vector<std::string> paths;
  for (int i = 0; i < 10; ++i) paths.push_back(std::to_string(i));
  CHECK(ContactSheet::pick(paths, 4) == std::vector<std::string>{"0", "3", "6", "9"});
  CHECK(ContactSheet::pick(paths, 20) == paths);
  CHECK(ContactSheet::pick(paths, 1) == std::vector<std::string>{"9"});
  CHECK(ContactSheet::pick(paths, 0).empty());
  CHECK(ContactSheet::pick({}, 4).empty());
}
