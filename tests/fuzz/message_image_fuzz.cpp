// Fuzz target: the PVM message image check (libshim/pvm/message_image.*), which stands between a
// peer's bytes and libpvm3's pvm_upkmesg() (which trusts every length it reads). A sound image must
// be safe for everything the front end then does with it: read its header, sum its fragments,
// normalise it for delivery and address it; and the fragment lengths must add up to what the image
// holds, so that the message libpvm3 rebuilds can never read past it.
#include <vector>

#include "fuzz_input.h"
#include "message_image.h"

using lp::pvm::MessageImage;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> image(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  if (MessageImage::check(image)) return 0;  // refused: the front end reports it and drops the message
  LP_FUZZ_CHECK(image.size() >= MessageImage::kHeaderBytes);
  const std::int64_t body = MessageImage::body_length(image);
  LP_FUZZ_CHECK(body >= 0);
  LP_FUZZ_CHECK(static_cast<std::uint64_t>(body) <= image.size() - MessageImage::kHeaderBytes);
  const lp::pvm::MessageImageHeader before = MessageImage::header(image);
  MessageImage::normalize_for_delivery(image, 0x12345678);
  MessageImage::set_addresses(image, 1, 2, 3, 4);
  // Still sound, same fragments; the header now says what the plain route would deliver.
  LP_FUZZ_CHECK(!MessageImage::check(image));
  LP_FUZZ_CHECK(MessageImage::body_length(image) == body);
  const lp::pvm::MessageImageHeader after = MessageImage::header(image);
  LP_FUZZ_CHECK(after.length == body);
  LP_FUZZ_CHECK(after.wait_id == 0 && after.checksum == 0);
  LP_FUZZ_CHECK(after.context == 1 && after.tag == 2 && after.source == 3 && after.destination == 4);
  LP_FUZZ_CHECK(after.encoding == (before.encoding == lp::pvm::kInPlaceEncoding ? 0x12345678 : before.encoding));
  return 0;
}
