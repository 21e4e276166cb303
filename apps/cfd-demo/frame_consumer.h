// FrameConsumer: the visualisation end, without the transport. Takes each received message,
// checks and decodes it, keeps track of order and completeness, renders it to a PNG and measures
// latency from the producer's send stamp (CLOCK_REALTIME: both sites share the clock of one
// machine here; across real machines the clocks would need NTP/PTP and the latencies would carry
// their offset). At the end it writes a contact sheet and returns the run's summary.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "frame_renderer.h"
#include "frame_sequence.h"
#include "latency_statistics.h"
#include "run_summary.h"

namespace lp::cfd {

class FrameConsumer {
 public:
  struct Options {
    std::string output_folder;     // created if absent
    int render_every = 1;          // render frames whose number is a multiple of this; 0 = none
    int slow_ms = 0;               // extra time spent on each frame: emulates a slow display
    int zoom = 1;                  // pixels per cell side
    int contact_sheet_tiles = 12;  // 0 = no contact sheet
    int contact_sheet_columns = 3;
    long long consumer = 0;
    std::string host;
    // The transport may discard frames for a slow consumer by configuration (a drop policy):
    // gaps are then reported as dropped by policy, not as a failure.
    bool drops_allowed = false;

    // As Record lines, for a transport that hands a consumer its options in a message (MPI);
    // from_record throws std::invalid_argument naming a missing or malformed field.
    Record to_record() const;
    static Options from_record(const Record& record);
  };

  explicit FrameConsumer(Options options);

  // One message as received; `received_ns` is CLOCK_REALTIME when the receive call returned.
  // A message that does not decode is counted as corrupt (and reported on stderr), not fatal.
  void on_message(std::span<const uint8_t> bytes, int64_t received_ns);
  // `frames_sent` is the count the producer announced; writes the contact sheet.
  RunSummary finish(long long frames_sent);
  // finish(), then what every consumer program does with the summary: writes summary.json into
  // the output folder and prints one line (prefixed `program`) on stdout.
  RunSummary conclude(long long frames_sent, const std::string& program);

  const FrameSequence& sequence() const { return sequence_; }

 private:
  Options options_;
  FrameRenderer renderer_;
  FrameSequence sequence_;
  LatencyStatistics receive_latency_;
  LatencyStatistics display_latency_;
  std::vector<std::string> pngs_;
  long long corrupt_ = 0;
  uint64_t bytes_ = 0;
  int64_t first_received_ns_ = 0;
  int64_t last_received_ns_ = 0;
  int64_t first_sent_ns_ = 0;  // the earliest send stamp among the decoded frames
};

// This machine's name (a site's own with `unshare --uts`): where a consumer says it ran.
std::string local_host_name();

}  // namespace lp::cfd
