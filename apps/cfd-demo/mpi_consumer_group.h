// MpiConsumerGroup: the producer's side of the MPI conversation. Its consumers are every other rank
// of MPI_COMM_WORLD (mpirun starts them with the producer, rank 0): it sends each consumer its
// options, waits until each is ready, MPI_Sends every frame to each, and at the end announces the
// frame count and collects their summaries. Plain MPI (mpi.h only): it runs over Open MPI's own
// transports or under an interposed one alike.
#pragma once

#include <mpi.h>

#include <vector>

#include "consumer_settings.h"
#include "frame_sink.h"
#include "run_summary.h"

namespace lp::cfd {

class MpiConsumerGroup : public FrameSink {
 public:
  // How often a wait with a deadline looks for the message (MPI has no receive with a timeout).
  static constexpr int kPollMicroseconds = 1000;
  // How long the consumers may take to report ready: their set-up only (mpirun has started them).
  static constexpr double kStartupTimeoutSeconds = 120.0;

  // Ranks 1 .. size-1 of MPI_COMM_WORLD are the consumers; settings.consumers must equal their number.
  explicit MpiConsumerGroup(ConsumerSettings settings);

  // The frame goes to every consumer with a blocking MPI_Send, as a plain MPI program would.
  double send(std::vector<uint8_t>& encoded_frame) override;
  // The summaries, or "lost" for a consumer that sent none within --summary-timeout.
  std::vector<RunSummary> finish(long long frames_sent) override;

  // False if a consumer never answered: MPI_Finalize would wait for it, so the caller aborts the job.
  bool all_answered() const { return all_answered_; }

 private:
  // Waits for a message with `tag` from `source` (or MPI_ANY_SOURCE) up to `timeout_seconds`
  // (0 = as long as it takes). False on timeout.
  bool wait_for(int source, int tag, double timeout_seconds, MPI_Status& status) const;

  ConsumerSettings settings_;
  bool all_answered_ = true;
};

}  // namespace lp::cfd
