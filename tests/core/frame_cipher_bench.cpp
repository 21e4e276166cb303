// lp-seal-bench: the cost of protection alone. CPU time per byte to encode, seal and open DATA
// frames as the two ends of a connection do (AES-256-GCM, and integrity only), to compare with
// `openssl speed -evp aes-256-gcm -bytes N` (one pass: sealing plus opening is two).
//   lp-seal-bench [COUNT [SIZE...]]   (default 2000 frames of 64, 1024, 65536, 1048576 bytes)
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <vector>

#include "security/frame_cipher.h"
#include "message.h"
#include "wire/wire_frame.h"

namespace {

double cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Seals and opens `count` DATA frames of `size` bytes with one connection's ciphers.
double seal_and_open(lp::Protection protection, std::size_t size, std::size_t count) {
  const std::vector<std::byte> nonce(lp::kNonceSize, std::byte{7});
  const lp::TrafficKeys keys = lp::derive_traffic_keys("lp-seal-bench", nonce, nonce, protection);
  lp::FrameCipher sealer(keys.dialler_to_acceptor, protection, lp::FrameCipher::Use::kSeal);
  lp::FrameCipher opener(keys.dialler_to_acceptor, protection, lp::FrameCipher::Use::kOpen);
  const std::vector<std::byte> message(size + lp::kMessageTrailerSize, std::byte{0x5a});
  std::vector<std::byte> wire;
  wire.reserve(lp::kFrameHeaderSize + lp::kSequenceSize + message.size() + lp::kTagSize);
  const double start = cpu_seconds();
  for (std::size_t i = 0; i < count; ++i) {
    wire.clear();
    lp::encode_data(wire, i, message);
    sealer.seal_frame(wire, 0);
    const std::span<std::byte> frame(wire);
    const std::size_t payload = wire.size() - lp::kFrameHeaderSize - lp::kTagSize;
    if (!opener.open(frame.first(lp::kFrameHeaderSize), frame.subspan(lp::kFrameHeaderSize, payload),
                     frame.last(lp::kTagSize))) {
      throw std::runtime_error("a sealed frame did not open");
    }
  }
  return cpu_seconds() - start;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  std::vector<std::size_t> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {64, 1024, 65536, 1048576};
  std::printf("lp-seal-bench: %zu DATA frames per size encoded, sealed and opened; CPU time\n", count);
  std::printf("%10s %-30s %14s %16s\n", "size", "protection", "CPU ns/byte", "GB/s (seal+open)");
  for (std::size_t size : sizes) {
    for (lp::Protection protection : {lp::Protection::kEncrypt, lp::Protection::kIntegrityOnly}) {
      const double seconds = seal_and_open(protection, size, count);
      const double bytes = static_cast<double>(size) * static_cast<double>(count);
      std::printf("%10zu %-30s %14.3f %16.2f\n", size, lp::protection_name(protection), seconds / bytes * 1e9,
                  bytes / seconds / 1e9);
    }
  }
  return 0;
}
