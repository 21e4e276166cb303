// FrontEnd's request calls besides waits and tests (front_end.h): Start, Request_free, Cancel,
// Request_get_status, and the Fortran handles of LongPipe's requests and matched messages.
#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {
namespace {

// Fortran handles of LongPipe requests and messages start here (Open MPI's are small table indices).
constexpr int kFortranRequestBase = 1 << 30;

template <typename Handle>
MPI_Fint fortran_handle_of(Handle ours) {
  return kFortranRequestBase + static_cast<MPI_Fint>(reinterpret_cast<std::uintptr_t>(ours) >> 1);
}

template <typename Handle>
Handle handle_of_fortran(MPI_Fint fortran) {
  return reinterpret_cast<Handle>((static_cast<std::uintptr_t>(fortran - kFortranRequestBase) << 1) | 1u);
}

}  // namespace

int FrontEnd::start(MPI_Request* request) {
  Request* r = ours(*request);
  if (!r) return PMPI_Start(request);
  return start_request(*r, reinterpret_cast<std::uintptr_t>(*request));
}

int FrontEnd::startall(int count, MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    const int rc = start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int FrontEnd::request_free(MPI_Request* request) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*request);
  Request* r = requests_.get(handle);
  if (!r) return PMPI_Request_free(request);
  *request = MPI_REQUEST_NULL;
  if (r->native != MPI_REQUEST_NULL) {
    PMPI_Request_free(&r->native);  // Open MPI finishes that receive on its own
    remove_request(handle);
    return MPI_SUCCESS;
  }
  if (r->free_request() == RequestLifecycle::Free::kRemoveAtCompletion) {
    // A posted receive still takes its message, a synchronous send still waits for its match, a
    // collective goes on (progress advances it): removed when that happens.
    return MPI_SUCCESS;
  }
  if (r->kind == Request::Kind::kCollective) collectives_in_flight_.remove(handle);
  remove_request(handle);
  return MPI_SUCCESS;
}

int FrontEnd::cancel(MPI_Request* request) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*request);
  Request* r = requests_.get(handle);
  if (!r) return PMPI_Cancel(request);
  if (!r->cancellable()) return MPI_SUCCESS;  // as Open MPI: sends are not cancelled
  if (r->native != MPI_REQUEST_NULL) return PMPI_Cancel(&r->native);
  std::lock_guard lock(mutex_);
  if (!matching_.is_posted(*r)) return MPI_SUCCESS;  // matched already: it completes
  unlist_receive(*r);
  r->complete_now();  // never freed: a freed request has no handle left to cancel
  set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, true);
  return MPI_SUCCESS;
}

int FrontEnd::request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Request* r = ours(request);
  if (!r) {
    if (!collectives_in_flight_.empty()) progress(collectives_await_messages());
    return PMPI_Request_get_status(request, flag, status);
  }
  if (!poll(*r)) {
    progress(true);
    poll(*r);
  }
  *flag = !r->pending();
  if (*flag && status != MPI_STATUS_IGNORE) {
    if (r->active) {
      *status = r->status;
      status->MPI_ERROR = r->error;
    } else {
      set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
    }
  }
  return MPI_SUCCESS;
}

int FrontEnd::request_c2f(MPI_Request request) {
  return is_ours(request) ? fortran_handle_of(request) : PMPI_Request_c2f(request);
}

MPI_Request FrontEnd::request_f2c(int handle) {
  return handle < kFortranRequestBase ? PMPI_Request_f2c(handle) : handle_of_fortran<MPI_Request>(handle);
}

MPI_Fint FrontEnd::message_c2f(MPI_Message message) {
  return is_ours(message) ? fortran_handle_of(message) : PMPI_Message_c2f(message);
}

MPI_Message FrontEnd::message_f2c(MPI_Fint handle) {
  return handle < kFortranRequestBase ? PMPI_Message_f2c(handle) : handle_of_fortran<MPI_Message>(handle);
}

}  // namespace lp::mpi
