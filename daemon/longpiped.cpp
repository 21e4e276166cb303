// longpiped: the site gateway (daemon/README.md). `longpiped --config FILE [--foreground]` runs it;
// `longpiped --check --config FILE` validates the config and exits (0, or 2 naming file, line, key).
#include <sys/resource.h>
#include <sys/signalfd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "config/gateway_config.h"
#include "shell/gateway.h"

namespace {

constexpr const char* kUsage =
    "usage: longpiped --config FILE [--foreground]\n"
    "       longpiped --check --config FILE\n"
    "Runs the LongPipe site gateway (always in the foreground; logs go to stderr).\n";

// As many descriptors as the hard limit allows: each stream holds one or two.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      path = argv[++i];
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--foreground") {
      // The only mode: a service manager (longpiped@.service) or a shell keeps it.
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "longpiped: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "longpiped: --config FILE is required\n%s", kUsage);
    return 2;
  }
  lpd::GatewayConfig config;
  try {
    config = lpd::read_config(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "longpiped: %s\n", e.what());
    return 2;
  }
  if (check) {
    std::printf("longpiped: %s: OK (site %s, %zu peers)\n", path.c_str(), config.site.c_str(), config.peers.size());
    return 0;
  }
  // Signals arrive through a signalfd in the loop; blocked before the engine's thread starts, so
  // that it inherits the mask and never takes them.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::fprintf(stderr, "longpiped: signalfd: %s\n", std::strerror(errno));
    return 1;
  }
  raise_descriptor_limit();
  try {
    lpd::Gateway gateway(std::move(config), path);
    gateway.run(signal_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "longpiped: %s\n", e.what());
    return 1;
  }
  return 0;
}
