// The demo's PVM protocol between cfd-producer and cfd-consumer: message tags and what each carries.
#pragma once

namespace lp::cfd {

enum PvmTag : int {
  kFrameTag = 0x1cfd01,     // producer -> consumer: one encoded Frame, packed raw
  kEndTag = 0x1cfd02,       // producer -> consumer: int, the number of frames sent
  kSummaryTag = 0x1cfd03,   // consumer -> producer: string, the RunSummary as Record lines
  kTaskExitTag = 0x1cfd04,  // pvmd -> producer: a consumer exited (pvm_notify PvmTaskExit)
  kReadyTag = 0x1cfd05,     // consumer -> producer: int, its index; it is set up and receiving
};

}  // namespace lp::cfd
