// Nothing lost, nothing counted twice: a session has one owner (a second identical command refuses or
// waits, a dead owner's session is taken over), kill -9 at random points resumes to exactly the budget,
// merges are all or nothing, every bad input is one line and exit status 2 with nothing written, failures
// are accounted, workers die with their parent, and probes of one device never overlap.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "base/device_lock.hpp"
#include "base/errors.hpp"
#include "results/store.hpp"
#include "support.hpp"
#include "synthetic_sweep.hpp"

namespace varex {
namespace {

using test::run_varex;

std::int64_t query(const std::string& db, const std::string& sql) {
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(), sql);
  s.step();
  return s.integer(0);
}

std::vector<std::string> tune_args(const std::string& db, const std::string& budget,
                                   const std::string& rows) {
  return {"tune",   "--op",       "selection",       "--device",   test::cpu_device().id,
          "--db",   db,           "--rows",          rows,         "--budget",
          budget,   "--strategy", "random",          "--max-reps", "6",
          "--json", "--quiet",    "--strategy-seed", "11"};
}

// Waits until `sql` counts at least `n` in the database, or a minute has passed.
void wait_for(const std::string& db, const std::string& sql, std::int64_t n) {
  for (int i = 0; i < 1200; ++i) {
    if (std::filesystem::exists(db) && query(db, sql) >= n) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

TEST(Ownership, ASecondIdenticalCommandRefusesNamingTheOwnerOrWaitsForIt) {
  const std::string db = test::scratch_dir("owner-refuse") + "/varex.db";
  const auto args = tune_args(db, "40", "2^20");
  test::Background first = test::start_varex(args);
  wait_for(db, "SELECT COUNT(*) FROM measurements", 1);
  const auto second = run_varex(args);
  EXPECT_EQ(second.status, 3) << second.err;  // busy: its own status, so that scripts can retry
  EXPECT_NE(second.err.find("is being run by pid " + std::to_string(first.pid)), std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("--wait"), std::string::npos);
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;

  auto waiting_args = args;
  waiting_args.push_back("--wait");
  test::Background waiting = test::start_varex(waiting_args);
  ASSERT_EQ(first.finish().status, 0);
  const auto waited = waiting.finish();
  ASSERT_EQ(waited.status, 0) << waited.err;
  EXPECT_EQ(nlohmann::json::parse(waited.out)[0]["status"], "finished before");
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'"), 40);
}

TEST(Ownership, TwoIdenticalCommandsStartedTogetherShareNothing) {
  const std::string db = test::scratch_dir("owner-race") + "/varex.db";
  ASSERT_EQ(run_varex({"probe", "--device", test::cpu_device().id, "--db", db, "--quiet"}).status, 0);
  const auto args = tune_args(db, "15", "2^16");
  test::Background a = test::start_varex(args), b = test::start_varex(args);
  const auto ra = a.finish(), rb = b.finish();
  // One ran the session; the other refused it, busy (3), or, had the first already finished, found it
  // finished (0).
  EXPECT_TRUE(ra.status == 0 || rb.status == 0) << ra.err << rb.err;
  for (const auto* r : {&ra, &rb}) EXPECT_TRUE(r->status == 0 || r->status == 3) << r->err;
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'"), 15);
  EXPECT_EQ(
      query(db,
            "SELECT COUNT(*) FROM (SELECT 1 FROM measurements GROUP BY session_id, variant_id, purpose, "
            "fidelity HAVING COUNT(*) > 1)"),
      0);
}

TEST(Ownership, TheSchemaRefusesAnEvaluationRecordedTwice) {
  const std::string db = test::scratch_dir("owner-schema") + "/varex.db";
  results::Store store(db);
  test::record_synthetic(store, test::synthetic_device(), 1 << 16);
  results::Statement twice(store.db(), R"sql(INSERT INTO measurements (session_id, variant_id, device_id,
      workload_id, status, error, verified, compile_ms, compile_cached, h2d_ms, d2h_ms, reps, kernels, cache_flushed,
      bytes_moved, fidelity, purpose)
    SELECT session_id, variant_id, device_id, workload_id, status, error, verified, compile_ms, compile_cached, h2d_ms,
      d2h_ms, reps, kernels, cache_flushed, bytes_moved, fidelity, purpose FROM measurements LIMIT 1)sql");
  EXPECT_THROW(twice.step(), RuntimeError);
}

TEST(Ownership, KillNineAtRandomPointsResumesToExactlyTheBudget) {
  const std::string db = test::scratch_dir("kill-nine") + "/varex.db";
  const auto args = tune_args(db, "30", "2^18");
  std::mt19937 random(42);
  for (int trial = 0; trial < 4; ++trial) {
    const std::int64_t recorded =
        std::filesystem::exists(db) ? query(db, "SELECT COUNT(*) FROM measurements") : 0;
    test::Background run = test::start_varex(args);
    // A random point: after 1 to 5 more measurements, and up to 0.3 s into the next.
    wait_for(db, "SELECT COUNT(*) FROM measurements", recorded + 1 + static_cast<int>(random() % 5));
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 300));
    ::kill(run.pid, SIGKILL);
    run.finish();
  }
  const auto last = run_varex(args);
  ASSERT_EQ(last.status, 0) << last.err;
  const auto j = nlohmann::json::parse(last.out)[0];
  EXPECT_EQ(j["evaluations"], 30);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM sessions"), 1)
      << "every restart took over the dead owner's session";
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'"), 30);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'remeasure'"), 3);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM sessions WHERE status = 'finished' AND owner IS NULL"), 1);
}

TEST(Ownership, KilledInItsReMeasurementResumesToExactlyTheBudget) {
  // The re-measurements recorded before the kill must not come back as a warm start of the resumed search
  // (the session's own "bests"), which would then propose other variants than the ones recorded.
  const std::string db = test::scratch_dir("kill-remeasure") + "/varex.db";
  const auto args = tune_args(db, "8", "2^18");
  test::Background run = test::start_varex(args);
  wait_for(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'remeasure'", 1);
  ::kill(run.pid, SIGKILL);
  run.finish();
  ASSERT_GE(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'remeasure'"), 1);
  const auto last = run_varex(args);
  ASSERT_EQ(last.status, 0) << last.err;
  EXPECT_EQ(nlohmann::json::parse(last.out)[0]["evaluations"], 8);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'"), 8);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'remeasure'"), 3);
}

// Every `varex __worker` process whose parent is `parent`.
int workers_of(pid_t parent) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream cmdline(e.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmdline)), {});
    if (text.find(std::string("__worker") + '\0' + std::to_string(parent)) != std::string::npos) ++n;
  }
  return n;
}

TEST(Failures, WorkersDieWithTheirParentInEveryPhase) {
  const std::string db = test::scratch_dir("orphans") + "/varex.db";
  for (const int wait_ms : {150, 1500}) {  // during the first probe, and later
    test::Background run = test::start_varex(tune_args(db, "40", "2^20"));
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    ::kill(run.pid, SIGKILL);
    run.finish();
    int left = 0;
    for (int i = 0; i < 100 && (left = workers_of(run.pid)) > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(left, 0) << "a worker outlived its parent (killed after " << wait_ms << " ms)";
  }
}

TEST(Failures, ARunThatTimesOutExitsOneAndItsRowCostsWhatItWaited) {
  const std::string db = test::scratch_dir("timeout") + "/varex.db";
  const auto r =
      run_varex({"run", "--op", "selection", "--device", test::cpu_device().id, "--db", db, "--rows", "2^24",
                 "--min-reps", "3000", "--max-reps", "3000", "--timeout", "1", "--quiet"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("timeout"), std::string::npos) << r.err;
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM measurements WHERE status = 'timeout' AND wall_ms >= 1000"), 1);
}

// A sweep of the selection's overflow kernel on the CPU device over a few vector widths and local sizes.
std::vector<std::string> overflow_sweep(const std::string& db, const std::string& vec,
                                        const std::string& local, const std::string& verb = "sweep") {
  return test::selection_command(
      verb, db, "2^12",
      {"--set", "kernel=overflow", "--set", "ept=32", "--set", "vec=" + vec, "--set", "padding=guard",
       "--set", "grid=cover", "--set", "local=" + local, "--max-reps", "3", "--json", "--quiet"});
}

// Sets an environment variable for one test's commands (each test runs in a process of its own).
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

TEST(Failures, EveryWayAVariantFailsIsOneFailedMeasurementAndTheSessionGoesOn) {
  // Eight variants differing in their local size; five fail, each in its own way (harness/fault_injection),
  // two of them just before a variant that must still be measured: after a crash, and after a variant
  // that left the device unusable (the worker must find that out and make way for a new one).
  const ScopedEnv faults(
      "VAREX_INJECT_FAULT",
      "crash:local=64;hang:local=128;throw:local=256;resources:local=512;spoil:local=1024");
  const std::string db = test::scratch_dir("faults") + "/varex.db";
  std::vector<std::string> args = overflow_sweep(db, "4", "32,64,128,256,512,1024,2048,4096");
  args.insert(args.end(), {"--timeout", "4"});
  const auto r = run_varex(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out)[0];
  EXPECT_EQ(summary["status"], "finished") << r.out;
  EXPECT_EQ(summary["failed"], 5) << r.out;
  EXPECT_EQ(summary["ok"], 3) << r.out;
  const auto status_of = [&](int local) {
    results::Store store(db, results::Database::Mode::Existing);
    results::Statement s(
        store.db(),
        "SELECT m.status || ': ' || COALESCE(m.error, '') FROM measurements m JOIN variants v "
        "ON v.id = m.variant_id WHERE json_extract(v.params, '$.local') = ? AND m.purpose = 'search'");
    s.bind(1, static_cast<std::int64_t>(local));
    std::string all;
    while (s.step()) all += s.text(0) + "\n";
    return all;
  };
  EXPECT_NE(status_of(64).find("launch_error: the worker process was killed by signal"), std::string::npos)
      << status_of(64);
  EXPECT_NE(status_of(128).find("timeout"), std::string::npos) << status_of(128);
  EXPECT_NE(status_of(256).find("launch_error: injected fault: an exception"), std::string::npos)
      << status_of(256);
  EXPECT_NE(status_of(512).find("launch_error: cannot allocate"), std::string::npos) << status_of(512);
  EXPECT_NE(status_of(1024).find("launch_error: injected fault: an error that leaves"), std::string::npos)
      << status_of(1024);
  for (const int ok : {32, 2048, 4096}) EXPECT_EQ(status_of(ok), "ok: \n") << ok;
}

TEST(Failures, AVariantThatWouldRunPastTheBudgetIsStoppedAtItsEnd) {
  // Two variants: the default (local 32, the first listed) and one that does not finish (a kernel that
  // runs longer than the budget, as a 17 s join variant did in a 60 s tune). It is stopped where the
  // budget ends, well before its --timeout, and the default is still measured again and declared best.
  const ScopedEnv faults("VAREX_INJECT_FAULT", "hang:local=64");
  const std::string db = test::scratch_dir("stopped-by-budget") + "/varex.db";
  std::vector<std::string> args = overflow_sweep(db, "4", "32,64", "tune");
  args.insert(args.end(), {"--budget", "12s", "--timeout", "600"});
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_varex(args);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LE(wall_s, 12 * 1.1) << r.out;
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(),
                       "SELECT m.purpose, m.status, COALESCE(m.error, ''), json_extract(v.params, '$.local') "
                       "FROM measurements m JOIN variants v ON v.id = m.variant_id ORDER BY m.id");
  std::vector<std::string> rows;
  while (s.step())
    rows.push_back(s.text(0) + " " + s.text(1) + " " + std::to_string(s.integer(3)) + " " + s.text(2));
  ASSERT_EQ(rows.size(), 3u) << ::testing::PrintToString(rows);
  EXPECT_EQ(rows[0], "search ok 32 ");
  EXPECT_EQ(rows[1].rfind("search timeout 64 stopped at the end of the budget", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2], "remeasure ok 32 ");
}

TEST(Failures, AFinishedSessionReportsItsRecordedFailures) {
  const std::string db = test::scratch_dir("finished-failures") + "/varex.db";
  const std::vector<std::string> args = overflow_sweep(db, "4,8", "64");
  const auto first = run_varex(args);
  ASSERT_EQ(first.status, 0) << first.err;
  // Pretend one variant failed, as a crash would have recorded it.
  {
    results::Store store(db, results::Database::Mode::Existing);
    store.db().exec(
        "UPDATE measurements SET status = 'launch_error', verified = 0, error = 'crashed' WHERE id = "
        "(SELECT MAX(id) FROM measurements WHERE purpose = 'search')");
  }
  const auto again = nlohmann::json::parse(run_varex(args).out)[0];
  EXPECT_EQ(again["status"], "finished before");
  EXPECT_EQ(again["failed"], 1);
  EXPECT_EQ(again["ok"], 1);
}

TEST(Probe, AWaitForAnotherProcesssProbeSaysWhoseAndStopsAtCtrlC) {
  // This process holds the device's probe lock; a run on a new database must probe the device, so it waits:
  // it says for which process, and Ctrl-C ends the wait at once (it once waited 61 and 77 s, silently).
  const harness::DeviceLock lock(test::cpu_device());
  ASSERT_TRUE(lock.held());
  const std::string db = test::scratch_dir("probe-wait") + "/varex.db";
  test::Background run =
      test::start_varex({"run", "--op", "selection", "--device", test::cpu_device().id, "--db", db});
  const std::string expected = "waiting for process " + std::to_string(::getpid());
  for (int i = 0; i < 600 && test::slurp(run.err_path).find(expected) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(run.pid, SIGINT);
  const auto start = std::chrono::steady_clock::now();
  const auto r = run.finish();
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20))
      << "Ctrl-C did not end the wait";
}

TEST(Probe, ProbesOfOnePhysicalDeviceNeverOverlap) {
  // Two processes take the device's lock; the second gets it only after the first let it go.
  const std::string marker = test::scratch_dir("device-lock") + "/marker";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    harness::DeviceLock lock(test::cpu_device());
    std::ofstream(marker) << "held";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::ofstream(marker) << "released";
    ::_exit(0);
  }
  while (!std::filesystem::exists(marker)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    harness::DeviceLock lock(test::cpu_device());
    std::ifstream in(marker);
    std::string state;
    in >> state;
    EXPECT_EQ(state, "released");
  }
  int status = 0;
  ::waitpid(child, &status, 0);
}

// Bad input: one line on stderr naming the problem, exit status 2, nothing written to the database.
struct BadInput {
  const char* name;
  std::vector<std::string> args;  // after the command's own; {db} and {dir} are filled in
  const char* says;
};

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, OneLineStatusTwoNothingWritten) {
  const std::string dir = test::scratch_dir(std::string("bad-") + GetParam().name);
  const std::string db = dir + "/varex.db";
  ::mkdir((dir + "/a-directory").c_str(), 0755);
  ::mkfifo((dir + "/a-fifo").c_str(), 0644);
  // A plan whose join builds on a column with duplicates: refused once the tables are generated.
  std::ofstream(dir + "/dup-keys.json") << R"({"plan": "dup", "outputs": ["j"], "steps": [
      {"id": "orders", "op": "scan", "table": "orders", "columns": ["o_orderkey", "o_custkey"]},
      {"id": "lineitem", "op": "scan", "table": "lineitem", "columns": ["l_orderkey", "l_quantity"]},
      {"id": "j", "op": "join", "input": "orders", "build": "lineitem", "on": ["o_orderkey", "l_orderkey"]}]})";
  // JSON whose number no double holds (the plan fuzzer's find on the GPU machine: exit 1 with the JSON
  // library's own words).
  std::ofstream(dir + "/overflow.json")
      << R"({"plan": 22222222222200000e0000000000000000000000014347467612885206966})";
  std::vector<std::string> args;
  for (std::string a : GetParam().args) {
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{db}", db},
                                     {"{dir}", dir},
                                     {"{cpu}", test::cpu_device().id}}) {
      if (const auto at = a.find(key); at != std::string::npos) a.replace(at, key.size(), value);
    }
    args.push_back(a);
  }
  const auto r = run_varex(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().says), std::string::npos) << r.err;
  if (std::filesystem::exists(db)) {
    // Nothing but the device and its probe, which are facts of the machine, not of the refused command.
    for (const char* table : {"measurements", "sessions", "workloads", "operators", "variants"})
      EXPECT_EQ(query(db, std::string("SELECT COUNT(*) FROM ") + table), 0) << table;
  }
}

const BadInput kBadInputs[] = {
    {"directory",
     {"run", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--input", "{dir}/a-directory"},
     "is a directory"},
    {"directory-strings",
     {"run", "--op", "regex", "--device", "{cpu}", "--db", "{db}", "--input", "{dir}/a-directory", "--query",
      "pattern=a"},
     "is a directory"},
    {"fifo",
     {"run", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--input", "{dir}/a-fifo"},
     "not a regular file"},
    {"missing",
     {"run", "--op", "groupby", "--device", "{cpu}", "--db", "{db}", "--input", "{dir}/none.csv"},
     "does not exist"},
    {"rows-zero",
     {"tune", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "0"},
     "--rows 0"},
    {"reps",
     {"run", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "2^10", "--min-reps", "5",
      "--max-reps", "2"},
     "--min-reps 5 is more than --max-reps 2"},
    {"seed",
     {"run", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "2^10", "--seed", "-1"},
     "--seed"},
    {"strategy-seed",
     {"tune", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "2^10", "--strategy-seed",
      "-3"},
     "--strategy-seed"},
    {"strategy",
     {"tune", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "2^10", "--strategy",
      "bogus"},
     "bogus"},
    {"budget",
     {"tune", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "2^10", "--budget",
      "2 days"},
     "--budget"},
    {"merge-self", {"merge", "--into", "{dir}/a-directory/x.db", "{dir}/a-directory"}, "is not a file"},
    // A header g++ would refuse (issue 28: written, exit 0).
    {"export-namespace",
     {"export", "--db", "{db}", "--out", "{dir}/x.hpp", "--format", "header", "--namespace", "1bad"},
     "is not a C++ namespace"},
    // Refused while the workload is prepared, after its rows were written (issue 28: they stayed).
    {"plan-duplicate-build-keys",
     {"plan", "run", "{dir}/dup-keys.json", "--device", "{cpu}", "--db", "{db}", "--sf", "0.01", "--quiet"},
     "must be a key"},
    {"kth-past-rows",
     {"run", "--op", "kth_largest", "--device", "{cpu}", "--db", "{db}", "--rows", "1000", "--query",
      "k=5000", "--quiet"},
     "k=5000"},
    // A series is checked whole before anything is recorded (issue 48: the first workload's session stayed).
    {"series-kth-partway",
     {"sweep", "--op", "kth_largest", "--device", "{cpu}", "--db", "{db}", "--rows", "2^12,2^10", "--query",
      "k=2000", "--quiet"},
     "k=2000, but 1024 rows exist"},
    {"series-kth-partway-run",
     {"run", "--op", "kth_largest", "--device", "{cpu}", "--db", "{db}", "--rows", "2^12,2^10", "--query",
      "k=2000", "--quiet"},
     "k=2000, but 1024 rows exist"},
    // A report is a directory (issue 48: --out - made a directory "-" and blamed matplotlib).
    {"report-out-stdout", {"report", "--db", "{db}", "--out", "-"}, "a report is a directory of files"},
    // An empty value is never "nothing to limit" or "SQLite's temporary database" (issue 28: the empty --db
    // aborted on an exception in the heartbeat thread, the empty --budget tuned until killed).
    {"db-empty",
     {"tune", "--op", "selection", "--device", "{cpu}", "--db", "", "--rows", "2^10"},
     "--db: empty"},
    {"budget-empty",
     {"tune", "--op", "selection", "--device", "{cpu}", "--db", "{db}", "--rows", "2^10", "--budget", ""},
     "--budget: empty"},
    // A plan file is read like any input: a FIFO would block forever, a directory is not JSON.
    {"plan-fifo", {"plan", "run", "{dir}/a-fifo", "--device", "{cpu}", "--db", "{db}"}, "not a regular file"},
    {"plan-directory", {"plan", "run", "{dir}/a-directory", "--device", "{cpu}", "--db", "{db}"}, "plan '"},
    // varex tpch's own flags (the plan's command): an empty or non-directory --out, a seed past 2^64.
    {"tpch-out-empty", {"tpch", "--out", "", "--sf", "0.001"}, "--out: empty"},
    {"tpch-out-fifo", {"tpch", "--out", "{dir}/a-fifo", "--sf", "0.001"}, "is not a directory"},
    {"tpch-seed-overflow", {"tpch", "--out", "{dir}/t", "--seed", "99999999999999999999999"}, "below 2^64"},
    {"plan-number-overflow",
     {"plan", "run", "{dir}/overflow.json", "--device", "{cpu}", "--db", "{db}"},
     "not JSON varex can read"},
};

INSTANTIATE_TEST_SUITE_P(Table, BadInputs, ::testing::ValuesIn(kBadInputs), [](const auto& info) {
  std::string name = info.param.name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

TEST(BadInputs, BytesThatAreNotUtf8AreAPatternLikeAnyOther) {
  const std::string dir = test::scratch_dir("bytes");
  const std::string file = dir + "/rows.txt";
  std::ofstream(file) << "caf\xe9\nplain\n\xff\xfe\n";
  const auto r =
      run_varex({"run", "--op", "regex", "--device", test::cpu_device().id, "--db", dir + "/v.db", "--input",
                 file, "--query", "pattern=caf\xe9", "--json", "--quiet", "--no-baseline"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"], 1);
  EXPECT_TRUE(j["verified"].get<bool>());
  const auto planted =
      run_varex({"run", "--op", "str_prefix", "--device", test::cpu_device().id, "--db", dir + "/v.db",
                 "--rows", "2^12", "--plant", "\xff\xfe", "--json", "--quiet", "--no-baseline"});
  ASSERT_EQ(planted.status, 0) << planted.err;
  EXPECT_TRUE(nlohmann::json::parse(planted.out)["verified"].get<bool>());
}

// Merges: every failure names the user's file, leaves the target as it was (or absent) and no temporary
// file behind. The merges run with a temporary directory of their own: other tests merge at the same time.
std::vector<std::string> merge_leftovers(const std::string& tmp) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(tmp)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("varex-merge-", 0) == 0) out.push_back(name);
  }
  return out;
}

TEST(Merge, AllOrNothingAndTheUsersFileNamed) {
  const std::string dir = test::scratch_dir("merge-atomic");
  const std::string good = dir + "/good.db", notsql = dir + "/notsql.db", corrupt = dir + "/corrupt.db",
                    newer = dir + "/newer.db", fresh = dir + "/fresh.db", existing = dir + "/existing.db";
  {
    results::Store store(good);
    test::record_synthetic(store, test::synthetic_device(), 1 << 16);
  }
  std::ofstream(notsql) << "this is a text file, not a database; it has some length to it............";
  std::filesystem::copy_file(good, corrupt);
  {
    // Garbage over the headers of every seventh page: broken b-tree pages, as a failing disk leaves them.
    const auto size = std::filesystem::file_size(corrupt);
    std::fstream f(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    for (std::uintmax_t page = 4096; page + 64 < size; page += 7 * 4096) {
      f.seekp(static_cast<std::streamoff>(page));
      for (int i = 0; i < 64; ++i) f.put(static_cast<char>(0x5A + i * 37));
    }
  }
  std::filesystem::copy_file(good, newer);
  {
    results::Database d(newer, results::Database::Mode::Existing);
    d.exec("PRAGMA user_version = 99");
  }
  const std::string tmp = dir + "/tmp";
  std::filesystem::create_directories(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);  // inherited by the varex processes below
  const auto before = merge_leftovers(tmp);
  struct Case {
    std::string source, says;
  };
  for (const Case& c :
       {Case{notsql, "is corrupt or not an SQLite database"}, Case{corrupt, "is corrupt"},
        Case{newer, "was written by a newer varex"}, Case{dir + "/missing.db", "does not exist"}}) {
    const auto r = run_varex({"merge", "--into", fresh, good, c.source});
    EXPECT_EQ(r.status, 2) << c.source;
    EXPECT_NE(r.err.find("'" + c.source + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("varex-merge-"), std::string::npos) << "names a temporary copy: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(fresh)) << "a failed merge created the target";
  }
  // An existing target keeps exactly what it had.
  ASSERT_EQ(run_varex({"merge", "--into", existing, good}).status, 0);
  const auto had = query(existing, "SELECT COUNT(*) FROM measurements");
  {
    results::Store other(dir + "/other.db");
    DeviceInfo d = test::synthetic_device();
    d.host = "elsewhere";
    test::record_synthetic(other, d, 1 << 16);
  }
  EXPECT_EQ(run_varex({"merge", "--into", existing, dir + "/other.db", corrupt}).status, 2);
  EXPECT_EQ(query(existing, "SELECT COUNT(*) FROM measurements"), had);
  EXPECT_EQ(merge_leftovers(tmp), before) << "temporary files left behind";
  ::unsetenv("TMPDIR");
}

}  // namespace
}  // namespace varex
