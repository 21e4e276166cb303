// FrontEnd's completion calls (front_end.h): waits and tests over LongPipe's requests and Open
// MPI's together, and the one wait loop that every wait and probe runs.
#include <algorithm>
#include <optional>

#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {
// ---------------------------------------------------------------------------------------------
// Completion

bool FrontEnd::poll(Request& r) {
  if (!r.pending()) return true;
  settle();  // what the progress thread matched or sent
  if (r.complete) return true;
  if (r.kind == Request::Kind::kCollective) {
    int failed_world = -1;
    if (r.collective->advance(&r.error, &failed_world)) {
      r.complete = true;
      r.peer_world = failed_world;
      r.status.MPI_ERROR = r.error;
    }
    return r.complete;
  }
  if (r.native != MPI_REQUEST_NULL) {
    int flag = 0;
    const int rc = PMPI_Test(&r.native, &flag, &r.status);
    if (flag) {
      r.complete = true;
      r.error = rc != MPI_SUCCESS ? rc : r.status.MPI_ERROR;
      if (r.error == MPI_ERR_PENDING) r.error = MPI_SUCCESS;
    }
  }
  return r.complete;
}

bool FrontEnd::waits_on_open_mpi(const Request& r) {
  if (r.kind == Request::Kind::kCollective) return !r.complete && r.collective->waits_on_open_mpi();
  return r.native != MPI_REQUEST_NULL || r.may_match_native;
}

int FrontEnd::finish(MPI_Request* slot, MPI_Status* status) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*slot);
  Request& r = *requests_.get(handle);
  if (r.kind == Request::Kind::kCollective) collectives_in_flight_.remove(handle);
  if (status != MPI_STATUS_IGNORE) {
    *status = r.status;
    status->MPI_ERROR = r.error;
  }
  const int error = r.error;
  const MPI_Comm comm = r.comm;
  const int peer_world = r.peer_world;
  switch (r.finish()) {
    case RequestLifecycle::Finish::kEmptyStatus:  // an inactive persistent request
      if (status != MPI_STATUS_IGNORE) set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
      return MPI_SUCCESS;
    case RequestLifecycle::Finish::kDeactivate:
      break;
    case RequestLifecycle::Finish::kRemove:
      remove_request(handle);
      *slot = MPI_REQUEST_NULL;
      break;
  }
  if (error == MPI_SUCCESS) return MPI_SUCCESS;
  if (error == MPI_ERR_TRUNCATE) return report_error(comm, error, "message truncated");
  if (peer_world >= 0 && failed_world_ranks_.count(peer_world)) {
    return report_error(comm, error, unreachable(peer_world));
  }
  return report_error(comm, error, "request failed");
}

void FrontEnd::wait_rounds(const std::function<WaitRound()>& round) {
  run_wait_rounds(round, [this](IdleStep step) { idle(step); });
}

bool FrontEnd::wait_rounds(const std::function<WaitRound()>& round, std::chrono::steady_clock::time_point deadline) {
  return run_wait_rounds(round, [this](IdleStep step) { idle(step); }, deadline,
                         [] { return std::chrono::steady_clock::now(); });
}

int FrontEnd::wait(MPI_Request* request, MPI_Status* status) {
  Request* r = ours(*request);
  if (!r) return wait_native(request, status);
  wait_rounds([&] {
    if (poll(*r)) return WaitRound::kDone;
    // A collective that waits for Open MPI only needs no message from the engine yet.
    progress(r->kind != Request::Kind::kCollective || !waits_on_open_mpi(*r));
    return poll(*r) ? WaitRound::kDone : waiting(waits_on_open_mpi(*r));
  });
  return finish(request, status);
}

bool FrontEnd::collectives_await_messages() {
  for (std::uintptr_t handle : collectives_in_flight_) {
    if (!waits_on_open_mpi(*requests_.get(handle))) return true;
  }
  return false;
}

int FrontEnd::wait_native(MPI_Request* request, MPI_Status* status) {
  std::optional<int> tested;  // PMPI_Test's result once it completed (or failed)
  wait_rounds([&] {
    if (collectives_in_flight_.empty()) return WaitRound::kDone;
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    if (flag || rc != MPI_SUCCESS) {
      tested = rc;
      return WaitRound::kDone;
    }
    progress(collectives_await_messages());
    return WaitRound::kWaitingOnOpenMpi;
  });
  return tested ? *tested : PMPI_Wait(request, status);
}

void FrontEnd::progress_until(const std::function<bool()>& done) {
  wait_rounds([&] {
    if (done()) return WaitRound::kDone;
    const bool await_messages = collectives_await_messages();
    progress(await_messages);
    return done() ? WaitRound::kDone : waiting(!await_messages);
  });
}

int FrontEnd::test(MPI_Request* request, int* flag, MPI_Status* status) {
  Request* r = ours(*request);
  if (!r) {
    if (!collectives_in_flight_.empty()) progress(collectives_await_messages());
    return PMPI_Test(request, flag, status);
  }
  if (!poll(*r)) {
    progress(true);
    if (!poll(*r)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return finish(request, status);
}

int FrontEnd::testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Testall(count, requests, flag, statuses);
  progress(true);
  // MPI_Testall completes nothing unless everything is complete.
  for (int i = 0; i < count; ++i) {
    if (Request* r = ours(requests[i])) {
      if (!poll(*r)) {
        *flag = 0;
        return MPI_SUCCESS;
      }
    }
  }
  // Ours are all done; let Open MPI test its own (Testall on a copy keeps them if not all done).
  std::vector<MPI_Request> natives;
  std::vector<int> where;
  for (int i = 0; i < count; ++i) {
    if (!is_ours(requests[i])) {
      natives.push_back(requests[i]);
      where.push_back(i);
    }
  }
  std::vector<MPI_Status> native_statuses(natives.size());
  int native_flag = 1;
  int rc = MPI_SUCCESS;
  if (!natives.empty()) {
    rc = PMPI_Testall(static_cast<int>(natives.size()), natives.data(), &native_flag, native_statuses.data());
  }
  if (!native_flag) {
    *flag = 0;
    return rc;
  }
  *flag = 1;
  bool failed = rc != MPI_SUCCESS;
  for (std::size_t k = 0; k < natives.size(); ++k) {
    requests[where[k]] = natives[k];
    if (statuses != MPI_STATUSES_IGNORE) statuses[where[k]] = native_statuses[k];
  }
  for (int i = 0; i < count; ++i) {
    if (!is_ours(requests[i])) continue;
    MPI_Status own;
    if (finish(&requests[i], &own) != MPI_SUCCESS) failed = true;
    if (statuses != MPI_STATUSES_IGNORE) statuses[i] = own;
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int FrontEnd::waitall(int count, MPI_Request* requests, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Waitall(count, requests, statuses);
  std::vector<char> done(static_cast<std::size_t>(count), 0);
  bool failed = false;
  int remaining = count;
  wait_rounds([&] {
    if (remaining == 0) return WaitRound::kDone;
    progress(true);
    bool advanced = false;
    bool native_pending = false;
    for (int i = 0; i < count; ++i) {
      if (done[i]) continue;
      MPI_Status own;
      MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? &own : &statuses[i];
      if (Request* r = ours(requests[i])) {
        if (!poll(*r)) {
          native_pending = native_pending || waits_on_open_mpi(*r);
          continue;
        }
        if (finish(&requests[i], status) != MPI_SUCCESS) failed = true;
      } else {
        int flag = 0;
        const int rc = PMPI_Test(&requests[i], &flag, status);
        if (!flag) {
          native_pending = true;
          continue;
        }
        if (rc != MPI_SUCCESS) {
          status->MPI_ERROR = rc;
          failed = true;
        } else if (statuses != MPI_STATUSES_IGNORE) {
          status->MPI_ERROR = MPI_SUCCESS;
        }
      }
      done[i] = 1;
      --remaining;
      advanced = true;
    }
    if (remaining == 0) return WaitRound::kDone;
    return advanced ? WaitRound::kAdvanced : waiting(native_pending);
  });
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int FrontEnd::testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Testany(count, requests, index, flag, status);
  progress(true);
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (Request* r = ours(requests[i])) {
      if (!r->active) continue;
      any_active = true;
      if (!poll(*r)) continue;
      *index = i;
      *flag = 1;
      return finish(&requests[i], status);
    }
    if (requests[i] == MPI_REQUEST_NULL) continue;
    int done = 0, one_index = 0;
    const int rc = PMPI_Testany(1, &requests[i], &one_index, &done, status);
    if (!done) {
      any_active = true;
      continue;
    }
    if (one_index == MPI_UNDEFINED) continue;  // an inactive persistent request of Open MPI's
    *index = i;
    *flag = 1;
    return rc;
  }
  *index = MPI_UNDEFINED;
  *flag = any_active ? 0 : 1;
  if (!any_active && status != MPI_STATUS_IGNORE) set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  return MPI_SUCCESS;
}

int FrontEnd::waitany(int count, MPI_Request* requests, int* index, MPI_Status* status) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Waitany(count, requests, index, status);
  int rc = MPI_SUCCESS;
  wait_rounds([&] {
    int flag = 0;
    rc = testany(count, requests, index, &flag, status);
    if (flag || rc != MPI_SUCCESS) return WaitRound::kDone;
    bool native_pending = false;
    for (int i = 0; i < count; ++i) {
      Request* r = ours(requests[i]);
      native_pending = native_pending || !r || waits_on_open_mpi(*r);
    }
    return waiting(native_pending);
  });
  return rc;
}

int FrontEnd::testsome(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Testsome(count, requests, outcount, indices, statuses);
  progress(true);
  bool any_active = false;
  bool failed = false;
  *outcount = 0;
  for (int i = 0; i < count; ++i) {
    MPI_Status own;
    MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? &own : &statuses[*outcount];
    if (Request* r = ours(requests[i])) {
      if (!r->active) continue;
      any_active = true;
      if (!poll(*r)) continue;
      if (finish(&requests[i], status) != MPI_SUCCESS) failed = true;
    } else {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      // An inactive persistent request of Open MPI's counts as not active: ask Testsome alone.
      int one_out = 0, one_index = 0;
      const int rc = PMPI_Testsome(1, &requests[i], &one_out, &one_index, status);
      if (one_out == MPI_UNDEFINED) continue;
      any_active = true;
      if (one_out == 0) continue;
      if (rc != MPI_SUCCESS) failed = true;
    }
    indices[(*outcount)++] = i;
  }
  if (!any_active) *outcount = MPI_UNDEFINED;
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int FrontEnd::waitsome(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  int rc = MPI_SUCCESS;
  wait_rounds([&] {
    rc = testsome(count, requests, outcount, indices, statuses);
    return *outcount != 0 || rc != MPI_SUCCESS ? WaitRound::kDone : WaitRound::kWaitingOnOpenMpi;
  });
  return rc;
}

}  // namespace lp::mpi
