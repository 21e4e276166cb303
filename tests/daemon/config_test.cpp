// longpiped's config file: a good one read whole; every bad one refused with file, line and key.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "config/gateway_config.h"

using namespace lpd;

namespace {

// A key file for the duration of a test.
struct KeyFile {
  std::string path = "/tmp/lpd-config-test-" + std::to_string(::getpid()) + ".key";
  KeyFile() {
    std::ofstream(path) << "federation-secret-for-tests\n";
    ::chmod(path.c_str(), 0600);
  }
  ~KeyFile() { std::remove(path.c_str()); }
};

std::string base(const KeyFile& key) {
  return "site A\nsocket /run/longpipe/A.sock\nlisten 127.0.0.1:7400\nkey-file " + key.path + "\n";
}

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "gw.conf");
  } catch (const ConfigFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a full config is read with every key") {
  KeyFile key;
  const auto config = parse_config(base(key) +
                                       "# the other sites\n"
                                       "peer B 10.0.0.2:7400   # site B\n"
                                       "peer C-2 gw.c.example:7401\n"
                                       "stream-window 4M\n"
                                       "max-streams 64\n"
                                       "allow-uid 0 1000\n"
                                       "allow-uid 1001\n"
                                       "engine LONGPIPE_RTT=540\n"
                                       "\n",
                                   "gw.conf");
  CHECK(config.site == "A");
  CHECK(config.socket == "/run/longpipe/A.sock");
  CHECK(config.listen == "127.0.0.1:7400");
  REQUIRE(config.peers.size() == 2);
  CHECK(config.peer_map().at("C-2") == "gw.c.example:7401");
  CHECK(config.stream_window == 4u << 20);
  CHECK(config.max_streams == 64);
  CHECK(config.allow_uids == std::vector<uid_t>{0, 1000, 1001});
  const auto variables = config.engine_variables();
  CHECK(variables.at("LONGPIPE_RTT") == "540");
  CHECK(variables.at("LONGPIPE_LISTEN") == "127.0.0.1:7400");
  CHECK(variables.at("LONGPIPE_DEAD_PEER_MS") == "300000");
  CHECK(variables.at("LONGPIPE_SILENT_PATH_MS") == "0");  // a gateway never gives up on a silent path
}

TEST_CASE("defaults: a 16 MiB stream window, the gateway's engine defaults, overridable") {
  KeyFile key;
  const auto config = parse_config(base(key) + "engine LONGPIPE_DEAD_PEER_MS=60000\n", "gw.conf");
  CHECK(config.stream_window == 16u << 20);
  CHECK(config.allow_uids.empty());
  CHECK(config.engine_variables().at("LONGPIPE_DEAD_PEER_MS") == "60000");
}

TEST_CASE("every bad config names the file, the line and the key") {
  KeyFile key;
  const std::string good = base(key);  // lines 1-4
  CHECK(error_of(good + "peer B nowhere\n").find("gw.conf:5: peer: 'nowhere' is not host:port") == 0);
  CHECK(error_of(good + "peer B\n").find("gw.conf:5: peer:") == 0);
  CHECK(error_of(good + "peer B h:1\npeer B h:2\n").find("gw.conf:6: peer: site B is given twice") == 0);
  CHECK(error_of(good + "peer A h:1\n").find("gw.conf:5: peer: site A is this gateway's own site") == 0);
  CHECK(error_of(good + "peer b@d h:1\n").find("gw.conf:5: peer: 'b@d' is not a site name") == 0);
  CHECK(error_of(good + "site B\n").find("gw.conf:5: site: given twice (first on line 1)") == 0);
  CHECK(error_of(good + "stream-window 1K\n").find("gw.conf:5: stream-window: 1K is out of range") == 0);
  CHECK(error_of(good + "stream-window lots\n").find("gw.conf:5: stream-window: 'lots' is not a size") == 0);
  CHECK(error_of(good + "stream-window 4X\n").find("gw.conf:5: stream-window:") == 0);
  CHECK(error_of(good + "max-streams 0\n").find("gw.conf:5: max-streams:") == 0);
  CHECK(error_of(good + "allow-uid root\n").find("gw.conf:5: allow-uid: 'root' is not a uid") == 0);
  CHECK(error_of(good + "allow-uid\n").find("gw.conf:5: allow-uid:") == 0);
  CHECK(error_of(good + "engine LONGPIPE_RTO_MIN_MS=-3\n").find("gw.conf:5: engine: ") == 0);
  CHECK(error_of(good + "engine LONGPIPE_NO_SUCH_THING=1\n").find("gw.conf:5: engine: LONGPIPE_NO_SUCH_THING is not an engine setting") == 0);
  CHECK(error_of(good + "engine LONGPIPE_LISTEN=:1\n").find("gw.conf:5: engine: LONGPIPE_LISTEN comes from") == 0);
  CHECK(error_of(good + "engine RTT=5\n").find("gw.conf:5: engine: 'RTT=5' is not LONGPIPE_NAME=value") == 0);
  CHECK(error_of(good + "colour blue\n").find("gw.conf:5: colour: unknown key") == 0);
  CHECK(error_of(good + "socket /a /b\n").find("gw.conf:5: socket: given twice") == 0);
  CHECK(error_of("socket relative.sock\n").find("gw.conf:1: socket: 'relative.sock' is not an absolute path") == 0);
  CHECK(error_of("listen nowhere\n").find("gw.conf:1: listen: 'nowhere' is not host:port") == 0);
  CHECK(error_of("key-file /no/such/key\n").find("gw.conf:1: key-file: ") == 0);
  CHECK(error_of("site A\nsocket /s\nlisten 127.0.0.1:1\n").find("gw.conf: key-file: missing") == 0);
  CHECK(error_of("site A\nsocket /s\nkey-file " + key.path + "\n").find("gw.conf: listen: missing") == 0);
  CHECK(error_of(good + std::string(5000, 'x') + "\n").find("gw.conf:5: line: longer than") == 0);
}

TEST_CASE("read_config names a file it cannot read") {
  try {
    read_config("/no/such/dir/gw.conf");
    FAIL("no error");
  } catch (const ConfigFileError& e) {
    CHECK(std::string(e.what()) == "/no/such/dir/gw.conf: cannot be read");
  }
}

TEST_CASE("dial-in peers, routes and relays are read; bad ones name the line and why") {
  KeyFile key;
  const std::string good = base(key);  // lines 1-4
  const auto config = parse_config(good + "peer B dial-in\npeer C 10.0.0.3:7400\nroute D via C\nrelay B C\n", "gw.conf");
  CHECK(config.peer_map().at("B").empty());  // dial-in: no address
  CHECK(config.route_map().at("D") == "C");
  REQUIRE(config.relays.size() == 1);
  CHECK(config.relays[0] == std::pair<std::string, std::string>{"B", "C"});
  const std::string peers = good + "peer B h:1\npeer C h:2\n";  // lines 5-6
  CHECK(error_of(good + "peer B dial-out\n").find("gw.conf:5: peer: 'dial-out' is not host:port (or dial-in)") == 0);
  CHECK(error_of(peers + "route D by B\n").find("gw.conf:7: route: takes SITE via PEER") == 0);
  CHECK(error_of(peers + "route D via E\n").find("gw.conf:7: route: via E, which is not a direct peer (a peer line): a stream crosses one relay at most") == 0);
  CHECK(error_of(peers + "route D via D\n").find("gw.conf:7: route: site D routed via itself (a loop)") == 0);
  CHECK(error_of(peers + "route C via B\n").find("gw.conf:7: route: site C is a direct peer (line 6)") == 0);
  CHECK(error_of(peers + "route A via B\n").find("gw.conf:7: route: site A is this gateway's own site") == 0);
  CHECK(error_of(peers + "route D via A\n").find("gw.conf:7: route: via A, this gateway's own site (a loop)") == 0);
  CHECK(error_of(peers + "route D via B\nroute D via C\n").find("gw.conf:8: route: site D is routed twice (first on line 7)") == 0);
  CHECK(error_of(peers + "relay B\n").find("gw.conf:7: relay: takes two site names") == 0);
  CHECK(error_of(peers + "relay B B\n").find("gw.conf:7: relay: names site B twice") == 0);
  CHECK(error_of(peers + "relay B D\n").find("gw.conf:7: relay: site D is not a direct peer") == 0);
  CHECK(error_of(peers + "relay A B\n").find("gw.conf:7: relay: site A is this gateway's own site") == 0);
  // A route line before its peer line is fine: the checks see the whole file.
  CHECK(error_of(good + "route D via B\npeer B h:1\n").empty());
}
