#include "link_emulator.h"

#include <poll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

#include "system_call.h"

namespace lp::netem {

namespace {

// Counters are rewritten this often, for `wan status` and benchmarks. The packet loop only formats
// them: a synchronous write there stopped every emulator on the shared test machine for up to 38 s
// while other builds kept the disk busy (the link then delivered nothing: a false outage).
constexpr Nanoseconds kStatsInterval = std::chrono::seconds(1);
// Packets read from one device per wake-up before arrivals are served again: bounds the delivery
// error a burst of incoming packets can cause (about 4 us of work per packet on these machines).
constexpr int kMaxReadsPerWakeup = 64;
// Large enough for any packet a TUN device with MTU 1500 (or a larger one set by hand) can hold.
constexpr std::size_t kReadBufferBytes = 65536;

Nanoseconds monotonic_now() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return std::chrono::seconds(now.tv_sec) + Nanoseconds(now.tv_nsec);
}

double seconds(const timeval& time) { return static_cast<double>(time.tv_sec) + time.tv_usec / 1e6; }

}  // namespace

LinkEmulator::LinkEmulator(TunDevice site_a, TunDevice site_b, const LinkParameters& a_to_b,
                           const LinkParameters& b_to_a, std::uint64_t seed, std::string stats_file)
    : site_a_(std::move(site_a)),
      site_b_(std::move(site_b)),
      a_to_b_{"a_to_b", &site_a_, &site_b_, LinkModel(a_to_b, seed)},
      b_to_a_{"b_to_a", &site_b_, &site_a_, LinkModel(b_to_a, seed + 1)},
      started_(monotonic_now()),
      stats_(std::move(stats_file)) {}

void LinkEmulator::deliver_arrived(Direction& direction, Nanoseconds now) {
  while (auto packet = direction.model.take_arrived(now)) {
    if (!direction.to->write_packet(*packet)) ++direction.write_errors;
  }
}

void LinkEmulator::accept_waiting(Direction& direction) {
  static std::array<std::uint8_t, kReadBufferBytes> buffer;
  for (int reads = 0; reads < kMaxReadsPerWakeup; ++reads) {
    const std::size_t size = direction.from->read_packet(buffer);
    if (size == 0) return;
    direction.model.offer(monotonic_now(), Packet(buffer.begin(), buffer.begin() + size));
  }
}

Nanoseconds LinkEmulator::wait_budget(Nanoseconds now, Nanoseconds next_stats) const {
  Nanoseconds until = next_stats;
  for (const Direction* direction : {&a_to_b_, &b_to_a_}) {
    if (auto arrival = direction->model.next_arrival()) until = std::min(until, *arrival);
  }
  return std::max(Nanoseconds{0}, until - now);
}

void LinkEmulator::run(const volatile std::sig_atomic_t& stop) {
  sigset_t wait_mask;
  SystemCall("read signal mask", ::sigprocmask(SIG_BLOCK, nullptr, &wait_mask));
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  sigdelset(&wait_mask, SIGHUP);

  std::array<pollfd, 2> fds{pollfd{site_a_.fd(), POLLIN, 0}, pollfd{site_b_.fd(), POLLIN, 0}};
  Nanoseconds next_stats = monotonic_now() + kStatsInterval;
  while (!stop) {
    Nanoseconds now = monotonic_now();
    deliver_arrived(a_to_b_, now);
    deliver_arrived(b_to_a_, now);
    if (now >= next_stats) {
      stats_.publish(stats_text());
      next_stats = now + kStatsInterval;
    }

    const Nanoseconds budget = wait_budget(now, next_stats);
    const timespec timeout{static_cast<time_t>(budget.count() / 1'000'000'000),
                           static_cast<long>(budget.count() % 1'000'000'000)};
    const int ready = ::ppoll(fds.data(), fds.size(), &timeout, &wait_mask);
    if (ready < 0 && errno == EINTR) continue;
    SystemCall("wait for packets (ppoll)", ready);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
        throw SystemError("TUN device in namespace " + std::string(i == 0 ? site_a_.netns() : site_b_.netns()) +
                              " went away",
                          EIO);
      }
    }
    if (fds[0].revents & POLLIN) accept_waiting(a_to_b_);
    if (fds[1].revents & POLLIN) accept_waiting(b_to_a_);
  }
}

void LinkEmulator::write_stats() const { stats_.write_now(stats_text()); }

std::string LinkEmulator::stats_text() const {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const Nanoseconds now = monotonic_now();
  std::ostringstream out;
  out << "pid=" << ::getpid() << "\n"
      << "uptime_s=" << static_cast<double>((now - started_).count()) / 1e9 << "\n"
      << "cpu_user_s=" << seconds(usage.ru_utime) << "\n"
      << "cpu_system_s=" << seconds(usage.ru_stime) << "\n"
      << "realtime_priority=" << realtime_priority_ << "\n";
  for (const Direction* direction : {&a_to_b_, &b_to_a_}) {
    const LinkCounters& counters = direction->model.counters();
    const std::string prefix = direction->name;
    out << prefix << "_forwarded_packets=" << counters.forwarded_packets << "\n"
        << prefix << "_forwarded_bytes=" << counters.forwarded_bytes << "\n"
        << prefix << "_dropped_by_loss=" << counters.dropped_by_loss << "\n"
        << prefix << "_dropped_by_queue=" << counters.dropped_by_queue << "\n"
        << prefix << "_write_errors=" << direction->write_errors << "\n"
        << prefix << "_queued_bytes=" << direction->model.queued_bytes(now) << "\n"
        << prefix << "_in_flight_packets=" << direction->model.packets_in_flight() << "\n";
  }
  return out.str();
}

}  // namespace lp::netem
