#include "frame_sequence.h"

#include <stdexcept>
#include <string>

namespace lp::cfd {

void FrameSequence::record(uint32_t frame_number) {
  if (frame_number >= kMaxFrameNumber) {
    throw std::out_of_range("frame number " + std::to_string(frame_number) + " is beyond " +
                            std::to_string(kMaxFrameNumber));
  }
  ++received_;
  if (frame_number >= seen_.size()) seen_.resize(frame_number + 1, false);
  if (!seen_[frame_number]) {
    seen_[frame_number] = true;
    ++distinct_;
  }
  if (static_cast<int64_t>(frame_number) < highest_) ++out_of_order_;
  if (static_cast<int64_t>(frame_number) > highest_) highest_ = frame_number;
}

uint64_t FrameSequence::missing(uint64_t sent) const {
  uint64_t count = 0;
  for (uint64_t i = 0; i < sent; ++i) {
    if (i >= seen_.size() || !seen_[i]) ++count;
  }
  return count;
}

uint64_t FrameSequence::unexpected(uint64_t sent) const {
  uint64_t count = 0;
  for (uint64_t i = sent; i < seen_.size(); ++i) count += seen_[i];
  return count;
}

}  // namespace lp::cfd
