// The demo's protocol between producer and consumers, the same over PVM and MPI: message tags and
// what each carries.
#pragma once

namespace lp::cfd {

enum MessageTag : int {
  kFrameTag = 0x1cfd01,     // producer -> consumer: one encoded Frame, raw bytes
  kEndTag = 0x1cfd02,       // producer -> consumer: int, the number of frames sent
  kSummaryTag = 0x1cfd03,   // consumer -> producer: string, the RunSummary as Record lines
  kTaskExitTag = 0x1cfd04,  // PVM only, pvmd -> producer: a consumer exited (pvm_notify PvmTaskExit)
  kReadyTag = 0x1cfd05,     // consumer -> producer: int, its index; it is set up and receiving
  kSetupTag = 0x1cfd06,     // MPI only, producer -> consumer: string, its FrameConsumer::Options as
                            // Record lines (MPI starts every rank itself; PVM passes them as arguments)
};

}  // namespace lp::cfd
