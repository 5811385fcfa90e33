#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/errors.hpp"
#include "operators/selection/selection.hpp"
#include "results/store.hpp"
#include "support.hpp"

namespace varex::results {
namespace {

DeviceInfo fake_device(const std::string& id, const std::string& name) {
  DeviceInfo d;
  d.id = id;
  d.name = name;
  d.vendor = "Vendor";
  d.platform = "Platform";
  d.driver = "1.0";
  d.type = "gpu";
  d.arch = "sm_90";
  d.compute_units = 132;
  d.global_mem = 80ULL << 30;
  d.max_work_group = 1024;
  d.host = "testhost";
  return d;
}

varex::Measurement timed(double ms, varex::Status status = varex::Status::Ok) {
  varex::Measurement m;
  m.status = status;
  m.verified = status == varex::Status::Ok;
  m.samples_ms = {ms, ms * 1.01, ms * 0.99};
  m.kernel = summarize(m.samples_ms);
  m.bytes_moved = 1000;
  m.gbps = 1000 / (ms * 1e6);
  m.result = {5, 10};
  if (status != varex::Status::Ok) m.error = "broken";
  return m;
}

struct Fixture {
  std::string path;
  std::unique_ptr<Store> store;
  std::int64_t device = 0;
  datasets::WorkloadSpec workload;
  std::int64_t session = 0;

  explicit Fixture(const std::string& name) : path(test::scratch_dir(name) + "/varex.db") {
    store = std::make_unique<Store>(path);
    device = store->device(fake_device("cuda:0", "Test GPU"));
    store->ensure_operator("selection", "test");
    workload.op = "selection";
    workload.generator = "uniform_int32";
    workload.params = {{"rows", 100}, {"seed", 1}};
    store->ensure_workload(workload, datasets::default_class(workload));
    session = store->begin_session("sweep", "selection", device, workload.id(), "exhaustive", {});
  }
  // A measurement of the session; "remeasure" is the final comparison of the best candidates, which is
  // what "best" compares, "search" one of the search's many single measurements.
  void add(const std::string& variant, const varex::Measurement& m, const std::string& purpose = "remeasure",
           std::int64_t in_session = 0) {
    store->ensure_variant(variant, "selection", Backend::Cuda, {{"ept", std::int64_t{8}}}, "hash", {});
    store->record(in_session ? in_session : session, variant, device, workload.id(), m, 0, purpose);
  }
};

TEST(Store, CreatesTheCurrentSchemaInWalMode) {
  Fixture f("schema");
  EXPECT_EQ(f.store->schema_version(), static_cast<int>(Store::migrations().size()));
  Statement mode(f.store->db(), "PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "wal");
  Statement fk(f.store->db(), "PRAGMA foreign_keys");
  ASSERT_TRUE(fk.step());
  EXPECT_EQ(fk.integer(0), 1);
}

TEST(Store, RoundTripOfAMeasurementWithItsSamples) {
  Fixture f("roundtrip");
  f.add("v1", timed(2.0));
  Statement s(f.store->db(),
              "SELECT status, kernel_ms, reps, result_rows, checksum, verified FROM measurements");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.text(0), "ok");
  EXPECT_DOUBLE_EQ(s.real(1), 2.0);
  EXPECT_EQ(s.integer(2), 3);
  EXPECT_EQ(s.integer(3), 5);
  EXPECT_EQ(s.text(4), "10");
  EXPECT_EQ(s.integer(5), 1);
  Statement samples(f.store->db(), "SELECT COUNT(*), MIN(kernel_ms), MAX(kernel_ms) FROM samples");
  ASSERT_TRUE(samples.step());
  EXPECT_EQ(samples.integer(0), 3);
  EXPECT_DOUBLE_EQ(samples.real(1), 1.98);
  EXPECT_DOUBLE_EQ(samples.real(2), 2.02);
  // How long its comparison in full took comes back too, for replays to budget as the live tuner does.
  varex::Measurement compared = timed(1.0);
  compared.host_check_ms = 12.5;
  f.add("v2", compared, "search");
  const auto recorded = f.store->session_measurements(f.session);
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_TRUE(recorded.back().host_check_recorded);
  EXPECT_DOUBLE_EQ(recorded.back().m.host_check_ms, 12.5);
  Statement older(f.store->db(), "UPDATE measurements SET host_check_ms = NULL");
  older.step();
  EXPECT_FALSE(f.store->session_measurements(f.session).back().host_check_recorded);
}

TEST(Store, BestNeverPicksAFailedOrWrongVariant) {
  Fixture f("best");
  f.add("slow", timed(3.0));
  f.add("fast", timed(1.0));
  f.add("wrong", timed(0.1, varex::Status::WrongResult));
  varex::Measurement failed;
  failed.status = varex::Status::LaunchError;
  failed.error = "boom";
  f.add("failed", failed);
  const auto best = f.store->best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].variant_id, "fast");
  EXPECT_DOUBLE_EQ(best[0].kernel_ms, 1.0);
  EXPECT_EQ(best[0].measurements, 2);
  EXPECT_EQ(best[0].candidates, 2);
  EXPECT_EQ(best[0].device.name, "Test GPU");
  EXPECT_TRUE(f.store->best({.op = "hashjoin"}).empty());
  EXPECT_TRUE(f.store->best({.devices = std::vector<std::int64_t>{f.device + 1}}).empty());
  EXPECT_EQ(f.store->best({.devices = std::vector<std::int64_t>{f.device}}).size(), 1u);
}

TEST(Store, BestComparesReMeasuredTimesNeverALuckySearchMeasurement) {
  Fixture f("best-curse");
  // The search saw "lucky" once at 0.5 ms: the winner's curse. Re-measured, it runs 1.3 ms.
  f.add("lucky", timed(0.5), "search");
  f.add("lucky", timed(1.3));
  f.add("steady", timed(0.9), "search");
  f.add("steady", timed(1.0));
  // A variant re-measured three times (by three sessions) counts by its median (1.2 ms), not by its best.
  f.add("noisy", timed(1.2));
  for (double ms : {0.8, 1.25}) {
    const auto other = f.store->begin_session("tune", "selection", f.device, f.workload.id(), "random", {});
    f.add("noisy", timed(ms), "remeasure", other);
  }
  auto best = f.store->best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].variant_id, "steady");
  EXPECT_DOUBLE_EQ(best[0].kernel_ms, 1.0);
  EXPECT_EQ(best[0].candidates, 3);
  EXPECT_EQ(best[0].measurements, 5);

  // Single runs compete only when asked.
  const std::int64_t run =
      f.store->begin_session("run", "selection", f.device, f.workload.id(), "single", {});
  f.add("hand-picked", timed(0.7), "search", run);
  EXPECT_EQ(f.store->best()[0].variant_id, "steady");
  EXPECT_EQ(f.store->best({.include_runs = true})[0].variant_id, "hand-picked");

  // Nothing re-measured, nothing best: search measurements alone never make one.
  Fixture g("best-search-only");
  g.add("only", timed(1.0), "search");
  EXPECT_TRUE(g.store->best().empty());
}

// Best by time, by energy and by the energy-delay product rank differently; energy and edp ignore a
// measurement without energy, however fast.
TEST(Store, BestByEachObjective) {
  Fixture f("objectives");
  auto with = [](double ms, std::optional<double> joules_per_rep) {
    varex::Measurement m = timed(ms);
    if (joules_per_rep)
      m.energy = varex::EnergyReading{"nvml counter", *joules_per_rep * 100, ms / 10, 100, 0.001, 0, 0};
    return m;
  };
  f.add("d_no_energy", with(0.9, std::nullopt));
  f.add("a_fast", with(1.0, 0.30));    // edp 0.30 J*ms
  f.add("b_middle", with(1.2, 0.20));  // edp 0.24
  f.add("c_frugal", with(2.5, 0.11));  // edp 0.275
  auto best = [&](varex::Objective o) {
    const auto rows = f.store->best({std::nullopt, std::nullopt, false, o});
    EXPECT_EQ(rows.size(), 1u);
    return rows.empty() ? BestRow{} : rows.front();
  };
  EXPECT_EQ(best(varex::Objective::Time).variant_id, "d_no_energy");
  const BestRow energy = best(varex::Objective::Energy);
  EXPECT_EQ(energy.variant_id, "c_frugal");
  EXPECT_NEAR(energy.value, 0.11, 1e-12);
  EXPECT_NEAR(*energy.energy_j, 0.11, 1e-12);
  EXPECT_EQ(energy.candidates, 3);  // the one without energy does not compete
  const BestRow edp = best(varex::Objective::Edp);
  EXPECT_EQ(edp.variant_id, "b_middle");
  EXPECT_NEAR(edp.value, 0.20 * 1.2 / 1e3, 1e-12);
  ASSERT_EQ(edp.runners_up.size(), 2u);
  EXPECT_EQ(edp.runners_up[0].variant_id, "c_frugal");
  EXPECT_NEAR(edp.runners_up[0].kernel_ms, 2.5, 1e-12);
  EXPECT_EQ(varex::objective_from_string("edp"), varex::Objective::Edp);
  EXPECT_THROW(varex::objective_from_string("joules"), UsageError);
}

TEST(Store, BestIsPerWorkloadClass) {
  Fixture f("best-class");
  f.add("a", timed(1.0));
  // Another seed of the same workload is the same class: it competes with the first.
  datasets::WorkloadSpec other_seed = f.workload;
  other_seed.params["seed"] = 2;
  // Another selectivity is another class.
  datasets::WorkloadSpec other_class = f.workload;
  other_class.params["selectivity"] = 0.1;
  for (const auto* spec : {&other_seed, &other_class}) {
    f.store->ensure_workload(*spec, datasets::default_class(*spec));
    const auto session = f.store->begin_session("tune", "selection", f.device, spec->id(), "random", {});
    f.store->ensure_variant("b", "selection", Backend::Cuda, {{"ept", std::int64_t{16}}}, "hash", {});
    f.store->record(session, "b", f.device, spec->id(), timed(0.5), 0, "remeasure");
  }
  const auto best = f.store->best();
  ASSERT_EQ(best.size(), 2u);
  for (const auto& b : best) EXPECT_EQ(b.variant_id, "b");
  EXPECT_NE(best[0].workload_class.id(), best[1].workload_class.id());
  EXPECT_EQ(best[0].candidates + best[1].candidates, 3) << "a and b compete in the first class";
}

TEST(Store, AnOkRowMustBeVerified) {
  Fixture f("check");
  varex::Measurement m = timed(1.0);
  m.verified = false;
  EXPECT_THROW(f.add("unverified", m), RuntimeError);
  Statement count(f.store->db(), "SELECT COUNT(*) FROM measurements");
  count.step();
  EXPECT_EQ(count.integer(0), 0);  // the failed transaction left nothing behind
}

TEST(Store, DevicesAreUpsertedByIdentity) {
  Fixture f("devices");
  DeviceInfo d = fake_device("cuda:0", "Test GPU");
  d.compute_units = 100;  // refreshed properties keep the row
  EXPECT_EQ(f.store->device(d), f.device);
  EXPECT_NE(f.store->device(fake_device("cuda:1", "Other GPU")), f.device);
  varex::ProbeResult probe{2900.0, "runtime_copy", {{"bytes", 1}}};
  EXPECT_FALSE(f.store->probe_gbps(f.device));
  f.store->set_probe(f.device, probe);
  EXPECT_DOUBLE_EQ(*f.store->probe_gbps(f.device), 2900.0);
}

TEST(Store, MigratesAnOlderDatabaseAndKeepsItsData) {
  const std::string path = test::scratch_dir("migrate") + "/varex.db";
  std::string seed;
  {
    Fixture f("migrate-seed");
    f.add("v1", timed(1.0));
    seed = f.path;
  }  // closing the last connection folds the write-ahead log into the file
  std::filesystem::copy_file(seed, path);
  auto steps = Store::migrations();
  steps.push_back("ALTER TABLE measurements ADD COLUMN note TEXT NOT NULL DEFAULT 'migrated'");
  Store upgraded(path, Database::Mode::Existing, steps);
  EXPECT_EQ(upgraded.schema_version(), static_cast<int>(steps.size()));
  Statement s(upgraded.db(), "SELECT variant_id, note FROM measurements");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.text(0), "v1");
  EXPECT_EQ(s.text(1), "migrated");
  // This varex does not know the added step: it must refuse the newer file rather than guess.
  EXPECT_THROW(Store(path, Database::Mode::Existing), UsageError);
}

// Schema 7 renames the grid tunable's three old names; what a variant was measured with stays the same.
TEST(Store, MigratesTheOldGridNames) {
  const std::string path = test::scratch_dir("migrate-grid") + "/varex.db";
  auto v6 = Store::migrations();
  v6.resize(6);
  {
    Store old(path, Database::Mode::Create, v6);
    using variants::Value;
    const auto add = [&](const std::string& id, const std::string& op, variants::Params p) {
      old.ensure_operator(op, "test");
      old.ensure_variant(id, op, Backend::OpenCL, p, "hash", {});
    };
    add("s", "selection", {{"groups_per_cu", Value{4}}, {"local", Value{"auto"}}});
    add("j", "hashjoin", {{"processors", Value{32}}, {"local", Value{256}}});
    add("g", "groupby", {{"groups", Value{"cover"}}, {"local", Value{"auto"}}});
    add("r", "ra_select", {{"grid", Value{2}}, {"local", Value{128}}});
  }
  Store upgraded(path, Database::Mode::Existing);
  std::map<std::string, std::string> params;
  Statement s(upgraded.db(), "SELECT id, params FROM variants");
  while (s.step())
    params[s.text(0)] = variants::canonical(variants::params_from_json(nlohmann::json::parse(s.text(1))));
  EXPECT_EQ(params["s"], R"({"grid":4,"local":"auto"})");
  EXPECT_EQ(params["j"], R"({"grid":"32wg","local":256})");
  EXPECT_EQ(params["g"], R"({"grid":"cover","local":"auto"})");
  EXPECT_EQ(params["r"], R"({"grid":2,"local":128})");
}

TEST(Store, UnusableFilesAreUsageErrors) {
  EXPECT_THROW(Store("/nonexistent-dir/varex.db"), UsageError);
  EXPECT_THROW(Store(test::scratch_dir("missing") + "/none.db", Database::Mode::Existing), UsageError);
  const std::string junk = test::scratch_dir("junk") + "/junk.db";
  std::ofstream(junk) << "this is not an SQLite database, it is a text file of some length......";
  EXPECT_THROW(Store{junk}, UsageError);
}

}  // namespace
}  // namespace varex::results
