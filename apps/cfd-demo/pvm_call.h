// PvmCall: turns a negative PVM 3 return code into an exception that says what was attempted and
// PVM's own text for the code ("pvm_send to t40002: No such task").
#pragma once

#include <stdexcept>
#include <string>

namespace lp::cfd {

class PvmError : public std::runtime_error {
 public:
  PvmError(const std::string& what, int code);
  int code() const { return code_; }

 private:
  int code_;
};

// Returns ret unless it is negative (a PVM error code), in which case it throws.
int PvmCall(const std::string& what, int ret);

// Message tags of the demo's protocol (producer <-> consumer).
enum PvmTag : int {
  kFrameTag = 0x1cfd01,     // producer -> consumer: one encoded Frame, packed raw
  kEndTag = 0x1cfd02,       // producer -> consumer: int, the number of frames sent
  kSummaryTag = 0x1cfd03,   // consumer -> producer: string, the RunSummary as Record lines
  kTaskExitTag = 0x1cfd04,  // pvmd -> producer: a consumer exited (pvm_notify PvmTaskExit)
  kReadyTag = 0x1cfd05,     // consumer -> producer: int, its index; it is set up and receiving
};

}  // namespace lp::cfd
