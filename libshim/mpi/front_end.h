// FrontEnd: LongPipe's MPI front end for one process, created in MPI_Init when the job spans more
// than one site. Decides per message whether it stays on Open MPI (same site) or travels over the
// engine (another site), and keeps MPI's matching, ordering and request rules across both paths.
//
// Two threads work here. The application's thread, inside MPI calls, does everything that needs
// MPI. The front end's progress thread (progress_thread.h) does the MPI-free part of progress
// whatever the application is doing: it takes messages from the engine (up to a bound of unexpected
// ones: the rest stay in the engine, whose window pushes back on the sender), matches them against
// the posted LongPipe receives in posting order, writes the segments of a large message straight
// into a flat receive buffer, acknowledges synchronous sends at their match, and hands pending
// sends to the engine as its window opens. mutex_ guards what both threads touch; it is never held
// while blocking, and the progress thread never calls MPI. Under MPI_THREAD_MULTIPLE the
// application's threads take turns here under the ApiLock (api_lock.h), taken before mutex_.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "communicator_info.h"
#include "engine.h"
#include "handle_table.h"
#include "message_matching.h"
#include "mpi_api.h"
#include "pending_sends.h"
#include "progress_thread.h"
#include "request_lifecycle.h"
#include "site_map.h"
#include "wait_loop.h"
#include "wire_format.h"

namespace lp::mpi {

// Unexpected LongPipe messages taken from the engine while no receive wanted them, beyond which
// further messages are left in the engine (memory then bounded by LONGPIPE_WINDOW_*), unless a
// LongPipe request is being waited for in the application's thread (its match may be behind them).
inline constexpr std::size_t kUnexpectedBound = 64;
// While only LongPipe requests are waited for, the wait sleeps this long on the progress thread's
// completion signal (and the engine's event fd) between calls that drive Open MPI's own progress
// (its other operations must not stall meanwhile).
inline constexpr int kIdlePollMs = 1;
// How long MPI_Finalize waits for LongPipe's messages to be acknowledged.
inline constexpr std::chrono::milliseconds kFinalizeFlushTimeout{60000};

enum class SendMode { kStandard, kBuffered, kReady, kSynchronous };

// A nonblocking collective in flight (collectives_nonblocking.cpp), held by a LongPipe request of
// kind kCollective: every poll of the request, and every progress step while it is under way,
// moves it on as far as it can go without waiting.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  // True once complete; then *error is its outcome and *failed_world the unreachable peer (or -1).
  virtual bool advance(int* error, int* failed_world) = 0;
  // Whether Open MPI (not only LongPipe's messages) can move it on now: the waits spin then
  // instead of sleeping on the engine.
  virtual bool waits_on_open_mpi() const = 0;
};

class FrontEnd {
 public:
  // After PMPI_Init: finds the sites; returns nullptr for a one-site job (LongPipe stays out of the
  // way). Otherwise starts the engine and exchanges endpoints. Collective over MPI_COMM_WORLD.
  // Throws on bad settings (the caller aborts the job with the message).
  static std::unique_ptr<FrontEnd> start();
  ~FrontEnd();

  // --- point to point ---
  int send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, SendMode mode);
  int isend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, SendMode mode,
            MPI_Request* request);
  int send_init(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, SendMode mode,
                MPI_Request* request);
  int recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
  int irecv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request);
  int recv_init(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request);
  int sendrecv(const void* send_buffer, int send_count, MPI_Datatype send_type, int dest, int send_tag,
               void* receive_buffer, int receive_count, MPI_Datatype receive_type, int source, int receive_tag,
               MPI_Comm comm, MPI_Status* status);
  int sendrecv_replace(void* buffer, int count, MPI_Datatype type, int dest, int send_tag, int source,
                       int receive_tag, MPI_Comm comm, MPI_Status* status);

  // --- probes and matched receives ---
  int probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
  int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
  int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
  int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);
  int mrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status);
  int imrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request);

  // --- completion ---
  int wait(MPI_Request* request, MPI_Status* status);
  int test(MPI_Request* request, int* flag, MPI_Status* status);
  int waitall(int count, MPI_Request* requests, MPI_Status* statuses);
  int testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses);
  int waitany(int count, MPI_Request* requests, int* index, MPI_Status* status);
  int testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status);
  int waitsome(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses);
  int testsome(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses);
  int start(MPI_Request* request);
  int startall(int count, MPI_Request* requests);
  int request_free(MPI_Request* request);
  int cancel(MPI_Request* request);
  int request_get_status(MPI_Request request, int* flag, MPI_Status* status);
  int request_c2f(MPI_Request request);
  MPI_Request request_f2c(int handle);
  MPI_Fint message_c2f(MPI_Message message);
  MPI_Message message_f2c(MPI_Fint handle);

  // --- communicators (front_end_communicators.cpp; context_id.h: how the id is derived) ---
  // A communicator Open MPI just made, its context id derived locally, no message sent. After a
  // call collective over `parent` (counted even when `comm` is MPI_COMM_NULL):
  void register_from_parent(MPI_Comm parent, MPI_Comm comm);
  // After MPI_Comm_create_group(parent, group, tag) (collective over the group only):
  void register_from_group(MPI_Comm parent, int tag, MPI_Comm comm);
  // After MPI_Intercomm_create (the sides' parents differ; the two groups decide):
  void register_intercommunicator(MPI_Comm comm);
  // MPI_Comm_idup: Open MPI's request inside one of ours, which registers *newcomm when it completes
  // (the handle is valid only then); the call is counted on `comm` now, in call order.
  int comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request);
  // MPI_Comm_free / MPI_Comm_disconnect, before Open MPI's: forgotten at once, or, while requests
  // of ours name it, once the last of them goes (front_end_communicators.cpp).
  void forget_communicator(MPI_Comm comm);

  // --- for the site-aware collectives (collectives.cpp) ---
  const CommunicatorInfo* communicator_info(MPI_Comm comm) { return lookup(comm); }
  int site_of_world(int world) const { return sites_.site_of(world); }
  // This rank's LONGPIPE_STATS file ("" if none).
  const std::string& statistics_path() const { return statistics_path_; }
  // Bytes to world rank `dest_world` on a LongPipe context of LongPipe's own (negative: no
  // communicator has it, so no user receive can ever match), and the blocking receive of one from
  // `source_world` (errors through `comm`'s handler). Either travels in segments
  // (wire_format.h, "the collectives' leader transfers").
  int send_bytes(int dest_world, int context, int tag, const std::vector<std::byte>& body, MPI_Comm comm);
  int receive_bytes(int source_world, int context, int tag, MPI_Comm comm, std::vector<std::byte>* body);
  // The same without waiting: adds the segments that are here to `transfer` (the caller keeps it
  // between calls). True once it is complete, or when it never can be (*error: MPI_ERR_OTHER for
  // `source_world` unreachable, MPI_ERR_INTERN for a malformed transfer; nothing reported yet);
  // false while segments are missing.
  bool try_take_bytes(int source_world, int context, int tag, TransferAssembler* transfer, int* error);
  // A LongPipe request for `collective` (nonblocking collectives on `comm`): advanced by every
  // progress step until complete, completed by every wait/test call like the others.
  int start_collective(std::unique_ptr<PendingCollective> collective, MPI_Comm comm, MPI_Request* request);
  // Nonblocking collectives under way: while there are any, the blocking sends, receives, probes and
  // completion calls that would have gone straight to Open MPI also make LongPipe's progress (a
  // peer's collective may wait for this rank's part of the exchange between sites).
  bool collectives_in_flight() const { return !collectives_in_flight_.empty(); }
  // Makes progress (LongPipe's and Open MPI's) until `done` is true.
  void progress_until(const std::function<bool()>& done);

  // Flushes the engine, waits for every rank (LongPipe messages to it are acknowledged), stops it.
  void finalize();
  void abandon_after_fork();

  static bool is_ours(const void* handle) { return (reinterpret_cast<std::uintptr_t>(handle) & 1u) != 0; }

  // Inline fast paths for the common case, decided without a call (interpose.cpp): a send to, or a
  // receive from, a same-site rank of MPI_COMM_WORLD stays on Open MPI (a receive only while no
  // receive of ours that Open MPI messages may match is pending there). False means "ask the full
  // routing", not "LongPipe".
  bool send_stays_on_open_mpi(MPI_Comm comm, int dest) const {
    return comm == MPI_COMM_WORLD && static_cast<unsigned>(dest) < world_.remote_world_of_peer.size() &&
           world_.remote_world_of_peer[static_cast<unsigned>(dest)] < 0 && collectives_in_flight_.empty();
  }
  bool receive_stays_on_open_mpi(MPI_Comm comm, int source) const {
    return send_stays_on_open_mpi(comm, source) && world_.native_receives.empty();
  }

 private:
  struct Request;
  struct MatchedMessage;

  FrontEnd(SiteMap sites, int world_rank, int world_size, MPI_Comm internal);

  CommunicatorInfo* lookup(MPI_Comm comm);
  // World rank of `peer` when a message to it goes over LongPipe, else -1 (Open MPI's path).
  int remote_world(MPI_Comm comm, int peer, const CommunicatorInfo** info);
  // Whether a receive from `source` on `comm` must go through LongPipe's matching: source at
  // another site, or any, or a same-site source while an earlier receive of ours could take its
  // messages (NativeReceiveOrder).
  bool emulated_receive(MPI_Comm comm, int source, const CommunicatorInfo** info);

  // A blocking engine send of a standard-mode message (LONGPIPE_WINDOW_FULL applies), a large one's
  // segments back to back; after what waits in pending_sends_ for `dest_world` (wait_for_send_queue).
  int send_remote(const void* buffer, int count, MPI_Datatype type, int dest_world, int tag, MPI_Comm comm,
                  const CommunicatorInfo& info);
  // Application thread: sends what waits in pending_sends_ for `dest_world` as the window takes it,
  // until nothing does (a blocking send after queued ones keeps MPI's order and each message's
  // segments together).
  void wait_for_send_queue(int dest_world);
  int start_request(Request& request, std::uintptr_t handle);
  int post_receive(Request& request, std::uintptr_t handle);
  int post_native_receive(Request& request);
  // Under mutex_, application thread: takes a receive off the posted ones (cancelled, failed or
  // claimed by an Open MPI message) and out of its communicator's NativeReceiveOrder.
  void unlist_receive(Request& request);
  // Application thread: takes the receive out of its communicator's NativeReceiveOrder, if counted
  // there (the progress thread's matches leave that to settle()).
  void release_native_order(Request& request);
  // A message's `size` data bytes into (buffer, count, type) and its status (front_end_delivery.cpp);
  // `data` nullptr: they are in the buffer already (segments written in place).
  int deliver(const std::byte* data, std::uint64_t size, const Envelope& envelope, const CommunicatorInfo* info,
              void* buffer, int count, MPI_Datatype type, MPI_Comm comm, MPI_Status* status);

  // --- progress (front_end_progress.cpp) ---
  // The application thread's progress: takes messages from the engine while fewer than
  // kUnexpectedBound wait unclaimed (if `unbounded`, also past that until one matches a request),
  // sends what waits for the window, lets pending LongPipe-side receives claim Open MPI messages
  // in posting order, completes what was matched, advances collectives, drives Open MPI.
  void progress(bool unbounded);
  // One round of the progress thread (MPI-free).
  ProgressThread::Watch background_step(ProgressThread& thread);
  // Under mutex_, either thread: messages from the engine; true if one matched a request of ours.
  bool take_messages_locked(bool unbounded);
  // Under mutex_: acknowledgements and pending sends to the engine while its windows take them;
  // `application_thread`: also messages whose building calls MPI.
  void pump_locked(bool application_thread);
  void acknowledge_locked(int source_world, std::uint64_t sync_id);
  // Under mutex_: a message left the unexpected ones (the progress thread may take more again).
  void took_unexpected_locked();
  // Application thread: completes the requests matching_ listed to settle (delivers matched
  // receives into the user's buffer: copy or PMPI_Unpack, status), frees those released with
  // MPI_Request_free.
  void settle();
  // Pending receives that Open MPI messages may match claim them (PMPI_Iprobe, then PMPI_Improbe +
  // PMPI_Imrecv of exactly the probed message): each message goes to the oldest pending receive on
  // its communicator that matches it. Returns how many were claimed. Takes mutex_.
  int claim_native_messages();
  bool take_native_message(Request& request, const NativeMessage& probed);
  // Under mutex_: whether a pending receive on `comm` takes Open MPI's message from peer `source`
  // with `tag` (ReceiveMatcher::oldest_native).
  bool native_message_claimed(MPI_Comm comm, int source, int tag) const;
  // PMPI_Iprobe / PMPI_Improbe that leave a pending receive's Open MPI messages to it.
  int iprobe_native(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
  int improbe_native(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);

  // Application thread: the engine's reports of peers gone; their requests fail.
  void handle_peer_failures();
  // Whether a request of ours is complete (polling its Open MPI part if it has one).
  bool poll(Request& request);
  // Whether Open MPI can complete it (else only LongPipe's messages can): how a wait idles.
  static bool waits_on_open_mpi(const Request& request);
  // Moves every nonblocking collective in flight on; frees those completed after MPI_Request_free.
  void advance_collectives();
  // Whether one of them waits for a LongPipe message (progress may then have to look past the
  // bound of unexpected messages: its message may be behind them).
  bool collectives_await_messages();
  // A wait for Open MPI requests only while collectives are in flight: PMPI_Test and progress.
  int wait_native(MPI_Request* request, MPI_Status* status);
  // Copies the result out and frees (or, if persistent, deactivates) the request.
  int finish(MPI_Request* slot, MPI_Status* status);
  // Carries out the wait loop's idle step (wait_loop.h): spin, yield or sleep on the progress
  // thread's signal.
  void idle(IdleStep step);
  // The one wait loop (wait_loop.h): every wait, probe, progress_until, collective transfer and the
  // flush at MPI_Finalize runs rounds of `round` and idles between them as a round says. With a
  // deadline: false if it passed first.
  void wait_rounds(const std::function<WaitRound()>& round);
  bool wait_rounds(const std::function<WaitRound()>& round, std::chrono::steady_clock::time_point deadline);

  static std::unique_ptr<Request> make_request(RequestKind kind, bool persistent, const void* buffer, int count,
                                               MPI_Datatype type, int peer, int tag, MPI_Comm comm, SendMode mode);
  std::uintptr_t new_request(std::unique_ptr<Request> request);
  void remove_request(std::uintptr_t handle);
  // Requests and matched messages of ours hold their communicator's info (and, once freed, Open
  // MPI's object) alive; a freed one is forgotten at the next progress step after the last goes.
  void hold_communicator(MPI_Comm comm);
  void release_communicator(MPI_Comm comm);
  void forget_unreferenced_communicators();
  // The `sequence`-th collective creation on a registered parent (nullopt: the parent is not
  // LongPipe's, nor are its children), and the communicator it made, registered under it.
  struct Derivation {
    std::uint64_t parent_lineage;
    std::uint64_t sequence;
  };
  std::optional<Derivation> count_creation(MPI_Comm parent);
  void register_derived(MPI_Comm comm, const Derivation& derivation, bool site_comm_when_blocking);
  // A new communicator under `lineage` with these members' world ranks (peers: `remote` if an
  // intercommunicator); aborts if this process holds a live one with the same context id.
  void install_communicator(MPI_Comm comm, std::uint64_t lineage, std::vector<int> local, std::vector<int>* remote,
                            bool site_comm_when_blocking);
  void release_keep_alive(MPI_Comm comm);
  void release_keep_alives();
  Request* ours(MPI_Request request) const;

  int report_error(MPI_Comm comm, int error_class, const std::string& what);
  // "MPI rank P (host:port) is unreachable: <reason>" (default: the engine's reason on record).
  std::string unreachable(int world, const std::string& reason = "");
  static void set_status(MPI_Status* status, int source, int tag, int error, MPI_Count bytes, bool cancelled);

  SiteMap sites_;
  int world_rank_;
  int world_size_;
  int my_site_;
  std::string statistics_path_;  // this rank's LONGPIPE_STATS file
  std::size_t segment_bytes_ = kDefaultSegmentBytes;  // of send_bytes' transfers
  std::size_t max_message_ = 64u << 20;  // the engine's LONGPIPE_MAX_MESSAGE: larger messages go in segments
  bool window_full_fails_ = false;       // LONGPIPE_WINDOW_FULL=fail: nonblocking sends never wait either
  MPI_Comm internal_;  // private duplicate of MPI_COMM_WORLD for the front end's own collectives
  std::unique_ptr<Engine> engine_;
  std::vector<std::string> endpoint_of_world_;
  std::unordered_map<std::string, int> world_of_endpoint_;
  std::unordered_set<int> failed_world_ranks_;
  std::unordered_map<int, std::string> failure_reasons_;

  CommunicatorInfo world_;
  std::unordered_map<MPI_Comm, CommunicatorInfo> communicators_;
  std::unordered_map<MPI_Comm, MPI_Request> keep_alive_;  // freed communicators still referenced
  std::vector<MPI_Comm> unreferenced_;                      // freed, no reference left: to forget
  // How many MPI_Comm_create_group calls (group_call_key) and MPI_Intercomm_create results
  // (pair_key) of each kind this process has seen: part of the next one's lineage (context_id.h).
  std::unordered_map<std::uint64_t, std::uint64_t> group_calls_;
  std::unordered_map<std::uint64_t, std::uint64_t> pair_calls_;

  HandleTable<Request> requests_;
  HandleTable<MatchedMessage> messages_;
  std::list<std::uintptr_t> collectives_in_flight_;  // requests of kind kCollective not complete yet

  // Shared with the progress thread, guarded by mutex_ (as are the Request fields marked so).
  std::mutex mutex_;
  // LongPipe's matching (message_matching.h): posted receives in posting order, unexpected
  // messages, synchronous sends waiting for their match (next_sync_id(): application thread only),
  // segmented messages still arriving, and the requests to settle. Acknowledgements it sends go
  // out through pending_acks_.
  MessageMatching matching_{{MPI_ERR_OTHER, MPI_ERR_INTERN},
                            [this](int source_world, std::uint64_t sync_id) { acknowledge_locked(source_world, sync_id); }};
  PendingSends<Request> pending_sends_;  // sends to other sites waiting for their window, per peer
  std::deque<std::pair<int, Message>> pending_acks_;  // acknowledgements waiting for a window

  std::unique_ptr<ProgressThread> progress_thread_;  // last: stopped before the rest goes
};

}  // namespace lp::mpi
