#include "lattice_boltzmann.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <utility>

namespace lp::cfd {

namespace {

// D2Q9 velocities: rest, the four axes, the four diagonals.
constexpr int kCx[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
constexpr int kCy[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
constexpr int kOpposite[9] = {0, 3, 4, 1, 2, 7, 8, 5, 6};
constexpr double kWeight[9] = {4.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36};

// TRT magic parameter Lambda = (1/omega+ - 1/2)(1/omega- - 1/2). 1/4 is the most stable choice
// (Ginzburg); it also keeps the bounce-back wall position independent of the viscosity.
constexpr double kMagicParameter = 0.25;

// Equilibrium population q for density rho and velocity (ux, uy), to second order in u.
inline double equilibrium(int q, double rho, double ux, double uy) {
  const double cu = kCx[q] * ux + kCy[q] * uy;
  const double uu = ux * ux + uy * uy;
  return kWeight[q] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * uu);
}

}  // namespace

LatticeBoltzmann::LatticeBoltzmann(const FlowConfig& config)
    : config_(config.resolved()),
      cells_(static_cast<size_t>(config_.width) * config_.height),
      omega_plus_(1.0 / config_.relaxation_time()),
      omega_minus_(1.0 / (kMagicParameter / (config_.relaxation_time() - 0.5) + 0.5)),
      f_(kDirections * cells_),
      f_next_(kDirections * cells_),
      solid_(cells_, 0),
      bounce_(cells_, 0) {
  mark_cylinder();
  initialise();
}

void LatticeBoltzmann::mark_cylinder() {
  const double radius = 0.5 * config_.diameter();
  const double cx = config_.cylinder_x, cy = config_.cylinder_y();
  for (int y = 0; y < config_.height; ++y) {
    for (int x = 0; x < config_.width; ++x) {
      // Cell centres sit at (x + 1/2, y + 1/2).
      const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
      solid_[index(x, y)] = dx * dx + dy * dy <= radius * radius;
    }
  }
  for (int y = 0; y < config_.height; ++y) {
    for (int x = 0; x < config_.width; ++x) {
      for (int q = 1; q < kDirections; ++q) {
        const int xs = x - kCx[q], ys = (y - kCy[q] + config_.height) % config_.height;
        if (xs >= 0 && xs < config_.width && solid_[index(xs, ys)]) bounce_[index(x, y)] |= uint16_t(1u << q);
      }
    }
  }
}

void LatticeBoltzmann::initialise() {
  const double u = config_.inlet_velocity;
  for (int y = 0; y < config_.height; ++y) {
    for (int x = 0; x < config_.width; ++x) {
      const int cell = index(x, y);
      const bool solid = solid_[cell];
      // A transverse wave along the channel breaks the up/down symmetry of the wake.
      const double uy = config_.initial_perturbation * u * std::sin(2.0 * std::numbers::pi * x / config_.width);
      for (int q = 0; q < kDirections; ++q) {
        f_[q * cells_ + cell] = solid ? kWeight[q] : equilibrium(q, 1.0, u, uy);
      }
    }
  }
  f_next_ = f_;
}

// Pulls the nine populations of `cell` from the neighbours (given as the columns and rows
// left/right and below/above, already wrapped or clamped) into g; a population whose source is
// solid is bounced back from the cell's own opposite population.
inline void LatticeBoltzmann::pull(int x, int y, int x_minus, int x_plus, int y_minus, int y_plus, double g[9]) const {
  const int w = config_.width;
  const int cell = y * w + x;
  // Source cell of direction q is x - c_q.
  const int source[9] = {cell,
                         y * w + x_minus,
                         y_minus * w + x,
                         y * w + x_plus,
                         y_plus * w + x,
                         y_minus * w + x_minus,
                         y_minus * w + x_plus,
                         y_plus * w + x_plus,
                         y_plus * w + x_minus};
  const double* f = f_.data();
  const unsigned bounce = bounce_[cell];
  if (bounce == 0) {
    for (int q = 0; q < 9; ++q) g[q] = f[q * cells_ + source[q]];
  } else {
    for (int q = 0; q < 9; ++q) {
      g[q] = (bounce >> q) & 1u ? f[kOpposite[q] * cells_ + cell] : f[q * cells_ + source[q]];
    }
  }
}

// Relaxes the populations g of `cell` towards equilibrium (TRT) and stores them in the next buffer.
inline void LatticeBoltzmann::collide(int cell, const double g[9]) {
  const double rho = g[0] + g[1] + g[2] + g[3] + g[4] + g[5] + g[6] + g[7] + g[8];
  const double ux = (g[1] - g[3] + g[5] - g[6] - g[7] + g[8]) / rho;
  const double uy = (g[2] - g[4] + g[5] + g[6] - g[7] - g[8]) / rho;
  const double uu15 = 1.5 * (ux * ux + uy * uy);

  double* out = f_next_.data();
  // Rest population: purely symmetric.
  out[cell] = g[0] - omega_plus_ * (g[0] - kWeight[0] * rho * (1.0 - uu15));
  // Pairs (q, opposite q): q = 1,2,5,6 with opposites 3,4,7,8.
  constexpr int kPair[4] = {1, 2, 5, 6};
  for (int k = 0; k < 4; ++k) {
    const int q = kPair[k], o = kOpposite[q];
    const double cu = kCx[q] * ux + kCy[q] * uy;
    const double eq_plus = kWeight[q] * rho * (1.0 + 4.5 * cu * cu - uu15);
    const double eq_minus = kWeight[q] * rho * 3.0 * cu;
    const double plus = 0.5 * (g[q] + g[o]), minus = 0.5 * (g[q] - g[o]);
    const double relax_plus = omega_plus_ * (plus - eq_plus);
    const double relax_minus = omega_minus_ * (minus - eq_minus);
    out[q * cells_ + cell] = g[q] - relax_plus - relax_minus;
    out[o * cells_ + cell] = g[o] - relax_plus + relax_minus;
  }
}

// Inflow (column 0), Zou-He velocity boundary for the prescribed velocity (U, 0): the populations
// that arrive from inside the domain fix the density; the three that would come from outside
// (moving right) get the non-equilibrium part of their opposites bounced back, and the two
// diagonals among them share out the transverse momentum of the populations moving along the
// column (g2 - g4) so that the inlet's transverse velocity is exactly zero. Without that share the
// inlet's v is left free: a mode of it, alternating along the column, grows once the wake's
// pressure waves reach the inlet (measured at 128x64, Re 100: |v| 0.46 U by step 11000), seen as
// stripes in the vorticity at the inlet.
void LatticeBoltzmann::update_inlet_cell(int y, int y_minus, int y_plus) {
  double g[9];
  pull(0, y, 0, 1, y_minus, y_plus, g);
  const double u = config_.inlet_velocity;
  const double rho = (g[0] + g[2] + g[4] + 2.0 * (g[3] + g[6] + g[7])) / (1.0 - u);
  const double transverse_momentum = g[2] - g[4];
  for (int q : {1, 5, 8}) {
    const int o = kOpposite[q];
    g[q] = g[o] + equilibrium(q, rho, u, 0.0) - equilibrium(o, rho, u, 0.0) - 0.5 * kCy[q] * transverse_momentum;
  }
  collide(index(0, y), g);
}

void LatticeBoltzmann::advance(int steps) {
  const int w = config_.width, h = config_.height;
  for (int s = 0; s < steps; ++s) {
    for (int y = 0; y < h; ++y) {
      const int y_minus = y == 0 ? h - 1 : y - 1;  // periodic across the channel
      const int y_plus = y == h - 1 ? 0 : y + 1;
      double g[9];
      update_inlet_cell(y, y_minus, y_plus);
      for (int x = 1; x < w - 1; ++x) {
        if (solid_[y * w + x]) continue;
        pull(x, y, x - 1, x + 1, y_minus, y_plus, g);
        collide(y * w + x, g);
      }
      // Outflow: what would arrive from beyond the last column is taken from the last column
      // itself (zero gradient), so the wake leaves without a reflecting wall.
      pull(w - 1, y, w - 2, w - 1, y_minus, y_plus, g);
      collide(y * w + w - 1, g);
    }
    f_.swap(f_next_);
    ++step_;
  }
}

void LatticeBoltzmann::restore(std::vector<double> populations, long long step) {
  if (populations.size() != f_.size()) throw std::invalid_argument("restore: populations of another grid");
  f_ = std::move(populations);
  // Every fluid cell of f_next_ is written before it is read; solid cells hold their initial
  // populations in both buffers.
  f_next_ = f_;
  step_ = step;
}

double LatticeBoltzmann::density(int x, int y) const {
  const int cell = index(x, y);
  double rho = 0.0;
  for (int q = 0; q < kDirections; ++q) rho += population(q, cell);
  return rho;
}

std::array<double, 2> LatticeBoltzmann::velocity(int x, int y) const {
  const int cell = index(x, y);
  if (solid_[cell]) return {0.0, 0.0};
  double rho = 0.0, jx = 0.0, jy = 0.0;
  for (int q = 0; q < kDirections; ++q) {
    const double f = population(q, cell);
    rho += f;
    jx += kCx[q] * f;
    jy += kCy[q] * f;
  }
  return {jx / rho, jy / rho};
}

std::vector<float> LatticeBoltzmann::vorticity() const {
  const int w = config_.width, h = config_.height;
  std::vector<double> ux(cells_), uy(cells_);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const auto u = velocity(x, y);
      ux[index(x, y)] = u[0];
      uy[index(x, y)] = u[1];
    }
  }
  std::vector<float> omega(cells_);
  for (int y = 0; y < h; ++y) {
    const int ym = y == 0 ? h - 1 : y - 1, yp = y == h - 1 ? 0 : y + 1;
    for (int x = 0; x < w; ++x) {
      if (solid_[index(x, y)]) {
        omega[index(x, y)] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      // Central differences inside, one-sided at the inlet and outlet columns.
      const int xm = x == 0 ? 0 : x - 1, xp = x == w - 1 ? w - 1 : x + 1;
      const double dv_dx = (uy[index(xp, y)] - uy[index(xm, y)]) / (xp - xm);
      const double du_dy = (ux[index(x, yp)] - ux[index(x, ym)]) / 2.0;
      omega[index(x, y)] = static_cast<float>(dv_dx - du_dy);
    }
  }
  return omega;
}

std::vector<float> LatticeBoltzmann::speed() const {
  std::vector<float> result(cells_);
  for (int y = 0; y < config_.height; ++y) {
    for (int x = 0; x < config_.width; ++x) {
      const auto u = velocity(x, y);
      result[index(x, y)] = solid_[index(x, y)] ? std::numeric_limits<float>::quiet_NaN()
                                                : static_cast<float>(std::hypot(u[0], u[1]) / config_.inlet_velocity);
    }
  }
  return result;
}

double LatticeBoltzmann::total_mass() const {
  double mass = 0.0;
  for (size_t cell = 0; cell < cells_; ++cell) {
    if (solid_[cell]) continue;
    for (int q = 0; q < kDirections; ++q) mass += f_[q * cells_ + cell];
  }
  return mass;
}

bool LatticeBoltzmann::all_finite() const {
  for (double f : f_) {
    if (!std::isfinite(f)) return false;
  }
  return true;
}

}  // namespace lp::cfd
