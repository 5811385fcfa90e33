// Workload series (issue 32): lists and doubling ranges in numeric workload flags, parsed; run, sweep and
// tune over every workload of a series in one command, one session each; an interrupted series resumed; bad
// series refused with exit status 2 before anything is written.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/errors.hpp"
#include "cli/series.hpp"
#include "results/store.hpp"
#include "support.hpp"

namespace varex {
namespace {

using test::count_where;
using test::slurp;

using cli::series_combinations;
using cli::series_values;
using Strings = std::vector<std::string>;

TEST(Series, ListsAndDoublingRanges) {
  EXPECT_EQ(series_values("rows", "2^20"), Strings{"2^20"});  // one value as typed
  EXPECT_EQ(series_values("rows", "2^16..2^20"), (Strings{"65536", "131072", "262144", "524288", "1048576"}));
  EXPECT_EQ(series_values("rows", "1000..5000"), (Strings{"1000", "2000", "4000"}));
  EXPECT_EQ(series_values("selectivity", "0.01..0.64"),
            (Strings{"0.01", "0.02", "0.04", "0.08", "0.16", "0.32", "0.64"}));
  EXPECT_EQ(series_values("selectivity", "0.5, 0.01..0.02,1"), (Strings{"0.5", "0.01", "0.02", "1"}));
  EXPECT_EQ(series_values("rows", "7..7"), Strings{"7"});
  EXPECT_EQ(series_values("rows", "2^40..2^40"), Strings{"1099511627776"});
}

TEST(Series, BadSeriesAreOneLineErrorsNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"2^20..2^16", "decreases"}, {"0..2^10", "starts above 0"}, {"-0.5..1", "starts above 0"},
      {"a..b", "numbers"},         {"1,,2", "empty element"},     {"1,", "empty element"}};
  for (const auto& [text, needle] : bad) {
    try {
      series_values("rows", text);
      ADD_FAILURE() << text << " accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--rows"), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(Series, TheCrossProductVariesTheFirstFlagSlowest) {
  const auto all = series_combinations({{"rows", "10,20"}, {"selectivity", "0.1..0.2"}, {"strings", "a,b"}},
                                       {"rows", "selectivity"});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].at("rows"), "10");
  EXPECT_EQ(all[0].at("selectivity"), "0.1");
  EXPECT_EQ(all[1].at("rows"), "10");
  EXPECT_EQ(all[1].at("selectivity"), "0.2");
  EXPECT_EQ(all[2].at("rows"), "20");
  for (const auto& flags : all) EXPECT_EQ(flags.at("strings"), "a,b");  // not a numeric flag: as typed
  EXPECT_EQ(series_combinations({{"rows", "1..2^8"}, {"seed", "1..2^4"}}, {"rows", "seed"}).size(), 45u);
  EXPECT_THROW(series_combinations({{"rows", "1..2^30"}, {"seed", "1..2^30"}}, {"rows", "seed"}), UsageError);
}

// Two variants of the selection pinned: cheap on PoCL, enough for a sweep to compare.
const Strings kPins{"--set", "kernel=overflow", "--set", "ept=32",   "--set", "vec=4,8",
                    "--set", "padding=guard",   "--set", "local=64", "--set", "grid=cover"};

Strings with_pins(Strings args) {
  args.insert(args.end(), kPins.begin(), kPins.end());
  return args;
}

TEST(SeriesCli, ASweepGoesOverEveryWorkloadOfTheSeriesOneSessionEach) {
  const std::string db = test::scratch_dir("series-sweep") + "/varex.db";
  const auto r = test::run_varex(
      with_pins({"sweep", "--op", "selection", "--device", test::cpu_device().id, "--db", db, "--rows",
                 "2^10..2^12", "--selectivity", "0.1,0.5", "--max-reps", "3", "--json"}));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 6u);
  std::set<std::pair<std::uint64_t, double>> workloads;
  for (const auto& run : j) {
    EXPECT_EQ(run["status"], "finished") << run.dump();
    EXPECT_EQ(run["evaluations"], 2);
    workloads.insert({run["workload"]["params"]["rows"].get<std::uint64_t>(),
                      run["workload"]["params"]["selectivity"].get<double>()});
  }
  EXPECT_EQ(workloads.size(), 6u);
  EXPECT_EQ(j[0]["workload"]["params"]["rows"], 1024);  // the first flag varies slowest
  EXPECT_EQ(j[1]["workload"]["params"]["rows"], 1024);
  EXPECT_EQ(j[5]["workload"]["params"]["rows"], 4096);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions"), 6);
  EXPECT_EQ(count_where(db, "SELECT COUNT(DISTINCT workload_id) FROM sessions"), 6);

  // `run` over a series prints one result per workload; the text of a sweep a table per workload.
  const auto run = test::run_varex({"run", "--op", "selection", "--device", test::cpu_device().id, "--db", db,
                                    "--rows", "1000,3000", "--max-reps", "2", "--no-baseline", "--json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto runs = nlohmann::json::parse(run.out);
  ASSERT_TRUE(runs.is_array());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1]["input_rows"], 3000);
  EXPECT_TRUE(runs[1]["verified"].get<bool>());
  const auto text =
      test::run_varex(with_pins({"sweep", "--op", "selection", "--device", test::cpu_device().id, "--db", db,
                                 "--rows", "2^10,2^11", "--max-reps", "3"}));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("\"rows\":1024"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\"rows\":2048"), std::string::npos) << text.out;

  // The report draws each series it finds: time and GB/s against rows (two: one per selectivity) and against
  // selectivity (three: one per row count), the transfers split over rows; a database without one has none.
  const std::string out = test::scratch_dir("series-report");
  const auto report = test::run_varex({"report", "--db", db, "--out", out});
  ASSERT_EQ(report.status, 0) << report.err;
  std::map<std::string, int> kinds;
  std::set<std::string> axes;
  for (const auto& plot : nlohmann::json::parse(slurp(out + "/plots.json"))) {
    ++kinds[plot["kind"].get<std::string>()];
    if (plot["kind"] == "series") {
      axes.insert(plot["axis"].get<std::string>());
      EXPECT_FALSE(plot["panels"].empty()) << plot.dump();
    }
  }
  EXPECT_EQ(kinds["series"], 5);
  EXPECT_EQ(kinds["series_split"], 2);
  EXPECT_EQ(axes, (std::set<std::string>{"rows", "selectivity"}));
  const std::string single = test::scratch_dir("series-none") + "/varex.db";
  ASSERT_EQ(test::run_varex({"run", "--op", "selection", "--device", test::cpu_device().id, "--db", single,
                             "--rows", "1000", "--max-reps", "2", "--no-baseline"})
                .status,
            0);
  const std::string none = test::scratch_dir("series-none-report");
  ASSERT_EQ(test::run_varex({"report", "--db", single, "--out", none}).status, 0);
  EXPECT_EQ(slurp(none + "/plots.json").find("\"series"), std::string::npos);
}

// Two LIKE patterns at the same selectivities are two series, each titled with its pattern; the same pattern
// recorded by single commands is one series all the same.
TEST(SeriesCli, TheReportDrawsOneSeriesPerQuery) {
  const std::string db = test::scratch_dir("series-queries") + "/varex.db";
  for (const char* pattern : {"pattern=%quasi%", "pattern=a quasi%"}) {
    ASSERT_EQ(test::run_varex({"run", "--op", "str_like", "--device", test::cpu_device().id, "--db", db,
                               "--rows", "3000", "--strings", "titles", "--selectivity", "0.1,0.5", "--query",
                               pattern, "--max-reps", "2", "--no-baseline", "--quiet"})
                  .status,
              0);
  }
  for (const char* selectivity : {"0.1", "0.3"}) {  // one at a time: a series all the same
    ASSERT_EQ(test::run_varex({"run", "--op", "str_prefix", "--device", test::cpu_device().id, "--db", db,
                               "--rows", "3000", "--strings", "titles", "--selectivity", selectivity,
                               "--max-reps", "2", "--no-baseline", "--quiet"})
                  .status,
              0);
  }
  const std::string out = test::scratch_dir("series-queries-report");
  ASSERT_EQ(test::run_varex({"report", "--db", db, "--out", out}).status, 0);
  std::set<std::string> titles;
  for (const auto& plot : nlohmann::json::parse(slurp(out + "/plots.json"))) {
    if (plot["kind"] == "series") titles.insert(plot["title"].get<std::string>());
  }
  EXPECT_EQ(titles, (std::set<std::string>{
                        "Series: str_like (titles, pattern=%quasi%, rows 3,000) against selectivity",
                        "Series: str_like (titles, pattern=a quasi%, rows 3,000) against selectivity",
                        "Series: str_prefix (titles, rows 3,000) against selectivity"}));
}

// A join over --rows alone is one series: its right side and distinct keys follow the rows (their defaults);
// the same join against a right side of fixed size is another, and the titles tell them apart.
TEST(SeriesCli, ASecondRelationThatFollowsTheRowsIsOneSeries) {
  const std::string db = test::scratch_dir("series-join") + "/varex.db";
  for (const Strings& sizes : {Strings{"--rows", "64..256"}, Strings{"--rows", "64,128", "--rows2", "300"}}) {
    Strings args{"run",      "--op", "ra_join",    "--device", test::cpu_device().id, "--db",   db,
                 "--values", "1",    "--max-reps", "2",        "--no-baseline",       "--quiet"};
    args.insert(args.end(), sizes.begin(), sizes.end());
    const auto r = test::run_varex(args);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const std::string out = test::scratch_dir("series-join-report");
  ASSERT_EQ(test::run_varex({"report", "--db", db, "--out", out}).status, 0);
  std::map<std::string, std::size_t> points;  // title -> the values of rows drawn
  for (const auto& plot : nlohmann::json::parse(slurp(out + "/plots.json"))) {
    if (plot["kind"] == "series") points[plot["title"].get<std::string>()] = plot["points"].size();
  }
  EXPECT_EQ(points, (std::map<std::string, std::size_t>{
                        {"Series: ra_join (sorted_pair, rows2 follows rows) against rows", 3},
                        {"Series: ra_join (sorted_pair, rows2 300) against rows", 2}}));
}

TEST(SeriesCli, AnInterruptedSeriesResumesWhereItStopped) {
  const std::string db = test::scratch_dir("series-resume") + "/varex.db";
  const Strings args{"tune",       "--op",     "selection", "--device",        test::cpu_device().id,
                     "--db",       db,         "--rows",    "2^12,2^13,2^14",  "--strategy",
                     "random",     "--budget", "12",        "--strategy-seed", "3",
                     "--max-reps", "3",        "--json"};
  test::Background first = test::start_varex(args);
  ASSERT_GT(first.pid, 0);
  // Ctrl-C once the second workload's session has measured something.
  for (int i = 0; i < 6000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (count_where(db, "SELECT COUNT(*) FROM measurements WHERE session_id = 2") >= 2) break;
  }
  kill(first.pid, SIGINT);
  const auto interrupted = first.finish();
  ASSERT_EQ(interrupted.status, 130) << interrupted.err;
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions WHERE status = 'finished'"), 1);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions WHERE status = 'interrupted'"), 1);
  const int second_before = count_where(db, "SELECT COUNT(*) FROM measurements WHERE session_id = 2");

  const auto again = test::run_varex(args);
  ASSERT_EQ(again.status, 0) << again.err;
  const auto j = nlohmann::json::parse(again.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["status"], "finished before");
  EXPECT_EQ(j[1]["resumed_measurements"].get<int>(), second_before);
  EXPECT_EQ(j[2]["resumed_measurements"], 0);
  for (const auto& run : j) EXPECT_EQ(run["evaluations"], 12) << run.dump();
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions"), 3);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'"), 36);
  EXPECT_EQ(
      count_where(db,
                  "SELECT COUNT(*) FROM (SELECT session_id, variant_id FROM measurements WHERE purpose = "
                  "'search' GROUP BY session_id, variant_id, fidelity HAVING COUNT(*) > 1)"),
      0);
}

TEST(SeriesCli, BadSeriesExitWithStatusTwoBeforeAnythingIsWritten) {
  const std::string dir = test::scratch_dir("series-bad");
  const std::vector<std::pair<Strings, std::string>> bad{
      {{"--rows", "2^12..2^10"}, "--rows 2^12..2^10: the range decreases"},
      {{"--selectivity", "0.1,,0.2"}, "an empty element"},
      {{"--rows", "0..16"}, "starts above 0"},
      {{"--selectivity", "0.5,1.5"}, "selectivity must lie between 0 and 1"},
      {{"--rows", "1..2^30", "--seed", "1..2^30"}, "961 workloads; at most 256"}};
  for (const auto& [flags, needle] : bad) {
    const std::string db = dir + "/varex.db";
    Strings args{"sweep", "--op", "selection", "--device", test::cpu_device().id, "--db", db};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = test::run_varex(args);
    EXPECT_EQ(r.status, 2) << flags[1] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << flags[1];
  }
  // A command that takes one workload says so.
  const auto variants =
      test::run_varex({"variants", "--op", "selection", "--device", "cpu", "--rows", "10,20"});
  EXPECT_EQ(variants.status, 2);
  EXPECT_NE(variants.err.find("a series is for run, sweep and tune"), std::string::npos) << variants.err;
}

}  // namespace
}  // namespace varex
