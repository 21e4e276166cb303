// WarmupCache: a restored warm-up continues exactly as the computed one, and only for its own set-up.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <vector>

#include "lattice_boltzmann.h"
#include "small_channel.h"
#include "temp_folder.h"
#include "warmup_cache.h"

using namespace lp::cfd;

namespace {

constexpr long long kWarmupSteps = 200;
constexpr int kStepsAfter = 30;

}  // namespace

TEST_CASE("a restored warm-up continues bit for bit as the computed one", "[cfd][warmup]") {
  TempFolder folder;
  const WarmupCache cache(folder.path());

  LatticeBoltzmann computed(small_channel());
  CHECK_FALSE(cache.warm_up(computed, kWarmupSteps));  // nothing kept yet: computed, then kept
  CHECK(std::filesystem::exists(cache.file_for(computed, kWarmupSteps)));

  LatticeBoltzmann restored(small_channel());
  CHECK(cache.warm_up(restored, kWarmupSteps));
  CHECK(restored.step() == kWarmupSteps);

  LatticeBoltzmann plain(small_channel());
  plain.advance(kWarmupSteps);
  for (LatticeBoltzmann* flow : {&computed, &restored, &plain}) flow->advance(kStepsAfter);
  CHECK(restored.populations() == plain.populations());
  CHECK(computed.populations() == plain.populations());
  // Byte for byte (the cylinder's cells are NaN, which == never matches).
  const std::vector<float> restored_frame = restored.vorticity(), plain_frame = plain.vorticity();
  REQUIRE(restored_frame.size() == plain_frame.size());
  CHECK(std::memcmp(restored_frame.data(), plain_frame.data(), plain_frame.size() * sizeof(float)) == 0);
}

TEST_CASE("a kept warm-up is used only for the same set-up and number of steps", "[cfd][warmup]") {
  TempFolder folder;
  const WarmupCache cache(folder.path());
  LatticeBoltzmann first(small_channel());
  cache.warm_up(first, kWarmupSteps);

  FlowConfig other = small_channel();
  other.reynolds = 60;
  LatticeBoltzmann other_flow(other);
  CHECK_FALSE(cache.warm_up(other_flow, kWarmupSteps));
  LatticeBoltzmann longer(small_channel());
  CHECK_FALSE(cache.warm_up(longer, kWarmupSteps + 1));
  CHECK(longer.step() == kWarmupSteps + 1);
}

TEST_CASE("a damaged warm-up file is computed again, not restored", "[cfd][warmup]") {
  TempFolder folder;
  const WarmupCache cache(folder.path());
  LatticeBoltzmann first(small_channel());
  cache.warm_up(first, kWarmupSteps);
  const auto file = cache.file_for(first, kWarmupSteps);
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 8);

  LatticeBoltzmann second(small_channel());
  CHECK_FALSE(cache.warm_up(second, kWarmupSteps));
  second.advance(kStepsAfter);
  first.advance(kStepsAfter);
  CHECK(second.populations() == first.populations());
  // ... and kept whole again.
  LatticeBoltzmann third(small_channel());
  CHECK(cache.warm_up(third, kWarmupSteps));
}
