// What pvm_spawn passes on to spawned tasks.
#include "spawn_environment.h"

#include <catch2/catch.hpp>

#include <cstdlib>

#include "job_key.h"

using lp::pvm::merged_export_list;
using lp::pvm::names_to_export;

TEST_CASE("LD_PRELOAD and the library's LONGPIPE_* variables are exported, tool variables are not") {
  const auto names = names_to_export({"PATH=/bin", "LD_PRELOAD=/x/liblongpipe.so", "LONGPIPE_KEY=k",
                                      "LONGPIPE_RTT=540", "LONGPIPE_WAN=/w", "LONGPIPE_BUILD_DIR=/b",
                                      "LONGPIPE_STATS=/tmp/s.json", "NOEQUALS", "LONGPIPEX=1"});
  CHECK(names == std::vector<std::string>{"LD_PRELOAD", "LONGPIPE_KEY", "LONGPIPE_RTT"});
}

TEST_CASE("PVM_EXPORT gains the missing names only") {
  CHECK(merged_export_list("", {"LD_PRELOAD", "LONGPIPE_KEY"}) == "LD_PRELOAD:LONGPIPE_KEY");
  CHECK(merged_export_list("DISPLAY", {"LD_PRELOAD"}) == "DISPLAY:LD_PRELOAD");
  CHECK(merged_export_list("LD_PRELOAD:DISPLAY:", {"LD_PRELOAD", "LONGPIPE_KEY"}) ==
        "LD_PRELOAD:DISPLAY:LONGPIPE_KEY");
  CHECK(merged_export_list("LONGPIPE_KEY_FILE", {"LONGPIPE_KEY"}) == "LONGPIPE_KEY_FILE:LONGPIPE_KEY");
  CHECK(merged_export_list("A", {"B", "B"}) == "A:B");
}

TEST_CASE("the first task of a job makes a random key, and its spawns inherit it through PVM_EXPORT") {
  ::unsetenv("LONGPIPE_KEY");
  ::unsetenv("LONGPIPE_KEY_FILE");
  ::unsetenv("PVM_EXPORT");
  const lp::Config first = lp::pvm::job_config();
  REQUIRE(first.key.size() == 2 * lp::kJobKeyRandomBytes);
  CHECK(std::string(std::getenv("LONGPIPE_KEY")) == first.key);
  CHECK(lp::pvm::job_config().key == first.key);  // made once: a later engine of this task agrees
  lp::pvm::export_longpipe_environment();
  CHECK(std::string(std::getenv("PVM_EXPORT")).find("LONGPIPE_KEY") != std::string::npos);
  ::unsetenv("LONGPIPE_KEY");
  CHECK(lp::pvm::job_config().key != first.key);  // another job (a task started by hand) has its own
  ::unsetenv("LONGPIPE_KEY");
  ::unsetenv("PVM_EXPORT");
}
