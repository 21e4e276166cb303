#include "bench_master.h"

#include <pvm3.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "bench_protocol.h"
#include "pvm_call.h"  // apps/pvm-sites: lp_pvm_call

namespace lp::bench {

using lp::pvm::pvmCall;
namespace {

// Start-up (spawn, hello over one or two round trips) and shutdown get this long at most.
constexpr std::chrono::seconds kControlTimeout{60};

std::string ownExecutable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace

BenchMaster::BenchMaster(const BenchOptions& options) : options_(options), payload_(options.size, 'x') {}

void BenchMaster::run(std::ostream& out) {
  pvmCall("pvm_mytid", pvm_mytid());
  if (options_.route == Route::kDirect) pvmCall("pvm_setopt(PvmRoute, PvmRouteDirect)", pvm_setopt(PvmRoute, PvmRouteDirect));
  // The worker's stdout/stderr (its error messages) come out on our stderr; stdout stays CSV.
  pvm_catchout(stderr);
  spawnWorker();
  greetWorker(Clock::now() + kControlTimeout);
  out << "batch,size_bytes,count,ack,pvm_route,encoding,total_s,per_message_s\n" << std::flush;
  for (int batch = 1; batch <= options_.batches; ++batch) {
    if (batch > 1 && options_.pauseMilliseconds > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.pauseMilliseconds));
    double total = runBatch(batch);
    out << batch << ',' << options_.size << ',' << options_.count << ',' << ackModeName(options_.ack) << ','
        << routeName(options_.route) << ',' << encodingName(options_.encoding) << ',' << total << ','
        << total / options_.count << '\n'
        << std::flush;
  }
  stopWorker();
}

void BenchMaster::spawnWorker() {
  std::string executable = options_.workerExecutable.empty() ? ownExecutable() : options_.workerExecutable;
  std::vector<std::string> arguments = workerArguments(options_);
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  int spawned = pvm_spawn(executable.data(), argv.data(), PvmTaskHost, options_.workerHost.data(), 1, &workerTid_);
  if (spawned < 1) {
    pvmCall("pvm_spawn " + executable + " on host " + options_.workerHost, spawned < 0 ? spawned : workerTid_);
    throw std::runtime_error("pvm_spawn " + executable + " on host " + options_.workerHost + " started no task");
  }
  pvmCall("pvm_notify(PvmTaskExit)", pvm_notify(PvmTaskExit, kTagWorkerExit, 1, &workerTid_));
}

void BenchMaster::greetWorker(Clock::time_point deadline) {
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_send(hello)", pvm_send(workerTid_, kTagHello));
  int bufferId = receive(deadline, "the worker's hello");
  int bytes = 0, tag = 0, source = 0;
  pvmCall("pvm_bufinfo", pvm_bufinfo(bufferId, &bytes, &tag, &source));
  if (tag != kTagHello) throw std::runtime_error("expected the worker's hello, got tag " + std::to_string(tag));
  char host[HOST_NAME_MAX + 1] = {};
  pvmCall("pvm_upkstr(worker host)", pvm_upkstr(host));
  if (options_.workerHost != host)
    throw std::runtime_error("worker runs on host '" + std::string(host) + "', not on '" + options_.workerHost + "'");
  std::fprintf(stderr, "# lp-bench: worker t%x runs on %s\n", workerTid_, host);
}

double BenchMaster::runBatch(int batch) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options_.batchTimeoutSeconds));
  const char* waitingFor = "the acknowledgements of a batch";
  int acknowledged = 0;  // the highest count the worker has acknowledged
  int acknowledgements = 0;
  auto take = [&](int bufferId) {
    acknowledged = unpackAck(bufferId);
    ++acknowledgements;
  };
  for (int sequence = 1; sequence <= options_.count; ++sequence) {
    sendData(sequence);
    if (options_.ack == AckMode::kWait) {
      take(receive(deadline, waitingFor));
    } else if (options_.ack == AckMode::kEach) {
      // Collect the acknowledgements already here without ever waiting between sends.
      while (int bufferId = pvmCall("pvm_nrecv", pvm_nrecv(-1, -1))) take(bufferId);
    }
  }
  while (acknowledged < options_.count) take(receive(deadline, waitingFor));
  const int expectedAcknowledgements = options_.ack == AckMode::kLast ? 1 : options_.count;
  if (acknowledged != options_.count || acknowledgements != expectedAcknowledgements)
    throw std::runtime_error("batch " + std::to_string(batch) + ": " + std::to_string(acknowledgements) +
                             " acknowledgements up to message " + std::to_string(acknowledged) + ", expected " +
                             std::to_string(expectedAcknowledgements) + " up to " + std::to_string(options_.count));
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void BenchMaster::sendData(int sequence) {
  payload_.front() = static_cast<char>(sequenceMark(sequence));
  payload_.back() = static_cast<char>(sequenceMark(sequence));
  pvmCall("pvm_initsend", pvm_initsend(pvmEncoding(options_.encoding)));
  pvmCall("pvm_pkbyte", pvm_pkbyte(payload_.data(), static_cast<int>(payload_.size()), 1));
  pvmCall("pvm_send(data)", pvm_send(workerTid_, kTagData));
}

int BenchMaster::receive(Clock::time_point deadline, const char* waitingFor) {
  const auto remaining = deadline - Clock::now();
  if (remaining <= Clock::duration::zero()) throw std::runtime_error(std::string("timed out waiting for ") + waitingFor);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(remaining).count();
  timeval timeout{static_cast<time_t>(micros / 1'000'000), static_cast<suseconds_t>(micros % 1'000'000)};
  int bufferId = pvmCall("pvm_trecv", pvm_trecv(-1, -1, &timeout));
  if (bufferId == 0) throw std::runtime_error(std::string("timed out waiting for ") + waitingFor);
  return bufferId;
}

int BenchMaster::unpackAck(int bufferId) {
  int bytes = 0, tag = 0, source = 0;
  pvmCall("pvm_bufinfo", pvm_bufinfo(bufferId, &bytes, &tag, &source));
  if (tag == kTagWorkerExit) throw std::runtime_error("the worker exited in the middle of a batch");
  if (tag != kTagAck || source != workerTid_)
    throw std::runtime_error("unexpected message with tag " + std::to_string(tag) + " from t" + std::to_string(source));
  int count = 0;
  pvmCall("pvm_upkint(ack)", pvm_upkint(&count, 1, 1));
  if (count < 0) throw std::runtime_error("the worker received a corrupt or out-of-order message (see its message above)");
  return count;
}

void BenchMaster::stopWorker() {
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_send(done)", pvm_send(workerTid_, kTagDone));
  // Wait for its exit so that the virtual machine is idle when we return.
  const auto deadline = Clock::now() + kControlTimeout;
  for (;;) {
    int bytes = 0, tag = 0, source = 0;
    pvmCall("pvm_bufinfo", pvm_bufinfo(receive(deadline, "the worker's exit"), &bytes, &tag, &source));
    if (tag == kTagWorkerExit) return;
  }
}

}  // namespace lp::bench
