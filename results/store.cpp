#include "results/store.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/errors.hpp"
#include "base/process.hpp"

namespace varex::results {

namespace {

const char* kSchemaV1 = R"sql(
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  local_id TEXT NOT NULL,
  backend TEXT NOT NULL CHECK (backend IN ('opencl', 'cuda')),
  name TEXT NOT NULL,
  vendor TEXT NOT NULL,
  platform TEXT NOT NULL,
  driver TEXT NOT NULL,
  type TEXT NOT NULL,
  arch TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  global_mem INTEGER NOT NULL,
  max_alloc INTEGER NOT NULL,
  local_mem INTEGER NOT NULL,
  cache_bytes INTEGER NOT NULL,
  max_work_group INTEGER NOT NULL,
  host TEXT NOT NULL,
  probe_gbps REAL,
  probe_method TEXT,
  probe_details TEXT,
  probed_at TEXT
);
CREATE TABLE operators (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL
);
CREATE TABLE variants (
  id TEXT PRIMARY KEY,
  op TEXT NOT NULL REFERENCES operators(name),
  backend TEXT NOT NULL,
  params TEXT NOT NULL,
  kernel_hash TEXT NOT NULL,
  compile_key TEXT NOT NULL
);
CREATE TABLE workloads (
  id TEXT PRIMARY KEY,
  op TEXT NOT NULL REFERENCES operators(name),
  generator TEXT NOT NULL,
  params TEXT NOT NULL,
  query TEXT NOT NULL,
  rows INTEGER NOT NULL
);
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'sweep', 'tune')),
  op TEXT NOT NULL REFERENCES operators(name),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  workload_id TEXT NOT NULL REFERENCES workloads(id),
  strategy TEXT NOT NULL,
  settings TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at TEXT,
  host TEXT NOT NULL,
  varex_version TEXT NOT NULL
);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  variant_id TEXT NOT NULL REFERENCES variants(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  workload_id TEXT NOT NULL REFERENCES workloads(id),
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'launch_error', 'timeout', 'wrong_result')),
  error TEXT NOT NULL,
  verified INTEGER NOT NULL,
  result_rows INTEGER,
  checksum TEXT,
  compile_ms REAL NOT NULL,
  compile_cached INTEGER NOT NULL,
  h2d_ms REAL NOT NULL,
  d2h_ms REAL NOT NULL,
  kernel_ms REAL,
  kernel_ci_low REAL,
  kernel_ci_high REAL,
  kernel_mad REAL,
  reps INTEGER NOT NULL,
  kernels TEXT NOT NULL,
  cache_flushed INTEGER NOT NULL,
  bytes_moved INTEGER NOT NULL,
  gbps REAL,
  probe_fraction REAL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  CHECK (status <> 'ok' OR verified = 1)
);
CREATE TABLE samples (
  measurement_id INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,
  rep INTEGER NOT NULL,
  kernel_ms REAL NOT NULL,
  PRIMARY KEY (measurement_id, rep)
) WITHOUT ROWID;
CREATE INDEX measurements_by_target ON measurements(device_id, workload_id, status, kernel_ms);
CREATE INDEX measurements_by_session ON measurements(session_id);
)sql";

// Version 2: what the tuner needs. The cost of each evaluation, the fidelity it was measured at and
// why (search, or the final re-measurement of the best candidates), and each session's outcome.
const char* kSchemaV2 = R"sql(
ALTER TABLE measurements ADD COLUMN wall_ms REAL;
ALTER TABLE measurements ADD COLUMN fidelity INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN purpose TEXT NOT NULL DEFAULT 'search' CHECK (purpose IN ('search', 'remeasure'));
ALTER TABLE sessions ADD COLUMN seed INTEGER;
ALTER TABLE sessions ADD COLUMN budget TEXT;
ALTER TABLE sessions ADD COLUMN best_variant TEXT REFERENCES variants(id);
ALTER TABLE sessions ADD COLUMN best_kernel_ms REAL;
ALTER TABLE sessions ADD COLUMN evaluations INTEGER;
ALTER TABLE sessions ADD COLUMN spent_seconds REAL;
CREATE INDEX sessions_by_key ON sessions(kind, op, device_id, workload_id, strategy);
)sql";

// Version 3: the CPU baseline an operator was compared with in the same run (JSON: engine, threads, ms,
// verified), where it has one.
const char* kSchemaV3 = R"sql(
ALTER TABLE measurements ADD COLUMN baseline TEXT;
)sql";

// Version 4: one row per physical device. Until version 3 a device's identity was backend, platform,
// name, driver and host, which identical GPUs of one machine share; now the physical identity (PCI
// address, UUID or the documented fallback, DeviceInfo::physical) is part of it. Rows written before keep
// their identity with `physical` NULL and their measurements; Store::device() adopts such a row for the
// one device of the machine that matches it, and leaves it alone where several do (it cannot know which
// of them took the measurements).
const char* kSchemaV4 = R"sql(
ALTER TABLE devices ADD COLUMN physical TEXT;
ALTER TABLE devices ADD COLUMN pci TEXT;
ALTER TABLE devices ADD COLUMN uuid TEXT;
)sql";

// Version 5: each workload's class (datasets::WorkloadClass as JSON, and its id), which "best" and profiles
// group by. Workloads recorded before get theirs from classify_workloads() or the next ensure_workload().
const char* kSchemaV5 = R"sql(
ALTER TABLE workloads ADD COLUMN class TEXT;
ALTER TABLE workloads ADD COLUMN class_id TEXT;
CREATE INDEX workloads_by_class ON workloads(class_id);
)sql";

// Version 6: a running session has one owner (the process token of base/process.hpp) with a heartbeat,
// and one evaluation is recorded once: a unique index over (session, variant, purpose, fidelity). Rows
// that two processes sharing a session recorded twice before this version are kept, marked as duplicates
// of the first (`duplicate_of`), which the index and every query leave out.
const char* kSchemaV6 = R"sql(
ALTER TABLE sessions ADD COLUMN owner TEXT;
ALTER TABLE sessions ADD COLUMN heartbeat_at TEXT;
ALTER TABLE measurements ADD COLUMN duplicate_of INTEGER REFERENCES measurements(id);
UPDATE measurements SET duplicate_of = (
  SELECT MIN(f.id) FROM measurements f WHERE f.session_id = measurements.session_id
    AND f.variant_id = measurements.variant_id AND f.purpose = measurements.purpose
    AND f.fidelity = measurements.fidelity)
WHERE id > (
  SELECT MIN(f.id) FROM measurements f WHERE f.session_id = measurements.session_id
    AND f.variant_id = measurements.variant_id AND f.purpose = measurements.purpose
    AND f.fidelity = measurements.fidelity);
CREATE UNIQUE INDEX measurements_once ON measurements(session_id, variant_id, purpose, fidelity)
  WHERE duplicate_of IS NULL;
)sql";

// Version 7: one launch vocabulary (variants/launch.hpp). The grid tunable had three names: selection's and
// the string operators' `groups_per_cu` (cover or k work-groups per compute unit: the same values under
// `grid`), the hash join's `processors` and the group-by's `groups` (cover or N work-groups in all: `Nwg`
// under `grid`). Variant ids stay as they were recorded.
const char* kSchemaV7 = R"sql(
UPDATE variants SET params = json_remove(json_set(params, '$.grid', json_extract(params, '$.groups_per_cu')),
                                         '$.groups_per_cu')
WHERE json_type(params, '$.groups_per_cu') IS NOT NULL;
UPDATE variants SET params = json_remove(json_set(params, '$.grid',
    CASE json_type(params, '$.processors') WHEN 'integer' THEN json_extract(params, '$.processors') || 'wg'
    ELSE json_extract(params, '$.processors') END), '$.processors')
WHERE op = 'hashjoin' AND json_type(params, '$.processors') IS NOT NULL;
UPDATE variants SET params = json_remove(json_set(params, '$.grid',
    CASE json_type(params, '$.groups') WHEN 'integer' THEN json_extract(params, '$.groups') || 'wg'
    ELSE json_extract(params, '$.groups') END), '$.groups')
WHERE op = 'groupby' AND json_type(params, '$.groups') IS NOT NULL;
)sql";

// Version 8: how each result was verified (`checked`: 'host', compared in full on the host, or 'device', by a
// digest computed on the device; rows before were all checked on the host) and whether the measurement was
// cut off after one repetition as far slower than the session's incumbent (never a best).
const char* kSchemaV8 = R"sql(
ALTER TABLE measurements ADD COLUMN checked TEXT NOT NULL DEFAULT 'host' CHECK (checked IN ('host', 'device'));
ALTER TABLE measurements ADD COLUMN cut_off INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 9: how many variants a sweep or tune session's space held on its device when it started (its
// sub-space, or its shard's part), so that its progress can be read off the database alone (`varex fleet
// status`). NULL for sessions recorded before.
const char* kSchemaV9 = R"sql(
ALTER TABLE sessions ADD COLUMN variants INTEGER;
)sql";

// Version 10: what each measurement's repetitions cost in energy, where it was measured (--energy-ms and a
// meter on the device, harness/energy.hpp): joules per repetition, average power and the clocks seen, and the
// whole reading (method, repetitions, seconds, the meter's step) as JSON. NULL where no energy was measured.
const char* kSchemaV10 = R"sql(
ALTER TABLE measurements ADD COLUMN energy_j REAL;
ALTER TABLE measurements ADD COLUMN power_w REAL;
ALTER TABLE measurements ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE measurements ADD COLUMN mem_clock_mhz REAL;
ALTER TABLE measurements ADD COLUMN energy TEXT;
)sql";

// Version 11: how long a measurement's full comparison on the host took (Measurement::host_check_ms), so that
// a replay budgets a tune as the live tuner does: a 2^22 relational join's first measurement spent 0.40 s of
// its 0.80 s comparing, and read as runs it stopped 10% and 20% budgets after the default. NULL where it was
// not recorded (older rows; replays then infer it).
const char* kSchemaV11 = R"sql(
ALTER TABLE measurements ADD COLUMN host_check_ms REAL;
)sql";

// Version 12: other tuners' measurements (`varex import`: Kernel Tuner caches, T4 files), in a table of their
// own: varex never verified them, so they are no measurements of its (whose 'ok' rows are verified ones) and
// never a best; a session's measurements (session_measurements) include them for replays, reports and
// exports. Samples are a JSON array of milliseconds.
const char* kSchemaV12 = R"sql(
CREATE TABLE imported_measurements (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  variant_id TEXT NOT NULL REFERENCES variants(id),
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'launch_error', 'timeout', 'wrong_result')),
  error TEXT NOT NULL,
  compile_ms REAL NOT NULL,
  wall_ms REAL NOT NULL,
  samples TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX imported_by_session ON imported_measurements(session_id);
)sql";

}  // namespace

const std::vector<std::string>& Store::migrations() {
  static const std::vector<std::string> all{kSchemaV1, kSchemaV2,  kSchemaV3,  kSchemaV4,
                                            kSchemaV5, kSchemaV6,  kSchemaV7,  kSchemaV8,
                                            kSchemaV9, kSchemaV10, kSchemaV11, kSchemaV12};
  return all;
}

Store::Store(const std::string& path, Database::Mode mode) : Store(path, mode, migrations()) {}

Store::Store(const std::string& path, Database::Mode mode, std::vector<std::string> steps) : db_(path, mode) {
  try {
    refuse_foreign(path);
    if (mode == Database::Mode::ReadOnly) {
      // Nothing may change: no journal mode (a write), no migration (the schema must be current; migrate()
      // below only refuses a newer one).
      if (schema_version() < static_cast<int>(steps.size()))
        throw UsageError("database '" + path + "' has schema version " + std::to_string(schema_version()) +
                         ", older than this varex's " + std::to_string(steps.size()) +
                         ", and is opened read-only, so it cannot be brought up to date: copy it to a "
                         "writable directory first");
      migrate(steps);
      return;
    }
    db_.exec("PRAGMA journal_mode = WAL");
    db_.exec("PRAGMA foreign_keys = ON");
    migrate(steps);
  } catch (const RuntimeError& e) {
    // Not a database, read-only, or a locked file: the user's input, not a varex failure.
    throw UsageError(std::string("cannot use database '") + path + "': " + e.what());
  }
}

void Store::refuse_foreign(const std::string& path) {
  // Every varex database has a schema version (migrate sets it with the first tables); a file without one
  // that holds tables or views is another program's: migrating it would add varex's tables to it, and even
  // the journal mode set next is written into the file. So it is refused before anything touches it.
  if (schema_version() != 0) return;
  Statement objects(db_, "SELECT COUNT(*) FROM sqlite_master");
  objects.step();
  if (objects.integer(0) > 0) {
    throw UsageError("'" + path +
                     "' is not a varex database (it holds another program's tables); left as it was");
  }
}

void Store::migrate(const std::vector<std::string>& steps) {
  const int version = schema_version();
  if (version > static_cast<int>(steps.size())) {
    throw UsageError("database '" + db_.path() + "' has schema version " + std::to_string(version) +
                     ", newer than this varex understands (" + std::to_string(steps.size()) + ")");
  }
  for (int v = version; v < static_cast<int>(steps.size()); ++v) {
    Transaction t(db_);
    // Another process may have migrated while this one waited for the write lock.
    if (schema_version() > v) continue;
    db_.exec(steps[v]);
    db_.exec("PRAGMA user_version = " + std::to_string(v + 1));
    t.commit();
  }
}

int Store::schema_version() {
  Statement s(db_, "PRAGMA user_version");
  s.step();
  return static_cast<int>(s.integer(0));
}

std::int64_t Store::device(const DeviceInfo& d) {
  Transaction t(db_);
  std::optional<std::int64_t> row;
  {
    Statement find(db_, "SELECT id FROM devices WHERE uid = ?1");
    find.bind(1, d.uid());
    if (find.step()) row = find.integer(0);
  }
  if (!row && d.twins == 1 && !d.physical.empty()) {
    // A row recorded before physical identities (schema version 4) for the only device of this machine it
    // can mean: it becomes this device's row, its sessions and measurements with it.
    Statement legacy(db_, "SELECT id FROM devices WHERE uid = ?1 AND physical IS NULL");
    legacy.bind(1, d.legacy_uid());
    if (legacy.step()) {
      row = legacy.integer(0);
      Statement adopt(db_, "UPDATE devices SET uid = ?2 WHERE id = ?1");
      adopt.bind(1, *row).bind(2, d.uid());
      adopt.step();
    }
  }
  if (!row) {
    Statement insert(db_, R"sql(
      INSERT INTO devices (uid, local_id, backend, name, vendor, platform, driver, type, arch, compute_units,
                           global_mem, max_alloc, local_mem, cache_bytes, max_work_group, host)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, 0, 0, 0, 0, 0, ?10))sql");
    insert.bind(1, d.uid()).bind(2, d.id).bind(3, to_string(d.backend)).bind(4, d.name).bind(5, d.vendor);
    insert.bind(6, d.platform).bind(7, d.driver).bind(8, d.type).bind(9, d.arch).bind(10, d.host);
    insert.step();
    row = db_.last_insert_rowid();
  }
  // What may change between runs without making it another device: its id on this machine, sizes, the
  // physical identity's parts.
  Statement update(db_, R"sql(
    UPDATE devices SET local_id = ?2, vendor = ?3, type = ?4, arch = ?5, compute_units = ?6, global_mem = ?7,
      max_alloc = ?8, local_mem = ?9, cache_bytes = ?10, max_work_group = ?11, physical = ?12, pci = ?13, uuid = ?14
    WHERE id = ?1)sql");
  update.bind(1, *row).bind(2, d.id).bind(3, d.vendor).bind(4, d.type).bind(5, d.arch);
  update.bind(6, static_cast<std::int64_t>(d.compute_units)).bind(7, d.global_mem).bind(8, d.max_alloc);
  update.bind(9, d.local_mem).bind(10, d.cache_bytes).bind(11, d.max_work_group);
  auto text_or_null = [&](int i, const std::string& v) {
    v.empty() ? update.bind_null(i) : update.bind(i, v);
  };
  text_or_null(12, d.physical);
  text_or_null(13, d.pci);
  text_or_null(14, d.uuid);
  update.step();
  t.commit();
  return *row;
}

void Store::set_probe(std::int64_t device, const varex::ProbeResult& probe) {
  Statement s(db_, R"sql(UPDATE devices SET probe_gbps = ?2, probe_method = ?3, probe_details = ?4,
                         probed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1)sql");
  s.bind(1, device).bind(2, probe.gbps).bind(3, probe.method).bind(4, probe.details.dump());
  s.step();
}

std::optional<double> Store::probe_gbps(std::int64_t device) {
  Statement s(db_, "SELECT probe_gbps FROM devices WHERE id = ?1");
  s.bind(1, device);
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return s.real(0);
}

void Store::ensure_operator(const std::string& name, const std::string& description) {
  Statement s(db_,
              "INSERT INTO operators (name, description) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET "
              "description = excluded.description");
  s.bind(1, name).bind(2, description);
  s.step();
}

void Store::ensure_variant(const std::string& id, const std::string& op, Backend backend,
                           const variants::Params& params, const std::string& kernel_hash,
                           const variants::Params& compile_part) {
  Statement s(db_,
              "INSERT OR IGNORE INTO variants (id, op, backend, params, kernel_hash, compile_key) VALUES "
              "(?1, ?2, ?3, ?4, ?5, ?6)");
  s.bind(1, id)
      .bind(2, op)
      .bind(3, to_string(backend))
      .bind(4, variants::canonical(params))
      .bind(5, kernel_hash);
  s.bind(6, variants::canonical(compile_part));
  s.step();
}

void Store::ensure_workload(const datasets::WorkloadSpec& spec, const datasets::WorkloadClass& klass) {
  Statement s(db_, R"sql(INSERT INTO workloads (id, op, generator, params, query, rows, class, class_id)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                         ON CONFLICT (id) DO UPDATE SET class = excluded.class, class_id = excluded.class_id
                         WHERE class IS NULL)sql");
  s.bind(1, spec.id()).bind(2, spec.op).bind(3, spec.generator).bind(4, spec.params.dump());
  s.bind(5, spec.query.dump()).bind(6, spec.rows()).bind(7, klass.to_json().dump()).bind(8, klass.id());
  s.step();
}

void Store::classify_workloads(
    const std::function<std::optional<datasets::WorkloadClass>(const datasets::WorkloadSpec&)>& classify) {
  std::vector<datasets::WorkloadSpec> missing;
  {
    // Also the classes recorded before they carried their scale keys' kinds (every class has "rows").
    Statement s(db_,
                "SELECT op, generator, params, query FROM workloads WHERE class IS NULL OR instr(class, "
                "'\"kinds\"') = 0");
    while (s.step()) {
      datasets::WorkloadSpec spec;
      spec.op = s.text(0);
      spec.generator = s.text(1);
      spec.params = nlohmann::json::parse(s.text(2));
      spec.query = nlohmann::json::parse(s.text(3));
      missing.push_back(std::move(spec));
    }
  }
  if (missing.empty()) return;
  Transaction t(db_);
  Statement update(db_, "UPDATE workloads SET class = ?2, class_id = ?3 WHERE id = ?1");
  for (const auto& spec : missing) {
    const auto klass = classify(spec);
    if (!klass) continue;
    update.reset();
    update.bind(1, spec.id()).bind(2, klass->to_json().dump()).bind(3, klass->id());
    update.step();
  }
  t.commit();
}

std::int64_t Store::begin_session(const std::string& kind, const std::string& op, std::int64_t device,
                                  const std::string& workload, const std::string& strategy,
                                  const nlohmann::json& settings, std::optional<std::int64_t> seed,
                                  const std::string& budget) {
  Statement s(db_,
              R"sql(INSERT INTO sessions (kind, op, device_id, workload_id, strategy, settings, status, host,
                                               varex_version, seed, budget, owner, heartbeat_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10, ?11,
                                 strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))sql");
  s.bind(1, kind).bind(2, op).bind(3, device).bind(4, workload).bind(5, strategy).bind(6, settings.dump());
  s.bind(7, host_name()).bind(8, VAREX_VERSION).bind(9, seed).bind(10, budget).bind(11, process_token());
  s.step();
  return db_.last_insert_rowid();
}

std::int64_t Store::begin_session(const SessionKey& key, std::optional<std::int64_t> seed,
                                  const std::string& budget) {
  return begin_session(key.kind, key.op, key.device, key.workload, key.strategy, key.settings, seed, budget);
}

void Store::end_session(std::int64_t session, const std::string& status,
                        const std::optional<SessionOutcome>& outcome) {
  // Ending a session gives up its ownership.
  Statement s(db_, R"sql(UPDATE sessions SET status = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                           best_variant = ?3, best_kernel_ms = ?4, evaluations = ?5, spent_seconds = ?6, owner = NULL
                         WHERE id = ?1)sql");
  s.bind(1, session).bind(2, status);
  if (outcome && !outcome->best_variant.empty()) {
    s.bind(3, outcome->best_variant).bind(4, outcome->best_kernel_ms);
  } else {
    s.bind_null(3).bind_null(4);
  }
  if (outcome) {
    s.bind(5, outcome->evaluations).bind(6, outcome->spent_seconds);
  } else {
    s.bind_null(5).bind_null(6);
  }
  s.step();
}

SessionClaim Store::claim_session(const SessionKey& key, bool fresh, std::optional<std::int64_t> seed,
                                  const std::string& budget) {
  // One transaction: two identical commands started at the same instant find, create or take over the
  // session one after the other, never both.
  Transaction t(db_);
  SessionClaim claim;
  if (!fresh) {
    Statement s(db_, R"sql(SELECT id, status, owner, (julianday('now') - julianday(heartbeat_at)) * 86400
                           FROM sessions WHERE kind = ?1 AND op = ?2 AND device_id = ?3 AND workload_id = ?4
                             AND strategy = ?5 AND settings = ?6 ORDER BY id DESC LIMIT 1)sql");
    s.bind(1, key.kind).bind(2, key.op).bind(3, key.device).bind(4, key.workload).bind(5, key.strategy);
    s.bind(6, key.settings.dump());
    if (s.step()) {
      claim.session = s.integer(0);
      const std::string status = s.text(1);
      if (status == "finished") {
        claim.kind = SessionClaim::Kind::Finished;
        t.commit();
        return claim;
      }
      const std::string owner = s.text(2);
      const double since_heartbeat = s.is_null(3) ? 1e18 : s.real(3);
      if (status == "running" && !owner.empty() && owner != process_token() &&
          token_alive(owner, since_heartbeat)) {
        claim.kind = SessionClaim::Kind::Busy;
        claim.owner = owner;
        t.commit();
        return claim;
      }
      // Interrupted, failed, or its owner died (kill -9, a lost machine): this process takes it over.
      Statement take(db_, R"sql(UPDATE sessions SET status = 'running', finished_at = NULL, owner = ?2,
                                  heartbeat_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1)sql");
      take.bind(1, claim.session).bind(2, process_token());
      take.step();
      claim.kind = SessionClaim::Kind::Resumed;
      t.commit();
      return claim;
    }
  }
  claim.session = begin_session(key, seed, budget);
  claim.kind = SessionClaim::Kind::Created;
  t.commit();
  return claim;
}

void Store::set_session_variants(std::int64_t session, std::uint64_t variants) {
  Statement s(db_, "UPDATE sessions SET variants = ?2 WHERE id = ?1");
  s.bind(1, session).bind(2, static_cast<std::int64_t>(variants));
  s.step();
}

void Store::heartbeat(std::int64_t session) {
  Statement s(db_, R"sql(UPDATE sessions SET heartbeat_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
                         WHERE id = ?1 AND owner = ?2)sql");
  s.bind(1, session).bind(2, process_token());
  s.step();
}

void Store::discard_session(std::int64_t session) {
  Transaction t(db_);
  Statement used(db_, "SELECT COUNT(*) FROM measurements WHERE session_id = ?1");
  used.bind(1, session);
  used.step();
  const bool empty = used.integer(0) == 0;
  used.reset();
  if (empty) {
    Statement drop(db_, "DELETE FROM sessions WHERE id = ?1");
    drop.bind(1, session);
    drop.step();
  }
  t.commit();
  if (!empty) end_session(session, "interrupted");
}

void Store::forget_unused(const std::string& op, const std::string& workload_id) {
  Transaction t(db_);
  Statement workload(db_, R"sql(
    DELETE FROM workloads WHERE id = ?1
      AND NOT EXISTS (SELECT 1 FROM sessions WHERE workload_id = ?1)
      AND NOT EXISTS (SELECT 1 FROM measurements WHERE workload_id = ?1))sql");
  workload.bind(1, workload_id);
  workload.step();
  Statement op_row(db_, R"sql(
    DELETE FROM operators WHERE name = ?1
      AND NOT EXISTS (SELECT 1 FROM workloads WHERE op = ?1)
      AND NOT EXISTS (SELECT 1 FROM variants WHERE op = ?1)
      AND NOT EXISTS (SELECT 1 FROM sessions WHERE op = ?1))sql");
  op_row.bind(1, op);
  op_row.step();
  t.commit();
}

void Store::release_session(std::int64_t session) {
  Statement s(db_, "UPDATE sessions SET owner = NULL WHERE id = ?1 AND owner = ?2");
  s.bind(1, session).bind(2, process_token());
  s.step();
}

namespace {

// The device columns every query that returns devices selects first, in this order.
constexpr const char* kDeviceColumns =
    "d.local_id, d.backend, d.name, d.vendor, d.platform, d.driver, d.type, d.arch, d.compute_units, "
    "d.global_mem, "
    "d.max_alloc, d.local_mem, d.cache_bytes, d.max_work_group, d.host, d.probe_gbps, d.physical, d.pci, "
    "d.uuid";
constexpr int kDeviceColumnCount = 19;

DeviceInfo read_device(const Statement& s, std::optional<double>* probe) {
  DeviceInfo d;
  d.id = s.text(0);
  d.backend = backend_from_string(s.text(1));
  d.name = s.text(2);
  d.vendor = s.text(3);
  d.platform = s.text(4);
  d.driver = s.text(5);
  d.type = s.text(6);
  d.arch = s.text(7);
  d.compute_units = static_cast<std::uint32_t>(s.integer(8));
  d.global_mem = s.integer(9);
  d.max_alloc = s.integer(10);
  d.local_mem = s.integer(11);
  d.cache_bytes = s.integer(12);
  d.max_work_group = s.integer(13);
  d.host = s.text(14);
  if (probe) *probe = s.is_null(15) ? std::nullopt : std::optional<double>(s.real(15));
  d.physical = s.text(16);  // empty for rows recorded before physical identities
  d.pci = s.text(17);
  d.uuid = s.text(18);
  return d;
}

}  // namespace

std::vector<RecordedDevice> Store::devices() {
  Statement s(db_, std::string("SELECT ") + kDeviceColumns + ", d.id FROM devices d ORDER BY d.id");
  std::vector<RecordedDevice> out;
  while (s.step()) {
    RecordedDevice r;
    r.device = read_device(s, &r.probe_gbps);
    r.row = s.integer(kDeviceColumnCount);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RecordedSession> Store::sessions(const std::optional<std::string>& kind,
                                             const std::optional<std::string>& op) {
  Statement s(db_, std::string("SELECT ") + kDeviceColumns + R"sql(, x.id, x.kind, x.op, x.strategy, x.status,
        x.device_id, w.generator, w.params, w.query, x.settings, x.seed, x.budget, x.best_variant, x.best_kernel_ms,
        x.evaluations, x.spent_seconds, w.class, x.variants
      FROM sessions x JOIN devices d ON d.id = x.device_id JOIN workloads w ON w.id = x.workload_id
      WHERE (?1 IS NULL OR x.kind = ?1) AND (?2 IS NULL OR x.op = ?2) ORDER BY x.id)sql");
  s.bind(1, kind).bind(2, op);
  std::vector<RecordedSession> out;
  const int c = kDeviceColumnCount;
  while (s.step()) {
    RecordedSession r;
    r.device = read_device(s, &r.probe_gbps);
    r.id = s.integer(c);
    r.kind = s.text(c + 1);
    r.op = s.text(c + 2);
    r.strategy = s.text(c + 3);
    r.status = s.text(c + 4);
    r.device_row = s.integer(c + 5);
    r.workload.op = r.op;
    r.workload.generator = s.text(c + 6);
    r.workload.params = nlohmann::json::parse(s.text(c + 7));
    r.workload.query = nlohmann::json::parse(s.text(c + 8));
    r.settings = nlohmann::json::parse(s.text(c + 9));
    if (!s.is_null(c + 10)) r.seed = s.integer(c + 10);
    r.budget = s.text(c + 11);
    if (!s.is_null(c + 14)) {
      r.outcome = SessionOutcome{s.text(c + 12), s.real(c + 13), s.integer(c + 14), s.real(c + 15)};
    }
    // A workload recorded before classes (and not classified since) by the generators' conventions.
    r.workload_class = s.is_null(c + 16)
                           ? datasets::default_class(r.workload)
                           : datasets::WorkloadClass::from_json(nlohmann::json::parse(s.text(c + 16)));
    if (!s.is_null(c + 17)) r.variants = s.integer(c + 17);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<RecordedSession> Store::latest_session(const SessionKey& key) {
  Statement s(
      db_, R"sql(SELECT id FROM sessions WHERE kind = ?1 AND op = ?2 AND device_id = ?3 AND workload_id = ?4
                         AND strategy = ?5 AND settings = ?6 ORDER BY id DESC LIMIT 1)sql");
  s.bind(1, key.kind).bind(2, key.op).bind(3, key.device).bind(4, key.workload).bind(5, key.strategy);
  s.bind(6, key.settings.dump());
  if (!s.step()) return std::nullopt;
  const std::int64_t id = s.integer(0);
  for (RecordedSession& r : sessions(key.kind, key.op)) {
    if (r.id == id) return r;
  }
  return std::nullopt;
}

std::vector<RecordedMeasurement> Store::session_measurements(std::int64_t session) {
  std::map<std::int64_t, std::vector<double>> samples;
  Statement q(
      db_,
      R"sql(SELECT s.measurement_id, s.kernel_ms FROM samples s JOIN measurements m ON m.id = s.measurement_id
                         JOIN sessions se ON se.id = m.session_id
                         WHERE m.session_id = ?1 AND m.duplicate_of IS NULL AND m.workload_id = se.workload_id
                         ORDER BY s.measurement_id, s.rep)sql");
  q.bind(1, session);
  while (q.step()) samples[q.integer(0)].push_back(q.real(1));

  Statement s(db_,
              R"sql(SELECT m.id, m.variant_id, v.params, m.fidelity, m.purpose, m.status, m.error, m.verified,
      m.result_rows, m.checksum, m.compile_ms, m.compile_cached, m.h2d_ms, m.d2h_ms, m.kernels, m.cache_flushed,
      m.bytes_moved, m.gbps, m.probe_fraction, m.wall_ms, m.created_at, m.baseline, m.checked, m.cut_off, m.energy,
      m.host_check_ms
      FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN sessions se ON se.id = m.session_id
      WHERE m.session_id = ?1 AND m.duplicate_of IS NULL AND m.workload_id = se.workload_id ORDER BY m.id)sql");
  s.bind(1, session);
  std::vector<RecordedMeasurement> out;
  while (s.step()) {
    RecordedMeasurement r;
    r.id = s.integer(0);
    r.variant_id = s.text(1);
    r.params = variants::params_from_json(nlohmann::json::parse(s.text(2)));
    r.fidelity = static_cast<int>(s.integer(3));
    r.purpose = s.text(4);
    varex::Measurement& m = r.m;
    m.status = varex::status_from_string(s.text(5));
    m.error = s.text(6);
    m.verified = s.integer(7) != 0;
    m.result.rows = static_cast<std::uint64_t>(s.integer(8));
    m.result.checksum = s.is_null(9) ? 0 : std::stoull(s.text(9));
    m.compile_ms = s.real(10);
    m.compile_cached = s.integer(11) != 0;
    m.h2d_ms = s.real(12);
    m.d2h_ms = s.real(13);
    for (const auto& k : nlohmann::json::parse(s.text(14))) m.kernels.push_back({k.at("kernel"), k.at("ms")});
    m.cache_flushed = s.integer(15) != 0;
    m.bytes_moved = static_cast<std::uint64_t>(s.integer(16));
    m.gbps = s.real(17);
    m.probe_fraction = s.real(18);
    m.wall_ms = s.real(19);
    r.created_at = s.text(20);
    if (!s.is_null(21)) m.baseline = varex::baseline_from_json(nlohmann::json::parse(s.text(21)));
    m.checked = varex::check_from_string(s.text(22));
    m.cut_off = s.integer(23) != 0;
    if (!s.is_null(24)) m.energy = varex::EnergyReading::from_json(nlohmann::json::parse(s.text(24)));
    r.host_check_recorded = !s.is_null(25);
    if (r.host_check_recorded) m.host_check_ms = s.real(25);
    m.samples_ms = samples[r.id];
    m.kernel = summarize(m.samples_ms);
    out.push_back(std::move(r));
  }
  Statement imported(db_,
                     R"sql(SELECT i.id, i.variant_id, v.params, i.status, i.error, i.compile_ms, i.wall_ms,
      i.samples, i.created_at FROM imported_measurements i JOIN variants v ON v.id = i.variant_id
      WHERE i.session_id = ?1 ORDER BY i.id)sql");
  imported.bind(1, session);
  while (imported.step()) {
    RecordedMeasurement r;
    r.id = imported.integer(0);
    r.variant_id = imported.text(1);
    r.params = variants::params_from_json(nlohmann::json::parse(imported.text(2)));
    r.imported = true;
    r.purpose = "search";
    varex::Measurement& m = r.m;
    m.status = varex::status_from_string(imported.text(3));
    m.error = imported.text(4);
    m.compile_ms = imported.real(5);
    m.wall_ms = imported.real(6);
    m.samples_ms = nlohmann::json::parse(imported.text(7)).get<std::vector<double>>();
    m.kernel = summarize(m.samples_ms);
    r.created_at = imported.text(8);
    out.push_back(std::move(r));
  }
  return out;
}

void Store::record_imported(std::int64_t session, const std::string& variant, const varex::Measurement& m) {
  Statement s(db_, R"sql(INSERT INTO imported_measurements (session_id, variant_id, status, error, compile_ms,
      wall_ms, samples) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7))sql");
  s.bind(1, session).bind(2, variant).bind(3, varex::to_string(m.status)).bind(4, m.error);
  s.bind(5, m.compile_ms).bind(6, m.wall_ms).bind(7, nlohmann::json(m.samples_ms).dump());
  s.step();
}

std::int64_t Store::record(std::int64_t session, const std::string& variant, std::int64_t device,
                           const std::string& workload, const varex::Measurement& m, int fidelity,
                           const std::string& purpose) {
  Transaction t(db_);
  Statement s(db_, R"sql(
    INSERT INTO measurements (session_id, variant_id, device_id, workload_id, status, error, verified, result_rows,
      checksum, compile_ms, compile_cached, h2d_ms, d2h_ms, kernel_ms, kernel_ci_low, kernel_ci_high, kernel_mad,
      reps, kernels, cache_flushed, bytes_moved, gbps, probe_fraction, wall_ms, fidelity, purpose, baseline, checked,
      cut_off, energy_j, power_w, sm_clock_mhz, mem_clock_mhz, energy, host_check_ms)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23,
            ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35))sql");
  const bool timed = !m.samples_ms.empty();
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : m.kernels) kernels.push_back({{"kernel", k.kernel}, {"ms", k.ms}});
  s.bind(1, session).bind(2, variant).bind(3, device).bind(4, workload).bind(5, to_string(m.status));
  s.bind(6, m.error).bind(7, m.verified ? 1 : 0);
  const bool ran = m.status == varex::Status::Ok || m.status == varex::Status::WrongResult;
  if (ran) {
    s.bind(8, m.result.rows).bind(9, std::to_string(m.result.checksum));
  } else {
    s.bind_null(8).bind_null(9);
  }
  s.bind(10, m.compile_ms).bind(11, m.compile_cached ? 1 : 0).bind(12, m.h2d_ms).bind(13, m.d2h_ms);
  if (timed) {
    s.bind(14, m.kernel.median).bind(15, m.kernel.ci_low).bind(16, m.kernel.ci_high).bind(17, m.kernel.mad);
  } else {
    s.bind_null(14).bind_null(15).bind_null(16).bind_null(17);
  }
  s.bind(18, static_cast<std::int64_t>(m.samples_ms.size()))
      .bind(19, kernels.dump())
      .bind(20, m.cache_flushed ? 1 : 0);
  s.bind(21, m.bytes_moved);
  if (timed) {
    s.bind(22, m.gbps).bind(23, m.probe_fraction);
  } else {
    s.bind_null(22).bind_null(23);
  }
  s.bind(24, m.wall_ms).bind(25, fidelity).bind(26, purpose);
  if (m.baseline) {
    s.bind(27, varex::baseline_json(m.baseline).dump());
  } else {
    s.bind_null(27);
  }
  s.bind(28, varex::to_string(m.checked)).bind(29, m.cut_off ? 1 : 0);
  if (m.energy) {
    const varex::EnergyReading& e = *m.energy;
    s.bind(30, e.joules_per_rep()).bind(31, e.watts()).bind(32, e.sm_clock_mhz).bind(33, e.mem_clock_mhz);
    s.bind(34, e.to_json().dump());
  } else {
    s.bind_null(30).bind_null(31).bind_null(32).bind_null(33).bind_null(34);
  }
  s.bind(35, m.host_check_ms);
  s.step();
  const std::int64_t id = db_.last_insert_rowid();
  Statement sample(db_, "INSERT INTO samples (measurement_id, rep, kernel_ms) VALUES (?1, ?2, ?3)");
  for (std::size_t i = 0; i < m.samples_ms.size(); ++i) {
    sample.reset();
    sample.bind(1, id).bind(2, static_cast<std::int64_t>(i)).bind(3, m.samples_ms[i]);
    sample.step();
  }
  t.commit();
  return id;
}

std::vector<BestRow> Store::best(const BestQuery& query) {
  // The candidates, grouped by target (device, operator, class) and variant, each with its value under the
  // objective (energy and edp: only measurements that carry energy).
  struct Candidate {
    double value;
    double ms;
    std::int64_t measurement;
  };
  using Target = std::tuple<std::int64_t, std::string, std::string>;
  std::map<Target, std::map<std::string, std::vector<Candidate>>> targets;
  {
    const std::string value = objective_sql(query.objective);
    Statement s(db_, R"sql(
      SELECT m.id, m.device_id, v.op, COALESCE(w.class_id, 'workload ' || w.id), m.variant_id, m.kernel_ms, )sql" +
                         value + R"sql(
      FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN workloads w ON w.id = m.workload_id
           JOIN sessions x ON x.id = m.session_id
      WHERE m.status = 'ok' AND m.verified = 1 AND m.fidelity = 0 AND m.kernel_ms IS NOT NULL AND m.cut_off = 0
        AND m.duplicate_of IS NULL AND w.rows > 0 AND )sql" +
                         value + R"sql( IS NOT NULL
        AND (m.purpose = 'remeasure' OR (?2 AND x.kind = 'run')) AND (?1 IS NULL OR v.op = ?1)
        AND (?3 = 0 OR x.status = 'finished')
        -- a variant that ever left a wrong result for this workload and device is never best, also where a
        -- device digest passed it before its full comparison did not
        AND NOT EXISTS (SELECT 1 FROM measurements b WHERE b.device_id = m.device_id
                        AND b.workload_id = m.workload_id AND b.status = 'wrong_result'
                        AND b.variant_id = m.variant_id)
      ORDER BY m.id)sql");
    s.bind(1, query.op).bind(2, query.include_runs ? 1 : 0).bind(3, query.finished_only ? 1 : 0);
    while (s.step()) {
      const std::int64_t device = s.integer(1);
      if (query.devices &&
          std::find(query.devices->begin(), query.devices->end(), device) == query.devices->end())
        continue;
      targets[{device, s.text(2), s.text(3)}][s.text(4)].push_back({s.real(6), s.real(5), s.integer(0)});
    }
  }
  Statement details(db_,
                    std::string("SELECT ") + kDeviceColumns + R"sql(, v.op, w.generator, w.params, w.query,
         m.variant_id, v.params, m.kernel_ms, m.kernel_ci_low, m.kernel_ci_high, m.h2d_ms, m.d2h_ms, m.gbps,
         m.probe_fraction, d.uid, m.created_at, x.kind, x.strategy, x.budget, m.session_id, m.device_id, w.class,
         v.kernel_hash, m.energy_j, m.power_w
    FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN devices d ON d.id = m.device_id
         JOIN workloads w ON w.id = m.workload_id JOIN sessions x ON x.id = m.session_id
    WHERE m.id = ?1)sql");
  Statement variant_params(db_, "SELECT params FROM variants WHERE id = ?1");
  std::vector<BestRow> rows;
  const int c = kDeviceColumnCount;
  for (auto& [target, variants] : targets) {
    // Each variant by the median of its candidate measurements (the lower middle one for an even count).
    const Candidate* winner = nullptr;
    std::int64_t measurements = 0;
    std::vector<std::tuple<double, std::string, double>> medians;  // of every variant: value, id, ms
    for (auto& [variant, list] : variants) {
      measurements += static_cast<std::int64_t>(list.size());
      std::sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
        return a.value < b.value || (a.value == b.value && a.measurement < b.measurement);
      });
      const Candidate& median = list[(list.size() - 1) / 2];
      medians.emplace_back(median.value, variant, median.ms);
      if (!winner || median.value < winner->value ||
          (median.value == winner->value && median.measurement < winner->measurement))
        winner = &median;
    }
    std::sort(medians.begin(), medians.end());
    details.reset();
    details.bind(1, winner->measurement);
    if (!details.step()) continue;
    BestRow r;
    r.device = read_device(details, &r.probe_gbps);
    r.op = details.text(c);
    r.workload.op = r.op;
    r.workload.generator = details.text(c + 1);
    r.workload.params = nlohmann::json::parse(details.text(c + 2));
    r.workload.query = nlohmann::json::parse(details.text(c + 3));
    r.variant_id = details.text(c + 4);
    r.params = variants::params_from_json(nlohmann::json::parse(details.text(c + 5)));
    r.kernel_ms = details.real(c + 6);
    r.kernel_ci_low = details.real(c + 7);
    r.kernel_ci_high = details.real(c + 8);
    r.h2d_ms = details.real(c + 9);
    r.d2h_ms = details.real(c + 10);
    r.gbps = details.real(c + 11);
    r.probe_fraction = details.real(c + 12);
    r.device_uid = details.text(c + 13);
    r.measured_at = details.text(c + 14);
    r.method = details.text(c + 15);
    r.method.append(" ").append(details.text(c + 16));
    if (details.text(c + 15) == "tune") r.method.append(" ").append(details.text(c + 17));
    r.session = details.integer(c + 18);
    r.device_row = details.integer(c + 19);
    r.workload_class = details.is_null(c + 20)
                           ? datasets::WorkloadClass{nlohmann::json::object(), {{"rows", r.workload.rows()}}}
                           : datasets::WorkloadClass::from_json(nlohmann::json::parse(details.text(c + 20)));
    r.kernel_hash = details.text(c + 21);
    if (!details.is_null(c + 22)) r.energy_j = details.real(c + 22);
    if (!details.is_null(c + 23)) r.power_w = details.real(c + 23);
    r.objective = query.objective;
    r.value = winner->value;
    for (const auto& [value, variant, ms] : medians) {
      if (variant == r.variant_id) continue;
      if (r.runners_up.size() == BestRow::kRunnersUp) break;
      variant_params.reset();
      variant_params.bind(1, variant);
      if (variant_params.step())
        r.runners_up.push_back(
            {variant, variants::params_from_json(nlohmann::json::parse(variant_params.text(0))), ms, value});
    }
    r.measurements = measurements;
    r.candidates = static_cast<std::int64_t>(variants.size());
    rows.push_back(std::move(r));
  }
  // By device, operator, then size, as people read them.
  std::sort(rows.begin(), rows.end(), [](const BestRow& a, const BestRow& b) {
    return std::tuple(a.device_row, a.op, a.workload.rows(), a.workload_class.id()) <
           std::tuple(b.device_row, b.op, b.workload.rows(), b.workload_class.id());
  });
  return rows;
}

}  // namespace varex::results
