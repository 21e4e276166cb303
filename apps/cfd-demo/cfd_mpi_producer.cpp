// cfd-mpi-producer: cfd-producer as a plain MPI program (mpi.h only, nothing of LongPipe). Rank 0
// runs the lattice Boltzmann flow and MPI_Sends every frame to each consumer rank (every other rank,
// cfd-mpi-consumer), then collects their summaries and prints the same numbers as cfd-producer
// (stall = time inside MPI_Send). Start it first in an MPMD line:
//   mpirun -np 1 cfd-mpi-producer [options] : -np N cfd-mpi-consumer
#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "command_line.h"
#include "frame_producer.h"
#include "mpi_consumer_group.h"

namespace {

using namespace lp::cfd;

const std::string kUsage = std::string(
                               "mpirun -np 1 cfd-mpi-producer [options] : -np N cfd-mpi-consumer\n"
                               "  rank 0 produces; ranks 1..N are the consumers (N from mpirun)\n") +
                           FrameProducer::kOptionsUsage;

int run(int argc, char** argv) {
  CommandLine args(argc, argv, kUsage);
  FrameProducer::Options options = FrameProducer::parse(args);
  args.finish();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0 || size < 2) {
    throw std::invalid_argument("cfd-mpi-producer must be rank 0 with at least one cfd-mpi-consumer after it "
                                "(mpirun -np 1 cfd-mpi-producer ... : -np N cfd-mpi-consumer); it is rank " +
                                std::to_string(rank) + " of " + std::to_string(size));
  }
  options.consumers.consumers = size - 1;

  FrameProducer producer(options);  // checks the flow set-up before any frame is made
  std::printf("cfd-mpi-producer: %s\n", producer.flow().config().describe().c_str());
  std::filesystem::create_directories(options.consumers.output_folder);
  MpiConsumerGroup consumers(options.consumers);
  producer.run(consumers, "mpi");
  const bool delivered = producer.report("cfd-mpi-producer", "MPI");
  if (!consumers.all_answered()) {
    std::fprintf(stderr, "cfd-mpi-producer: a consumer never answered: ending the job\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return delivered ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-mpi-producer: %s\n", error.what());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);  // the consumers wait for frames that will not come
  }
  MPI_Finalize();
  return status;
}
