#include "warmup_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <vector>

namespace lp::cfd {

namespace {

// File layout: magic, format version, key length, key, then the populations as raw doubles
// (host byte order: the file never leaves the machine that wrote it).
constexpr char kMagic[4] = {'L', 'P', 'W', 'U'};
constexpr uint32_t kFormatVersion = 1;

}  // namespace

WarmupCache::WarmupCache(std::filesystem::path folder) : folder_(std::move(folder)) {}

std::string WarmupCache::key_of(const LatticeBoltzmann& flow, long long steps) {
  const FlowConfig& c = flow.config();
  // %a: every double exactly, so that two set-ups that differ at all never share a state.
  char key[512];
  std::snprintf(key, sizeof key, "grid %dx%d re %a u %a d %d x %d perturbation %a steps %lld", c.width, c.height,
                c.reynolds, c.inlet_velocity, c.cylinder_diameter, c.cylinder_x, c.initial_perturbation, steps);
  return key;
}

std::filesystem::path WarmupCache::file_for(const LatticeBoltzmann& flow, long long steps) const {
  char name[96];
  std::snprintf(name, sizeof name, "warmup-%dx%d-%lld-%016zx.state", flow.width(), flow.height(), steps,
                std::hash<std::string>{}(key_of(flow, steps)));
  return folder_ / name;
}

bool WarmupCache::warm_up(LatticeBoltzmann& flow, long long steps) const {
  if (flow.step() == 0 && restore(flow, steps)) return true;
  flow.advance(static_cast<int>(steps));
  store(flow, steps);
  return false;
}

bool WarmupCache::restore(LatticeBoltzmann& flow, long long steps) const {
  std::ifstream in(file_for(flow, steps), std::ios::binary);
  if (!in) return false;
  char magic[4];
  uint32_t version = 0, key_length = 0;
  in.read(magic, sizeof magic);
  in.read(reinterpret_cast<char*>(&version), sizeof version);
  in.read(reinterpret_cast<char*>(&key_length), sizeof key_length);
  const std::string expected_key = key_of(flow, steps);
  if (!in || std::memcmp(magic, kMagic, sizeof magic) != 0 || version != kFormatVersion ||
      key_length != expected_key.size()) {
    return false;
  }
  std::string key(key_length, '\0');
  std::vector<double> populations(flow.populations().size());
  in.read(key.data(), key_length);
  in.read(reinterpret_cast<char*>(populations.data()), static_cast<std::streamsize>(populations.size() * sizeof(double)));
  // A file of another set-up (a hash collision), or a short one, is not this state: compute it.
  if (!in || key != expected_key || in.peek() != std::ifstream::traits_type::eof()) return false;
  flow.restore(std::move(populations), steps);
  return true;
}

void WarmupCache::store(const LatticeBoltzmann& flow, long long steps) const {
  std::error_code ignored;
  std::filesystem::create_directories(folder_, ignored);
  const std::filesystem::path target = file_for(flow, steps);
  // Written beside the target and renamed into place: a run that reads it at the same time sees
  // the whole file or none.
  const std::filesystem::path partial = target.string() + ".partial-" + std::to_string(::getpid());
  const std::string key = key_of(flow, steps);
  const auto key_length = static_cast<uint32_t>(key.size());
  const std::vector<double>& populations = flow.populations();
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&kFormatVersion), sizeof kFormatVersion);
    out.write(reinterpret_cast<const char*>(&key_length), sizeof key_length);
    out.write(key.data(), key_length);
    out.write(reinterpret_cast<const char*>(populations.data()),
              static_cast<std::streamsize>(populations.size() * sizeof(double)));
    if (out.flush()) out.close();
  }
  // Only a saving: a state that cannot be kept is computed again by the next run.
  std::error_code error;
  if (std::filesystem::exists(partial, error) && std::filesystem::file_size(partial, error) ==
      sizeof kMagic + sizeof kFormatVersion + sizeof key_length + key_length + populations.size() * sizeof(double)) {
    std::filesystem::rename(partial, target, error);
    if (!error) return;
  }
  std::fprintf(stderr, "warning: cannot keep the warm-up state in %s\n", target.c_str());
  std::filesystem::remove(partial, error);
}

}  // namespace lp::cfd
