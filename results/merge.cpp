#include "results/merge.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "base/errors.hpp"

namespace varex::results {

namespace {

std::int64_t changes(Database& db) {
  return sqlite3_changes(db.handle());
}

// The natural key of a session in the source (s, sd) matched against the target (t, md).
constexpr const char* kSameSession =
    "t.device_id = md.id AND t.kind = s.kind AND t.op = s.op AND t.workload_id = s.workload_id AND "
    "t.strategy = s.strategy AND t.settings = s.settings AND t.started_at = s.started_at AND t.host = s.host";

}  // namespace

// A directory of private copies, removed with everything in it however the merge ends. Outside the file's
// anonymous namespace: PrivateCopy::Scratch holds one.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& purpose = "merge") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("varex-" + purpose + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data()))
      throw RuntimeError("cannot create a temporary directory for the " + purpose);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

namespace {

// Checks a source and writes a copy of it, brought to the current schema, to `copy`; every failure is a
// UsageError that names the user's file and says what is wrong with it.
void checked_copy(const std::string& source, const std::filesystem::path& copy) {
  std::error_code ec;
  const auto status = std::filesystem::status(source, ec);
  if (!std::filesystem::exists(status)) throw UsageError("database '" + source + "' does not exist");
  if (!std::filesystem::is_regular_file(status)) throw UsageError("'" + source + "' is not a file");
  const auto what = [&](const std::string& problem) { return UsageError("'" + source + "' " + problem); };
  try {
    Database original(source, Database::Mode::ReadOnly);
    {
      Statement check(original, "PRAGMA quick_check(1)");
      if (check.step() && check.text(0) != "ok") throw what("is corrupt (" + check.text(0) + ")");
    }
    {
      Statement version(original, "PRAGMA user_version");
      version.step();
      const auto known = static_cast<std::int64_t>(Store::migrations().size());
      if (version.integer(0) > known) {
        throw what("was written by a newer varex (schema version " + std::to_string(version.integer(0)) +
                   "; this varex reads up to " + std::to_string(known) + ")");
      }
    }
    {
      Statement tables(original,
                       "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                       "('sessions', 'measurements')");
      tables.step();
      if (tables.integer(0) != 2) throw what("is not a varex database");
    }
    original.exec("VACUUM INTO '" + copy.string() + "'");  // a consistent snapshot, write-ahead log included
  } catch (const UsageError&) {
    throw;
  } catch (const RuntimeError& e) {
    const std::string why = e.what();
    if (why.find("not a database") != std::string::npos || why.find("malformed") != std::string::npos)
      throw what("is corrupt or not an SQLite database");
    throw what("cannot be read: " + why);
  }
  try {
    Store migrated(copy.string(), Database::Mode::Existing);  // brings the copy to the current schema
  } catch (const std::exception& e) {
    throw what("cannot be brought to the current schema: " + std::string(e.what()));
  }
}

// Adds what `target` lacks from the checked copy at `copy`, in one transaction.
MergeStats merge_copy(Store& target, const std::filesystem::path& copy) {
  MergeStats stats;
  Database& db = target.db();
  db.exec("ATTACH DATABASE '" + copy.string() + "' AS src");
  try {
    Transaction t(db);
    db.exec(R"sql(
      INSERT INTO devices (uid, local_id, backend, name, vendor, platform, driver, type, arch, compute_units, global_mem,
                           max_alloc, local_mem, cache_bytes, max_work_group, host, probe_gbps, probe_method,
                           probe_details, probed_at, physical, pci, uuid)
      SELECT uid, local_id, backend, name, vendor, platform, driver, type, arch, compute_units, global_mem, max_alloc,
             local_mem, cache_bytes, max_work_group, host, probe_gbps, probe_method, probe_details, probed_at,
             physical, pci, uuid
      FROM src.devices WHERE uid NOT IN (SELECT uid FROM main.devices))sql");
    stats.devices = changes(db);
    db.exec(
        R"sql(UPDATE main.devices SET probe_gbps = (SELECT probe_gbps FROM src.devices s WHERE s.uid = main.devices.uid),
                    probe_method = (SELECT probe_method FROM src.devices s WHERE s.uid = main.devices.uid),
                    probe_details = (SELECT probe_details FROM src.devices s WHERE s.uid = main.devices.uid),
                    probed_at = (SELECT probed_at FROM src.devices s WHERE s.uid = main.devices.uid)
                  WHERE probe_gbps IS NULL AND uid IN (SELECT uid FROM src.devices WHERE probe_gbps IS NOT NULL))sql");
    db.exec(
        "INSERT OR IGNORE INTO operators (name, description) SELECT name, description FROM src.operators");
    db.exec(R"sql(INSERT OR IGNORE INTO variants (id, op, backend, params, kernel_hash, compile_key)
                  SELECT id, op, backend, params, kernel_hash, compile_key FROM src.variants)sql");
    db.exec(R"sql(INSERT OR IGNORE INTO workloads (id, op, generator, params, query, rows)
                  SELECT id, op, generator, params, query, rows FROM src.workloads)sql");
    db.exec(std::string(R"sql(
      INSERT INTO sessions (kind, op, device_id, workload_id, strategy, settings, status, started_at, finished_at, host,
                            varex_version, seed, budget, best_variant, best_kernel_ms, evaluations, spent_seconds,
                            variants)
      SELECT s.kind, s.op, md.id, s.workload_id, s.strategy, s.settings, s.status, s.started_at, s.finished_at, s.host,
             s.varex_version, s.seed, s.budget, s.best_variant, s.best_kernel_ms, s.evaluations, s.spent_seconds,
             s.variants
      FROM src.sessions s JOIN src.devices sd ON sd.id = s.device_id JOIN main.devices md ON md.uid = sd.uid
      WHERE NOT EXISTS (SELECT 1 FROM main.sessions t WHERE )sql") +
            kSameSession + ")");
    stats.sessions = changes(db);
    db.exec(std::string(R"sql(
      CREATE TEMP TABLE session_map AS
      SELECT s.id AS src_id, t.id AS dst_id
      FROM src.sessions s JOIN src.devices sd ON sd.id = s.device_id JOIN main.devices md ON md.uid = sd.uid
      JOIN main.sessions t ON )sql") +
            kSameSession);
    db.exec(R"sql(
      INSERT INTO measurements (session_id, variant_id, device_id, workload_id, status, error, verified, result_rows,
        checksum, compile_ms, compile_cached, h2d_ms, d2h_ms, kernel_ms, kernel_ci_low, kernel_ci_high, kernel_mad, reps,
        kernels, cache_flushed, bytes_moved, gbps, probe_fraction, created_at, wall_ms, fidelity, purpose, baseline,
        checked, cut_off, energy_j, power_w, sm_clock_mhz, mem_clock_mhz, energy, host_check_ms)
      SELECT sm.dst_id, m.variant_id, t.device_id, m.workload_id, m.status, m.error, m.verified, m.result_rows,
        m.checksum, m.compile_ms, m.compile_cached, m.h2d_ms, m.d2h_ms, m.kernel_ms, m.kernel_ci_low, m.kernel_ci_high,
        m.kernel_mad, m.reps, m.kernels, m.cache_flushed, m.bytes_moved, m.gbps, m.probe_fraction, m.created_at,
        m.wall_ms, m.fidelity, m.purpose, m.baseline, m.checked, m.cut_off, m.energy_j, m.power_w, m.sm_clock_mhz,
        m.mem_clock_mhz, m.energy, m.host_check_ms
      FROM src.measurements m JOIN session_map sm ON sm.src_id = m.session_id JOIN main.sessions t ON t.id = sm.dst_id
      WHERE m.duplicate_of IS NULL
        AND NOT EXISTS (SELECT 1 FROM main.measurements x WHERE x.session_id = sm.dst_id AND x.variant_id = m.variant_id
                        AND x.purpose = m.purpose AND x.fidelity = m.fidelity AND x.duplicate_of IS NULL)
      ORDER BY m.id)sql");
    stats.measurements = changes(db);
    db.exec(R"sql(
      INSERT OR IGNORE INTO samples (measurement_id, rep, kernel_ms)
      SELECT x.id, s.rep, s.kernel_ms
      FROM src.samples s JOIN src.measurements m ON m.id = s.measurement_id
      JOIN session_map sm ON sm.src_id = m.session_id
      JOIN main.measurements x ON x.session_id = sm.dst_id AND x.variant_id = m.variant_id AND x.created_at = m.created_at
                               AND x.purpose = m.purpose AND x.fidelity = m.fidelity AND x.duplicate_of IS NULL
      WHERE m.duplicate_of IS NULL)sql");
    // What another tuner measured (varex import): its session's rows, once each.
    db.exec(R"sql(
      INSERT INTO imported_measurements (session_id, variant_id, status, error, compile_ms, wall_ms, samples, created_at)
      SELECT sm.dst_id, m.variant_id, m.status, m.error, m.compile_ms, m.wall_ms, m.samples, m.created_at
      FROM src.imported_measurements m JOIN session_map sm ON sm.src_id = m.session_id
      WHERE NOT EXISTS (SELECT 1 FROM main.imported_measurements x WHERE x.session_id = sm.dst_id
                        AND x.variant_id = m.variant_id)
      ORDER BY m.id)sql");
    stats.measurements += changes(db);
    db.exec("DROP TABLE temp.session_map");
    t.commit();
  } catch (...) {
    sqlite3_exec(db.handle(), "DROP TABLE IF EXISTS temp.session_map", nullptr, nullptr, nullptr);
    sqlite3_exec(db.handle(), "DETACH DATABASE src", nullptr, nullptr, nullptr);
    throw;
  }
  db.exec("DETACH DATABASE src");
  return stats;
}

}  // namespace

MergeStats merge_into(Store& target, const std::string& source) {
  if (std::filesystem::exists(source) && std::filesystem::equivalent(source, target.db().path()))
    throw UsageError("cannot merge '" + source + "' into itself");
  ScratchDir scratch;
  const auto copy = scratch.file("source.db");
  checked_copy(source, copy);
  return merge_copy(target, copy);
}

struct PrivateCopy::Scratch {
  ScratchDir dir{"copy"};
};

PrivateCopy::PrivateCopy(const std::string& source) : scratch_(std::make_unique<Scratch>()) {
  const auto copy = scratch_->dir.file("copy.db");
  checked_copy(source, copy);
  store_ = std::make_unique<Store>(copy.string(), Database::Mode::Existing);
}

// The store closes before its directory goes.
PrivateCopy::~PrivateCopy() {
  store_.reset();
}

MergeReport merge_databases(const std::string& target, const std::vector<std::string>& sources) {
  ScratchDir scratch;
  MergeReport report;
  // Every source is checked and copied before the target is touched; then all of them are gathered in one
  // staging database, and that is merged into the target in a single transaction: all or nothing.
  const bool target_exists = std::filesystem::exists(target);
  const auto staged_path = scratch.file("staged.db");
  {
    Store staged(staged_path.string());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (target_exists && std::filesystem::exists(sources[i]) &&
          std::filesystem::equivalent(sources[i], target))
        throw UsageError("cannot merge '" + sources[i] + "' into itself");
      const auto copy = scratch.file("source-" + std::to_string(i) + ".db");
      checked_copy(sources[i], copy);
      report.sources.push_back(merge_copy(staged, copy));
    }
  }
  if (target_exists) {
    Store into(target);
    report.added = merge_copy(into, staged_path);
    return report;
  }
  // A new target appears whole or not at all: written beside it, then renamed into place.
  const std::string partial = target + ".partial-" + std::to_string(::getpid());
  try {
    {
      Database staged(staged_path.string(), Database::Mode::Existing);
      staged.exec("VACUUM INTO '" + partial + "'");
    }
    std::filesystem::rename(partial, target);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw UsageError("cannot write '" + target + "': " + e.what());
  }
  for (const MergeStats& m : report.sources) {
    report.added.devices += m.devices;
    report.added.sessions += m.sessions;
    report.added.measurements += m.measurements;
  }
  return report;
}

}  // namespace varex::results
