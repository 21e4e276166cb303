// WarmupCache: the solver's state after its warm-up, kept in a folder, so that a second run of the
// same flow (another route of the demo) starts from it instead of computing the same steps again.
// The solver is deterministic: a restored state continues bit for bit as the computed one would.
#pragma once

#include <filesystem>
#include <string>

#include "lattice_boltzmann.h"

namespace lp::cfd {

class WarmupCache {
 public:
  explicit WarmupCache(std::filesystem::path folder);

  // Brings a fresh `flow` to `steps` steps: restored from the folder when it holds the state of
  // this flow after that many steps, otherwise computed and then stored there. True if restored.
  bool warm_up(LatticeBoltzmann& flow, long long steps) const;

  // The file that holds (or would hold) the state of `flow` after `steps` steps.
  std::filesystem::path file_for(const LatticeBoltzmann& flow, long long steps) const;

 private:
  // Everything the state depends on: the flow's set-up and the number of steps.
  static std::string key_of(const LatticeBoltzmann& flow, long long steps);
  bool restore(LatticeBoltzmann& flow, long long steps) const;
  void store(const LatticeBoltzmann& flow, long long steps) const;

  std::filesystem::path folder_;
};

}  // namespace lp::cfd
