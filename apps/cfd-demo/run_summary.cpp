#include "run_summary.h"

namespace lp::cfd {

std::string RunSummary::delivery() const {
  if (complete) return "complete";
  if (delivered_as_configured()) return std::to_string(dropped_by_policy) + " dropped by policy";
  return "INCOMPLETE";
}

Record RunSummary::to_record() const {
  Record r;
  r.add("consumer", consumer).add("host", host).add("frames_sent", frames_sent).add("frames_received", frames_received);
  r.add("duplicates", duplicates).add("out_of_order", out_of_order).add("missing", missing).add("corrupt", corrupt);
  r.add("dropped_by_policy", dropped_by_policy).add("in_order", in_order).add("complete", complete).add("pngs_written", pngs_written);
  r.add("display", display).add("frames_skipped", frames_skipped);
  r.add("seconds", seconds).add("frames_per_second", frames_per_second);
  r.add("end_to_end_frames_per_second", end_to_end_frames_per_second).add("megabytes", megabytes);
  r.add("receive_latency_mean_ms", receive_latency_mean_ms).add("receive_latency_median_ms", receive_latency_median_ms);
  r.add("receive_latency_p90_ms", receive_latency_p90_ms).add("receive_latency_p95_ms", receive_latency_p95_ms);
  r.add("receive_latency_max_ms", receive_latency_max_ms).add("receive_latency_first_ms", receive_latency_first_ms);
  r.add("display_latency_mean_ms", display_latency_mean_ms).add("display_latency_median_ms", display_latency_median_ms);
  r.add("display_latency_p95_ms", display_latency_p95_ms).add("display_latency_max_ms", display_latency_max_ms);
  r.add("output_folder", output_folder).add("contact_sheet", contact_sheet);
  r.add("delivered_as_configured", delivered_as_configured());  // derived: from_record recomputes it
  return r;
}

RunSummary RunSummary::from_record(const Record& r) {
  RunSummary s;
  auto count = [&](const char* name) { return static_cast<long long>(r.number(name)); };
  s.consumer = count("consumer");
  s.host = r.text("host");
  s.frames_sent = count("frames_sent");
  s.frames_received = count("frames_received");
  s.duplicates = count("duplicates");
  s.out_of_order = count("out_of_order");
  s.missing = count("missing");
  s.corrupt = count("corrupt");
  s.dropped_by_policy = count("dropped_by_policy");
  s.in_order = r.flag("in_order");
  s.complete = r.flag("complete");
  s.pngs_written = count("pngs_written");
  s.display = r.text("display");
  s.frames_skipped = count("frames_skipped");
  s.seconds = r.number("seconds");
  s.frames_per_second = r.number("frames_per_second");
  s.end_to_end_frames_per_second = r.number("end_to_end_frames_per_second");
  s.megabytes = r.number("megabytes");
  s.receive_latency_mean_ms = r.number("receive_latency_mean_ms");
  s.receive_latency_median_ms = r.number("receive_latency_median_ms");
  s.receive_latency_p90_ms = r.number("receive_latency_p90_ms");
  s.receive_latency_p95_ms = r.number("receive_latency_p95_ms");
  s.receive_latency_max_ms = r.number("receive_latency_max_ms");
  s.receive_latency_first_ms = r.number("receive_latency_first_ms");
  s.display_latency_mean_ms = r.number("display_latency_mean_ms");
  s.display_latency_median_ms = r.number("display_latency_median_ms");
  s.display_latency_p95_ms = r.number("display_latency_p95_ms");
  s.display_latency_max_ms = r.number("display_latency_max_ms");
  s.output_folder = r.text("output_folder");
  s.contact_sheet = r.text("contact_sheet");
  return s;
}

}  // namespace lp::cfd
