// The request line of the gateway's Unix socket.
#include <catch2/catch.hpp>

#include "shell/request.h"

using lpd::parse_request;
using Kind = lpd::Request::Kind;

TEST_CASE("the three requests are recognised, anything else is invalid with a reason") {
  CHECK(parse_request("LONGPIPE-GATEWAY/1 SITE").kind == Kind::kSite);
  CHECK(parse_request("LONGPIPE-GATEWAY/1 STATUS").kind == Kind::kStatus);
  CHECK(parse_request("LONGPIPE-GATEWAY/1 STATUS json").kind == Kind::kStatus);
  const auto connect = parse_request("LONGPIPE-GATEWAY/1 CONNECT B/10.0.0.7:4000");
  CHECK(connect.kind == Kind::kConnect);
  CHECK(connect.argument == "B/10.0.0.7:4000");
  for (const char* bad : {"", "SITE", "LONGPIPE-GATEWAY/2 SITE", "LONGPIPE-GATEWAY/1 site", "LONGPIPE-GATEWAY/1 SITE ",
                          "LONGPIPE-GATEWAY/1 STATUS xml", "LONGPIPE-GATEWAY/1 CONNECT"}) {
    const auto request = parse_request(bad);
    CHECK(request.kind == Kind::kInvalid);
    CHECK_FALSE(request.argument.empty());
  }
}
