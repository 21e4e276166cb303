// cfd-mpi: the CFD demo's producer and consumer as one plain MPI program (mpi.h only, nothing of
// LongPipe), SPMD as MPI programs are: rank 0 runs the lattice Boltzmann flow and MPI_Sends every
// frame to each consumer (every other rank), then collects their summaries and prints the same
// numbers as cfd-producer (stall = time inside MPI_Send); each consumer rank takes its options from
// rank 0, renders and checks the frames and reports exactly as cfd-consumer does (FrameConsumer).
// The solver loop and report are FrameProducer's, shared with the PVM programs.
//   mpirun -np 2 cfd-mpi [options]     (rank 1 on the other site, e.g. apps/mpi-sites)
#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cfd_protocol.h"
#include "command_line.h"
#include "frame.h"
#include "frame_consumer.h"
#include "frame_producer.h"
#include "mpi_consumer_group.h"

namespace {

using namespace lp::cfd;

constexpr int kProducerRank = 0;

const std::string kUsage = std::string(
                               "mpirun -np N cfd-mpi [options]\n"
                               "  rank 0 produces; ranks 1..N-1 consume (each writes <--out>/consumer-<rank - 1>)\n") +
                           FrameProducer::kOptionsUsage;

int run_producer(int argc, char** argv, int size) {
  CommandLine args(argc, argv, kUsage);
  FrameProducer::Options options = FrameProducer::parse(args);
  args.finish();
  if (size < 2) throw std::invalid_argument("cfd-mpi needs at least 2 ranks (rank 0 produces, the others consume)");
  options.consumers.consumers = size - 1;

  FrameProducer producer(options);  // checks the flow set-up before any frame is made
  std::printf("cfd-mpi: %s\n", producer.flow().config().describe().c_str());
  std::filesystem::create_directories(options.consumers.output_folder);
  MpiConsumerGroup consumers(options.consumers);
  producer.run(consumers, "mpi");
  const bool delivered = producer.report("cfd-mpi", "MPI");
  if (!consumers.all_answered()) {
    std::fprintf(stderr, "cfd-mpi: a consumer never answered: ending the job\n");
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return delivered ? 0 : 1;
}

// The number of `type` elements in the message `status` describes.
int element_count(const MPI_Status& status, MPI_Datatype type) {
  int count = 0;
  MPI_Get_count(&status, type, &count);
  return count;
}

// A consumer rank: its command line is rank 0's, whose options it receives instead.
int run_consumer() {
  MPI_Status status;
  MPI_Probe(kProducerRank, kSetupTag, MPI_COMM_WORLD, &status);
  std::string setup(static_cast<size_t>(element_count(status, MPI_CHAR)), '\0');
  MPI_Recv(setup.data(), static_cast<int>(setup.size()), MPI_CHAR, kProducerRank, kSetupTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  FrameConsumer::Options options = FrameConsumer::Options::from_record(Record::from_lines(setup));
  options.host = local_host_name();
  FrameConsumer consumer(options);
  int index = static_cast<int>(options.consumer);
  MPI_Send(&index, 1, MPI_INT, kProducerRank, kReadyTag, MPI_COMM_WORLD);

  // Any tag: frames and the end message then match the same receive, so MPI's non-overtaking rule
  // delivers the end after every frame.
  std::vector<uint8_t> bytes;
  int frames_sent = -1;
  while (frames_sent < 0) {
    MPI_Probe(kProducerRank, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    if (status.MPI_TAG == kEndTag) {
      MPI_Recv(&frames_sent, 1, MPI_INT, kProducerRank, kEndTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      continue;
    }
    bytes.resize(static_cast<size_t>(element_count(status, MPI_BYTE)));
    MPI_Recv(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, kProducerRank, status.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    const int64_t received_ns = realtime_ns();
    if (status.MPI_TAG == kFrameTag) {
      consumer.on_message(bytes, received_ns);
    } else {
      std::fprintf(stderr, "cfd-mpi consumer %lld: ignored a message with unknown tag %d\n", options.consumer,
                   status.MPI_TAG);
    }
  }

  std::string lines = consumer.conclude(frames_sent, "cfd-mpi consumer").to_record().to_lines();
  MPI_Send(lines.data(), static_cast<int>(lines.size()), MPI_CHAR, kProducerRank, kSummaryTag, MPI_COMM_WORLD);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CommandLine(argc, argv, kUsage);  // --help: prints the usage and exits, before any MPI (no job to end)
  // Funneled: a live display renders on a thread of its own, which makes no MPI call.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    status = rank == kProducerRank ? run_producer(argc, argv, size) : run_consumer();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-mpi (rank %d): %s\n", rank, error.what());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);  // the other ranks wait for messages that will not come
  }
  MPI_Finalize();
  return status;
}
