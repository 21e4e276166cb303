#include "flow_config.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace lp::cfd {

namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

}  // namespace

FlowConfig FlowConfig::resolved() const {
  FlowConfig c = *this;
  require(c.width >= 16 && c.height >= 16, "grid must be at least 16x16 cells, not " + std::to_string(c.width) +
                                               "x" + std::to_string(c.height));
  require(static_cast<long long>(c.width) * c.height <= kMaxCells,
          "grid " + std::to_string(c.width) + "x" + std::to_string(c.height) + " exceeds " +
              std::to_string(kMaxCells) + " cells");
  require(c.reynolds > 0.0 && c.reynolds <= 10000.0, "Reynolds number must be in (0, 10000]");
  require(c.inlet_velocity > 0.0 && c.inlet_velocity <= kMaxInletVelocity,
          "inlet velocity must be in (0, " + std::to_string(kMaxInletVelocity) + "] lattice units");
  require(c.initial_perturbation >= 0.0 && c.initial_perturbation <= 0.5, "initial perturbation must be in [0, 0.5]");
  if (c.cylinder_diameter == 0) c.cylinder_diameter = std::max(kMinCylinderDiameter, c.height / 8);
  require(c.cylinder_diameter >= kMinCylinderDiameter && c.cylinder_diameter <= c.height / 2,
          "cylinder diameter must be in [" + std::to_string(kMinCylinderDiameter) + ", height/2] cells");
  if (c.cylinder_x == 0) c.cylinder_x = std::max(c.height / 2, kInletClearanceDiameters * c.cylinder_diameter);
  require(c.cylinder_x - c.cylinder_diameter >= 2 && c.cylinder_x + c.cylinder_diameter < c.width - 2,
          "cylinder must lie inside the channel with 2 cells to spare");
  require(c.relaxation_time() >= kMinRelaxationTime,
          "Re " + std::to_string(c.reynolds) + " needs a relaxation time of " + std::to_string(c.relaxation_time()) +
              " < " + std::to_string(kMinRelaxationTime) +
              " on this grid: use a larger grid (wider cylinder) or a higher inlet velocity");
  return c;
}

std::string FlowConfig::describe() const {
  char text[256];
  std::snprintf(text, sizeof text, "grid %dx%d, Re %.1f, U %.3f, D %d cells at x=%d, nu %.5f, tau %.4f", width,
                height, reynolds, inlet_velocity, cylinder_diameter, cylinder_x, viscosity(), relaxation_time());
  return text;
}

}  // namespace lp::cfd
