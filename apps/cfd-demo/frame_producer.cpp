#include "frame_producer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "warmup_cache.h"

namespace lp::cfd {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

const char* const FrameProducer::kOptionsUsage =
    "  --frames N            frames to send (default 50)\n"
    "  --grid WxH            solver grid = frame size (default 128x64)\n"
    "  --steps-per-frame N   solver steps between frames (default 20)\n"
    "  --warmup-steps N      steps before the first frame, to let the vortex street form (default 0)\n"
    "  --warmup-cache DIR    keep the state after the warm-up in DIR and start from it when DIR\n"
    "                        already holds it (same grid, flow and steps): saves recomputing it\n"
    "  --re RE               Reynolds number (default 100)\n"
    "  --velocity U          inflow velocity in lattice units (default 0.08)\n"
    "  --field vorticity|speed   field sent in each frame (default vorticity)\n"
    "  --out DIR             output folder; consumer i writes DIR/consumer-i (default ./cfd-out)\n"
    "  --render-every N      consumers render every N-th frame (0 = none; default 1)\n"
    "  --slow-ms LIST        extra milliseconds per frame for each consumer, e.g. 0,200\n"
    "  --zoom Z              PNG pixels per cell side (default 1)\n"
    "  --display all|live    all: consumers render every frame as it is received (a recorder; a slow\n"
    "                        renderer holds the transport back); live: they render off the receive path,\n"
    "                        the newest frame whenever the renderer is free, and count the frames skipped\n"
    "                        (default all)\n"
    "  --summary-timeout S   seconds to wait for the consumers' summaries (default 0 = no limit)\n"
    "  --allow-drops         the transport is configured to discard frames for a slow consumer\n"
    "                        (LONGPIPE_WINDOW_FULL=drop-oldest|keep-latest): gaps are reported as\n"
    "                        dropped by policy, not failures; duplicates, reordering, corruption still fail\n"
    "  --csv FILE, --json FILE  also write the results there";

FrameProducer::Options FrameProducer::parse(CommandLine& args) {
  Options o;
  std::tie(o.flow.width, o.flow.height) = args.grid("--grid", {128, 64});
  o.flow.reynolds = args.real("--re", 100.0, 1.0, 10000.0);
  o.flow.inlet_velocity = args.real("--velocity", o.flow.inlet_velocity, 0.001, FlowConfig::kMaxInletVelocity);
  o.frames = args.integer("--frames", 50, 1, 10000000);
  o.steps_per_frame = args.integer("--steps-per-frame", 20, 1, 1000000);
  o.warmup_steps = args.integer("--warmup-steps", 0, 0, 100000000);
  o.warmup_cache_folder = args.text("--warmup-cache", "");
  const std::string field = args.text("--field", "vorticity");
  if (field != "vorticity" && field != "speed") throw std::invalid_argument("--field must be vorticity or speed");
  o.kind = field == "speed" ? FieldKind::kSpeed : FieldKind::kVorticity;
  o.consumers.output_folder = std::filesystem::absolute(args.text("--out", "cfd-out")).string();
  o.consumers.render_every = static_cast<int>(args.integer("--render-every", 1, 0, 1000000));
  o.consumers.slow_ms = args.integers("--slow-ms", 0, 600000);
  o.consumers.zoom = static_cast<int>(args.integer("--zoom", 1, 1, 16));
  const std::string display = args.text("--display", "all");
  if (display != "all" && display != "live") throw std::invalid_argument("--display must be all or live");
  o.consumers.live = display == "live";
  o.consumers.summary_timeout_seconds = args.real("--summary-timeout", 0, 0, 1e7);
  o.consumers.drops_allowed = args.flag("--allow-drops");
  o.csv_path = args.text("--csv", "");
  o.json_path = args.text("--json", "");
  return o;
}

FrameProducer::FrameProducer(Options options) : options_(std::move(options)), flow_(options_.flow) {
  options_.consumers.check();
}

void FrameProducer::run(FrameSink& sink, const std::string& route) {
  warm_up();
  double solver_seconds = 0, stall_seconds = 0, worst_stall = 0;
  size_t frame_bytes = 0;
  const auto start = Clock::now();
  for (long long n = 0; n < options_.frames; ++n) {
    const auto solve_start = Clock::now();
    flow_.advance(static_cast<int>(options_.steps_per_frame));
    if (!flow_.all_finite()) {
      throw std::runtime_error("the flow blew up by step " + std::to_string(flow_.step()) +
                               ": use a larger grid or a lower Reynolds number");
    }
    Frame frame;
    frame.frame_number = static_cast<uint32_t>(n);
    frame.step = static_cast<uint64_t>(flow_.step());
    frame.width = static_cast<uint32_t>(flow_.width());
    frame.height = static_cast<uint32_t>(flow_.height());
    frame.kind = options_.kind;
    frame.values = options_.kind == FieldKind::kSpeed ? flow_.speed() : flow_.vorticity();
    std::vector<uint8_t> bytes = frame.encode();
    solver_seconds += seconds(Clock::now() - solve_start);
    frame_bytes = bytes.size();
    const double stall = sink.send(bytes);
    stall_seconds += stall;
    worst_stall = std::max(worst_stall, stall);
  }
  const double send_seconds = seconds(Clock::now() - start);
  summaries_ = sink.finish(options_.frames);
  const double total_seconds = seconds(Clock::now() - start);

  const double cells = static_cast<double>(flow_.width()) * flow_.height();
  const long long frames = options_.frames;
  results_ = Record();
  results_.add("grid", std::to_string(flow_.width()) + "x" + std::to_string(flow_.height()))
      .add("field", std::string(field_kind_name(options_.kind)))
      .add("frame_bytes", static_cast<long long>(frame_bytes))
      .add("frames", frames)
      .add("steps_per_frame", options_.steps_per_frame)
      .add("consumers", static_cast<long long>(options_.consumers.consumers))
      .add("route", route)
      .add("send_seconds", send_seconds)
      .add("total_seconds", total_seconds)
      .add("solver_seconds", solver_seconds)
      .add("stall_seconds", stall_seconds)
      .add("stall_fraction", send_seconds > 0 ? stall_seconds / send_seconds : 0.0)
      .add("stall_max_ms", worst_stall * 1e3)
      .add("produced_frames_per_second", frames / send_seconds)
      .add("solver_frames_per_second", frames / solver_seconds)
      .add("cell_updates_per_second", cells * options_.steps_per_frame * frames / solver_seconds);
}

void FrameProducer::warm_up() {
  if (options_.warmup_cache_folder.empty() || options_.warmup_steps == 0) {
    flow_.advance(static_cast<int>(options_.warmup_steps));
    return;
  }
  const WarmupCache cache(options_.warmup_cache_folder);
  const auto start = Clock::now();
  const bool restored = cache.warm_up(flow_, options_.warmup_steps);
  std::printf("warm-up: %lld steps %s %s in %.1f s\n", options_.warmup_steps, restored ? "restored from" : "computed, kept in",
              cache.file_for(flow_, options_.warmup_steps).c_str(), seconds(Clock::now() - start));
  std::fflush(stdout);
}

bool FrameProducer::report(const std::string& program, const std::string& transport) const {
  const Record& r = results_;
  std::printf("%s: %lld frames of %s (%.0f bytes) in %.2f s: produced %.2f frames/s (solver alone %.1f), "
              "stalled %.2f s in %s calls (%.0f %%, worst frame %.0f ms)\n",
              program.c_str(), options_.frames, r.text("grid").c_str(), r.number("frame_bytes"), r.number("send_seconds"),
              r.number("produced_frames_per_second"), r.number("solver_frames_per_second"), r.number("stall_seconds"),
              transport.c_str(), 100 * r.number("stall_fraction"), r.number("stall_max_ms"));
  bool all_delivered = true;
  std::string csv;
  std::string json = "{\"producer\": " + r.to_json() + ", \"consumers\": [";
  for (size_t i = 0; i < summaries_.size(); ++i) {
    const RunSummary& s = summaries_[i];
    all_delivered = all_delivered && s.delivered_as_configured();
    std::printf("consumer %lld on %s: received %lld/%lld, %s, %s, missing %lld, duplicates %lld, corrupt %lld, "
                "%lld PNGs, %.2f frames/s (end to end %.2f), latency to receipt median %.1f / p95 %.1f ms, to display median %.1f ms\n",
                s.consumer, s.host.c_str(), s.frames_received, s.frames_sent, s.in_order ? "in order" : "OUT OF ORDER",
                s.delivery().c_str(), s.missing, s.duplicates, s.corrupt, s.pngs_written,
                s.frames_per_second, s.end_to_end_frames_per_second, s.receive_latency_median_ms, s.receive_latency_p95_ms, s.display_latency_median_ms);
    Record row = r;
    row.append(s.to_record(), "consumer_");
    if (i == 0) csv = row.csv_header() + "\n";
    csv += row.csv_row() + "\n";
    json += (i ? ", " : "") + s.to_record().to_json();
  }
  json += "]}\n";
  std::fflush(stdout);
  if (!options_.csv_path.empty()) std::ofstream(options_.csv_path) << csv;
  if (!options_.json_path.empty()) std::ofstream(options_.json_path) << json;
  return all_delivered;
}

}  // namespace lp::cfd
