// ByteQueue: a FIFO of bytes for one direction of a forwarded stream. Appends at the back, consumes
// from the front; the consumed prefix is dropped once it is most of the storage, so the memory held
// stays within about twice the bytes queued.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace lpd {

class ByteQueue {
 public:
  std::size_t size() const { return data_.size() - head_; }
  bool empty() const { return size() == 0; }
  std::span<const std::byte> front() const { return {data_.data() + head_, size()}; }

  void append(std::span<const std::byte> bytes) { data_.insert(data_.end(), bytes.begin(), bytes.end()); }

  void consume(std::size_t n) {
    head_ += std::min(n, size());
    if (head_ == data_.size()) {
      data_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAfter && head_ * 2 >= data_.size()) {
      data_.erase(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  // Moves the first n bytes (at most size()) into `out` (appended).
  void take(std::size_t n, std::vector<std::byte>& out) {
    n = std::min(n, size());
    out.insert(out.end(), data_.begin() + static_cast<std::ptrdiff_t>(head_),
               data_.begin() + static_cast<std::ptrdiff_t>(head_ + n));
    consume(n);
  }

  void clear() {
    data_.clear();
    data_.shrink_to_fit();
    head_ = 0;
  }

 private:
  static constexpr std::size_t kCompactAfter = 64 * 1024;
  std::vector<std::byte> data_;
  std::size_t head_ = 0;
};

}  // namespace lpd
