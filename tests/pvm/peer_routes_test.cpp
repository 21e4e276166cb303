// PeerRoutes and ArrivalGate together: the route switch keeps a pair's order.
#include "peer_routes.h"

#include <catch2/catch.hpp>

#include "arrival_gate.h"
#include "route_flags.h"

using lp::pvm::ArrivalGate;
using lp::pvm::PeerRoutes;

TEST_CASE("a destination found in the directory uses LongPipe from its first message, unflagged") {
  PeerRoutes routes;
  CHECK(routes.route(0x40002).kind == PeerRoutes::Kind::kUnknown);
  routes.found_in_directory(0x40002, "site-b:4000");
  CHECK(routes.route(0x40002).kind == PeerRoutes::Kind::kLongPipe);
  CHECK(routes.route(0x40002).endpoint == "site-b:4000");
  CHECK(routes.flags_for(0x40002) == 0);
  CHECK(routes.learned_endpoint(0x40002, "site-b:4000") == PeerRoutes::Learned::kUnchanged);
}

TEST_CASE("a destination first reached through the pvmd switches with a marker and flagged messages") {
  PeerRoutes routes;
  routes.not_in_directory(0x40002);
  CHECK(routes.route(0x40002).kind == PeerRoutes::Kind::kPvmd);
  CHECK(routes.learned_endpoint(0x40002, "site-b:4000") == PeerRoutes::Learned::kSendMarkerFirst);
  CHECK(routes.route(0x40002).kind == PeerRoutes::Kind::kLongPipe);
  CHECK(routes.flags_for(0x40002) == lp::pvm::kFlagAfterPvmdRoute);
  CHECK(routes.learned_endpoint(0x40002, "site-b:4000") == PeerRoutes::Learned::kUnchanged);
}

TEST_CASE("a hello from a task never sent to makes it LongPipe without a marker") {
  PeerRoutes routes;
  CHECK(routes.learned_endpoint(0x40009, "site-a:1") == PeerRoutes::Learned::kNowLongPipe);
  CHECK(routes.flags_for(0x40009) == 0);
}

TEST_CASE("giving up on a peer sends its tasks through the pvmd for good") {
  PeerRoutes routes;
  routes.found_in_directory(0x40002, "site-b:4000");
  routes.found_in_directory(0x40003, "site-b:4000");
  routes.found_in_directory(0x40004, "site-b:4001");
  CHECK(routes.give_up_endpoint("site-b:4000") == 2);
  CHECK(routes.route(0x40002).kind == PeerRoutes::Kind::kPvmd);
  CHECK(routes.route(0x40004).kind == PeerRoutes::Kind::kLongPipe);
  CHECK(routes.learned_endpoint(0x40002, "site-b:4000") == PeerRoutes::Learned::kUnchanged);
  CHECK(routes.route(0x40002).kind == PeerRoutes::Kind::kPvmd);
  routes.give_up(0x40004);
  CHECK(routes.route(0x40004).kind == PeerRoutes::Kind::kPvmd);
}

namespace {

lp::Message message(std::uint32_t source, std::int32_t tag, std::uint32_t flags) {
  lp::Message m;
  m.source = source;
  m.tag = tag;
  m.flags = flags;
  return m;
}

std::vector<std::int32_t> drain(ArrivalGate& gate) {
  std::vector<std::int32_t> tags;
  while (auto m = gate.next_ready()) tags.push_back(m->tag);
  return tags;
}

}  // namespace

TEST_CASE("unflagged messages pass the gate at once, in order") {
  ArrivalGate gate;
  gate.admit(message(1, 10, 0));
  gate.admit(message(2, 20, 0));
  gate.admit(message(1, 11, 0));
  CHECK(drain(gate) == std::vector<std::int32_t>{10, 20, 11});
}

TEST_CASE("flagged messages wait for their source's marker; other sources are not held up") {
  ArrivalGate gate;
  gate.admit(message(1, 10, lp::pvm::kFlagAfterPvmdRoute));
  gate.admit(message(2, 20, 0));
  gate.admit(message(1, 11, lp::pvm::kFlagAfterPvmdRoute));
  CHECK(drain(gate) == std::vector<std::int32_t>{20});
  CHECK(gate.held_count() == 2);
  gate.marker_arrived(2);  // another source's marker releases nothing of source 1
  CHECK(drain(gate).empty());
  gate.marker_arrived(1);
  CHECK(drain(gate) == std::vector<std::int32_t>{10, 11});
  CHECK(gate.held_count() == 0);
  gate.admit(message(1, 12, lp::pvm::kFlagAfterPvmdRoute));  // after the marker: straight through
  CHECK(drain(gate) == std::vector<std::int32_t>{12});
}

TEST_CASE("a marker that arrives first lets the flagged messages straight through") {
  ArrivalGate gate;
  gate.marker_arrived(1);
  gate.admit(message(1, 10, lp::pvm::kFlagAfterPvmdRoute));
  CHECK(drain(gate) == std::vector<std::int32_t>{10});
}

TEST_CASE("an unflagged message behind held ones of the same source waits too") {
  ArrivalGate gate;
  gate.admit(message(1, 10, lp::pvm::kFlagAfterPvmdRoute));
  gate.admit(message(1, 11, 0));
  CHECK(drain(gate).empty());
  gate.marker_arrived(1);
  CHECK(drain(gate) == std::vector<std::int32_t>{10, 11});
}
