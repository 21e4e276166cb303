// A LongPipe request's states (libshim/mpi/request_lifecycle.h) and synchronous sends waiting for
// their acknowledgement (synchronous_sends.h), with fake requests, no MPI: complete once, cancel,
// persistent restart, free while pending; Ssend/Issend complete only after the receiver's match.
#include "request_lifecycle.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "synchronous_sends.h"

using lp::mpi::RequestKind;
using lp::mpi::RequestLifecycle;
using lp::mpi::send_complete;
using lp::mpi::SynchronousSends;
using Finish = RequestLifecycle::Finish;
using Free = RequestLifecycle::Free;

namespace {

// A fake send to another site, as the front end drives one: sent once wholly in the engine,
// acknowledged (synchronous) when the receiver's acknowledgement comes.
struct FakeSend : RequestLifecycle {
  bool synchronous = false;
  std::uint64_t sync_id = 0;
  int peer = 0;
  bool sent = false;
  bool acknowledged = false;
  bool failed = false;
  // settle(): completes it when its rule says so; true if it must go now (freed meanwhile).
  bool settle(bool* removed) {
    if (complete || !send_complete(sent, synchronous, acknowledged, failed)) return false;
    *removed = complete_now();
    return true;
  }
};

FakeSend issend(SynchronousSends<FakeSend>& sends, int peer) {
  FakeSend send;
  send.create(RequestKind::kSend, false);
  send.start();
  send.synchronous = true;
  send.peer = peer;
  send.sync_id = sends.next_id();
  return send;
}

}  // namespace

TEST_CASE("a request completes once and goes at finish") {
  RequestLifecycle r;
  r.create(RequestKind::kReceive, false);
  CHECK(r.pending());
  CHECK_FALSE(r.complete_now());
  CHECK_FALSE(r.pending());
  CHECK(r.finish() == Finish::kRemove);
}

TEST_CASE("a persistent request is inactive until started, and again after each finish") {
  RequestLifecycle r;
  r.create(RequestKind::kSend, true);
  CHECK_FALSE(r.active);
  CHECK_FALSE(r.pending());
  CHECK(r.finish() == Finish::kEmptyStatus);  // a wait on it returns at once, empty status
  for (int round = 0; round < 3; ++round) {
    r.start();
    CHECK(r.pending());
    r.complete_now();
    CHECK(r.finish() == Finish::kDeactivate);
    CHECK_FALSE(r.active);
    CHECK_FALSE(r.complete);
    CHECK(r.finish() == Finish::kEmptyStatus);
  }
}

TEST_CASE("freeing a pending request removes it at completion; an idle one at once") {
  RequestLifecycle pending;
  pending.create(RequestKind::kReceive, false);
  CHECK(pending.free_request() == Free::kRemoveAtCompletion);
  CHECK(pending.complete_now());  // the completion removes it
  RequestLifecycle done;
  done.create(RequestKind::kReceive, false);
  done.complete_now();
  CHECK(done.free_request() == Free::kRemoveNow);
  RequestLifecycle inactive;
  inactive.create(RequestKind::kReceive, true);
  CHECK(inactive.free_request() == Free::kRemoveNow);
}

TEST_CASE("only a pending receive can be cancelled") {
  RequestLifecycle receive;
  receive.create(RequestKind::kReceive, false);
  CHECK(receive.cancellable());
  receive.complete_now();
  CHECK_FALSE(receive.cancellable());  // matched and complete: it stays so
  RequestLifecycle send;
  send.create(RequestKind::kSend, false);
  CHECK_FALSE(send.cancellable());
  RequestLifecycle collective;
  collective.create(RequestKind::kCollective, false);
  CHECK_FALSE(collective.cancellable());
  RequestLifecycle inactive;
  inactive.create(RequestKind::kReceive, true);
  CHECK_FALSE(inactive.cancellable());
}

TEST_CASE("a standard send completes once wholly in the engine; a synchronous one only at its match") {
  CHECK_FALSE(send_complete(false, false, false, false));
  CHECK(send_complete(true, false, false, false));
  CHECK_FALSE(send_complete(true, true, false, false));
  CHECK(send_complete(true, true, true, false));
  CHECK(send_complete(false, true, false, true));  // failed: complete with its error
}

TEST_CASE("an Issend completes only after the acknowledgement of its own match") {
  SynchronousSends<FakeSend> sends;
  FakeSend a = issend(sends, 4), b = issend(sends, 4);
  CHECK(a.sync_id != b.sync_id);
  CHECK(a.sync_id != 0);
  sends.await(a.sync_id, &a);
  sends.await(b.sync_id, &b);
  bool removed = false;
  a.sent = b.sent = true;  // both wholly in the engine
  CHECK_FALSE(a.settle(&removed));
  CHECK(sends.acknowledge(b.sync_id) == &b);  // the receiver matched b first
  b.acknowledged = true;
  CHECK(b.settle(&removed));
  CHECK_FALSE(a.settle(&removed));
  CHECK(a.pending());
  CHECK(sends.acknowledge(b.sync_id) == nullptr);  // a repeated acknowledgement changes nothing
  CHECK(sends.acknowledge(a.sync_id) == &a);
  a.acknowledged = true;
  CHECK(a.settle(&removed));
  CHECK_FALSE(removed);
  CHECK(a.finish() == Finish::kRemove);
  CHECK(sends.size() == 0);
}

TEST_CASE("an acknowledgement may come before the send is wholly out; it completes when it is") {
  SynchronousSends<FakeSend> sends;
  FakeSend a = issend(sends, 4);
  sends.await(a.sync_id, &a);
  bool removed = false;
  CHECK(sends.acknowledge(a.sync_id) == &a);
  a.acknowledged = true;
  CHECK_FALSE(a.settle(&removed));  // its last segments still wait for the window
  a.sent = true;
  CHECK(a.settle(&removed));
}

TEST_CASE("a cancelled Issend is not cancelled: it still completes at its match") {
  SynchronousSends<FakeSend> sends;
  FakeSend a = issend(sends, 4);
  sends.await(a.sync_id, &a);
  a.sent = true;
  CHECK_FALSE(a.cancellable());  // MPI_Cancel leaves it (as Open MPI does for sends)
  bool removed = false;
  CHECK_FALSE(a.settle(&removed));
  CHECK(sends.acknowledge(a.sync_id) == &a);
  a.acknowledged = true;
  CHECK(a.settle(&removed));
}

TEST_CASE("an Issend freed while waiting for its match goes when the acknowledgement comes") {
  SynchronousSends<FakeSend> sends;
  FakeSend a = issend(sends, 4);
  sends.await(a.sync_id, &a);
  a.sent = true;
  CHECK(a.free_request() == Free::kRemoveAtCompletion);
  CHECK(sends.acknowledge(a.sync_id) == &a);
  a.acknowledged = true;
  bool removed = false;
  CHECK(a.settle(&removed));
  CHECK(removed);
}

TEST_CASE("an unreachable receiver fails the synchronous sends out to it, and only those") {
  SynchronousSends<FakeSend> sends;
  FakeSend out4 = issend(sends, 4), queued4 = issend(sends, 4), out5 = issend(sends, 5);
  out4.sent = out5.sent = true;  // queued4 still waits for the window: it fails there instead
  for (FakeSend* s : {&out4, &queued4, &out5}) sends.await(s->sync_id, s);
  const auto failed = sends.remove_if([](const FakeSend* s) { return s->peer == 4 && s->sent; });
  REQUIRE(failed.size() == 1);
  CHECK(failed[0] == &out4);
  CHECK_FALSE(sends.waiting(out4.sync_id));
  CHECK(sends.waiting(queued4.sync_id));
  CHECK(sends.waiting(out5.sync_id));
  out4.failed = true;
  bool removed = false;
  CHECK(out4.settle(&removed));
  CHECK(sends.acknowledge(out4.sync_id) == nullptr);  // a late acknowledgement is ignored
  sends.forget(queued4.sync_id);
  CHECK(sends.size() == 1);
}
