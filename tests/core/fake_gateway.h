// FakeGateway: a site gateway's Unix socket for the engine's tests (the process side of
// longpiped's interface; docs/engine/gateway.md). It answers SITE with its site's name
// and CONNECT <site>/host:port with OK and a relay of the stream's bytes to host:port over TCP
// (IPv4 literals only), or ERR unknown site for a site it does not know. close_all() drops every
// relayed stream at once and restart() also takes the socket away for a while, as a gateway that
// restarts would. One thread accepts; two threads per relayed stream copy its bytes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lp::test {

class FakeGateway {
 public:
  // Listens on `path` as the gateway of `site`; `known` are the sites a CONNECT may name.
  FakeGateway(std::string path, std::string site, std::set<std::string> known)
      : path_(std::move(path)), site_(std::move(site)), known_(std::move(known)) {
    listen_fd_ = bind_listener();
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeGateway() {
    stopping_ = true;
    acceptor_.join();
    cut_streams();
    std::lock_guard lock(mutex_);
    for (std::thread& relay : relays_) relay.join();
  }
  FakeGateway(const FakeGateway&) = delete;
  FakeGateway& operator=(const FakeGateway&) = delete;

  // Closes every relayed stream (both its ends) now.
  void close_all() { cut_streams(); }
  // Closes every stream and the socket (its file removed), and listens again after `pause`.
  void restart(std::chrono::milliseconds pause) {
    pause_ms_ = static_cast<int>(pause.count());
    restart_requested_ = true;
    while (restart_requested_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::size_t connects() const { return connects_; }
  std::size_t refusals() const { return refusals_; }

 private:
  int bind_listener() {
    ::unlink(path_.c_str());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 64) != 0) {
      throw std::runtime_error("fake gateway: cannot listen on " + path_);
    }
    return fd;
  }

  void accept_loop() {
    while (!stopping_) {
      if (restart_requested_) {
        ::close(listen_fd_);
        ::unlink(path_.c_str());
        cut_streams();
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_.load()));
        listen_fd_ = bind_listener();
        restart_requested_ = false;
      }
      pollfd entry{listen_fd_, POLLIN, 0};
      if (::poll(&entry, 1, 20) <= 0) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      std::lock_guard lock(mutex_);
      relays_.emplace_back([this, client] { serve(client); });
    }
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }

  static bool write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }

  // One connection: the request line (read byte by byte: stream bytes may follow it), then the
  // answer, then for CONNECT the relay.
  void serve(int client) {
    std::string line;
    char c = 0;
    while (line.size() < 512 && ::recv(client, &c, 1, 0) == 1 && c != '\n') line += c;
    const std::string connect = "LONGPIPE-GATEWAY/1 CONNECT ";
    if (line == "LONGPIPE-GATEWAY/1 SITE") {
      const std::string answer = "OK " + site_ + "\n";
      write_all(client, answer.data(), answer.size());
    } else if (line.rfind(connect, 0) == 0) {
      relay(client, line.substr(connect.size()));
    } else {
      write_all(client, "ERR bad request\n", 16);
    }
    ::close(client);
  }

  void relay(int client, const std::string& endpoint) {
    const auto slash = endpoint.find('/');
    const auto colon = endpoint.rfind(':');
    if (slash == std::string::npos || colon == std::string::npos || known_.count(endpoint.substr(0, slash)) == 0) {
      ++refusals_;
      write_all(client, "ERR unknown site\n", 17);
      return;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(endpoint.substr(colon + 1))));
    ::inet_pton(AF_INET, endpoint.substr(slash + 1, colon - slash - 1).c_str(), &address.sin_addr);
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(server, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      write_all(client, "ERR connect failed\n", 19);
      ::close(server);
      return;
    }
    ++connects_;
    write_all(client, "OK\n", 3);
    if (!track(client, server)) {
      ::close(server);
      return;
    }
    // One thread per direction: a reader that stops reading holds up its own direction only.
    std::thread back([=] { pump(server, client); });
    pump(client, server);
    back.join();
    untrack(client, server);
    ::close(server);
  }

  // Copies from one end to the other until the end of the stream (forwarded as a FIN) or an error.
  static void pump(int from, int to) {
    char buffer[64 << 10];
    while (true) {
      const ssize_t n = ::recv(from, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !write_all(to, buffer, static_cast<std::size_t>(n))) break;
    }
    ::shutdown(to, SHUT_WR);
    ::shutdown(from, SHUT_RD);
  }

  // Streams close_all() cuts: both descriptors shut down, which ends both pumps.
  bool track(int client, int server) {
    std::lock_guard lock(streams_mutex_);
    if (stopping_) return false;
    streams_.insert(client);
    streams_.insert(server);
    return true;
  }
  void untrack(int client, int server) {
    std::lock_guard lock(streams_mutex_);
    streams_.erase(client);
    streams_.erase(server);
  }
  void cut_streams() {
    std::lock_guard lock(streams_mutex_);
    for (int fd : streams_) ::shutdown(fd, SHUT_RDWR);
  }

  const std::string path_;
  const std::string site_;
  const std::set<std::string> known_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> restart_requested_{false};
  std::atomic<int> pause_ms_{0};
  std::atomic<std::size_t> connects_{0};
  std::atomic<std::size_t> refusals_{0};
  std::mutex mutex_;          // relays_
  std::mutex streams_mutex_;  // streams_
  std::set<int> streams_;     // the descriptors of every relayed stream
  std::vector<std::thread> relays_;
  std::thread acceptor_;
};

}  // namespace lp::test
