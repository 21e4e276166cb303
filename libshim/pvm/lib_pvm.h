// LibPvm: the libpvm3 functions and globals the front end uses, resolved at run time.
//
// liblongpipe.so is also preloaded into programs without PVM (MPI jobs), so it must not need
// libpvm3 at load time: every entry point is looked up with dlsym(RTLD_NEXT) the first time the
// PVM front end is used, which can only happen in a program that called a PVM function and so has
// libpvm3 loaded. RTLD_NEXT skips liblongpipe.so itself, so the interposed names (pvm_send, ...)
// resolve to libpvm3's real functions. Resolution happens once, thread-safely (a static local).
//
// Besides the public API this uses what PLATFORM.md verified libpvm3 exports: midtobuf() and
// mesg_input() (every incoming message passes there; handing it a message queues it or runs the
// matching message handler), the current send and receive buffer pointers pvmsbuf / pvmrbuf, and
// the receive queue pvmrxlist (only its length is read).
#pragma once

#include <pvm3.h>

#include <cstddef>

struct pmsg;  // libpvm3's message; only ever handled by pointer

namespace lp::pvm {

struct LibPvm {
  // Interposed by liblongpipe.so: these point at libpvm3's own versions.
  decltype(&::pvm_send) send;
  decltype(&::pvm_mcast) mcast;
  decltype(&::pvm_recv) recv;
  decltype(&::pvm_nrecv) nrecv;
  decltype(&::pvm_trecv) trecv;
  decltype(&::pvm_probe) probe;
  decltype(&::pvm_mytid) mytid;
  decltype(&::pvm_exit) exit;
  decltype(&::pvm_spawn) spawn;

  // Used as they are.
  decltype(&::pvm_mkbuf) mkbuf;
  decltype(&::pvm_freebuf) freebuf;
  decltype(&::pvm_setsbuf) setsbuf;
  decltype(&::pvm_setrbuf) setrbuf;
  decltype(&::pvm_getsbuf) getsbuf;
  decltype(&::pvm_pkbyte) pkbyte;
  decltype(&::pvm_upkbyte) upkbyte;
  decltype(&::pvm_pkint) pkint;
  decltype(&::pvm_upkint) upkint;
  decltype(&::pvm_pkstr) pkstr;
  decltype(&::pvm_upkstr) upkstr;
  decltype(&::pvm_bufinfo) bufinfo;
  decltype(&::pvm_getminfo) getminfo;
  decltype(&::pvm_setminfo) setminfo;
  decltype(&::pvm_pkmesg) pkmesg;
  decltype(&::pvm_upkmesg) upkmesg;
  decltype(&::pvm_putinfo) putinfo;
  decltype(&::pvm_recvinfo) recvinfo;
  decltype(&::pvm_delinfo) delinfo;
  decltype(&::pvm_addmhf) addmhf;
  decltype(&::pvm_getfds) getfds;
  decltype(&::pvm_getcontext) getcontext;
  decltype(&::pvm_setcontext) setcontext;
  decltype(&::pvm_getopt) getopt;
  decltype(&::pvm_setopt) setopt;

  // Exported internals.
  int (*mesg_input)(pmsg*);
  pmsg* (*midtobuf)(int);
  pmsg** send_buffer;     // pvmsbuf
  pmsg** receive_buffer;  // pvmrbuf
  int* data_signature;    // pvmmydsig: what a PvmDataRaw message's encoding field holds here
  pmsg** receive_queue;   // pvmrxlist: head node of the messages waiting for pvm_recv & co.

  // How many messages wait in libpvm3's receive queue, counting no further than `limit`.
  std::size_t queued_messages(std::size_t limit) const;

  // Resolves everything on first call; throws std::runtime_error naming a missing symbol.
  static const LibPvm& get();
};

// Saves libpvm3's current send and receive buffers and puts them back on scope exit, by pointer:
// pvm_setrbuf() would rewind the application's half-unpacked receive buffer (dec_init), and
// libpvm3 calls such as pvm_recvinfo() free the current receive buffer.
class CurrentBuffersGuard {
 public:
  explicit CurrentBuffersGuard(const LibPvm& lib)
      : lib_(lib), send_(*lib.send_buffer), receive_(*lib.receive_buffer) {
    *lib_.receive_buffer = nullptr;
  }
  ~CurrentBuffersGuard() {
    *lib_.send_buffer = send_;
    *lib_.receive_buffer = receive_;
  }
  CurrentBuffersGuard(const CurrentBuffersGuard&) = delete;
  CurrentBuffersGuard& operator=(const CurrentBuffersGuard&) = delete;

 private:
  const LibPvm& lib_;
  pmsg* send_;
  pmsg* receive_;
};

}  // namespace lp::pvm
