// Carrier negotiation (carrier_choice.h), pure: the offer byte, the agreement table both ends
// apply, and auto's judgement of a path.
#include <catch2/catch.hpp>

#include <chrono>

#include "carrier/carrier_choice.h"
#include "congestion/pacer_seed.h"
#include "wire/wire_frame.h"

using lp::CarrierChoice;
using lp::CarrierOffer;

namespace {

CarrierOffer offer(CarrierChoice setting, bool ready = true, bool prefers = false) { return {setting, ready, prefers}; }

// Both ends' view of one pair of offers: they must agree with each other.
lp::CarrierAgreement both(const CarrierOffer& a, const CarrierOffer& b) {
  const lp::CarrierAgreement at_a = lp::agree_carrier(a, b);
  const lp::CarrierAgreement at_b = lp::agree_carrier(b, a);
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
  CHECK_FALSE(both(tcp, tcp).datagrams);
  CHECK(both(udp, udp).datagrams);
  CHECK_FALSE(both(tcp, automatic).datagrams);
  CHECK_FALSE(both(tcp, automatic).error);
  CHECK(both(udp, automatic).datagrams);  // auto follows an explicit choice
  CHECK_FALSE(both(udp, automatic).error);
  CHECK_FALSE(both(automatic, automatic).datagrams);  // neither judged the path lossy
  CHECK_FALSE(both(tcp, offer(CarrierChoice::kAuto, true, true)).datagrams);  // tcp asked: tcp
  SECTION("tcp at one end and udp at the other is an error naming the variable and both settings") {
    const auto agreed = both(tcp, udp);
    REQUIRE(agreed.error);
    CHECK_THAT(*agreed.error, Catch::Contains("LONGPIPE_CARRIER") && Catch::Contains("tcp here and udp at the peer"));
  }
  SECTION("udp asked where an end could not bind its UDP socket: an error; auto with auto: tcp") {
    const auto unready = offer(CarrierChoice::kAuto, false, true);
    const auto agreed = both(udp, unready);
    REQUIRE(agreed.error);
    CHECK_THAT(*agreed.error, Catch::Contains("UDP socket"));
    CHECK_FALSE(both(offer(CarrierChoice::kAuto, true, true), unready).datagrams);
    CHECK_FALSE(both(offer(CarrierChoice::kAuto, true, true), unready).error);
  }
  SECTION("auto with auto: datagrams when either end judged the path so") {
    const auto wants = offer(CarrierChoice::kAuto, true, true), does_not = offer(CarrierChoice::kAuto, true, false);
    CHECK(both(wants, does_not).datagrams);
    CHECK(both(does_not, wants).datagrams);
    CHECK(both(wants, wants).datagrams);
  }
}

TEST_CASE("auto judges a path long and lossy from what TCP measured of it", "[carrier]") {
  using namespace std::chrono_literals;
  CHECK(lp::path_prefers_datagrams(540ms, 10'000));                   // geo at 1 %
  CHECK(lp::path_prefers_datagrams(lp::kAutoMinRtt, lp::kAutoMinLossPpm));
  CHECK_FALSE(lp::path_prefers_datagrams(540ms, 0));                  // loss-free geo: tcp is faster
  CHECK_FALSE(lp::path_prefers_datagrams(540ms, -1));                 // not known
  CHECK_FALSE(lp::path_prefers_datagrams(540ms, lp::kAutoMinLossPpm - 1));
  CHECK_FALSE(lp::path_prefers_datagrams(40ms, 50'000));              // a short path: not measured
}

TEST_CASE("auto heeds the peer's verdict on a long path, heard in an earlier handshake", "[carrier]") {
  using namespace std::chrono_literals;
  CHECK(lp::path_peer_judged_datagrams(540ms, 1));
  CHECK(lp::path_peer_judged_datagrams(lp::kAutoMinRtt, 1));
  CHECK_FALSE(lp::path_peer_judged_datagrams(540ms, 0));   // the peer judged tcp
  CHECK_FALSE(lp::path_peer_judged_datagrams(540ms, -1));  // never heard
  CHECK_FALSE(lp::path_peer_judged_datagrams(lp::kAutoMinRtt - 1us, 1));  // a short path: never datagrams by auto
}

TEST_CASE("auto warm-starts datagrams on a known long path whose BDP slow start needs rounds to fill", "[carrier]") {
  using namespace std::chrono_literals;
  constexpr double kGeoRate = 155e6 / 8;  // the emulated geo link, as a TCP session caches it
  CHECK(lp::path_warm_starts_datagrams(540ms, kGeoRate));
  CHECK(lp::path_warm_starts_datagrams(100ms, 50e6 / 8));  // 625 KB: 43 initial windows, measured faster
  // Loss-free: the lossy judgement says tcp, the warm start datagrams.
  CHECK_FALSE(lp::path_prefers_datagrams(540ms, 0));
  // What an acceptor that only answered caches (its answers' rate, 44 KB/s on geo): no seed.
  CHECK_FALSE(lp::path_warm_starts_datagrams(540ms, 43'759));
  CHECK_FALSE(lp::path_warm_starts_datagrams(540ms, 0));  // no rate measured
  // A short path: slow start's round trips are short, datagrams measured no faster (20 ms / 50 Mbit/s).
  CHECK_FALSE(lp::path_warm_starts_datagrams(20ms, 50e6 / 8));
  CHECK_FALSE(lp::path_warm_starts_datagrams(lp::kAutoMinRtt - 1us, 1e9));
  // The BDP threshold, at the shortest long path.
  const double threshold_rate = lp::kAutoWarmStartMinInitialWindows * lp::kTcpInitialWindowBytes / 0.1;
  CHECK(lp::path_warm_starts_datagrams(lp::kAutoMinRtt, threshold_rate * 1.001));
  CHECK_FALSE(lp::path_warm_starts_datagrams(lp::kAutoMinRtt, threshold_rate * 0.999));
  // Whatever the threshold, never an entry the pacer would not take as its seed.
  CHECK_FALSE(lp::PacerSeed::worth_taking(1e5, 540ms));
  CHECK_FALSE(lp::path_warm_starts_datagrams(540ms, 1e5));
}

TEST_CASE("auto is decided by the dialler: tcp on a path it judges tcp's, binding before the acceptor answers",
          "[carrier]") {
  const auto dialler = [](bool worth, bool ready = true) { return lp::dialler_offer(CarrierChoice::kAuto, ready, worth); };
  const auto acceptor_auto = offer(CarrierChoice::kAuto), acceptor_tcp = offer(CarrierChoice::kTcp),
             acceptor_udp = offer(CarrierChoice::kUdp);
  SECTION("a path judged tcp's (known so, or short at CHALLENGE): tcp whatever the acceptor's auto thinks") {
    const CarrierOffer ours = dialler(false);
    CHECK(lp::offer_binds_tcp(ours));  // 0.5-RTT data and spill streams before the acceptor answers
    CHECK_FALSE(both(ours, acceptor_auto).datagrams);
    CHECK_FALSE(both(ours, offer(CarrierChoice::kAuto, true, true)).datagrams);  // its own cache does not switch it
    CHECK_FALSE(both(ours, acceptor_tcp).datagrams);
    CHECK_FALSE(both(ours, acceptor_tcp).error);
    // An acceptor set to udp: the clear error, saying that auto chose tcp and what to set.
    const auto agreed = lp::agree_carrier(ours, acceptor_udp);
    REQUIRE(agreed.error);
    CHECK_THAT(*agreed.error, Catch::Contains("LONGPIPE_CARRIER is auto here, which chose tcp") &&
                                  Catch::Contains("set udp at both ends"));
    REQUIRE(lp::agree_carrier(acceptor_udp, ours).error);
    CHECK_THAT(*lp::agree_carrier(acceptor_udp, ours).error, Catch::Contains("udp here and tcp at the peer"));
  }
  SECTION("a path the cache knows as worth datagrams: udp, where the acceptor can") {
    const CarrierOffer ours = dialler(true);
    CHECK_FALSE(lp::offer_binds_tcp(ours));  // it waits for the acceptor's offer
    CHECK(both(ours, acceptor_auto).datagrams);
    CHECK(both(ours, acceptor_udp).datagrams);
    // Fallbacks, without an error: a tcp acceptor, or one whose UDP socket is not bound.
    CHECK_FALSE(both(ours, acceptor_tcp).datagrams);
    CHECK_FALSE(both(ours, acceptor_tcp).error);
    CHECK_FALSE(both(ours, offer(CarrierChoice::kAuto, false)).datagrams);
    CHECK_FALSE(both(ours, offer(CarrierChoice::kAuto, false)).error);
  }
  SECTION("a dialler without a bound UDP socket: tcp, binding, whatever its cache says") {
    const CarrierOffer ours = dialler(true, false);
    CHECK(lp::offer_binds_tcp(ours));
    CHECK_FALSE(both(ours, acceptor_auto).datagrams);
    CHECK_THAT(*both(ours, acceptor_udp).error, Catch::Contains("UDP socket"));
  }
  SECTION("both ends dialled at once: tcp if either chose tcp (its data may already be on the way)") {
    CHECK_FALSE(both(dialler(false), dialler(true)).datagrams);
    CHECK(both(dialler(true), dialler(true)).datagrams);
  }
  SECTION("explicit settings are the dialler's offer as they are") {
    CHECK(lp::dialler_offer(CarrierChoice::kTcp, true, true).setting == CarrierChoice::kTcp);
    CHECK(lp::offer_binds_tcp(lp::dialler_offer(CarrierChoice::kTcp, true, true)));
    CHECK(lp::dialler_offer(CarrierChoice::kUdp, true, false).setting == CarrierChoice::kUdp);
    CHECK_FALSE(lp::offer_binds_tcp(lp::dialler_offer(CarrierChoice::kUdp, true, false)));
    CHECK_FALSE(lp::offer_binds_tcp(acceptor_auto));  // an acceptor's auto follows whoever dialled
  }
}

TEST_CASE("auto on a path the cache does not know: the handshake's round trip decides") {
  using namespace std::chrono_literals;
  CHECK(lp::new_path_worth_datagrams(540ms));  // geo
  CHECK(lp::new_path_worth_datagrams(lp::kNewPathMinRtt));
  CHECK_FALSE(lp::new_path_worth_datagrams(lp::kNewPathMinRtt - 1us));
  CHECK_FALSE(lp::new_path_worth_datagrams(100ms));  // 400 Mbit/s there was better on tcp
  CHECK_FALSE(lp::new_path_worth_datagrams(20ms));
}
