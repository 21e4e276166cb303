// The receive side of the PVM front end: pvm_recv, pvm_nrecv and pvm_probe look in libpvm3's queue
// first, then pump messages from the engine through the arrival gate into libpvm3 until a match has
// gone over; hello answers switch a peer's route; peer failures are reported while a task waits.
#include "front_end.h"

#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "message_image.h"
#include "route_flags.h"

namespace lp::pvm {
namespace {

using Clock = std::chrono::steady_clock;

// A blocking receive wakes at least this often to report peers the engine has given up on (the
// engine's event fd only signals messages), so a vanished peer is reported while the task waits.
constexpr std::chrono::milliseconds kPeerFailureCheckInterval{1000};

std::vector<std::byte> to_bytes(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::transform(text.begin(), text.end(), bytes.begin(), [](char c) { return static_cast<std::byte>(c); });
  return bytes;
}

std::string to_text(const std::vector<std::byte>& bytes) {
  std::string text(bytes.size(), '\0');
  std::transform(bytes.begin(), bytes.end(), text.begin(), [](std::byte b) { return static_cast<char>(b); });
  return text;
}

}  // namespace

ReceiveSelector FrontEnd::selector(int tid, int tag) const {
  return ReceiveSelector{tid, tag, lib_.getcontext()};
}

int FrontEnd::receive(int tid, int tag, const timeval* timeout) {
  const bool poll_once = timeout && timeout->tv_sec == 0 && timeout->tv_usec == 0;
  Clock::time_point deadline{};
  if (timeout) {
    deadline = Clock::now() + std::chrono::seconds(timeout->tv_sec) + std::chrono::microseconds(timeout->tv_usec);
  }
  pump();
  const ReceiveSelector wanted = selector(tid, tag);
  for (;;) {
    const int mid = look_for(wanted, [&] { return lib_.nrecv(tid, tag); });
    if (mid != 0) return mid;
    if (poll_once || (timeout && Clock::now() >= deadline)) return 0;
    wait_for_input(timeout ? &deadline : nullptr);
  }
}

int FrontEnd::nrecv(int tid, int tag) {
  pump();
  return look_for(selector(tid, tag), [&] { return lib_.nrecv(tid, tag); });
}

int FrontEnd::probe(int tid, int tag) {
  pump();
  return look_for(selector(tid, tag), [&] { return lib_.probe(tid, tag); });
}

int FrontEnd::look_for(const ReceiveSelector& wanted, const std::function<int()>& ask_libpvm) {
  for (;;) {
    // libpvm3 first: what it holds is older, per sender, than anything still in the gate or engine.
    const int mid = ask_libpvm();
    // Nothing there: hand over until a match has gone over. It may still not be found (a message
    // handler took it, or pvm_recvf's own matching differs): then look again while any went over.
    if (mid != 0 || !pump(&wanted)) return mid;
  }
}

bool FrontEnd::pump(const ReceiveSelector* wanted) {
  if (pumping_) return false;  // a message handler we ran is calling back in: keep it simple
  struct PumpingFlag {
    bool& flag;
    explicit PumpingFlag(bool& f) : flag(f) { flag = true; }
    ~PumpingFlag() { flag = false; }
  } pumping(pumping_);
  take_peer_failures();
  for (auto& [source, entry] : std::exchange(hellos_, {})) {
    if (!same_job(entry)) continue;
    switch_route(source, routes_.learned_endpoint(source, entry.endpoint));
    Message answer;
    answer.source = static_cast<std::uint32_t>(tid_);
    answer.destination = static_cast<std::uint32_t>(source);
    answer.flags = kFlagHelloAnswer;
    answer.body = to_bytes(engine_.local_endpoint());
    try {
      engine_.send(entry.endpoint, std::move(answer));
    } catch (const PeerFailed&) {
      routes_.give_up(source);  // reported by take_peer_failures()
    }
  }
  // `searching`: a receive waits for a match that has not gone over yet, so both bounds are off.
  bool searching = wanted != nullptr;
  bool delivered = false;
  for (;;) {
    while (gate_.has_ready() && (searching || lib_.queued_messages(kLibPvmQueueBound) < kLibPvmQueueBound)) {
      if (hand_over_next(wanted)) searching = false;
      delivered = true;
    }
    if (!searching && gate_.size() >= kGateBound) break;
    if (!take_from_engine()) break;
  }
  return delivered;
}

bool FrontEnd::hand_over_next(const ReceiveSelector* wanted) {
  const auto message = gate_.next_ready();
  const bool matched = wanted && wanted->matches(*message);
  deliver(*message);
  return matched;
}

bool FrontEnd::take_from_engine() {
  auto message = engine_.try_receive();
  if (!message) return false;
  if (message->flags & kFlagHelloAnswer) {
    const int source = static_cast<int>(message->source);
    switch_route(source, routes_.learned_endpoint(source, to_text(message->body)));
  } else {
    gate_.admit(std::move(*message));
  }
  return true;
}

void FrontEnd::deliver(const Message& message) {
  if (static_cast<int>(message.destination) != tid_) {  // meant for an earlier enrolment of this process
    std::fprintf(stderr, "liblongpipe [t%x]: dropped a message from t%x addressed to t%x\n", tid_, message.source,
                 message.destination);
    return;
  }
  if (auto problem = MessageImage::check(message.body)) {
    std::fprintf(stderr, "liblongpipe [t%x]: dropped a malformed message from t%x: %s\n", tid_, message.source,
                 problem->c_str());
    return;
  }
  int mid = 0;
  {
    CurrentBuffersGuard guard(lib_);
    const int scratch = lib_.mkbuf(PvmDataRaw);
    lib_.setsbuf(scratch);
    lib_.pkbyte(const_cast<char*>(reinterpret_cast<const char*>(message.body.data())),
                static_cast<int>(message.body.size()), 1);
    lib_.setrbuf(scratch);
    mid = lib_.upkmesg();
    lib_.freebuf(scratch);
  }
  if (mid <= 0) {
    std::fprintf(stderr, "liblongpipe [t%x]: libpvm3 refused a message from t%x (PVM error %d)\n", tid_,
                 message.source, mid);
    return;
  }
  pvmminfo info{};
  lib_.getminfo(mid, &info);
  info.ctx = message.context;
  info.tag = message.tag;
  info.src = static_cast<int>(message.source);
  info.dst = tid_;
  info.wid = 0;
  lib_.setminfo(mid, &info);
  lib_.mesg_input(lib_.midtobuf(mid));  // queued for pvm_recv & co., or run by a message handler
}

void FrontEnd::take_peer_failures() {
  for (const PeerFailure& failure : engine_.take_peer_failures()) {
    const std::size_t tasks = routes_.give_up_endpoint(failure.peer_endpoint);
    std::fprintf(stderr,
                 "liblongpipe [t%x]: peer %s failed (%s); %zu message(s) to it lost; %zu task(s) there now "
                 "reached through the pvmd\n",
                 tid_, failure.peer_endpoint.c_str(), failure.reason.c_str(), failure.messages_lost, tasks);
  }
}

void FrontEnd::wait_for_input(const Clock::time_point* deadline) {
  int* pvm_fds = nullptr;
  const int pvm_fd_count = std::max(0, lib_.getfds(&pvm_fds));
  std::vector<pollfd> fds;
  fds.push_back({engine_.receive_event_fd(), POLLIN, 0});
  for (int i = 0; i < pvm_fd_count; ++i) fds.push_back({pvm_fds[i], POLLIN, 0});
  auto wait = kPeerFailureCheckInterval;
  if (deadline) {
    wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()));
  }
  const int timeout_ms = static_cast<int>(std::max<std::int64_t>(0, wait.count()));
  ::poll(fds.data(), fds.size(), timeout_ms);  // EINTR: the caller's loop looks again
}

}  // namespace lp::pvm
