#include "consumer_group.h"

#include <pvm3.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "frame.h"
#include "pvm_call.h"  // lp_pvm_call (apps/pvm-sites)
#include "cfd_protocol.h"
#include "record.h"

using lp::pvm::pvmCall;

namespace lp::cfd {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string tid_text(int tid) {
  char text[16];
  std::snprintf(text, sizeof text, "t%x", tid);
  return text;
}

}  // namespace

std::vector<std::string> ConsumerGroup::consumer_hosts(const std::string& hosts, int consumers) {
  std::vector<std::string> list;
  for (size_t start = 0; start <= hosts.size();) {
    const size_t comma = std::min(hosts.find(',', start), hosts.size());
    list.push_back(hosts.substr(start, comma - start));
    start = comma + 1;
  }
  if (list.size() == 1) return std::vector<std::string>(static_cast<size_t>(consumers), list.front());
  if (list.size() != static_cast<size_t>(consumers)) {
    throw std::invalid_argument("--consumer-host: " + std::to_string(list.size()) + " hosts for " +
                                std::to_string(consumers) + " consumers (give one host, or one per consumer)");
  }
  for (const auto& host : list) {
    if (host.empty()) throw std::invalid_argument("--consumer-host: an empty host in '" + hosts + "'");
  }
  return list;
}

ConsumerGroup::ConsumerGroup(Options options) : options_(std::move(options)) {
  options_.settings.check();
  const std::vector<std::string> hosts = consumer_hosts(options_.host, options_.settings.consumers);
  for (int i = 0; i < options_.settings.consumers; ++i) {
    std::string host = hosts[static_cast<size_t>(i)];
    const FrameConsumer::Options consumer = options_.settings.for_consumer(i);
    std::vector<std::string> args = {"--index",        std::to_string(i),     "--out",  consumer.output_folder,
                                     "--render-every", std::to_string(consumer.render_every),
                                     "--slow-ms",      std::to_string(consumer.slow_ms),
                                     "--zoom",         std::to_string(consumer.zoom),
                                     "--route",        options_.route};
    if (consumer.drops_allowed) args.push_back("--allow-drops");
    if (consumer.live) args.insert(args.end(), {"--display", "live"});
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int flags = host.empty() ? PvmTaskDefault : PvmTaskHost;
    int tid = 0;
    const int started =
        pvm_spawn(options_.program.data(), argv.data(), flags, host.empty() ? nullptr : host.data(), 1, &tid);
    const std::string what = "pvm_spawn " + options_.program + (host.empty() ? "" : " on " + host);
    if (started < 0) pvmCall(what, started);
    if (started == 0) pvmCall(what, tid < 0 ? tid : PvmSysErr);
    tids_.push_back(tid);
    finished_.push_back(false);
  }
  pvmCall("pvm_notify TaskExit", pvm_notify(PvmTaskExit, kTaskExitTag, static_cast<int>(tids_.size()), tids_.data()));
  wait_until_ready();
}

int ConsumerGroup::index_of(int tid) const {
  for (size_t i = 0; i < tids_.size(); ++i) {
    if (tids_[i] == tid) return static_cast<int>(i);
  }
  return -1;
}

std::optional<ConsumerGroup::Arrival> ConsumerGroup::next_arrival() {
  timeval tick{1, 0};
  const int buffer = pvmCall("pvm_trecv", pvm_trecv(-1, -1, &tick));
  if (buffer == 0) return std::nullopt;
  int bytes = 0, tag = 0, source = 0;
  pvmCall("pvm_bufinfo", pvm_bufinfo(buffer, &bytes, &tag, &source));
  if (tag == kTaskExitTag) {
    pvmCall("pvm_upkint exit notice", pvm_upkint(&source, 1, 1));  // the notice names the task
  }
  return Arrival{tag, index_of(source), bytes};
}

void ConsumerGroup::wait_until_ready() {
  std::vector<bool> ready(tids_.size(), false);
  size_t waiting = tids_.size();
  const auto start = Clock::now();
  while (waiting > 0) {
    if (seconds_since(start) > kStartupTimeoutSeconds) {
      throw std::runtime_error("consumers did not report ready within " + std::to_string(kStartupTimeoutSeconds) + " s");
    }
    const auto arrival = next_arrival();
    if (!arrival || arrival->consumer < 0) continue;
    const int i = arrival->consumer;
    if (arrival->tag == kReadyTag && !ready[i]) {
      ready[i] = true;
      --waiting;
    } else if (arrival->tag == kTaskExitTag) {
      finished_[i] = true;  // nothing left to kill
      throw std::runtime_error("consumer " + std::to_string(i) + " (" + tid_text(tids_[i]) +
                               ") exited during start-up (its output, if any, is above)");
    }
  }
}

ConsumerGroup::~ConsumerGroup() {
  for (size_t i = 0; i < tids_.size(); ++i) {
    if (!finished_[i]) pvm_kill(tids_[i]);  // only on an early exit: finish() marks all finished
  }
}

double ConsumerGroup::send(std::vector<uint8_t>& encoded_frame) {
  const auto start = Clock::now();
  Frame::stamp_send_time(encoded_frame, realtime_ns());
  // Raw: the frame is already a portable little-endian byte string, PVM need not convert it.
  pvmCall("pvm_initsend", pvm_initsend(PvmDataRaw));
  pvmCall("pvm_pkbyte frame", pvm_pkbyte(reinterpret_cast<char*>(encoded_frame.data()),
                                         static_cast<int>(encoded_frame.size()), 1));
  for (int tid : tids_) pvmCall("pvm_send frame to " + tid_text(tid), pvm_send(tid, kFrameTag));
  return seconds_since(start);
}

std::vector<RunSummary> ConsumerGroup::finish(long long frames_sent) {
  int count = static_cast<int>(frames_sent);
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_pkint", pvm_pkint(&count, 1, 1));
  for (int tid : tids_) pvmCall("pvm_send end to " + tid_text(tid), pvm_send(tid, kEndTag));

  std::vector<RunSummary> summaries(tids_.size());
  std::vector<double> exited_at(tids_.size(), -1.0);
  const auto start = Clock::now();
  auto lost = [&](size_t i, const char* why) {
    std::fprintf(stderr, "cfd-producer: consumer %zu (%s) %s\n", i, tid_text(tids_[i]).c_str(), why);
    if (exited_at[i] < 0) pvm_kill(tids_[i]);  // still running: do not leave it behind
    summaries[i].consumer = static_cast<long long>(i);
    summaries[i].host = "lost";
    summaries[i].frames_sent = frames_sent;
    summaries[i].missing = frames_sent;
    finished_[i] = true;
  };
  size_t pending = tids_.size();
  while (pending > 0) {
    const auto arrival = next_arrival();
    if (arrival && arrival->consumer >= 0 && !finished_[arrival->consumer]) {
      const int i = arrival->consumer;
      if (arrival->tag == kSummaryTag) {
        std::string text(static_cast<size_t>(arrival->bytes) + 1, '\0');
        pvmCall("pvm_upkstr summary", pvm_upkstr(text.data()));
        text.resize(text.find('\0'));
        summaries[i] = RunSummary::from_record(Record::from_lines(text));
        finished_[i] = true;
        --pending;
      } else if (arrival->tag == kTaskExitTag) {
        exited_at[i] = seconds_since(start);
      }
    }
    const double now = seconds_since(start);
    for (size_t i = 0; i < tids_.size(); ++i) {
      if (finished_[i]) continue;
      if (exited_at[i] >= 0 && now - exited_at[i] > kSummaryGraceSeconds) {
        lost(i, "exited without a summary");
        --pending;
      } else if (options_.settings.summary_timeout_seconds > 0 && now > options_.settings.summary_timeout_seconds) {
        lost(i, "sent no summary before the timeout");
        --pending;
      }
    }
  }
  return summaries;
}

}  // namespace lp::cfd
