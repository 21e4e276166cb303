// Bookkeeping of a run: frame order and completeness, latency statistics, summaries, options.
#include <catch2/catch.hpp>

#include <cmath>

#include "command_line.h"
#include "frame_sequence.h"
#include "latency_statistics.h"
#include "record.h"
#include "run_summary.h"

using namespace lp::cfd;

TEST_CASE("frames received once each, in order, are complete", "[cfd][sequence]") {
  FrameSequence sequence;
  for (uint32_t i = 0; i < 5; ++i) sequence.record(i);
  CHECK(sequence.in_order());
  CHECK(sequence.complete(5));
  CHECK(sequence.missing(5) == 0);
  CHECK_FALSE(sequence.complete(6));  // the producer sent one more
  CHECK(sequence.missing(6) == 1);
  CHECK_FALSE(sequence.complete(4));  // frame 4 was never sent
  CHECK(sequence.unexpected(4) == 1);
}

TEST_CASE("gaps, duplicates and reordering are each counted", "[cfd][sequence]") {
  FrameSequence sequence;
  for (uint32_t i : {0u, 1u, 3u, 2u, 3u, 5u}) sequence.record(i);
  CHECK(sequence.received() == 6);
  CHECK(sequence.distinct() == 5);
  CHECK(sequence.duplicates() == 1);
  CHECK(sequence.out_of_order() == 1);  // 2 after 3 (the second 3 is a duplicate, not a step back)
  CHECK(sequence.missing(6) == 1);      // frame 4
  CHECK_FALSE(sequence.in_order());
  CHECK_FALSE(sequence.complete(6));
  CHECK_THROWS_AS(sequence.record(1u << 30), std::out_of_range);
}

TEST_CASE("latency statistics", "[cfd][latency]") {
  LatencyStatistics stats;
  CHECK(stats.median() == 0);
  for (int i = 1; i <= 100; ++i) stats.add(i);
  CHECK(stats.count() == 100);
  CHECK(stats.mean() == Approx(50.5));
  CHECK(stats.median() == 50);
  CHECK(stats.quantile(0.95) == 95);
  CHECK(stats.min() == 1);
  CHECK(stats.max() == 100);
}

TEST_CASE("a record travels as lines and prints as JSON and CSV", "[cfd][record]") {
  Record record;
  record.add("frames", 12LL).add("rate", 2.5).add("ok", true).add("host", std::string("site-b, \"east\""));
  const Record back = Record::from_lines(record.to_lines());
  CHECK(back.number("frames") == 12);
  CHECK(back.number("rate") == 2.5);
  CHECK(back.flag("ok"));
  CHECK(back.text("host") == "site-b, \"east\"");
  CHECK(record.to_json() == R"({"frames": 12, "rate": 2.5, "ok": true, "host": "site-b, \"east\""})");
  CHECK(record.csv_header() == "frames,rate,ok,host");
  CHECK(record.csv_row() == R"(12,2.5,true,"site-b, ""east""")");
  CHECK(Record().add("x", std::nan("")).to_json() == R"({"x": null})");

  CHECK_THROWS_WITH(back.number("host"), Catch::Contains("not a number"));
  CHECK_THROWS_WITH(back.number("absent"), Catch::Contains("no field 'absent'"));
  CHECK_THROWS_WITH(Record::from_lines("no equals sign\n"), Catch::Contains("bad record line"));
  CHECK_THROWS(Record().add("a=b", 1LL));
  CHECK_THROWS(Record().add("a", std::string("two\nlines")));
}

TEST_CASE("a consumer's summary survives the trip to the producer", "[cfd][record]") {
  RunSummary summary;
  summary.consumer = 3;
  summary.host = "site-b";
  summary.frames_sent = 50;
  summary.frames_received = 49;
  summary.missing = 1;
  summary.in_order = true;
  summary.complete = false;
  summary.frames_per_second = 12.25;
  summary.end_to_end_frames_per_second = 3.5;
  summary.display_latency_p95_ms = 612.5;
  summary.contact_sheet = "/tmp/x/contact-sheet.png";
  const RunSummary back = RunSummary::from_record(Record::from_lines(summary.to_record().to_lines()));
  CHECK(back.consumer == 3);
  CHECK(back.host == "site-b");
  CHECK(back.frames_received == 49);
  CHECK(back.missing == 1);
  CHECK(back.in_order);
  CHECK_FALSE(back.complete);
  CHECK(back.frames_per_second == 12.25);
  CHECK(back.end_to_end_frames_per_second == 3.5);
  CHECK(back.display_latency_p95_ms == 612.5);
  CHECK(back.contact_sheet == "/tmp/x/contact-sheet.png");
  CHECK_THROWS_WITH(RunSummary::from_record(Record::from_lines("consumer=1\n")), Catch::Contains("host"));
}

namespace {

// Runs CommandLine over a list of arguments (argv[0] is added).
struct Args {
  std::vector<std::string> words;
  std::vector<char*> argv;
  explicit Args(std::vector<std::string> list) : words(std::move(list)) {
    words.insert(words.begin(), "program");
    for (auto& w : words) argv.push_back(w.data());
  }
  CommandLine parse() { return CommandLine(static_cast<int>(argv.size()), argv.data(), "usage"); }
};

}  // namespace

TEST_CASE("options are parsed with ranges; mistakes are named", "[cfd][options]") {
  Args ok({"--frames", "20", "--grid=128x64", "--slow-ms", "0,250", "--verbose", "--re", "150"});
  CommandLine line = ok.parse();
  CHECK(line.integer("--frames", 1, 1, 100) == 20);
  CHECK(line.grid("--grid", {1, 1}) == std::pair{128, 64});
  CHECK(line.integers("--slow-ms", 0, 1000) == std::vector<long long>{0, 250});
  CHECK(line.flag("--verbose"));
  CHECK(line.real("--re", 100, 1, 1000) == 150);
  CHECK(line.text("--out", "default") == "default");
  CHECK_NOTHROW(line.finish());

  CHECK_THROWS_WITH(Args({"--frames", "0"}).parse().integer("--frames", 1, 1, 100),
                    Catch::Contains("--frames") && Catch::Contains("[1, 100]"));
  CHECK_THROWS_WITH(Args({"--frames", "12x"}).parse().integer("--frames", 1, 1, 100), Catch::Contains("'12x'"));
  CHECK_THROWS_WITH(Args({"--grid", "128"}).parse().grid("--grid", {1, 1}), Catch::Contains("WIDTHxHEIGHT"));
  CHECK(Args({"--grids", "128x64,256x128"}).parse().grids("--grids", {}) ==
        std::vector<std::pair<int, int>>{{128, 64}, {256, 128}});
  CHECK(Args({}).parse().grids("--grids", {{16, 16}}) == std::vector<std::pair<int, int>>{{16, 16}});
  CHECK_THROWS_WITH(Args({"--grids", "128x64,12"}).parse().grids("--grids", {}), Catch::Contains("'12'"));
  CHECK_THROWS_WITH(Args({"--re", "abc"}).parse().real("--re", 1, 1, 10), Catch::Contains("--re"));
  CHECK_THROWS_WITH(Args({"--frames"}).parse().integer("--frames", 1, 1, 100), Catch::Contains("needs a value"));
  CommandLine typo = Args({"--frmaes", "3"}).parse();
  CHECK(typo.integer("--frames", 7, 1, 100) == 7);
  CHECK_THROWS_WITH(typo.finish(), Catch::Contains("'--frmaes'"));
}
