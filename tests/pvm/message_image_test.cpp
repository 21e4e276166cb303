// MessageImage: the checks that stand between a received byte string and pvm_upkmesg().
#include "message_image.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using lp::pvm::MessageImage;

namespace {

// An image as pvm_pkmesg writes it into a PvmDataRaw buffer: header, then (length, bytes) per fragment.
std::vector<std::byte> make_image(std::int32_t encoding, const std::vector<std::vector<std::byte>>& fragments,
                                  std::int32_t length_field = -1) {
  std::vector<std::byte> image;
  auto put = [&image](std::int32_t value) {
    const auto* bytes = reinterpret_cast<const std::byte*>(&value);
    image.insert(image.end(), bytes, bytes + sizeof value);
  };
  std::int32_t total = 0;
  for (const auto& fragment : fragments) total += static_cast<std::int32_t>(fragment.size());
  const std::int32_t header[8] = {length_field < 0 ? total : length_field, 7, 9, 3, encoding, 55, 0x40001, 0x40002};
  for (const std::int32_t field : header) put(field);
  for (const auto& fragment : fragments) {
    put(static_cast<std::int32_t>(fragment.size()));
    image.insert(image.end(), fragment.begin(), fragment.end());
  }
  return image;
}

std::vector<std::byte> bytes(std::size_t count, unsigned char value) {
  return std::vector<std::byte>(count, std::byte{value});
}

}  // namespace

TEST_CASE("a well-formed image passes and its header reads back") {
  const auto image = make_image(lp::pvm::kXdrEncoding, {bytes(4064, 1), bytes(100, 2), {}});
  REQUIRE_FALSE(MessageImage::check(image));
  const auto header = MessageImage::header(image);
  CHECK(header.length == 4164);
  CHECK(header.encoding == lp::pvm::kXdrEncoding);
  CHECK(header.tag == 9);
  CHECK(MessageImage::body_length(image) == 4164);
}

TEST_CASE("an empty message (no fragment) is a valid image") {
  const auto image = make_image(lp::pvm::kXdrEncoding, {});
  CHECK_FALSE(MessageImage::check(image));
  CHECK(MessageImage::body_length(image) == 0);
}

TEST_CASE("malformed images are refused with a reason") {
  auto image = make_image(lp::pvm::kXdrEncoding, {bytes(10, 1)});
  SECTION("shorter than the header") {
    image.resize(MessageImage::kHeaderBytes - 1);
    CHECK(MessageImage::check(image).value().find("header") != std::string::npos);
  }
  SECTION("a fragment running past the end") {
    image.pop_back();
    CHECK(MessageImage::check(image).value().find("past the end") != std::string::npos);
  }
  SECTION("a truncated fragment length") {
    image.resize(MessageImage::kHeaderBytes + 2);
    CHECK(MessageImage::check(image).value().find("truncated") != std::string::npos);
  }
  SECTION("a negative fragment length") {
    const std::int32_t negative = -5;
    std::memcpy(image.data() + MessageImage::kHeaderBytes, &negative, sizeof negative);
    CHECK(MessageImage::check(image).value().find("negative") != std::string::npos);
  }
}

TEST_CASE("normalising an in-place image makes it a raw one with its real length") {
  const std::int32_t native = 0x408c41;
  auto image = make_image(lp::pvm::kInPlaceEncoding, {bytes(3, 1), bytes(8, 2)}, 0);  // in place: length 0
  REQUIRE_FALSE(MessageImage::check(image));
  MessageImage::normalize_for_delivery(image, native);
  const auto header = MessageImage::header(image);
  CHECK(header.length == 11);
  CHECK(header.encoding == native);
  CHECK(header.checksum == 0);
  CHECK(header.wait_id == 0);
}

TEST_CASE("normalising keeps XDR and raw encodings and every fragment boundary") {
  for (const std::int32_t encoding : {lp::pvm::kXdrEncoding, std::int32_t{0x408c41}}) {
    auto image = make_image(encoding, {bytes(4060, 1), bytes(8, 2)});
    const auto before = image.size();
    MessageImage::normalize_for_delivery(image, 0x408c41);
    CHECK(MessageImage::header(image).encoding == encoding);
    CHECK(image.size() == before);
    CHECK_FALSE(MessageImage::check(image));
  }
}

TEST_CASE("addresses are written into the header") {
  auto image = make_image(lp::pvm::kXdrEncoding, {bytes(4, 0)});
  MessageImage::set_addresses(image, 0x40005, 77, 0x40003, 0x80004);
  const auto header = MessageImage::header(image);
  CHECK(header.context == 0x40005);
  CHECK(header.tag == 77);
  CHECK(header.source == 0x40003);
  CHECK(header.destination == 0x80004);
}
