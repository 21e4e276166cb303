// What the MPI front end puts in an lp::Message. The engine's trailer carries the envelope:
// source = sender's rank in MPI_COMM_WORLD, destination = receiver's, tag = MPI tag, context = the
// communicator's LongPipe context id, flags = kind. The body is the packed data; a synchronous
// send (MPI_Ssend/Issend) appends an 8-byte id that the receiver returns in an acknowledgement
// once a receive has matched the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace lp::mpi {

inline constexpr std::uint32_t kFlagData = 1;         // a point-to-point message
inline constexpr std::uint32_t kFlagSynchronous = 2;  // data whose sender waits for kFlagMatched
inline constexpr std::uint32_t kFlagMatched = 4;      // acknowledgement: body = the send's id
inline constexpr std::size_t kSyncIdSize = sizeof(std::uint64_t);
// Spare capacity a body gets so that the engine adds its 20-byte trailer without copying
// (libshim/README.md, "For front ends").
inline constexpr std::size_t kEngineTrailerSpare = 20;

inline void append_sync_id(std::vector<std::byte>& body, std::uint64_t id) {
  const std::size_t at = body.size();
  body.resize(at + kSyncIdSize);
  std::memcpy(body.data() + at, &id, kSyncIdSize);  // both ends are this machine's byte order (same job)
}

// Removes and returns the id a synchronous message carries; false if the body is too short.
inline bool strip_sync_id(std::vector<std::byte>& body, std::uint64_t* id) {
  if (body.size() < kSyncIdSize) return false;
  std::memcpy(id, body.data() + body.size() - kSyncIdSize, kSyncIdSize);
  body.resize(body.size() - kSyncIdSize);
  return true;
}

}  // namespace lp::mpi
