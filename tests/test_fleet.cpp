// Fleet runs (docs/FLEET.md) on the one-node Slurm of scripts/slurm_local.sh, which scripts/test.sh starts
// where it runs as root: a sweep split into shards and merged, a task cancelled and resumed, and the runs
// that must be refused before anything is submitted. Without a Slurm to talk to these skip, unless
// VAREX_REQUIRE_SLURM is set (as CI sets it), where they fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "base/command.hpp"
#include "base/errors.hpp"
#include "fleet/plan.hpp"
#include "fleet/shared_dir.hpp"
#include "fleet/slurm.hpp"
#include "results/store.hpp"
#include "support.hpp"

namespace varex {
namespace {

using test::run_varex;

#define REQUIRE_SLURM()                                                                              \
  do {                                                                                               \
    const CommandResult ping = run_command({"scontrol", "ping"});                                    \
    if (ping.status != 0 || ping.out.find("is UP") == std::string::npos) {                           \
      if (std::getenv("VAREX_REQUIRE_SLURM")) FAIL() << "no Slurm to run on: " << ping.first_line(); \
      GTEST_SKIP() << "no Slurm here (scripts/slurm_local.sh start): " << ping.first_line();         \
    }                                                                                                \
  } while (0)

// Selection on PoCL over rows per work-item (ept) and local sizes, measured `reps` times.
std::vector<std::string> selection_args(const std::string& epts, const std::string& locals,
                                        const std::string& reps) {
  return {"--op",       "selection",
          "--device",   test::cpu_device().id,
          "--rows",     "2^18",
          "--set",      "kernel=overflow",
          "--set",      "padding=guard",
          "--set",      "local=" + locals,
          "--set",      "grid=cover",
          "--set",      "vec=1",
          "--set",      "ept=" + epts,
          "--min-reps", reps,
          "--max-reps", reps};
}
// Three variants whose best is far ahead of the rest (32 rows a work-item against 2 or 1: 4 to 10 times
// faster here), so that two sweeps agree on it whatever the noise of a shared 2-core machine: 4 rows ran
// within 2.4 times of 32, which a loaded machine's re-measurements turned around.
std::vector<std::string> three_variants() {
  return selection_args("1,2,32", "64", "5");
}

nlohmann::json fleet_status(const std::string& dir) {
  const auto r = run_varex({"fleet", "status", "--dir", dir, "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Waits until the run's latest merge job has ended; returns the last status.
nlohmann::json wait_for_merge(const std::string& dir) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(15);
  while (std::chrono::steady_clock::now() < deadline) {
    const nlohmann::json st = fleet_status(dir);
    const auto& state = st["merge_state"];
    if (state.is_string() && (state == "COMPLETED" || state == "FAILED" || state == "CANCELLED")) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ADD_FAILURE() << "the fleet's merge did not end in 15 minutes: " << fleet_status(dir).dump();
  return fleet_status(dir);
}

std::multiset<std::string> searched_variants(const std::string& db) {
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(
      store.db(), "SELECT variant_id FROM measurements WHERE purpose = 'search' AND duplicate_of IS NULL");
  std::multiset<std::string> out;
  while (s.step()) out.insert(s.text(0));
  return out;
}

std::string integrity(const std::string& db) {
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(), "PRAGMA integrity_check");
  s.step();
  return s.text(0);
}

nlohmann::json best_of(const std::string& db) {
  const auto r = run_varex({"best", "--db", db, "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out);
  EXPECT_EQ(rows.size(), 1u) << r.out;
  return rows.empty() ? nlohmann::json() : rows[0];
}

TEST(Fleet, FourShardsMergeIntoTheSweepOfOneMachine) {
  REQUIRE_SLURM();
  const std::string scratch = test::scratch_dir("fleet-shards");
  const std::string single = scratch + "/single.db", dir = scratch + "/fleet";

  std::vector<std::string> sweep{"sweep", "--db", single, "--quiet"};
  for (const auto& a : three_variants()) sweep.push_back(a);
  const auto one = run_varex(sweep);
  ASSERT_EQ(one.status, 0) << one.err;

  // Each task alone on the node (the default without --gres or --cpus-per-task), so that no task's times are
  // another's load.
  std::vector<std::string> submit{"fleet", "sweep",       "--dir", dir,      "--shards",
                                  "4",     "--partition", "local", "--time", "30"};
  for (const auto& a : three_variants()) submit.push_back(a);
  const auto r = run_varex(submit);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("submitted 4 shard tasks"), std::string::npos) << r.out;
  const std::string script = test::slurp(dir + "/task.sh");
  EXPECT_NE(script.find("#SBATCH --partition=local"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --time=30"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --exclusive"), std::string::npos) << script;
  EXPECT_NE(script.find("--shard \"$task/4\""), std::string::npos) << script;

  const nlohmann::json st = wait_for_merge(dir);
  ASSERT_EQ(st["merge_state"], "COMPLETED") << st.dump();
  // Three variants in four shards of equal counts: the first shard holds none, and finishes all the same.
  for (const auto& t : st["tasks"]) {
    EXPECT_TRUE(t["done"].get<bool>()) << t.dump();
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    EXPECT_EQ(t["measured"], t["task"] == 0 ? 0 : 1) << t.dump();
  }
  ASSERT_TRUE(st["merged"]["complete"].get<bool>()) << st.dump();

  // Every variant of the space exactly once, the same variants as the one-machine sweep.
  const std::string merged = dir + "/fleet.db";
  const auto fleet_variants = searched_variants(merged);
  EXPECT_EQ(fleet_variants, searched_variants(single));
  EXPECT_EQ(fleet_variants.size(), 3u);
  EXPECT_EQ(
      test::count_where(merged, "SELECT COUNT(*) FROM sessions WHERE kind = 'sweep' AND status = 'finished'"),
      4);
  EXPECT_EQ(test::count_where(merged, "SELECT SUM(variants) FROM sessions"), 3);
  EXPECT_EQ(integrity(merged), "ok");

  // The same best. The space was chosen so that its best leads by far; checked here, so that a slower
  // machine cannot turn the comparison into a coin toss unnoticed.
  {
    results::Store store(single, results::Database::Mode::Existing);
    results::Statement s(store.db(), R"sql(SELECT kernel_ms FROM measurements
                                          WHERE purpose = 'search' AND status = 'ok' ORDER BY kernel_ms LIMIT 2)sql");
    ASSERT_TRUE(s.step());
    const double first = s.real(0);
    ASSERT_TRUE(s.step());
    ASSERT_LT(first * 2.5, s.real(0)) << "the sub-space's best no longer leads clearly on this machine";
  }
  EXPECT_EQ(best_of(merged)["variant"], best_of(single)["variant"]);

  // Merged again (as a resume's merge would), nothing is counted twice.
  const auto again = run_varex({"fleet", "merge", "--dir", dir, "--json"});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(searched_variants(merged), fleet_variants);

  // A task script run by hand, as on a machine without Slurm (the two-GPU evidence): task 2 finds its
  // session finished and measures nothing; without a task number it refuses.
  const CommandResult by_hand = run_command({"env", "SLURM_ARRAY_TASK_ID=2", "bash", dir + "/task.sh"});
  EXPECT_EQ(by_hand.status, 0) << by_hand.err;
  EXPECT_EQ(test::count_where(dir + "/shards/task-2.db", "SELECT COUNT(*) FROM measurements"), 2);
  const CommandResult no_task = run_command({"bash", dir + "/task.sh"});
  EXPECT_NE(no_task.status, 0);
  EXPECT_NE(no_task.err.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << no_task.err;
}

TEST(Fleet, ACancelledTaskResumesWithoutLosingOrRepeatingAMeasurement) {
  REQUIRE_SLURM();
  const std::string dir = test::scratch_dir("fleet-resume") + "/fleet";
  // Twelve variants in two shards, four programs under three local sizes, each measured
  // 200 times (0.2 to 3 s a variant here), so that the first task is still measuring when it is cancelled.
  std::vector<std::string> submit{"fleet", "sweep", "--dir", dir, "--shards", "2", "--cpus-per-task", "1"};
  for (const auto& a : selection_args("1,2,4,32", "32,64,128", "200")) submit.push_back(a);
  const auto r = run_varex(submit);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream plan_file(dir + "/fleet.json");
  const auto plan = nlohmann::json::parse(plan_file);
  const std::string job = plan["submissions"][0]["array_job"].get<std::string>() + "_0";

  // Cancelled once it has measured two variants.
  const std::string db = dir + "/shards/task-0.db";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'") < 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "task 0 measured nothing in 10 minutes";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const CommandResult cancel = run_command({"scancel", job});
  ASSERT_EQ(cancel.status, 0) << cancel.err;

  // The cancelled task's measurements, as they stood.
  nlohmann::json st = wait_for_merge(dir);
  ASSERT_FALSE(st["tasks"][0]["done"].get<bool>())
      << "task 0 finished before it was cancelled: " << st.dump();
  EXPECT_EQ(st["tasks"][0]["state"], "CANCELLED") << st.dump();
  EXPECT_TRUE(st["tasks"][0]["resumable"].get<bool>()) << st.dump();
  EXPECT_FALSE(st["merged"]["complete"].get<bool>()) << st.dump();
  std::set<std::string> before;
  {
    results::Store store(db, results::Database::Mode::Existing);
    results::Statement s(store.db(), "SELECT id || ' ' || variant_id || ' ' || kernel_ms FROM measurements");
    while (s.step()) before.insert(s.text(0));
    results::Statement session(store.db(), "SELECT status FROM sessions");
    ASSERT_TRUE(session.step());
    EXPECT_NE(session.text(0), "finished");
  }
  ASSERT_FALSE(before.empty());

  const auto resumed = run_varex({"fleet", "resume", "--dir", dir});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("submitted task 0 again"), std::string::npos) << resumed.out;
  st = wait_for_merge(dir);
  ASSERT_EQ(st["merge_state"], "COMPLETED") << st.dump();
  ASSERT_TRUE(st["merged"]["complete"].get<bool>()) << st.dump();

  // Nothing measured before the cancel was lost or measured again; the total is the space's.
  {
    results::Store store(db, results::Database::Mode::Existing);
    results::Statement s(store.db(), "SELECT id || ' ' || variant_id || ' ' || kernel_ms FROM measurements");
    std::set<std::string> after;
    while (s.step()) after.insert(s.text(0));
    for (const std::string& m : before) EXPECT_TRUE(after.count(m)) << "lost: " << m;
  }
  const std::string merged = dir + "/fleet.db";
  const auto variants = searched_variants(merged);
  EXPECT_EQ(variants.size(), 12u);
  EXPECT_EQ(std::set<std::string>(variants.begin(), variants.end()).size(), variants.size())
      << "a variant twice";
  EXPECT_EQ(test::count_where(merged, "SELECT COUNT(*) FROM sessions WHERE status = 'finished'"), 2);
  EXPECT_EQ(test::count_where(merged, "SELECT COUNT(*) FROM sessions"), 2);
  EXPECT_EQ(integrity(merged), "ok");
  const auto nothing = run_varex({"fleet", "resume", "--dir", dir});
  EXPECT_EQ(nothing.status, 0) << nothing.err;
  EXPECT_NE(nothing.out.find("nothing to resume"), std::string::npos) << nothing.out;
}

TEST(Fleet, ANodeTaskTunesTheDevicesOfItsNode) {
  REQUIRE_SLURM();
  const std::string dir = test::scratch_dir("fleet-node") + "/fleet";
  std::vector<std::string> submit{"fleet", "tune",     "--dir", dir,          "--nodes",
                                  "1",     "--budget", "2",     "--strategy", "random"};
  for (const auto& a : three_variants()) submit.push_back(a);
  const auto r = run_varex(submit);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string script = test::slurp(dir + "/task.sh");
  EXPECT_NE(script.find("#SBATCH --exclusive"), std::string::npos) << script;
  EXPECT_EQ(script.find("--shard"), std::string::npos) << script;
  const nlohmann::json st = wait_for_merge(dir);
  ASSERT_TRUE(st["merged"]["complete"].get<bool>()) << st.dump();
  const std::string merged = dir + "/fleet.db";
  EXPECT_EQ(
      test::count_where(merged, "SELECT COUNT(*) FROM sessions WHERE kind = 'tune' AND status = 'finished'"),
      1);
  EXPECT_EQ(searched_variants(merged).size(), 2u);  // the budget: 2 evaluations of the 3
  EXPECT_EQ(test::count_where(merged, "SELECT variants FROM sessions"), 3);
}

// A refusal: exit status 2 and one line naming the problem.
void expect_usage_error(const test::CommandResult& r, const std::string& says) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Each refusal: exit status 2, one line naming the problem, and the fleet directory left as it was.
void expect_refused(const std::vector<std::string>& flags, const std::string& dir, const std::string& says) {
  std::vector<std::string> args{"fleet", "sweep", "--dir", dir, "--shards", "2"};
  args.insert(args.end(), flags.begin(), flags.end());
  for (const auto& a : three_variants()) args.push_back(a);
  expect_usage_error(run_varex(args), says);
  EXPECT_FALSE(std::filesystem::exists(dir + "/fleet.json")) << dir;
}

// A fleet run's plan and scripts written without Slurm (--no-submit): `kind` is sweep or tune.
void write_unsubmitted(const std::string& kind, const std::string& dir,
                       const std::vector<std::string>& flags) {
  std::vector<std::string> args{"fleet", kind, "--dir", dir, "--no-submit"};
  args.insert(args.end(), flags.begin(), flags.end());
  for (const auto& a : three_variants()) args.push_back(a);
  const auto r = run_varex(args);
  ASSERT_EQ(r.status, 0) << r.err;
}

// Runs task `k` of a fleet by hand, as a machine without Slurm does.
void run_task_by_hand(const std::string& dir, std::uint32_t k) {
  const CommandResult r =
      run_command({"env", "SLURM_ARRAY_TASK_ID=" + std::to_string(k), "bash", dir + "/task.sh"});
  ASSERT_EQ(r.status, 0) << r.err;
}

// A Slurm configuration whose controller nothing answers (the discard port), for SLURM_CONF.
std::string unreachable_slurm_conf(const std::string& scratch) {
  const std::string conf = scratch + "/unreachable.conf";
  std::ifstream in("/etc/slurm/slurm.conf");
  std::ofstream out(conf);
  for (std::string line; std::getline(in, line);) out << line << "\n";
  out << "SlurmctldPort=9\n";   // discard: nothing listens there
  out << "MessageTimeout=2\n";  // each client gives up after 2 s rather than the default 18 (1 fails
                                // silently)
  return conf;
}

TEST(Fleet, RefusesWhatCannotRunBeforeSubmittingAnything) {
  REQUIRE_SLURM();
  const std::string scratch = test::scratch_dir("fleet-refusals");
  const std::string dir = scratch + "/fleet";
  // Slurm's own refusals, asked through sbatch --test-only.
  expect_refused({"--partition", "nosuch"}, dir, "Slurm has no partition 'nosuch'");
  expect_refused({"--gres", "gpu:1"}, dir, "Slurm refuses the tasks' options");
  EXPECT_FALSE(std::filesystem::exists(dir)) << "a refused run left its directory behind";
  // A directory this host alone sees, for a partition that spans another host.
  expect_refused({"--partition", "spread"}, dir, "own file system");
  // A directory that cannot be written.
  const std::string unwritable = geteuid() == 0 ? "/sys/varex-fleet" : scratch + "/locked/fleet";
  if (geteuid() != 0) {
    std::filesystem::create_directories(scratch + "/locked");
    std::filesystem::permissions(scratch + "/locked",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  }
  expect_refused({}, unwritable, "is not writable");
  // A directory that holds a run already, or other files.
  std::filesystem::create_directories(scratch + "/busy");
  std::ofstream(scratch + "/busy/notes.txt") << "mine\n";
  expect_refused({}, scratch + "/busy", "is not empty");
  expect_refused({}, "", "--dir is empty");
  // The sweep's own flags, refused as the sweep refuses them, and the flags the fleet sets itself.
  expect_refused({"--set", "local=7"}, dir, "local");
  expect_refused({"--db", "mine.db"}, dir, "--db is not for a fleet run");
  // A controller that does not answer.
  setenv("SLURM_CONF", unreachable_slurm_conf(scratch).c_str(), 1);
  expect_refused({}, dir, "Slurm is not reachable");
  unsetenv("SLURM_CONF");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// Issue 48: with the controller down, a live run is neither "nothing to cancel" nor "(forgotten)".
TEST(Fleet, SaysSlurmIsUnreachableInsteadOfGuessingTheJobsStates) {
  REQUIRE_SLURM();
  const std::string scratch = test::scratch_dir("fleet-unreachable");
  const std::string dir = scratch + "/fleet";
  // Measured long enough (200 repetitions of twelve variants) to be waiting or running throughout.
  std::vector<std::string> submit{"fleet", "sweep", "--dir", dir, "--shards", "1", "--cpus-per-task", "1"};
  for (const auto& a : selection_args("1,2,4,32", "32,64,128", "200")) submit.push_back(a);
  const auto r = run_varex(submit);
  ASSERT_EQ(r.status, 0) << r.err;

  setenv("SLURM_CONF", unreachable_slurm_conf(scratch).c_str(), 1);
  const auto cancel = run_varex({"fleet", "cancel", "--dir", dir});
  const auto resume = run_varex({"fleet", "resume", "--dir", dir});
  const auto status = run_varex({"fleet", "status", "--dir", dir});
  const auto status_json = run_varex({"fleet", "status", "--dir", dir, "--json"});
  unsetenv("SLURM_CONF");

  expect_usage_error(cancel, "Slurm is not reachable");
  EXPECT_EQ(cancel.out.find("nothing to cancel"), std::string::npos) << cancel.out;
  expect_usage_error(resume, "Slurm is not reachable");
  EXPECT_EQ(status.status, 0) << status.err;
  EXPECT_NE(status.out.find("Slurm is not reachable"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("(forgotten)"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("(unknown)"), std::string::npos) << status.out;
  ASSERT_EQ(status_json.status, 0) << status_json.err;
  const auto st = nlohmann::json::parse(status_json.out);
  EXPECT_TRUE(st["slurm_unreachable"].is_string()) << st.dump();
  EXPECT_FALSE(st["tasks"][0]["resumable"].get<bool>()) << st.dump();

  // With the controller back, the run is still there to cancel.
  const auto cancelled = run_varex({"fleet", "cancel", "--dir", dir});
  EXPECT_EQ(cancelled.status, 0) << cancelled.err;
  EXPECT_NE(cancelled.out.find("cancelled"), std::string::npos) << cancelled.out;
  EXPECT_TRUE(fleet_status(dir)["slurm_unreachable"].is_null());
}

TEST(Fleet, SaysWhenNodeTasksOutnumberThePartitionsNodes) {
  REQUIRE_SLURM();
  const std::string dir = test::scratch_dir("fleet-more-nodes") + "/fleet";
  std::vector<std::string> submit{"fleet", "tune",        "--dir", dir,        "--nodes",
                                  "2",     "--partition", "local", "--budget", "1"};
  for (const auto& a : three_variants()) submit.push_back(a);
  const auto r = run_varex(submit);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("2 node tasks on partition 'local' of 1 node: tasks will share nodes"),
            std::string::npos)
      << r.err;
  const auto cancel = run_varex({"fleet", "cancel", "--dir", dir});
  EXPECT_EQ(cancel.status, 0) << cancel.err;
}

// The pieces that need no Slurm: runs written with --no-submit, their tasks run by hand.

TEST(FleetStatus, PrintsTheJsonOfARunNoJobOfWhichSlurmKnows) {
  const std::string dir = test::scratch_dir("fleet-status-json") + "/fleet";
  write_unsubmitted("sweep", dir, {"--shards", "2"});
  const auto r = run_varex({"fleet", "status", "--dir", dir, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto st = nlohmann::json::parse(r.out);
  ASSERT_EQ(st["tasks"].size(), 2u) << r.out;
  EXPECT_TRUE(st["tasks"][0]["state"].is_null()) << r.out;
  EXPECT_TRUE(st["merge_state"].is_null()) << r.out;
  EXPECT_TRUE(st["tasks"][1]["resumable"].get<bool>()) << r.out;
}

TEST(FleetPlacement, RefusesValuesThatAreNotOneWordOfSlurmsForm) {
  const std::string dir = test::scratch_dir("fleet-placement") + "/fleet";
  // A newline would end the #SBATCH line: a shell command, or another #SBATCH option, would follow.
  expect_refused({"--no-submit", "--sbatch-option=--constraint=h100\necho hijacked"}, dir,
                 "--sbatch-option '--constraint=h100\\necho hijacked' holds a newline");
  expect_refused({"--no-submit", "--partition", "local\n#SBATCH --nodelist=other"}, dir,
                 "--partition 'local\\n#SBATCH --nodelist=other' holds a newline");
  expect_refused({"--no-submit", "--account", "lab\tx"}, dir, "--account");
  expect_refused({"--no-submit", "--time", "soon"}, dir, "--time 'soon' is not a Slurm time limit");
  expect_refused({"--no-submit", "--time", "1:xx"}, dir, "--time '1:xx'");
  expect_refused({"--no-submit", "--time=-5"}, dir, "--time");
  expect_refused({"--no-submit", "--gres", "gpu::1"}, dir, "--gres 'gpu::1' is not a Slurm gres list");
  expect_refused({"--no-submit", "--gres", "gpu:1 "}, dir, "--gres");
  expect_refused({"--no-submit", "--partition", "gpu;rm"}, dir, "--partition 'gpu;rm'");
  expect_refused({"--no-submit", "--account", "my lab"}, dir, "--account 'my lab'");
  expect_refused({"--no-submit", "--qos", "high$x"}, dir, "--qos");
  expect_refused({"--no-submit", "--sbatch-option=constraint=h100"}, dir, "--sbatch-option");
  expect_refused({"--no-submit", "--sbatch-option=--comment=two words"}, dir, "--sbatch-option");
  expect_refused({"--no-submit", "--sbatch-option=--mem=4G'"}, dir, "--sbatch-option");
  expect_refused({"--no-submit", "--cpus-per-task", "0"}, dir, "--cpus-per-task 0");
  EXPECT_FALSE(std::filesystem::exists(dir));

  // Slurm's own forms go through, one #SBATCH line each.
  write_unsubmitted("sweep", dir,
                    {"--shards", "2", "--time", "1-12:00", "--gres", "gpu:h100:1,nvme:1", "--partition",
                     "gpu.a-1", "--account", "lab_1", "--sbatch-option=--mem=64G"});
  const std::string script = test::slurp(dir + "/task.sh");
  for (const char* line :
       {"#SBATCH --time=1-12:00\n", "#SBATCH --gres=gpu:h100:1,nvme:1\n", "#SBATCH --partition=gpu.a-1\n",
        "#SBATCH --account=lab_1\n", "#SBATCH --mem=64G\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << script;
}

TEST(FleetTune, IsSplitByNodesAndSaysSoWhenGivenShards) {
  const std::string dir = test::scratch_dir("fleet-tune-shards") + "/fleet";
  std::vector<std::string> args{"fleet", "tune", "--dir", dir, "--shards", "2"};
  for (const auto& a : three_variants()) args.push_back(a);
  const auto r = run_varex(args);
  expect_usage_error(r, "--shards is for a sweep");
  EXPECT_NE(r.err.find("--nodes"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// Two node tasks of one tune on like nodes: each its own strategy seed, derived from the base seed.
TEST(FleetTune, GivesEachNodeTaskItsOwnSeed) {
  const std::string scratch = test::scratch_dir("fleet-tune-seeds");
  const std::string dir = scratch + "/fleet";
  write_unsubmitted("tune", dir,
                    {"--nodes", "2", "--budget", "2", "--strategy", "random", "--strategy-seed", "7"});
  std::ifstream plan_file(dir + "/fleet.json");
  const auto plan = nlohmann::json::parse(plan_file);
  EXPECT_EQ(plan["strategy_seed"], 7) << plan.dump();
  for (const auto& a : plan["args"])
    EXPECT_EQ(a.get<std::string>().find("--strategy-seed"), std::string::npos);
  for (std::uint32_t k = 0; k < 2; ++k) run_task_by_hand(dir, k);
  EXPECT_EQ(test::count_where(dir + "/shards/task-0.db", "SELECT seed FROM sessions WHERE kind = 'tune'"), 7);
  EXPECT_EQ(test::count_where(dir + "/shards/task-1.db", "SELECT seed FROM sessions WHERE kind = 'tune'"), 8);

  // Without --strategy-seed, the tune's default is the base.
  write_unsubmitted("tune", scratch + "/default", {"--nodes", "3"});
  EXPECT_NE(test::slurp(scratch + "/default/task.sh").find("seeds=(1 2 3)\n"), std::string::npos);
  // A seed as the tune reads it, hexadecimal too.
  write_unsubmitted("tune", scratch + "/hex", {"--nodes", "2", "--strategy-seed=0x10"});
  EXPECT_NE(test::slurp(scratch + "/hex/task.sh").find("seeds=(16 17)\n"), std::string::npos);
}

// A user operator given with --op-dir (relative here): the task script loads it from its absolute directory,
// so a task on a node whose environment has no VAREX_OP_PATH runs it.
TEST(Fleet, ATaskLoadsTheUserOperatorsTheCommandWasGiven) {
  const std::string dir = test::scratch_dir("fleet-user-op") + "/fleet";
  const std::string example =
      std::filesystem::relative(std::string(VAREX_SOURCE_DIR) + "/examples/user-operators/reduce_sum")
          .string();
  const auto r =
      run_varex({"fleet",      "sweep", "--dir",      dir,          "--no-submit", "--shards", "2",
                 "--op-dir",   example, "--op",       "reduce_sum", "--rows",      "1000",     "--device",
                 "ocl:0:0",    "--set", "block=64",   "--set",      "ept=4",       "--set",    "groups=0",
                 "--min-reps", "1",     "--max-reps", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string script = test::slurp(dir + "/task.sh");
  const std::string absolute = std::filesystem::absolute(example).lexically_normal().string();
  EXPECT_NE(script.find("export VAREX_OP_PATH='" + absolute + "'\n"), std::string::npos) << script;
  EXPECT_NE(test::slurp(dir + "/merge.sh").find("export VAREX_OP_PATH="), std::string::npos);
  ASSERT_EQ(std::getenv("VAREX_OP_PATH"), nullptr);
  for (std::uint32_t k = 0; k < 2; ++k) run_task_by_hand(dir, k);
  // block 64, ept 4 and the covering grid: the two methods, one per shard.
  const std::string verified = "SELECT COUNT(DISTINCT variant_id) FROM measurements WHERE status = 'ok'";
  EXPECT_EQ(test::count_where(dir + "/shards/task-0.db", verified) +
                test::count_where(dir + "/shards/task-1.db", verified),
            2);
}

TEST(FleetDirectory, ACommandOnADirectoryThatIsNoFleetLeavesNothingThere) {
  const std::string dir = test::scratch_dir("fleet-not-a-fleet");
  for (const char* command : {"merge", "resume", "cancel"}) {
    expect_usage_error(run_varex({"fleet", command, "--dir", dir}), "is not a fleet directory");
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << command << " left a file in " << dir;
    expect_usage_error(run_varex({"fleet", command, "--dir", dir + "/missing"}), "is not a fleet directory");
    EXPECT_FALSE(std::filesystem::exists(dir + "/missing")) << command;
  }
  // Still an empty directory, which a fleet run takes.
  write_unsubmitted("sweep", dir, {"--shards", "2"});
}

TEST(FleetMerge, SaysSoWhenNoTaskHasADatabase) {
  const std::string dir = test::scratch_dir("fleet-merge-nothing") + "/fleet";
  write_unsubmitted("sweep", dir, {"--shards", "2"});
  const auto r = run_varex({"fleet", "merge", "--dir", dir});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("merged nothing: none of the 2 tasks has a database yet"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("into"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/fleet.db"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/merged.json"));
  const auto status = run_varex({"fleet", "status", "--dir", dir});
  EXPECT_NE(status.out.find("not merged yet"), std::string::npos) << status.out;
}

// The results of a fleet on a read-only share: `best` and `export` read fleet.db where SQLite cannot create
// its WAL files, and change nothing.
TEST(FleetMerge, TheMergedDatabaseReadsInADirectoryThatCannotBeWritten) {
  const std::string scratch = test::scratch_dir("fleet-read-only");
  const std::string dir = scratch + "/fleet", shown = scratch + "/shown";
  write_unsubmitted("sweep", dir, {"--shards", "1"});
  run_task_by_hand(dir, 0);
  const auto merged = run_varex({"fleet", "merge", "--dir", dir});
  ASSERT_EQ(merged.status, 0) << merged.err;
  const nlohmann::json writable_best = best_of(dir + "/fleet.db")["variant"];
  // Read-only: a read-only bind mount for root (whom permissions do not stop), else permissions; undone
  // however the test ends.
  struct ReadOnlyView {
    std::string dir, shown;
    bool mounted = false;
    ~ReadOnlyView() {
      if (mounted) run_command({"umount", shown});
      std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add);
    }
  } view{dir, shown};
  std::filesystem::create_directories(shown);
  if (geteuid() == 0) {
    const CommandResult mount = run_command({"mount", "--bind", "-o", "ro", dir, shown});
    if (mount.status != 0) GTEST_SKIP() << "cannot mount read-only here: " << mount.err;
    view.mounted = true;
  } else {
    std::filesystem::permissions(dir,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    std::filesystem::remove(shown);
    std::filesystem::create_symlink(dir, shown);
  }
  const std::string db = shown + "/fleet.db";
  EXPECT_EQ(best_of(db)["variant"], writable_best);
  const auto exported =
      run_varex({"export", "--db", db, "--format", "json", "--out", scratch + "/profile.json"});
  EXPECT_EQ(exported.status, 0) << exported.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/fleet.db-wal"));
}

TEST(FleetPlan, RoundTripsThroughItsJsonAndNamesEachTasksLastJob) {
  fleet::FleetPlan plan;
  plan.kind = "sweep";
  plan.split = "shard";
  plan.tasks = 4;
  plan.varex = "/opt/varex/bin/varex";
  plan.args = {"--op", "selection", "--query", "lo=1 hi=2"};
  plan.placement.gres = "gpu:h100:1";
  plan.placement.time = "2:00:00";
  plan.placement.options = {"--constraint=h100"};
  plan.strategy_seed = 18446744073709551615ull;
  plan.submissions = {{"100", {0, 1, 2, 3}, "101", "2026-11-27T06:00:00Z"}, {"205", {1, 3}, "206", "later"}};
  const fleet::FleetPlan back = fleet::FleetPlan::from_json(nlohmann::json::parse(plan.to_json().dump()));
  EXPECT_EQ(back.to_json(), plan.to_json());
  EXPECT_EQ(back.task_job(0), "100_0");
  EXPECT_EQ(back.task_job(3), "205_3");
  EXPECT_EQ(back.task_strategy_seed(0), 18446744073709551615ull);
  EXPECT_EQ(back.task_strategy_seed(2), 1u);  // around, as seeds are any 64-bit value
  EXPECT_EQ(back.placement.sbatch_options(),
            (std::vector<std::string>{"--gres=gpu:h100:1", "--time=2:00:00", "--constraint=h100"}));
}

TEST(FleetSlurm, ReadsScontrolsRecords) {
  const auto records = fleet::parse_scontrol_records(
      "JobId=7 ArrayJobId=6 ArrayTaskId=1 JobName=varex-sweep JobState=COMPLETED Reason=None ExitCode=0:0\n"
      "\n"
      "JobId=6 ArrayJobId=6 ArrayTaskId=2-3 JobState=PENDING Reason=Resources ExitCode=0:0\n");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("ArrayTaskId"), "1");
  EXPECT_EQ(records[1].at("ArrayTaskId"), "2-3");
  EXPECT_EQ(records[1].at("Reason"), "Resources");
  EXPECT_TRUE((fleet::JobState{"PENDING", "", ""}).live());
  EXPECT_FALSE((fleet::JobState{"CANCELLED", "", ""}).live());
}

TEST(FleetDirectory, ALocalFileSystemIsSharedOnlyWithThisHost) {
  const std::string dir = test::scratch_dir("fleet-local-dir");
  EXPECT_FALSE(fleet::file_system_of(dir).network) << fleet::file_system_of(dir).type;
  EXPECT_NO_THROW(fleet::check_fleet_directory(dir, {"localhost"}, false));
  EXPECT_THROW(fleet::check_fleet_directory(dir, {"localhost", "gpu-node-17"}, false), UsageError);
  EXPECT_NO_THROW(fleet::check_fleet_directory(dir, {"gpu-node-17"}, true));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "the write probe stayed";
}

}  // namespace
}  // namespace varex
