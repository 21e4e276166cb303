#include "bench_worker.h"

#include <pvm3.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "bench_protocol.h"
#include "pvm_call.h"  // apps/pvm-sites: lp_pvm_call

namespace lp::bench {

using lp::pvm::pvmCall;

// An acknowledgement with this count tells the master that a message arrived corrupt or out of order.
constexpr int kCorruptAck = -1;

BenchWorker::BenchWorker(const BenchOptions& options) : options_(options), payload_(options.size) {}

void BenchWorker::run() {
  pvmCall("pvm_mytid", pvm_mytid());
  if (options_.route == Route::kDirect) pvmCall("pvm_setopt(PvmRoute, PvmRouteDirect)", pvm_setopt(PvmRoute, PvmRouteDirect));
  masterTid_ = pvm_parent();
  if (masterTid_ < 0) throw std::runtime_error("the worker must be spawned by the lp-bench master (pvm_parent: none)");
  int received = 0;  // data messages received in the current batch
  for (;;) {
    int bufferId = pvmCall("pvm_recv", pvm_recv(masterTid_, -1));
    int bytes = 0, tag = 0, source = 0;
    pvmCall("pvm_bufinfo", pvm_bufinfo(bufferId, &bytes, &tag, &source));
    if (tag == kTagDone) return;
    if (tag == kTagHello) {
      answerHello();
      continue;
    }
    if (tag != kTagData) throw std::runtime_error("the worker got a message with unexpected tag " + std::to_string(tag));
    ++received;
    if (!checkData(bufferId, received)) {
      acknowledge(kCorruptAck);
      return;
    }
    const bool last = received == options_.count;
    if (options_.ack != AckMode::kLast || last) acknowledge(received);
    if (last) received = 0;
  }
}

void BenchWorker::answerHello() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) != 0) throw std::runtime_error("gethostname failed");
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_pkstr", pvm_pkstr(host));
  pvmCall("pvm_send(hello)", pvm_send(masterTid_, kTagHello));
}

bool BenchWorker::checkData(int bufferId, int sequence) {
  int bytes = 0, tag = 0, source = 0;
  pvmCall("pvm_bufinfo", pvm_bufinfo(bufferId, &bytes, &tag, &source));
  pvmCall("pvm_upkbyte", pvm_upkbyte(payload_.data(), static_cast<int>(payload_.size()), 1));
  const char mark = static_cast<char>(sequenceMark(sequence));
  if (payload_.front() == mark && payload_.back() == mark) return true;
  std::fprintf(stderr, "lp-bench worker: message %d of a batch carries marks %d/%d, expected %d\n", sequence,
               payload_.front() & 0xff, payload_.back() & 0xff, mark & 0xff);
  return false;
}

void BenchWorker::acknowledge(int count) {
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_pkint(ack)", pvm_pkint(&count, 1, 1));
  pvmCall("pvm_send(ack)", pvm_send(masterTid_, kTagAck));
}

}  // namespace lp::bench
