// lp-perf: the transport engine's own iperf. `serve` answers, `run` measures aggregate latency
// t = T / X against the floor R / X + P / B, `local` compares the engine with plain TCP on loopback.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "engine.h"
#include "job_key.h"
#include "perf_options.h"
#include "plain_tcp_baseline.h"

namespace lp::perf {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Message.flags of lp-perf's own little protocol.
constexpr std::uint32_t kPleaseAcknowledge = 1;  // the server answers this message
constexpr std::uint32_t kAcknowledgement = 2;    // the server's answer (empty body)
// Longest wait for one batch's acknowledgements before the run is declared failed.
constexpr auto kBatchTimeout = 900s;

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted.store(true); }

// The application's copy of its data into a message, with room for the header trailer so that
// send() packs it without copying again (docs/engine/engine-api.md).
void copy_body(Message& message, const std::vector<std::byte>& body) {
  message.body.reserve(body.size() + kMessageTrailerSize);
  message.body.assign(body.begin(), body.end());
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int serve(const Options& options) {
  Config config = Config::from_environment();
  if (config.listen.empty() || config.listen.find(':') == std::string::npos) {
    config.listen = config.listen + ":" + std::to_string(options.port);
  }
  Engine engine(config);
  ::signal(SIGINT, on_interrupt);
  ::signal(SIGTERM, on_interrupt);
  std::cout << "lp-perf: serving on " << engine.local_endpoint() << std::endl;
  std::uint64_t received = 0;
  while (!g_interrupted.load()) {
    engine.wait_receive(200ms);
    while (auto message = engine.try_receive()) {
      ++received;
      if (message->flags & kPleaseAcknowledge) {
        Message ack;
        ack.tag = message->tag;
        ack.context = message->context;
        ack.flags = kAcknowledgement;
        engine.send(message->peer_endpoint, std::move(ack));
      }
    }
    for (const auto& failure : engine.take_peer_failures()) {
      std::cout << "lp-perf: peer " << failure.peer_endpoint << " failed: " << failure.reason << std::endl;
    }
  }
  std::cout << "lp-perf: " << received << " messages received; statistics: " << engine.stats_json() << std::endl;
  return 0;
}

// Waits for `expected` acknowledgements of batch `tag`.
void collect_acknowledgements(Engine& engine, std::int32_t tag, std::size_t expected) {
  const auto deadline = Clock::now() + kBatchTimeout;
  std::size_t got = 0;
  while (got < expected) {
    if (Clock::now() > deadline) throw std::runtime_error("timed out waiting for acknowledgements");
    for (const auto& failure : engine.take_peer_failures()) {
      throw std::runtime_error("peer " + failure.peer_endpoint + " failed: " + failure.reason);
    }
    auto message = engine.try_receive();
    if (!message) {
      engine.wait_receive(100ms);
      continue;
    }
    if ((message->flags & kAcknowledgement) && message->tag == tag) ++got;
  }
}

// One line of what the engine measured about the path to `peer` (its statistics' "path" object:
// round trips, rate estimate, buffers chosen, warm start), e.g. for a reader comparing with R and B.
// The fields of the first object named `name` in the statistics, as "key=value ..." (flat objects only).
std::string object_fields(const std::string& stats, const std::string& name) {
  const std::string marker = "\"" + name + "\":{";
  const auto start = stats.find(marker);
  if (start == std::string::npos) return "";
  const auto end = stats.find('}', start);
  std::string fields = stats.substr(start + marker.size(), end - start - marker.size());
  std::string line;
  for (char c : fields) line += c == '"' ? "" : c == ',' ? " " : c == ':' ? "=" : std::string(1, c);
  return line;
}

struct BatchResult {
  std::size_t size = 0;
  std::size_t batch = 0;  // 1-based, over the whole run
  bool cold = false;      // the run's first batch: connection set-up and slow start included
  double seconds = 0;     // T
  bool ramp = false;      // first batch at a new size: the congestion window adapts (not in the summary)
};

class Runner {
 public:
  Runner(const Options& options, Engine& engine, std::string peer)
      : options_(options), engine_(engine), peer_(std::move(peer)) {}

  double run_batch(std::size_t size) {
    const std::int32_t tag = next_tag_++;
    const std::vector<std::byte> body(size, std::byte{0x5a});
    const auto start = Clock::now();
    for (std::size_t i = 0; i < options_.count; ++i) {
      Message message;
      message.tag = tag;
      message.context = static_cast<std::int32_t>(i);
      const bool last = i + 1 == options_.count;
      message.flags = (options_.ack == AckMode::kEach || last) ? kPleaseAcknowledge : 0;
      copy_body(message, body);
      engine_.send(peer_, std::move(message));
    }
    collect_acknowledgements(engine_, tag, options_.ack == AckMode::kEach ? options_.count : 1);
    return seconds_since(start);
  }

  // Minimum of several 1-byte round trips on the warm session.
  double measure_rtt() {
    double best = 1e9;
    for (std::size_t i = 0; i < options_.pings; ++i) {
      const std::int32_t tag = next_tag_++;
      Message ping;
      ping.tag = tag;
      ping.flags = kPleaseAcknowledge;
      ping.body.resize(1);
      const auto start = Clock::now();
      engine_.send(peer_, std::move(ping));
      collect_acknowledgements(engine_, tag, 1);
      best = std::min(best, seconds_since(start));
    }
    return best;
  }

 private:
  const Options& options_;
  Engine& engine_;
  std::string peer_;
  std::int32_t next_tag_ = 1;
};

const char* kind(const BatchResult& r) { return r.cold ? "cold" : r.ramp ? "ramp" : "warm"; }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int run(const Options& options) {
  const Config config = Config::from_environment();
  const double link_rate = options.link_rate_mbit.value_or(config.bandwidth_mbit);
  std::string peer = options.peer;
  if (peer.find(':') == std::string::npos) peer.append(":").append(std::to_string(kDefaultPort));  // not += ":" + ...: GCC 12 -O3 -Wrestrict false positive
  Engine engine(config);
  Runner runner(options, engine, peer);
  const double X = static_cast<double>(options.count);
  auto floor_seconds = [&](double rtt, std::size_t size) {
    return rtt / X + static_cast<double>(size) * 8.0 / (link_rate * 1e6);
  };

  std::vector<BatchResult> results;
  std::size_t batch_number = 0;
  // The cold batch first: it pays for connect, authentication and slow start.
  results.push_back({options.sizes.front(), ++batch_number, true, runner.run_batch(options.sizes.front())});
  const double rtt = runner.measure_rtt();

  std::printf("lp-perf: peer %s, X = %zu, ack %s, R = %.1f ms (min of %zu pings), B = %g Mbit/s, pause %zu ms\n",
              peer.c_str(), options.count, options.ack == AckMode::kEach ? "each" : "last", rtt * 1e3, options.pings,
              link_rate, options.pause_ms);
  std::printf("%10s %6s %5s %10s %11s %11s %8s %10s\n", "size", "batch", "kind", "T (s)", "t (ms)", "floor (ms)",
              "t/floor", "Mbit/s");
  // The CSV gets each batch's row as soon as it is measured (flushed), so a run that is stopped
  // early (a driver's time budget) leaves the batches it finished.
  std::ofstream csv;
  if (!options.csv_path.empty()) {
    csv.open(options.csv_path);
    if (!csv) throw std::runtime_error("cannot write --csv " + options.csv_path);
    csv << "size,batch,kind,count,ack,T_s,t_ms,rtt_ms,link_rate_mbit,floor_ms,ratio" << std::endl;
  }
  auto print = [&](const BatchResult& r) {
    const double t = r.seconds / X;
    std::printf("%10zu %6zu %5s %10.3f %11.3f %11.3f %8.2f %10.2f\n", r.size, r.batch, kind(r),
                r.seconds, t * 1e3, floor_seconds(rtt, r.size) * 1e3, t / floor_seconds(rtt, r.size),
                X * static_cast<double>(r.size) * 8 / r.seconds / 1e6);
    std::fflush(stdout);
    if (csv.is_open()) {
      csv << r.size << "," << r.batch << "," << kind(r) << "," << options.count << ","
          << (options.ack == AckMode::kEach ? "each" : "last") << "," << r.seconds << "," << t * 1e3 << ","
          << rtt * 1e3 << "," << link_rate << "," << floor_seconds(rtt, r.size) * 1e3 << ","
          << t / floor_seconds(rtt, r.size) << std::endl;
    }
  };
  print(results.front());
  for (std::size_t size : options.sizes) {
    for (std::size_t b = 0; b < options.batches; ++b) {
      const bool ramp = b == 0 && size != options.sizes.front() && options.batches > 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(options.pause_ms));
      results.push_back({size, ++batch_number, false, runner.run_batch(size), ramp});
      print(results.back());
    }
  }

  // Summary per size over the warm batches.
  std::ostringstream json;
  json << "{\"peer\":\"" << peer << "\",\"count\":" << options.count << ",\"ack\":\""
       << (options.ack == AckMode::kEach ? "each" : "last") << "\",\"rtt_ms\":" << rtt * 1e3
       << ",\"link_rate_mbit\":" << link_rate << ",\"cold\":{\"size\":" << results.front().size
       << ",\"t_ms\":" << results.front().seconds / X * 1e3
       << ",\"floor_ms\":" << floor_seconds(rtt, results.front().size) * 1e3 << "},\"sizes\":[";
  std::printf("\nwarm batches (cold and ramp batches excluded):\n              %10s %14s %11s %11s %16s\n", "size", "median t (ms)", "min t (ms)", "floor (ms)",
              "median t/floor");
  bool first = true;
  for (std::size_t size : options.sizes) {
    std::vector<double> t;
    for (const auto& r : results) {
      if (!r.cold && !r.ramp && r.size == size) t.push_back(r.seconds / X);
    }
    const double floor = floor_seconds(rtt, size);
    const double med = median(t);
    const double best = *std::min_element(t.begin(), t.end());
    std::printf("              %10zu %14.3f %11.3f %11.3f %16.2f\n", size, med * 1e3, best * 1e3, floor * 1e3,
                med / floor);
    json << (first ? "" : ",") << "{\"size\":" << size << ",\"median_t_ms\":" << med * 1e3
         << ",\"min_t_ms\":" << best * 1e3 << ",\"floor_ms\":" << floor * 1e3 << ",\"ratio\":" << med / floor
         << ",\"t_ms\":[";
    for (std::size_t i = 0; i < t.size(); ++i) json << (i ? "," : "") << t[i] * 1e3;
    json << "]}";
    first = false;
  }
  const std::string stats = engine.stats_json();
  std::printf("\npath measured by the engine (ms, Mbit/s, bytes; buffers 0 = kernel autotuning):\n  %s\n",
              object_fields(stats, "path").c_str());
  std::printf("TCP Fast Open (connections whose SYN carried data, and those the peer took): %s\n",
              object_fields(stats, "fast_open").c_str());
  json << "],\"engine\":" << stats << "}";
  std::printf("\n%s\n", json.str().c_str());
  if (!options.json_path.empty()) std::ofstream(options.json_path) << json.str() << "\n";
  return 0;
}

// Two engines in this process: one sends `count` messages, the other answers the last one.
LoopbackResult run_engine_loopback(std::size_t size, std::size_t count) {
  Config config = Config::from_environment();
  config.listen = "127.0.0.1:0";
  if (config.key.empty()) config.key = make_job_key();  // both engines are ours: any key they share
  Engine sender(config);
  Engine receiver(config);
  std::thread answer([&] {
    std::size_t got = 0;
    while (got < count) {
      if (auto message = receiver.try_receive()) {
        if (++got == count) {
          Message ack;
          ack.flags = kAcknowledgement;
          receiver.send(message->peer_endpoint, std::move(ack));
        }
      } else {
        receiver.wait_receive(100ms);
      }
    }
  });
  // Warm the session up (connect and authenticate) outside the measurement.
  sender.send(receiver.local_endpoint(), Message{});
  sender.flush(10s);
  const std::vector<std::byte> body(size, std::byte{0x5a});
  const CpuStopwatch stopwatch;
  for (std::size_t i = 1; i < count; ++i) {
    Message message;
    copy_body(message, body);
    sender.send(receiver.local_endpoint(), std::move(message));
  }
  while (!sender.try_receive()) sender.wait_receive(100ms);
  const LoopbackResult result = stopwatch.elapsed();
  answer.join();
  return result;
}

int local(const Options& options) {
  std::printf("lp-perf local: %zu messages per size, one acknowledgement at the end; CPU = whole process\n",
              options.count);
  std::printf("%10s %-10s %14s %14s %12s\n", "size", "transport", "messages/s", "CPU us/msg", "MB/s");
  std::ostringstream json;
  json << "{\"count\":" << options.count << ",\"sizes\":[";
  bool first = true;
  for (std::size_t size : options.sizes) {
    const LoopbackResult plain = run_plain_tcp(size, options.count);
    const LoopbackResult engine = run_engine_loopback(size, options.count);
    const double n = static_cast<double>(options.count);
    auto line = [&](const char* name, const LoopbackResult& r) {
      std::printf("%10zu %-10s %14.0f %14.2f %12.1f\n", size, name, n / r.seconds, r.cpu_seconds / n * 1e6,
                  n * static_cast<double>(size) / r.seconds / 1e6);
    };
    line("plain-tcp", plain);
    line("longpipe", engine);
    std::printf("%10s %-10s %14.2f %14.2f   (longpipe / plain)\n", "", "ratio", plain.seconds / engine.seconds,
                engine.cpu_seconds / plain.cpu_seconds);
    json << (first ? "" : ",") << "{\"size\":" << size << ",\"plain_rate\":" << n / plain.seconds
         << ",\"engine_rate\":" << n / engine.seconds << ",\"plain_cpu_us\":" << plain.cpu_seconds / n * 1e6
         << ",\"engine_cpu_us\":" << engine.cpu_seconds / n * 1e6
         << ",\"rate_ratio\":" << plain.seconds / engine.seconds
         << ",\"cpu_ratio\":" << engine.cpu_seconds / plain.cpu_seconds << "}";
    first = false;
  }
  json << "]}";
  std::printf("\n%s\n", json.str().c_str());
  if (!options.json_path.empty()) std::ofstream(options.json_path) << json.str() << "\n";
  return 0;
}

}  // namespace
}  // namespace lp::perf

int main(int argc, char** argv) {
  using namespace lp::perf;
  try {
    const Options options = parse_options(argc, argv);
    if (options.command == "help") {
      std::cout << usage();
      return 0;
    }
    if (options.command == "serve") return serve(options);
    if (options.command == "run") return run(options);
    return local(options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "lp-perf: " << e.what() << "\n\n" << usage();
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lp-perf: " << e.what() << "\n";
    return 1;
  }
}
