#include "lib_pvm.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace lp::pvm {
namespace {

void* next_symbol(const char* name) {
  void* symbol = ::dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    throw std::runtime_error(std::string("libpvm3 symbol ") + name + " not found (" +
                             (::dlerror() ?: "no dlerror") + "); is the program linked with libpvm3?");
  }
  return symbol;
}

template <typename Pointer>
void resolve(Pointer& pointer, const char* name) {
  pointer = reinterpret_cast<Pointer>(next_symbol(name));
}

LibPvm resolve_all() {
  LibPvm lib{};
  resolve(lib.send, "pvm_send");
  resolve(lib.mcast, "pvm_mcast");
  resolve(lib.recv, "pvm_recv");
  resolve(lib.nrecv, "pvm_nrecv");
  resolve(lib.trecv, "pvm_trecv");
  resolve(lib.probe, "pvm_probe");
  resolve(lib.mytid, "pvm_mytid");
  resolve(lib.exit, "pvm_exit");
  resolve(lib.spawn, "pvm_spawn");
  resolve(lib.mkbuf, "pvm_mkbuf");
  resolve(lib.freebuf, "pvm_freebuf");
  resolve(lib.setsbuf, "pvm_setsbuf");
  resolve(lib.setrbuf, "pvm_setrbuf");
  resolve(lib.getsbuf, "pvm_getsbuf");
  resolve(lib.pkbyte, "pvm_pkbyte");
  resolve(lib.upkbyte, "pvm_upkbyte");
  resolve(lib.pkint, "pvm_pkint");
  resolve(lib.upkint, "pvm_upkint");
  resolve(lib.pkstr, "pvm_pkstr");
  resolve(lib.upkstr, "pvm_upkstr");
  resolve(lib.bufinfo, "pvm_bufinfo");
  resolve(lib.getminfo, "pvm_getminfo");
  resolve(lib.setminfo, "pvm_setminfo");
  resolve(lib.pkmesg, "pvm_pkmesg");
  resolve(lib.upkmesg, "pvm_upkmesg");
  resolve(lib.putinfo, "pvm_putinfo");
  resolve(lib.recvinfo, "pvm_recvinfo");
  resolve(lib.delinfo, "pvm_delinfo");
  resolve(lib.addmhf, "pvm_addmhf");
  resolve(lib.getfds, "pvm_getfds");
  resolve(lib.getcontext, "pvm_getcontext");
  resolve(lib.setcontext, "pvm_setcontext");
  resolve(lib.getopt, "pvm_getopt");
  resolve(lib.setopt, "pvm_setopt");
  resolve(lib.mesg_input, "mesg_input");
  resolve(lib.midtobuf, "midtobuf");
  resolve(lib.send_buffer, "pvmsbuf");
  resolve(lib.receive_buffer, "pvmrbuf");
  resolve(lib.data_signature, "pvmmydsig");
  resolve(lib.receive_queue, "pvmrxlist");
  return lib;
}

// libpvm3's queues are circular doubly linked lists through a head node, and struct pmsg (pmsg.h
// of PVM 3.4) begins with the forward link m_link: the only part of the layout read here.
const pmsg* forward_link(const pmsg* message) { return *reinterpret_cast<const pmsg* const*>(message); }

}  // namespace

std::size_t LibPvm::queued_messages(std::size_t limit) const {
  const pmsg* head = *receive_queue;
  if (head == nullptr) return 0;  // libpvm3 not initialised yet: nothing queued
  std::size_t count = 0;
  for (const pmsg* message = forward_link(head); message != head && count < limit; message = forward_link(message)) {
    ++count;
  }
  return count;
}

const LibPvm& LibPvm::get() {
  static const LibPvm lib = resolve_all();
  return lib;
}

}  // namespace lp::pvm
