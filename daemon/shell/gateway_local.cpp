// Gateway: the local side. Clients of the Unix socket (their request line, then their stream), the
// TCP connections dialled for streams from peers, and what the relay asks of them.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "shell/gateway.h"
#include "shell/request.h"
#include "shell/sockets.h"
#include "system_call.h"

namespace lpd {
namespace {

// Sends what it can without blocking; -1 on an error other than "try later".
ssize_t send_some(int fd, const void* data, std::size_t size) {
  const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
  return n;
}

}  // namespace

std::uint64_t Gateway::add_conn(lp::FileDescriptor fd, State state) {
  const std::uint64_t token = next_token_++;
  Conn& conn = conns_[token];
  conn.fd = std::move(fd);
  conn.state = state;
  return token;
}

void Gateway::accept_clients() {
  for (int i = 0; i < 64; ++i) {
    lp::FileDescriptor fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;
    const long uid = peer_uid(fd.get());
    const bool allowed = config_.allow_uids.empty()
                             ? (uid == 0 || uid == static_cast<long>(::geteuid()))
                             : std::find(config_.allow_uids.begin(), config_.allow_uids.end(), static_cast<uid_t>(uid)) !=
                                   config_.allow_uids.end();
    if (pending_clients_ >= kMaxPendingClients) {
      const std::string refusal = "ERR too many connections\n";
      send_some(fd.get(), refusal.data(), refusal.size());
      ++refused_clients_;
      continue;
    }
    const std::uint64_t token = add_conn(std::move(fd), State::kRequest);
    conns_[token].deadline = Clock::now() + kRequestTimeout;
    ++pending_clients_;
    if (!allowed) {
      ++refused_clients_;
      log("refused a client of uid " + std::to_string(uid) + " (allow-uid)");
      answer(conns_[token], "ERR uid " + std::to_string(uid) + " not allowed\n");
    }
    update_interest(token);
  }
}

void Gateway::on_conn_event(std::uint64_t token, std::uint32_t events) {
  const auto it = conns_.find(token);
  if (it == conns_.end()) return;
  Conn& conn = it->second;
  switch (conn.state) {
    case State::kRequest:
      read_request(token);
      break;
    case State::kReply: {
      const ssize_t n = send_some(conn.fd.get(), conn.buffer.data(), conn.buffer.size());
      if (n > 0) conn.buffer.erase(0, static_cast<std::size_t>(n));
      if (n < 0) {
        close_conn(token);
      } else if (conn.buffer.empty()) {
        ::shutdown(conn.fd.get(), SHUT_WR);
        conn.state = State::kDrain;
        update_interest(token);
      }
      break;
    }
    case State::kDrain: {
      char discard[4096];
      const ssize_t n = ::recv(conn.fd.get(), discard, sizeof discard, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) close_conn(token);
      break;
    }
    case State::kResolving:
      break;  // no socket: no events
    case State::kDialling:
      if (const int error = socket_error(conn.fd.get()); error != 0) {
        relay_->on_local_reset(conn.handle, "connect: " + std::string(std::strerror(error)));
      } else {
        conn.state = State::kStream;
        conn.deadline = Clock::time_point::max();
        relay_->on_dialled(conn.handle);
        update_interest(token);
      }
      break;
    case State::kStream:
      if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && (conn.events & EPOLLIN)) on_stream_readable(conn);
      if ((events & (EPOLLOUT | EPOLLERR)) && (conn.events & EPOLLOUT)) on_stream_writable(conn);
      update_interest(token);
      break;
  }
}

void Gateway::read_request(std::uint64_t token) {
  Conn& conn = conns_.at(token);
  char data[kMaxRequestLine];
  const ssize_t n = ::recv(conn.fd.get(), data, kMaxRequestLine - conn.buffer.size(), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    close_conn(token);  // gone before its request
    return;
  }
  conn.buffer.append(data, static_cast<std::size_t>(n));
  const auto newline = conn.buffer.find('\n');
  if (newline == std::string::npos) {
    if (conn.buffer.size() >= kMaxRequestLine) {
      answer(conn, "ERR request line longer than " + std::to_string(kMaxRequestLine) + " bytes\n");
      update_interest(token);
    }
    return;
  }
  const std::string line = conn.buffer.substr(0, newline);
  const std::string rest = conn.buffer.substr(newline + 1);
  const Request request = parse_request(line);
  switch (request.kind) {
    case Request::Kind::kSite:
      answer(conn, "OK " + config_.site + "\n");
      break;
    case Request::Kind::kStatus:
      answer(conn, status_json() + "\n");
      break;
    case Request::Kind::kInvalid:
      answer(conn, "ERR " + request.argument + "\n");
      break;
    case Request::Kind::kConnect: {
      const Relay::Connected connected = relay_->connect(request.argument);
      if (!connected.error.empty()) {
        log("CONNECT " + request.argument.substr(0, 100) + " refused: " + connected.error);
        answer(conn, "ERR " + connected.error + "\n");
        break;
      }
      --pending_clients_;
      conn.state = State::kStream;
      conn.deadline = Clock::time_point::max();
      conn.handle = connected.handle;
      conn.buffer = "OK\n";
      token_of_[connected.handle] = token;
      if (!rest.empty()) relay_->on_local_data(connected.handle, std::as_bytes(std::span(rest.data(), rest.size())));
      break;
    }
  }
  update_interest(token);
}

void Gateway::answer(Conn& conn, const std::string& line) {
  conn.state = State::kReply;
  conn.buffer = line;
  conn.deadline = Clock::now() + kRequestTimeout;
}

void Gateway::on_stream_readable(Conn& conn) {
  const std::size_t budget = std::min(relay_->read_budget(conn.handle), kReadChunk);
  if (budget == 0) return;
  static std::vector<std::byte> data(kReadChunk);
  const ssize_t n = ::recv(conn.fd.get(), data.data(), budget, MSG_DONTWAIT);
  if (n > 0) {
    relay_->on_local_data(conn.handle, std::span(data.data(), static_cast<std::size_t>(n)));
  } else if (n == 0) {
    relay_->on_local_eof(conn.handle);
  } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    relay_->on_local_reset(conn.handle, "read: " + std::string(std::strerror(errno)));
  }
}

void Gateway::on_stream_writable(Conn& conn) {
  if (!conn.buffer.empty()) {  // "OK\n" before the stream's bytes
    const ssize_t n = send_some(conn.fd.get(), conn.buffer.data(), conn.buffer.size());
    if (n < 0) {
      relay_->on_local_reset(conn.handle, "write: " + std::string(std::strerror(errno)));
      return;
    }
    conn.buffer.erase(0, static_cast<std::size_t>(n));
    if (!conn.buffer.empty()) return;
  }
  const auto pending = relay_->pending_output(conn.handle);
  if (!pending.empty()) {
    const ssize_t n = send_some(conn.fd.get(), pending.data(), pending.size());
    if (n < 0) {
      relay_->on_local_reset(conn.handle, "write: " + std::string(std::strerror(errno)));
      return;
    }
    if (n > 0) relay_->on_written(conn.handle, static_cast<std::size_t>(n));
  }
  if (conn.shutdown_wanted && conn.buffer.empty()) {
    conn.shutdown_wanted = false;
    ::shutdown(conn.fd.get(), SHUT_WR);
  }
}

void Gateway::carry_out(const LocalAction& action) {
  if (action.kind == LocalAction::Kind::kDial) {
    // A numeric address is dialled now; a name is looked up on the resolver's threads (the loop
    // never waits for the site's resolver), and dialled when its answer comes (on_resolved).
    const std::uint64_t token = add_conn(lp::FileDescriptor(), State::kResolving);
    conns_[token].handle = action.handle;
    conns_[token].deadline = Clock::now() + kDialTimeout;
    token_of_[action.handle] = token;
    if (const auto numeric = numeric_address(action.address)) {
      dial(token, *numeric, action.address.text());
    } else {
      resolver_.resolve(token, action.address);
    }
    return;
  }
  const auto token = token_of_.find(action.handle);
  if (token == token_of_.end()) return;
  Conn& conn = conns_.at(token->second);
  if (action.kind == LocalAction::Kind::kShutdownWrite) {
    if (conn.buffer.empty()) ::shutdown(conn.fd.get(), SHUT_WR);
    else conn.shutdown_wanted = true;
    return;
  }
  if (action.reset) {
    // What came before the reset, as far as the socket takes it now (after an "OK\n" not yet out).
    if (conn.state == State::kStream && !action.last_bytes.empty()) {
      conn.buffer.append(reinterpret_cast<const char*>(action.last_bytes.data()), action.last_bytes.size());
      send_some(conn.fd.get(), conn.buffer.data(), conn.buffer.size());
    }
    close_abortively(conn.fd);
  }
  close_conn(token->second);
}

void Gateway::dial(std::uint64_t token, const Resolved& address, const std::string& text) {
  Conn& conn = conns_.at(token);
  try {
    if (address.length == 0) throw std::runtime_error(address.error);
    conn.fd = dial_tcp(address, text);
    conn.state = State::kDialling;
    update_interest(token);
  } catch (const std::exception& e) {
    relay_->on_local_reset(conn.handle, e.what());
  }
}

void Gateway::on_resolved() {
  for (auto& [token, resolved] : resolver_.take_results()) {
    const auto it = conns_.find(token);
    if (it == conns_.end() || it->second.state != State::kResolving) continue;  // reset meanwhile
    dial(token, resolved, "the OPEN's address");
  }
}

void Gateway::update_interest(std::uint64_t token) {
  const auto it = conns_.find(token);
  if (it == conns_.end()) return;
  Conn& conn = it->second;
  std::uint32_t wanted = 0;
  switch (conn.state) {
    case State::kRequest:
    case State::kDrain: wanted = EPOLLIN; break;
    case State::kReply:
    case State::kDialling: wanted = EPOLLOUT; break;
    case State::kResolving: break;  // no socket yet
    case State::kStream:
      if (relay_->read_budget(conn.handle) > 0) wanted |= EPOLLIN;
      if (!conn.buffer.empty() || !relay_->pending_output(conn.handle).empty() || conn.shutdown_wanted) wanted |= EPOLLOUT;
      break;
  }
  if (wanted == conn.events) return;
  // Nothing wanted: off the epoll set, so that a hung-up socket does not wake the loop in vain.
  epoll_event event{};
  event.events = wanted;
  event.data.u64 = token;
  const int op = wanted == 0 ? EPOLL_CTL_DEL : conn.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  lp::SystemCall("epoll_ctl", ::epoll_ctl(epoll_.get(), op, conn.fd.get(), &event));
  conn.events = wanted;
}

void Gateway::close_conn(std::uint64_t token) {
  const auto it = conns_.find(token);
  if (it == conns_.end()) return;
  const State state = it->second.state;
  if (state == State::kRequest || state == State::kReply || state == State::kDrain) --pending_clients_;
  if (it->second.handle != 0) token_of_.erase(it->second.handle);
  conns_.erase(it);  // closing the descriptor takes it off the epoll set
}

void Gateway::expire(Clock::time_point now) {
  std::vector<std::uint64_t> due;
  for (const auto& [token, conn] : conns_) {
    if (conn.deadline <= now) due.push_back(token);
  }
  for (std::uint64_t token : due) {
    Conn& conn = conns_.at(token);
    if (conn.state == State::kRequest) {
      answer(conn, "ERR no request line within " + std::to_string(kRequestTimeout.count()) + " s\n");
      update_interest(token);
    } else if (conn.state == State::kDialling || conn.state == State::kResolving) {
      const char* what = conn.state == State::kResolving ? "resolve: no answer" : "connect: no answer";
      conn.deadline = Clock::time_point::max();
      relay_->on_local_reset(conn.handle, std::string(what) + " within " + std::to_string(kDialTimeout.count()) + " s");
    } else {
      close_conn(token);  // an answer nobody reads, or a client that does not close after it
    }
  }
}

std::string Gateway::status_json() const {
  std::string json = relay_->status_json();
  json.pop_back();  // its closing brace
  return json + ",\"clients\":" + std::to_string(conns_.size()) + ",\"refused_clients\":" +
         std::to_string(refused_clients_) + ",\"engine\":" + engine_->stats_json() + "}";
}

}  // namespace lpd
