// FrameSink: where a FrameProducer's frames go, i.e. the transport and its consumers (PVM tasks it
// spawned, or MPI ranks started with it). The producer's loop, measurements and report are the same
// for every transport; only these two calls differ.
#pragma once

#include <cstdint>
#include <vector>

#include "run_summary.h"

namespace lp::cfd {

class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Stamps the send time into the encoded frame and sends it to every consumer. Returns the seconds
  // spent inside the transport's calls (the producer's stall for this frame).
  virtual double send(std::vector<uint8_t>& encoded_frame) = 0;
  // Announces the number of frames sent and waits for each consumer's summary. A consumer that
  // vanished or timed out gets a summary with host "lost" and complete = false.
  virtual std::vector<RunSummary> finish(long long frames_sent) = 0;
};

}  // namespace lp::cfd
