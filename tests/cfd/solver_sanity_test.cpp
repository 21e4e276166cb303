// Quick checks of the lattice Boltzmann solver, small enough for the sanitizer builds.
#include <catch2/catch.hpp>

#include <cmath>

#include "lattice_boltzmann.h"
#include "small_channel.h"

using namespace lp::cfd;

TEST_CASE("a flow set-up is resolved and checked", "[cfd][solver]") {
  const FlowConfig c = small_channel().resolved();
  CHECK(c.cylinder_diameter == 4);  // height / 8
  CHECK(c.cylinder_x == 24);        // max(height / 2, 6 D)
  CHECK(c.relaxation_time() == Approx(3 * 0.08 * 4 / 50.0 + 0.5));

  FlowConfig too_fast = small_channel();
  too_fast.reynolds = 1000;  // nu = 0.08 * 4 / 1000: tau 0.501, unstable
  CHECK_THROWS_WITH(too_fast.resolved(), Catch::Contains("relaxation time") && Catch::Contains("larger grid"));
  FlowConfig supersonic = small_channel();
  supersonic.inlet_velocity = 0.5;
  CHECK_THROWS_WITH(supersonic.resolved(), Catch::Contains("inlet velocity"));
  FlowConfig tiny = small_channel();
  tiny.width = 8;
  CHECK_THROWS_WITH(tiny.resolved(), Catch::Contains("at least 16x16"));
  FlowConfig fat = small_channel();
  fat.cylinder_diameter = 20;
  CHECK_THROWS_WITH(fat.resolved(), Catch::Contains("cylinder diameter"));
}

TEST_CASE("without a perturbation the flow stays mirror-symmetric about the cylinder's axis", "[cfd][solver]") {
  FlowConfig config = small_channel();
  config.initial_perturbation = 0;
  LatticeBoltzmann flow(config);
  flow.advance(300);
  REQUIRE(flow.all_finite());
  const int h = flow.height();
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < flow.width(); ++x) {
      const auto u = flow.velocity(x, y), mirrored = flow.velocity(x, h - 1 - y);
      REQUIRE(u[0] == Approx(mirrored[0]).margin(1e-12));
      REQUIRE(u[1] == Approx(-mirrored[1]).margin(1e-12));
    }
  }
}

TEST_CASE("the channel flow stays finite, keeps its mass and carries the inflow to the outlet", "[cfd][solver]") {
  LatticeBoltzmann flow(small_channel());
  const double mass = flow.total_mass();
  flow.advance(2000);
  REQUIRE(flow.all_finite());
  CHECK(flow.step() == 2000);
  CHECK(flow.total_mass() / mass == Approx(1.0).epsilon(0.01));
  // What comes in goes out: the mean axial velocity at the outlet equals the inflow.
  double outflow = 0;
  for (int y = 0; y < flow.height(); ++y) outflow += flow.velocity(flow.width() - 1, y)[0];
  CHECK(outflow / flow.height() == Approx(flow.config().inlet_velocity).epsilon(0.05));
}

TEST_CASE("the cylinder is a no-slip obstacle: no velocity, and no field value, inside it", "[cfd][solver]") {
  FlowConfig config = small_channel();
  config.cylinder_diameter = 8;  // wide enough to have a stagnation region in front
  LatticeBoltzmann flow(config);
  flow.advance(50);
  const FlowConfig& c = flow.config();
  const int cx = c.cylinder_x, cy = c.height / 2;
  REQUIRE(flow.is_solid(cx, cy));
  REQUIRE_FALSE(flow.is_solid(2, 2));
  CHECK(flow.velocity(cx, cy)[0] == 0.0);
  const auto vorticity = flow.vorticity(), speed = flow.speed();
  REQUIRE(vorticity.size() == static_cast<size_t>(c.width * c.height));
  for (int y = 0; y < c.height; ++y) {
    for (int x = 0; x < c.width; ++x) {
      const size_t i = static_cast<size_t>(y) * c.width + x;
      REQUIRE(std::isnan(vorticity[i]) == flow.is_solid(x, y));
      REQUIRE(std::isnan(speed[i]) == flow.is_solid(x, y));
    }
  }
  // The fluid right in front of the cylinder is brought nearly to rest (stagnation point), while
  // the fluid passing its side is faster than the free stream.
  const auto front = flow.velocity(cx - c.cylinder_diameter / 2 - 1, cy);
  const auto side = flow.velocity(cx, cy + c.cylinder_diameter / 2 + 1);
  CHECK(std::hypot(front[0], front[1]) < 0.5 * c.inlet_velocity);
  CHECK(side[0] > c.inlet_velocity);
}

TEST_CASE("the inlet column holds the prescribed velocity (U, 0) while the wake sheds", "[cfd][solver]") {
  // The demo's smallest set-up (128x64, Re 100): shedding starts within ~1000 steps, and its
  // pressure waves reach the inlet. Zou-He fixes both velocity components there; leaving the
  // transverse one free let an alternating mode grow (3 % of U by step 1000, 46 % by 11000: stripes).
  FlowConfig config;
  config.width = 128;
  config.height = 64;
  LatticeBoltzmann flow(config);
  const double u = flow.config().inlet_velocity;
  for (int round = 0; round < 4; ++round) {
    flow.advance(500);
    REQUIRE(flow.all_finite());
    for (int y = 0; y < flow.height(); ++y) {
      const auto inlet = flow.velocity(0, y);
      INFO("step " << flow.step() << ", y " << y);
      REQUIRE(inlet[0] == Approx(u).margin(1e-12));
      REQUIRE(inlet[1] == Approx(0.0).margin(1e-12));
    }
  }
}
