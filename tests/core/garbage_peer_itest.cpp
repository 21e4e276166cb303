// lp-garbage-peer: a key holder that attacks a live LongPipe endpoint after a valid handshake
// (tests/core/engine_itest.sh garbage-authenticated). For each kind of garbage it opens one
// connection, completes the protocol-2 handshake with the engine's own Handshake and FrameCipher
// (raw_peer.h, the job key from LONGPIPE_KEY / LONGPIPE_KEY_FILE), sends the garbage, and checks
// that the endpoint closes the connection:
//   random     random bytes where the next sealed frame should be      (malformed_frames)
//   tampered   a sealed DATA frame with one payload bit flipped         (refused_frames)
//   replayed   a sealed KEEPALIVE, then the same bytes again            (refused_frames)
//   oversized  a valid DATA header whose length is one byte over the limit (malformed_frames)
//   truncated  half of a sealed DATA frame, then our close              (malformed_frames)
// Each connection claims its own endpoint ("HOST:9001", "HOST:9002", ...), so none is taken for
// another's session. Test tooling only: never part of liblongpipe.so.
#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "raw_peer.h"

namespace {

using namespace std::chrono_literals;
using lp::test::RawPeer;

// How long the endpoint may take to close a connection after the garbage (a loaded machine,
// a sanitizer build, a 40 ms round trip).
constexpr auto kCloseTimeout = 10s;
constexpr std::size_t kRandomBytes = 4096;
constexpr int kFirstClaimedPort = 9001;
static_assert(lp::kNonceSize == lp::kIdentityTokenSize, "a nonce serves as a random identity token");

struct Kind {
  const char* name;
  bool (*attack)(RawPeer& peer, const lp::Config& config);  // true if the endpoint must close the connection
};

std::vector<std::byte> random_bytes(std::size_t count) {
  std::random_device seed;
  std::mt19937 generator(seed());
  std::vector<std::byte> bytes(count);
  for (auto& b : bytes) b = static_cast<std::byte>(generator());
  if (bytes[0] == std::byte{0x4c}) bytes[0] = std::byte{0};  // never the first byte of the magic "LP"
  return bytes;
}

bool send_random(RawPeer& peer, const lp::Config&) {
  peer.send_bytes(random_bytes(kRandomBytes));
  return true;
}

bool send_tampered(RawPeer& peer, const lp::Config&) {
  auto frame = peer.sealed_data(0);
  frame[lp::kFrameHeaderSize + 3] ^= std::byte{0x40};  // one bit of the encrypted sequence number
  peer.send_bytes(frame);
  return true;
}

bool send_replayed(RawPeer& peer, const lp::Config&) {
  // A KEEPALIVE rather than DATA: the genuine copy delivers nothing to the application, so the
  // receiver's checked stream stays exactly the sender's.
  const auto frame = peer.sealed_keepalive();
  peer.send_bytes(frame);
  peer.send_bytes(frame);  // the same bytes again, as an eavesdropper would replay them
  return true;
}

bool send_oversized(RawPeer& peer, const lp::Config& config) {
  // The largest sealed DATA frame the endpoint accepts, plus one byte (session.cpp's limit).
  const std::size_t length = lp::kSequenceSize + config.max_message + lp::kMessageTrailerSize + lp::kTagSize + 1;
  const std::vector<std::byte> header{std::byte{0x4c},
                                      std::byte{0x50},
                                      std::byte{lp::kProtocolVersion},
                                      static_cast<std::byte>(lp::FrameType::kData),
                                      static_cast<std::byte>(length >> 24),
                                      static_cast<std::byte>(length >> 16),
                                      static_cast<std::byte>(length >> 8),
                                      static_cast<std::byte>(length)};
  peer.send_bytes(header);
  return true;
}

bool send_truncated(RawPeer& peer, const lp::Config&) {
  auto frame = peer.sealed_data(0);
  frame.resize(frame.size() / 2);
  peer.send_bytes(frame);
  peer.close();  // the stream ends inside the frame
  return false;
}

const Kind kKinds[] = {{"random", send_random},
                       {"tampered", send_tampered},
                       {"replayed", send_replayed},
                       {"oversized", send_oversized},
                       {"truncated", send_truncated}};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "lp-garbage-peer: " << what << "\nusage: lp-garbage-peer --peer HOST:PORT --claim-host HOST\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string peer_endpoint, claim_host;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) usage_error(option + " needs a value");
    if (option == "--peer") peer_endpoint = argv[++i];
    else if (option == "--claim-host") claim_host = argv[++i];
    else usage_error("unknown option " + option);
  }
  if (peer_endpoint.empty() || claim_host.empty()) usage_error("--peer and --claim-host are required");
  try {
    const lp::Config config = lp::Config::from_environment();
    int failures = 0;
    int port = kFirstClaimedPort;
    for (const Kind& kind : kKinds) {
      RawPeer peer(peer_endpoint, kCloseTimeout);
      const std::string claimed = claim_host + ":" + std::to_string(port++);
      const auto token = lp::Authenticator::make_nonce();  // 32 random bytes: an identity of our own
      if (peer.handshake(config.key, claimed, token) != RawPeer::Outcome::kEstablished) {
        std::cerr << "FAIL " << kind.name << ": the handshake claiming " << claimed << " did not complete" << std::endl;
        ++failures;
        continue;
      }
      const bool server_must_close = kind.attack(peer, config);
      if (server_must_close && !peer.closed_by_server()) {
        std::cerr << "FAIL " << kind.name << ": the endpoint did not close the connection within "
                  << std::chrono::duration_cast<std::chrono::seconds>(kCloseTimeout).count() << " s" << std::endl;
        ++failures;
        continue;
      }
      std::cout << "sent " << kind.name << " after the handshake (claiming " << claimed << "): "
                << (server_must_close ? "connection closed by the endpoint" : "closed by us") << std::endl;
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "lp-garbage-peer: " << e.what() << std::endl;
    return 1;
  }
}
