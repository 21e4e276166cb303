// Command-line options of lp-mpi-bench, the aggregate-latency benchmark as a plain MPI program.
#pragma once

#include <string>
#include <vector>

#include "bench_values.h"

namespace lp::mpibench {

// How the receiver acknowledges a batch of X messages: as lp-bench's --ack (with --ack each, the
// sender's receives for the acknowledgements are posted before its first send).
using lp::bench::AckMode;
using lp::bench::ackModeName;

// How the sender hands over its X messages.
enum class SendMode {
  kBlocking,     // MPI_Send in a loop: the usual MPI program (a rendezvous send waits for the receiver)
  kNonblocking,  // MPI_Isend of all X, then MPI_Waitall
  // osu_bibw's shape: both ranks post X MPI_Irecv and X MPI_Isend, then one MPI_Waitall; no
  // acknowledgements (each rank's receives end its batch). A window fills the link both ways.
  kBidirectional,
};

// Above this size a message travels as elements of kLargeElementBytes (an MPI_Type_contiguous of
// bytes), as a program must send more than 2^31-1 bytes: counts are ints.
inline constexpr long kLargeMessageBytes = 64L * 1024 * 1024;
inline constexpr long kLargeElementBytes = 1024;

struct MpiBenchOptions {
  int count = 100;                    // X: messages per batch
  long size = 1024;                   // P: bytes per message
  AckMode ack = AckMode::kEach;
  SendMode send = SendMode::kBlocking;
  int batches = 1;
  double batchTimeoutSeconds = 3600;  // a batch taking longer is an error, not a hang
  int pauseMilliseconds = 0;          // idle time between batches
};

// Parses argv (without the program name). Throws std::invalid_argument naming the bad option.
MpiBenchOptions parseMpiBenchOptions(const std::vector<std::string>& args);

const char* sendModeName(SendMode mode);

// Bytes of message buffers one rank holds at once.
long bufferBytes(const MpiBenchOptions& options);

std::string mpiBenchUsage();

}  // namespace lp::mpibench
