#include "frame_consumer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "contact_sheet.h"

namespace lp::cfd {

Record FrameConsumer::Options::to_record() const {
  Record r;
  r.add("output_folder", output_folder).add("render_every", static_cast<long long>(render_every));
  r.add("slow_ms", static_cast<long long>(slow_ms)).add("zoom", static_cast<long long>(zoom));
  r.add("contact_sheet_tiles", static_cast<long long>(contact_sheet_tiles));
  r.add("contact_sheet_columns", static_cast<long long>(contact_sheet_columns));
  r.add("consumer", consumer).add("host", host).add("drops_allowed", drops_allowed).add("live", live);
  return r;
}

FrameConsumer::Options FrameConsumer::Options::from_record(const Record& r) {
  auto count = [&](const char* name) { return static_cast<int>(r.number(name)); };
  Options o;
  o.output_folder = r.text("output_folder");
  o.render_every = count("render_every");
  o.slow_ms = count("slow_ms");
  o.zoom = count("zoom");
  o.contact_sheet_tiles = count("contact_sheet_tiles");
  o.contact_sheet_columns = count("contact_sheet_columns");
  o.consumer = static_cast<long long>(r.number("consumer"));
  o.host = r.text("host");
  o.drops_allowed = r.flag("drops_allowed");
  o.live = r.flag("live");
  return o;
}

FrameConsumer::FrameConsumer(Options options) : options_(std::move(options)), renderer_(options_.zoom) {
  if (options_.render_every < 0) throw std::invalid_argument("render_every must be >= 0");
  if (options_.slow_ms < 0) throw std::invalid_argument("slow_ms must be >= 0");
  if (options_.output_folder.empty()) throw std::invalid_argument("the consumer needs an output folder");
  std::filesystem::create_directories(options_.output_folder);
  if (options_.live) live_ = std::make_unique<LiveDisplay>([this](const Frame& frame) { show(frame); });
}

void FrameConsumer::on_message(std::span<const uint8_t> bytes, int64_t received_ns) {
  if (first_received_ns_ == 0) first_received_ns_ = received_ns;
  last_received_ns_ = received_ns;
  bytes_ += bytes.size();
  Frame frame;
  try {
    frame = Frame::decode(bytes);
  } catch (const FrameError& error) {
    ++corrupt_;
    std::fprintf(stderr, "cfd-consumer %lld: dropped a message: %s\n", options_.consumer, error.what());
    return;
  }
  sequence_.record(frame.frame_number);
  if (first_sent_ns_ == 0 || frame.send_time_ns < first_sent_ns_) first_sent_ns_ = frame.send_time_ns;
  const double latency_ms = (received_ns - frame.send_time_ns) / 1e6;
  receive_latency_.add(latency_ms);
  if (first_latency_ms_ < 0) first_latency_ms_ = latency_ms;
  arrivals_.push_back({frame.frame_number, frame.send_time_ns, received_ns});

  if (options_.render_every > 0 && frame.frame_number % options_.render_every == 0) {
    if (live_) {
      live_->offer(std::move(frame));  // the display takes it when it is free; never waits
    } else {
      show(frame);
    }
  } else if (!live_ && options_.slow_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.slow_ms));
  }
}

void FrameConsumer::show(const Frame& frame) {
  char name[32];
  std::snprintf(name, sizeof name, "frame-%06u.png", frame.frame_number);
  const std::string path = (std::filesystem::path(options_.output_folder) / name).string();
  renderer_.render(frame).write_png(path);
  pngs_.push_back(path);
  const int64_t shown_ns = realtime_ns();
  shown_.emplace_back(frame.frame_number, shown_ns);
  display_latency_.add((shown_ns - frame.send_time_ns) / 1e6);
  if (options_.slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options_.slow_ms));
}

void FrameConsumer::write_frames_csv() const {
  // Shown times by frame number; a frame rendered twice (a duplicate) keeps its first.
  std::map<uint32_t, int64_t> shown;
  for (const auto& [number, at] : shown_) shown.emplace(number, at);
  std::ofstream csv(std::filesystem::path(options_.output_folder) / kFramesCsv);
  csv << "frame,sent_ns,received_ns,receive_latency_ms,shown_latency_ms\n";
  for (const Arrival& a : arrivals_) {
    csv << a.frame_number << ',' << a.sent_ns << ',' << a.received_ns << ',' << (a.received_ns - a.sent_ns) / 1e6 << ',';
    if (const auto it = shown.find(a.frame_number); it != shown.end()) csv << (it->second - a.sent_ns) / 1e6;
    csv << '\n';
  }
}

RunSummary FrameConsumer::finish(long long frames_sent) {
  long long skipped = 0;
  if (live_) {
    live_->stop();  // shows the last frame received; after this, show() runs no more
    skipped = live_->skipped();
  }
  RunSummary s;
  s.display = live_ ? "live" : "all";
  s.frames_skipped = skipped;
  s.consumer = options_.consumer;
  s.host = options_.host;
  s.frames_sent = frames_sent;
  s.frames_received = static_cast<long long>(sequence_.received());
  s.duplicates = static_cast<long long>(sequence_.duplicates());
  s.out_of_order = static_cast<long long>(sequence_.out_of_order());
  s.missing = static_cast<long long>(sequence_.missing(frames_sent));
  s.corrupt = corrupt_;
  s.in_order = sequence_.in_order();
  s.complete = sequence_.complete(frames_sent) && corrupt_ == 0;
  const bool only_gaps = s.in_order && corrupt_ == 0 && sequence_.unexpected(frames_sent) == 0;
  if (options_.drops_allowed && only_gaps) s.dropped_by_policy = s.missing;
  s.pngs_written = static_cast<long long>(pngs_.size());
  s.seconds = (last_received_ns_ - first_received_ns_) / 1e9;
  // Frames after the first, over the time since the first: the steady delivery rate.
  s.frames_per_second = s.seconds > 0 ? (s.frames_received - 1) / s.seconds : 0.0;
  const double since_first_send = (last_received_ns_ - first_sent_ns_) / 1e9;
  s.end_to_end_frames_per_second = first_sent_ns_ && since_first_send > 0 ? s.frames_received / since_first_send : 0.0;
  s.megabytes = bytes_ / 1e6;
  s.receive_latency_mean_ms = receive_latency_.mean();
  s.receive_latency_median_ms = receive_latency_.median();
  s.receive_latency_first_ms = std::max(first_latency_ms_, 0.0);
  s.receive_latency_p90_ms = receive_latency_.quantile(0.90);
  s.receive_latency_p95_ms = receive_latency_.quantile(0.95);
  s.receive_latency_max_ms = receive_latency_.max();
  s.display_latency_mean_ms = display_latency_.mean();
  s.display_latency_median_ms = display_latency_.median();
  s.display_latency_p95_ms = display_latency_.quantile(0.95);
  s.display_latency_max_ms = display_latency_.max();
  s.output_folder = options_.output_folder;
  write_frames_csv();

  const auto picked = ContactSheet::pick(pngs_, options_.contact_sheet_tiles);
  if (!picked.empty()) {
    std::vector<RgbImage> tiles;
    for (const auto& path : picked) tiles.push_back(RgbImage::read_png(path));
    s.contact_sheet = (std::filesystem::path(options_.output_folder) / "contact-sheet.png").string();
    ContactSheet::compose(tiles, options_.contact_sheet_columns).write_png(s.contact_sheet);
  }
  return s;
}

RunSummary FrameConsumer::conclude(long long frames_sent, const std::string& program) {
  const RunSummary summary = finish(frames_sent);
  std::ofstream(std::filesystem::path(options_.output_folder) / "summary.json") << summary.to_record().to_json() << "\n";
  std::printf("%s %lld on %s: %lld/%lld frames, %s, %s, %.2f frames/s, latency median %.1f ms (p90 %.1f, first %.1f); "
              "display %s: %lld shown, %lld skipped\n",
              program.c_str(), summary.consumer, summary.host.c_str(), summary.frames_received, frames_sent,
              summary.in_order ? "in order" : "OUT OF ORDER", summary.delivery().c_str(), summary.frames_per_second,
              summary.receive_latency_median_ms, summary.receive_latency_p90_ms, summary.receive_latency_first_ms,
              summary.display.c_str(), summary.pngs_written, summary.frames_skipped);
  std::fflush(stdout);
  return summary;
}

std::string local_host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace lp::cfd
