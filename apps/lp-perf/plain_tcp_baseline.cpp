#include "plain_tcp_baseline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "file_descriptor.h"
#include "system_call.h"
#include "loopback_pair.h"

namespace lp::perf {
namespace {

constexpr std::size_t kHeaderBytes = 24;  // length + the same fields LongPipe carries

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void read_exactly(int fd, void* buffer, std::size_t size) {
  auto* p = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t n = SystemCall("read", ::read(fd, p, size));
    if (n == 0) throw std::runtime_error("plain TCP baseline: peer closed early");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void write_all(int fd, iovec* iov, int count) {
  while (count > 0) {
    ssize_t n = SystemCall("writev", ::writev(fd, iov, count));
    while (count > 0 && static_cast<std::size_t>(n) >= iov->iov_len) {
      n -= static_cast<ssize_t>(iov->iov_len);
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + n;
      iov->iov_len -= static_cast<std::size_t>(n);
    }
  }
}

}  // namespace

CpuStopwatch::CpuStopwatch() : wall_start_(wall_seconds()), cpu_start_(process_cpu_seconds()) {}

LoopbackResult CpuStopwatch::elapsed() const {
  return {wall_seconds() - wall_start_, process_cpu_seconds() - cpu_start_};
}

LoopbackResult run_plain_tcp(std::size_t size, std::size_t count) {
  const LoopbackPair pair = connect_loopback_pair();
  const FileDescriptor& client = pair.client;
  const FileDescriptor& server = pair.server;

  std::thread reader([&] {
    std::vector<char> body(size);
    char header[kHeaderBytes];
    for (std::size_t i = 0; i < count; ++i) {
      read_exactly(server.get(), header, kHeaderBytes);
      read_exactly(server.get(), body.data(), size);
    }
    const char ack = 1;
    SystemCall("write", ::write(server.get(), &ack, 1));
  });

  const std::vector<char> body(size, 'x');
  char header[kHeaderBytes] = {};
  const CpuStopwatch stopwatch;
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<char> copy(body);  // the application hands over its own buffer, as with send()
    iovec iov[2] = {{header, kHeaderBytes}, {const_cast<char*>(copy.data()), size}};
    write_all(client.get(), iov, 2);
  }
  char ack = 0;
  read_exactly(client.get(), &ack, 1);
  const LoopbackResult result = stopwatch.elapsed();
  reader.join();
  return result;
}

}  // namespace lp::perf
