// RunSummary: what one consumer reports to the producer at the end of a run, and how it travels
// (as Record lines) and prints.
#pragma once

#include <cstdint>
#include <string>

#include "record.h"

namespace lp::cfd {

struct RunSummary {
  long long consumer = 0;           // index among the producer's consumers
  std::string host;                 // where the consumer ran
  long long frames_sent = 0;        // as the producer announced at the end
  long long frames_received = 0;
  long long duplicates = 0;
  long long out_of_order = 0;
  long long missing = 0;
  long long corrupt = 0;            // messages that failed to decode (bad size, CRC, header)
  // Missing frames that the transport's configured queue policy discarded on purpose (the run
  // allowed drops, e.g. LONGPIPE_WINDOW_FULL=drop-oldest|keep-latest): equals `missing` when the
  // only fault is gaps, else 0 (duplicates, reordering or corruption are never a policy).
  long long dropped_by_policy = 0;
  bool in_order = false;
  bool complete = false;
  long long pngs_written = 0;       // frames shown (rendered to a PNG)
  // "all": every frame rendered on the receive path; "live": off it, the newest frame whenever the
  // display is free (FrameConsumer::Options::live).
  std::string display = "all";
  // Live display: frames received (and due to be rendered) that a newer frame replaced before the
  // display was free for them. Always 0 for "all".
  long long frames_skipped = 0;
  double seconds = 0;               // first frame received to last frame received
  double frames_per_second = 0;     // (frames received - 1) / seconds: the steady delivery rate
  // Frames received / (last receipt - first frame's send stamp): the rate seen over the whole run,
  // start-up (connection set-up, slow start, backlog) included.
  double end_to_end_frames_per_second = 0;
  double megabytes = 0;             // frame bytes received (MB = 10^6 bytes)
  // Send (producer's stamp) to received and decoded, and to displayed (PNG written), in ms. `first`
  // is the first frame received (a fresh session's start-up shows there), reported beside the median.
  double receive_latency_mean_ms = 0, receive_latency_median_ms = 0, receive_latency_p90_ms = 0,
         receive_latency_p95_ms = 0, receive_latency_max_ms = 0, receive_latency_first_ms = 0;
  double display_latency_mean_ms = 0, display_latency_median_ms = 0, display_latency_p95_ms = 0,
         display_latency_max_ms = 0;
  std::string output_folder;
  std::string contact_sheet;        // empty if none was written

  // Every frame once and in order, or gaps only, all of them dropped by the configured policy.
  bool delivered_as_configured() const {
    return in_order && (complete || (dropped_by_policy > 0 && dropped_by_policy == missing));
  }
  // "complete", "N dropped by policy" or "INCOMPLETE", for the one-line reports.
  std::string delivery() const;

  Record to_record() const;
  // Throws std::invalid_argument naming a missing or malformed field.
  static RunSummary from_record(const Record& record);
};

}  // namespace lp::cfd
