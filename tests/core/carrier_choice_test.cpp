// Carrier negotiation (carrier_choice.h), pure: the offer byte and the agreement table both ends
// apply.
#include <catch2/catch.hpp>

#include "carrier_choice.h"
#include "wire_frame.h"

using lp::CarrierChoice;
using lp::CarrierOffer;

namespace {

CarrierOffer offer(CarrierChoice setting, bool ready = true, bool prefers = false) { return {setting, ready, prefers}; }

// Both ends' view of one pair of offers: they must agree with each other.
lp::CarrierAgreement both(const CarrierOffer& a, const CarrierOffer& b, bool a_decides) {
  const lp::CarrierAgreement at_a = lp::agree_carrier(a, b, a_decides);
  const lp::CarrierAgreement at_b = lp::agree_carrier(b, a, !a_decides);
  REQUIRE(at_a.datagrams == at_b.datagrams);
  REQUIRE(at_a.error.has_value() == at_b.error.has_value());
  return at_a;
}

}  // namespace

TEST_CASE("carrier offer: every offer survives its byte; bytes no LongPipe sends are malformed", "[carrier]") {
  for (CarrierChoice setting : {CarrierChoice::kTcp, CarrierChoice::kUdp, CarrierChoice::kAuto}) {
    for (bool ready : {false, true}) {
      for (bool prefers : {false, true}) {
        const CarrierOffer decoded = CarrierOffer::decode(offer(setting, ready, prefers).encode());
        CHECK(decoded.setting == setting);
        CHECK(decoded.datagrams_ready == ready);
        CHECK(decoded.prefers_datagrams == prefers);
      }
    }
  }
  CHECK_THROWS_AS(CarrierOffer::decode(3), lp::MalformedFrame);     // setting 3
  CHECK_THROWS_AS(CarrierOffer::decode(0x04), lp::MalformedFrame);  // a reserved bit
  CHECK_THROWS_AS(CarrierOffer::decode(0x20), lp::MalformedFrame);
}

TEST_CASE("carrier agreement: both ends reach the same result, or the same clear error", "[carrier]") {
  const auto tcp = offer(CarrierChoice::kTcp), udp = offer(CarrierChoice::kUdp), automatic = offer(CarrierChoice::kAuto);
  for (bool a_decides : {false, true}) {
    CHECK_FALSE(both(tcp, tcp, a_decides).datagrams);
    CHECK(both(udp, udp, a_decides).datagrams);
    CHECK_FALSE(both(tcp, automatic, a_decides).datagrams);
    CHECK_FALSE(both(tcp, automatic, a_decides).error);
    CHECK(both(udp, automatic, a_decides).datagrams);  // auto follows an explicit choice
    CHECK_FALSE(both(udp, automatic, a_decides).error);
  }
  SECTION("tcp at one end and udp at the other is an error naming the variable and both settings") {
    const auto agreed = both(tcp, udp, true);
    REQUIRE(agreed.error);
    CHECK_THAT(*agreed.error, Catch::Contains("LONGPIPE_CARRIER") && Catch::Contains("tcp here and udp at the peer"));
  }
  SECTION("udp asked where an end could not bind its UDP socket: an error; auto with auto: tcp") {
    const auto unready = offer(CarrierChoice::kAuto, false, true);
    const auto agreed = both(udp, unready, true);
    REQUIRE(agreed.error);
    CHECK_THAT(*agreed.error, Catch::Contains("UDP socket"));
    CHECK_FALSE(both(offer(CarrierChoice::kAuto, true, true), unready, true).datagrams);
    CHECK_FALSE(both(offer(CarrierChoice::kAuto, true, true), unready, true).error);
  }
  SECTION("auto with auto: the deciding end's judgement, whichever end looks") {
    const auto wants = offer(CarrierChoice::kAuto, true, true), does_not = offer(CarrierChoice::kAuto, true, false);
    CHECK(both(wants, does_not, true).datagrams);
    CHECK_FALSE(both(wants, does_not, false).datagrams);
    CHECK(both(does_not, wants, false).datagrams);
  }
}
