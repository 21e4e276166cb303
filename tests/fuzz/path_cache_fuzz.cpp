// Fuzz target: the warm-start cache's file parser (libshim/core/path_cache.*). The file lives in the
// user's cache folder (or wherever LONGPIPE_PATH_CACHE points), so any local process of that user,
// or a damaged disk, may have written it; every process that starts a session reads it. The input
// is the file's text (after a clock byte and a key selector); the harness parses it as load() does,
// looks an entry up, merges a new one as save() does and formats the result.
// Beyond "no crash, no sanitizer report": at most kMaxEntries entries, each within the ranges the
// parser promises (key without blanks, RTT in (0, 1 h], rate in [0, 1e13], fresh at `now`); what
// format() writes parses back to the same entries, and formatting those again gives the same text;
// find() answers only for a key that is there and fresh; path_cache_key never throws.
#include <cmath>
#include <string>

#include "fuzz_input.h"
#include "path/path_cache.h"

namespace {

constexpr std::int64_t kNow = 1'800'000'000;  // unix seconds, near the seed corpus's time stamps

bool same_entries(const lp::PathCache& a, const lp::PathCache& b) {
  if (a.size() != b.size()) return false;
  auto i = a.entries().begin();
  for (auto j = b.entries().begin(); j != b.entries().end(); ++i, ++j) {
    const lp::PathSnapshot &x = i->second.path, &y = j->second.path;
    if (i->first != j->first || i->second.saved_unix != j->second.saved_unix || x.min_rtt != y.min_rtt ||
        x.rate_bytes_per_second != y.rate_bytes_per_second || x.congestion_window != y.congestion_window ||
        x.send_buffer != y.send_buffer || x.receive_buffer != y.receive_buffer || x.loss_ppm != y.loss_ppm ||
        x.peer_verdict != y.peer_verdict) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  // The clock: near the time stamps, or anywhere (a clock set back or far ahead).
  const std::uint8_t clock = input.u8();
  const std::int64_t now = clock & 0x80 ? static_cast<std::int64_t>(input.u64()) : kNow + (clock & 0x7f) * 3600;
  const std::uint8_t selector = input.u8();
  const auto rest = input.rest();
  const std::string text(reinterpret_cast<const char*>(rest.data()), rest.size());

  const lp::PathCache cache = lp::PathCache::parse(text, now);
  LP_FUZZ_CHECK(cache.size() <= lp::PathCache::kMaxEntries);
  const std::string* some_key = nullptr;
  std::size_t n = 0;
  for (const auto& [key, entry] : cache.entries()) {
    LP_FUZZ_CHECK(!key.empty() && key.size() <= 255 && key.front() != '#');
    for (char c : key) LP_FUZZ_CHECK(static_cast<unsigned char>(c) > ' ');
    LP_FUZZ_CHECK(entry.saved_unix > 0 && entry.saved_unix <= now && now - entry.saved_unix <= lp::PathCache::kMaxAge.count());
    LP_FUZZ_CHECK(entry.path.min_rtt.count() > 0 && entry.path.min_rtt <= std::chrono::hours(1));
    LP_FUZZ_CHECK(entry.path.rate_bytes_per_second >= 0 && entry.path.rate_bytes_per_second <= 1e13);
    LP_FUZZ_CHECK(entry.path.loss_ppm >= -1 && entry.path.loss_ppm <= 1'000'000);
    LP_FUZZ_CHECK(entry.path.peer_verdict >= -1 && entry.path.peer_verdict <= 1);
    LP_FUZZ_CHECK(cache.find(key, now).has_value());
    if (n++ == selector) some_key = &key;
  }
  LP_FUZZ_CHECK(!cache.find("#not-a-key", now));

  // What save() writes parses back to the same entries (the rate loses its fraction once).
  const std::string written = cache.format();
  const lp::PathCache again = lp::PathCache::parse(written, now);
  LP_FUZZ_CHECK(again.size() == cache.size() && again.corrupt_lines() == 0 && again.expired_lines() == 0);
  LP_FUZZ_CHECK(lp::PathCache::parse(again.format(), now).format() == again.format());
  LP_FUZZ_CHECK(same_entries(lp::PathCache::parse(again.format(), now), again));

  // A session's update merged in, as save() merges it, and the known-rate rule against an entry.
  lp::PathCache merged = again;
  lp::PathSnapshot learnt;
  learnt.min_rtt = std::chrono::microseconds(540'000);
  learnt.rate_bytes_per_second = 1e6;
  learnt.rate_is_lower_bound = selector & 1;
  const std::string key = some_key ? *some_key : std::string(text.substr(0, 40));
  const lp::PathSnapshot kept = lp::keep_known_rate(learnt, cache.find(key, now));
  LP_FUZZ_CHECK(kept.min_rtt == learnt.min_rtt && kept.rate_bytes_per_second >= learnt.rate_bytes_per_second);
  merged.put(key, kept, now);
  LP_FUZZ_CHECK(merged.size() <= lp::PathCache::kMaxEntries);
  // (An entry put at a clock before 1970 is one the parser refuses: no real clock says so.)
  if (now > 0) LP_FUZZ_CHECK(lp::PathCache::parse(merged.format(), now).size() == merged.size());

  // The key of a peer whose endpoint came from anywhere: never throws.
  (void)lp::path_cache_key("", text.substr(0, 300));
  return 0;
}
