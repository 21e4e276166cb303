// The read loop of a stream socket (a TCP connection, a Unix connection to the site gateway) into
// a session's frame reader: the same for every carrier whose links are byte streams.
#pragma once

#include <cstddef>
#include <string>

#include "carrier/carrier.h"

namespace lp {

// Reads `fd` into `reader` until `budget` more bytes arrived, the socket has nothing more (kOk),
// the peer ended its stream (kEndOfStream) or recv() failed (kError, `error` says why). Adds what
// it read to `bytes_read`. Never reads past the budget: a connection that has not authenticated
// buffers at most that.
IoStatus read_stream(int fd, FrameReader& reader, std::size_t budget, std::size_t& bytes_read, std::string& error);

// Reads and drops up to `budget` bytes of what arrived (an exiting engine's goodbye): kEndOfStream
// once the peer ended its stream, kError if it failed, else kOk.
IoStatus discard_stream(int fd, std::size_t budget);

}  // namespace lp
