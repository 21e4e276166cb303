// The context ids every member of a new communicator derives on its own (context_id.h): the same
// inputs give the same id, every input that tells two communicators apart changes it, both sides
// of an intercommunicator agree, and ids stay in the wire's positive range.
#include "context_id.h"

#include <catch2/catch.hpp>

#include <set>
#include <unordered_set>

using namespace lp::mpi;

TEST_CASE("context id: deterministic, in 2 .. 2^31-1") {
  const std::vector<int> members{0, 1, 2, 3};
  const std::uint64_t a = lineage_from_parent(kWorldLineage, 0, members);
  CHECK(a == lineage_from_parent(kWorldLineage, 0, members));
  for (std::uint64_t lineage : {std::uint64_t{0}, a, ~std::uint64_t{0}, kWorldLineage}) {
    const int context = context_of(lineage);
    CHECK(context >= kFirstDerivedContext);
    CHECK(context <= 0x7fffffff);
  }
}

TEST_CASE("context id: the parent, the call's position and the members each tell communicators apart") {
  const std::vector<int> members{0, 1, 2, 3};
  const std::uint64_t base = lineage_from_parent(kWorldLineage, 0, members);
  CHECK(base != lineage_from_parent(kWorldLineage, 1, members));        // the next dup
  CHECK(base != lineage_from_parent(base, 0, members));                 // a dup of the dup
  CHECK(base != lineage_from_parent(kWorldLineage, 0, {0, 1}));         // another color of one split
  CHECK(lineage_from_parent(kWorldLineage, 0, {0, 1}) != lineage_from_parent(kWorldLineage, 0, {2, 3}));
  CHECK(base != lineage_from_parent(kWorldLineage, 0, {3, 2, 1, 0}));   // another order
  CHECK(base != lineage_from_group(kWorldLineage, 0, members, 0));      // create_group is another domain
  CHECK(lineage_from_group(kWorldLineage, 0, members, 0) != lineage_from_group(kWorldLineage, 1, members, 0));
  CHECK(lineage_from_group(kWorldLineage, 0, members, 0) != lineage_from_group(kWorldLineage, 0, members, 1));
  CHECK(group_call_key(kWorldLineage, 5, {0, 1}) != group_call_key(kWorldLineage, 5, {0, 2}));
  // Lists are length-prefixed: an intra-communicator {0,1,2} is not the intercommunicator {0},{1,2}.
  const std::vector<int> remote{1, 2};
  CHECK(lineage_from_parent(kWorldLineage, 0, {0, 1, 2}) != lineage_from_parent(kWorldLineage, 0, {0}, &remote));
}

TEST_CASE("context id: both sides of an intercommunicator derive the same one") {
  const std::vector<int> low{0, 2}, high{1, 3, 5};
  CHECK(lineage_from_parent(77, 4, low, &high) == lineage_from_parent(77, 4, high, &low));
  CHECK(pair_key(low, high) == pair_key(high, low));
  CHECK(lineage_from_two_groups(low, high, 0) == lineage_from_two_groups(high, low, 0));
  CHECK(lineage_from_two_groups(low, high, 0) != lineage_from_two_groups(low, high, 1));
  const std::vector<int> other{4};
  CHECK(pair_key(low, high) != pair_key(low, other));
}

TEST_CASE("context id: a million derivations spread over the 31-bit range") {
  // A long run's worth of dups, splits and nested dups: the ids are the hash's, so their
  // collisions must be as rare as chance (about n^2 / 2^32 pairs: ~233 for a million).
  std::unordered_set<int> seen;
  std::unordered_set<std::uint64_t> lineages;
  int collisions = 0;
  std::uint64_t parent = kWorldLineage;
  for (std::uint64_t i = 0; i < 1'000'000; ++i) {
    const std::vector<int> members{0, static_cast<int>(i % 7) + 1};
    const std::uint64_t lineage = lineage_from_parent(parent, i, members);
    REQUIRE(lineages.insert(lineage).second);  // 64-bit keys: none repeats
    if (!seen.insert(context_of(lineage)).second) ++collisions;
    if (i % 1000 == 999) parent = lineage;
  }
  CHECK(collisions < 400);
  // Nothing lands on MPI_COMM_WORLD's id or the unused 1.
  CHECK(seen.count(kWorldContext) == 0);
  CHECK(seen.count(1) == 0);
}
