#include "front_end.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <utility>

#include "message_image.h"
#include "route_flags.h"
#include "job_key.h"
#include "spawn_environment.h"

namespace lp::pvm {
namespace {

using Clock = std::chrono::steady_clock;

// pvm_exit waits this long for the peers to acknowledge what the task sent: PVM's pvmd route
// delivers messages after their sender exits, so leaving before they are acknowledged would lose
// them; a peer that died is declared failed by the engine's dead-peer timeout well before this.
constexpr std::chrono::milliseconds kLeaveFlushTimeout{60000};

// The first send to a task spawned here waits up to this long after the spawn for the task's
// directory entry, which it publishes at its first PVM call (typically within tens of ms locally,
// a round trip or two to the master pvmd across a long link). Found: LongPipe from the first
// message. Not found in time (a task without LongPipe, or a slow start): the pvmd route and the
// hello/route-switch path, as for any other task. Its cost is paid at most once per spawned task,
// and tasks spawned together share one deadline. On a 540 ms link, messages that take the pvmd
// route move one 4 KB fragment per round trip, so waiting is far cheaper than not.
constexpr std::chrono::milliseconds kSpawnedTaskStartWait{2000};
// How often the directory is asked again meanwhile (each look-up is a round trip to a pvmd).
constexpr std::chrono::milliseconds kDirectoryPollInterval{20};

// Task ids (PVM's tid layout): bit 31 marks a pvmd, bit 30 a multicast group, the low 18 bits are
// the task's index on its host (0 for the pvmd itself).
constexpr int kTidDaemonBit = static_cast<int>(0x80000000u);
constexpr int kTidGroupBit = 0x40000000;
constexpr int kTidLocalMask = 0x0003ffff;
// libpvm3's encoding of PvmDataTrace messages (pvm3.h's PvmDataTrace = 4): never ours to carry.
constexpr std::int32_t kTraceEncoding = 0x40000000;

FrontEnd* handler_target = nullptr;  // the FrontEnd whose message handlers are registered

int on_hello(int mid) {
  // Inside mesg_input: the hello is the current receive buffer; libpvm3 frees it afterwards.
  const LibPvm& lib = LibPvm::get();
  int length = 0, tag = 0, source = 0;
  lib.bufinfo(mid, &length, &tag, &source);
  if (auto entry = TaskDirectory::unpack(lib); entry && handler_target) {
    handler_target->hello_arrived(source, std::move(*entry));
  }
  return 0;
}

int on_route_marker(int mid) {
  const LibPvm& lib = LibPvm::get();
  int length = 0, tag = 0, source = 0;
  lib.bufinfo(mid, &length, &tag, &source);
  if (handler_target) handler_target->marker_arrived(source);
  return 0;
}

bool is_task_tid(int tid) {
  return (tid & kTidDaemonBit) == 0 && (tid & kTidGroupBit) == 0 && (tid & kTidLocalMask) != 0;
}

}  // namespace

FrontEnd::FrontEnd(const LibPvm& lib, int tid) : FrontEnd(lib, tid, job_config()) {}

FrontEnd::FrontEnd(const LibPvm& lib, int tid, Config config)
    : lib_(lib),
      tid_(tid),
      key_fingerprint_(key_fingerprint(config.key)),
      engine_(std::move(config)),
      directory_(lib) {
  directory_.publish(tid_, own_entry());
  handler_target = this;
  register_handlers();
  adopt_early_system_messages();
}

FrontEnd::~FrontEnd() {
  if (handler_target == this) handler_target = nullptr;
  if (abandoned_) {
    // The engine's thread does not exist in a forked child; its sockets are the parent's.
    engine_.abandon_after_fork();
  }
}

void FrontEnd::register_handlers() {
  lib_.addmhf(-1, kHelloTag, kLongPipeContext, on_hello);
  lib_.addmhf(-1, kRouteMarkerTag, kLongPipeContext, on_route_marker);
}

// Hellos and markers that libpvm3 queued while the task enrolled, before the handlers existed.
void FrontEnd::adopt_early_system_messages() {
  CurrentBuffersGuard guard(lib_);
  const int saved_context = lib_.setcontext(kLongPipeContext);
  for (int mid; (mid = lib_.nrecv(-1, -1)) > 0;) {
    int length = 0, tag = 0, source = 0;
    lib_.bufinfo(mid, &length, &tag, &source);
    if (tag == kHelloTag) {
      if (auto entry = TaskDirectory::unpack(lib_)) hello_arrived(source, std::move(*entry));
    } else if (tag == kRouteMarkerTag) {
      marker_arrived(source);
    }
    lib_.freebuf(mid);
  }
  lib_.setcontext(saved_context);
}

TaskDirectory::Entry FrontEnd::own_entry() const {
  return {engine_.local_endpoint(), *lib_.data_signature, key_fingerprint_};
}

// A task we can reach over LongPipe: the same data representation (raw data would not match
// otherwise) and the same job key (else our sessions would fail authentication).
bool FrontEnd::same_job(const TaskDirectory::Entry& entry) const {
  return entry.data_signature == *lib_.data_signature && entry.key_fingerprint == key_fingerprint_;
}

void FrontEnd::hello_arrived(int source, TaskDirectory::Entry entry) {
  hellos_.emplace_back(source, std::move(entry));
}

void FrontEnd::marker_arrived(int source) { gate_.marker_arrived(static_cast<std::uint32_t>(source)); }

bool FrontEnd::carriable(int tid, int tag) const {
  if (tag < 0 || tid == tid_ || !is_task_tid(tid)) return false;
  const int mid = lib_.getsbuf();
  if (mid <= 0) return false;
  pvmminfo info{};
  if (lib_.getminfo(mid, &info) < 0) return false;
  if (info.enc == kTraceEncoding) return false;
  return info.enc == kXdrEncoding || info.enc == kInPlaceEncoding || info.enc == *lib_.data_signature;
}

int FrontEnd::spawn(char* file, char** argv, int flags, char* where, int count, int* tids) {
  export_longpipe_environment();
  const int started = lib_.spawn(file, argv, flags, where, count, tids);
  const auto deadline = Clock::now() + kSpawnedTaskStartWait;
  for (int i = 0; i < started && tids != nullptr; ++i) {
    if (tids[i] > 0) starting_tasks_[tids[i]] = deadline;
  }
  return started;
}

std::optional<TaskDirectory::Entry> FrontEnd::wait_for_started_task(int tid) {
  const auto starting = starting_tasks_.find(tid);
  if (starting == starting_tasks_.end()) return std::nullopt;
  const auto deadline = starting->second;
  while (Clock::now() + kDirectoryPollInterval <= deadline) {
    std::this_thread::sleep_for(kDirectoryPollInterval);
    if (auto entry = directory_.lookup(tid)) return entry;
  }
  return std::nullopt;
}

const PeerRoutes::Route& FrontEnd::route_to(int tid) {
  if (routes_.route(tid).kind == PeerRoutes::Kind::kUnknown) {
    auto entry = directory_.lookup(tid);
    if (!entry) entry = wait_for_started_task(tid);
    starting_tasks_.erase(tid);  // waited for at most once, found or not
    if (entry && same_job(*entry)) {
      routes_.found_in_directory(tid, entry->endpoint);
    } else {
      routes_.not_in_directory(tid);
      // Not (yet) in the directory: tell the task how to reach us; a LongPipe task answers.
      if (!entry) send_system_message(tid, kHelloTag, true);
    }
  }
  return routes_.route(tid);
}

void FrontEnd::send_system_message(int tid, int tag, bool with_own_entry) {
  CurrentBuffersGuard guard(lib_);
  const int saved_context = lib_.setcontext(kLongPipeContext);
  const int mid = lib_.mkbuf(PvmDataDefault);
  lib_.setsbuf(mid);
  if (with_own_entry) TaskDirectory::pack(lib_, own_entry());
  lib_.send(tid, tag);
  lib_.freebuf(mid);
  lib_.setcontext(saved_context);
}

void FrontEnd::switch_route(int tid, PeerRoutes::Learned learned) {
  // Everything sent through the pvmd so far is ahead of the marker; the receiver holds what comes
  // over LongPipe after it until the marker has arrived.
  if (learned == PeerRoutes::Learned::kSendMarkerFirst) send_system_message(tid, kRouteMarkerTag, false);
}

std::vector<std::byte> FrontEnd::send_buffer_image() {
  const int message = lib_.getsbuf();
  std::vector<std::byte> image;
  {
    CurrentBuffersGuard guard(lib_);
    const int scratch = lib_.mkbuf(PvmDataRaw);
    lib_.setsbuf(scratch);
    int cc = lib_.pkmesg(message);
    int length = 0;
    if (cc >= 0) cc = lib_.bufinfo(scratch, &length, nullptr, nullptr);
    if (cc >= 0) {
      lib_.setrbuf(scratch);  // rewinds the scratch buffer for reading
      image.resize(static_cast<std::size_t>(length));
      cc = lib_.upkbyte(reinterpret_cast<char*>(image.data()), length, 1);
    }
    lib_.freebuf(scratch);
    if (cc < 0) throw std::runtime_error("cannot read the send buffer (PVM error " + std::to_string(cc) + ")");
  }
  if (auto problem = MessageImage::check(image)) {
    throw std::runtime_error("send buffer image is malformed: " + *problem);
  }
  MessageImage::normalize_for_delivery(image, *lib_.data_signature);
  return image;
}

void FrontEnd::engine_send(int tid, int tag, int context, std::vector<std::byte> image) {
  MessageImage::set_addresses(image, context, tag, tid_, tid);
  Message message;
  message.source = static_cast<std::uint32_t>(tid_);
  message.destination = static_cast<std::uint32_t>(tid);
  message.tag = tag;
  message.context = context;
  message.flags = routes_.flags_for(tid);
  message.body = std::move(image);
  engine_.send(routes_.route(tid).endpoint, std::move(message));
}

int FrontEnd::send(int tid, int tag) {
  pump();
  if (!carriable(tid, tag) || route_to(tid).kind != PeerRoutes::Kind::kLongPipe) return lib_.send(tid, tag);
  const int context = lib_.getcontext();
  auto image = send_buffer_image();
  // What pvm_send leaves in the application's send buffer: its context, tag and destination.
  pvmminfo info{};
  lib_.getminfo(lib_.getsbuf(), &info);
  info.ctx = context;
  info.tag = tag;
  info.dst = tid;
  lib_.setminfo(lib_.getsbuf(), &info);
  try {
    engine_send(tid, tag, context, std::move(image));
  } catch (const PeerFailed& failure) {
    std::fprintf(stderr, "liblongpipe [t%x]: LongPipe to t%x failed (%s); using the pvmd route\n", tid_, tid,
                 failure.what());
    routes_.give_up(tid);
    return lib_.send(tid, tag);
  }
  return 0;
}

int FrontEnd::mcast(int* tids, int count, int tag) {
  pump();
  if (count <= 0 || tids == nullptr || tag < 0 || lib_.getsbuf() <= 0 ||
      !std::all_of(tids, tids + count, is_task_tid)) {
    return lib_.mcast(tids, count, tag);  // libpvm3 reports the error
  }
  std::vector<int> through_pvmd;
  std::vector<int> through_longpipe;
  std::unordered_set<int> seen;
  for (int i = 0; i < count; ++i) {
    const int tid = tids[i];
    if (carriable(tid, tag) && route_to(tid).kind == PeerRoutes::Kind::kLongPipe) {
      if (seen.insert(tid).second) through_longpipe.push_back(tid);
    } else {
      through_pvmd.push_back(tid);
    }
  }
  const int context = lib_.getcontext();
  const auto image = through_longpipe.empty() ? std::vector<std::byte>{} : send_buffer_image();
  for (const int tid : through_longpipe) {
    try {
      engine_send(tid, tag, context, image);
    } catch (const PeerFailed&) {
      routes_.give_up(tid);
      through_pvmd.push_back(tid);
    }
  }
  if (through_pvmd.empty()) return 0;
  return lib_.mcast(through_pvmd.data(), static_cast<int>(through_pvmd.size()), tag);
}

void FrontEnd::leave() {
  pump();
  if (!engine_.flush(kLeaveFlushTimeout)) {
    std::fprintf(stderr, "liblongpipe [t%x]: pvm_exit: not every message was acknowledged within %lld ms\n", tid_,
                 static_cast<long long>(kLeaveFlushTimeout.count()));
  }
  take_peer_failures();
  directory_.withdraw(tid_);
  handler_target = nullptr;
}

void FrontEnd::abandon_after_fork() { abandoned_ = true; }

}  // namespace lp::pvm
