#include "stats_writer.h"

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "system_call.h"

namespace lp::netem {

StatsWriter::StatsWriter(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) thread_ = std::thread([this] { run(); });
}

StatsWriter::~StatsWriter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StatsWriter::publish(std::string text) {
  if (path_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    pending_ = std::move(text);
  }
  wake_.notify_one();
}

void StatsWriter::write_now(const std::string& text) const {
  if (path_.empty()) return;
  const std::string temporary = path_ + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out.flush()) throw SystemError("write " + temporary, errno);
  }
  SystemCall("rename " + temporary, std::rename(temporary.c_str(), path_.c_str()));
}

void StatsWriter::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return pending_ || stopping_; });
    if (!pending_) return;  // stopping, nothing left to write
    const std::string text = std::move(*pending_);
    pending_.reset();
    lock.unlock();
    try {
      write_now(text);
    } catch (const std::exception&) {
      // Counters are best effort from here: the next second's text tries again.
    }
    lock.lock();
  }
}

}  // namespace lp::netem
