// fall_back_if_unsuited(): a cubic connection whose window has grown switches to the fallback (bbr)
// before a write that the kernel would start with an idle restart, once; a connection still at
// its initial window, or without a fallback configured, keeps cubic.
// Real loopback TCP sockets; Linux's minimum RTO (200 ms) sets the pause.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "system_call.h"
#include "loopback_pair.h"
#include "carrier/tcp/tcp_path_info.h"
#include "carrier/tcp/tcp_socket.h"

namespace {

using lp::SystemCall;

// Longer than Linux's minimum RTO (200 ms) on loopback, where the smoothed RTT is microseconds.
constexpr auto kPauseBeyondRto = std::chrono::milliseconds(350);

// Bytes one exchange sends to grow the congestion window past the initial 10 segments on loopback.
constexpr std::size_t kWindowGrowingBytes = 8u << 20;

// A connected loopback pair, the client on `congestion`. The server's receive buffer holds two
// exchanges: only a sender limited by its congestion window gets a larger one, and with the
// buffer autotuned a sanitizer build's slow reader limited it instead (an ASan build at load 19:
// no window grown in 5 pairs of 8 exchanges; a TSan build with this buffer: 32-36 segments after
// the first pair).
lp::LoopbackPair connect_pair(const char* congestion) {
  lp::LoopbackPair pair = lp::connect_loopback_pair();
  SystemCall("setsockopt TCP_CONGESTION",
             ::setsockopt(pair.client.get(), IPPROTO_TCP, TCP_CONGESTION, congestion, std::strlen(congestion)));
  const int bytes = static_cast<int>(2 * kWindowGrowingBytes);
  if (::setsockopt(pair.server.get(), SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {  // needs root
    SystemCall("setsockopt SO_RCVBUF", ::setsockopt(pair.server.get(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes));
  }
  return pair;
}

tcp_info read_tcp_info(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  SystemCall("getsockopt TCP_INFO", ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length));
  return info;
}

// Sends `bytes` from client to server, reads them and waits until the sender has every
// acknowledgement (nothing in flight).
void exchange(lp::LoopbackPair& pair, std::size_t bytes) {
  std::thread reader([&] {
    std::vector<char> buffer(64 << 10);
    for (std::size_t got = 0; got < bytes;) {
      const ssize_t n = ::recv(pair.server.get(), buffer.data(), buffer.size(), 0);
      if (n <= 0) return;
      got += static_cast<std::size_t>(n);
    }
  });
  const std::vector<char> data(bytes, 'x');
  for (std::size_t sent = 0; sent < bytes;) {
    const ssize_t n = ::send(pair.client.get(), data.data() + sent, bytes - sent, 0);
    REQUIRE(n > 0);
    sent += static_cast<std::size_t>(n);
  }
  reader.join();
  for (int i = 0; i < 1000 && read_tcp_info(pair.client.get()).tcpi_unacked != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(read_tcp_info(pair.client.get()).tcpi_unacked == 0);
}

// Linux grows the window only while it limits the sender: exchanges until it did, at most this many.
constexpr int kWindowGrowingExchanges = 8;

// Exchanges kWindowGrowingBytes until the client's window grew past the initial 10 segments
// (kWindowGrowingExchanges at most). Whether it did: a window a restart of slow start would lose.
bool grow_window(lp::LoopbackPair& pair) {
  for (int i = 0; i < kWindowGrowingExchanges && read_tcp_info(pair.client.get()).tcpi_snd_cwnd <= 10; ++i) {
    exchange(pair, kWindowGrowingBytes);
  }
  return read_tcp_info(pair.client.get()).tcpi_snd_cwnd > 10;
}

// How many fresh pairs a test that needs a grown window tries (each: kWindowGrowingExchanges).
constexpr int kWindowGrowingPairs = 5;

// A fresh cubic pair whose client's window grew past the initial 10 segments and that has seen no
// retransmission, just after a one-byte exchange; nullopt if kWindowGrowingPairs fresh pairs
// could not get there (loopback retransmits now and then on a busy machine: each try is independent).
std::optional<lp::LoopbackPair> pair_with_grown_window() {
  for (int attempt = 0; attempt < kWindowGrowingPairs; ++attempt) {
    lp::LoopbackPair pair = connect_pair("cubic");
    if (!grow_window(pair)) continue;
    exchange(pair, 1);
    if (read_tcp_info(pair.client.get()).tcpi_total_retrans == 0) return pair;
  }
  return std::nullopt;
}

std::string kernel_congestion(int fd) {
  char name[32] = {};
  socklen_t length = sizeof name - 1;
  SystemCall("getsockopt TCP_CONGESTION", ::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &length));
  return name;
}

}  // namespace

TEST_CASE("a cubic connection switches to bbr before a write that would restart slow start, once") {
  lp::LoopbackPair pair = connect_pair("cubic");
  lp::SocketTuning tuning;
  tuning.congestion = "cubic";
  tuning.congestion_fallback = "bbr";

  exchange(pair, 1);
  std::this_thread::sleep_for(kPauseBeyondRto);
  CHECK_FALSE(lp::fall_back_if_unsuited(pair.client.get(), tuning));  // initial window: nothing to lose
  CHECK(tuning.congestion == "cubic");

  REQUIRE(grow_window(pair));
  // Draining megabytes from the receive buffer can take longer than the check's margin in a
  // sanitizer build on a loaded machine; one more byte makes "just sent" true however slow that was.
  exchange(pair, 1);
  if (read_tcp_info(pair.client.get()).tcpi_total_retrans > 0) {
    // Loopback retransmits now and then when a sanitizer build runs on a busy machine: then the
    // switch is right, for that other reason, and the idle case cannot be told apart any more.
    CHECK(lp::fall_back_if_unsuited(pair.client.get(), tuning));
    CHECK(tuning.note.find("retransmission(s)") != std::string::npos);
    CHECK(kernel_congestion(pair.client.get()) == "bbr");
    return;
  }
  CHECK_FALSE(lp::fall_back_if_unsuited(pair.client.get(), tuning));  // just sent: no idle restart
  CHECK(tuning.congestion == "cubic");
  CHECK(kernel_congestion(pair.client.get()) == "cubic");

  std::this_thread::sleep_for(kPauseBeyondRto);
  CHECK(lp::fall_back_if_unsuited(pair.client.get(), tuning));
  CHECK(tuning.congestion == "bbr");
  CHECK(kernel_congestion(pair.client.get()) == "bbr");
  CHECK(tuning.note.find("switched from cubic to bbr after an idle restart") != std::string::npos);

  exchange(pair, kWindowGrowingBytes);  // the connection still works
  std::this_thread::sleep_for(kPauseBeyondRto);
  CHECK_FALSE(lp::fall_back_if_unsuited(pair.client.get(), tuning));  // once only
  CHECK(kernel_congestion(pair.client.get()) == "bbr");
}

TEST_CASE("without a fallback (LONGPIPE_CONGESTION_FALLBACK=none) a connection keeps its congestion control") {
  lp::LoopbackPair pair = connect_pair("cubic");
  lp::SocketTuning tuning;
  tuning.congestion = "cubic";
  exchange(pair, kWindowGrowingBytes);
  std::this_thread::sleep_for(kPauseBeyondRto);
  CHECK_FALSE(lp::fall_back_if_unsuited(pair.client.get(), tuning));
  CHECK(kernel_congestion(pair.client.get()) == "cubic");
  CHECK(tuning.note.empty());
}

TEST_CASE("a slow start that ended without a loss far below the path's BDP is restarted; a loss calls for the fallback") {
  using lp::CongestionRemedy;
  lp::SocketTuning tuning;
  tuning.path_bdp_bytes = 10462500;  // geo: 155 Mbit/s x 540 ms
  tcp_info info{};
  info.tcpi_snd_mss = 1448;
  info.tcpi_snd_cwnd = 553;
  info.tcpi_unacked = 553;  // data in flight: no idle restart
  info.tcpi_rto = 1'000'000;

  info.tcpi_snd_ssthresh = 0;  // the kernel's "still in the initial slow start"
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);

  info.tcpi_snd_ssthresh = 541;  // cubic's HyStart ended it at 0.8 MB (measured on geo)
  const lp::CongestionVerdict early = lp::judge_congestion(info, tuning);
  CHECK(early.remedy == CongestionRemedy::kRestartSlowStart);
  CHECK(early.why.find("slow start ended without a loss at 541 segments") != std::string::npos);

  info.tcpi_snd_ssthresh = 4000;  // 5.8 MB: an exit near the BDP is HyStart doing its job
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);

  info.tcpi_total_retrans = 3;  // a loss is its own reason, whatever the window
  const lp::CongestionVerdict loss = lp::judge_congestion(info, tuning);
  CHECK(loss.remedy == CongestionRemedy::kFallBack);
  CHECK(loss.why == "3 retransmission(s)");

  tuning.path_bdp_bytes = 0;  // no path known: the rule cannot apply
  info.tcpi_total_retrans = 0;
  info.tcpi_snd_ssthresh = 541;
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);
}

TEST_CASE("on a stream the kernel paces, a slow start that ended below the whole BDP is restarted") {
  using lp::CongestionRemedy;
  lp::SocketTuning tuning;
  tuning.path_bdp_bytes = 10462500;  // geo
  tuning.kernel_paced = true;        // the large-message stream on cubic (pace_large_frames)
  tcp_info info{};
  info.tcpi_snd_mss = 1448;
  info.tcpi_snd_cwnd = 3900;
  info.tcpi_unacked = 3900;
  info.tcpi_rto = 1'000'000;
  info.tcpi_snd_ssthresh = 3842;  // 5.6 MB: HyStart's exit in a slow cold batch on geo (2.01x)
  const lp::CongestionVerdict paced = lp::judge_congestion(info, tuning);
  CHECK(paced.remedy == CongestionRemedy::kRestartSlowStart);
  CHECK(paced.why.find("below the path's bandwidth-delay product") != std::string::npos);
  tuning.kernel_paced = false;  // unpaced, the same exit stands (above half the BDP)
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);
  tuning.kernel_paced = true;
  info.tcpi_snd_ssthresh = 7300;  // 10.6 MB: an exit at the BDP stands, paced or not
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);
}

TEST_CASE("an idle restart that leaves half a BDP of window or more keeps cubic; a smaller one calls for bbr") {
  using lp::CongestionRemedy;
  lp::SocketTuning tuning;
  tuning.path_bdp_bytes = 10462500;  // geo
  tcp_info info{};
  info.tcpi_snd_mss = 1448;
  info.tcpi_unacked = 0;
  info.tcpi_rto = 916'000;  // microseconds

  info.tcpi_snd_cwnd = 13301;       // 19 MB: after a 4 MiB collective series (measured on geo)
  info.tcpi_last_data_sent = 1208;  // one halving: 9.6 MB left, more than half the BDP
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);

  info.tcpi_last_data_sent = 3000;  // three halvings: 2.4 MB left
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kFallBack);

  info.tcpi_snd_cwnd = 120;         // a 1 KiB workload's window: 170 KB even before the halving
  info.tcpi_last_data_sent = 1208;
  const lp::CongestionVerdict small = lp::judge_congestion(info, tuning);
  CHECK(small.remedy == CongestionRemedy::kFallBack);
  CHECK(small.why.find("an idle restart (1208 ms idle, RTO 916 ms)") != std::string::npos);

  tuning.path_bdp_bytes = 0;        // no path known: switch, as before the rule existed
  info.tcpi_snd_cwnd = 13301;
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kFallBack);

  // A spill stream keeps cubic through idle restarts (its bursts fit an initial window), not a loss.
  tuning.spill_stream = true;
  info.tcpi_snd_cwnd = 20;
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);
  info.tcpi_total_retrans = 1;
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kFallBack);
}

TEST_CASE("on a host that keeps windows across idle no idle restart calls for bbr; a loss still does") {
  using lp::CongestionRemedy;
  lp::SocketTuning tuning;
  tuning.path_bdp_bytes = 10462500;  // geo
  tuning.host_restarts_idle = false;  // tcp_slow_start_after_idle = 0 (netem/wan --tune-hosts)
  tcp_info info{};
  info.tcpi_snd_mss = 1448;
  info.tcpi_rto = 916'000;
  info.tcpi_snd_cwnd = 120;          // would not survive a restart (the case above)...
  info.tcpi_last_data_sent = 1208;   // ...after this pause, were one coming
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kNone);
  tuning.host_restarts_idle = true;
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kFallBack);
  tuning.host_restarts_idle = false;
  info.tcpi_total_retrans = 1;
  CHECK(lp::judge_congestion(info, tuning).remedy == CongestionRemedy::kFallBack);
}

TEST_CASE("the spill decision sees the congestion control the next write will switch to, before it switches") {
  std::optional<lp::LoopbackPair> grown = pair_with_grown_window();
  INFO("the precondition: a cubic window grown past 10 segments without a retransmission (" << kWindowGrowingPairs
       << " fresh pairs tried)");
  REQUIRE(grown);
  lp::SocketTuning tuning;
  tuning.congestion = "cubic";
  tuning.congestion_fallback = "bbr";
  const int fd = grown->client.get();
  CHECK(lp::congestion_for_next_write(lp::read_tcp_info_bytes(fd), tuning) == "cubic");  // just sent
  std::this_thread::sleep_for(kPauseBeyondRto);
  // One TCP_INFO read serves both questions of a lookup (TcpLink::stream_window): the congestion
  // control the write will switch to, and the window, read from the same bytes through the
  // kernel's struct tcp_info (tcp_path_info.cpp), which agrees with glibc's (this file's) on the
  // fields both have.
  const lp::TcpInfoBytes bytes = lp::read_tcp_info_bytes(fd);
  REQUIRE(bytes.valid);
  tcp_info info{};
  REQUIRE(bytes.copy_to(&info, sizeof info) > 0);
  CAPTURE(info.tcpi_snd_cwnd, info.tcpi_last_data_sent, info.tcpi_rto, info.tcpi_unacked, info.tcpi_total_retrans);
  CHECK(lp::congestion_for_next_write(bytes, tuning) == "bbr");  // the write will switch
  const lp::StreamWindow window = lp::stream_window_from(bytes, false, false, false);
  CHECK(window.known);
  CHECK(window.window == std::size_t{info.tcpi_snd_cwnd} * info.tcpi_snd_mss);
  CHECK(window.in_flight == std::size_t{info.tcpi_unacked} * info.tcpi_snd_mss);
  CHECK(kernel_congestion(fd) == "cubic");  // only a prediction
  CHECK(tuning.congestion == "cubic");
  tuning.congestion_fallback.clear();  // LONGPIPE_CONGESTION_FALLBACK=none
  CHECK(lp::congestion_for_next_write(lp::read_tcp_info_bytes(fd), tuning) == "cubic");
}

TEST_CASE("a failed TCP_INFO read leaves the congestion control in effect and no window (nothing spills)") {
  lp::SocketTuning tuning;
  tuning.congestion = "cubic";
  tuning.congestion_fallback = "bbr";
  const lp::TcpInfoBytes failed = lp::read_tcp_info_bytes(-1);
  CHECK_FALSE(failed.valid);
  CHECK(lp::congestion_for_next_write(failed, tuning) == "cubic");
  CHECK_FALSE(lp::stream_window_from(failed, false, false, false).known);
}

TEST_CASE("a large-message stream on cubic gets the kernel's pacing, uncapped; a small-message one does not") {
  // SO_MAX_PACING_RATE as read back: ~0 (no maximum, and no pacing unless the congestion control
  // asks) until pace_large_frames() sets one.
  const auto max_pacing_rate = [](int fd) {
    std::uint64_t rate = 0;
    socklen_t length = sizeof rate;
    SystemCall("getsockopt SO_MAX_PACING_RATE", ::getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, &length));
    return rate;
  };
  lp::LoopbackPair pair = connect_pair("cubic");
  lp::SocketTuning small;
  small.congestion = "cubic";
  small.small_frames = true;
  lp::pace_large_frames(pair.server.get(), small);
  CHECK_FALSE(small.kernel_paced);
  CHECK(max_pacing_rate(pair.server.get()) == ~std::uint64_t{0});

  lp::SocketTuning large;
  large.congestion = "cubic";
  lp::pace_large_frames(pair.client.get(), large);
  CHECK(large.kernel_paced);
  CHECK(large.note.empty());
  CHECK(max_pacing_rate(pair.client.get()) > (std::uint64_t{1} << 62));  // switched on, caps nothing
  exchange(pair, kWindowGrowingBytes);  // and the socket still carries data
}
