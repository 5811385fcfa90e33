#include "fleet/merge.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "fleet/status.hpp"
#include "results/merge.hpp"
#include "results/sqlite.hpp"

namespace varex::fleet {

namespace {

std::int64_t count(const std::string& db, const char* sql) {
  results::Database database(db, results::Database::Mode::ReadOnly);
  results::Statement s(database, sql);
  s.step();
  return s.integer(0);
}

void remove_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace

nlohmann::json merge_fleet(const FleetDir& dir) {
  const PlanLock lock(dir);
  const FleetPlan plan = dir.load();
  std::vector<std::string> sources;
  nlohmann::json merged = nlohmann::json::array(), not_done = nlohmann::json::array();
  for (std::uint32_t k = 0; k < plan.tasks; ++k) {
    if (!std::filesystem::exists(done_marker(dir, k))) not_done.push_back(k);
    if (std::filesystem::exists(dir.shard_db(k))) {
      sources.push_back(dir.shard_db(k));
      merged.push_back(k);
    }
  }
  // A new file each time, renamed over the old: fleet.db is one whole merge of what the tasks hold now.
  const std::string building = dir.root + "/.fleet.db.merging." + std::to_string(::getpid());
  remove_database(building);
  nlohmann::json report{{"merged_at", utc_now()}, {"database", dir.merged_db()},
                        {"tasks", plan.tasks},    {"merged_tasks", merged},
                        {"not_done", not_done},   {"complete", not_done.empty()}};
  if (sources.empty()) {
    // Nothing to merge: neither fleet.db nor merged.json is written, so that neither claims a merge.
    report["database"] = nullptr;
    report["sessions"] = report["measurements"] = 0;
    return report;
  }
  try {
    results::merge_databases(building, sources);
    // The old fleet.db's journal files would be read as the new file's: they go first.
    for (const char* suffix : {"-wal", "-shm"}) std::remove((dir.merged_db() + suffix).c_str());
    std::filesystem::rename(building, dir.merged_db());
  } catch (...) {
    remove_database(building);
    throw;
  }
  report["sessions"] = count(dir.merged_db(), "SELECT COUNT(*) FROM sessions");
  report["measurements"] =
      count(dir.merged_db(), "SELECT COUNT(*) FROM measurements WHERE duplicate_of IS NULL");
  write_atomically(dir.merge_report(), report.dump(2) + "\n");
  return report;
}

}  // namespace varex::fleet
