// Several devices at once: the schedule (views of one physical device never together, CPU devices alone,
// lanes really concurrent), concurrent writers on one store, and sweep/tune over two identical devices
// (PoCL's two pthread devices standing in for two identical GPUs), each in a session of its own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "base/errors.hpp"
#include "base/interrupt.hpp"
#include "harness/operators/operator.hpp"
#include "harness/worker.hpp"
#include "results/store.hpp"
#include "support.hpp"
#include "tuner/schedule.hpp"
#include "tuner/session.hpp"

namespace varex {
namespace {

DeviceInfo device(const std::string& id, const std::string& type, const std::string& physical) {
  DeviceInfo d;
  d.id = id;
  d.backend = id.rfind("cuda:", 0) == 0 ? Backend::Cuda : Backend::OpenCL;
  d.type = type;
  d.physical = physical;
  d.host = "node";
  return d;
}

// Two H200s with an OpenCL and a CUDA view each, and the host CPU through PoCL.
std::vector<DeviceInfo> two_gpu_machine() {
  return {device("ocl:0:0", "cpu", "index 0"), device("ocl:1:0", "gpu", "pci 0000:3b:00.0"),
          device("ocl:1:1", "gpu", "pci 0000:86:00.0"), device("cuda:0", "gpu", "pci 0000:3b:00.0"),
          device("cuda:1", "gpu", "pci 0000:86:00.0")};
}

std::vector<std::vector<std::string>> ids(const tuner::Phase& phase) {
  std::vector<std::vector<std::string>> out;
  for (const auto& lane : phase.lanes) {
    out.emplace_back();
    for (const auto& d : lane.devices) out.back().push_back(d.id);
  }
  return out;
}

TEST(Schedule, OneLanePerPhysicalDeviceAndCpuDevicesAlone) {
  const auto phases = tuner::plan_schedule(two_gpu_machine());
  ASSERT_EQ(phases.size(), 2u);
  // The second lane takes its views the other way round: never the same model on both GPUs at once.
  EXPECT_EQ(ids(phases[0]),
            (std::vector<std::vector<std::string>>{{"ocl:1:0", "cuda:0"}, {"cuda:1", "ocl:1:1"}}));
  EXPECT_EQ(ids(phases[1]), (std::vector<std::vector<std::string>>{{"ocl:0:0"}}));

  const auto sequential = tuner::plan_schedule(two_gpu_machine(), {false, true});
  ASSERT_EQ(sequential.size(), 5u);
  for (const auto& p : sequential) EXPECT_EQ(p.lanes.size(), 1u);

  // Two CPU devices (PoCL's pthread twice) run one after the other unless a test says otherwise.
  const std::vector<DeviceInfo> cpus{device("ocl:0:0", "cpu", "index 0"),
                                     device("ocl:0:1", "cpu", "index 1")};
  EXPECT_EQ(tuner::plan_schedule(cpus).size(), 2u);
  const auto together = tuner::plan_schedule(cpus, {true, false});
  ASSERT_EQ(together.size(), 1u);
  EXPECT_EQ(together[0].lanes.size(), 2u);
}

TEST(Schedule, ViewsOfOnePhysicalDeviceNeverRunTogetherAndLanesOverlap) {
  const auto machine = two_gpu_machine();
  std::mutex mutex;
  std::condition_variable changed;
  std::multiset<std::string> busy;  // physical devices in use now
  std::set<std::string> lanes_started;
  std::vector<std::string> violations;
  bool overlapped = false;
  tuner::run_schedule(tuner::plan_schedule(machine), [&](const DeviceInfo& d) {
    std::unique_lock lock(mutex);
    if (busy.count(d.physical)) violations.push_back(d.id + " ran beside another view of " + d.physical);
    if (d.type == "cpu" && !busy.empty()) violations.push_back(d.id + " did not run alone");
    busy.insert(d.physical);
    lanes_started.insert(d.physical);
    changed.notify_all();
    if (d.type != "cpu") {
      // The first device of each GPU lane waits until the other lane has started too: a schedule that ran
      // the lanes one after the other would time out here instead.
      overlapped =
          changed.wait_for(lock, std::chrono::seconds(20), [&] { return lanes_started.size() >= 2; }) ||
          overlapped;
    }
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lock.lock();
    busy.erase(busy.find(d.physical));
  });
  EXPECT_TRUE(violations.empty()) << violations.front();
  EXPECT_TRUE(overlapped) << "the two GPU lanes never ran at the same time";
}

TEST(Schedule, AFailingLaneStopsLaterPhasesAndTheErrorComesBack) {
  std::atomic<int> ran{0};
  std::atomic<bool> cpu_ran{false};
  EXPECT_THROW(tuner::run_schedule(tuner::plan_schedule(two_gpu_machine()),
                                   [&](const DeviceInfo& d) {
                                     if (d.type == "cpu") cpu_ran = true;
                                     ++ran;
                                     if (d.id == "ocl:1:0") throw UsageError("bad input");
                                   }),
               UsageError);
  EXPECT_FALSE(cpu_ran) << "no later phase starts after a failure";
  EXPECT_EQ(ran.load(), 3) << "the failed lane stops; the other lane (ocl:1:1, cuda:1) finishes";
}

varex::Measurement measurement(double ms) {
  varex::Measurement m;
  m.status = varex::Status::Ok;
  m.verified = true;
  m.samples_ms = {ms, ms, ms};
  m.kernel = summarize(m.samples_ms);
  return m;
}

TEST(ConcurrentStore, WritersOnOneFileLoseNothing) {
  const std::string path = test::scratch_dir("concurrent-store") + "/varex.db";
  datasets::WorkloadSpec workload;
  workload.op = "selection";
  workload.generator = "uniform_int32";
  workload.params = {{"rows", 100}, {"seed", 1}};
  {
    results::Store store(path);
    store.ensure_operator("selection", "test");
    store.ensure_workload(workload, datasets::default_class(workload));
  }
  constexpr int kWriters = 4, kEach = 150;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      try {
        results::Store store(path, results::Database::Mode::Existing);
        DeviceInfo d = device("ocl:0:" + std::to_string(w), "gpu", "index " + std::to_string(w));
        d.name = "Twin";
        const std::int64_t row = store.device(d);
        const std::int64_t session =
            store.begin_session("sweep", "selection", row, workload.id(), "exhaustive", {});
        for (int i = 0; i < kEach; ++i) {
          const std::string variant = std::to_string(i) + "v";
          store.ensure_variant(variant, "selection", Backend::OpenCL, {{"ept", std::int64_t{i}}}, "h", {});
          store.record(session, variant, row, workload.id(), measurement(1.0 + i));
        }
        store.end_session(session, "finished");
      } catch (const std::exception& e) {
        errors[w] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  results::Store store(path, results::Database::Mode::Existing);
  results::Statement per_session(
      store.db(), "SELECT session_id, COUNT(*), COUNT(DISTINCT variant_id) FROM measurements GROUP BY 1");
  int sessions = 0;
  while (per_session.step()) {
    ++sessions;
    EXPECT_EQ(per_session.integer(1), kEach);
    EXPECT_EQ(per_session.integer(2), kEach);
  }
  EXPECT_EQ(sessions, kWriters);
  results::Statement samples(store.db(), "SELECT COUNT(*) FROM samples");
  samples.step();
  EXPECT_EQ(samples.integer(0), kWriters * kEach * 3);
}

// PoCL shows the host CPU twice; the worker processes inherit the setting.
class TwoPoclDevices : public ::testing::Test {
 protected:
  void SetUp() override { setenv("POCL_DEVICES", "pthread pthread", 1); }
  void TearDown() override { unsetenv("POCL_DEVICES"); }
  std::vector<DeviceInfo> devices() {
    DeviceInfo a = test::cpu_device();
    DeviceInfo b = a;
    b.id = a.id.substr(0, a.id.rfind(':') + 1) + "1";
    std::vector<DeviceInfo> both{a, b};
    for (auto& d : both) d.physical.clear();
    assign_physical_identities(both);
    return both;
  }
  // Tuning the selection on both devices at once (concurrent writers), with a random search.
  tuner::RunOptions tune_both(std::uint64_t rows, std::uint64_t seed, const std::string& budget,
                              int remeasure) {
    tuner::RunOptions options;
    options.kind = "tune";
    options.op = &harness::find_operator("selection");
    options.devices = devices();
    options.workload.op = "selection";
    options.workload.generator = "uniform_int32";
    options.workload.params = {{"rows", rows}, {"seed", seed}, {"selectivity", 0.5}};
    options.strategy = "random";
    options.budget = tuner::Budget::parse(budget);
    options.remeasure = remeasure;
    options.settings.max_reps = 5;
    options.schedule.cpu_alone = false;
    options.worker_executable = VAREX_EXECUTABLE;
    return options;
  }
};

TEST_F(TwoPoclDevices, TunedAtTheSameTimeEachInItsOwnSessionEveryMeasurementOnce) {
  const std::string path = test::scratch_dir("parallel-tune") + "/varex.db";
  results::Store store(path);
  const tuner::RunOptions options = tune_both(1 << 16, 3, "12", 2);
  const auto runs = tuner::run_sessions(store, options);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0].session, runs[1].session);
  for (const auto& r : runs) {
    EXPECT_EQ(r.status, "finished") << r.device.id << ": " << r.error;
    EXPECT_EQ(r.outcome.evaluations, 12);
    ASSERT_TRUE(r.outcome.best);
  }
  results::Statement devices(store.db(), "SELECT COUNT(DISTINCT device_id) FROM sessions");
  devices.step();
  EXPECT_EQ(devices.integer(0), 2) << "each device has its own row and session";
  results::Statement counts(store.db(),
                            R"sql(SELECT session_id, SUM(purpose = 'search'), SUM(purpose = 'remeasure')
                                              FROM measurements GROUP BY 1)sql");
  int sessions = 0;
  while (counts.step()) {
    ++sessions;
    EXPECT_EQ(counts.integer(1), 12);
    EXPECT_EQ(counts.integer(2), 2);
  }
  EXPECT_EQ(sessions, 2);
  results::Statement duplicates(store.db(), R"sql(SELECT COUNT(*) FROM (SELECT 1 FROM measurements
      GROUP BY session_id, variant_id, purpose, fidelity HAVING COUNT(*) > 1))sql");
  duplicates.step();
  EXPECT_EQ(duplicates.integer(0), 0);

  // The same command again reports both finished sessions and measures nothing.
  const auto again = tuner::run_sessions(store, options);
  for (const auto& r : again) EXPECT_EQ(r.status, "finished before") << r.device.id;
}

TEST_F(TwoPoclDevices, CtrlCStopsEveryLaneAndTheSameCommandResumesThemAll) {
  const std::string path = test::scratch_dir("parallel-interrupt") + "/varex.db";
  results::Store store(path);
  // Enough evaluations that neither lane can finish before the other has recorded its first: with warm
  // compile caches one lane once did 40 while the other still probed its device.
  constexpr int kEvaluations = 150;
  const tuner::RunOptions options = tune_both(1 << 18, 5, std::to_string(kEvaluations), 1);
  install_interrupt_handler();
  // Ctrl-C once both sessions have recorded something. On a loaded 2-core machine from cold caches (the
  // sanitizer suite, three tests at a time) a lane's first measurement (its device's probe and programs
  // compiled by PoCL) took over the minute this waited before, and the Ctrl-C then came before one lane had
  // anything to resume: the wait is long, and a lane that never recorded is said so.
  bool both_recorded = false;
  std::thread user([&] {
    results::Store watch(path, results::Database::Mode::Existing);
    for (int i = 0; i < 12000 && !both_recorded; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      results::Statement s(watch.db(), "SELECT COUNT(DISTINCT session_id) FROM measurements");
      s.step();
      both_recorded = s.integer(0) >= 2;
    }
    kill(getpid(), SIGINT);
  });
  EXPECT_THROW(tuner::run_sessions(store, options), harness::Interrupted);
  user.join();
  ASSERT_TRUE(both_recorded) << "both lanes did not record a measurement within 10 minutes";
  clear_interrupt();
  {
    // Scoped: a statement left open keeps its read snapshot, and later queries would not see the resume.
    results::Statement closed(store.db(), "SELECT COUNT(*) FROM sessions WHERE status = 'interrupted'");
    closed.step();
    EXPECT_EQ(closed.integer(0), 2) << "both lanes stopped and closed their sessions";
  }

  const auto resumed = tuner::run_sessions(store, options);
  for (const auto& r : resumed) {
    EXPECT_EQ(r.status, "finished") << r.device.id << ": " << r.error;
    EXPECT_GT(r.resumed_measurements, 0u) << r.device.id << " started over instead of resuming";
    EXPECT_EQ(r.outcome.evaluations, kEvaluations);
  }
  results::Statement counts(store.db(),
                            "SELECT COUNT(*), COUNT(DISTINCT session_id) FROM measurements "
                            "WHERE purpose = 'search'");
  counts.step();
  EXPECT_EQ(counts.integer(0), 2 * kEvaluations) << "every measurement once, none lost at the interrupt";
  EXPECT_EQ(counts.integer(1), 2);
}

TEST_F(TwoPoclDevices, SweepThroughTheCommandLineCoversBothDevices) {
  const std::string db = test::scratch_dir("parallel-cli") + "/varex.db";
  const auto r = test::run_varex(
      {"sweep",      "--op",  "selection",     "--device",        "cpu",      "--db",   db,
       "--rows",     "2^12",  "--set",         "kernel=overflow", "--set",    "ept=32", "--set",
       "vec=4,8",    "--set", "padding=guard", "--set",           "local=64", "--set",  "grid=cover",
       "--max-reps", "3",     "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_NE(j[0]["device"], j[1]["device"]);
  EXPECT_NE(j[0]["session"], j[1]["session"]);
  for (const auto& run : j) {
    EXPECT_EQ(run["status"], "finished") << run.dump();
    EXPECT_EQ(run["evaluations"], 2);
  }
}

}  // namespace
}  // namespace varex
