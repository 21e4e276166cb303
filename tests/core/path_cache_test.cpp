// PathCache: the warm-start file's format, damaged lines skipped and counted, aging, the bound on
// entries, atomic 0600 writes merged with what another process wrote, LONGPIPE_PATH_CACHE's file,
// and how the keeper reads an entry for LONGPIPE_CARRIER=auto.
#include "path/path_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include "config.h"
#include "driver/path_keeper.h"

using namespace std::chrono_literals;
using lp::PathCache;
using lp::PathSnapshot;

namespace {

constexpr std::int64_t kNow = 1'800'000'000;

PathSnapshot snapshot(std::chrono::microseconds rtt, double rate) {
  PathSnapshot s;
  s.min_rtt = rtt;
  s.rate_bytes_per_second = rate;
  s.congestion_window = 120;
  s.send_buffer = 1u << 20;
  s.receive_buffer = 4u << 20;
  return s;
}

// A fresh directory for one test, removed at its end.
struct TemporaryDirectory {
  TemporaryDirectory() {
    char pattern[] = "/tmp/lp-path-cache-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TemporaryDirectory() { std::filesystem::remove_all(path); }
  std::string path;
};

}  // namespace

TEST_CASE("format and parse round-trip", "[path-cache]") {
  PathCache cache;
  lp::PathSnapshot lossy = snapshot(540ms, 19e6);
  lossy.loss_ppm = 10'000;
  lossy.peer_verdict = 1;
  cache.put("10.77.0.2", lossy, kNow - 10);
  cache.put("site-c", snapshot(50ms, 1e6), kNow);
  const PathCache again = PathCache::parse(cache.format(), kNow);
  CHECK(again.size() == 2);
  CHECK(again.corrupt_lines() == 0);
  const auto found = again.find("10.77.0.2", kNow);
  REQUIRE(found);
  CHECK(found->min_rtt == 540ms);
  CHECK(found->rate_bytes_per_second == Approx(19e6));
  CHECK(found->congestion_window == 120);
  CHECK(found->send_buffer == (1u << 20));
  CHECK(found->receive_buffer == (4u << 20));
  CHECK(found->loss_ppm == 10'000);
  CHECK(found->peer_verdict == 1);
  CHECK(again.find("site-c", kNow)->loss_ppm == -1);
  CHECK(again.find("site-c", kNow)->peer_verdict == -1);
  CHECK_FALSE(again.find("10.77.0.3", kNow));
}

TEST_CASE("damaged lines are skipped and counted; the good ones stay", "[path-cache]") {
  const std::string text = std::string(PathCache::kHeader) + "\n" +
                           "good 1799999990 540000 19000000 120 1048576 4194304\n"
                           "short 1799999990 540000\n"
                           "extra 1799999990 540000 19000000 120 1048576 4194304 9 1 1\n"
                           "verdict-too-high 1799999990 540000 19000000 120 1048576 4194304 9 2\n"
                           "verdict-letters 1799999990 540000 19000000 120 1048576 4194304 9 yes\n"
                           "with-verdict 1799999990 540000 19000000 120 1048576 4194304 9 0\n"
                           "loss-letters 1799999990 540000 19000000 120 1048576 4194304 9x\n"
                           "loss-too-low 1799999990 540000 19000000 120 1048576 4194304 -2\n"
                           "negative-rtt 1799999990 -5 19000000 120 1048576 4194304\n"
                           "letters 1799999990 abc 19000000 120 1048576 4194304\n"
                           "huge-buffer 1799999990 540000 19000000 120 99999999999999 4194304\n"
                           "\x01\x02\x03 garbage\n" +
                           std::string(600, 'x') + "\n";
  const PathCache cache = PathCache::parse(text, kNow);
  CHECK(cache.size() == 2);
  CHECK(cache.find("good", kNow));
  CHECK(cache.find("good", kNow)->loss_ppm == -1);  // 7 fields, from before the loss field: unknown
  CHECK(cache.find("good", kNow)->peer_verdict == -1);
  CHECK(cache.find("with-verdict", kNow)->peer_verdict == 0);
  CHECK(cache.corrupt_lines() == 11);
}

TEST_CASE("entries age out after kMaxAge; one from the future is not trusted", "[path-cache]") {
  const auto age = PathCache::kMaxAge.count();
  PathCache cache;
  cache.put("old", snapshot(10ms, 1e6), kNow - age - 1);
  cache.put("fresh", snapshot(10ms, 1e6), kNow - age + 1);
  cache.put("future", snapshot(10ms, 1e6), kNow + 60);
  CHECK_FALSE(cache.find("old", kNow));
  CHECK(cache.find("fresh", kNow));
  CHECK_FALSE(cache.find("future", kNow));
  const PathCache reread = PathCache::parse(cache.format(), kNow);
  CHECK(reread.size() == 1);
  CHECK(reread.expired_lines() == 2);
}

TEST_CASE("at most kMaxEntries; the oldest go", "[path-cache]") {
  PathCache cache;
  for (std::size_t i = 0; i < PathCache::kMaxEntries + 10; ++i) {
    cache.put("host-" + std::to_string(i), snapshot(10ms, 1e6), kNow - 1000 + static_cast<std::int64_t>(i));
  }
  CHECK(cache.size() == PathCache::kMaxEntries);
  CHECK_FALSE(cache.find("host-0", kNow));
  CHECK_FALSE(cache.find("host-9", kNow));
  CHECK(cache.find("host-10", kNow));
}

TEST_CASE("keys with blanks and entries without an RTT are not stored", "[path-cache]") {
  PathCache cache;
  cache.put("a b", snapshot(10ms, 1e6), kNow);
  cache.put("", snapshot(10ms, 1e6), kNow);
  cache.put("#comment", snapshot(10ms, 1e6), kNow);
  cache.put("no-rtt", snapshot(0ms, 1e6), kNow);
  CHECK(cache.size() == 0);
}

TEST_CASE("save: mode 0600, directory created, merged with the file's other entries, atomic", "[path-cache]") {
  TemporaryDirectory directory;
  const std::string file = directory.path + "/nested/longpipe/paths";
  std::map<std::string, PathCache::Entry> first{{"10.0.0.1", {kNow - 5, snapshot(100ms, 5e6)}}};
  REQUIRE(PathCache::save(file, first, kNow) == "");
  struct stat info {};
  REQUIRE(::stat(file.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  // Another process adds its path; ours stays.
  std::map<std::string, PathCache::Entry> second{{"10.0.0.2", {kNow, snapshot(200ms, 6e6)}}};
  REQUIRE(PathCache::save(file, second, kNow) == "");
  PathCache cache = PathCache::load(file, kNow);
  CHECK(cache.size() == 2);
  CHECK(cache.find("10.0.0.1", kNow)->min_rtt == 100ms);
  // An older update does not overwrite a newer entry.
  std::map<std::string, PathCache::Entry> stale{{"10.0.0.2", {kNow - 100, snapshot(900ms, 1e3)}}};
  REQUIRE(PathCache::save(file, stale, kNow) == "");
  CHECK(PathCache::load(file, kNow).find("10.0.0.2", kNow)->min_rtt == 200ms);
  // No temporary file left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(directory.path + "/nested/longpipe")) ++files;
  CHECK(files == 1);
}

TEST_CASE("load: a missing or damaged file is an empty cache, never an error", "[path-cache]") {
  TemporaryDirectory directory;
  CHECK(PathCache::load(directory.path + "/missing", kNow).size() == 0);
  const std::string file = directory.path + "/paths";
  std::ofstream(file) << "\xff\xfe not a cache at all\n\n###\n";
  const PathCache cache = PathCache::load(file, kNow);
  CHECK(cache.size() == 0);
  CHECK(cache.corrupt_lines() == 1);
}

TEST_CASE("LONGPIPE_PATH_CACHE: off, a path, or the per-user default", "[path-cache]") {
  std::map<std::string, std::string> environment;
  auto get = [&](const char* name) {
    auto found = environment.find(name);
    return found == environment.end() ? std::string() : found->second;
  };
  CHECK(lp::path_cache_file("off", get) == "");
  CHECK(lp::path_cache_file("/var/tmp/p", get) == "/var/tmp/p");
  CHECK(lp::path_cache_file("auto", get) == "");  // neither HOME nor XDG_CACHE_HOME
  environment["HOME"] = "/home/u";
  CHECK(lp::path_cache_file("auto", get) == "/home/u/.cache/longpipe/paths");
  environment["XDG_CACHE_HOME"] = "/xdg";
  CHECK(lp::path_cache_file("auto", get) == "/xdg/longpipe/paths");
  environment["XDG_CACHE_HOME"] = "relative";  // the XDG spec says to ignore relative paths
  CHECK(lp::path_cache_file("auto", get) == "/home/u/.cache/longpipe/paths");
}

TEST_CASE("the key: the peer's address without the port, else its host name", "[path-cache]") {
  CHECK(lp::path_cache_key("10.77.0.2", "site-b:7447") == "10.77.0.2");
  CHECK(lp::path_cache_key("", "site-b:7447") == "site-b");
}

TEST_CASE("auto: the keeper reads a known long path's entry as a reason for datagrams", "[path-cache][carrier]") {
  TemporaryDirectory directory;
  const std::string file = directory.path + "/paths";
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));  // the keeper reads the wall clock
  PathSnapshot geo = snapshot(540ms, 155e6 / 8);
  geo.loss_ppm = 0;  // loss-free: the lossy judgement alone says tcp
  PathSnapshot answers = snapshot(540ms, 43'759);  // what a geo acceptor that only answered caches
  answers.loss_ppm = -1;
  REQUIRE(PathCache::save(file, {{"10.77.0.2", {now, geo}}, {"10.77.0.1", {now, answers}}}, now) == "");
  lp::Config config;
  config.path_cache = file;
  const lp::PathKeeper keeper(config);
  CHECK(keeper.prefers_datagrams("10.77.0.2", 541ms, false));
  CHECK_FALSE(keeper.prefers_datagrams("10.77.0.2", 50ms, false));  // another path (the warm start's validation)
  CHECK_FALSE(keeper.prefers_datagrams("10.77.0.2", std::nullopt, false));  // nothing to validate the entry against
  CHECK_FALSE(keeper.prefers_datagrams("10.77.0.1", 541ms, false));  // the pacer would not take that seed
  CHECK_FALSE(keeper.prefers_datagrams("10.77.0.3", 541ms, false));  // unknown
  // A LONGPIPE_BANDWIDTH the user set caps the seed, and so the judgement: 5 Mbit/s x 540 ms is 337 KB.
  config.bandwidth_mbit = 5;
  config.bandwidth_given = true;
  config.bandwidth_stand_in = false;
  CHECK_FALSE(lp::PathKeeper(config).prefers_datagrams("10.77.0.2", 541ms, false));
}

TEST_CASE("auto: a dialler heeds the peer's verdict on a long path; an acceptor's own view does not", "[path-cache][carrier]") {
  TemporaryDirectory directory;
  const std::string file = directory.path + "/paths";
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  // What the CFD demo's visualisation end knew of the simulation's site: the replies' rate (its
  // own judgement says tcp), and the simulation end's verdict heard when that end dialled it.
  PathSnapshot answers = snapshot(540ms, 163'794);
  answers.peer_verdict = 1;
  PathSnapshot refused = answers;
  refused.peer_verdict = 0;
  PathSnapshot short_path = snapshot(20ms, 163'794);
  short_path.peer_verdict = 1;
  REQUIRE(PathCache::save(file, {{"heard", {now, answers}}, {"refused", {now, refused}}, {"short", {now, short_path}}}, now) == "");
  lp::Config config;
  config.path_cache = file;
  const lp::PathKeeper keeper(config);
  CHECK(keeper.judge_before_dial("heard") == lp::DialJudgement::kDatagrams);  // before the dial
  CHECK(keeper.prefers_datagrams("heard", 541ms, true));         // the dialler's offer
  CHECK_FALSE(keeper.prefers_datagrams("heard", 541ms, false));  // the acceptor's own view
  CHECK_FALSE(keeper.prefers_datagrams("heard", 50ms, true));    // another path behind the address
  CHECK(keeper.judge_before_dial("refused") == lp::DialJudgement::kTcp);
  CHECK_FALSE(keeper.prefers_datagrams("refused", 541ms, true));
  CHECK(keeper.judge_before_dial("short") == lp::DialJudgement::kTcp);  // shorter than kAutoMinRtt
  CHECK(keeper.judge_before_dial("unknown") == lp::DialJudgement::kAtHandshake);  // the handshake decides
  CHECK_FALSE(keeper.prefers_datagrams("short", 20ms, true));
}

TEST_CASE("keep_known_rate: a small-message session keeps a bulk entry's rate, refreshes its RTT", "[path-cache]") {
  const PathSnapshot bulk = snapshot(540ms, 18.7e6);
  PathSnapshot small = snapshot(541ms, 0.2e6);  // lp-perf 1 KiB on tcp: what it sent
  small.congestion_window = 10;
  small.send_buffer = 64u << 10;
  small.receive_buffer = 128u << 10;
  small.loss_ppm = -1;
  small.rate_is_lower_bound = true;
  const PathSnapshot written = lp::keep_known_rate(small, bulk);
  CHECK(written.rate_bytes_per_second == Approx(18.7e6));
  CHECK(written.congestion_window == bulk.congestion_window);
  CHECK(written.send_buffer == bulk.send_buffer);
  CHECK(written.receive_buffer == bulk.receive_buffer);
  CHECK(written.min_rtt == 541ms);  // what the session did measure
  CHECK(written.loss_ppm == -1);    // left to the keeper's own rule (remember)
}

TEST_CASE("keep_known_rate: a session that filled its pipe on a slower path lowers the rate", "[path-cache]") {
  PathSnapshot slower = snapshot(540ms, 5e6);
  slower.congestion_window = 40;
  slower.rate_is_lower_bound = false;
  const PathSnapshot written = lp::keep_known_rate(slower, snapshot(540ms, 18.7e6));
  CHECK(written.rate_bytes_per_second == Approx(5e6));
  CHECK(written.congestion_window == 40);
}

TEST_CASE("keep_known_rate: without an entry, or one lower, the session's own rate is written", "[path-cache]") {
  PathSnapshot small = snapshot(540ms, 0.2e6);
  small.rate_is_lower_bound = true;
  CHECK(lp::keep_known_rate(small, std::nullopt).rate_bytes_per_second == Approx(0.2e6));
  CHECK(lp::keep_known_rate(small, snapshot(540ms, 0.1e6)).rate_bytes_per_second == Approx(0.2e6));
}

TEST_CASE("keep_known_rate: an entry whose RTT disagrees is another path behind the address", "[path-cache]") {
  PathSnapshot small = snapshot(20ms, 0.2e6);
  small.rate_is_lower_bound = true;
  const PathSnapshot written = lp::keep_known_rate(small, snapshot(540ms, 18.7e6));
  CHECK(written.rate_bytes_per_second == Approx(0.2e6));
  CHECK(written.min_rtt == 20ms);
}
