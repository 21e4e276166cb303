// NativeReceiveOrder + receive_matches: when a receive or probe from a same-site rank may bypass
// LongPipe's matching, and which pending receive an Open MPI message belongs to.
#include "native_receive_order.h"

#include <catch2/catch.hpp>

using lp::mpi::kAnySource;
using lp::mpi::kAnyTag;
using lp::mpi::NativeReceiveOrder;
using lp::mpi::receive_matches;

TEST_CASE("native order: nothing pending holds nothing back") {
  const NativeReceiveOrder order;
  CHECK(order.empty());
  CHECK_FALSE(order.holds_back(1));
  CHECK_FALSE(order.holds_back(kAnySource));
}

TEST_CASE("native order: a pending wildcard receive holds back every source") {
  NativeReceiveOrder order;
  order.add(kAnySource);
  CHECK_FALSE(order.empty());
  CHECK(order.holds_back(1));
  CHECK(order.holds_back(5));
  CHECK(order.holds_back(kAnySource));
  order.remove(kAnySource);
  CHECK(order.empty());
  CHECK_FALSE(order.holds_back(1));
}

TEST_CASE("native order: a receive queued behind a wildcard still holds back its source after the wildcard") {
  NativeReceiveOrder order;
  order.add(kAnySource);  // MPI_Irecv(MPI_ANY_SOURCE)
  order.add(1);           // MPI_Irecv(1), queued behind it
  order.remove(kAnySource);  // the wildcard completes
  CHECK_FALSE(order.empty());
  CHECK(order.holds_back(1));            // a later receive from rank 1 must queue too
  CHECK_FALSE(order.holds_back(2));      // rank 2's messages are no pending receive's
  CHECK(order.holds_back(kAnySource));   // a wildcard probe may see rank 1's message
  order.remove(1);
  CHECK(order.empty());
  CHECK_FALSE(order.holds_back(1));
}

TEST_CASE("native order: counts per source, not just presence") {
  NativeReceiveOrder order;
  order.add(3);
  order.add(3);
  order.add(4);
  order.remove(3);
  CHECK(order.holds_back(3));
  order.remove(3);
  CHECK_FALSE(order.holds_back(3));
  CHECK(order.holds_back(4));
  order.remove(4);
  CHECK(order.empty());
}

TEST_CASE("receive_matches: source and tag unless wildcards") {
  CHECK(receive_matches(1, 7, 1, 7));
  CHECK(receive_matches(kAnySource, 7, 3, 7));
  CHECK(receive_matches(1, kAnyTag, 1, 9));
  CHECK(receive_matches(kAnySource, kAnyTag, 2, 0));
  CHECK_FALSE(receive_matches(1, 7, 2, 7));
  CHECK_FALSE(receive_matches(1, 7, 1, 8));
  CHECK_FALSE(receive_matches(kAnySource, 7, 1, 8));
}
