#include "mpi_consumer_group.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "cfd_protocol.h"
#include "frame.h"
#include "record.h"

namespace lp::cfd {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int consumer_rank(int index) { return index + 1; }

}  // namespace

MpiConsumerGroup::MpiConsumerGroup(ConsumerSettings settings) : settings_(std::move(settings)) {
  settings_.check();
  for (int i = 0; i < settings_.consumers; ++i) {
    std::string lines = settings_.for_consumer(i).to_record().to_lines();
    MPI_Send(lines.data(), static_cast<int>(lines.size()), MPI_CHAR, consumer_rank(i), kSetupTag, MPI_COMM_WORLD);
  }
  for (int i = 0; i < settings_.consumers; ++i) {
    MPI_Status status;
    if (!wait_for(consumer_rank(i), kReadyTag, kStartupTimeoutSeconds, status)) {
      throw std::runtime_error("consumer " + std::to_string(i) + " (rank " + std::to_string(consumer_rank(i)) +
                               ") did not report ready within " + std::to_string(kStartupTimeoutSeconds) + " s");
    }
    int index = -1;
    MPI_Recv(&index, 1, MPI_INT, consumer_rank(i), kReadyTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

bool MpiConsumerGroup::wait_for(int source, int tag, double timeout_seconds, MPI_Status& status) const {
  if (timeout_seconds <= 0) {
    MPI_Probe(source, tag, MPI_COMM_WORLD, &status);
    return true;
  }
  const auto start = Clock::now();
  while (seconds_since(start) < timeout_seconds) {
    int found = 0;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &found, &status);
    if (found) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(kPollMicroseconds));
  }
  return false;
}

double MpiConsumerGroup::send(std::vector<uint8_t>& encoded_frame) {
  const auto start = Clock::now();
  Frame::stamp_send_time(encoded_frame, realtime_ns());
  for (int i = 0; i < settings_.consumers; ++i) {
    MPI_Send(encoded_frame.data(), static_cast<int>(encoded_frame.size()), MPI_BYTE, consumer_rank(i), kFrameTag,
             MPI_COMM_WORLD);
  }
  return seconds_since(start);
}

std::vector<RunSummary> MpiConsumerGroup::finish(long long frames_sent) {
  int count = static_cast<int>(frames_sent);
  for (int i = 0; i < settings_.consumers; ++i) {
    MPI_Send(&count, 1, MPI_INT, consumer_rank(i), kEndTag, MPI_COMM_WORLD);
  }
  std::vector<RunSummary> summaries(static_cast<size_t>(settings_.consumers));
  std::vector<bool> answered(summaries.size(), false);
  const auto start = Clock::now();
  for (size_t pending = summaries.size(); pending > 0; --pending) {
    const double timeout = settings_.summary_timeout_seconds;
    const double left = timeout > 0 ? timeout - seconds_since(start) : 0;  // 0: no limit
    MPI_Status status;
    if (timeout > 0 && left <= 0) break;
    if (!wait_for(MPI_ANY_SOURCE, kSummaryTag, left, status)) break;
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string text(static_cast<size_t>(length), '\0');
    MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, kSummaryTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const int i = status.MPI_SOURCE - 1;
    if (i < 0 || i >= settings_.consumers || answered[i]) {
      throw std::runtime_error("a summary came from rank " + std::to_string(status.MPI_SOURCE) + ", not an unanswered consumer");
    }
    summaries[i] = RunSummary::from_record(Record::from_lines(text));
    answered[i] = true;
  }
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (answered[i]) continue;
    std::fprintf(stderr, "cfd-mpi: consumer %zu (rank %d) sent no summary before the timeout\n", i,
                 consumer_rank(static_cast<int>(i)));
    summaries[i].consumer = static_cast<long long>(i);
    summaries[i].host = "lost";
    summaries[i].frames_sent = frames_sent;
    summaries[i].missing = frames_sent;
    all_answered_ = false;
  }
  return summaries;
}

}  // namespace lp::cfd
