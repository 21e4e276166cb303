// The benchmark's message tags and the messages' layout, shared by master and worker.
#pragma once

namespace lp::bench {

// Master -> worker: one benchmark message of P bytes (packed with pvm_pkbyte).
inline constexpr int kTagData = 1001;
// Worker -> master: an acknowledgement, one int: how many data messages the worker has received.
inline constexpr int kTagAck = 1002;
// Master -> worker at start-up: "hello"; the worker answers kTagHello with its host name, which
// proves where it runs and, on PvmRouteDirect, opens the task-to-task connection before timing.
inline constexpr int kTagHello = 1003;
// Master -> worker: no more batches; the worker exits.
inline constexpr int kTagDone = 1004;
// pvmd -> master: the worker exited (pvm_notify PvmTaskExit), so the master never waits forever.
inline constexpr int kTagWorkerExit = 1005;

// Each data message carries its sequence number (mod 256) in its first and last byte, so the
// worker checks order and completeness without reading the whole payload.
inline unsigned char sequenceMark(int sequence) { return static_cast<unsigned char>(sequence & 0xff); }

}  // namespace lp::bench
