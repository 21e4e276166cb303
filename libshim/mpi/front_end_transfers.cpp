// FrontEnd's own transfers for the site-aware collectives (front_end.h, collectives.cpp): bytes
// between leaders in segments on LongPipe contexts no communicator has, and the requests of the
// nonblocking collectives.
#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {
// ---------------------------------------------------------------------------------------------
// Messages of the site-aware collectives (collectives.cpp)

int FrontEnd::send_bytes(int dest_world, int context, int tag, const std::vector<std::byte>& body, MPI_Comm comm) {
  CommunicatorInfo private_context;
  private_context.context = context;
  for (const std::vector<std::byte>& segment : split_transfer(body, segment_bytes_)) {
    const int rc = send_remote(segment.data(), static_cast<int>(segment.size()), MPI_BYTE, dest_world, tag, comm,
                               private_context);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int FrontEnd::receive_bytes(int source_world, int context, int tag, MPI_Comm comm, std::vector<std::byte>* body) {
  const ReceivePattern pattern{context, source_world, tag};
  TransferAssembler transfer;
  int error = MPI_SUCCESS;
  wait_rounds([&] {
    if (try_take_bytes(source_world, context, tag, &transfer, &error)) return WaitRound::kDone;
    progress(true);
    std::lock_guard lock(mutex_);
    return matching_.probe(pattern) ? WaitRound::kAdvanced : WaitRound::kWaiting;  // a segment is here
  });
  if (error == MPI_ERR_INTERN) {
    return report_error(comm, MPI_ERR_INTERN, "a malformed collective transfer from MPI rank " +
                                                  std::to_string(source_world));
  }
  if (error != MPI_SUCCESS) return report_error(comm, error, unreachable(source_world));
  *body = transfer.take();
  return MPI_SUCCESS;
}

bool FrontEnd::try_take_bytes(int source_world, int context, int tag, TransferAssembler* transfer, int* error) {
  const ReceivePattern pattern{context, source_world, tag};
  *error = MPI_SUCCESS;
  while (!transfer->complete()) {
    std::unique_lock lock(mutex_);
    auto found = matching_.take(pattern);
    if (found) took_unexpected_locked();
    lock.unlock();
    if (!found) break;
    if (!transfer->add(found->second->body)) {
      *error = MPI_ERR_INTERN;  // a malformed transfer
      return true;
    }
  }
  if (transfer->complete()) return true;
  if (!failed_world_ranks_.count(source_world)) return false;
  *error = MPI_ERR_OTHER;
  return true;
}

int FrontEnd::start_collective(std::unique_ptr<PendingCollective> collective, MPI_Comm comm, MPI_Request* request) {
  auto r = std::make_unique<Request>();
  r->kind = Request::Kind::kCollective;
  r->comm = comm;
  r->collective = std::move(collective);
  set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  const std::uintptr_t handle = new_request(std::move(r));
  *request = reinterpret_cast<MPI_Request>(handle);
  collectives_in_flight_.push_back(handle);
  progress(false);  // it may be complete already (a root's Ibcast with nothing to wait for)
  return MPI_SUCCESS;
}

}  // namespace lp::mpi
