// ConsumerGroup: the producer's side of the PVM conversation. Spawns the consumers, sends every
// frame to each of them, and at the end announces the frame count and collects their summaries.
// A consumer that exits without a summary is reported as lost, not waited for forever. Consumers
// still running when the group is destroyed early (an error) are killed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "consumer_settings.h"
#include "frame_sink.h"
#include "run_summary.h"

namespace lp::cfd {

class ConsumerGroup : public FrameSink {
 public:
  // How long a consumer's summary may trail its exit notice: they come by different routes
  // (the pvmd sends the notice; the summary may come straight from the task), so either can be first.
  static constexpr double kSummaryGraceSeconds = 10.0;
  // How long spawned consumers may take to report ready: starting a task on a site 540 ms away
  // takes a few round trips through the pvmds, plus the program's own start-up.
  static constexpr double kStartupTimeoutSeconds = 120.0;

  struct Options {
    ConsumerSettings settings;
    std::string program;          // cfd-consumer, absolute path or a name on the pvmd's search path
    // Spawn there (PvmTaskHost): one host for every consumer, or a comma list with one host per
    // consumer (consumers at different sites); empty = wherever PVM chooses.
    std::string host;
    std::string route = "default";  // PVM route the consumers ask for: default (via pvmd) or direct
  };

  // Spawns the consumers and waits until each has said it is ready, so that frame timing starts
  // with every receiver in place (and a transport chosen at start-up sees them all).
  explicit ConsumerGroup(Options options);
  // The host of each of `consumers` consumers: `hosts` (--consumer-host) is one host for all, or a
  // comma list of one per consumer; std::invalid_argument, naming the option, otherwise.
  static std::vector<std::string> consumer_hosts(const std::string& hosts, int consumers);
  ~ConsumerGroup() override;
  ConsumerGroup(const ConsumerGroup&) = delete;
  ConsumerGroup& operator=(const ConsumerGroup&) = delete;

  // Packs the frame once and pvm_sends it to every consumer (FrameSink).
  double send(std::vector<uint8_t>& encoded_frame) override;
  // The summaries, or "lost" for a consumer that exited without one (pvm_notify) or timed out.
  std::vector<RunSummary> finish(long long frames_sent) override;

  const std::vector<int>& tids() const { return tids_; }

 private:
  // One message from a consumer, or the pvmd's notice that a consumer exited.
  struct Arrival {
    int tag;
    int consumer;  // index into tids_; -1 if the message is not about one of ours
    int bytes;
  };
  // Waits up to a second for the next message (the callers check their deadlines in between).
  std::optional<Arrival> next_arrival();
  void wait_until_ready();
  int index_of(int tid) const;

  Options options_;
  std::vector<int> tids_;
  std::vector<bool> finished_;
};

}  // namespace lp::cfd
