// cfd-producer: a plain PVM program. Runs the lattice Boltzmann cylinder flow and, every N steps,
// sends a frame of the field to one or several cfd-consumer tasks it spawns. Measures its own
// stall (time inside the PVM pack and send calls) and the frame rate, collects the consumers'
// summaries at the end and prints everything (also as CSV and JSON).
#include <chrono>
#include <cstdio>  // before pvm3.h, which declares pvm_catchout(FILE*) only when stdio is in

#include <pvm3.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "command_line.h"
#include "consumer_group.h"
#include "frame.h"
#include "lattice_boltzmann.h"
#include "pvm_call.h"  // lp_pvm_call (apps/pvm-sites)
#include "pvm_protocol.h"

using lp::pvm::pvmCall;

namespace {

using namespace lp::cfd;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "cfd-producer [options]\n"
    "  --frames N            frames to send (default 50)\n"
    "  --grid WxH            solver grid = frame size (default 128x64)\n"
    "  --steps-per-frame N   solver steps between frames (default 20)\n"
    "  --warmup-steps N      steps before the first frame, to let the vortex street form (default 0)\n"
    "  --re RE               Reynolds number (default 100)\n"
    "  --velocity U          inflow velocity in lattice units (default 0.08)\n"
    "  --field vorticity|speed   field sent in each frame (default vorticity)\n"
    "  --consumers N         consumers to spawn (default 1)\n"
    "  --consumer-host HOST  spawn the consumers on HOST (PvmTaskHost)\n"
    "  --consumer-program P  consumer executable (default: cfd-consumer next to this program)\n"
    "  --out DIR             output folder; consumer i writes DIR/consumer-i (default ./cfd-out)\n"
    "  --render-every N      consumers render every N-th frame (0 = none; default 1)\n"
    "  --slow-ms LIST        extra milliseconds per frame for each consumer, e.g. 0,200\n"
    "  --zoom Z              PNG pixels per cell side (default 1)\n"
    "  --route default|direct   PVM route (default: through the pvmds)\n"
    "  --summary-timeout S   seconds to wait for the consumers' summaries (default 0 = no limit)\n"
    "  --allow-drops         the transport is configured to discard frames for a slow consumer\n"
    "                        (LONGPIPE_WINDOW_FULL=drop-oldest|keep-latest): gaps are reported as\n"
    "                        dropped by policy, not failures; duplicates, reordering, corruption still fail\n"
    "  --csv FILE, --json FILE  also write the results there";

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string default_consumer_program() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "cfd-consumer").string();
}

int run(int argc, char** argv) {
  CommandLine args(argc, argv, kUsage);
  FlowConfig flow_config;
  std::tie(flow_config.width, flow_config.height) = args.grid("--grid", {128, 64});
  flow_config.reynolds = args.real("--re", 100.0, 1.0, 10000.0);
  flow_config.inlet_velocity = args.real("--velocity", flow_config.inlet_velocity, 0.001, FlowConfig::kMaxInletVelocity);
  const long long frames = args.integer("--frames", 50, 1, 10000000);
  const long long steps_per_frame = args.integer("--steps-per-frame", 20, 1, 1000000);
  const long long warmup_steps = args.integer("--warmup-steps", 0, 0, 100000000);
  const std::string field = args.text("--field", "vorticity");
  ConsumerGroup::Options group;
  group.consumers = static_cast<int>(args.integer("--consumers", 1, 1, 64));
  group.host = args.text("--consumer-host", "");
  group.program = args.text("--consumer-program", default_consumer_program());
  group.output_folder = std::filesystem::absolute(args.text("--out", "cfd-out")).string();
  group.render_every = static_cast<int>(args.integer("--render-every", 1, 0, 1000000));
  group.slow_ms = args.integers("--slow-ms", 0, 600000);
  group.zoom = static_cast<int>(args.integer("--zoom", 1, 1, 16));
  group.route = args.text("--route", "default");
  group.summary_timeout_seconds = args.real("--summary-timeout", 0, 0, 1e7);
  group.drops_allowed = args.flag("--allow-drops");
  const std::string csv_path = args.text("--csv", ""), json_path = args.text("--json", "");
  args.finish();
  if (field != "vorticity" && field != "speed") throw std::invalid_argument("--field must be vorticity or speed");
  if (group.route != "default" && group.route != "direct") throw std::invalid_argument("--route must be default or direct");
  if (group.slow_ms.size() > static_cast<size_t>(group.consumers)) {
    throw std::invalid_argument("--slow-ms lists more values than there are consumers");
  }
  const FieldKind kind = field == "speed" ? FieldKind::kSpeed : FieldKind::kVorticity;

  LatticeBoltzmann flow(flow_config);  // checks the flow set-up before any task is spawned
  std::printf("cfd-producer: %s\n", flow.config().describe().c_str());

  pvmCall("pvm_mytid (is a pvmd running?)", pvm_mytid());
  pvm_catchout(stdout);  // the consumers' output appears in ours
  if (group.route == "direct") pvm_setopt(PvmRoute, PvmRouteDirect);
  std::filesystem::create_directories(group.output_folder);

  Record results;
  std::vector<RunSummary> summaries;
  {
    ConsumerGroup consumers(group);
    flow.advance(static_cast<int>(warmup_steps));
    double solver_seconds = 0, stall_seconds = 0, worst_stall = 0;
    size_t frame_bytes = 0;
    const auto start = Clock::now();
    for (long long n = 0; n < frames; ++n) {
      const auto solve_start = Clock::now();
      flow.advance(static_cast<int>(steps_per_frame));
      if (!flow.all_finite()) {
        throw std::runtime_error("the flow blew up by step " + std::to_string(flow.step()) +
                                 ": use a larger grid or a lower Reynolds number");
      }
      Frame frame;
      frame.frame_number = static_cast<uint32_t>(n);
      frame.step = static_cast<uint64_t>(flow.step());
      frame.width = static_cast<uint32_t>(flow.width());
      frame.height = static_cast<uint32_t>(flow.height());
      frame.kind = kind;
      frame.values = kind == FieldKind::kSpeed ? flow.speed() : flow.vorticity();
      std::vector<uint8_t> bytes = frame.encode();
      solver_seconds += seconds(Clock::now() - solve_start);
      frame_bytes = bytes.size();
      const double stall = consumers.send(bytes);
      stall_seconds += stall;
      worst_stall = std::max(worst_stall, stall);
    }
    const double send_seconds = seconds(Clock::now() - start);
    summaries = consumers.finish(frames);
    const double total_seconds = seconds(Clock::now() - start);

    const double cells = static_cast<double>(flow.width()) * flow.height();
    results.add("grid", std::to_string(flow.width()) + "x" + std::to_string(flow.height()))
        .add("field", std::string(field_kind_name(kind)))
        .add("frame_bytes", static_cast<long long>(frame_bytes))
        .add("frames", frames)
        .add("steps_per_frame", steps_per_frame)
        .add("consumers", static_cast<long long>(group.consumers))
        .add("route", group.route)
        .add("send_seconds", send_seconds)
        .add("total_seconds", total_seconds)
        .add("solver_seconds", solver_seconds)
        .add("stall_seconds", stall_seconds)
        .add("stall_fraction", send_seconds > 0 ? stall_seconds / send_seconds : 0.0)
        .add("stall_max_ms", worst_stall * 1e3)
        .add("produced_frames_per_second", frames / send_seconds)
        .add("solver_frames_per_second", frames / solver_seconds)
        .add("cell_updates_per_second", cells * steps_per_frame * frames / solver_seconds);
  }
  pvm_exit();  // also waits for the consumers' caught output

  std::printf("cfd-producer: %lld frames of %s (%.0f bytes) in %.2f s: produced %.2f frames/s (solver alone %.1f), "
              "stalled %.2f s in PVM calls (%.0f %%, worst frame %.0f ms)\n",
              frames, results.text("grid").c_str(), results.number("frame_bytes"), results.number("send_seconds"),
              results.number("produced_frames_per_second"), results.number("solver_frames_per_second"),
              results.number("stall_seconds"), 100 * results.number("stall_fraction"), results.number("stall_max_ms"));
  bool all_complete = true;
  std::string csv;
  std::string json = "{\"producer\": " + results.to_json() + ", \"consumers\": [";
  for (size_t i = 0; i < summaries.size(); ++i) {
    const RunSummary& s = summaries[i];
    all_complete = all_complete && s.delivered_as_configured();
    std::printf("consumer %lld on %s: received %lld/%lld, %s, %s, missing %lld, duplicates %lld, corrupt %lld, "
                "%lld PNGs, %.2f frames/s (end to end %.2f), latency to receipt median %.1f / p95 %.1f ms, to display median %.1f ms\n",
                s.consumer, s.host.c_str(), s.frames_received, s.frames_sent, s.in_order ? "in order" : "OUT OF ORDER",
                s.delivery().c_str(), s.missing, s.duplicates, s.corrupt, s.pngs_written,
                s.frames_per_second, s.end_to_end_frames_per_second, s.receive_latency_median_ms, s.receive_latency_p95_ms, s.display_latency_median_ms);
    Record row = results;
    row.append(s.to_record(), "consumer_");
    if (i == 0) csv = row.csv_header() + "\n";
    csv += row.csv_row() + "\n";
    json += (i ? ", " : "") + s.to_record().to_json();
  }
  json += "]}\n";
  if (!csv_path.empty()) std::ofstream(csv_path) << csv;
  if (!json_path.empty()) std::ofstream(json_path) << json;
  return all_complete ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-producer: %s\n", error.what());
    pvm_exit();
    return 2;
  }
}
