// MessageMatching (libshim/mpi/message_matching.h): the front end's matching and request core with
// fake engine messages and fake requests, no MPI, no engine. One communicator has context 7 and
// ranks 0..3 = world ranks 2..5; world ranks 4 and 5 are at another site (LongPipe carries their
// messages), 2 and 3 at this one (Open MPI carries theirs). Context 9 is another communicator.
#include "message_matching.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "wire_format.h"

using lp::Message;
using lp::mpi::ArrivedMessage;
using lp::mpi::Envelope;
using lp::mpi::kAnySource;
using lp::mpi::kAnyTag;
using lp::mpi::kFlagContinuation;
using lp::mpi::kFlagData;
using lp::mpi::kFlagMatched;
using lp::mpi::kFlagSegmented;
using lp::mpi::kFlagSynchronous;
using lp::mpi::kNoError;
using lp::mpi::MatchSlot;
using lp::mpi::MessageMatching;
using lp::mpi::PostedReceive;
using lp::mpi::ReceivePattern;

namespace {

constexpr int kContext = 7;
constexpr int kOtherContext = 9;
constexpr int kAny = -99;  // the caller's MPI_ANY_SOURCE, here unlike envelope.h's: route_receive translates it
constexpr int kFailed = 201;
constexpr int kMalformed = 202;
constexpr std::uintptr_t kComm = 0x1001;

lp::mpi::CommunicatorInfo communicator(int context) {
  return lp::mpi::CommunicatorInfo(context, {2, 3, 4, 5}, {0, 0, 0, 0, 1, 1}, 0);
}

std::vector<std::byte> text(const std::string& s) {
  std::vector<std::byte> body(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) body[i] = static_cast<std::byte>(s[i]);
  return body;
}
std::string text_of(const std::vector<std::byte>& body) {
  std::string s;
  for (std::byte b : body) s.push_back(static_cast<char>(b));
  return s;
}

// A data message from world rank `source` as the engine hands it over.
Message data(int source, int tag, const std::string& body, int context = kContext) {
  Message message;
  message.source = static_cast<std::uint32_t>(source);
  message.tag = tag;
  message.context = context;
  message.flags = kFlagData;
  message.body = text(body);
  return message;
}
Message synchronous(int source, int tag, const std::string& body, std::uint64_t id) {
  Message message = data(source, tag, body);
  message.flags |= kFlagSynchronous;
  lp::mpi::append_sync_id(message.body, id);
  return message;
}
Message acknowledgement(int source, std::uint64_t id) {
  Message message;
  message.source = static_cast<std::uint32_t>(source);
  message.flags = kFlagMatched;
  lp::mpi::append_sync_id(message.body, id);
  return message;
}
// A segmented message's first engine message: its total size, then its first data bytes.
Message first_segment(int source, int tag, std::uint64_t total, const std::string& first) {
  Message message = data(source, tag, "");
  message.flags |= kFlagSegmented;
  message.body.resize(lp::mpi::kTransferHeaderSize);
  lp::mpi::write_segment_header(message.body.data(), total);
  const auto bytes = text(first);
  message.body.insert(message.body.end(), bytes.begin(), bytes.end());
  return message;
}
Message continuation(int source, const std::string& more) {
  Message message;
  message.source = static_cast<std::uint32_t>(source);
  message.flags = kFlagContinuation;
  message.body = text(more);
  return message;
}

// The core and what it asks of its caller: acknowledgements sent.
struct Fixture {
  std::vector<std::pair<int, std::uint64_t>> acknowledged;
  MessageMatching matching{{kFailed, kMalformed},
                           [this](int world, std::uint64_t id) { acknowledged.emplace_back(world, id); }};
  lp::mpi::CommunicatorInfo comm = communicator(kContext);
  lp::mpi::CommunicatorInfo other = communicator(kOtherContext);

  // Posts a receive as FrontEnd does: first the unexpected messages, then the posted list.
  PostedReceive post(MatchSlot& receive, int peer, int tag, const lp::mpi::CommunicatorInfo* on = nullptr) {
    const auto route = lp::mpi::route_receive(on ? *on : comm, peer, tag, kAny, kComm);
    receive.peer_world = route.peer_world;
    if (!matching.take_unexpected(receive, route.how)) matching.enqueue(receive, route.how);
    return route.how;
  }
  std::vector<MatchSlot*> settled() { return matching.take_settled(); }
};

std::string body_of(const MatchSlot& receive) {
  REQUIRE(receive.matched);
  return text_of(receive.matched_message->body);
}

}  // namespace

TEST_CASE("routes: wildcards and peers translate to world ranks; same-site sources may match Open MPI's") {
  const auto info = communicator(kContext);
  const auto any = lp::mpi::route_receive(info, kAny, kAnyTag, kAny, kComm);
  CHECK(any.how.pattern.source_world == kAnySource);
  CHECK(any.how.pattern.tag == kAnyTag);
  CHECK(any.how.pattern.context == kContext);
  CHECK(any.how.takes_engine_messages);
  CHECK(any.how.may_match_native);
  CHECK(any.how.native_source == kAnySource);
  CHECK(any.peer_world == -1);
  const auto remote = lp::mpi::route_receive(info, 2, 5, kAny, kComm);
  CHECK(remote.how.pattern.source_world == 4);
  CHECK(remote.peer_world == 4);
  CHECK(remote.how.takes_engine_messages);
  CHECK_FALSE(remote.how.may_match_native);
  const auto local = lp::mpi::route_receive(info, 1, 5, kAny, kComm);
  CHECK(local.how.pattern.source_world == 3);
  CHECK(local.peer_world == -1);
  CHECK_FALSE(local.how.takes_engine_messages);
  CHECK(local.how.may_match_native);
  CHECK(local.how.native_source == 1);
  CHECK(lp::mpi::probe_pattern(info, kAny, 3, kAny).source_world == kAnySource);
  CHECK(lp::mpi::probe_pattern(info, 3, 3, kAny).source_world == 5);
}

TEST_CASE("a message goes to the oldest posted receive that matches, wildcard source or tag") {
  Fixture f;
  MatchSlot tag_one, any_tag, any_source;
  f.post(tag_one, 2, 1);
  f.post(any_tag, 2, kAnyTag);
  f.post(any_source, kAny, 2);
  CHECK(f.matching.arrive(data(5, 2, "from 5")));  // only the wildcard-source receive matches
  CHECK(body_of(any_source) == "from 5");
  CHECK(f.matching.arrive(data(4, 2, "tag 2")));  // ANY_TAG before the one for tag 1
  CHECK(body_of(any_tag) == "tag 2");
  CHECK(f.matching.arrive(data(4, 1, "tag 1")));
  CHECK(body_of(tag_one) == "tag 1");
  CHECK(f.settled().size() == 3);
  CHECK(f.matching.posted_count() == 0);
}

TEST_CASE("a message before its receive waits; the receive posted later takes it at once") {
  Fixture f;
  CHECK_FALSE(f.matching.arrive(data(4, 3, "early")));
  CHECK(f.matching.unexpected_count() == 1);
  MatchSlot receive;
  f.post(receive, 2, 3);
  CHECK(body_of(receive) == "early");
  CHECK(receive.matched_envelope.source_world == 4);
  CHECK(f.matching.unexpected_count() == 0);
  CHECK(f.matching.posted_count() == 0);
  REQUIRE(f.settled() == std::vector<MatchSlot*>{&receive});
}

TEST_CASE("non-overtaking: one sender's messages match in order, also after a wildcard receive") {
  Fixture f;
  for (const char* body : {"a", "b", "c", "d"}) f.matching.arrive(data(4, 6, body));
  f.matching.arrive(data(5, 6, "other sender"));
  MatchSlot wildcard, specific, any_tag, last;
  f.post(wildcard, kAny, kAnyTag);
  f.post(specific, 2, 6);
  f.post(any_tag, 2, kAnyTag);
  f.post(last, kAny, 6);
  CHECK(body_of(wildcard) == "a");
  CHECK(body_of(specific) == "b");
  CHECK(body_of(any_tag) == "c");
  CHECK(body_of(last) == "d");
  CHECK(f.matching.unexpected_count() == 1);

  // Posted first, matched as the messages come: the same order.
  MatchSlot first, second;
  f.post(first, kAny, 8);
  f.post(second, 2, 8);
  f.matching.arrive(data(4, 8, "x"));
  f.matching.arrive(data(4, 8, "y"));
  CHECK(body_of(first) == "x");
  CHECK(body_of(second) == "y");
}

TEST_CASE("communicators are isolated by their context id, wildcards included") {
  Fixture f;
  f.matching.arrive(data(4, 1, "other communicator", kOtherContext));
  MatchSlot receive;
  f.post(receive, kAny, kAnyTag);
  CHECK_FALSE(receive.matched);
  f.matching.arrive(data(4, 1, "this communicator"));
  CHECK(body_of(receive) == "this communicator");
  MatchSlot on_other;
  f.post(on_other, kAny, kAnyTag, &f.other);
  CHECK(body_of(on_other) == "other communicator");
}

TEST_CASE("a probe reports without taking; a matched probe takes the message out") {
  Fixture f;
  f.matching.arrive(data(4, 1, "first"));
  f.matching.arrive(data(5, 2, "second"));
  Envelope envelope;
  const ArrivedMessage* probed = f.matching.probe(lp::mpi::probe_pattern(f.comm, kAny, kAnyTag, kAny), &envelope);
  REQUIRE(probed);
  CHECK(text_of(probed->body) == "first");
  CHECK(probed->size == 5);
  CHECK(envelope.source_world == 4);
  CHECK(f.matching.unexpected_count() == 2);  // a probe leaves it
  CHECK(f.matching.probe(lp::mpi::probe_pattern(f.comm, 3, 2, kAny))->size == 6);
  CHECK_FALSE(f.matching.probe(lp::mpi::probe_pattern(f.comm, 3, 1, kAny)));

  auto taken = f.matching.take(lp::mpi::probe_pattern(f.comm, kAny, kAnyTag, kAny));
  REQUIRE(taken);
  CHECK(text_of(taken->second->body) == "first");
  CHECK(f.matching.unexpected_count() == 1);
  MatchSlot receive;  // a receive posted now gets the next one, never the taken one
  f.post(receive, kAny, kAnyTag);
  CHECK(body_of(receive) == "second");
  MatchSlot mrecv;  // MPI_Mrecv of the taken message
  f.matching.bind(mrecv, taken->first, taken->second);
  CHECK(body_of(mrecv) == "first");
}

TEST_CASE("a cancelled receive no longer matches; a matched one is not posted any more") {
  Fixture f;
  MatchSlot cancelled, kept;
  f.post(cancelled, kAny, 4);
  f.post(kept, 2, 4);
  CHECK(f.matching.is_posted(cancelled));
  CHECK(f.matching.cancel(cancelled));
  CHECK_FALSE(f.matching.cancel(cancelled));
  f.matching.arrive(data(4, 4, "for the kept one"));
  CHECK_FALSE(cancelled.matched);
  CHECK(body_of(kept) == "for the kept one");
  CHECK_FALSE(f.matching.cancel(kept));  // matched already: it completes
}

TEST_CASE("synchronous sends: acknowledged at their match, however it comes; completed by the acknowledgement") {
  Fixture f;
  MatchSlot receive;
  f.post(receive, 2, 1);
  f.matching.arrive(synchronous(4, 1, "posted first", 11));
  CHECK(body_of(receive) == "posted first");  // the id is not part of the data
  CHECK(f.acknowledged == std::vector<std::pair<int, std::uint64_t>>{{4, 11}});
  f.matching.arrive(synchronous(5, 1, "unexpected", 12));
  CHECK(f.acknowledged.size() == 1);  // not matched yet
  auto taken = f.matching.take(lp::mpi::probe_pattern(f.comm, 3, 1, kAny));
  REQUIRE(taken);
  CHECK(f.acknowledged.size() == 1);  // a matched probe does not acknowledge: its Mrecv does
  MatchSlot mrecv;
  f.matching.bind(mrecv, taken->first, taken->second);
  CHECK(f.acknowledged.back() == std::pair<int, std::uint64_t>{5, 12});

  MatchSlot send;
  send.sync_id = f.matching.next_sync_id();
  send.peer_world = 4;
  f.matching.await_acknowledgement(send);
  f.settled();
  CHECK(f.matching.arrive(acknowledgement(4, send.sync_id)));
  CHECK(send.acknowledged);
  CHECK(f.settled() == std::vector<MatchSlot*>{&send});
  CHECK_FALSE(f.matching.arrive(acknowledgement(4, send.sync_id)));  // once
}

TEST_CASE("segmented messages: matched by their first segment, completed by their last") {
  Fixture f;
  MatchSlot receive;
  std::string buffer(10, '.');
  receive.receive_buffer = buffer.data();
  receive.flat = true;
  receive.capacity = buffer.size();
  f.post(receive, 2, 1);
  CHECK(f.matching.arrive(first_segment(4, 1, 10, "0123")));
  CHECK(receive.matched);
  CHECK_FALSE(receive.matched_message->complete);
  f.settled();
  CHECK_FALSE(f.matching.arrive(continuation(5, "zz")));  // another source's: none in progress
  CHECK_FALSE(f.matching.arrive(continuation(4, "456")));
  CHECK(f.matching.arrive(continuation(4, "789")));
  CHECK(receive.matched_message->complete);
  CHECK(receive.matched_message->in_place);
  CHECK(buffer == "0123456789");  // straight into the flat buffer
  CHECK(f.settled() == std::vector<MatchSlot*>{&receive});

  // Unexpected: kept until a receive takes it (then whole in its body).
  f.matching.arrive(first_segment(5, 2, 6, "ab"));
  f.matching.arrive(continuation(5, "cdef"));
  MatchSlot later;
  f.post(later, 3, 2);
  CHECK(later.matched_message->complete);
  CHECK(body_of(later) == "abcdef");
}

TEST_CASE("segmented messages cut short, malformed, or from a failed peer fail their receive") {
  Fixture f;
  MatchSlot cut, malformed;
  f.post(cut, 2, 1);
  f.matching.arrive(first_segment(4, 1, 10, "0123"));
  f.matching.arrive(data(4, 2, "a new message: the one in progress never completes"));
  CHECK(cut.shared_error == kFailed);
  f.post(malformed, 3, 1);
  f.matching.arrive(first_segment(5, 1, 4, "01"));
  CHECK(f.matching.arrive(continuation(5, "2345")));  // past the announced total
  CHECK(malformed.shared_error == kMalformed);

  MatchSlot waiting_for_4, any, send;
  f.post(waiting_for_4, 2, 9);
  f.post(any, kAny, 9);
  send.peer_world = 4;
  send.sync_id = f.matching.next_sync_id();
  send.sent = true;
  f.matching.await_acknowledgement(send);
  f.settled();
  CHECK(f.matching.peer_failed(4) == std::vector<MatchSlot*>{&waiting_for_4});
  CHECK(f.matching.is_posted(any));  // another source may still send
  CHECK(send.shared_error == kFailed);
  CHECK_FALSE(f.matching.awaits_acknowledgement(send));
  CHECK(f.settled() == std::vector<MatchSlot*>{&send});
  CHECK(waiting_for_4.shared_error == kNoError);  // the caller fails it at once
}

TEST_CASE("the settle list names each request once and forgets one taken off it") {
  Fixture f;
  MatchSlot a, b;
  f.matching.settle_later(a);
  f.matching.settle_later(a);
  f.matching.settle_later(b);
  f.matching.unlist(b);
  CHECK_FALSE(b.listed);
  CHECK(f.matching.has_settled());
  CHECK(f.settled() == std::vector<MatchSlot*>{&a});
  CHECK_FALSE(a.listed);
  CHECK_FALSE(f.matching.has_settled());
}
