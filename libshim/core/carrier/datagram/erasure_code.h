// ErasureCode: a systematic Reed-Solomon code over GF(2^8) with a Cauchy generator, for the datagram
// carrier's repair datagrams (tail_fec.h). Pure: no state, no I/O; the arithmetic is Intel ISA-L's
// (Debian's libisal2: SIMD GF(2^8) dot products, several GB/s), the matrix algebra is ours.
//
// A block has k data symbols (indices 0..k-1) of `size` bytes. Repair symbol r (0, 1, ...) is
//   repair_r = sum_j c(k, r, j) * data_j,   c(k, r, j) = 1 / ((k + r) XOR j)   in GF(2^8),
// the rows k + r of ISA-L's gf_gen_cauchy1_matrix: any k of the data and repair symbols determine
// the rest (every square submatrix of a Cauchy matrix is invertible), so a block with e missing
// data symbols is recovered from any e of its repairs. Rows stop at 255: k + repairs <= 256.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace lp {

class ErasureCode {
 public:
  // Largest k + number of repairs (GF(2^8): the row index k + r is one byte).
  static constexpr std::size_t kMaxSymbols = 256;

  // Repair symbols first_repair .. first_repair + out.size() - 1 of the block `data` (k = data.size()
  // symbols of `size` bytes each), into `out` (each `size` bytes). Throws std::invalid_argument when
  // k + the highest repair index exceeds the field or a buffer is shorter than `size`.
  static void encode(std::span<const std::byte* const> data, std::size_t size, std::size_t first_repair,
                     std::span<std::byte* const> out);

  // Recovers missing data symbols. `known[j]` is data symbol j or nullptr (missing); `repairs` are
  // repair symbols with their indices, at least as many as are missing (extra ones are not used).
  // `out` gets one `size`-byte buffer per missing symbol, in ascending j. False: fewer repairs than
  // missing symbols (nothing written). Throws std::invalid_argument on indices out of range.
  struct Repair {
    std::size_t index = 0;
    const std::byte* bytes = nullptr;
  };
  static bool decode(std::span<const std::byte* const> known, std::size_t size, std::span<const Repair> repairs,
                     std::span<std::byte* const> out);

  // c(k, r, j), for the tests.
  static std::uint8_t coefficient(std::size_t k, std::size_t repair, std::size_t j);
};

}  // namespace lp
