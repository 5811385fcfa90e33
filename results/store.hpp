#pragma once
// The results store: one SQLite file (WAL, foreign keys, a schema version with migrations) holding
// devices with their probe bandwidth, operators, variants, workloads, tuning sessions, and one row per
// measurement with its repetitions. The best variants are a query, not a maintained copy.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/device.hpp"
#include "base/measurement.hpp"
#include "base/objective.hpp"
#include "base/params.hpp"
#include "base/workload.hpp"
#include "results/sqlite.hpp"

namespace varex::results {

// The best variant of one device, operator and workload class (Store::best says what counts). The timing
// fields are those of the variant's median candidate measurement.
struct BestRow {
  DeviceInfo device;
  std::int64_t device_row = 0;
  std::optional<double> probe_gbps;
  std::string op;
  datasets::WorkloadSpec workload;  // the workload of that measurement
  datasets::WorkloadClass workload_class;
  std::string variant_id;
  variants::Params params;
  std::string kernel_hash;  // of the kernel source the variant was measured with
  // The next fastest variants of the same target by the same rule (fastest first), as candidates for the
  // runtime library's online adaptation.
  struct RunnerUp {
    std::string variant_id;
    variants::Params params;
    double kernel_ms = 0;
    double value = 0;  // under the query's objective (kernel_ms for time)
  };
  static constexpr std::size_t kRunnersUp = 4;
  std::vector<RunnerUp> runners_up;
  double kernel_ms = 0;
  double kernel_ci_low = 0;
  double kernel_ci_high = 0;
  double h2d_ms = 0;
  double d2h_ms = 0;
  double gbps = 0;
  double probe_fraction = 0;
  std::int64_t measurements = 0;  // candidate measurements of the device, operator and class
  std::int64_t candidates = 0;    // distinct variants among them
  std::string device_uid;
  std::string measured_at;
  std::string method;  // "sweep exhaustive", "tune auc_bandit 10%", "run single"
  std::int64_t session = 0;
  Objective objective = Objective::Time;  // what it is best by
  double value = 0;                       // its median under that objective (kernel_ms for time)
  std::optional<double> energy_j;         // per repetition, where its measurement carries energy
  std::optional<double> power_w;
};

// Identifies "the same command": a session is resumed when all of these match.
struct SessionKey {
  std::string kind;  // run, sweep, tune
  std::string op;
  std::int64_t device = 0;
  std::string workload;
  std::string strategy;
  nlohmann::json settings;
};

struct SessionOutcome {
  std::string best_variant;
  double best_kernel_ms = 0;
  std::int64_t evaluations = 0;
  double spent_seconds = 0;
};

struct RecordedMeasurement {
  std::int64_t id = 0;
  std::string variant_id;
  variants::Params params;
  int fidelity = 0;
  std::string purpose;
  std::string created_at;
  varex::Measurement m;
  bool imported = false;             // another tuner's (Store::record_imported): never verified by varex
  bool host_check_recorded = false;  // m.host_check_ms was stored (schema 11 on), not left at 0
};

// What claiming a session for this process found.
struct SessionClaim {
  enum class Kind {
    Created,   // no session with the key: a new one, owned by this process
    Resumed,   // an interrupted or failed one, or one whose owner died: now this process's
    Finished,  // done before: nothing to run
    Busy       // another live process runs it (`owner`)
  };
  Kind kind = Kind::Created;
  std::int64_t session = 0;
  std::string owner;  // Busy: the owner's process token
};

// What `best` considers.
struct BestQuery {
  std::optional<std::string> op = std::nullopt;
  std::optional<std::vector<std::int64_t>> devices = std::nullopt;  // device rows; every device when unset
  bool include_runs = false;                                        // `run` measurements compete too
  Objective objective = Objective::Time;  // energy and edp: only measurements that carry energy compete
  // Only sessions that finished: a warm start must not take the re-measurements of a session that was
  // interrupted in them, which the same command then resumes (its search would no longer be the same).
  bool finished_only = false;
};

struct RecordedDevice {
  std::int64_t row = 0;
  DeviceInfo device;  // id as recorded on its host
  std::optional<double> probe_gbps;
};

struct RecordedSession {
  std::int64_t id = 0;
  std::string kind;
  std::string op;
  std::string strategy;
  std::string status;
  std::int64_t device_row = 0;
  DeviceInfo device;
  std::optional<double> probe_gbps;
  datasets::WorkloadSpec workload;
  datasets::WorkloadClass workload_class;
  nlohmann::json settings;
  std::optional<std::int64_t> seed;
  std::string budget;
  std::optional<SessionOutcome> outcome;
  std::optional<std::int64_t> variants;  // the valid variants of its space on its device (schema 9 on)
};

class Store {
 public:
  // The migrations that build the current schema, oldest first; version N is after N of them.
  static const std::vector<std::string>& migrations();

  // Opens (creating it with Database::Mode::Create) and migrates. UsageError when the file cannot be
  // opened or written, or its schema is newer than this varex. Database::Mode::ReadOnly changes nothing
  // (for a directory that cannot be written): UsageError then where the schema is not current.
  explicit Store(const std::string& path, Database::Mode mode = Database::Mode::Create);
  Store(const std::string& path, Database::Mode mode, std::vector<std::string> migrations);

  int schema_version();
  Database& db() { return db_; }
  const std::string& path() const { return db_.path(); }

  // Inserts or refreshes the device (matched by DeviceInfo::uid; a row recorded before schema version 4 is
  // adopted where it can only mean this device) and returns its row id.
  std::int64_t device(const DeviceInfo& device);
  void set_probe(std::int64_t device, const varex::ProbeResult& probe);
  std::optional<double> probe_gbps(std::int64_t device);

  void ensure_operator(const std::string& name, const std::string& description);
  void ensure_variant(const std::string& id, const std::string& op, Backend backend,
                      const variants::Params& params, const std::string& kernel_hash,
                      const variants::Params& compile_part);
  // Records the workload with its class (which a workload recorded before schema version 5 gets here, or
  // through classify_workloads).
  void ensure_workload(const datasets::WorkloadSpec& spec, const datasets::WorkloadClass& klass);
  // Gives every workload recorded without a class one: `classify` returns nullopt for a workload it cannot
  // place (an operator this varex does not know), which then stays a class of its own.
  void classify_workloads(
      const std::function<std::optional<datasets::WorkloadClass>(const datasets::WorkloadSpec&)>& classify);
  std::vector<RecordedDevice> devices();

  std::int64_t begin_session(const std::string& kind, const std::string& op, std::int64_t device,
                             const std::string& workload, const std::string& strategy,
                             const nlohmann::json& settings, std::optional<std::int64_t> seed = std::nullopt,
                             const std::string& budget = "");
  std::int64_t begin_session(const SessionKey& key, std::optional<std::int64_t> seed,
                             const std::string& budget);
  void end_session(std::int64_t session, const std::string& status,
                   const std::optional<SessionOutcome>& outcome = std::nullopt);
  // The newest session with this key, if any.
  std::optional<RecordedSession> latest_session(const SessionKey& key);
  // The session of `key` for this process, in one transaction: the newest one with the key is reported
  // finished, reported busy while a live process owns it, or else taken over (status running, owner this
  // process); without one (or with `fresh`) a new one is created and owned. A session has one owner at a
  // time: no two processes record into it.
  SessionClaim claim_session(const SessionKey& key, bool fresh, std::optional<std::int64_t> seed,
                             const std::string& budget);
  // The number of valid variants of the session's space on its device (its sub-space or shard).
  void set_session_variants(std::int64_t session, std::uint64_t variants);
  // The owner's sign of life, for owners on other hosts (same-host owners are checked by pid).
  void heartbeat(std::int64_t session);
  // Gives the session up without ending it (a claim made but not used).
  void release_session(std::int64_t session);
  // Removes the workload row and the operator row a refused command wrote, where nothing refers to them (no
  // session, measurement, variant or other workload): a refusal leaves the database as it found it.
  void forget_unused(const std::string& op, const std::string& workload_id);
  // A session given up before it measured anything goes as if never begun; one with measurements is
  // closed as interrupted, to be resumed.
  void discard_session(std::int64_t session);
  // Sessions, oldest first, optionally of one kind and operator.
  std::vector<RecordedSession> sessions(const std::optional<std::string>& kind,
                                        const std::optional<std::string>& op);
  // A session's measurements of its workload with their samples, in the order they were recorded (a short
  // tune's search on a small instance of the workload is recorded under that instance: not among them).
  std::vector<RecordedMeasurement> session_measurements(std::int64_t session);

  // Another tuner's measurement of a variant (`varex import`): its status, error, compile and wall time and
  // samples; never verified by varex, never a best. Callers group a file's rows in one transaction.
  void record_imported(std::int64_t session, const std::string& variant, const varex::Measurement& m);
  // One measurement with its samples, in one transaction.
  std::int64_t record(std::int64_t session, const std::string& variant, std::int64_t device,
                      const std::string& workload, const varex::Measurement& m, int fidelity = 0,
                      const std::string& purpose = "search");

  // The best variant per device, operator and workload class: among the verified measurements taken with
  // the full protocol to compare candidates (a tune's or sweep's re-measurement of its best candidates;
  // with `include_runs` also `run`), the variant whose median time is lowest. Search measurements never
  // count: the fastest of many noisy single measurements is the winner's curse, not the best.
  std::vector<BestRow> best(const BestQuery& query = {});

 private:
  // UsageError, naming the file, for an SQLite file of another program (no schema version, other tables).
  void refuse_foreign(const std::string& path);
  void migrate(const std::vector<std::string>& migrations);
  Database db_;
};

}  // namespace varex::results
