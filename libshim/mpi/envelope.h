// Envelope and ReceivePattern: MPI's matching rule for messages that came over LongPipe, without MPI.
// Sources are ranks of MPI_COMM_WORLD (a communicator's ranks are translated at the edges), so a
// message can wait for a communicator this process has not finished creating yet.
#pragma once

namespace lp::mpi {

inline constexpr int kAnySource = -1;  // MPI_ANY_SOURCE in Open MPI (checked in front_end.cpp)
inline constexpr int kAnyTag = -1;     // MPI_ANY_TAG in Open MPI

struct Envelope {
  int context = 0;       // the communicator's LongPipe context id, agreed at its creation
  int source_world = 0;  // sender's rank in MPI_COMM_WORLD
  int tag = 0;
};

struct ReceivePattern {
  int context = 0;
  int source_world = kAnySource;
  int tag = kAnyTag;

  bool matches(const Envelope& envelope) const {
    return envelope.context == context && (source_world == kAnySource || source_world == envelope.source_world) &&
           (tag == kAnyTag || tag == envelope.tag);
  }
};

}  // namespace lp::mpi
