// One identity per physical device: PCI addresses and UUIDs as the backends report them, the fallback for
// devices with neither, the views of one GPU seen as one physical device, and the store's migration of
// databases written before identical devices were told apart.
#include <gtest/gtest.h>

#include <set>

#include "results/export.hpp"
#include "results/merge.hpp"
#include "results/store.hpp"
#include "support.hpp"

namespace varex {
namespace {

DeviceInfo view(const std::string& id, Backend backend, const std::string& name, const std::string& pci,
                const std::string& uuid = "") {
  DeviceInfo d;
  d.id = id;
  d.backend = backend;
  d.name = name;
  d.vendor = "NVIDIA Corporation";
  d.platform = backend == Backend::Cuda ? "CUDA" : "NVIDIA CUDA";
  d.driver = backend == Backend::Cuda ? "13.0" : "580.159.04";
  d.type = "gpu";
  d.arch = "sm_90";
  d.pci = pci;
  d.uuid = uuid;
  d.host = "node";
  return d;
}

DeviceInfo cpu_view(const std::string& id) {
  DeviceInfo d;
  d.id = id;
  d.name = "pthread-haswell";
  d.vendor = "AuthenticAMD";
  d.platform = "Portable Computing Language";
  d.driver = "3.1";
  d.type = "cpu";
  d.arch = "haswell";
  d.host = "node";
  return d;
}

TEST(Identity, PciAddressesAreBroughtToOneForm) {
  EXPECT_EQ(normalize_pci("00000000:3B:00.0"), "0000:3b:00.0");  // CUDA's spelling
  EXPECT_EQ(normalize_pci("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_pci("3b:00.1"), "0000:3b:00.1");  // no domain
  EXPECT_EQ(format_pci(1, 0x86, 3, 0), "0001:86:03.0");
  for (const char* bad : {"", "3b", "3b:00", "zz:00.0", "1:2:3:4.0", "0000:3b:00."}) {
    EXPECT_EQ(normalize_pci(bad), "") << bad;
  }
  const unsigned char zero[16] = {};
  EXPECT_EQ(format_uuid(zero), "");
  const unsigned char bytes[16] = {0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81,
                                   0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8, 0x09};
  EXPECT_EQ(format_uuid(bytes), "1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809");
}

TEST(Identity, TheViewsOfOneGpuAreOnePhysicalDeviceAndIdenticalGpusAreTwo) {
  std::vector<DeviceInfo> devices{
      view("ocl:1:0", Backend::OpenCL, "NVIDIA H200", "0000:3b:00.0"),
      view("ocl:1:1", Backend::OpenCL, "NVIDIA H200", "", "uuid-b"),  // knows only its UUID
      view("cuda:0", Backend::Cuda, "NVIDIA H200", "0000:3b:00.0", "uuid-a"),
      view("cuda:1", Backend::Cuda, "NVIDIA H200", "0000:86:00.0", "uuid-b"),
      cpu_view("ocl:0:0"),
      cpu_view("ocl:0:1"),
  };
  assign_physical_identities(devices);
  EXPECT_EQ(devices[0].physical, "pci 0000:3b:00.0");
  EXPECT_EQ(devices[2].physical, devices[0].physical);
  EXPECT_EQ(devices[1].physical, "pci 0000:86:00.0");  // linked to its CUDA view through the UUID
  EXPECT_EQ(devices[3].physical, devices[1].physical);
  EXPECT_NE(devices[0].physical, devices[1].physical);
  // No PCI address, no UUID: the documented fallback, the index among devices of that platform and name.
  EXPECT_EQ(devices[4].physical, "index 0");
  EXPECT_EQ(devices[5].physical, "index 1");

  std::set<std::string> uids;
  for (const auto& d : devices) uids.insert(d.uid());
  EXPECT_EQ(uids.size(), devices.size()) << "every view of every physical device has its own identity";
  // Identical GPUs through one backend are one model: profiles are shared.
  EXPECT_EQ(devices[0].model_key(), devices[1].model_key());
  EXPECT_EQ(devices[2].model_key(), devices[3].model_key());
  EXPECT_NE(devices[0].model_key(), devices[2].model_key());
  // The identity before schema version 4 could not tell the pairs apart.
  EXPECT_EQ(devices[0].legacy_uid(), devices[1].legacy_uid());
  EXPECT_EQ(devices[0].twins, 2);
  EXPECT_EQ(devices[4].twins, 2);
}

TEST(Identity, OnePlatformShowingOneDeviceTwiceKeepsThemApart) {
  // PoCL with POCL_DEVICES="pthread pthread" where it reports a UUID: the same for both.
  std::vector<DeviceInfo> devices{cpu_view("ocl:0:0"), cpu_view("ocl:0:1")};
  devices[0].uuid = devices[1].uuid = "same";
  assign_physical_identities(devices);
  EXPECT_NE(devices[0].uid(), devices[1].uid());
}

TEST(Identity, TwoPoclDevicesAreListedAsTwoPhysicalDevices) {
  setenv("POCL_DEVICES", "pthread pthread", 1);
  const auto r = test::run_varex({"devices", "--json", "--device", "cpu"});
  unsetenv("POCL_DEVICES");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto devices = nlohmann::json::parse(r.out);
  ASSERT_EQ(devices.size(), 2u) << r.out;
  EXPECT_NE(devices[0]["physical"], devices[1]["physical"]);
  EXPECT_EQ(devices[0]["views"], nlohmann::json::array({devices[0]["id"]}));
  EXPECT_EQ(devices[0]["twins"], 2);
}

// A database as varex wrote it before schema version 4: the first three migrations, one device row with
// the old identity, a finished sweep with measurements and an interrupted tune.
struct OldDatabase {
  std::string path;
  DeviceInfo device;
  std::int64_t device_row = 0, sweep = 0, tune = 0;
  std::int64_t measurements = 0;
  datasets::WorkloadSpec workload;

  explicit OldDatabase(const std::string& name) : path(test::scratch_dir(name) + "/old.db") {
    device = view("cuda:0", Backend::Cuda, "NVIDIA H200", "0000:3b:00.0", "uuid-a");
    std::vector<std::string> v3(results::Store::migrations().begin(),
                                results::Store::migrations().begin() + 3);
    results::Store old(path, results::Database::Mode::Create, v3);
    EXPECT_EQ(old.schema_version(), 3);
    results::Statement insert(old.db(), R"sql(
      INSERT INTO devices (uid, local_id, backend, name, vendor, platform, driver, type, arch, compute_units,
                           global_mem, max_alloc, local_mem, cache_bytes, max_work_group, host, probe_gbps)
      VALUES (?1, 'cuda:0', 'cuda', ?2, 'NVIDIA Corporation', 'CUDA', '13.0', 'gpu', 'sm_90', 132, 1, 1, 1, 1,
              1024, 'node', 4160.0))sql");
    insert.bind(1, device.legacy_uid()).bind(2, device.name);
    insert.step();
    device_row = old.db().last_insert_rowid();
    old.ensure_operator("selection", "test");
    workload.op = "selection";
    workload.generator = "uniform_int32";
    workload.params = {{"rows", 1024}, {"seed", 1}};
    results::Statement w(old.db(),
                         "INSERT INTO workloads (id, op, generator, params, query, rows) "
                         "VALUES (?1, 'selection', 'uniform_int32', ?2, '{}', 1024)");
    w.bind(1, workload.id()).bind(2, workload.params.dump());
    w.step();
    // Sessions as a version-3 varex wrote them (no owner).
    auto session = [&](const std::string& kind, const std::string& strategy, const nlohmann::json& settings) {
      results::Statement x(old.db(),
                           R"sql(INSERT INTO sessions (kind, op, device_id, workload_id, strategy, settings,
                                              status, host, varex_version)
                                            VALUES (?1, 'selection', ?2, ?3, ?4, ?5, 'running', 'node', '0.1.0'))sql");
      x.bind(1, kind).bind(2, device_row).bind(3, workload.id()).bind(4, strategy).bind(5, settings.dump());
      x.step();
      return old.db().last_insert_rowid();
    };
    sweep = session("sweep", "exhaustive", nlohmann::json::object());
    tune = session("tune", "auc_bandit", {{"budget", "10"}});
    // Measurements as a version-3 varex wrote them: two repetitions each.
    results::Statement measured(old.db(), R"sql(
      INSERT INTO measurements (session_id, variant_id, device_id, workload_id, status, error, verified,
                                compile_ms, compile_cached, h2d_ms, d2h_ms, kernel_ms, kernel_ci_low,
                                kernel_ci_high, kernel_mad, reps, kernels, cache_flushed, bytes_moved, wall_ms,
                                fidelity, purpose)
      VALUES (?1, ?2, ?3, ?4, 'ok', '', 1, 0, 0, 0, 0, ?5, ?5, ?5, 0, 2, '[]', 0, 0, 0, 0, ?6))sql");
    results::Statement sample(old.db(),
                              "INSERT INTO samples (measurement_id, rep, kernel_ms) VALUES (?1, ?2, ?3)");
    for (int i = 0; i < 5; ++i) {
      const std::string variant = std::to_string(i) + "v";
      old.ensure_variant(variant, "selection", Backend::Cuda, {{"ept", std::int64_t{1} << i}}, "hash", {});
      measured.reset();
      measured.bind(1, i < 3 ? sweep : tune).bind(2, variant).bind(3, device_row).bind(4, workload.id());
      measured.bind(5, 1.0 + i).bind(6, std::string(i == 0 ? "remeasure" : "search"));
      measured.step();
      const std::int64_t id = old.db().last_insert_rowid();
      for (std::int64_t rep = 0; rep < 2; ++rep) {
        sample.reset();
        sample.bind(1, id).bind(2, rep).bind(3, 1.0 + i);
        sample.step();
      }
      ++measurements;
    }
    old.db().exec("UPDATE sessions SET status = 'finished' WHERE id = " + std::to_string(sweep));
    old.db().exec("UPDATE sessions SET status = 'interrupted' WHERE id = " + std::to_string(tune));
  }
};

std::int64_t count(results::Store& store, const std::string& sql) {
  results::Statement s(store.db(), sql);
  s.step();
  return s.integer(0);
}

TEST(Identity, MigrationKeepsEveryMeasurementWithItsDevice) {
  OldDatabase old("migrate");
  results::Store store(old.path);
  EXPECT_EQ(store.schema_version(), static_cast<int>(results::Store::migrations().size()));
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM devices"), 1);
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM measurements"), old.measurements);
  EXPECT_EQ(
      count(store, "SELECT COUNT(*) FROM measurements WHERE device_id = " + std::to_string(old.device_row)),
      old.measurements);
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM devices WHERE physical IS NULL"), 1);
  // Until a device claims it, the old row reads as it did: its old identity, physical unknown.
  store.classify_workloads([](const datasets::WorkloadSpec& spec) { return datasets::default_class(spec); });
  const auto best = store.best({.op = "selection"});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].device_uid, old.device.legacy_uid());
  EXPECT_EQ(best[0].device.physical, "");
}

TEST(Identity, TheOnlyMatchingDeviceAdoptsTheOldRowAndResumesItsSessions) {
  OldDatabase old("adopt");
  results::Store store(old.path);
  std::vector<DeviceInfo> machine{old.device,
                                  view("ocl:0:0", Backend::OpenCL, "NVIDIA H200", "0000:3b:00.0")};
  assign_physical_identities(machine);
  ASSERT_EQ(machine[0].twins, 1);
  const std::int64_t row = store.device(machine[0]);
  EXPECT_EQ(row, old.device_row) << "the old row is this device's";
  EXPECT_EQ(store.device(machine[0]), row) << "and stays so";
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM devices"), 1);
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM devices WHERE physical = 'pci 0000:3b:00.0'"), 1);
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM measurements WHERE device_id = " + std::to_string(row)),
            old.measurements);
  EXPECT_EQ(store.probe_gbps(row), 4160.0) << "the probe stays with the device";
  // The interrupted tune is found again by its key, so the same command resumes it.
  const auto previous = store.latest_session(
      {"tune", "selection", row, old.workload.id(), "auc_bandit", nlohmann::json{{"budget", "10"}}});
  ASSERT_TRUE(previous);
  EXPECT_EQ(previous->id, old.tune);
  EXPECT_EQ(previous->status, "interrupted");
  EXPECT_EQ(store.session_measurements(old.tune).size(), 2u);
}

TEST(Identity, IdenticalDevicesLeaveTheOldRowAloneAndGetRowsOfTheirOwn) {
  OldDatabase old("twins");
  results::Store store(old.path);
  std::vector<DeviceInfo> machine{old.device,
                                  view("cuda:1", Backend::Cuda, "NVIDIA H200", "0000:86:00.0", "uuid-b")};
  assign_physical_identities(machine);
  ASSERT_EQ(machine[0].twins, 2);
  const std::int64_t a = store.device(machine[0]);
  const std::int64_t b = store.device(machine[1]);
  EXPECT_NE(a, old.device_row) << "which GPU took the old measurements is unknown";
  EXPECT_NE(b, old.device_row);
  EXPECT_NE(a, b);
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM devices"), 3);
  EXPECT_EQ(
      count(store, "SELECT COUNT(*) FROM measurements WHERE device_id = " + std::to_string(old.device_row)),
      old.measurements)
      << "old rows stay attached to the device they were measured on";
  EXPECT_EQ(count(store, "SELECT COUNT(*) FROM measurements"), old.measurements);
}

TEST(Identity, IdenticalGpusShareOneProfileEntryBuiltFromEither) {
  const std::string path = test::scratch_dir("profile-model") + "/varex.db";
  results::Store store(path);
  std::vector<DeviceInfo> machine{view("cuda:0", Backend::Cuda, "NVIDIA H200", "0000:3b:00.0"),
                                  view("cuda:1", Backend::Cuda, "NVIDIA H200", "0000:86:00.0")};
  assign_physical_identities(machine);
  store.ensure_operator("selection", "test");
  datasets::WorkloadSpec workload;
  workload.op = "selection";
  workload.generator = "uniform_int32";
  workload.params = {{"rows", 1 << 20}, {"seed", 1}};
  store.ensure_workload(workload, datasets::default_class(workload));
  const double ms[] = {0.30, 0.25};  // the second GPU measured the faster variant
  for (int i = 0; i < 2; ++i) {
    const std::int64_t row = store.device(machine[i]);
    const std::int64_t session =
        store.begin_session("sweep", "selection", row, workload.id(), "exhaustive", {});
    const std::string variant = std::to_string(i) + "v";
    store.ensure_variant(variant, "selection", Backend::Cuda, {{"ept", std::int64_t{8} << i}}, "hash", {});
    varex::Measurement m;
    m.status = varex::Status::Ok;
    m.verified = true;
    m.samples_ms = {ms[i], ms[i]};
    m.kernel = summarize(m.samples_ms);
    store.record(session, variant, row, workload.id(), m, 0, "remeasure");
  }
  const auto profile = results::profile_json(store, {}, {});
  ASSERT_EQ(profile["devices"].size(), 1u) << "one entry for the model, not one per GPU";
  const auto& d = profile["devices"][0];
  EXPECT_EQ(d["physical_devices"], 2);
  EXPECT_EQ(d["measured_on"].size(), 2u);
  const auto& entries = d["operators"]["selection"];
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["variant"], "1v") << "the faster of the two GPUs' bests";
  EXPECT_EQ(entries[0]["physical_devices"], 2);
  EXPECT_EQ(entries[0]["candidate_measurements"], 2);
  EXPECT_EQ(entries[0]["measured_by"]["id"], "cuda:1");
}

TEST(Identity, MergingAnOldDatabaseAddsNothingTwice) {
  OldDatabase old("merge-old");
  const std::string target_path = test::scratch_dir("merge-target") + "/all.db";
  results::Store target(target_path);
  const auto first = results::merge_into(target, old.path);
  EXPECT_EQ(first.devices, 1);
  EXPECT_EQ(first.measurements, old.measurements);
  const auto again = results::merge_into(target, old.path);
  EXPECT_EQ(again.devices, 0);
  EXPECT_EQ(again.measurements, 0);
  EXPECT_EQ(count(target, "SELECT COUNT(*) FROM measurements"), old.measurements);
}

}  // namespace
}  // namespace varex
