// Config: LONGPIPE_* parsing, ranges, relations, the config file, and the error messages.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "config.h"
#include "config_error.h"
#include "job_key.h"

using lp::Config;
using lp::test::config_error_of;

TEST_CASE("defaults are valid and documented") {
  const Config config = Config::from_variables({});
  CHECK(config.rto_initial.count() == 1000);
  CHECK(config.window_full == lp::WindowFullPolicy::kBlock);
  CHECK(config.streams == 2);  // small messages on a cubic stream, large ones on auto's choice
  CHECK(config.congestion_for_stream(0) == "cubic");
  CHECK(config.congestion_for_stream(1) == "auto");  // resolved per host (idle_restart.h)
  CHECK(config.small_message == 32768);
  const std::string text = config.describe();
  CHECK(text.find("LONGPIPE_DEAD_PEER_MS=15000") != std::string::npos);
  CHECK(text.find("LONGPIPE_KEY=(none") != std::string::npos);
}

TEST_CASE("values are read and converted") {
  const Config config = Config::from_variables({{"LONGPIPE_RTO_MIN_MS", "250"},
                                                {"LONGPIPE_WINDOW_FULL", "drop-oldest"},
                                                {"LONGPIPE_PIN", "1"},
                                                {"LONGPIPE_BANDWIDTH", "10"},
                                                {"LONGPIPE_RTT", "100"},
                                                {"LONGPIPE_KEY", "k3y-xyzzy"}});
  CHECK(config.rto_min.count() == 250);
  CHECK(config.window_full == lp::WindowFullPolicy::kDropOldest);
  CHECK(config.pin.mode == lp::PinPolicy::Mode::kCore);
  CHECK(config.pin.core == 1);
  CHECK(config.effective_receive_buffer() == 250000);  // 2 x 10 Mbit/s x 100 ms
  CHECK(config.effective_send_buffer() == 87500);      // 0.7 x
  CHECK(config.key == "k3y-xyzzy");
  CHECK(config.describe().find("xyzzy") == std::string::npos);  // never printed
  const Config hybrid = Config::from_variables({{"LONGPIPE_CONGESTION", "cubic,bbr"}});
  CHECK(hybrid.congestion_for_stream(0) == "cubic");
  CHECK(hybrid.congestion_for_stream(1) == "bbr");
  CHECK(hybrid.congestion_for_stream(2) == "cubic");
  CHECK(Config::from_variables({{"LONGPIPE_CONGESTION", "cubic,auto"}}).congestion_for_stream(1) == "auto");
}

TEST_CASE("path hints: numbers (fixed buffers) by default; auto, the path measured per session") {
  const Config fixed = Config::from_variables({});
  CHECK(fixed.rtt_given);
  CHECK(fixed.bandwidth_given);
  CHECK_FALSE(fixed.measured_send_buffer());
  CHECK_FALSE(fixed.measured_receive_buffer());
  CHECK(fixed.describe().find("LONGPIPE_RTT=540") != std::string::npos);
  const Config measured = Config::from_variables({{"LONGPIPE_RTT", "auto"}, {"LONGPIPE_BANDWIDTH", "auto"}});
  CHECK_FALSE(measured.rtt_given);
  CHECK_FALSE(measured.bandwidth_given);
  CHECK(measured.measured_send_buffer());
  CHECK(measured.measured_receive_buffer());
  CHECK(measured.path_cache == "auto");
  CHECK(measured.describe().find("LONGPIPE_RTT=auto") != std::string::npos);
  CHECK(measured.describe().find("path measured per session") != std::string::npos);
  const Config one = Config::from_variables({{"LONGPIPE_BANDWIDTH", "50"}, {"LONGPIPE_RTT", "auto"}});
  CHECK(one.bandwidth_given);
  CHECK(one.measured_send_buffer());  // a cap only: the RTT is still measured
  const Config both = Config::from_variables({{"LONGPIPE_BANDWIDTH", "10"}, {"LONGPIPE_RTT", "100"}});
  CHECK_FALSE(both.measured_send_buffer());
  CHECK_FALSE(both.measured_receive_buffer());
  CHECK(both.describe().find("bandwidth-delay product 125000 bytes") != std::string::npos);
  const Config explicit_send =
      Config::from_variables({{"LONGPIPE_SEND_BUFFER", "100000"}, {"LONGPIPE_RTT", "auto"}, {"LONGPIPE_BANDWIDTH", "auto"}});
  CHECK_FALSE(explicit_send.measured_send_buffer());
  CHECK(explicit_send.measured_receive_buffer());
  CHECK(Config::from_variables({{"LONGPIPE_RTT", "auto"}}).rtt_given == false);
  CHECK(Config::from_variables({{"LONGPIPE_PATH_CACHE", "off"}}).path_cache == "off");
  CHECK(Config::from_variables({{"LONGPIPE_PATH_CACHE", "/tmp/x"}}).path_cache == "/tmp/x");
}

TEST_CASE("LONGPIPE_BANDWIDTH unset stands in: a floor for the buffers, not a cap; a number set caps") {
  const Config stand_in = Config::from_variables({});
  CHECK(stand_in.bandwidth_stand_in);
  CHECK_FALSE(stand_in.bandwidth_cap_bytes_per_second());
  CHECK(stand_in.send_buffer_above_stand_in());
  CHECK(stand_in.receive_buffer_above_stand_in());
  const Config stated = Config::from_variables({{"LONGPIPE_BANDWIDTH", "155"}});
  CHECK_FALSE(stated.bandwidth_stand_in);
  REQUIRE(stated.bandwidth_cap_bytes_per_second());
  CHECK(*stated.bandwidth_cap_bytes_per_second() == Approx(155e6 / 8));
  CHECK_FALSE(stated.send_buffer_above_stand_in());
  CHECK_FALSE(stated.receive_buffer_above_stand_in());
  const Config measured = Config::from_variables({{"LONGPIPE_RTT", "auto"}});  // measured sizing, not this
  CHECK_FALSE(measured.send_buffer_above_stand_in());
  CHECK_FALSE(measured.bandwidth_cap_bytes_per_second());
  const Config fixed_send = Config::from_variables({{"LONGPIPE_SEND_BUFFER", "1000000"}});
  CHECK_FALSE(fixed_send.send_buffer_above_stand_in());
  CHECK(fixed_send.receive_buffer_above_stand_in());
}

TEST_CASE("bad values name the variable and the accepted range") {
  CHECK(config_error_of({{"LONGPIPE_PATH_CACHE", "cache.txt"}}).find("LONGPIPE_PATH_CACHE='cache.txt' is invalid: expected auto, off, or an absolute file name") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_PATH_CACHE", ""}}).find("LONGPIPE_PATH_CACHE") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_RTT", "fast"}}).find("or auto") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_RTO_MIN_MS", "fast"}}).find("LONGPIPE_RTO_MIN_MS='fast'") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_RTO_MIN_MS", "0"}}).find("from 1 to") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_WINDOW_BYTES", "12x"}}).find("LONGPIPE_WINDOW_BYTES") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_WINDOW_FULL", "maybe"}}).find("block, fail, drop-oldest, keep-latest") !=
        std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_CONGESTION", "bb r"}}).find("LONGPIPE_CONGESTION") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_CONGESTION", "cubic,"}}).find("LONGPIPE_CONGESTION") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_STREAMS", "9"}}).find("from 1 to 8") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_RTO_BACKOFF", "nan"}}).find("from 1 to 16") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_KEY", ""}}).find("LONGPIPE_KEY") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_RTO_MIN_MS", "5000"}, {"LONGPIPE_RTO_MAX_MS", "1000"}}).find("must not exceed") !=
        std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_KEEPALIVE_MS", "5000"}, {"LONGPIPE_DEAD_PEER_MS", "4000"}}).find("shorter than") !=
        std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_WINDOW_MESSAGE", "5"}}).find("not a LongPipe setting") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_PVM_SOMETHING", "5"}}).find("not a LongPipe setting") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITES", "0,1"}}).empty());  // another part's setting, declared
}

TEST_CASE("a config file supplies values and the environment wins") {
  const std::string path = "config_test.conf";
  {
    std::ofstream file(path);
    file << "# comment\nRTO_MIN_MS = 300\nLONGPIPE_ACK_DELAY_MS=5\n\nLONGPIPE_COLLECTIVES=native\n";
  }
  const Config config = Config::from_variables({{"LONGPIPE_CONFIG", path}, {"LONGPIPE_ACK_DELAY_MS", "7"}});
  CHECK(config.rto_min.count() == 300);
  CHECK(config.ack_delay.count() == 7);
  {
    std::ofstream file(path);
    file << "RTO_MIN_MS 300\n";
  }
  CHECK(config_error_of({{"LONGPIPE_CONFIG", path}}).find("line 1") != std::string::npos);
  std::remove(path.c_str());
  CHECK(config_error_of({{"LONGPIPE_CONFIG", "/nonexistent/file"}}).find("LONGPIPE_CONFIG") != std::string::npos);
}

TEST_CASE("LONGPIPE_KEY_FILE: a private file of at least 16 bytes; every refusal names the variable") {
  const std::string path = "engine_config_test.key";
  auto write_key = [&](const std::string& text, mode_t mode) {
    std::remove(path.c_str());
    std::ofstream(path) << text;
    REQUIRE(::chmod(path.c_str(), mode) == 0);
  };
  write_key("0123456789abcdef0123\n", 0600);
  CHECK(Config::from_variables({{"LONGPIPE_KEY_FILE", path}}).key == "0123456789abcdef0123");
  CHECK(config_error_of({{"LONGPIPE_KEY_FILE", path}, {"LONGPIPE_KEY", "x"}}).find("both set") != std::string::npos);
  write_key("0123456789abcdef0123\n", 0644);
  CHECK(config_error_of({{"LONGPIPE_KEY_FILE", path}}).find("LONGPIPE_KEY_FILE='" + path + "' is invalid: group or others") !=
        std::string::npos);
  write_key("short\n", 0600);
  CHECK(config_error_of({{"LONGPIPE_KEY_FILE", path}}).find("5 bytes of key; expected 16 to 4096") != std::string::npos);
  std::remove(path.c_str());
  CHECK(config_error_of({{"LONGPIPE_KEY_FILE", path}}).find("LONGPIPE_KEY_FILE='" + path + "' is invalid: cannot stat") !=
        std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_KEY_FILE", "."}}).find("not a regular file") != std::string::npos);
}

TEST_CASE("LONGPIPE_ENCRYPTION is on unless set off") {
  CHECK(Config::from_variables({}).encryption);
  CHECK_FALSE(Config::from_variables({{"LONGPIPE_ENCRYPTION", "off"}}).encryption);
  CHECK(config_error_of({{"LONGPIPE_ENCRYPTION", "no"}}).find("LONGPIPE_ENCRYPTION='no' is invalid: expected on or off") !=
        std::string::npos);
}

TEST_CASE("LONGPIPE_DATAGRAM_FEC is on unless set off") {
  CHECK(Config::from_variables({}).datagram_fec);
  CHECK_FALSE(Config::from_variables({{"LONGPIPE_DATAGRAM_FEC", "off"}}).datagram_fec);
  CHECK(config_error_of({{"LONGPIPE_DATAGRAM_FEC", "1"}}).find("LONGPIPE_DATAGRAM_FEC='1' is invalid: expected on or off") !=
        std::string::npos);
}

TEST_CASE("LONGPIPE_PACING_CATCH_UP is off unless set on") {
  CHECK_FALSE(Config::from_variables({}).pacing_catch_up);
  CHECK(Config::from_variables({{"LONGPIPE_PACING_CATCH_UP", "on"}}).pacing_catch_up);
  CHECK(config_error_of({{"LONGPIPE_PACING_CATCH_UP", "yes"}}).find("LONGPIPE_PACING_CATCH_UP='yes' is invalid: expected on or off") !=
        std::string::npos);
}

TEST_CASE("job keys made by front ends are random, and fingerprints reveal only whether keys match") {
  const std::string a = lp::make_job_key();
  const std::string b = lp::make_job_key();
  CHECK(a.size() == 2 * lp::kJobKeyRandomBytes);
  CHECK(a != b);
  CHECK(lp::key_fingerprint(a) == lp::key_fingerprint(a));
  CHECK(lp::key_fingerprint(a) != lp::key_fingerprint(b));
  CHECK(lp::key_fingerprint(a).find(a.substr(0, 8)) == std::string::npos);
}
