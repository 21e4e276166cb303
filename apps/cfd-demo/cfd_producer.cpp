// cfd-producer: a plain PVM program. Runs the lattice Boltzmann cylinder flow and, every N steps,
// sends a frame of the field to one or several cfd-consumer tasks it spawns. Measures its own
// stall (time inside the PVM pack and send calls) and the frame rate, collects the consumers'
// summaries at the end and prints everything (also as CSV and JSON). The solver loop, measurements
// and report are FrameProducer's (shared with cfd-mpi); the PVM part is ConsumerGroup.
#include <cstdio>  // before pvm3.h, which declares pvm_catchout(FILE*) only when stdio is in

#include <pvm3.h>

#include <filesystem>
#include <string>

#include "command_line.h"
#include "consumer_group.h"
#include "frame_producer.h"
#include "pvm_call.h"  // lp_pvm_call (apps/pvm-sites)

using lp::pvm::pvmCall;

namespace {

using namespace lp::cfd;

const std::string kUsage = std::string("cfd-producer [options]\n") + FrameProducer::kOptionsUsage +
                           "\n"
                           "  --consumers N         consumers to spawn (default 1)\n"
                           "  --consumer-host HOST[,HOST...]  spawn the consumers on HOST (PvmTaskHost), or\n"
                           "                        consumer i on the i-th HOST of a list (one per consumer)\n"
                           "  --consumer-program P  consumer executable (default: cfd-consumer next to this program)\n"
                           "  --route default|direct   PVM route (default: through the pvmds)";

std::string default_consumer_program() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "cfd-consumer").string();
}

int run(int argc, char** argv) {
  CommandLine args(argc, argv, kUsage);
  FrameProducer::Options options = FrameProducer::parse(args);
  ConsumerGroup::Options group;
  options.consumers.consumers = static_cast<int>(args.integer("--consumers", 1, 1, 64));
  group.host = args.text("--consumer-host", "");
  group.program = args.text("--consumer-program", default_consumer_program());
  group.route = args.text("--route", "default");
  args.finish();
  if (group.route != "default" && group.route != "direct") throw std::invalid_argument("--route must be default or direct");
  group.settings = options.consumers;
  ConsumerGroup::consumer_hosts(group.host, options.consumers.consumers);  // a bad list fails before the warm-up

  FrameProducer producer(options);  // checks the flow set-up before any task is spawned
  std::printf("cfd-producer: %s\n", producer.flow().config().describe().c_str());

  pvmCall("pvm_mytid (is a pvmd running?)", pvm_mytid());
  pvm_catchout(stdout);  // the consumers' output appears in ours
  if (group.route == "direct") pvm_setopt(PvmRoute, PvmRouteDirect);
  std::filesystem::create_directories(options.consumers.output_folder);
  {
    ConsumerGroup consumers(group);
    producer.run(consumers, group.route);
  }
  pvm_exit();  // also waits for the consumers' caught output
  return producer.report("cfd-producer", "PVM") ? 0 : 1;
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
