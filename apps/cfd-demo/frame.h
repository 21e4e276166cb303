// Frame: one snapshot of a flow field as it travels from producer to consumer, and its wire format.
//
// Wire format (all little-endian), a 40-byte header then the field:
//   u32 magic "LPCF"   u16 version (1)   u16 field kind (1 vorticity, 2 speed)
//   u32 frame number   u32 width         u32 height      u32 CRC-32 of the field bytes
//   u64 solver step    i64 send time, CLOCK_REALTIME nanoseconds (stamped just before each send)
//   width * height float32, row-major from the bottom row (y = 0) up; NaN marks "no fluid".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace lp::cfd {

enum class FieldKind : uint16_t { kVorticity = 1, kSpeed = 2 };

const char* field_kind_name(FieldKind kind);

// A frame that cannot be decoded; what() says why.
class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Frame {
  static constexpr uint32_t kMagic = 0x4643504c;  // "LPCF" read as little-endian bytes
  static constexpr uint16_t kVersion = 1;
  static constexpr size_t kHeaderBytes = 40;
  static constexpr size_t kSendTimeOffset = 32;
  // Largest field a decoder accepts: bounds the memory a malformed header can make us allocate.
  static constexpr uint32_t kMaxSide = 16384;
  static constexpr uint64_t kMaxValues = 16ull * 1024 * 1024;

  uint32_t frame_number = 0;
  uint64_t step = 0;
  uint32_t width = 0;
  uint32_t height = 0;
  FieldKind kind = FieldKind::kVorticity;
  int64_t send_time_ns = 0;
  std::vector<float> values;  // width * height

  float at(uint32_t x, uint32_t y) const { return values[static_cast<size_t>(y) * width + x]; }

  std::vector<uint8_t> encode() const;
  // Throws FrameError for a short, oversized, mislabelled or corrupted message.
  static Frame decode(std::span<const uint8_t> bytes);
  // Overwrites the send time of an encoded frame in place (the CRC covers only the field).
  static void stamp_send_time(std::vector<uint8_t>& bytes, int64_t send_time_ns);
};

// Now on CLOCK_REALTIME, in nanoseconds: the clock both sites share on one machine.
int64_t realtime_ns();

}  // namespace lp::cfd
