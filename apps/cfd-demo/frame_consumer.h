// FrameConsumer: the visualisation end, without the transport. Takes each received message,
// checks and decodes it, keeps track of order and completeness, renders it to a PNG and measures
// latency from the producer's send stamp (CLOCK_REALTIME: both sites share the clock of one
// machine here; across real machines the clocks would need NTP/PTP and the latencies would carry
// their offset). At the end it writes a contact sheet, every frame's times (frames.csv) and
// returns the run's summary.
//
// Two displays: `all` renders every frame on the receive path (a recorder: a slow renderer holds
// the transport back, and a drop policy then acts at the sender); `live` renders off the receive
// path (LiveDisplay): the receive path only decodes and counts, the display shows the newest frame
// whenever it is free and frames it had no time for are counted as skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "frame_renderer.h"
#include "frame_sequence.h"
#include "latency_statistics.h"
#include "live_display.h"
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
    // Live display (rendering off the receive path, newest frame only) instead of every frame.
    bool live = false;

    // As Record lines, for a transport that hands a consumer its options in a message (MPI);
    // from_record throws std::invalid_argument naming a missing or malformed field.
    Record to_record() const;
    static Options from_record(const Record& record);
  };

  explicit FrameConsumer(Options options);

  // One message as received; `received_ns` is CLOCK_REALTIME when the receive call returned.
  // A message that does not decode is counted as corrupt (and reported on stderr), not fatal.
  void on_message(std::span<const uint8_t> bytes, int64_t received_ns);
  // `frames_sent` is the count the producer announced; shows the live display's last frame and
  // stops it, writes the contact sheet and frames.csv. Call once.
  RunSummary finish(long long frames_sent);
  // finish(), then what every consumer program does with the summary: writes summary.json into
  // the output folder and prints one line (prefixed `program`) on stdout.
  RunSummary conclude(long long frames_sent, const std::string& program);

  const FrameSequence& sequence() const { return sequence_; }

  // The name of the per-frame times file in the output folder: one row per frame received, in
  // order of arrival (frame, send stamp, receipt, receipt - send, shown - send or empty if not shown).
  static constexpr const char* kFramesCsv = "frames.csv";

 private:
  // One frame's times at receipt (when it was shown, if it was, is in shown_).
  struct Arrival {
    uint32_t frame_number = 0;
    int64_t sent_ns = 0, received_ns = 0;
  };
  // Renders and writes the PNG, records the display latency, then the emulated slowness. On the
  // receive path (`all`) or on the live display's thread (never both).
  void show(const Frame& frame);
  void write_frames_csv() const;

  Options options_;
  FrameRenderer renderer_;
  FrameSequence sequence_;
  LatencyStatistics receive_latency_;
  LatencyStatistics display_latency_;
  std::vector<std::string> pngs_;                  // written by show()
  std::vector<std::pair<uint32_t, int64_t>> shown_;  // by show(): frame number, when its PNG was written
  std::vector<Arrival> arrivals_;
  long long corrupt_ = 0;
  uint64_t bytes_ = 0;
  int64_t first_received_ns_ = 0;
  int64_t last_received_ns_ = 0;
  int64_t first_sent_ns_ = 0;  // the earliest send stamp among the decoded frames
  double first_latency_ms_ = -1;  // the first frame received: reported beside the median
  std::unique_ptr<LiveDisplay> live_;  // last: its thread calls show(), which uses the members above
};

// This machine's name (a site's own with `unshare --uts`): where a consumer says it ran.
std::string local_host_name();

}  // namespace lp::cfd
