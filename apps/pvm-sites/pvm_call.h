// pvmCall: PVM calls return a negative error code on failure; pvmCall turns that into an exception
// that says which call failed and PVM's own text for the code, the way lp::SystemCall does for
// system calls. Shared by the plain PVM programs under apps/ (library lp_pvm_call).
#pragma once

#include <stdexcept>
#include <string>

namespace lp::pvm {

class PvmError : public std::runtime_error {
 public:
  PvmError(const std::string& what, int code);
  int code() const { return code_; }

 private:
  int code_;
};

// Returns ret, or throws PvmError("what: <PVM's error text> (<code>)") when ret < 0.
int pvmCall(const std::string& what, int ret);

}  // namespace lp::pvm
