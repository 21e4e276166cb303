// Wire framing of LongPipe sessions (kProtocolVersion). All integers are big-endian.
//
//   frame   = magic u16 "LP" | version u8 | type u8 | payload length u32 | payload [| tag [16]]
//   HELLO     client nonce [32] | stream index u8 | protection u8 | endpoint length u16 | endpoint
//             (the dialler's own "host:port")
//   CHALLENGE server nonce [32] | protection u8 | carrier offer u8 (carrier_choice.h; the acceptor's
//             sealed IDENTIFY repeats it: a dialler decides the carrier at CHALLENGE and sends its
//             first DATA datagrams with its IDENTIFY, and finds an altered byte at IDENTIFY)
//   AUTH      HMAC-SHA256 [32]  (client's proof, then server's proof: see authenticator.h)
//   --- every frame below is sealed (frame_cipher.h): the tag follows the payload ---
//   IDENTIFY  identity token [32] (the sender's proof that it is the process the session began
//             with: see Authenticator::identity_token) | carrier offer u8 (carrier_choice.h)
//   DATA      sequence u64 | message (body | source u32 | destination u32 | tag i32 | context i32 |
//             flags u32: the header travels as a trailer so the receiver strips it without a copy;
//             see message.h)
//   ACK       cumulative u64 (next expected sequence) | receive window u32 | arrivals (newest u64 |
//             first u32 | count u16: AckArrivals) | range count u16 | ranges (begin u64, end u64)
//             received beyond the cumulative point
//   KEEPALIVE (empty)
//   CLOSE     reason u8 | text
//
// Every field read off the wire is checked before it is used: magic, version, known type, the
// payload length against the type's bounds (and LONGPIPE_MAX_MESSAGE for DATA), inner lengths
// against the payload. A violation throws MalformedFrame; the caller closes that connection only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "message.h"  // kMessageTrailerSize

namespace lp {

constexpr std::uint16_t kFrameMagic = 0x4C50;  // "LP"
// A peer of another version is refused at its first frame with "protocol version N (this side
// speaks 6)": every process of a job runs one LongPipe, so no older version needs to be spoken.
constexpr std::uint8_t kProtocolVersion = 6;
constexpr std::size_t kFrameHeaderSize = 8;
constexpr std::size_t kSequenceSize = 8;
constexpr std::size_t kNonceSize = 32;
constexpr std::size_t kMacSize = 32;           // HMAC-SHA256
constexpr std::size_t kIdentityTokenSize = 32; // HMAC-SHA256
constexpr std::size_t kIdentifyPayloadSize = kIdentityTokenSize + 1;  // token | carrier offer
constexpr std::size_t kMaxEndpointSize = 255;  // "host:port"
constexpr std::size_t kMaxCloseText = 200;
constexpr std::size_t kMaxAckRanges = 256;
// Before a connection has authenticated, no frame may be longer than this: an unauthenticated
// peer cannot make us allocate more.
constexpr std::size_t kMaxHandshakePayload = kNonceSize + 1 + 1 + 2 + kMaxEndpointSize;
constexpr std::size_t kMaxStreams = 16;        // parallel connections per session
// Stream slots from this index on are spill streams (stream_scheduler.h): both ends know a slot's
// role from its index alone, whatever their LONGPIPE_STREAMS. LONGPIPE_STREAMS stays below it.
constexpr std::size_t kFirstSpillStream = 8;
constexpr std::size_t kMaxSpillStreams = kMaxStreams - kFirstSpillStream;

enum class FrameType : std::uint8_t {
  kHello = 1,
  kChallenge = 2,
  kAuth = 3,
  kData = 4,
  kAck = 5,
  kKeepalive = 6,
  kClose = 7,
  kIdentify = 8,
  kRepair = 9,  // datagram carrier only: a repair symbol over a block of DATA units (tail_fec.h)
};

// What a side asks of the frames after the handshake (HELLO, CHALLENGE). The session is encrypted
// if either side asks for it, so a changed byte cannot downgrade it (and the traffic keys depend
// on the mode: frame_cipher.h).
enum class Protection : std::uint8_t {
  kEncrypt = 1,        // AES-256-GCM: confidentiality and integrity (the default)
  kIntegrityOnly = 2,  // AES-256-GMAC over header and payload: integrity only (LONGPIPE_ENCRYPTION=off)
};

inline Protection stronger(Protection a, Protection b) {
  return a == Protection::kEncrypt || b == Protection::kEncrypt ? Protection::kEncrypt : Protection::kIntegrityOnly;
}

const char* frame_type_name(FrameType type);

enum class CloseReason : std::uint8_t {
  kShutdown = 1,        // the engine is going away after flushing
  kAuthFailed = 2,      // the peer's proof of the key was wrong
  kDuplicate = 3,       // a simultaneous connection lost the tie-break
  kProtocolError = 4,   // malformed frame
  kIdentityRefused = 5, // the connection claimed a session it could not prove to be its own
};

class MalformedFrame : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AckRange {
  std::uint64_t begin = 0;  // first sequence received
  std::uint64_t end = 0;    // one past the last
};

// When the DATA an ACK answers arrived at its receiver, by the receiver's clock (the kernel's
// receive timestamps of the datagram carrier; a TCP ACK sends none): the sender's packet train
// (datagram_pacer.h) measures the bottleneck from how the path spread its datagrams, not from when
// a loaded receiver got round to reading and acknowledging them.
struct AckArrivals {
  std::uint64_t newest_ns = 0;  // arrival of the newest DATA datagram received (0: none reported)
  std::uint32_t first_ns = 0;   // ... how long before it the first one since the previous ACK arrived
  std::uint16_t count = 0;      // DATA datagrams received since the previous ACK
};

struct AckFrame {
  std::uint64_t cumulative = 0;
  std::uint32_t window_messages = 0;
  std::vector<AckRange> ranges;
  AckArrivals arrivals;
};

struct DataFrame {
  std::uint64_t sequence = 0;
  std::span<const std::byte> message;  // body + trailer (message.h)
};

// REPAIR: first_sequence u64 | data_count u8 | index u8 | symbol. Repair symbol `index` of the block
// of DATA units first_sequence .. first_sequence + data_count - 1 (erasure_code.h: data_count + index
// < 256); every symbol of a block has the same size (tail_fec.h: length u16 | unit | zero padding).
constexpr std::size_t kRepairFixedSize = 8 + 1 + 1;
// What fits one datagram: 1472 - 12 (datagram header) - 8 (frame header) - 10 - 16 (tag).
constexpr std::size_t kMaxRepairSymbol = 1426;
struct RepairFrame {
  std::uint64_t first_sequence = 0;
  std::size_t data_count = 0;
  std::size_t index = 0;
  std::span<const std::byte> symbol;
};

struct HelloFrame {
  std::vector<std::byte> nonce;
  std::size_t stream = 0;
  Protection protection = Protection::kEncrypt;
  std::string endpoint;
};

struct ChallengeFrame {
  std::vector<std::byte> nonce;
  Protection protection = Protection::kEncrypt;
  std::uint8_t carrier_offer = 0;  // CarrierOffer::encode(); checked by the handshake
};

struct CloseFrame {
  CloseReason reason = CloseReason::kShutdown;
  std::string text;
};

// A decoded frame; its spans point into the FrameReader's buffer until its next call. On a
// protected connection (FrameReader::set_tag_size) the payload is still sealed when next() returns
// it and is opened in place (frame_cipher.h).
struct FrameView {
  FrameType type;
  std::span<std::byte> payload;       // without the tag
  std::span<const std::byte> header;  // the 8 header bytes (authenticated data of a sealed frame)
  std::span<const std::byte> tag;     // empty on an unprotected connection
};

// Payload decoders: validate and return the fields; throw MalformedFrame.
HelloFrame decode_hello(std::span<const std::byte> payload);
ChallengeFrame decode_challenge(std::span<const std::byte> payload);
std::vector<std::byte> decode_fixed(std::span<const std::byte> payload, std::size_t size, const char* what);
// The message is a view into payload; its body is at most max_message bytes.
DataFrame decode_data(std::span<const std::byte> payload, std::size_t max_message);
AckFrame decode_ack(std::span<const std::byte> payload);
RepairFrame decode_repair(std::span<const std::byte> payload);
CloseFrame decode_close(std::span<const std::byte> payload);

// Encoders append one whole frame to out.
void encode_hello(std::vector<std::byte>& out, std::span<const std::byte> nonce, std::size_t stream,
                  Protection protection, const std::string& endpoint);
void encode_challenge(std::vector<std::byte>& out, std::span<const std::byte> nonce, Protection protection,
                      std::uint8_t carrier_offer);
void encode_fixed(std::vector<std::byte>& out, FrameType type, std::span<const std::byte> bytes);
void encode_data(std::vector<std::byte>& out, std::uint64_t sequence, std::span<const std::byte> message);
void encode_repair(std::vector<std::byte>& out, const RepairFrame& repair);
void encode_ack(std::vector<std::byte>& out, const AckFrame& ack);
void encode_keepalive(std::vector<std::byte>& out);
void encode_close(std::vector<std::byte>& out, CloseReason reason, const std::string& text);

// Splits a byte stream into frames. Bytes are read straight into its buffer (write_area/commit).
class FrameReader {
 public:
  explicit FrameReader(std::size_t max_payload) : max_payload_(max_payload) {}

  // Raised once the connection has authenticated (DATA may then be up to LONGPIPE_MAX_MESSAGE).
  void set_max_payload(std::size_t max_payload) { max_payload_ = max_payload; }
  // From now on every frame ends with a tag of this many bytes (counted in the header's length,
  // not in the payload limits).
  void set_tag_size(std::size_t tag_size) { tag_size_ = tag_size; }

  // A writable area of at least `minimum` bytes at the end of the buffered data.
  std::span<std::byte> write_area(std::size_t minimum);
  void commit(std::size_t count) { end_ += count; }

  // The next complete frame, or nullopt when more bytes are needed. Throws MalformedFrame.
  std::optional<FrameView> next();

  // Bytes of an incomplete frame are waiting (a truncated frame if the stream ends now).
  bool has_partial_frame() const { return end_ > begin_; }

 private:
  std::size_t max_payload_;
  std::size_t tag_size_ = 0;
  std::vector<std::byte> buffer_;
  std::size_t begin_ = 0;  // first unconsumed byte
  std::size_t end_ = 0;    // one past the last received byte
};

}  // namespace lp
