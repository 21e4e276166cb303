#include "path/path_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "wire/host_port.h"

namespace lp {
namespace {

bool is_key(const std::string& key) {
  return !key.empty() && key.size() <= 255 && key.front() != '#' &&
         std::none_of(key.begin(), key.end(), [](char c) { return static_cast<unsigned char>(c) <= ' '; });
}

// Creates `directory` and its parents (mode 0700); false if it cannot.
bool make_directories(const std::string& directory) {
  if (directory.empty()) return true;
  struct stat info {};
  if (::stat(directory.c_str(), &info) == 0) return S_ISDIR(info.st_mode);
  const auto slash = directory.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_directories(directory.substr(0, slash))) return false;
  return ::mkdir(directory.c_str(), 0700) == 0 || errno == EEXIST;
}

}  // namespace

PathCache PathCache::parse(const std::string& text, std::int64_t now_unix) {
  PathCache cache;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    if (line.size() > kMaxLineBytes) {
      ++cache.corrupt_lines_;
      continue;
    }
    std::istringstream fields(line);
    std::string key;
    Entry entry;
    std::int64_t rtt_us = 0;
    double rate = 0;
    std::uint64_t cwnd = 0, send = 0, receive = 0;
    std::int64_t loss_ppm = -1;  // an older line (7 fields) did not know it
    std::int64_t peer_verdict = -1;  // nor one of 8
    const bool read = static_cast<bool>(fields >> key >> entry.saved_unix >> rtt_us >> rate >> cwnd >> send >> receive);
    bool bad_tail = false;
    std::string optional_field, extra;
    for (std::int64_t* value : {&loss_ppm, &peer_verdict}) {
      if (!read || bad_tail || !(fields >> optional_field)) break;
      const auto [end, error] = std::from_chars(optional_field.data(), optional_field.data() + optional_field.size(), *value);
      bad_tail = error != std::errc() || end != optional_field.data() + optional_field.size();
    }
    bad_tail = bad_tail || static_cast<bool>(fields >> extra);
    if (!read || bad_tail || loss_ppm < -1 || loss_ppm > 1'000'000 || peer_verdict < -1 || peer_verdict > 1 ||
        !is_key(key) || rtt_us <= 0 || rtt_us > 3600LL * 1000 * 1000 || !(rate >= 0) || rate > 1e13 ||
        cwnd > (1u << 30) || send > (1ull << 34) || receive > (1ull << 34) || entry.saved_unix <= 0) {
      ++cache.corrupt_lines_;
      continue;
    }
    // From the future (a clock set back) counts as old: it cannot be aged reliably.
    if (entry.saved_unix > now_unix || now_unix - entry.saved_unix > kMaxAge.count()) {
      ++cache.expired_lines_;
      continue;
    }
    entry.path.min_rtt = std::chrono::microseconds(rtt_us);
    entry.path.rate_bytes_per_second = rate;
    entry.path.congestion_window = static_cast<std::uint32_t>(cwnd);
    entry.path.send_buffer = static_cast<std::size_t>(send);
    entry.path.receive_buffer = static_cast<std::size_t>(receive);
    entry.path.loss_ppm = loss_ppm;
    entry.path.peer_verdict = static_cast<int>(peer_verdict);
    auto& slot = cache.entries_[key];
    if (entry.saved_unix >= slot.saved_unix) slot = entry;  // the newer of two lines for one key
  }
  // A file longer than the bound (written by hand?) keeps its newest entries.
  while (cache.entries_.size() > kMaxEntries) {
    auto oldest = std::min_element(cache.entries_.begin(), cache.entries_.end(),
                                   [](const auto& a, const auto& b) { return a.second.saved_unix < b.second.saved_unix; });
    cache.entries_.erase(oldest);
  }
  return cache;
}

std::string PathCache::format() const {
  std::ostringstream out;
  out << kHeader << "\n# key saved_unix min_rtt_us rate_bytes_per_s cwnd_segments send_buffer receive_buffer loss_ppm peer_verdict\n";
  for (const auto& [key, entry] : entries_) {
    out << key << " " << entry.saved_unix << " " << entry.path.min_rtt.count() << " "
        << static_cast<std::uint64_t>(entry.path.rate_bytes_per_second) << " " << entry.path.congestion_window
        << " " << entry.path.send_buffer << " " << entry.path.receive_buffer << " " << entry.path.loss_ppm << " "
        << entry.path.peer_verdict << "\n";
  }
  return out.str();
}

std::optional<PathSnapshot> PathCache::find(const std::string& key, std::int64_t now_unix) const {
  auto found = entries_.find(key);
  if (found == entries_.end()) return std::nullopt;
  const std::int64_t saved = found->second.saved_unix;
  if (saved > now_unix || now_unix - saved > kMaxAge.count()) return std::nullopt;
  return found->second.path;
}

void PathCache::put(const std::string& key, const PathSnapshot& path, std::int64_t now_unix) {
  if (!is_key(key) || path.min_rtt.count() <= 0) return;
  entries_[key] = Entry{now_unix, path};
  while (entries_.size() > kMaxEntries) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const auto& a, const auto& b) { return a.second.saved_unix < b.second.saved_unix; });
    entries_.erase(oldest);
  }
}

PathCache PathCache::load(const std::string& file, std::int64_t now_unix) {
  std::ifstream in(file);
  if (!in) return PathCache{};
  std::ostringstream text;
  // Read at most what kMaxEntries lines can take (and some): a huge file is not ours.
  std::vector<char> buffer((kMaxEntries + 16) * kMaxLineBytes);
  in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  return parse(std::string(buffer.data(), static_cast<std::size_t>(in.gcount())), now_unix);
}

std::string PathCache::save(const std::string& file, const std::map<std::string, Entry>& updates,
                            std::int64_t now_unix) {
  if (file.empty() || updates.empty()) return "";
  const auto slash = file.find_last_of('/');
  if (slash != std::string::npos && !make_directories(file.substr(0, slash))) {
    return "cannot create the directory of " + file + ": " + std::strerror(errno);
  }
  PathCache merged = load(file, now_unix);
  for (const auto& [key, entry] : updates) {
    auto found = merged.entries_.find(key);
    if (found == merged.entries_.end() || found->second.saved_unix <= entry.saved_unix) {
      merged.put(key, entry.path, entry.saved_unix);
    }
  }
  const std::string text = merged.format();
  const std::string temporary = file + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return "cannot write " + temporary + ": " + std::strerror(errno);
  ::fchmod(fd, 0600);  // an old temporary file of ours keeps its mode otherwise
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      return "cannot write " + temporary + ": " + why;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temporary.c_str());
    return "cannot replace " + file + ": " + why;
  }
  return "";
}

PathSnapshot keep_known_rate(const PathSnapshot& learnt, const std::optional<PathSnapshot>& known) {
  if (!learnt.rate_is_lower_bound || !known || !(known->rate_bytes_per_second > learnt.rate_bytes_per_second) ||
      !validate_warm_start(*known, learnt.min_rtt)) {
    return learnt;
  }
  PathSnapshot kept = learnt;
  kept.rate_bytes_per_second = known->rate_bytes_per_second;
  kept.congestion_window = std::max(known->congestion_window, learnt.congestion_window);
  kept.send_buffer = std::max(known->send_buffer, learnt.send_buffer);
  kept.receive_buffer = std::max(known->receive_buffer, learnt.receive_buffer);
  return kept;
}

std::string path_cache_file(const std::string& setting, const std::function<std::string(const char*)>& environment) {
  if (setting == "off") return "";
  if (setting != "auto" && !setting.empty()) return setting;
  if (const std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return xdg + "/longpipe/paths";
  }
  if (const std::string home = environment("HOME"); !home.empty()) return home + "/.cache/longpipe/paths";
  return "";
}

std::string path_cache_key(const std::string& peer_address, const std::string& peer_endpoint) {
  // Through a gateway a process sees only its hop to the gateway: nothing of the path to keep.
  if (!site_of_endpoint(peer_endpoint).empty()) return "";
  if (!peer_address.empty()) return peer_address;
  try {
    return parse_host_port(peer_endpoint, true).host;
  } catch (const std::exception&) {
    return peer_endpoint;
  }
}

}  // namespace lp
