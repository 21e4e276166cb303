// lp-linkemu: LongPipe's user-space wide-area link emulator (for kernels without sch_netem).
// Started by netem/wan; see netem/README.md.
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <random>

#include "emulator_options.h"
#include "link_emulator.h"
#include "system_call.h"

namespace {

// Timer slack of 1 ns: ppoll wakes when asked, not up to 50 us later (the default slack).
constexpr unsigned long kTimerSlackNanoseconds = 1;

volatile std::sig_atomic_t stop_requested = 0;

void request_stop(int) { stop_requested = 1; }

// SIGTERM, SIGINT and SIGHUP stop the loop; they stay blocked except while it waits (see run()).
void install_stop_signals() {
  struct sigaction action{};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) {
    lp::SystemCall("install signal handler", ::sigaction(signal, &action, nullptr));
    sigaddset(&blocked, signal);
  }
  lp::SystemCall("block stop signals", ::sigprocmask(SIG_BLOCK, &blocked, nullptr));
}

// Real-time scheduling keeps delivery on time when compilers and tests load every core. Where it is
// not permitted (a container without CAP_SYS_NICE), the emulator still works, less precisely: say so.
int enter_realtime_scheduling(int priority) {
  if (priority == 0) return 0;
  sched_param parameters{};
  parameters.sched_priority = priority;
  if (::sched_setscheduler(0, SCHED_FIFO, &parameters) == 0) return priority;
  std::perror("lp-linkemu: warning: SCHED_FIFO refused, running with normal scheduling");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  lp::netem::EmulatorOptions options;
  try {
    if (!options.parse(argc, argv)) return 0;
    if (options.validate_only) {
      std::fputs(options.describe().c_str(), stdout);
      return 0;
    }
  } catch (const lp::netem::OptionError& error) {
    std::fprintf(stderr, "lp-linkemu: %s\n", error.what());
    return 2;
  }
  try {
    install_stop_signals();
    lp::SystemCall("set timer slack", ::prctl(PR_SET_TIMERSLACK, kTimerSlackNanoseconds, 0, 0, 0));
    const std::uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();
    lp::netem::LinkEmulator emulator(lp::netem::TunDevice(options.netns_a, options.tun_name),
                                     lp::netem::TunDevice(options.netns_b, options.tun_name), options.a_to_b,
                                     options.b_to_a, seed, options.stats_file);
    emulator.set_realtime_priority(enter_realtime_scheduling(options.realtime_priority));
    emulator.write_stats();  // its appearance tells netem/wan that the devices exist
    emulator.run(stop_requested);
    emulator.write_stats();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lp-linkemu: %s\n", error.what());
    return 1;
  }
  return 0;
}
