// FrameProducer: the producer without the transport. Takes the options every producer shares, runs
// the flow solver, hands each encoded frame to a FrameSink (PVM tasks or MPI ranks), measures the
// time spent in it (the stall) and the frame rate, collects the consumers' summaries and reports
// everything (one line per consumer, CSV and JSON).
#pragma once

#include <string>
#include <vector>

#include "command_line.h"
#include "consumer_settings.h"
#include "flow_config.h"
#include "frame.h"
#include "frame_sink.h"
#include "lattice_boltzmann.h"
#include "record.h"
#include "run_summary.h"

namespace lp::cfd {

class FrameProducer {
 public:
  struct Options {
    FlowConfig flow;
    long long frames = 50;
    long long steps_per_frame = 20;
    long long warmup_steps = 0;
    std::string warmup_cache_folder;  // empty: compute the warm-up every time
    FieldKind kind = FieldKind::kVorticity;
    ConsumerSettings consumers;  // `consumers.consumers` is the transport's to set
    std::string csv_path, json_path;
  };
  // The usage lines of the options parse() takes.
  static const char* const kOptionsUsage;
  // Takes the shared options from `args`; the caller takes its own and then calls args.finish().
  static Options parse(CommandLine& args);

  // Sets up the solver: a flow that cannot run is refused here, before any consumer is started.
  explicit FrameProducer(Options options);

  const Options& options() const { return options_; }
  const LatticeBoltzmann& flow() const { return flow_; }

  // Warms the flow up, sends every frame to `sink`, then collects the consumers' summaries.
  // `route` names the transport's path in the results (PVM: default or direct; MPI: mpi).
  void run(FrameSink& sink, const std::string& route);
  // Prints the producer's line (`program`; the stall is time in `transport`'s calls) and one per
  // consumer, writes the CSV and JSON asked for. True if every consumer got every frame once and in
  // order, or only missed frames the transport's drop policy discarded (--allow-drops).
  bool report(const std::string& program, const std::string& transport) const;

 private:
  // The warm-up steps: computed, or restored from options_.warmup_cache_folder.
  void warm_up();

  Options options_;
  LatticeBoltzmann flow_;
  Record results_;
  std::vector<RunSummary> summaries_;
};

}  // namespace lp::cfd
