// Fuzz target: the repair path of the datagram carrier (libshim/core/tail_fec.*, erasure_code.*):
// REPAIR frames from a peer go through decode_repair into TailFecReceiver::on_repair, which holds
// their symbols per block and, with the units the ARQ received, decodes lost units with the
// Reed-Solomon code and hands them to the ARQ as received ones. The input sets up a tail of units
// (their lengths and contents), cut into blocks as the sender cuts them; then a list of operations:
//   - a unit arrives (the ARQ takes it, the FEC receiver may decode its block);
//   - a genuine repair symbol of a block (encoded by the harness as TailFecSender encodes);
//   - a forged REPAIR payload (any first sequence, count, index, symbol length and bytes), decoded
//     by decode_repair as the channel does;
//   - the channel takes the units the ARQ has in order (TailFecReceiver::on_delivered);
//   - the erasure code alone: any block size, any missing symbols, any distinct repair indices.
// Beyond "no crash, no sanitizer report": while no forged repair came, on_repair never refuses a
// genuine symbol and every unit delivered (received or recovered) is the sender's unit exactly; the
// erasure code recovers exactly the data it encoded, or says it has too few repairs.
#include <algorithm>
#include <cstring>
#include <vector>

#include "arq/arq.h"
#include "carrier/datagram/datagram_channel.h"
#include "carrier/datagram/erasure_code.h"
#include "fuzz_input.h"
#include "carrier/datagram/tail_fec.h"
#include "wire/wire_frame.h"

namespace {

// A unit as a symbol of `size` bytes: length u16 | unit | zeros (tail_fec.h).
std::vector<std::byte> symbol_of(const lp::ArqPayload& unit, std::size_t size) {
  std::vector<std::byte> out(size);
  out[0] = std::byte(unit.size() >> 8);
  out[1] = std::byte(unit.size() & 0xff);
  std::copy(unit.begin(), unit.end(), out.begin() + 2);
  return out;
}

// Repair symbol `index` of the block [first, first + count) of `units`.
std::vector<std::byte> genuine_repair(const std::vector<lp::ArqPayload>& units, std::size_t first, std::size_t count,
                                      std::size_t index, std::size_t& size) {
  size = 0;
  for (std::size_t j = first; j < first + count; ++j) size = std::max(size, 2 + units[j].size());
  std::vector<std::vector<std::byte>> padded;
  std::vector<const std::byte*> data;
  for (std::size_t j = first; j < first + count; ++j) padded.push_back(symbol_of(units[j], size));
  for (const auto& p : padded) data.push_back(p.data());
  std::vector<std::byte> out(size);
  std::byte* target = out.data();
  lp::ErasureCode::encode(data, size, index, std::span<std::byte* const>(&target, 1));
  return out;
}

// The erasure code on its own: k data symbols, some missing, recovered from distinct repairs.
void erasure_round_trip(lp::fuzz::FuzzInput& input) {
  const std::size_t k = 1 + input.u8() % 64, size = 1 + input.u8() % 64;
  const std::size_t repairs_made = 1 + input.u8() % 16;
  const std::size_t first_repair = input.u8() % (lp::ErasureCode::kMaxSymbols - k - repairs_made + 1);
  std::vector<std::vector<std::byte>> data(k, std::vector<std::byte>(size));
  for (auto& symbol : data) {
    const auto bytes = input.bytes(size);
    std::copy(bytes.begin(), bytes.end(), symbol.begin());
  }
  std::vector<const std::byte*> data_pointers;
  for (const auto& symbol : data) data_pointers.push_back(symbol.data());
  std::vector<std::vector<std::byte>> repairs(repairs_made, std::vector<std::byte>(size));
  std::vector<std::byte*> repair_pointers;
  for (auto& symbol : repairs) repair_pointers.push_back(symbol.data());
  lp::ErasureCode::encode(data_pointers, size, first_repair, repair_pointers);
  // Missing: a mask of the first 64 symbols; repairs offered: a mask of those made.
  const std::uint64_t missing_mask = input.u64(), offered_mask = input.u16();
  std::vector<const std::byte*> known(data_pointers);
  std::vector<std::size_t> missing;
  for (std::size_t j = 0; j < k; ++j) {
    if (missing_mask >> j & 1) {
      known[j] = nullptr;
      missing.push_back(j);
    }
  }
  std::vector<lp::ErasureCode::Repair> offered;
  for (std::size_t r = 0; r < repairs_made; ++r) {
    if (offered_mask >> r & 1) offered.push_back({first_repair + r, repairs[r].data()});
  }
  std::vector<std::vector<std::byte>> out(missing.size(), std::vector<std::byte>(size));
  std::vector<std::byte*> out_pointers;
  for (auto& buffer : out) out_pointers.push_back(buffer.data());
  const bool decoded = lp::ErasureCode::decode(known, size, offered, out_pointers);
  LP_FUZZ_CHECK(decoded == (offered.size() >= missing.size()));
  if (!decoded) return;
  for (std::size_t i = 0; i < missing.size(); ++i) LP_FUZZ_CHECK(out[i] == data[missing[i]]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  // The tail: up to 48 units of up to 255 bytes, in blocks of `block` units (the last may be shorter).
  const std::size_t unit_count = 1 + input.u8() % 48;
  const std::size_t block = 1 + input.u8() % 24;
  std::vector<lp::ArqPayload> units(unit_count);
  for (auto& unit : units) {
    const std::size_t length = 1 + input.u8();
    unit.assign(length, std::byte{input.u8()});
  }
  const auto block_of = [&](std::size_t seq, std::size_t& first, std::size_t& count) {
    first = seq / block * block;
    count = std::min(block, unit_count - first);
  };

  lp::ArqConfig arq_config;
  lp::configure_for_datagrams(arq_config, lp::Config{});
  lp::Arq arq(arq_config);
  lp::TailFecReceiver receiver;
  const lp::ArqTime now{};
  bool forged = false;
  std::uint64_t delivered = 0;
  std::vector<std::byte> frame;
  while (!input.empty()) {
    const std::uint8_t op = input.u8();
    switch (op % 5) {
      case 0: {  // a unit arrives
        const std::size_t seq = input.u8() % unit_count;
        if (arq.on_data(seq, units[seq], now)) receiver.on_data(arq, seq, now);
        break;
      }
      case 1: {  // a genuine repair symbol
        std::size_t first = 0, count = 0, symbol_size = 0;
        block_of(input.u8() % unit_count, first, count);
        const std::size_t index = input.u8() % (lp::ErasureCode::kMaxSymbols - count);
        const std::vector<std::byte> symbol = genuine_repair(units, first, count, index, symbol_size);
        const bool taken = receiver.on_repair(arq, {first, count, index, symbol}, now);
        LP_FUZZ_CHECK(taken || forged);
        break;
      }
      case 2: {  // a forged REPAIR payload: first u64 | count u8 | index u8 | symbol
        frame.clear();
        const std::uint8_t how = input.u8();
        const std::uint64_t first = how & 1 ? input.u64() : input.u8() % (unit_count + 8);
        for (int i = 7; i >= 0; --i) frame.push_back(std::byte(first >> (8 * i)));
        frame.push_back(std::byte{input.u8()});
        frame.push_back(std::byte{input.u8()});
        const auto symbol = input.bytes(how & 2 ? input.u16() % (lp::kMaxRepairSymbol + 8) : input.u8());
        frame.insert(frame.end(), symbol.begin(), symbol.end());
        try {
          const lp::RepairFrame repair = lp::decode_repair(frame);
          forged = true;
          (void)receiver.on_repair(arq, repair, now);
        } catch (const lp::MalformedFrame&) {
          // The channel counts it malformed and drops it.
        }
        break;
      }
      case 3:  // the channel takes what the ARQ has in order
        while (auto delivery = arq.receive()) {
          LP_FUZZ_CHECK(delivery->seq == delivered);
          if (!forged) LP_FUZZ_CHECK(delivery->seq < unit_count && delivery->payload == units[delivery->seq]);
          ++delivered;
          receiver.on_delivered(delivery->seq, std::move(delivery->payload));
        }
        break;
      case 4:
        erasure_round_trip(input);
        break;
    }
  }
  LP_FUZZ_CHECK(receiver.recovered_units() <= receiver.repairs_received() * 255);
  return 0;
}
