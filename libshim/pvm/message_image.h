// MessageImage: a PVM message as LongPipe carries it between tasks.
//
// The image is libpvm3's own "message in a message" format, what pvm_pkmesg() writes into a
// PvmDataRaw buffer and pvm_upkmesg() reads back: eight native ints (length, context, tag, wait id,
// encoding, checksum, source, destination), then every fragment as a native int length followed by
// its bytes. Carrying fragments, not just the concatenated bytes, matters: an XDR (PvmDataDefault)
// message never splits an item across fragments, so a receiver whose fragments were cut elsewhere
// would decode garbage.
//
// This file is pure logic (no libpvm3 calls) so that it can be unit-tested: the front end checks an
// image before handing it to pvm_upkmesg(), which trusts every length it reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace lp::pvm {

// Encodings as libpvm3 writes them into a message (struct pvmminfo.enc); a raw message carries the
// sender's data signature instead (pvmmydsig).
inline constexpr std::int32_t kXdrEncoding = 0x10000000;
inline constexpr std::int32_t kInPlaceEncoding = 0x20000000;

struct MessageImageHeader {
  std::int32_t length = 0;
  std::int32_t context = 0;
  std::int32_t tag = 0;
  std::int32_t wait_id = 0;
  std::int32_t encoding = 0;
  std::int32_t checksum = 0;
  std::int32_t source = 0;
  std::int32_t destination = 0;
};

class MessageImage {
 public:
  static constexpr std::size_t kHeaderInts = 8;
  static constexpr std::size_t kHeaderBytes = kHeaderInts * sizeof(std::int32_t);

  // Reads the header and checks the fragment list: every fragment length non-negative and within
  // the image, nothing after the last fragment. Returns a reason on failure, nullopt if sound.
  // The header's length field is not trusted (PvmDataInPlace images carry 0 there).
  static std::optional<std::string> check(std::span<const std::byte> image);

  // The header of a checked image.
  static MessageImageHeader header(std::span<const std::byte> image);

  // Makes a sender's image look like what the plain route delivers: the length field set to the
  // sum of the fragments, an in-place message turned into a raw one in the sender's data signature
  // (libpvm3 sends PvmDataInPlace data raw), checksum and wait id cleared. The image must be checked.
  static void normalize_for_delivery(std::span<std::byte> image, std::int32_t native_signature);

  // Writes the header fields the receiving task sees (context, tag, source, destination).
  static void set_addresses(std::span<std::byte> image, std::int32_t context, std::int32_t tag,
                            std::int32_t source, std::int32_t destination);

  // Sum of the fragment lengths of a checked image.
  static std::int64_t body_length(std::span<const std::byte> image);
};

}  // namespace lp::pvm
