#include "pvm_call.h"

#include <pvm3.h>

// libpvm3 exports its error texts (indexed by -code) but pvm3.h does not declare them.
extern "C" {
extern char* pvm_errlist[];
extern int pvm_nerr;
}

namespace lp::cfd {

namespace {

std::string describe(int code) {
  if (code < 0 && -code < pvm_nerr && pvm_errlist[-code]) return pvm_errlist[-code];
  return "PVM error " + std::to_string(code);
}

}  // namespace

PvmError::PvmError(const std::string& what, int code) : std::runtime_error(what + ": " + describe(code)), code_(code) {}

int PvmCall(const std::string& what, int ret) {
  if (ret < 0) throw PvmError(what, ret);
  return ret;
}

}  // namespace lp::cfd
