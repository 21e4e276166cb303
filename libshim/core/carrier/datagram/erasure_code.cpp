#include "carrier/datagram/erasure_code.h"

#include <isa-l/erasure_code.h>

#include <stdexcept>

namespace lp {
namespace {

using Bytes = std::vector<unsigned char>;

unsigned char* raw(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }
unsigned char* raw(const std::byte* p) { return const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(p)); }

// out[rows x size] = matrix[rows x inputs] * inputs, with ISA-L's vectorised dot products.
void multiply(const Bytes& matrix, std::size_t rows, std::span<unsigned char* const> inputs, std::size_t size,
              std::span<unsigned char* const> out) {
  const int k = static_cast<int>(inputs.size());
  Bytes tables(32 * inputs.size() * rows);
  ec_init_tables(k, static_cast<int>(rows), const_cast<unsigned char*>(matrix.data()), tables.data());
  ec_encode_data(static_cast<int>(size), k, static_cast<int>(rows), tables.data(), const_cast<unsigned char**>(inputs.data()),
                 const_cast<unsigned char**>(out.data()));
}

}  // namespace

std::uint8_t ErasureCode::coefficient(std::size_t k, std::size_t repair, std::size_t j) {
  if (j >= k || k + repair >= kMaxSymbols) throw std::invalid_argument("erasure code: symbol index out of range");
  return gf_inv(static_cast<unsigned char>((k + repair) ^ j));
}

void ErasureCode::encode(std::span<const std::byte* const> data, std::size_t size, std::size_t first_repair,
                         std::span<std::byte* const> out) {
  const std::size_t k = data.size();
  if (k == 0 || out.empty()) return;
  if (k + first_repair + out.size() > kMaxSymbols) throw std::invalid_argument("erasure code: block too large");
  Bytes matrix(out.size() * k);
  for (std::size_t r = 0; r < out.size(); ++r) {
    for (std::size_t j = 0; j < k; ++j) matrix[r * k + j] = coefficient(k, first_repair + r, j);
  }
  std::vector<unsigned char*> inputs, outputs;
  for (const std::byte* p : data) inputs.push_back(raw(p));
  for (std::byte* p : out) outputs.push_back(raw(p));
  multiply(matrix, out.size(), inputs, size, outputs);
}

bool ErasureCode::decode(std::span<const std::byte* const> known, std::size_t size, std::span<const Repair> repairs,
                         std::span<std::byte* const> out) {
  const std::size_t k = known.size();
  std::vector<std::size_t> missing, present;
  for (std::size_t j = 0; j < k; ++j) (known[j] ? present : missing).push_back(j);
  const std::size_t e = missing.size();
  if (e == 0) return true;
  if (repairs.size() < e || out.size() < e) return false;
  for (const Repair& repair : repairs) {
    if (k + repair.index >= kMaxSymbols) throw std::invalid_argument("erasure code: repair index out of range");
  }
  // The first e repairs: repair_r - sum_{present j} c(r, j) data_j = sum_{missing j} c(r, j) data_j,
  // i.e. R = A * x with A (e x e) the repairs' coefficients of the missing symbols (a Cauchy
  // submatrix: invertible). x = A^-1 * R + A^-1 * B * present, B (e x present) the coefficients
  // of the present ones: one e x k product over the inputs [present..., repairs...].
  Bytes a(e * e), inverse(e * e);
  for (std::size_t r = 0; r < e; ++r) {
    for (std::size_t c = 0; c < e; ++c) a[r * e + c] = coefficient(k, repairs[r].index, missing[c]);
  }
  if (gf_invert_matrix(a.data(), inverse.data(), static_cast<int>(e)) != 0) return false;  // cannot happen (Cauchy)
  Bytes matrix(e * k, 0);
  for (std::size_t row = 0; row < e; ++row) {
    for (std::size_t p = 0; p < present.size(); ++p) {
      unsigned char sum = 0;
      for (std::size_t r = 0; r < e; ++r) sum ^= gf_mul(inverse[row * e + r], coefficient(k, repairs[r].index, present[p]));
      matrix[row * k + p] = sum;
    }
    for (std::size_t r = 0; r < e; ++r) matrix[row * k + present.size() + r] = inverse[row * e + r];
  }
  std::vector<unsigned char*> inputs, outputs;
  for (std::size_t j : present) inputs.push_back(raw(known[j]));
  for (std::size_t r = 0; r < e; ++r) inputs.push_back(raw(repairs[r].bytes));
  for (std::size_t i = 0; i < e; ++i) outputs.push_back(raw(out[i]));
  multiply(matrix, e, inputs, size, outputs);
  return true;
}

}  // namespace lp
