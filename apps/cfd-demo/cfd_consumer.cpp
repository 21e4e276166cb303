// cfd-consumer: a plain PVM program (spawned by cfd-producer) that receives flow frames from its
// parent, renders them to PNGs, and at the end sends the parent a summary: frames received, in
// order and complete or not, frames/s, latency from send to receipt and to display. The frame
// checks, rendering and numbers are FrameConsumer's (shared with cfd-mpi's consumer ranks).
#include <pvm3.h>

#include <cstdio>
#include <vector>

#include "cfd_protocol.h"
#include "command_line.h"
#include "frame.h"
#include "frame_consumer.h"
#include "pvm_call.h"  // lp_pvm_call (apps/pvm-sites)

using lp::pvm::pvmCall;

namespace {

using namespace lp::cfd;

int run(int argc, char** argv) {
  CommandLine args(argc, argv,
                   "cfd-consumer --out DIR [--index I] [--render-every N] [--slow-ms MS] [--zoom Z] [--route default|direct]\n"
                   "             [--allow-drops] [--display all|live]\n"
                   "  Spawned by cfd-producer; renders each frame it receives to DIR/frame-NNNNNN.png.");
  FrameConsumer::Options options;
  options.consumer = args.integer("--index", 0, 0, 1000000);
  options.output_folder = args.text("--out", "");
  options.render_every = static_cast<int>(args.integer("--render-every", 1, 0, 1000000));
  options.slow_ms = static_cast<int>(args.integer("--slow-ms", 0, 0, 600000));
  options.zoom = static_cast<int>(args.integer("--zoom", 1, 1, 16));
  const std::string route = args.text("--route", "default");
  options.drops_allowed = args.flag("--allow-drops");
  const std::string display = args.text("--display", "all");
  args.finish();
  if (options.output_folder.empty()) throw std::invalid_argument("--out DIR is required");
  if (route != "default" && route != "direct") throw std::invalid_argument("--route must be default or direct");
  if (display != "all" && display != "live") throw std::invalid_argument("--display must be all or live");
  options.live = display == "live";
  options.host = local_host_name();

  pvmCall("pvm_mytid", pvm_mytid());
  const int parent = pvm_parent();
  if (parent < 0) throw std::runtime_error("cfd-consumer must be spawned by cfd-producer (it has no PVM parent)");
  if (route == "direct") pvm_setopt(PvmRoute, PvmRouteDirect);

  FrameConsumer consumer(options);
  int index = static_cast<int>(options.consumer);
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_pkint ready", pvm_pkint(&index, 1, 1));
  pvmCall("pvm_send ready", pvm_send(parent, kReadyTag));
  std::vector<uint8_t> bytes;
  int frames_sent = -1;
  while (frames_sent < 0) {
    const int buffer = pvmCall("pvm_recv", pvm_recv(parent, -1));
    const int64_t received_ns = realtime_ns();
    int length = 0, tag = 0, source = 0;
    pvmCall("pvm_bufinfo", pvm_bufinfo(buffer, &length, &tag, &source));
    if (tag == kFrameTag) {
      bytes.resize(static_cast<size_t>(length));
      pvmCall("pvm_upkbyte frame", pvm_upkbyte(reinterpret_cast<char*>(bytes.data()), length, 1));
      consumer.on_message(bytes, received_ns);
    } else if (tag == kEndTag) {
      pvmCall("pvm_upkint end", pvm_upkint(&frames_sent, 1, 1));
    } else {
      std::fprintf(stderr, "cfd-consumer %lld: ignored a message with unknown tag %d\n", options.consumer, tag);
    }
  }

  std::string lines = consumer.conclude(frames_sent, "cfd-consumer").to_record().to_lines();
  pvmCall("pvm_initsend", pvm_initsend(PvmDataDefault));
  pvmCall("pvm_pkstr summary", pvm_pkstr(lines.data()));
  pvmCall("pvm_send summary", pvm_send(parent, kSummaryTag));
  pvm_exit();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cfd-consumer: %s\n", error.what());
    pvm_exit();
    return 2;
  }
}
