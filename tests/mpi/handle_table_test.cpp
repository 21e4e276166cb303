// HandleTable: LongPipe's request handles never look like Open MPI's (aligned pointers).
#include "handle_table.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>

using lp::mpi::HandleTable;

TEST_CASE("handles: odd, distinct, reused after removal; aligned pointers are never ours") {
  HandleTable<int> table;
  const auto a = table.add(std::make_unique<int>(1));
  const auto b = table.add(std::make_unique<int>(2));
  CHECK(HandleTable<int>::is_ours(a));
  CHECK(HandleTable<int>::is_ours(b));
  CHECK(a != b);
  CHECK(*table.get(a) == 1);
  CHECK(*table.get(b) == 2);
  CHECK(table.live() == 2);

  alignas(8) static int open_mpi_object;
  CHECK_FALSE(HandleTable<int>::is_ours(reinterpret_cast<std::uintptr_t>(&open_mpi_object)));
  CHECK(table.get(reinterpret_cast<std::uintptr_t>(&open_mpi_object)) == nullptr);

  table.remove(a);
  CHECK(table.get(a) == nullptr);
  CHECK_THROWS_AS(table.remove(a), std::invalid_argument);
  const auto c = table.add(std::make_unique<int>(3));
  CHECK(c == a);  // the slot is reused
  CHECK(*table.get(c) == 3);
  CHECK(table.get((std::uintptr_t{1000} << 1) | 1) == nullptr);  // never issued

  int visited = 0;
  table.for_each([&](std::uintptr_t, int& value) { visited += value; });
  CHECK(visited == 5);
}
