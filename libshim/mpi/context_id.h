// Pure: how every member of a new communicator finds the same LongPipe context id on its own,
// without a message (so creating a communicator costs nothing across the long link beyond Open
// MPI's own agreement).
//
// A communicator has a 64-bit lineage key and a context id: the key's image in 2 .. 2^31-1 (the
// engine's trailer carries a 32-bit context; the negative half is the collectives' private
// contexts, -1 - id; 0 is MPI_COMM_WORLD). A new communicator's key is a hash of what its members
// all know, and nothing else:
//   - made by a call that is collective over a parent (dup, split, create, cart, graph, merge,
//     idup...): the parent's key, how many such calls this process made on the parent before
//     (MPI has every member call the collectives of a communicator in one order, so the count is
//     the same on every member, also on those that get MPI_COMM_NULL), and the new members' world
//     ranks in rank order (the colors of one split differ);
//   - MPI_Comm_create_group (collective over the group only): the parent's key, the tag, the
//     group's world ranks, and how many such calls with that parent, tag and group came before;
//   - MPI_Intercomm_create (the two sides have different parents): the two groups' world ranks,
//     the group with the lower first world rank first, and how many intercommunicators of exactly
//     these two groups this process made before.
// The same inputs never come twice (the counts only grow), so ids differ by construction and
// equal only by a hash collision: two given communicators share an id with probability 2^-31, and
// only communicators that have a member in common can ever confuse messages (a message names its
// source and destination world ranks). The key, not the 31-bit id, feeds the children: two
// communicators that share an id do not pass it on. A process that would hold two live
// communicators with one id refuses to go on (FrontEnd::register_communicator): an abort rather
// than a message matched on the wrong communicator.
#pragma once

#include <cstdint>
#include <vector>

namespace lp::mpi {

inline constexpr std::uint64_t kWorldLineage = 0x4c6f6e6750697065ull;  // "LongPipe"
inline constexpr int kWorldContext = 0;
inline constexpr int kFirstDerivedContext = 2;

// splitmix64's finalizer: every input bit moves every output bit.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class LineageHash {
 public:
  explicit LineageHash(std::uint64_t domain) : h_(mix64(domain)) {}
  LineageHash& add(std::uint64_t value) {
    h_ = mix64(h_ ^ mix64(value + 0x632be59bd9b4e019ull * ++n_));
    return *this;
  }
  // A list with its length first, so that two lists in a row never read as another pair.
  LineageHash& add(const std::vector<int>& values) {
    add(values.size());
    for (int v : values) add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)));
    return *this;
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_;
  std::uint64_t n_ = 0;
};

// Domains: the derivations never share an input.
inline constexpr std::uint64_t kFromParent = 1;
inline constexpr std::uint64_t kFromGroup = 2;
inline constexpr std::uint64_t kFromTwoGroups = 3;
inline constexpr std::uint64_t kGroupCount = 4;
inline constexpr std::uint64_t kPairCount = 5;

// The members of a new communicator as its members see them: `local` (world ranks in rank order)
// and, for an intercommunicator, `remote`. Both sides of an intercommunicator hash the same list:
// the group with the lower first world rank first (the groups are disjoint).
inline void add_members(LineageHash& hash, const std::vector<int>& local, const std::vector<int>* remote) {
  if (!remote) {
    hash.add(0).add(local);
    return;
  }
  const bool local_first = !local.empty() && (remote->empty() || local.front() < remote->front());
  hash.add(1).add(local_first ? local : *remote).add(local_first ? *remote : local);
}

// After a call collective over the parent (the `sequence`-th such call on it, from 0).
inline std::uint64_t lineage_from_parent(std::uint64_t parent, std::uint64_t sequence, const std::vector<int>& local,
                                         const std::vector<int>* remote = nullptr) {
  LineageHash hash(kFromParent);
  hash.add(parent).add(sequence);
  add_members(hash, local, remote);
  return hash.value();
}

// What MPI_Comm_create_group's calls with one parent, tag and group are counted under.
inline std::uint64_t group_call_key(std::uint64_t parent, int tag, const std::vector<int>& group) {
  const auto tag_bits = static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag));
  return LineageHash(kGroupCount).add(parent).add(tag_bits).add(group).value();
}

// MPI_Comm_create_group: the `sequence`-th call under group_call_key(parent, tag, group).
inline std::uint64_t lineage_from_group(std::uint64_t parent, int tag, const std::vector<int>& group,
                                        std::uint64_t sequence) {
  return LineageHash(kFromGroup).add(group_call_key(parent, tag, group)).add(sequence).value();
}

// What MPI_Intercomm_create's results with these two groups are counted under (either side).
inline std::uint64_t pair_key(const std::vector<int>& local, const std::vector<int>& remote) {
  LineageHash hash(kPairCount);
  add_members(hash, local, &remote);
  return hash.value();
}

// MPI_Intercomm_create: the `sequence`-th intercommunicator of these two groups.
inline std::uint64_t lineage_from_two_groups(const std::vector<int>& local, const std::vector<int>& remote,
                                             std::uint64_t sequence) {
  return LineageHash(kFromTwoGroups).add(pair_key(local, remote)).add(sequence).value();
}

// The context id on the wire: kFirstDerivedContext .. 2^31-1.
inline int context_of(std::uint64_t lineage) {
  constexpr std::uint64_t span = 0x7fffffffull - kFirstDerivedContext + 1;
  return static_cast<int>(kFirstDerivedContext + mix64(lineage ^ 0x5bd1e9955bd1e995ull) % span);
}

}  // namespace lp::mpi
