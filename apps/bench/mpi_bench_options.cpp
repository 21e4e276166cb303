#include "mpi_bench_options.h"

#include <stdexcept>

namespace lp::mpibench {
namespace {

// Largest accepted message, and the most the buffers of one rank may hold: the nonblocking and
// bidirectional modes keep X messages (bidirectional: X each way) in memory at once.
constexpr long kMaxMessageBytes = 4L * 1024 * 1024 * 1024;
constexpr long kMaxBufferBytes = 4L * 1024 * 1024 * 1024;
constexpr long kMaxCount = 1'000'000;
constexpr long kMaxBatches = 100'000;
constexpr long kMaxPauseMilliseconds = 3'600'000;

constexpr const char* kProgram = "lp-mpi-bench";

using lp::bench::badValue;
using lp::bench::parseNumber;
using lp::bench::parseSeconds;

SendMode parseSendMode(const std::string& value) {
  if (value == "blocking") return SendMode::kBlocking;
  if (value == "nonblocking") return SendMode::kNonblocking;
  if (value == "bidirectional") return SendMode::kBidirectional;
  badValue(kProgram, "--send", value, "blocking, nonblocking, bidirectional");
}

}  // namespace

MpiBenchOptions parseMpiBenchOptions(const std::vector<std::string>& args) {
  MpiBenchOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& option = args[i];
    if (option.rfind("--", 0) != 0) throw std::invalid_argument("lp-mpi-bench: unexpected argument '" + option + "'");
    if (i + 1 >= args.size()) throw std::invalid_argument("lp-mpi-bench: " + option + " needs a value");
    const std::string& value = args[++i];
    if (option == "--count") options.count = static_cast<int>(parseNumber(kProgram, option, value, 1, kMaxCount));
    else if (option == "--size") options.size = parseNumber(kProgram, option, value, 1, kMaxMessageBytes);
    else if (option == "--ack") options.ack = lp::bench::parseAckMode(kProgram, value);
    else if (option == "--send") options.send = parseSendMode(value);
    else if (option == "--batches") options.batches = static_cast<int>(parseNumber(kProgram, option, value, 1, kMaxBatches));
    else if (option == "--timeout") options.batchTimeoutSeconds = parseSeconds(kProgram, option, value);
    else if (option == "--pause-ms") {
      options.pauseMilliseconds = static_cast<int>(parseNumber(kProgram, option, value, 0, kMaxPauseMilliseconds));
    } else {
      throw std::invalid_argument("lp-mpi-bench: unknown option '" + option + "' (see --help)");
    }
  }
  if (options.size > kLargeMessageBytes && options.size % kLargeElementBytes != 0) {
    throw std::invalid_argument("lp-mpi-bench: --size above " + std::to_string(kLargeMessageBytes >> 20) +
                                "M must be a multiple of " + std::to_string(kLargeElementBytes) +
                                " (it is sent as 1 KiB elements)");
  }
  if (bufferBytes(options) > kMaxBufferBytes) {
    throw std::invalid_argument("lp-mpi-bench: --count x --size needs " + std::to_string(bufferBytes(options) >> 20) +
                                " MiB of buffers per rank, more than " + std::to_string(kMaxBufferBytes >> 20) +
                                " MiB");
  }
  return options;
}

long bufferBytes(const MpiBenchOptions& options) {
  switch (options.send) {
    case SendMode::kBlocking: return options.size;
    case SendMode::kNonblocking: return options.count * options.size;
    case SendMode::kBidirectional: return 2 * options.count * options.size;
  }
  return options.size;
}

const char* sendModeName(SendMode mode) {
  switch (mode) {
    case SendMode::kBlocking: return "blocking";
    case SendMode::kNonblocking: return "nonblocking";
    case SendMode::kBidirectional: return "bidirectional";
  }
  return "blocking";
}

std::string mpiBenchUsage() {
  return R"(Usage: mpirun -np 2 lp-mpi-bench [options]     (e.g. apps/mpi-sites/mpi-sites lp-mpi-bench ...)

A plain MPI program (mpi.h only) measuring aggregate latency: rank 0 sends X messages of P bytes
to rank 1 without waiting between sends, and measures the time T until the acknowledgements are
in. Run it with exactly two ranks, one per site. Prints one CSV line per batch; batch 1 is the
first of a fresh job (its connection opens during it), later batches are warm.

  --count X            messages per batch (default 100)
  --size P             bytes per message, suffix K, M or G allowed (default 1024); above 64M a
                       multiple of 1K, sent as elements of an MPI_Type_contiguous of 1 KiB
  --ack each|last|wait each (default): rank 1 acknowledges every message, rank 0 posts the X
                       receives for them before sending and waits for them after; last: one
                       acknowledgement after the X-th message; wait: REFERENCE ONLY, stop-and-wait
  --send blocking|nonblocking|bidirectional
                       MPI_Send in a loop (default), or MPI_Isend of all X + MPI_Waitall, or
                       osu_bibw's shape: both ranks post X MPI_Irecv and X MPI_Isend, then one
                       MPI_Waitall (no acknowledgements: --ack is ignored and shown as none;
                       T is rank 0's time until its X receives and sends are complete)
  --batches N          batches to run (default 1)
  --timeout S          a batch taking longer than S seconds ends the job with an error (default 3600)
  --pause-ms MS        idle time between batches (default 0)

Buffers of one rank (P, X x P nonblocking, 2 x X x P bidirectional) are at most 4 GiB.

Output columns: batch,size_bytes,count,ack,send,fresh_job,total_s,per_message_s
(fresh_job is 1 for the first batch of the job). At the end, on stderr:
"lp-mpi-bench: rank 0 on HOST, rank 1 on HOST".
)";
}

}  // namespace lp::mpibench
