// ErasureCode: repair symbols recover any missing data symbols as long as no more are missing than
// repairs arrived, whichever repairs those are; fewer repairs recover nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "carrier/datagram/erasure_code.h"

using lp::ErasureCode;

namespace {

using Symbol = std::vector<std::byte>;

std::vector<Symbol> random_symbols(std::size_t count, std::size_t size, std::mt19937& rng) {
  std::vector<Symbol> out(count, Symbol(size));
  for (Symbol& symbol : out) {
    for (std::byte& b : symbol) b = std::byte(rng() & 0xff);
  }
  return out;
}

std::vector<Symbol> encode(const std::vector<Symbol>& data, std::size_t repairs) {
  const std::size_t size = data.front().size();
  std::vector<Symbol> out(repairs, Symbol(size));
  std::vector<const std::byte*> in;
  for (const Symbol& s : data) in.push_back(s.data());
  std::vector<std::byte*> targets;
  for (Symbol& s : out) targets.push_back(s.data());
  ErasureCode::encode(in, size, 0, targets);
  return out;
}

}  // namespace

TEST_CASE("erasure code: any missing symbols come back from as many repairs", "[erasure]") {
  const std::size_t k = GENERATE(1, 2, 7, 200);
  const std::size_t size = GENERATE(3, 33, 1403);
  CAPTURE(k, size);
  std::mt19937 rng(static_cast<unsigned>(k * 7919 + size));
  const std::vector<Symbol> data = random_symbols(k, size, rng);
  const std::size_t repairs_made = std::min<std::size_t>(k, 20);
  const std::vector<Symbol> repairs = encode(data, repairs_made);
  for (int trial = 0; trial < 20; ++trial) {
    // Lose `missing` data symbols and some repairs; keep exactly `missing` repairs, any of them.
    const std::size_t missing = 1 + rng() % repairs_made;
    std::vector<std::size_t> order(k), repair_order(repairs_made);
    for (std::size_t i = 0; i < k; ++i) order[i] = i;
    for (std::size_t i = 0; i < repairs_made; ++i) repair_order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::shuffle(repair_order.begin(), repair_order.end(), rng);
    std::vector<const std::byte*> known;
    for (const Symbol& s : data) known.push_back(s.data());
    std::vector<std::size_t> lost(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(missing));
    std::sort(lost.begin(), lost.end());
    for (std::size_t j : lost) known[j] = nullptr;
    std::vector<ErasureCode::Repair> kept;
    for (std::size_t r = 0; r < missing; ++r) kept.push_back({repair_order[r], repairs[repair_order[r]].data()});
    std::vector<Symbol> out(missing, Symbol(size));
    std::vector<std::byte*> targets;
    for (Symbol& s : out) targets.push_back(s.data());
    REQUIRE(ErasureCode::decode(known, size, kept, targets));
    for (std::size_t i = 0; i < missing; ++i) REQUIRE(out[i] == data[lost[i]]);
    // One repair fewer than missing: nothing recovered.
    if (missing > 0) {
      kept.pop_back();
      REQUIRE_FALSE(ErasureCode::decode(known, size, kept, targets));
    }
  }
}

TEST_CASE("erasure code: a block of one symbol is repaired by a copy", "[erasure]") {
  std::mt19937 rng(5);
  const std::vector<Symbol> data = random_symbols(1, 100, rng);
  const std::vector<Symbol> repairs = encode(data, 1);
  CHECK(repairs[0] == data[0]);  // c(1, 0, 0) = 1 / (1 XOR 0) = 1
}

TEST_CASE("erasure code: indices beyond GF(256)'s 255 rows are refused", "[erasure]") {
  Symbol symbol(8);
  std::vector<const std::byte*> data(200, symbol.data());
  std::vector<Symbol> out(57, Symbol(8));
  std::vector<std::byte*> targets;
  for (Symbol& s : out) targets.push_back(s.data());
  CHECK_THROWS_AS(ErasureCode::encode(data, 8, 0, targets), std::invalid_argument);  // rows 200..256: beyond one byte
  targets.pop_back();
  CHECK_NOTHROW(ErasureCode::encode(data, 8, 0, targets));
}
