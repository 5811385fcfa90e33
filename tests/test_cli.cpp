// The varex binary, black box: bad input gives one line and exit status 2 and leaves no rows behind;
// run prints its digest; an end-to-end sweep on the CPU device records every variant.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "datasets/int_columns.hpp"
#include "operators/selection/selection.hpp"
#include "results/store.hpp"
#include "support.hpp"
#include "synthetic_sweep.hpp"
#include "tuner/strategy.hpp"
#include "variants/space.hpp"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace varex {
namespace {

using test::count_where;

using test::run_varex;

int count_rows(const std::string& db, const std::string& table) {
  if (!std::filesystem::exists(db)) return 0;
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(), "SELECT COUNT(*) FROM " + table);
  s.step();
  return static_cast<int>(s.integer(0));
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& needle) {
  const auto r = run_varex(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos);
}

TEST(Cli, HelpAndVersion) {
  // Every command's help, the plan's sub-commands among them, exits 0 (issue 28: `plan --help` exited 2).
  std::vector<std::vector<std::string>> helps;
  for (const char* cmd : {"devices", "ops", "variants", "run", "sweep", "tune", "tuner-bench", "best",
                          "probe", "export", "merge", "import", "report", "tpch"})
    helps.push_back({cmd, "--help"});
  for (const char* cmd : {"run", "sweep", "tune"}) helps.push_back({"plan", cmd, "--help"});
  for (const char* cmd : {"sweep", "tune", "status", "resume", "cancel", "merge"})
    helps.push_back({"fleet", cmd, "--help"});
  helps.push_back({"fleet", "--help"});
  helps.push_back({"plan", "--help"});
  helps.push_back({"plan", "-h"});
  for (const auto& args : helps) {
    const auto r = run_varex(args);
    EXPECT_EQ(r.status, 0) << join(args, " ") << ": " << r.err;
    EXPECT_NE(r.out.find("--"), std::string::npos) << join(args, " ");
  }
  // The plan's own flags beside the command's.
  EXPECT_NE(run_varex({"plan", "tune", "--help"}).out.find("--sf"), std::string::npos);
  // A flag its operators word differently is not described in one operator's words (issue 28: --input
  // "reads the records" of ra_join, whose input is a sorted relation); the operator's own help says it.
  const std::string join_help = run_varex({"run", "--op", "ra_join", "--help"}).out;
  EXPECT_EQ(join_help.find("Read the records from FILE"), std::string::npos) << join_help;
  EXPECT_NE(join_help.find("Read the left relation from FILE"), std::string::npos) << join_help;
  EXPECT_EQ(run_varex({"--version"}).status, 0);
}

TEST(Cli, DevicesListsTheCpuDevice) {
  const auto r = run_varex({"devices", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto devices = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& d : devices) {
    found = found || d["id"] == test::cpu_device().id;
    for (const char* key :
         {"backend", "name", "compute_units", "global_mem", "local_mem", "max_work_group"}) {
      EXPECT_TRUE(d.contains(key)) << key;
    }
  }
  EXPECT_TRUE(found);
  // The table shows the vendor a profile consumer matches on (issue 28: only the JSON had it).
  const auto table = run_varex({"devices", "--device", "cpu"});
  EXPECT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("vendor"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(test::cpu_device().vendor), std::string::npos) << table.out;
}

// VAREX_LLC_BYTES replaces every device's last-level cache; a value that is not a number of bytes is a usage
// error. (The test script sets it too: the previous value is restored.)
TEST(Cli, TheAssumedLastLevelCacheIsTakenFromTheEnvironment) {
  const char* before = std::getenv("VAREX_LLC_BYTES");
  const std::string saved = before ? before : "";
  setenv("VAREX_LLC_BYTES", "12345678", 1);
  const auto r = run_varex({"devices", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& d : nlohmann::json::parse(r.out)) {
    EXPECT_EQ(d["cache_bytes"], 12345678) << d["id"];
    EXPECT_TRUE(d["cache_declared"].get<bool>()) << d["id"];
  }
  // Issue 48: "-5" was taken as 2^64 - 5 bytes, and a run recorded the failed allocation.
  for (const char* bad :
       {"lots", "0", "12MiB", "", "-5", "+5", " 5", "99999999999999999999", "1099511627777"}) {
    setenv("VAREX_LLC_BYTES", bad, 1);
    expect_usage_error({"devices"}, std::string("VAREX_LLC_BYTES=") + bad + ": not a positive number");
  }
  const std::string db = test::scratch_dir("cli-llc") + "/varex.db";
  setenv("VAREX_LLC_BYTES", "-5", 1);
  expect_usage_error({"run", "--op", "selection", "--device", "cpu", "--rows", "1000", "--db", db},
                     "VAREX_LLC_BYTES=-5: not a positive number");
  EXPECT_FALSE(std::filesystem::exists(db));
  if (before) {
    setenv("VAREX_LLC_BYTES", saved.c_str(), 1);
  } else {
    unsetenv("VAREX_LLC_BYTES");
  }
}

TEST(Cli, BadInputIsOneLineAndStatusTwo) {
  const std::string dir = test::scratch_dir("cli-bad");
  const std::string db = dir + "/varex.db";
  const std::string cpu = test::cpu_device().id;
  expect_usage_error({"run", "--op", "nosuchop", "--device", cpu, "--db", db}, "unknown operator 'nosuchop'");
  expect_usage_error({"run", "--op", "selection", "--device", "ocl:9:9", "--db", db},
                     "no device matches 'ocl:9:9'");
  expect_usage_error({"run", "--op", "selection", "--device", "tpu", "--db", db},
                     "unknown device selector 'tpu'");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--set", "colour=red"},
                     "unknown tunable 'colour'");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--set", "ept=3"},
                     "'3' is not a value of tunable 'ept'");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--set", "padding=guard"},
                     "cannot be padded in the kernel");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--query", "low=1"},
                     "unknown query key 'low'");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--selectivity", "2"},
                     "selectivity must lie between 0 and 1");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--rows", "2^31"},
                     "input too large");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--rows", "lots"}, "--rows");
  expect_usage_error({"sweep", "--op", "selection", "--device", cpu, "--db", db, "--set", "local=7"},
                     "'7' is not a value of tunable 'local'");
  expect_usage_error(
      {"run", "--op", "selection", "--device", cpu, "--db", "/nonexistent-dir/varex.db", "--rows", "100"},
      "cannot open database");
  expect_usage_error({"best", "--db", dir + "/missing.db"}, "does not exist");
  expect_usage_error({"run", "--op", "selection"}, "--device is required");

  const std::string bad = dir + "/bad.txt";
  std::ofstream(bad) << "1\n2\nthree\n4\n";
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--input", bad},
                     "bad.txt:3: 'three'");
  const std::string huge = dir + "/huge.txt";
  std::ofstream(huge) << "1\n99999999999\n";
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--input", huge},
                     "does not fit");
  const std::string odd = dir + "/odd.bin";
  std::ofstream(odd, std::ios::binary) << "abcde";
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--input", odd},
                     "not a whole number");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--input", dir + "/none.txt"},
                     "does not exist");

  // None of these recorded anything.
  EXPECT_EQ(count_rows(db, "measurements"), 0);
  EXPECT_EQ(count_rows(db, "sessions"), 0);
}

TEST(Cli, RunPrintsTheDigestOfAUserFile) {
  const std::string dir = test::scratch_dir("cli-run");
  const std::string input = dir + "/values.txt";
  std::ofstream(input) << "5\n-3\n10\n7\n2147483647\n-2147483648\n7\n";
  const auto r = run_varex({"run",
                            "--op",
                            "selection",
                            "--device",
                            test::cpu_device().id,
                            "--db",
                            dir + "/varex.db",
                            "--input",
                            input,
                            "--query",
                            "lo=5",
                            "--query",
                            "hi=10",
                            "--query",
                            "hi_inclusive=false",
                            "--json",
                            "--min-reps",
                            "2",
                            "--max-reps",
                            "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Rows 0 (5), 3 (7) and 6 (7) lie in [5, 10).
  EXPECT_EQ(j["rows"], 3);
  EXPECT_EQ(j["checksum"], 0 + 3 + 6);
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["op"], "selection");
  EXPECT_EQ(j["device"], test::cpu_device().id);
  for (const char* key : {"variant", "kernel_ms", "h2d_ms", "d2h_ms", "gbps", "probe_fraction"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(count_rows(dir + "/varex.db", "measurements"), 1);
}

TEST(Cli, RunWithGeneratedDataMatchesTheHostDigest) {
  const std::string dir = test::scratch_dir("cli-generated");
  const auto r = run_varex({"run",
                            "--op",
                            "selection",
                            "--device",
                            test::cpu_device().id,
                            "--db",
                            dir + "/v.db",
                            "--rows",
                            "100003",
                            "--seed",
                            "9",
                            "--selectivity",
                            "0.1",
                            "--set",
                            "kernel=overflow",
                            "--set",
                            "ept=32",
                            "--set",
                            "vec=8",
                            "--set",
                            "padding=guard",
                            "--set",
                            "local=128",
                            "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto column = datasets::uniform_int32(100003, 9);
  const auto query = operators::SelectionQuery::for_selectivity(0.1);
  std::uint64_t rows = 0, checksum = 0;
  for (std::size_t i = 0; i < column.size(); ++i) {
    if (query.matches(column[i])) {
      ++rows;
      checksum += i;
    }
  }
  EXPECT_EQ(j["rows"].get<std::uint64_t>(), rows);
  EXPECT_EQ(j["checksum"].get<std::uint64_t>(), checksum);
}

// Empty relations are inputs (issue 28: the two-relation operators refused them): the set-algebra result,
// verified against the host reference.
TEST(Cli, EmptyRelationsGiveTheSetAlgebraResult) {
  const std::string dir = test::scratch_dir("cli-empty-relations");
  const std::string db = dir + "/varex.db", empty = dir + "/empty.csv", two = dir + "/two.csv";
  std::ofstream(empty).flush();
  std::ofstream(two) << "1,2\n3,4\n";
  auto rows_of = [&](const std::string& op, const std::string& left,
                     const std::optional<std::string>& right) {
    std::vector<std::string> args{
        "run",      "--op", op,           "--device", test::cpu_device().id, "--db", db,      "--input", left,
        "--warmup", "0",    "--min-reps", "1",        "--max-reps",          "1",    "--json"};
    if (right) {
      args.push_back("--input2");
      args.push_back(*right);
    }
    const auto r = run_varex(args);
    EXPECT_EQ(r.status, 0) << op << ": " << r.err;
    if (r.status != 0) return std::int64_t{-1};
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["verified"].get<bool>()) << op;
    return j["rows"].get<std::int64_t>();
  };
  for (const char* op : {"ra_join", "ra_intersect", "ra_product"}) {
    EXPECT_EQ(rows_of(op, empty, two), 0) << op;
    EXPECT_EQ(rows_of(op, two, empty), 0) << op;
  }
  EXPECT_EQ(rows_of("ra_union", empty, two), 2);
  EXPECT_EQ(rows_of("ra_union", two, empty), 2);
  EXPECT_EQ(rows_of("ra_difference", empty, two), 0);
  EXPECT_EQ(rows_of("ra_difference", two, empty), 2);
  EXPECT_EQ(rows_of("ra_union", empty, empty), 0);
  for (const char* op : {"ra_select", "ra_project", "ra_sort", "ra_unique", "ra_reduce_by_key"})
    EXPECT_EQ(rows_of(op, empty, std::nullopt), 0) << op;
  EXPECT_EQ(rows_of("ra_reduce", empty, std::nullopt), 1) << "one sum, of nothing";
}

// Human output a user can trust at a glance (issue 28): integers as integers, signed; no value where an
// aggregate has no row (the JSON says null).
TEST(Cli, AggregateValuesReadAsIntegersAndNoneWhereNoRowIs) {
  const std::string db = test::scratch_dir("cli-values") + "/varex.db";
  auto run = [&](std::vector<std::string> query, bool json) {
    std::vector<std::string> args{"run",        "--op", "aggregate",  "--device", test::cpu_device().id,
                                  "--db",       db,     "--rows",     "1000",     "--quiet",
                                  "--min-reps", "1",    "--max-reps", "1"};
    for (auto& q : query) {
      args.push_back("--query");
      args.push_back(q);
    }
    if (json) args.push_back("--json");
    const auto r = run_varex(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  const std::string sum = run({"fn=sum"}, false);
  const auto at = sum.find("  value     ");
  ASSERT_NE(at, std::string::npos) << sum;
  const std::string value = sum.substr(at + 12, sum.find('\n', at) - at - 12);
  EXPECT_EQ(value.find_first_not_of("-0123456789"), std::string::npos) << value;
  const auto j = nlohmann::json::parse(run({"fn=sum"}, true));
  EXPECT_EQ(std::to_string(j["value"].get<std::int64_t>()), value);
  EXPECT_NE(run({"fn=min", "where=a0>2147483647"}, false).find("value     none: no row was aggregated"),
            std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(run({"fn=min", "where=a0>2147483647"}, true))["value"].is_null());
  EXPECT_EQ(nlohmann::json::parse(run({"fn=count", "where=a0>2147483647"}, true))["value"], 0);
}

// An empty records file is records of no row (issue 48: the worker crashed on it): COUNT and SUM of no
// row are 0, AVG, MIN and MAX have no value (SQL's NULL: the JSON's null), by either method, and a filter
// may name any attribute. The programs are compiled into a fresh cache, so PoCL's own "N warnings
// generated." would show on stderr if it were let through.
TEST(Cli, AnEmptyRecordsFileIsAggregatedAsNoRow) {
  const std::string dir = test::scratch_dir("cli-empty-records");
  const std::string empty = dir + "/empty.csv";
  std::ofstream(empty).flush();
  const char* cache = std::getenv("VAREX_CACHE_DIR");
  const std::optional<std::string> saved = cache ? std::optional<std::string>(cache) : std::nullopt;
  setenv("VAREX_CACHE_DIR", (dir + "/cache").c_str(), 1);
  for (const char* method : {"direct", "bits"}) {
    for (const std::string fn : {"count", "sum", "avg", "min", "max"}) {
      std::vector<std::string> args{"run",
                                    "--op",
                                    "aggregate",
                                    "--device",
                                    test::cpu_device().id,
                                    "--db",
                                    dir + "/varex.db",
                                    "--input",
                                    empty,
                                    "--set",
                                    std::string("method=") + method,
                                    "--query",
                                    "fn=" + fn,
                                    "--min-reps",
                                    "1",
                                    "--max-reps",
                                    "1",
                                    "--json"};
      if (std::string(method) == "bits") args.insert(args.end(), {"--query", "where=a3 < 7"});
      const auto r = run_varex(args);
      const std::string what = method + (" " + fn);
      ASSERT_EQ(r.status, 0) << what << ": " << r.err;
      EXPECT_EQ(r.err.find("warning"), std::string::npos) << what << ": " << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_TRUE(j["verified"].get<bool>()) << what;
      EXPECT_EQ(j["status"], "ok") << what;
      EXPECT_EQ(j["input_rows"], 0) << what;
      if (fn == "count" || fn == "sum") {
        EXPECT_EQ(j["value"], 0) << what;
      } else {
        EXPECT_TRUE(j["value"].is_null()) << what << ": " << j["value"];
      }
    }
  }
  if (saved) {
    setenv("VAREX_CACHE_DIR", saved->c_str(), 1);
  } else {
    unsetenv("VAREX_CACHE_DIR");
  }
}

// --check runs the command's own checks here and says what would run (issue 48: it printed nothing and
// passed a device selector the command refuses); it measures and records nothing.
TEST(Cli, CheckSaysWhatWouldRunOrRefusesAsTheCommandWould) {
  const std::string db = test::scratch_dir("cli-check") + "/varex.db";
  const std::string cpu = test::cpu_device().id;
  const auto ok = run_varex({"tune", "--op", "selection", "--device", cpu, "--db", db, "--rows", "2^10..2^11",
                             "--budget", "20", "--check"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("check passed: would tune selection on " + cpu + ", 2 workloads (", 0), 0) << ok.out;
  EXPECT_NE(ok.out.find("budget 20"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("nothing measured or recorded\n"), std::string::npos) << ok.out;
  EXPECT_FALSE(std::filesystem::exists(db));
  // A selector that matches none of this machine's devices: the sweep refuses it, so does its check.
  const std::string none = "cuda:7";
  const auto real = run_varex({"sweep", "--op", "selection", "--device", none, "--db", db, "--rows", "2^10"});
  const auto check =
      run_varex({"sweep", "--op", "selection", "--device", none, "--db", db, "--rows", "2^10", "--check"});
  EXPECT_EQ(real.status, 2) << real.err;
  EXPECT_EQ(check.status, 2) << check.err;
  EXPECT_EQ(check.err, real.err);
  EXPECT_EQ(check.out, "");
  EXPECT_FALSE(std::filesystem::exists(db));
}

// Another program's SQLite file given as --db is refused, named, and left as it was (issue 48: varex's
// tables were added to it even by read-only commands).
TEST(Cli, AnotherProgramsSqliteFileIsRefusedAndLeftAsItWas) {
  const std::string dir = test::scratch_dir("cli-foreign-db");
  const std::string other = dir + "/other.sqlite";
  {
    results::Database db(other, results::Database::Mode::Create);
    db.exec(
        "CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT); INSERT INTO accounts VALUES (1, 'x');");
  }
  const std::string before = test::slurp(other);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"best", "--db", other},
        {"export", "--db", other, "--out", dir + "/tuned.json"},
        {"report", "--db", other, "--out", dir + "/report"},
        {"tuner-bench", "--db", other},
        {"sweep", "--op", "selection", "--device", test::cpu_device().id, "--db", other, "--rows", "2^10"}}) {
    const auto r = run_varex(args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("'" + other + "' is not a varex database"), std::string::npos)
        << args[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(test::slurp(other) == before) << args[0] << " changed the file";
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/tuned.json"));
}

// A report whose plots fail says to install matplotlib only where it is missing (issue 48: it said so for
// any failure). Here the script fails for a reason of its own: index.html is a directory it cannot replace.
TEST(Cli, TheReportBlamesMatplotlibOnlyWhereItIsMissing) {
  if (std::getenv("VAREX_PYTHON") || std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0)
    GTEST_SKIP() << "the report's Python (/usr/bin/python3) has no matplotlib";
  const std::string dir = test::scratch_dir("cli-report-hint");
  const std::string db = dir + "/varex.db", out = dir + "/report";
  results::Store{db};
  std::filesystem::create_directories(out + "/index.html");
  std::ofstream(out + "/index.html/keep") << "x";
  const auto failed = run_varex({"report", "--db", db, "--out", out});
  EXPECT_EQ(failed.status, 1) << failed.err;
  EXPECT_NE(failed.err.find("the report script failed"), std::string::npos) << failed.err;
  EXPECT_EQ(failed.err.find("matplotlib"), std::string::npos) << failed.err;
  // An interpreter without matplotlib (one that fails whatever it runs): the hint.
  setenv("VAREX_PYTHON", "/bin/false", 1);
  const auto missing = run_varex({"report", "--db", db, "--out", dir + "/other"});
  unsetenv("VAREX_PYTHON");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("it has no matplotlib"), std::string::npos) << missing.err;
}

// One voice (issue 28): CLI11's refusals reworded as varex's, and a user's bytes echoed as escapes.
TEST(Cli, RefusalsReadAsVarexsOwnOnOnePrintableLine) {
  const std::string dir = test::scratch_dir("cli-voice");
  const std::string cpu = test::cpu_device().id;
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"tuner-bench", "--seeds", "0"}, "--seeds 0: give a number from 1 to 10000"},
           // Not a number, though CLI11's range lets it through.
           {{"run", "--op", "selection", "--device", cpu, "--energy-ms", "nan"},
            "--energy-ms nan: give a number from 0 to 60000"},
           {{"tune", "--op", "selection", "--device", cpu, "--cutoff", "inf"},
            "--cutoff inf: give a number from 0 to 1e+06"},
           {{"run", "--op", "selection", "--device", cpu, "stray"},
            "unexpected argument: stray (varex help lists the commands, varex COMMAND --help their flags)"},
           {{"run", "--op", "selection", "--device", cpu, "--warmup", "1", "--warmup", "2"},
            "--warmup is given 2 times; it takes one value"},
           {{"run", "--op", "selection", "--device", cpu, "--min-reps"}, "--min-reps needs a value"},
           {{"export", "--db", dir + "/x.db", "--out", dir + "/y", "--format", "xml"},
            "--format xml: give one of {json, header, kt-t4}"}}) {
    const auto r = run_varex(args);
    EXPECT_EQ(r.status, 2) << says;
    EXPECT_EQ(r.err, "varex: " + says + "\n");
  }
  // A byte-order mark and carriage returns from a user's file, escaped.
  std::ofstream(dir + "/bom.csv") << "\xef\xbb\xbf"
                                  << "1,2\r\n3\r\n";
  const auto r = run_varex({"run", "--op", "ra_select", "--device", cpu, "--db", dir + "/v.db", "--input",
                            dir + "/bom.csv", "--quiet"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("'\\ufeff1'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, SweepRecordsEveryVariantAndBestFindsTheFastest) {
  const std::string dir = test::scratch_dir("cli-sweep");
  const std::string db = dir + "/varex.db";
  const auto r = run_varex({"sweep", "--op", "selection", "--device", "cpu", "--db", db, "--rows", "30011",
                            "--warmup", "0", "--min-reps", "1", "--max-reps", "2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  ASSERT_EQ(summary.size(), 1u);
  const std::size_t variants = summary[0]["valid_variants"];
  EXPECT_GT(variants, 1000u);
  EXPECT_EQ(summary[0]["evaluations"].get<std::size_t>(), variants);
  EXPECT_EQ(summary[0]["ok"].get<std::size_t>(), variants);  // every variant verifies on PoCL
  EXPECT_EQ(summary[0]["failed"].get<std::size_t>(), 0u);
  EXPECT_EQ(summary[0]["remeasured"], 3);  // the three fastest, measured again before one is declared
  EXPECT_EQ(count_rows(db, "measurements"), static_cast<int>(variants) + 3);

  // `best` is the sweep's declared best: the fastest of the re-measured candidates.
  const auto best = run_varex({"best", "--db", db, "--op", "selection", "--json"});
  ASSERT_EQ(best.status, 0) << best.err;
  const auto rows = nlohmann::json::parse(best.out);
  ASSERT_EQ(rows.size(), 1u);
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement fastest(
      store.db(), "SELECT MIN(kernel_ms) FROM measurements WHERE status = 'ok' AND purpose = 'remeasure'");
  fastest.step();
  EXPECT_DOUBLE_EQ(rows[0]["kernel_ms"].get<double>(), fastest.real(0));
  EXPECT_DOUBLE_EQ(rows[0]["kernel_ms"].get<double>(), summary[0]["best"]["kernel_ms"].get<double>());
  EXPECT_EQ(rows[0]["variant"], summary[0]["best"]["variant"]);
  results::Statement session(store.db(), "SELECT kind, status, strategy FROM sessions");
  ASSERT_TRUE(session.step());
  EXPECT_EQ(session.text(0), "sweep");
  EXPECT_EQ(session.text(1), "finished");
  EXPECT_EQ(session.text(2), "exhaustive");
}

TEST(Cli, VariantsListsTheValidSpace) {
  const auto r = run_varex({"variants", "--op", "selection", "--device", "cpu", "--rows", "1000", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["count"].get<std::size_t>(), j[0]["variants"].size());
  EXPECT_LT(j[0]["count"].get<std::uint64_t>(), j[0]["space_size"].get<std::uint64_t>());
}

}  // namespace
}  // namespace varex

namespace varex {
namespace {

TEST(Cli, TuneResumesAfterInterruptionWithoutDuplicates) {
  const std::string dir = test::scratch_dir("cli-resume");
  const std::string db = dir + "/varex.db";
  const std::vector<std::string> args = test::selection_command(
      "tune", db, "2^22",
      {"--strategy", "random", "--budget", "30", "--json", "--max-reps", "8", "--strategy-seed", "4"});
  test::Background first = test::start_varex(args);
  ASSERT_GT(first.pid, 0);
  // Interrupt once a few variants are recorded, as Ctrl-C would. Waits up to 10 minutes: under the
  // sanitizers, with PoCL's cache cold and another test on the other core, the first three took over one.
  for (int i = 0; i < 6000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (std::filesystem::exists(db) && count_where(db, "SELECT COUNT(*) FROM measurements") >= 3) break;
  }
  kill(first.pid, SIGINT);
  const auto interrupted = first.finish();
  ASSERT_EQ(interrupted.status, 130) << interrupted.err;
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions WHERE status = 'interrupted'"), 1);
  const int before = count_where(db, "SELECT COUNT(*) FROM measurements");
  EXPECT_GE(before, 3);
  EXPECT_LT(before, 30);

  const auto second = test::run_varex(args);
  ASSERT_EQ(second.status, 0) << second.err;
  const auto j = nlohmann::json::parse(second.out);
  EXPECT_EQ(j[0]["resumed_measurements"].get<int>(), before);
  EXPECT_EQ(j[0]["evaluations"], 30);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM sessions WHERE status = 'finished'"), 1);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'"), 30);
  EXPECT_EQ(count_where(db,
                        "SELECT COUNT(*) FROM (SELECT variant_id FROM measurements WHERE purpose = 'search' "
                        "GROUP BY variant_id, fidelity HAVING COUNT(*) > 1)"),
            0);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'remeasure'"), 3);

  // The same command once more: the finished session is reported, nothing is measured.
  const auto third = test::run_varex(args);
  ASSERT_EQ(third.status, 0) << third.err;
  EXPECT_EQ(nlohmann::json::parse(third.out)[0]["status"], "finished before");
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM measurements"), 33);
}

// A short tune may search a small instance of its workload (here forced: --small-instance always): the
// instance's measurements are recorded under its own workload as search evaluations, and the declared best
// is re-measured on the session's workload and compared there in full (issue 49). A 256 KiB cache makes a
// quarter of 2^20 rows the smallest instance that is not cache-resident.
TEST(Cli, AShortTuneSearchesASmallInstanceAndDeclaresItsBestOnTheWorkload) {
  const std::string dir = test::scratch_dir("cli-small-instance");
  const std::string db = dir + "/varex.db";
  const char* before = std::getenv("VAREX_LLC_BYTES");
  const std::string saved = before ? before : "";
  ::setenv("VAREX_LLC_BYTES", "262144", 1);
  const auto r =
      run_varex({"tune", "--op", "selection", "--device", test::cpu_device().id, "--db", db, "--rows", "2^20",
                 "--budget", "15s", "--small-instance", "always", "--json", "--quiet"});
  if (before) {
    ::setenv("VAREX_LLC_BYTES", saved.c_str(), 1);
  } else {
    ::unsetenv("VAREX_LLC_BYTES");
  }
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json run = nlohmann::json::parse(r.out).at(0);
  ASSERT_TRUE(run.contains("small_instance")) << r.out;
  EXPECT_EQ(run["small_instance"]["divisor"], 4);
  EXPECT_EQ(run["small_instance"]["workload"]["params"]["rows"], 1 << 18);
  EXPECT_GE(run["small_instance"]["evaluations"].get<int>(), 2);
  const std::string other = "FROM measurements m JOIN sessions s ON s.id = m.session_id WHERE ";
  // Its worker lives through the search (a worker dies with the thread that started it).
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) FROM measurements WHERE status <> 'ok'"), 0);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) " + other + "m.workload_id <> s.workload_id"),
            run["small_instance"]["evaluations"].get<int>());
  EXPECT_EQ(count_where(
                db, "SELECT COUNT(*) " + other + "m.workload_id <> s.workload_id AND m.purpose <> 'search'"),
            0);
  // The best at least; the default too unless its time was over twice the best's.
  EXPECT_GE(count_where(
                db, "SELECT COUNT(*) " + other + "m.workload_id = s.workload_id AND m.purpose = 'remeasure'"),
            1);
  // The best: a full comparison of its result on the workload, and its time the re-measurement's there.
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) " + other +
                                "m.workload_id = s.workload_id AND m.variant_id = s.best_variant AND "
                                "m.checked = 'host' AND m.status = 'ok'") > 0,
            true);
  EXPECT_EQ(count_where(db, "SELECT COUNT(*) " + other +
                                "m.workload_id = s.workload_id AND m.variant_id = s.best_variant AND "
                                "m.purpose = 'remeasure' AND m.kernel_ms = s.best_kernel_ms"),
            1);
}

// A wall-time budget is the command's wall time from its start (a first probe, the preparation, every
// compilation, the search, the re-measurement): the tune ends within 10% of it, and says what it spent. Cold
// (a new database: the device's first probe; a new compile cache: every program built), with every core kept
// busy by another load, as on a shared 2-core machine.
TEST(Cli, ATuneKeepsItsWallTimeBudgetFromTheCommandsStartOnABusyMachine) {
  const std::string dir = test::scratch_dir("cli-budget");
  const std::string db = dir + "/varex.db";
  ::setenv("VAREX_CACHE_DIR", (dir + "/cache").c_str(), 1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    load.emplace_back([&stop] {
      volatile std::uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  }
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_varex({"tune", "--op", "selection", "--device", test::cpu_device().id, "--db", db,
                            "--rows", "2^18", "--budget", "15s", "--quiet"});
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  for (std::thread& t : load) t.join();
  ::unsetenv("VAREX_CACHE_DIR");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LE(wall_s, 16.5) << r.out;
  EXPECT_NE(r.out.find("budget 15s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spent s"), std::string::npos) << r.out;
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(), "SELECT spent_seconds, evaluations FROM sessions WHERE kind = 'tune'");
  ASSERT_TRUE(s.step());
  EXPECT_LE(s.real(0), 16.5);
  EXPECT_GE(s.real(0), 10.0);
  EXPECT_GE(s.integer(1), 2);
  // The default was measured first and re-measured.
  const auto defaults =
      harness::find_operator("selection").space({test::cpu_device(), std::uint64_t{1} << 18}).defaults();
  const std::string id = harness::variant_id(harness::find_operator("selection"), Backend::OpenCL, defaults);
  results::Statement first(store.db(), "SELECT variant_id FROM measurements ORDER BY id LIMIT 1");
  ASSERT_TRUE(first.step());
  EXPECT_EQ(first.text(0), id);
  EXPECT_EQ(
      count_where(
          db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'remeasure' AND variant_id = '" + id + "'"),
      1);
  // The first result was compared in full on the host, the later search results by their device digest, and
  // the declared best was compared in full before it was declared.
  results::Statement checked(store.db(), "SELECT checked FROM measurements ORDER BY id LIMIT 1");
  ASSERT_TRUE(checked.step());
  EXPECT_EQ(checked.text(0), "host");
  EXPECT_GT(
      count_where(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search' AND checked = 'device'"),
      0);
  EXPECT_EQ(
      count_where(db,
                  "SELECT COUNT(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM measurements m WHERE "
                  "m.session_id = s.id AND m.variant_id = s.best_variant AND m.checked = 'host' AND "
                  "m.status = 'ok')"),
      0);
}

// A sweep recorded under an older space (issue 49; two H100 sweeps recorded a week apart were refused with
// "no recorded sweeps to replay"): its variants, rewritten in the database as an older varex stored them,
// replay on what they share with today's space, and the command says what it left out.
TEST(Cli, TunerBenchReplaysASweepOfAnOlderSpaceOnWhatItShares) {
  const std::string db = test::scratch_dir("cli-bench-old-space") + "/varex.db";
  std::size_t recorded = 0;
  {
    results::Store store(db);
    test::record_synthetic(store, test::synthetic_device(), 1 << 20);
    recorded = static_cast<std::size_t>(count_where(db, "SELECT COUNT(*) FROM variants"));
    results::Statement(
        store.db(),
        "UPDATE variants SET params = json_set(json_remove(params, '$.padding'), '$.groups_per_cu', "
        "CASE json_extract(params, '$.ept') WHEN 16 THEN '4' ELSE 'cover' END)")
        .step();
    results::Statement(store.db(),
                       "UPDATE variants SET params = json_set(params, '$.vec', 3) WHERE json_extract(params, "
                       "'$.vec') = 8")
        .step();
  }
  const auto r = test::run_varex(
      {"tuner-bench", "--db", db, "--seeds", "2", "--budgets", "10%", "--strategies", "random", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("was recorded under an older space: "), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sweeps"].size(), 1u);
  const std::string changes = j["sweeps"][0]["space_changes"].get<std::string>();
  for (const char* part : {"'groups_per_cu' is no longer a tunable: kept its cover", "'padding' is new",
                           "vec=3 is no longer offered"})
    EXPECT_NE(changes.find(part), std::string::npos) << changes;
  const auto replayed = j["sweeps"][0]["variants"].get<std::size_t>();
  EXPECT_GT(replayed, 10u);
  EXPECT_LT(replayed, recorded);
  EXPECT_GE(j["quality"][0]["median_ratio"].get<double>(), 1.0);
}

TEST(Cli, TunerBenchReplaysRecordedSweeps) {
  const std::string dir = test::scratch_dir("cli-bench");
  const std::string db = dir + "/varex.db";
  {
    results::Store store(db);
    test::record_synthetic(store, test::synthetic_device(), 1 << 20);
  }
  const std::string csv = dir + "/bench.csv";
  const auto r = test::run_varex(
      {"tuner-bench", "--db", db, "--seeds", "3", "--budgets", "10%", "--json", "--csv", csv});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sweeps"].size(), 1u);
  EXPECT_EQ(j["quality"].size(), tuner::strategy_names().size() - 1);
  for (const auto& q : j["quality"]) EXPECT_GE(q["median_ratio"].get<double>(), 1.0);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("median_ratio"), std::string::npos);
  EXPECT_NE(header.find("evaluations_median"), std::string::npos);

  // --json FILE writes the file beside the table; the database, made read-only, is only read.
  std::filesystem::permissions(db, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                       std::filesystem::perms::others_read);
  const auto size = std::filesystem::file_size(db);
  const std::string json_file = dir + "/bench.json";
  const auto table = test::run_varex({"tuner-bench", "--db", db, "--seeds", "2", "--budgets", "5%",
                                      "--strategies", "random,ucb1", "--json", json_file});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("best/opt p25"), std::string::npos) << table.out;
  EXPECT_NE(table.err.find("tuner-bench: 8 of 8 replays"), std::string::npos) << table.err;
  std::ifstream json_in(json_file);
  const auto written = nlohmann::json::parse(json_in);
  ASSERT_EQ(written["quality"].size(), 2u);
  EXPECT_EQ(written["quality"][0]["evaluations"].size(), 2u);
  EXPECT_EQ(std::filesystem::file_size(db), size);

  // A database of an older schema is migrated in a private copy, never in place.
  const std::string old_db = dir + "/old.db";
  {
    auto steps = results::Store::migrations();
    steps.resize(3);
    results::Store old(old_db, results::Database::Mode::Create, steps);
  }
  expect_usage_error({"tuner-bench", "--db", old_db}, "no recorded sweeps");
  {
    results::Database raw(old_db, results::Database::Mode::ReadOnly);
    results::Statement version(raw, "PRAGMA user_version");
    ASSERT_TRUE(version.step());
    EXPECT_EQ(version.integer(0), 3);
  }

  expect_usage_error({"tuner-bench", "--db", db, "--budgets", "10"}, "is not a share");
  expect_usage_error({"tuner-bench", "--db", db, "--strategies", "annealing"},
                     "unknown strategy 'annealing'");
  expect_usage_error({"tune", "--op", "selection", "--device", "cpu", "--db", db, "--budget", "lots"},
                     "--budget");
  expect_usage_error({"tune", "--op", "selection", "--device", "cpu", "--db", db, "--strategy", "magic"},
                     "unknown strategy 'magic'");
  for (const char* cutoff : {"nan", "0.5", "-1", ""})
    expect_usage_error({"tune", "--op", "selection", "--device", "cpu", "--db", db, "--cutoff", cutoff},
                       "--cutoff");
  // An output file that cannot be written is refused before the replays run.
  expect_usage_error({"tuner-bench", "--db", db, "--csv", dir}, "--csv");
  expect_usage_error({"tuner-bench", "--db", db, "--json", dir + "/no/such/folder.json"}, "--json");
}

}  // namespace
}  // namespace varex

namespace varex {
namespace {

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
}

TEST(Cli, HashOperatorsReadFilesAndPrintTheirDigests) {
  const std::string dir = test::scratch_dir("cli-hash");
  const std::string cpu = test::cpu_device().id;
  // Build rows 0..3 with keys 5, -7, 5, INT_MAX; probe rows 0..4 with keys 5, 9, INT_MAX, 5, -7.
  write_lines(dir + "/build.txt", {"5", "-7", "5", "2147483647"});
  write_lines(dir + "/probe.txt", {"5", "9", "2147483647", "5", "-7"});
  auto r = test::run_varex({"run", "--op", "hashjoin", "--device", cpu, "--db", dir + "/v.db", "--input",
                            dir + "/build.txt", "--input2", dir + "/probe.txt", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Pairs (0,0) (2,0) (3,2) (0,3) (2,3) (1,4).
  EXPECT_EQ(j["rows"], 6);
  const std::uint64_t join_sum = (0 + 2 + 3 + 0 + 2 + 1) * 1000003ULL + (0 + 0 + 2 + 3 + 3 + 4);
  EXPECT_EQ(j["checksum"].get<std::uint64_t>(), join_sum);
  EXPECT_TRUE(j["verified"].get<bool>());

  write_lines(dir + "/rows.csv", {"3,10", "-2, 5", "3,-4", "-2147483648,7"});
  r = test::run_varex({"run", "--op", "groupby", "--device", cpu, "--db", dir + "/v.db", "--input",
                       dir + "/rows.csv", "--set", "padding=host", "--set", "local=32", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"], 3);
  // Groups 3 (count 2, sum 6), -2 (1, 5), INT_MIN (1, 7); keys as signed 64-bit.
  const std::uint64_t group_sum = 3 * 1000003ULL + 8 + static_cast<std::uint64_t>(-2LL) * 1000003ULL + 6 +
                                  static_cast<std::uint64_t>(-2147483648LL) * 1000003ULL + 8;
  EXPECT_EQ(j["checksum"].get<std::uint64_t>(), group_sum);
  EXPECT_TRUE(j["verified"].get<bool>());
  bool per_kernel = false;
  for (const auto& k : j["kernels"]) per_kernel = per_kernel || k["kernel"] == "compute_grouping";
  EXPECT_TRUE(per_kernel);
}

TEST(Cli, HashOperatorsRejectBadInput) {
  const std::string dir = test::scratch_dir("cli-hash-bad");
  const std::string db = dir + "/v.db";
  const std::string cpu = test::cpu_device().id;
  write_lines(dir + "/build.txt", {"1", "2"});
  write_lines(dir + "/bad.csv", {"1,2", "3;4"});
  expect_usage_error({"run", "--op", "hashjoin", "--device", cpu, "--db", db, "--input", dir + "/build.txt"},
                     "give both");
  expect_usage_error({"run", "--op", "groupby", "--device", cpu, "--db", db, "--input", dir + "/bad.csv"},
                     "bad.csv:2: expected 'key,value'");
  expect_usage_error(
      {"run", "--op", "groupby", "--device", cpu, "--db", db, "--rows", "100", "--distinct", "101"},
      "--distinct must lie between 1 and the rows");
  expect_usage_error(
      {"run", "--op", "hashjoin", "--device", cpu, "--db", db, "--rows", "100", "--match-ratio", "2"},
      "--match-ratio must lie between 0 and 1");
  expect_usage_error({"run", "--op", "selection", "--device", cpu, "--db", db, "--zipf", "1"},
                     "--zipf is not a flag of selection");
  expect_usage_error({"run", "--op", "groupby", "--device", cpu, "--db", db, "--rows2", "5"},
                     "--rows2 is not a flag of groupby");
  EXPECT_EQ(count_rows(db, "measurements"), 0);
}

TEST(Cli, CommandWordsBehaveLikeOtherTools) {
  auto r = run_varex({"foo"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown command 'foo'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tune"), std::string::npos) << "names the commands";
  r = run_varex({});
  EXPECT_EQ(r.status, 2);
  r = run_varex({"help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("tune"), std::string::npos);
  EXPECT_NE(r.out.find("plan run|sweep|tune"), std::string::npos);
  EXPECT_NE(r.out.find("3 busy"), std::string::npos) << "the exit statuses are documented";
  r = run_varex({"help", "plan"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("shipped plan (A, B"), std::string::npos) << r.out;
  r = run_varex({"help", "run"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--op"), std::string::npos);
  EXPECT_EQ(run_varex({"help", "nope"}).status, 2);
  r = run_varex({"-V"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, std::string(VAREX_VERSION) + "\n");
  expect_usage_error({"tune", "--op", "selection", "--device", "cpu", "--budget", "2 days"}, "--budget");
  expect_usage_error(
      {"tune", "--op", "selection", "--device", "cpu", "--budget", "10%", "--small-instance", "always"},
      "--small-instance always");
  expect_usage_error({"tune", "--op", "selection", "--device", "cpu", "--small-instance", "sometimes"},
                     "--small-instance");
}

// The main job's promise: `tune` declares one best, and `best`, `export` and `varex-bench --varex-db` all
// use that same variant; single runs do not become "tuned" entries unless asked; the ids `best` prints are
// taken by every command.
TEST(Cli, OneBestEverywhereAndTheIdsBestPrintsAreAccepted) {
  const std::string dir = test::scratch_dir("cli-one-best");
  const std::string db = dir + "/varex.db";
  const std::string cpu = test::cpu_device().id;
  const auto tune =
      run_varex({"tune", "--op", "selection", "--device", cpu, "--db", db, "--rows", "2^16", "--budget", "12",
                 "--strategy", "random", "--max-reps", "8", "--json", "--quiet"});
  ASSERT_EQ(tune.status, 0) << tune.err;
  EXPECT_TRUE(tune.err.empty()) << "--quiet: " << tune.err;
  const auto declared = nlohmann::json::parse(tune.out)[0]["best"];

  const auto best = run_varex({"best", "--db", db, "--json"});
  ASSERT_EQ(best.status, 0) << best.err;
  const auto rows = nlohmann::json::parse(best.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["variant"], declared["variant"]);
  EXPECT_DOUBLE_EQ(rows[0]["kernel_ms"].get<double>(), declared["kernel_ms"].get<double>());
  const std::string id = rows[0]["device"];  // "ocl:0:0@host"
  EXPECT_NE(id.find('@'), std::string::npos);

  const auto exported = run_varex({"export", "--db", db, "--out", "-", "--device", id});
  ASSERT_EQ(exported.status, 0) << exported.err;
  const auto profile = nlohmann::json::parse(exported.out);
  EXPECT_EQ(profile["version"], 5);
  EXPECT_EQ(profile["devices"][0]["operators"]["selection"][0]["variant"], declared["variant"]);
  // Each scale key with its kind, as the operator declares it.
  EXPECT_EQ(profile["devices"][0]["operators"]["selection"][0]["workload"]["class"]["kinds"]["rows"],
            "count");
  EXPECT_EQ(profile["devices"][0]["operators"]["selection"][0]["workload"]["class"]["scale"]["rows"],
            1 << 16);

  const std::string bench = dir + "/bench.json";
  ASSERT_EQ(std::system((std::string(VAREX_BENCH) + " --varex-device=" + cpu + " --varex-op=selection" +
                         " --varex-rows=2^16 --varex-db=" + db +
                         " --benchmark_filter=tuned --benchmark_min_time=0.01 --benchmark_format=json > " +
                         bench + " 2> " + dir + "/bench.err")
                            .c_str()),
            0);
  std::ifstream in(bench);
  const auto runs = nlohmann::json::parse(in)["benchmarks"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["label"], variants::describe(variants::params_from_json(declared["params"])));

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"best", "--db", db, "--device", id},
        {"report", "--db", db, "--out", dir + "/report", "--device", id},
        {"tuner-bench", "--db", db, "--device", id}}) {
    const auto r = run_varex(args);
    EXPECT_EQ(r.err.find("no device matches"), std::string::npos) << args[0] << ": " << r.err;
  }
  expect_usage_error({"best", "--db", db, "--device", "cuda:7@elsewhere"},
                     "no device matches 'cuda:7@elsewhere' in");

  // A hand-picked single run: never "best" unless asked for.
  const std::string runs_db = dir + "/runs.db";
  ASSERT_EQ(
      run_varex({"run", "--op", "selection", "--device", cpu, "--db", runs_db, "--rows", "2^14", "--quiet"})
          .status,
      0);
  EXPECT_NE(run_varex({"best", "--db", runs_db}).out.find("--include-runs"), std::string::npos);
  const auto with_runs = run_varex({"best", "--db", runs_db, "--include-runs", "--json"});
  EXPECT_EQ(nlohmann::json::parse(with_runs.out).size(), 1u);
  expect_usage_error({"export", "--db", runs_db, "--out", dir + "/p.json"}, "--include-runs");
  EXPECT_EQ(run_varex({"export", "--db", runs_db, "--out", dir + "/p.json", "--include-runs"}).status, 0);
}

}  // namespace
}  // namespace varex
