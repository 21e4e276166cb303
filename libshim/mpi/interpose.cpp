// The interposed MPI C functions (interpose.h): MPI_Init(_thread), MPI_Finalize, MPI_Abort and
// MPI_Query_thread, with the front end's state they start and end and the fork handler. The other
// interposed calls: point to point (interpose_point_to_point.cpp), completion
// (interpose_completion.cpp), communicators (interpose_communicators.cpp), collectives
// (interpose_collectives.cpp, interpose_collectives_nonblocking.cpp, interpose_neighbor.cpp).
// Collectives, one-sided operations, I/O and everything else not defined in these files go
// straight to Open MPI. Fortran programs reach these functions through libshim/mpi/fortran/ (Open
// MPI's Fortran bindings call PMPI_* directly).
#include "interpose.h"

#include <pthread.h>

#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

#include "thread_level.h"

namespace lp::mpi {

FrontEnd* front_end = nullptr;
SiteCollectives* collectives = nullptr;

namespace {

int world_rank_for_messages = 0;

void after_fork_in_child() {
  ApiLock::enable(false);  // LongPipe is off in the child (a thread of the parent may have held it)
  if (front_end) front_end->abandon_after_fork();  // its engine belongs to the parent: leaked
  if (collectives) collectives->abandon_after_fork();
  collectives = nullptr;
  front_end = nullptr;
}

}  // namespace

void report(const char* function, const char* what) {
  std::fprintf(stderr, "liblongpipe: MPI rank %d: %s: %s\n", world_rank_for_messages, function, what);
  std::fflush(stderr);
}

void start_front_end() {
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, after_fork_in_child); });
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_for_messages);
  // A job started by MPI_Comm_spawn runs on Open MPI alone: its sites are not the parent job's
  // (LONGPIPE_MPI_SITES names the parent's ranks), and its intercommunicator to the parent is
  // Open MPI's anyway.
  MPI_Comm parent = MPI_COMM_NULL;
  PMPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) return;
  try {
    front_end = FrontEnd::start().release();
    if (front_end) {
      collectives = new SiteCollectives(*front_end);
      collectives->prepare(MPI_COMM_WORLD);
    }
    return;
  } catch (const std::exception& e) {
    report("MPI_Init", (std::string("LongPipe cannot start: ") + e.what()).c_str());
  } catch (...) {
    report("MPI_Init", "LongPipe cannot start: unknown error");
  }
  PMPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace lp::mpi

using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;

// ---- start and end ----

LP_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  lp::mpi::start_front_end();
  int open_mpi_level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&open_mpi_level);
  lp::mpi::settle_thread_level(open_mpi_level, front_end != nullptr);
  return rc;
}

LP_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  lp::mpi::start_front_end();
  *provided = lp::mpi::settle_thread_level(*provided, front_end != nullptr);
  return rc;
}

// What MPI_Init_thread provided (thread_level.h).
LP_EXPORT int MPI_Query_thread(int* provided) { return lp::mpi::query_thread_level(provided); }

LP_EXPORT int MPI_Finalize() {
  if (front_end) {
    guarded("MPI_Finalize", [](FrontEnd&) {
      delete lp::mpi::collectives;  // its sub-communicators, its statistics
      lp::mpi::collectives = nullptr;
      return MPI_SUCCESS;
    });
    guarded("MPI_Finalize", [](FrontEnd& fe) {
      fe.finalize();
      return MPI_SUCCESS;
    });
    delete front_end;
    front_end = nullptr;
    lp::mpi::ApiLock::enable(false);  // MPI: no other thread calls MPI from MPI_Finalize on
  }
  return PMPI_Finalize();
}

LP_EXPORT int MPI_Abort(MPI_Comm comm, int code) { return PMPI_Abort(comm, code); }
