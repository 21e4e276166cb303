// The solver's physics check: the Karman vortex street behind a cylinder at Re = 100 sheds at the
// right Strouhal number, and at Re = 30 (below the onset of shedding, Re ~ 47) the wake is steady.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "frame_renderer.h"
#include "lattice_boltzmann.h"
#include "oscillation_meter.h"

using namespace lp::cfd;

namespace {

// 240 x 80 cells, D = 10 cells: blockage D/H = 12.5 %, ~8 shedding periods in the second half
// of 12000 steps (about 6 s at -O2).
FlowConfig wake_config(double reynolds) {
  FlowConfig config;
  config.width = 240;
  config.height = 80;
  config.cylinder_diameter = 10;
  config.reynolds = reynolds;
  return config;
}

constexpr int kSteps = 12000;
constexpr int kSettleSteps = 6000;  // the wake needs ~6 flow-throughs of the cylinder region to settle

struct Wake {
  OscillationMeter::Result shedding;
  double mass_drift;
  bool finite;
};

// Runs the flow and records the transverse velocity two diameters behind the cylinder.
Wake run_wake(const FlowConfig& wanted) {
  LatticeBoltzmann flow(wanted);
  const FlowConfig& c = flow.config();
  const int probe_x = c.cylinder_x + 2 * c.cylinder_diameter, probe_y = c.height / 2;
  const double mass = flow.total_mass();
  OscillationMeter meter;
  flow.advance(kSettleSteps);
  for (int s = kSettleSteps; s < kSteps; ++s) {
    flow.advance(1);
    meter.add(static_cast<double>(flow.step()), flow.velocity(probe_x, probe_y)[1]);
  }
  const auto result = meter.measure(1);
  return {result.value_or(OscillationMeter::Result{0, 0, 0, 0}), flow.total_mass() / mass - 1.0, flow.all_finite()};
}

// Largest |vorticity| in the two inlet columns over the top of the renderer's colour scale for the
// whole field: above 1 the inlet outshines the wake in the pictures.
double inlet_vorticity_share(const LatticeBoltzmann& flow) {
  const std::vector<float> vorticity = flow.vorticity();
  double inlet = 0;
  for (int y = 0; y < flow.height(); ++y) {
    for (int x = 0; x < 2; ++x) {
      inlet = std::max(inlet, std::fabs(static_cast<double>(vorticity[static_cast<size_t>(y) * flow.width() + x])));
    }
  }
  return inlet / FrameRenderer::colour_scale(vorticity);
}

}  // namespace

TEST_CASE("Re 100: the wake sheds vortices at Strouhal number 0.15-0.20", "[cfd][physics]") {
  const FlowConfig config = wake_config(100.0).resolved();
  const Wake wake = run_wake(config);
  REQUIRE(wake.finite);
  // Shedding is a regular oscillation: several periods, each within 5 % of the mean.
  REQUIRE(wake.shedding.periods >= 5);
  CHECK(wake.shedding.period_spread < 0.05);
  CHECK(wake.shedding.amplitude > 0.2 * config.inlet_velocity);
  // Unconfined, St(Re = 100) = 0.164-0.166 (Williamson 1996, Annu. Rev. Fluid Mech. 28). A
  // blockage D/H of 12.5 % speeds the flow past the cylinder and raises St by ~10 % (this solver
  // gives 0.170 at 6 % and 0.182 at 12.5 %, D = 8, 10 or 12 cells alike, i.e. ~0.16 unconfined);
  // the staircase cylinder of 10 cells adds a few %. Hence the band 0.15-0.20.
  const double strouhal = wake.shedding.frequency * config.diameter() / config.inlet_velocity;
  INFO("St = " << strouhal);
  CHECK(strouhal > 0.15);
  CHECK(strouhal < 0.20);
  // The open channel gains or loses mass only through the boundaries, and only a little.
  CHECK(std::fabs(wake.mass_drift) < 5e-3);
}

TEST_CASE("Re 30: below the onset of shedding the wake stays steady", "[cfd][physics]") {
  const FlowConfig config = wake_config(30.0).resolved();
  const Wake wake = run_wake(config);
  REQUIRE(wake.finite);
  // The initial perturbation has died away: the probe moves by less than 1 % of the inflow.
  CHECK(wake.shedding.amplitude < 0.01 * config.inlet_velocity);
}

TEST_CASE("the demo's 128x64 wake leaves the inlet smooth: no boundary mode grows there", "[cfd][physics]") {
  // The inlet column of the demo's small grid used to grow a transverse-velocity mode that drew
  // stripes at the inlet (its vorticity 2 x the wake's 99th percentile by step 11000). Here the
  // vorticity of the two inlet columns stays a small fraction of the wake's over 15000 steps
  // (measured: at most 3 % after the start-up, 0.5 % once the street is established).
  constexpr int kStartUpSteps = 3000, kRunSteps = 15000, kSampleEvery = 250;
  constexpr double kMaxInletShare = 0.1;
  FlowConfig config;
  config.width = 128;
  config.height = 64;
  LatticeBoltzmann flow(config);
  flow.advance(kStartUpSteps);
  double worst_share = 0;
  while (flow.step() < kRunSteps) {
    flow.advance(kSampleEvery);
    REQUIRE(flow.all_finite());
    worst_share = std::max(worst_share, inlet_vorticity_share(flow));
  }
  INFO("largest inlet |vorticity| / wake's 99th percentile: " << worst_share);
  CHECK(worst_share < kMaxInletShare);
}
