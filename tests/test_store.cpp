#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/errors.hpp"
#include "harness/operators/selection.hpp"
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

harness::Measurement timed(double ms, harness::Status status = harness::Status::Ok) {
  harness::Measurement m;
  m.status = status;
  m.verified = status == harness::Status::Ok;
  m.samples_ms = {ms, ms * 1.01, ms * 0.99};
  m.kernel = summarize(m.samples_ms);
  m.bytes_moved = 1000;
  m.gbps = 1000 / (ms * 1e6);
  m.result = {5, 10};
  if (status != harness::Status::Ok) m.error = "broken";
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
    store->ensure_workload(workload);
    session = store->begin_session("sweep", "selection", device, workload.id(), "exhaustive", {});
  }
  void add(const std::string& variant, const harness::Measurement& m) {
    store->ensure_variant(variant, "selection", Backend::Cuda, {{"ept", std::int64_t{8}}}, "hash", {});
    store->record(session, variant, device, workload.id(), m);
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
}

TEST(Store, BestNeverPicksAFailedOrWrongVariant) {
  Fixture f("best");
  f.add("slow", timed(3.0));
  f.add("fast", timed(1.0));
  f.add("wrong", timed(0.1, harness::Status::WrongResult));
  harness::Measurement failed;
  failed.status = harness::Status::LaunchError;
  failed.error = "boom";
  f.add("failed", failed);
  const auto best = f.store->best(std::nullopt, std::nullopt);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].variant_id, "fast");
  EXPECT_DOUBLE_EQ(best[0].kernel_ms, 1.0);
  EXPECT_EQ(best[0].measurements, 2);
  EXPECT_EQ(best[0].device.name, "Test GPU");
  EXPECT_TRUE(f.store->best(std::string("hashjoin"), std::nullopt).empty());
  EXPECT_TRUE(f.store->best(std::nullopt, std::vector<std::string>{"other"}).empty());
}

TEST(Store, AnOkRowMustBeVerified) {
  Fixture f("check");
  harness::Measurement m = timed(1.0);
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
  harness::ProbeResult probe{2900.0, "runtime_copy", {{"bytes", 1}}};
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

TEST(Store, UnusableFilesAreUsageErrors) {
  EXPECT_THROW(Store("/nonexistent-dir/varex.db"), UsageError);
  EXPECT_THROW(Store(test::scratch_dir("missing") + "/none.db", Database::Mode::Existing), UsageError);
  const std::string junk = test::scratch_dir("junk") + "/junk.db";
  std::ofstream(junk) << "this is not an SQLite database, it is a text file of some length......";
  EXPECT_THROW(Store{junk}, UsageError);
}

}  // namespace
}  // namespace varex::results
