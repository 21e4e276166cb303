// FrameSequence: what a consumer saw of the numbered frames 0, 1, 2, ...: whether they arrived
// complete (each exactly once) and in order.
#pragma once

#include <cstdint>
#include <vector>

namespace lp::cfd {

class FrameSequence {
 public:
  void record(uint32_t frame_number);

  uint64_t received() const { return received_; }
  uint64_t distinct() const { return distinct_; }
  uint64_t duplicates() const { return received_ - distinct_; }
  // Frames that arrived with a lower number than one already seen.
  uint64_t out_of_order() const { return out_of_order_; }
  // Frames numbered below `sent` that never arrived.
  uint64_t missing(uint64_t sent) const;
  // Frames numbered `sent` or above: the producer never sent those.
  uint64_t unexpected(uint64_t sent) const;
  bool in_order() const { return out_of_order_ == 0 && duplicates() == 0; }
  bool complete(uint64_t sent) const { return missing(sent) == 0 && unexpected(sent) == 0 && duplicates() == 0; }

 private:
  // Frame numbers from a message are bounded by what the bitmap may grow to.
  static constexpr uint32_t kMaxFrameNumber = 1u << 26;

  std::vector<bool> seen_;
  uint64_t received_ = 0;
  uint64_t distinct_ = 0;
  uint64_t out_of_order_ = 0;
  int64_t highest_ = -1;
};

}  // namespace lp::cfd
