// cfd-solver-bench: how fast the producer can make frames with no network at all, per frame size:
// solver cell updates/s, frames/s (solver + field + encoding), and the bit rate a link would need
// to carry that frame rate. This is the ceiling the streamed frame rate is compared against.
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>

#include "command_line.h"
#include "frame.h"
#include "lattice_boltzmann.h"
#include "record.h"

namespace {

using namespace lp::cfd;
using Clock = std::chrono::steady_clock;

Record measure(int width, int height, long long steps_per_frame, long long frames) {
  FlowConfig config;
  config.width = width;
  config.height = height;
  LatticeBoltzmann flow(config);
  flow.advance(200);  // past the start-up transient, caches warm
  double solver_seconds = 0;
  size_t frame_bytes = 0;
  const auto start = Clock::now();
  for (long long n = 0; n < frames; ++n) {
    const auto solve_start = Clock::now();
    flow.advance(static_cast<int>(steps_per_frame));
    solver_seconds += std::chrono::duration<double>(Clock::now() - solve_start).count();
    Frame frame;
    frame.frame_number = static_cast<uint32_t>(n);
    frame.width = static_cast<uint32_t>(width);
    frame.height = static_cast<uint32_t>(height);
    frame.values = flow.vorticity();
    frame_bytes = frame.encode().size();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double fps = frames / seconds;
  Record r;
  r.add("grid", std::to_string(width) + "x" + std::to_string(height))
      .add("frame_bytes", static_cast<long long>(frame_bytes))
      .add("steps_per_frame", steps_per_frame)
      .add("frames", frames)
      .add("cell_updates_per_second", static_cast<double>(width) * height * steps_per_frame * frames / solver_seconds)
      .add("frames_per_second", fps)
      .add("needed_mbit_per_second", fps * frame_bytes * 8 / 1e6);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CommandLine args(argc, argv,
                     "cfd-solver-bench [--steps-per-frame N] [--frames N] [--grids WxH,...] [--csv FILE]\n"
                     "  Frames/s the solver alone makes per grid (default 128x64,512x256; vorticity frames).");
    const long long steps_per_frame = args.integer("--steps-per-frame", 20, 1, 1000000);
    const long long frames = args.integer("--frames", 20, 1, 1000000);
    const auto grids = args.grids("--grids", {{128, 64}, {512, 256}});
    const std::string csv = args.text("--csv", "");
    args.finish();
    std::string rows;
    std::string header;
    for (auto [w, h] : grids) {
      const Record r = measure(w, h, steps_per_frame, frames);
      header = r.csv_header();
      rows += r.csv_row() + "\n";
      std::printf("%s: %.0f bytes/frame, %.1f million cell updates/s, %.1f frames/s at %lld steps/frame, "
                  "needs %.1f Mbit/s\n",
                  r.text("grid").c_str(), r.number("frame_bytes"), r.number("cell_updates_per_second") / 1e6,
                  r.number("frames_per_second"), steps_per_frame, r.number("needed_mbit_per_second"));
    }
    if (!csv.empty()) std::ofstream(csv) << header << "\n" << rows;
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-solver-bench: %s\n", error.what());
    return 2;
  }
}
