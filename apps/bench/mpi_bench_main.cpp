// lp-mpi-bench: a plain MPI program (mpi.h only, nothing of LongPipe) measuring the aggregate
// latency of X messages of P bytes from rank 0 to rank 1, or both ways at once (osu_bibw's shape).
// See mpi_bench_options.cpp for usage.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi_bench_options.h"

namespace lp::mpibench {
namespace {

constexpr int kSenderRank = 0;
constexpr int kReceiverRank = 1;
constexpr int kDataTag = 1;
constexpr int kAckTag = 2;
constexpr int kHostTag = 3;
// A message's sequence number (mod 256) is written into its first and last byte, and is the
// acknowledgement's one byte: a lost, duplicated or reordered message fails the run.
constexpr unsigned kSequenceModulus = 256;
constexpr int kTimeoutExitStatus = 3;

void mpiCall(const char* what, int status) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed (MPI error " + std::to_string(status) + ")");
}

unsigned char sequenceMark(long sequence) { return static_cast<unsigned char>(sequence % kSequenceModulus); }

// SIGALRM ends a batch that overruns --timeout; mpirun then ends the job. Only async-signal-safe
// calls here.
void onBatchTimeout(int) {
  static const char message[] = "lp-mpi-bench: a batch overran --timeout; giving up\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  _exit(kTimeoutExitStatus);
}

void armBatchTimeout(double seconds) { alarm(static_cast<unsigned>(std::ceil(seconds))); }
void disarmBatchTimeout() { alarm(0); }

void pauseBetweenBatches(const MpiBenchOptions& options, int batch) {
  if (options.pauseMilliseconds > 0 && batch > 1) std::this_thread::sleep_for(std::chrono::milliseconds(options.pauseMilliseconds));
}

// How a message of P bytes goes on the wire: bytes, or (above kLargeMessageBytes) 1 KiB elements,
// the way a program sends more than 2^31-1 bytes.
class WireType {
 public:
  explicit WireType(long size) {
    if (size > kLargeMessageBytes) {
      mpiCall("MPI_Type_contiguous", MPI_Type_contiguous(static_cast<int>(kLargeElementBytes), MPI_BYTE, &type_));
      mpiCall("MPI_Type_commit", MPI_Type_commit(&type_));
      count_ = static_cast<int>(size / kLargeElementBytes);
      owned_ = true;
    } else {
      count_ = static_cast<int>(size);
    }
  }
  ~WireType() {
    if (owned_) MPI_Type_free(&type_);
  }
  WireType(const WireType&) = delete;
  WireType& operator=(const WireType&) = delete;

  MPI_Datatype type() const { return type_; }
  int count() const { return count_; }

 private:
  MPI_Datatype type_ = MPI_UNSIGNED_CHAR;
  int count_ = 0;
  bool owned_ = false;
};

// Checks a received message's element count and its sequence marks.
void checkMessage(const MPI_Status& status, const WireType& wire, const std::vector<unsigned char>& buffer,
                  long sequence) {
  int received = 0;
  mpiCall("MPI_Get_count", MPI_Get_count(&status, wire.type(), &received));
  const unsigned char mark = sequenceMark(sequence);
  if (received != wire.count() || buffer.front() != mark || buffer.back() != mark) {
    throw std::runtime_error("message " + std::to_string(sequence) + ": " + std::to_string(received) + " of " +
                             std::to_string(wire.count()) + " elements, marked " + std::to_string(buffer.front()) +
                             "/" + std::to_string(buffer.back()) + ", expected " + std::to_string(mark));
  }
}

void printBatch(const MpiBenchOptions& options, int batch, double total) {
  const char* ack = options.send == SendMode::kBidirectional ? "none" : ackModeName(options.ack);
  std::printf("%d,%ld,%d,%s,%s,%d,%.9f,%.9f\n", batch, options.size, options.count, ack, sendModeName(options.send),
              batch == 1 ? 1 : 0, total, total / options.count);
  std::fflush(stdout);
}

std::string processorName() {
  char name[MPI_MAX_PROCESSOR_NAME] = "";
  int length = 0;
  mpiCall("MPI_Get_processor_name", MPI_Get_processor_name(name, &length));
  return std::string(name, length);
}

// Rank 1 tells rank 0 its host, and rank 0 says where both ran (the driver checks the sites).
void sendPlacement() {
  const std::string host = processorName();
  mpiCall("MPI_Send", MPI_Send(host.data(), static_cast<int>(host.size()), MPI_CHAR, kSenderRank, kHostTag, MPI_COMM_WORLD));
}

void reportPlacement() {
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  MPI_Status status;
  mpiCall("MPI_Recv", MPI_Recv(host, sizeof host, MPI_CHAR, kReceiverRank, kHostTag, MPI_COMM_WORLD, &status));
  int length = 0;
  mpiCall("MPI_Get_count", MPI_Get_count(&status, MPI_CHAR, &length));
  std::fprintf(stderr, "lp-mpi-bench: rank 0 on %s, rank 1 on %.*s\n", processorName().c_str(), length, host);
}

// Rank 0: sends the batches and prints one CSV line per batch.
class Sender {
 public:
  explicit Sender(const MpiBenchOptions& options)
      : options_(options),
        buffers_(options.send == SendMode::kNonblocking ? options.count : 1, std::vector<unsigned char>(options.size)),
        acks_(options.count),
        ackRequests_(options.count),
        sendRequests_(options.count) {}

  void run() {
    std::printf("batch,size_bytes,count,ack,send,fresh_job,total_s,per_message_s\n");
    std::fflush(stdout);
    for (int batch = 1; batch <= options_.batches; ++batch) {
      pauseBetweenBatches(options_, batch);
      armBatchTimeout(options_.batchTimeoutSeconds);
      auto start = std::chrono::steady_clock::now();
      runBatch();
      double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      disarmBatchTimeout();
      printBatch(options_, batch, total);
    }
    reportPlacement();
  }

 private:
  void runBatch() {
    const int count = options_.count;
    if (options_.ack == AckMode::kEach) {
      for (int i = 0; i < count; ++i) {
        mpiCall("MPI_Irecv", MPI_Irecv(&acks_[i], 1, MPI_UNSIGNED_CHAR, kReceiverRank, kAckTag, MPI_COMM_WORLD, &ackRequests_[i]));
      }
    }
    for (int i = 0; i < count; ++i) {
      std::vector<unsigned char>& buffer = buffers_[options_.send == SendMode::kNonblocking ? i : 0];
      buffer.front() = buffer.back() = sequenceMark(sequence_);
      if (options_.send == SendMode::kNonblocking) {
        mpiCall("MPI_Isend", MPI_Isend(buffer.data(), wire_.count(), wire_.type(), kReceiverRank, kDataTag,
                                       MPI_COMM_WORLD, &sendRequests_[i]));
      } else {
        mpiCall("MPI_Send", MPI_Send(buffer.data(), wire_.count(), wire_.type(), kReceiverRank, kDataTag, MPI_COMM_WORLD));
      }
      if (options_.ack == AckMode::kWait) receiveAck(sequence_);
      ++sequence_;
    }
    if (options_.send == SendMode::kNonblocking) {
      mpiCall("MPI_Waitall", MPI_Waitall(count, sendRequests_.data(), MPI_STATUSES_IGNORE));
    }
    if (options_.ack == AckMode::kEach) {
      mpiCall("MPI_Waitall", MPI_Waitall(count, ackRequests_.data(), MPI_STATUSES_IGNORE));
      for (int i = 0; i < count; ++i) checkAck(acks_[i], sequence_ - count + i);
    } else if (options_.ack == AckMode::kLast) {
      receiveAck(sequence_ - 1);
    }
  }

  void receiveAck(long sequence) {
    unsigned char ack = 0;
    mpiCall("MPI_Recv", MPI_Recv(&ack, 1, MPI_UNSIGNED_CHAR, kReceiverRank, kAckTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    checkAck(ack, sequence);
  }

  static void checkAck(unsigned char ack, long sequence) {
    if (ack != sequenceMark(sequence)) {
      throw std::runtime_error("acknowledgement " + std::to_string(ack) + " where message " + std::to_string(sequence) +
                               " (mark " + std::to_string(sequenceMark(sequence)) + ") was due");
    }
  }

  const MpiBenchOptions& options_;
  WireType wire_{options_.size};
  std::vector<std::vector<unsigned char>> buffers_;
  std::vector<unsigned char> acks_;
  std::vector<MPI_Request> ackRequests_;
  std::vector<MPI_Request> sendRequests_;
  long sequence_ = 0;  // messages sent so far, over all batches
};

// Rank 1: receives every message, checks its size and marks, acknowledges as --ack says.
class Receiver {
 public:
  explicit Receiver(const MpiBenchOptions& options) : options_(options), buffer_(options.size) {}

  void run() {
    for (int batch = 1; batch <= options_.batches; ++batch) {
      armBatchTimeout(options_.batchTimeoutSeconds + options_.pauseMilliseconds / 1000.0);
      for (int i = 0; i < options_.count; ++i) {
        receiveOne();
        bool acknowledge = options_.ack != AckMode::kLast || i == options_.count - 1;
        if (acknowledge) {
          unsigned char ack = sequenceMark(sequence_);
          mpiCall("MPI_Send", MPI_Send(&ack, 1, MPI_UNSIGNED_CHAR, kSenderRank, kAckTag, MPI_COMM_WORLD));
        }
        ++sequence_;
      }
      disarmBatchTimeout();
    }
    sendPlacement();
  }

 private:
  void receiveOne() {
    MPI_Status status;
    mpiCall("MPI_Recv", MPI_Recv(buffer_.data(), wire_.count(), wire_.type(), kSenderRank, kDataTag, MPI_COMM_WORLD, &status));
    checkMessage(status, wire_, buffer_, sequence_);
  }

  const MpiBenchOptions& options_;
  WireType wire_{options_.size};
  std::vector<unsigned char> buffer_;
  long sequence_ = 0;
};

// --send bidirectional, both ranks: each batch posts X receives from the other rank and X sends to
// it, then waits for all 2X. Rank 0 prints the batch's time. Every message carries its sequence
// marks both ways, so a lost, duplicated or reordered one fails the run.
class Exchanger {
 public:
  Exchanger(const MpiBenchOptions& options, int rank)
      : options_(options),
        rank_(rank),
        peer_(rank == kSenderRank ? kReceiverRank : kSenderRank),
        sendBuffers_(options.count, std::vector<unsigned char>(options.size)),
        receiveBuffers_(options.count, std::vector<unsigned char>(options.size)),
        requests_(2 * static_cast<std::size_t>(options.count)),
        statuses_(requests_.size()) {}

  void run() {
    if (rank_ == kSenderRank) {
      std::printf("batch,size_bytes,count,ack,send,fresh_job,total_s,per_message_s\n");
      std::fflush(stdout);
    }
    for (int batch = 1; batch <= options_.batches; ++batch) {
      pauseBetweenBatches(options_, batch);
      armBatchTimeout(options_.batchTimeoutSeconds + options_.pauseMilliseconds / 1000.0);
      const auto start = std::chrono::steady_clock::now();
      runBatch();
      const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      disarmBatchTimeout();
      if (rank_ == kSenderRank) printBatch(options_, batch, total);
    }
    if (rank_ == kSenderRank) reportPlacement();
    else sendPlacement();
  }

 private:
  void runBatch() {
    const int count = options_.count;
    for (int i = 0; i < count; ++i) {
      mpiCall("MPI_Irecv", MPI_Irecv(receiveBuffers_[i].data(), wire_.count(), wire_.type(), peer_, kDataTag,
                                     MPI_COMM_WORLD, &requests_[i]));
    }
    for (int i = 0; i < count; ++i) {
      std::vector<unsigned char>& buffer = sendBuffers_[i];
      buffer.front() = buffer.back() = sequenceMark(sequence_ + i);
      mpiCall("MPI_Isend", MPI_Isend(buffer.data(), wire_.count(), wire_.type(), peer_, kDataTag, MPI_COMM_WORLD,
                                     &requests_[count + i]));
    }
    mpiCall("MPI_Waitall", MPI_Waitall(2 * count, requests_.data(), statuses_.data()));
    for (int i = 0; i < count; ++i) checkMessage(statuses_[i], wire_, receiveBuffers_[i], sequence_ + i);
    sequence_ += count;
  }

  const MpiBenchOptions& options_;
  const int rank_;
  const int peer_;
  WireType wire_{options_.size};
  std::vector<std::vector<unsigned char>> sendBuffers_;
  std::vector<std::vector<unsigned char>> receiveBuffers_;
  std::vector<MPI_Request> requests_;
  std::vector<MPI_Status> statuses_;
  long sequence_ = 0;  // messages each way so far, over all batches
};

}  // namespace
}  // namespace lp::mpibench

int main(int argc, char** argv) {
  using namespace lp::mpibench;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::fputs(mpiBenchUsage().c_str(), stdout);
      return 0;
    }
  }
  MpiBenchOptions options;
  try {
    options = parseMpiBenchOptions(args);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  MPI_Init(&argc, &argv);
  signal(SIGALRM, onBatchTimeout);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "lp-mpi-bench: needs exactly 2 ranks (one per site), not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  try {
    if (options.send == SendMode::kBidirectional) Exchanger(options, rank).run();
    else if (rank == kSenderRank) Sender(options).run();
    else Receiver(options).run();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lp-mpi-bench rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
