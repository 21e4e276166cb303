// NativeReceiveOrder: the LongPipe-side receives pending on one communicator that messages carried
// by Open MPI (from same-site ranks) may match: MPI_ANY_SOURCE receives, and receives from a
// same-site rank that had to queue behind one. Open MPI matches its own receives as messages
// arrive, while LongPipe's claim Open MPI messages only at progress steps, oldest first; so a
// receive (or probe) from a same-site rank may go straight to Open MPI only while no earlier
// LongPipe-side receive could take a message from that rank (MPI: the oldest posted receive that
// matches a message gets it). Pure and single-threaded.
#pragma once

#include <unordered_map>

#include "envelope.h"

namespace lp::mpi {

class NativeReceiveOrder {
 public:
  // A receive from peer rank `source` (kAnySource: any) joins, or leaves, the pending ones.
  void add(int source) {
    ++pending_;
    if (source == kAnySource) {
      ++wildcards_;
    } else {
      ++by_source_[source];
    }
  }
  void remove(int source) {
    --pending_;
    if (source == kAnySource) {
      --wildcards_;
      return;
    }
    auto it = by_source_.find(source);
    if (it != by_source_.end() && --it->second == 0) by_source_.erase(it);
  }

  // No such receive is pending (the inline fast path's one test).
  bool empty() const { return pending_ == 0; }
  // Whether a receive or probe from peer `source` (same site, or kAnySource) posted now must go
  // through LongPipe's matching: an earlier pending receive could take a message it matches.
  bool holds_back(int source) const {
    if (pending_ == 0) return false;
    if (wildcards_ > 0) return true;
    if (source == kAnySource) return pending_ > 0;
    return by_source_.count(source) != 0;
  }

 private:
  int pending_ = 0;
  int wildcards_ = 0;
  std::unordered_map<int, int> by_source_;  // peer rank -> pending receives from it
};

// Whether a receive for (`source`, `tag`) in a communicator's ranks, wildcards allowed, matches a
// message from peer `message_source` with `message_tag` (what a probe of Open MPI's reports).
inline bool receive_matches(int source, int tag, int message_source, int message_tag) {
  return (source == kAnySource || source == message_source) && (tag == kAnyTag || tag == message_tag);
}

}  // namespace lp::mpi
