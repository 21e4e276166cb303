// LatticeBoltzmann: a D2Q9 two-relaxation-time (TRT) solver for 2-D incompressible flow past a
// cylinder (the Karman vortex street). Pure computation: no I/O, no PVM.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "flow_config.h"

namespace lp::cfd {

class LatticeBoltzmann {
 public:
  static constexpr int kDirections = 9;

  explicit LatticeBoltzmann(const FlowConfig& config);  // config is resolved (and checked) here

  // Advances the flow by `steps` time steps (fused pull-streaming and collision).
  void advance(int steps);

  const FlowConfig& config() const { return config_; }
  long long step() const { return step_; }
  int width() const { return config_.width; }
  int height() const { return config_.height; }
  bool is_solid(int x, int y) const { return solid_[index(x, y)] != 0; }

  // Macroscopic fields, row-major (index y * width + x). Solid cells read as zero velocity.
  double density(int x, int y) const;
  std::array<double, 2> velocity(int x, int y) const;
  // Vorticity dv/dx - du/dy by central differences; NaN inside the cylinder (no fluid there).
  std::vector<float> vorticity() const;
  // Speed |u| / U (relative to the inflow); NaN inside the cylinder.
  std::vector<float> speed() const;

  // Sum of all populations over fluid cells: the mass, exactly conserved in a closed domain.
  double total_mass() const;
  // False once any population is NaN or infinite (the run has blown up).
  bool all_finite() const;

  // The whole state: the populations (structure of arrays, f[q * cells + cell]) after `step()` steps.
  const std::vector<double>& populations() const { return f_; }
  // Continues from a state populations() gave after `step` steps of the same set-up (a warm-up
  // computed before); refuses populations of another size.
  void restore(std::vector<double> populations, long long step);

 private:
  int index(int x, int y) const { return y * config_.width + x; }
  double population(int direction, int cell) const { return f_[static_cast<size_t>(direction) * cells_ + cell]; }
  void initialise();
  void mark_cylinder();
  void pull(int x, int y, int x_minus, int x_plus, int y_minus, int y_plus, double g[9]) const;
  void collide(int cell, const double g[9]);
  void update_inlet_cell(int y, int y_minus, int y_plus);

  FlowConfig config_;
  size_t cells_;
  double omega_plus_;   // relaxation rate of the symmetric (even) part: sets the viscosity
  double omega_minus_;  // relaxation rate of the antisymmetric (odd) part: from the magic parameter
  std::vector<double> f_;       // populations after collision, structure of arrays: f_[q * cells + cell]
  std::vector<double> f_next_;  // the other buffer of the pull scheme
  std::vector<uint8_t> solid_;
  // Bit q set: the neighbour this cell pulls direction q from is solid, so that population is
  // bounced back from the cell's own opposite population (half-way bounce-back, no-slip wall).
  std::vector<uint16_t> bounce_;
  long long step_ = 0;
};

}  // namespace lp::cfd
