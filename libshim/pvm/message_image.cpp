#include "message_image.h"

#include <cstring>

namespace lp::pvm {
namespace {

// Header field positions, in ints (pmsg_pack's order).
enum HeaderField : std::size_t {
  kLength = 0, kContext, kTag, kWaitId, kEncoding, kChecksum, kSource, kDestination,
};

std::int32_t read_int(std::span<const std::byte> bytes, std::size_t offset) {
  std::int32_t value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

void write_int(std::span<std::byte> bytes, std::size_t offset, std::int32_t value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

void write_field(std::span<std::byte> image, HeaderField field, std::int32_t value) {
  write_int(image, field * sizeof(std::int32_t), value);
}

}  // namespace

std::optional<std::string> MessageImage::check(std::span<const std::byte> image) {
  if (image.size() < kHeaderBytes) {
    return "image of " + std::to_string(image.size()) + " bytes is shorter than its " +
           std::to_string(kHeaderBytes) + "-byte header";
  }
  std::size_t offset = kHeaderBytes;
  std::size_t fragments = 0;
  while (offset < image.size()) {
    if (image.size() - offset < sizeof(std::int32_t)) return "truncated fragment length";
    const std::int32_t length = read_int(image, offset);
    offset += sizeof(std::int32_t);
    if (length < 0) return "negative fragment length " + std::to_string(length);
    if (static_cast<std::size_t>(length) > image.size() - offset) {
      return "fragment " + std::to_string(fragments) + " of " + std::to_string(length) +
             " bytes runs past the end of the image";
    }
    offset += static_cast<std::size_t>(length);
    ++fragments;
  }
  return std::nullopt;
}

MessageImageHeader MessageImage::header(std::span<const std::byte> image) {
  MessageImageHeader h;
  h.length = read_int(image, kLength * 4);
  h.context = read_int(image, kContext * 4);
  h.tag = read_int(image, kTag * 4);
  h.wait_id = read_int(image, kWaitId * 4);
  h.encoding = read_int(image, kEncoding * 4);
  h.checksum = read_int(image, kChecksum * 4);
  h.source = read_int(image, kSource * 4);
  h.destination = read_int(image, kDestination * 4);
  return h;
}

std::int64_t MessageImage::body_length(std::span<const std::byte> image) {
  std::int64_t total = 0;
  for (std::size_t offset = kHeaderBytes; offset < image.size();) {
    const std::int32_t length = read_int(image, offset);
    total += length;
    offset += sizeof(std::int32_t) + static_cast<std::size_t>(length);
  }
  return total;
}

void MessageImage::normalize_for_delivery(std::span<std::byte> image, std::int32_t native_signature) {
  write_field(image, kLength, static_cast<std::int32_t>(body_length(image)));
  if (read_int(image, kEncoding * 4) == kInPlaceEncoding) write_field(image, kEncoding, native_signature);
  write_field(image, kWaitId, 0);
  write_field(image, kChecksum, 0);
}

void MessageImage::set_addresses(std::span<std::byte> image, std::int32_t context, std::int32_t tag,
                                 std::int32_t source, std::int32_t destination) {
  write_field(image, kContext, context);
  write_field(image, kTag, tag);
  write_field(image, kSource, source);
  write_field(image, kDestination, destination);
}

}  // namespace lp::pvm
