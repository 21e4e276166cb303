// FuzzInput: takes typed values off the front of a fuzzer's input (in the spirit of LLVM's
// FuzzedDataProvider, which Debian's clang 14 ships only with compiler-rt's headers), so that one
// byte string drives a sequence of operations. Reading past the end yields zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

namespace lp::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return offset_ >= size_; }
  std::size_t remaining() const { return size_ - offset_; }

  std::uint8_t u8() { return offset_ < size_ ? data_[offset_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() << 8 | u8()); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(u16()) << 16 | u16(); }
  std::uint64_t u64() { return static_cast<std::uint64_t>(u32()) << 32 | u32(); }

  // Up to `count` bytes (fewer at the end of the input).
  std::span<const std::byte> bytes(std::size_t count) {
    if (count > remaining()) count = remaining();
    std::span<const std::byte> out(reinterpret_cast<const std::byte*>(data_ + offset_), count);
    offset_ += count;
    return out;
  }
  std::span<const std::byte> rest() { return bytes(remaining()); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

// A broken invariant: print it and abort, which libFuzzer reports as a crash with the input saved.
[[noreturn]] inline void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", file, line, what);
  std::abort();
}

}  // namespace lp::fuzz

#define LP_FUZZ_CHECK(condition) \
  ((condition) ? void(0) : ::lp::fuzz::invariant_failed(#condition, __FILE__, __LINE__))
