// FrontEnd::start (front_end.h): the sites, the job key, the engine and the endpoints exchanged
// at MPI_Init; the progress thread started.
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "front_end.h"
#include "front_end_request.h"
#include "site_discovery.h"

namespace lp::mpi {
namespace {

// Longest endpoint string exchanged at MPI_Init ("host:port").
constexpr int kEndpointBytes = 256;
// Key made for a job that has none configured: bytes of randomness (hex-encoded in the key).
constexpr int kJobKeyBytes = 32;

std::string hex(const unsigned char* bytes, int count) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

}  // namespace

std::unique_ptr<FrontEnd> FrontEnd::start() {
  int world_rank = 0, world_size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm internal;
  PMPI_Comm_dup(MPI_COMM_WORLD, &internal);
  PMPI_Comm_set_errhandler(internal, MPI_ERRORS_ARE_FATAL);

  // Every LONGPIPE_* name and value is checked first, also in a job whose ranks share one site.
  Config config = Config::from_environment();
  SiteMap sites = discover_sites(internal, world_rank, world_size);
  if (sites.site_count() <= 1) {
    PMPI_Comm_free(&internal);
    return nullptr;
  }
  // The drop policies give up messages by design (a stream's stale samples); MPI may lose none, so
  // a job that sets one is told at once instead of losing a message later.
  if (config.window_full == WindowFullPolicy::kDropOldest || config.window_full == WindowFullPolicy::kKeepLatest) {
    const char* name = config.window_full == WindowFullPolicy::kDropOldest ? "drop-oldest" : "keep-latest";
    throw std::invalid_argument(std::string("LONGPIPE_WINDOW_FULL=") + name +
                                " drops messages, which MPI does not allow: use block (the default) or fail");
  }

  // The job key: none configured -> rank 0 makes one and every rank gets it over MPI.
  char shared_key[1 + 2 * kJobKeyBytes + 1] = {};
  if (world_rank == 0 && config.key.empty()) {
    unsigned char random[kJobKeyBytes];
    if (RAND_bytes(random, sizeof random) != 1) throw std::runtime_error("RAND_bytes failed: cannot make a job key");
    shared_key[0] = 1;
    std::memcpy(shared_key + 1, hex(random, kJobKeyBytes).c_str(), 2 * kJobKeyBytes);
  }
  PMPI_Bcast(shared_key, sizeof shared_key, MPI_CHAR, 0, internal);
  if (shared_key[0] == 1 && config.key.empty()) config.key = shared_key + 1;

  // One statistics file per rank.
  if (!config.stats_path.empty()) {
    const auto at = config.stats_path.find("%r");
    if (at != std::string::npos) {
      config.stats_path.replace(at, 2, std::to_string(world_rank));
    } else {
      config.stats_path += "." + std::to_string(world_rank);
    }
  }

  std::unique_ptr<FrontEnd> front_end(new FrontEnd(std::move(sites), world_rank, world_size, internal));
  front_end->statistics_path_ = config.stats_path;
  front_end->segment_bytes_ =
      std::min(transfer_segment_bytes(config.streams, config.small_message), config.max_message);
  front_end->max_message_ = config.max_message;
  front_end->window_full_fails_ = config.window_full == WindowFullPolicy::kFail;
  front_end->engine_ = std::make_unique<Engine>(std::move(config));
  const std::string endpoint = front_end->engine_->local_endpoint();
  if (endpoint.size() >= kEndpointBytes) throw std::runtime_error("endpoint name too long: " + endpoint);
  std::vector<char> mine(kEndpointBytes, 0), all(static_cast<std::size_t>(kEndpointBytes) * world_size, 0);
  std::memcpy(mine.data(), endpoint.data(), endpoint.size());
  PMPI_Allgather(mine.data(), kEndpointBytes, MPI_CHAR, all.data(), kEndpointBytes, MPI_CHAR, internal);
  for (int rank = 0; rank < world_size; ++rank) {
    std::string name(all.data() + static_cast<std::size_t>(rank) * kEndpointBytes);
    front_end->world_of_endpoint_[name] = rank;
    front_end->endpoint_of_world_.push_back(std::move(name));
  }
  FrontEnd* self = front_end.get();
  front_end->progress_thread_ = std::make_unique<ProgressThread>(
      self->engine_->receive_event_fd(), self->engine_->room_event_fd(),
      [self](ProgressThread& thread) { return self->background_step(thread); });
  return front_end;
}

FrontEnd::FrontEnd(SiteMap sites, int world_rank, int world_size, MPI_Comm internal)
    : sites_(std::move(sites)),
      world_rank_(world_rank),
      world_size_(world_size),
      my_site_(sites_.site_of(world_rank)),
      internal_(internal) {
  std::vector<int> everyone(static_cast<std::size_t>(world_size));
  for (int rank = 0; rank < world_size; ++rank) everyone[static_cast<std::size_t>(rank)] = rank;
  world_ = CommunicatorInfo(kWorldContext, std::move(everyone), sites_.sites(), my_site_);
  world_.lineage = kWorldLineage;
}

FrontEnd::~FrontEnd() = default;

}  // namespace lp::mpi
