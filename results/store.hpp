#pragma once
// The results store: one SQLite file (WAL, foreign keys, a schema version with migrations) holding
// devices with their probe bandwidth, operators, variants, workloads, tuning sessions, and one row per
// measurement with its repetitions. The best variants are a query, not a maintained copy.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datasets/workload.hpp"
#include "harness/device.hpp"
#include "harness/measure.hpp"
#include "harness/probe.hpp"
#include "results/sqlite.hpp"
#include "variants/space.hpp"

namespace varex::results {

// The fastest verified measurement for one (device, operator, workload).
struct BestRow {
  DeviceInfo device;
  std::optional<double> probe_gbps;
  std::string op;
  datasets::WorkloadSpec workload;
  std::string variant_id;
  variants::Params params;
  double kernel_ms = 0;
  double kernel_ci_low = 0;
  double kernel_ci_high = 0;
  double h2d_ms = 0;
  double d2h_ms = 0;
  double gbps = 0;
  double probe_fraction = 0;
  std::int64_t measurements = 0;  // how many verified measurements compete for this row
};

class Store {
 public:
  // The migrations that build the current schema, oldest first; version N is after N of them.
  static const std::vector<std::string>& migrations();

  // Opens (creating it with Database::Mode::Create) and migrates. UsageError when the file cannot be
  // opened or written, or its schema is newer than this varex.
  explicit Store(const std::string& path, Database::Mode mode = Database::Mode::Create);
  Store(const std::string& path, Database::Mode mode, std::vector<std::string> migrations);

  int schema_version();
  Database& db() { return db_; }

  // Inserts or refreshes the device (matched by DeviceInfo::uid) and returns its row id.
  std::int64_t device(const DeviceInfo& device);
  void set_probe(std::int64_t device, const harness::ProbeResult& probe);
  std::optional<double> probe_gbps(std::int64_t device);

  void ensure_operator(const std::string& name, const std::string& description);
  void ensure_variant(const std::string& id, const std::string& op, Backend backend,
                      const variants::Params& params, const std::string& kernel_hash,
                      const variants::Params& compile_part);
  void ensure_workload(const datasets::WorkloadSpec& spec);

  std::int64_t begin_session(const std::string& kind, const std::string& op, std::int64_t device,
                             const std::string& workload, const std::string& strategy,
                             const nlohmann::json& settings);
  void end_session(std::int64_t session, const std::string& status);

  // One measurement with its samples, in one transaction.
  std::int64_t record(std::int64_t session, const std::string& variant, std::int64_t device,
                      const std::string& workload, const harness::Measurement& m);

  // Best verified variant per (device, operator, workload), optionally for one operator and/or devices.
  std::vector<BestRow> best(const std::optional<std::string>& op,
                            const std::optional<std::vector<std::string>>& device_uids);

 private:
  void migrate(const std::vector<std::string>& migrations);
  Database db_;
};

}  // namespace varex::results
