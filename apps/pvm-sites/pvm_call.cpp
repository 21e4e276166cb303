#include "pvm_call.h"

#include <pvm3.h>

// libpvm3's table of error texts, indexed by -code (declared in PVM's pvm3.h only for some builds).
extern "C" {
extern char* pvm_errlist[];
extern int pvm_nerr;
}

namespace lp::pvm {
namespace {

std::string pvmErrorText(int code) {
  if (code < 0 && -code < pvm_nerr && pvm_errlist[-code] != nullptr) return pvm_errlist[-code];
  return "unknown PVM error";
}

}  // namespace

PvmError::PvmError(const std::string& what, int code)
    : std::runtime_error(what + ": " + pvmErrorText(code) + " (" + std::to_string(code) + ")"), code_(code) {}

int pvmCall(const std::string& what, int ret) {
  if (ret < 0) throw PvmError(what, ret);
  return ret;
}

}  // namespace lp::pvm
