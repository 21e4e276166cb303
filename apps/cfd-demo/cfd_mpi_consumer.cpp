// cfd-mpi-consumer: cfd-consumer as a plain MPI program (mpi.h only, nothing of LongPipe), started
// by mpirun after cfd-mpi-producer (rank 0). Takes its options from the producer, receives frames,
// renders and checks them and reports exactly as cfd-consumer does (FrameConsumer), and at the end
// sends the producer its summary.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cfd_protocol.h"
#include "command_line.h"
#include "frame.h"
#include "frame_consumer.h"

namespace {

using namespace lp::cfd;

constexpr int kProducerRank = 0;

// The number of `type` elements in the message `status` describes.
int element_count(const MPI_Status& status, MPI_Datatype type) {
  int count = 0;
  MPI_Get_count(&status, type, &count);
  return count;
}

int run(int argc, char** argv) {
  CommandLine args(argc, argv,
                   "mpirun -np 1 cfd-mpi-producer [options] : -np N cfd-mpi-consumer\n"
                   "  A consumer rank: takes its options from cfd-mpi-producer (rank 0) and renders each frame it\n"
                   "  receives to <producer's --out>/consumer-<rank - 1>/frame-NNNNNN.png.");
  args.finish();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == kProducerRank) {
    throw std::invalid_argument("cfd-mpi-consumer must not be rank 0: start it after cfd-mpi-producer "
                                "(mpirun -np 1 cfd-mpi-producer ... : -np N cfd-mpi-consumer)");
  }

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
      std::fprintf(stderr, "cfd-mpi-consumer %lld: ignored a message with unknown tag %d\n", options.consumer,
                   status.MPI_TAG);
    }
  }

  std::string lines = consumer.conclude(frames_sent, "cfd-mpi-consumer").to_record().to_lines();
  MPI_Send(lines.data(), static_cast<int>(lines.size()), MPI_CHAR, kProducerRank, kSummaryTag, MPI_COMM_WORLD);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-mpi-consumer: %s\n", error.what());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
