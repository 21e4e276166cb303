// FrontEnd: LongPipe's PVM front end, one per process (the interposed pvm_* functions call it).
//
// Send: a message to a task that runs LongPipe is read out of the application's send buffer as a
// MessageImage (pvm_pkmesg into a scratch buffer) and handed to the engine; everything else (the
// pvmd, tasks without LongPipe, negative tags, the task itself) goes to libpvm3 unchanged.
// Receive: in the application's own thread, messages taken from the engine are rebuilt with
// pvm_upkmesg() and handed to libpvm3's mesg_input(), exactly where libpvm3 puts messages read
// from the pvmd, so pvm_recv/nrecv/trecv/probe match them by the usual rules and message handlers
// fire. Blocking receives wait on the engine's event fd and libpvm3's sockets together.
// Hand-over is lazy and bounded (pump()): what the application has not asked for stays in the
// engine's bounded queue, so a slow reader slows its senders' sessions, not libpvm3's memory.
//
// Routes (PeerRoutes, ArrivalGate): a destination found in the TaskDirectory at the first send is
// reached through LongPipe from the first message (for a task spawned here a moment ago, the first
// send waits a little for its entry to appear: wait_for_started_task()). Otherwise its messages go
// through the pvmd and a hello (context kLongPipeContext) tells the destination, if it runs
// LongPipe, to answer over the engine with its endpoint; the sender then sends a route marker
// through the pvmd and switches, and the receiver holds the switched messages until the marker
// has come in.
//
// Not thread-safe by itself (neither is libpvm3): the interposition layer serialises calls.
#pragma once

#include <sys/time.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "arrival_gate.h"
#include "engine.h"
#include "lib_pvm.h"
#include "peer_routes.h"
#include "receive_selector.h"
#include "task_directory.h"

namespace lp::pvm {

// Context of LongPipe's own messages through the pvmd (hello, route marker). Contexts from
// pvm_newcontext() are handed out upwards from the host part of a pvmd's tid; like libpvm3's own
// system contexts (SYSCTX_TM 0x7fffe and its neighbours) this one sits at the top of the first
// host's range, where applications do not reach. Applications never receive in it.
inline constexpr int kLongPipeContext = 0x7ff4c;
inline constexpr int kHelloTag = 1;
inline constexpr int kRouteMarkerTag = 2;

// At most this many messages wait in libpvm3's receive queue because of a pump() without a pending
// receive (at a send, say): enough that message handlers (pvm_addmhf) still fire while a task
// only sends, and that pvm_recv(-1, -1) finds work without a round through the engine, yet small,
// so a task that falls behind leaves its backlog in the engine's bounded receive queue.
inline constexpr std::size_t kLibPvmQueueBound = 16;
// At most this many messages are taken from the engine into the ArrivalGate ahead of hand-over
// (held ones waiting for a route marker included), for the same reason.
inline constexpr std::size_t kGateBound = 16;

class FrontEnd {
 public:
  // Enrols the task (pvm_mytid), starts the engine from LONGPIPE_* (throws lp::ConfigError or a
  // std::exception saying why) and publishes the task in the directory. `tid` is the enrolled tid.
  FrontEnd(const LibPvm& lib, int tid);
  FrontEnd(const LibPvm& lib, int tid, Config config);
  ~FrontEnd();
  FrontEnd(const FrontEnd&) = delete;
  FrontEnd& operator=(const FrontEnd&) = delete;

  int tid() const { return tid_; }

  // pvm_spawn with LongPipe exported to the children; remembers them as starting (route_to()).
  int spawn(char* file, char** argv, int flags, char* where, int count, int* tids);
  int send(int tid, int tag);
  int mcast(int* tids, int count, int tag);
  // pvm_recv (timeout null) and pvm_trecv.
  int receive(int tid, int tag, const timeval* timeout);
  int nrecv(int tid, int tag);
  int probe(int tid, int tag);
  // Flushes the engine, withdraws the directory entry, stops the engine. The caller then calls
  // libpvm3's pvm_exit.
  void leave();

  // In the child after fork(): forget the engine without touching its sockets.
  void abandon_after_fork();

  // Called from libpvm3's message handlers (inside mesg_input), so they only record.
  void hello_arrived(int source, TaskDirectory::Entry entry);
  void marker_arrived(int source);

 private:
  TaskDirectory::Entry own_entry() const;
  bool same_job(const TaskDirectory::Entry& entry) const;
  // Whether `tid`/`tag` is an application message LongPipe may carry.
  bool carriable(int tid, int tag) const;
  const PeerRoutes::Route& route_to(int tid);
  // For a task this one spawned less than kSpawnedTaskStartWait ago: polls the directory until its
  // entry appears or that time is up, so that its start-up messages need not take the pvmd route.
  // route_to() forgets the task afterwards, so this happens at most once per task.
  std::optional<TaskDirectory::Entry> wait_for_started_task(int tid);
  // The application's send buffer as a checked, normalised MessageImage (message_image.h).
  std::vector<std::byte> send_buffer_image();
  void engine_send(int tid, int tag, int context, std::vector<std::byte> image);
  // Sends one of LongPipe's own messages through the pvmd.
  void send_system_message(int tid, int tag, bool with_own_entry);
  void switch_route(int tid, PeerRoutes::Learned learned);

  // Answers hellos, takes messages from the engine into the gate (applying route switches) and
  // hands ready ones to libpvm3, lazily: the gate holds at most kGateBound messages and libpvm3's
  // queue is filled up to kLibPvmQueueBound only, so a task that falls behind leaves the rest in
  // the engine, whose bounded queue then stops reading and lets TCP push back on the sender.
  // With `wanted` (a receive or probe) it goes past both bounds until a message matching it has
  // been handed over or nothing deliverable is left. Returns whether any message was handed over.
  bool pump(const ReceiveSelector* wanted = nullptr);
  // The pending receive's selector in the current context.
  ReceiveSelector selector(int tid, int tag) const;
  // Asks libpvm3 (pvm_nrecv or pvm_probe), handing over more messages while it finds nothing and
  // a match may still be on its way; returns libpvm3's answer.
  int look_for(const ReceiveSelector& wanted, const std::function<int()>& ask_libpvm);
  // Hands over the next ready message; returns whether it matched `wanted`.
  bool hand_over_next(const ReceiveSelector* wanted);
  // Takes the next message from the engine into the gate; false if the engine had none.
  bool take_from_engine();
  void deliver(const Message& message);
  void take_peer_failures();
  // Sleeps until the engine or one of libpvm3's sockets has input, `deadline`, or the next check for
  // failed peers.
  void wait_for_input(const std::chrono::steady_clock::time_point* deadline);
  void register_handlers();
  void adopt_early_system_messages();

  const LibPvm& lib_;
  const int tid_;
  const std::string key_fingerprint_;  // of this task's job key (task_directory.h)
  Engine engine_;
  TaskDirectory directory_;
  PeerRoutes routes_;
  ArrivalGate gate_;
  std::vector<std::pair<int, TaskDirectory::Entry>> hellos_;  // recorded by the handler
  // Tasks spawned here and not yet sent to: when their directory entry is waited for until.
  std::unordered_map<int, std::chrono::steady_clock::time_point> starting_tasks_;
  bool pumping_ = false;  // a message handler run by pump() re-entered the front end
  bool abandoned_ = false;
};

}  // namespace lp::pvm
