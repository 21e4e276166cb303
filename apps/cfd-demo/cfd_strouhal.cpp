// cfd-strouhal: runs the cylinder flow, measures the shedding frequency from a wake probe and
// prints the Strouhal number St = f D / U, the mass drift and the solver speed (cell updates/s).
#include <chrono>
#include <cstdio>
#include <exception>
#include <tuple>

#include "command_line.h"
#include "lattice_boltzmann.h"
#include "oscillation_meter.h"

int main(int argc, char** argv) {
  using namespace lp::cfd;
  try {
    CommandLine args(argc, argv,
                     "cfd-strouhal [--grid WxH] [--re RE] [--velocity U] [--diameter D] [--steps N] [--settle N]\n"
                     "  Runs N steps (the first `settle` are discarded) and prints St = f D / U.");
    FlowConfig config;
    std::tie(config.width, config.height) = args.grid("--grid", {400, 100});
    config.reynolds = args.real("--re", 100.0, 1.0, 10000.0);
    config.inlet_velocity = args.real("--velocity", config.inlet_velocity, 0.001, FlowConfig::kMaxInletVelocity);
    config.cylinder_diameter = static_cast<int>(args.integer("--diameter", 0, 0, 100000));
    const long long steps = args.integer("--steps", 30000, 1, 100000000);
    const long long settle = args.integer("--settle", steps / 2, 0, steps - 1);
    args.finish();

    LatticeBoltzmann flow(config);
    const FlowConfig& c = flow.config();
    std::printf("%s\n", c.describe().c_str());
    // Probe two diameters behind the cylinder on its axis, where the wake swings most.
    const int probe_x = c.cylinder_x + 2 * c.cylinder_diameter, probe_y = c.height / 2;
    const double mass0 = flow.total_mass();
    OscillationMeter meter;
    const auto start = std::chrono::steady_clock::now();
    for (long long s = 0; s < steps; ++s) {
      flow.advance(1);
      if (s >= settle) meter.add(static_cast<double>(flow.step()), flow.velocity(probe_x, probe_y)[1]);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double updates = static_cast<double>(steps) * c.width * c.height;
    std::printf("steps %lld in %.2f s: %.1f million cell updates/s\n", steps, seconds, updates / seconds / 1e6);
    std::printf("mass drift %.3e (relative), finite %s\n", flow.total_mass() / mass0 - 1.0, flow.all_finite() ? "yes" : "NO");
    const auto result = meter.measure();
    if (!result) {
      std::printf("no periodic shedding found in the last %lld steps\n", steps - settle);
      return 1;
    }
    std::printf("shedding: %d periods, period %.1f steps (spread %.3f), probe amplitude %.4f\n", result->periods,
                1.0 / result->frequency, result->period_spread, result->amplitude);
    std::printf("Strouhal number St = f D / U = %.4f\n", result->frequency * c.diameter() / c.inlet_velocity);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-strouhal: %s\n", error.what());
    return 2;
  }
}
