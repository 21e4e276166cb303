// longpipe-config: prints LongPipe's effective configuration (LONGPIPE_* variables and the config
// file), or the error that a bad value produces. `./longpipe config` runs it.
#include <cstdio>
#include <cstring>
#include <iostream>

#include "config.h"

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::cout << "Usage: longpipe config\n\nPrints every LONGPIPE_* setting with its effective value and meaning,\n"
                 "read from the environment and LONGPIPE_CONFIG's file (the environment wins).\n"
                 "Exit status 2 and a message naming the variable if a value is invalid.\n";
    return 0;
  }
  if (argc > 1) {
    std::cerr << "longpipe config: unexpected argument '" << argv[1] << "' (see --help)\n";
    return 2;
  }
  try {
    std::cout << lp::Config::from_environment().describe();
  } catch (const lp::ConfigError& e) {
    std::cerr << "longpipe config: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
