#include "carrier/carrier_choice.h"

#include "congestion/pacer_seed.h"
#include "wire/wire_frame.h"

namespace lp {
namespace {

constexpr std::uint8_t kSettingMask = 0x03;
constexpr std::uint8_t kPrefersDatagrams = 0x40;
constexpr std::uint8_t kDatagramsReady = 0x80;

std::uint8_t setting_bits(CarrierChoice choice) {
  switch (choice) {
    case CarrierChoice::kTcp: return 0;
    case CarrierChoice::kUdp: return 1;
    case CarrierChoice::kAuto: return 2;
  }
  return 0;
}

}  // namespace

const char* carrier_name(CarrierChoice choice) {
  switch (choice) {
    case CarrierChoice::kTcp: return "tcp";
    case CarrierChoice::kUdp: return "udp";
    case CarrierChoice::kAuto: return "auto";
  }
  return "?";
}

std::uint8_t CarrierOffer::encode() const {
  return static_cast<std::uint8_t>(setting_bits(setting) | (prefers_datagrams ? kPrefersDatagrams : 0) |
                                   (datagrams_ready ? kDatagramsReady : 0));
}

CarrierOffer CarrierOffer::decode(std::uint8_t byte) {
  const std::uint8_t setting = byte & kSettingMask;
  if ((byte & ~(kSettingMask | kPrefersDatagrams | kDatagramsReady)) != 0 || setting > 2) {
    throw MalformedFrame("carrier offer " + std::to_string(byte) + " (CHALLENGE or IDENTIFY) is not one LongPipe sends");
  }
  CarrierOffer offer;
  offer.setting = setting == 0 ? CarrierChoice::kTcp : setting == 1 ? CarrierChoice::kUdp : CarrierChoice::kAuto;
  offer.prefers_datagrams = (byte & kPrefersDatagrams) != 0;
  offer.datagrams_ready = (byte & kDatagramsReady) != 0;
  return offer;
}

bool path_prefers_datagrams(std::chrono::microseconds min_rtt, std::int64_t loss_ppm) {
  return min_rtt >= kAutoMinRtt && loss_ppm >= kAutoMinLossPpm;
}

bool path_warm_starts_datagrams(std::chrono::microseconds min_rtt, double rate_bytes_per_second) {
  const double bdp_bytes = rate_bytes_per_second * std::chrono::duration<double>(min_rtt).count();
  return min_rtt >= kAutoMinRtt && PacerSeed::worth_taking(rate_bytes_per_second, min_rtt) &&
         bdp_bytes >= kAutoWarmStartMinInitialWindows * kTcpInitialWindowBytes;
}

bool path_peer_judged_datagrams(std::chrono::microseconds min_rtt, int peer_verdict) {
  return min_rtt >= kAutoMinRtt && peer_verdict == 1;
}

bool new_path_worth_datagrams(std::chrono::microseconds handshake_rtt) {
  return handshake_rtt >= kNewPathMinRtt;
}

CarrierAgreement agree_carrier(const CarrierOffer& ours, const CarrierOffer& theirs) {
  const bool we_ask_udp = ours.setting == CarrierChoice::kUdp;
  const bool they_ask_udp = theirs.setting == CarrierChoice::kUdp;
  if (ours.setting == CarrierChoice::kTcp && they_ask_udp && ours.chosen_by_auto) {
    return {false, std::string("LONGPIPE_CARRIER is auto here, which chose tcp for this path (its path cache does not "
                               "know it as worth datagrams, or its handshake's round trip is short), and udp at the "
                               "peer: set udp at both ends, or auto at the peer")};
  }
  if ((ours.setting == CarrierChoice::kTcp && they_ask_udp) || (we_ask_udp && theirs.setting == CarrierChoice::kTcp)) {
    return {false, std::string("LONGPIPE_CARRIER is ") + carrier_name(ours.setting) + " here and " +
                       carrier_name(theirs.setting) + " at the peer" +
                       (we_ask_udp ? " (set there, or chosen there by auto for a path it judged tcp's)" : "") +
                       ": set the same at both ends (or auto at the acceptor)"};
  }
  if (ours.setting == CarrierChoice::kTcp || theirs.setting == CarrierChoice::kTcp) return {false, std::nullopt};
  const bool both_ready = ours.datagrams_ready && theirs.datagrams_ready;
  if (we_ask_udp || they_ask_udp) {
    if (both_ready) return {true, std::nullopt};
    return {false, std::string("LONGPIPE_CARRIER=udp ") + (we_ask_udp ? "here" : "at the peer") + ", but " +
                       (ours.datagrams_ready ? "the peer's" : "this end's") +
                       " UDP socket could not be bound beside its TCP listener (the port number is taken?)"};
  }
  // auto with auto: either end's judgement of the path.
  return {(ours.prefers_datagrams || theirs.prefers_datagrams) && both_ready, std::nullopt};
}

CarrierOffer dialler_offer(CarrierChoice setting, bool datagrams_ready, bool path_worth_datagrams) {
  CarrierOffer offer{setting, datagrams_ready, false};
  if (setting != CarrierChoice::kAuto || !datagrams_ready) return offer;  // auto without UDP binds tcp already
  if (path_worth_datagrams) {
    offer.prefers_datagrams = true;
  } else {
    offer.setting = CarrierChoice::kTcp;
    offer.chosen_by_auto = true;
  }
  return offer;
}

bool offer_binds_tcp(const CarrierOffer& offer) {
  return offer.setting == CarrierChoice::kTcp || (offer.setting == CarrierChoice::kAuto && !offer.datagrams_ready);
}

}  // namespace lp
