// ReceiveMatcher (libshim/mpi/receive_matcher.h): the matching decisions of LongPipe's MPI front
// end with fake receives and messages, no MPI. Context 7 is one communicator; world ranks 4 and 5
// are at another site (their messages come over LongPipe), communicator ranks 1 and 2 at this site
// (their messages are Open MPI's).
#include "receive_matcher.h"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

using lp::mpi::delivered_size;
using lp::mpi::Envelope;
using lp::mpi::kAnySource;
using lp::mpi::kAnyTag;
using lp::mpi::NativeMessage;
using lp::mpi::PostedReceive;
using lp::mpi::ReceivePattern;

namespace {

struct FakeReceive {
  std::string name;
};
using Matcher = lp::mpi::ReceiveMatcher<FakeReceive, std::string>;

constexpr int kContext = 7;
constexpr std::uintptr_t kComm = 0x1001;

// A receive from a rank at another site (world rank), or from any source.
PostedReceive remote(int source_world, int tag) {
  PostedReceive how;
  how.pattern = ReceivePattern{kContext, source_world, tag};
  how.may_match_native = source_world == kAnySource;
  how.scope = kComm;
  return how;
}
// A receive from a same-site rank (communicator rank `source`, world rank source + 10) that queued
// behind a LongPipe-side one: only Open MPI's messages match it.
PostedReceive same_site(int source, int tag) {
  PostedReceive how;
  how.pattern = ReceivePattern{kContext, source + 10, tag};
  how.takes_engine_messages = false;
  how.may_match_native = true;
  how.scope = kComm;
  how.native_source = source;
  return how;
}

// Open MPI's side as claim_native sees it: messages per communicator rank, oldest first.
struct FakeOpenMpi {
  std::vector<std::pair<NativeMessage, std::string>> held;
  std::vector<std::pair<std::string, std::string>> taken;  // receive, message

  std::optional<NativeMessage> probe(const PostedReceive& how) const {
    for (const auto& [message, text] : held) {
      if ((how.native_source == kAnySource || how.native_source == message.source) &&
          (how.pattern.tag == kAnyTag || how.pattern.tag == message.tag)) {
        return message;
      }
    }
    return std::nullopt;
  }
  bool take(FakeReceive* receive, NativeMessage message) {
    for (auto it = held.begin(); it != held.end(); ++it) {
      if (it->first.source == message.source && it->first.tag == message.tag) {
        taken.emplace_back(receive->name, it->second);
        held.erase(it);
        return true;
      }
    }
    return false;
  }
  int claim(Matcher& matcher) {
    return matcher.claim_native([this](FakeReceive*, const PostedReceive& how) { return probe(how); },
                                [this](FakeReceive* r, NativeMessage m) { return take(r, m); },
                                [](FakeReceive*) {});
  }
};

}  // namespace

TEST_CASE("an arriving message goes to the oldest matching receive, wildcard or not") {
  Matcher matcher;
  FakeReceive wildcard{"any"}, specific{"from 4"};
  CHECK_FALSE(matcher.post(&wildcard, remote(kAnySource, 3)));
  CHECK_FALSE(matcher.post(&specific, remote(4, 3)));
  CHECK(matcher.arrive({kContext, 4, 3}, "m1") == &wildcard);  // posted first
  CHECK(matcher.arrive({kContext, 4, 3}, "m2") == &specific);
  CHECK(matcher.arrive({kContext, 4, 3}, "m3") == nullptr);  // unexpected now
  CHECK(matcher.unexpected_count() == 1);
  CHECK(matcher.posted_count() == 0);
}

TEST_CASE("a specific receive posted first keeps its message from a later wildcard") {
  Matcher matcher;
  FakeReceive specific{"from 5"}, wildcard{"any"};
  matcher.post(&specific, remote(5, kAnyTag));
  matcher.post(&wildcard, remote(kAnySource, kAnyTag));
  CHECK(matcher.arrive({kContext, 4, 1}, "from 4") == &wildcard);  // the specific one does not match
  CHECK(matcher.arrive({kContext, 5, 1}, "from 5") == &specific);
}

TEST_CASE("ANY_TAG and ANY_SOURCE match only within their context") {
  Matcher matcher;
  FakeReceive any{"any"};
  matcher.post(&any, remote(kAnySource, kAnyTag));
  CHECK(matcher.arrive({kContext + 1, 4, 9}, "other communicator") == nullptr);
  CHECK(matcher.arrive({kContext, 5, 123}, "mine") == &any);
  CHECK(matcher.unexpected_count() == 1);
}

TEST_CASE("unexpected messages: a new receive takes the oldest it matches (non-overtaking)") {
  Matcher matcher;
  matcher.arrive({kContext, 4, 1}, "4:1 first");
  matcher.arrive({kContext, 5, 1}, "5:1");
  matcher.arrive({kContext, 4, 2}, "4:2");
  matcher.arrive({kContext, 4, 1}, "4:1 second");
  FakeReceive r{"r"};
  auto first = matcher.post(&r, remote(4, 1));
  REQUIRE(first);
  CHECK(first->second == "4:1 first");
  CHECK(matcher.posted_count() == 0);  // matched at once, not posted
  auto tagless = matcher.post(&r, remote(4, kAnyTag));
  REQUIRE(tagless);
  CHECK(tagless->second == "4:2");  // oldest from 4 left
  auto any = matcher.post(&r, remote(kAnySource, kAnyTag));
  REQUIRE(any);
  CHECK(any->second == "5:1");
  CHECK(any->first.source_world == 5);
}

TEST_CASE("a probe reports the message a receive then gets; a matched probe takes it") {
  Matcher matcher;
  matcher.arrive({kContext, 4, 1}, "a");
  matcher.arrive({kContext, 4, 1}, "b");
  Envelope envelope;
  const std::string* seen = matcher.probe({kContext, kAnySource, kAnyTag}, &envelope);
  REQUIRE(seen);
  CHECK(*seen == "a");
  CHECK(envelope.source_world == 4);
  CHECK(matcher.unexpected_count() == 2);  // left there
  FakeReceive r{"r"};
  auto got = matcher.post(&r, remote(envelope.source_world, envelope.tag));
  REQUIRE(got);
  CHECK(got->second == "a");

  auto matched = matcher.take({kContext, 4, 1});  // MPI_Mprobe
  REQUIRE(matched);
  CHECK(matched->second == "b");
  CHECK(matcher.probe({kContext, kAnySource, kAnyTag}) == nullptr);  // nobody else can have it
  FakeReceive later{"later"};
  CHECK_FALSE(matcher.post(&later, remote(4, 1)));
}

TEST_CASE("a cancelled receive no longer matches; a matched one cannot be cancelled") {
  Matcher matcher;
  FakeReceive first{"first"}, second{"second"};
  matcher.post(&first, remote(4, 1));
  matcher.post(&second, remote(4, 1));
  CHECK(matcher.remove(&first));
  CHECK_FALSE(matcher.is_posted(&first));
  CHECK(matcher.arrive({kContext, 4, 1}, "m") == &second);
  CHECK_FALSE(matcher.remove(&second));  // matched already: it completes
}

TEST_CASE("a persistent receive matches again each time it is posted") {
  Matcher matcher;
  FakeReceive persistent{"persistent"};
  matcher.arrive({kContext, 4, 1}, "one");
  matcher.arrive({kContext, 4, 1}, "two");
  auto got = matcher.post(&persistent, remote(4, 1));
  REQUIRE(got);
  CHECK(got->second == "one");
  got = matcher.post(&persistent, remote(4, 1));
  REQUIRE(got);
  CHECK(got->second == "two");
  CHECK_FALSE(matcher.post(&persistent, remote(4, 1)));  // started with nothing here: posted
  CHECK(matcher.arrive({kContext, 4, 1}, "three") == &persistent);
}

TEST_CASE("receives still posted on a freed communicator complete with their message") {
  // Freeing a communicator changes nothing here: its context stays matched until its receives are done.
  Matcher matcher;
  FakeReceive r{"r"};
  matcher.post(&r, remote(5, 2));
  CHECK(matcher.arrive({kContext, 5, 2}, "after the free") == &r);
}

TEST_CASE("a peer's failure takes only the receives waiting for it alone") {
  Matcher matcher;
  FakeReceive from4{"from 4"}, any{"any"}, from5{"from 5"};
  matcher.post(&from4, remote(4, 1));
  matcher.post(&any, remote(kAnySource, 1));
  matcher.post(&from5, remote(5, 1));
  const auto failed = matcher.remove_if([](const FakeReceive*, const PostedReceive& how) {
    return how.pattern.source_world == 4;
  });
  REQUIRE(failed.size() == 1);
  CHECK(failed[0] == &from4);
  CHECK(matcher.arrive({kContext, 4, 1}, "m") == &any);
}

TEST_CASE("Open MPI's messages go to the oldest receive that matches, across wildcards") {
  Matcher matcher;
  FakeReceive wildcard{"any"}, behind{"from 1 behind"}, other{"from 2 behind"};
  matcher.post(&wildcard, remote(kAnySource, kAnyTag));
  matcher.post(&behind, same_site(1, 5));
  matcher.post(&other, same_site(2, 5));
  CHECK(matcher.oldest_native(kComm, {1, 5}) == &wildcard);
  CHECK(matcher.oldest_native(kComm + 1, {1, 5}) == nullptr);  // another communicator's message

  FakeOpenMpi open_mpi;
  open_mpi.held = {{{1, 5}, "1:5 first"}, {{1, 5}, "1:5 second"}, {{2, 5}, "2:5"}};
  CHECK(open_mpi.claim(matcher) == 3);
  REQUIRE(open_mpi.taken.size() == 3);
  CHECK(open_mpi.taken[0] == std::pair<std::string, std::string>{"any", "1:5 first"});
  CHECK(open_mpi.taken[1] == std::pair<std::string, std::string>{"from 1 behind", "1:5 second"});
  CHECK(open_mpi.taken[2] == std::pair<std::string, std::string>{"from 2 behind", "2:5"});
  CHECK(matcher.posted_count() == 0);
}

TEST_CASE("a message a younger receive finds goes to the older receive that matches it") {
  Matcher matcher;
  FakeReceive older{"older, tag 6"}, younger{"younger, any tag"};
  matcher.post(&older, same_site(1, 6));
  matcher.post(&younger, same_site(1, kAnyTag));
  // The tag-6 message arrives after the older receive looked and before the younger one does.
  int probes = 0;
  FakeOpenMpi open_mpi;
  open_mpi.held = {{{1, 6}, "1:6"}};
  const int claimed = matcher.claim_native(
      [&](FakeReceive* r, const PostedReceive& how) -> std::optional<NativeMessage> {
        ++probes;
        if (r == &older && probes == 1) return std::nullopt;  // not there yet when it looked
        return open_mpi.probe(how);
      },
      [&](FakeReceive* r, NativeMessage m) { return open_mpi.take(r, m); }, [](FakeReceive*) {});
  CHECK(claimed == 1);
  REQUIRE(open_mpi.taken.size() == 1);
  CHECK(open_mpi.taken[0].first == "older, tag 6");
  CHECK(matcher.is_posted(&younger));  // it looked again and found nothing
}

TEST_CASE("receives only Open MPI can match never take a LongPipe message") {
  Matcher matcher;
  FakeReceive native_only{"from 1"};
  matcher.post(&native_only, same_site(1, kAnyTag));
  CHECK(matcher.arrive({kContext, 11, 0}, "m") == nullptr);
  CHECK_FALSE(matcher.post(&native_only, same_site(1, kAnyTag)));  // nor an unexpected one
}

TEST_CASE("truncation: the bytes that fit, and whether the rest was cut off") {
  CHECK(delivered_size(10, 16).bytes == 10);
  CHECK_FALSE(delivered_size(10, 16).truncated);
  CHECK_FALSE(delivered_size(16, 16).truncated);
  CHECK(delivered_size(17, 16).bytes == 16);
  CHECK(delivered_size(17, 16).truncated);
  CHECK(delivered_size(1, 0).truncated);
  CHECK_FALSE(delivered_size(0, 0).truncated);
}
