#include "fleet/status.hpp"

#include <filesystem>
#include <fstream>

#include "results/sqlite.hpp"

namespace varex::fleet {

std::string done_marker(const FleetDir& dir, std::uint32_t task) {
  return dir.shards() + "/task-" + std::to_string(task) + ".done";
}

TaskProgress read_progress(const std::string& db) {
  TaskProgress p;
  if (!std::filesystem::exists(db)) return p;
  p.exists = true;
  try {
    results::Database database(db, results::Database::Mode::ReadOnly);
    results::Statement s(database, R"sql(
      SELECT x.status, x.variants,
             (SELECT COUNT(DISTINCT m.variant_id) FROM measurements m
               WHERE m.session_id = x.id AND m.purpose = 'search' AND m.duplicate_of IS NULL)
      FROM sessions x WHERE x.kind IN ('sweep', 'tune') ORDER BY x.id)sql");
    while (s.step()) {
      ++p.sessions;
      p.statuses.push_back(s.text(0));
      p.finished += s.text(0) == "finished";
      if (!s.is_null(1)) p.variants += s.integer(1);
      p.measured += s.integer(2);
    }
  } catch (const std::exception&) {
    // A database the task is still creating (no schema yet), or of an older varex without the columns:
    // progress unknown, which status shows as no sessions.
  }
  return p;
}

FleetStatus read_status(const FleetDir& dir, const Slurm& slurm) {
  FleetStatus st;
  st.plan = dir.load();
  std::vector<std::string> jobs;
  for (std::uint32_t k = 0; k < st.plan.tasks; ++k) {
    const std::string job = st.plan.task_job(k);
    if (!job.empty()) jobs.push_back(job);
  }
  if (!st.plan.submissions.empty()) {
    st.merge_job = st.plan.submissions.back().merge_job;
    if (!st.merge_job.empty()) jobs.push_back(st.merge_job);
  }
  std::map<std::string, JobState> states;
  try {
    states = slurm.states(jobs);
  } catch (const SlurmUnreachable& e) {
    st.slurm_unreachable = e.what();
  }
  for (std::uint32_t k = 0; k < st.plan.tasks; ++k) {
    TaskStatus t;
    t.task = k;
    t.job = st.plan.task_job(k);
    t.slurm_unreachable = !st.slurm_unreachable.empty();
    if (const auto it = states.find(t.job); it != states.end()) t.slurm = it->second;
    t.done = std::filesystem::exists(done_marker(dir, k));
    t.progress = read_progress(dir.shard_db(k));
    st.tasks.push_back(std::move(t));
  }
  if (const auto it = states.find(st.merge_job); it != states.end()) st.merge = it->second;
  std::ifstream merged(dir.merge_report());
  if (merged) {
    try {
      st.merged = nlohmann::json::parse(merged);
    } catch (const nlohmann::json::exception&) {
    }
  }
  return st;
}

nlohmann::json FleetStatus::to_json() const {
  // A state Slurm does not know is JSON's null: spelled out, since `cond ? state : nullptr` would make the
  // nullptr a std::string.
  nlohmann::json tasks_json = nlohmann::json::array();
  for (const TaskStatus& t : tasks) {
    tasks_json.push_back({{"task", t.task},
                          {"job", t.job},
                          {"state", t.slurm ? nlohmann::json(t.slurm->state) : nlohmann::json(nullptr)},
                          {"reason", t.slurm ? t.slurm->reason : ""},
                          {"done", t.done},
                          {"sessions", t.progress.statuses},
                          {"measured", t.progress.measured},
                          {"variants", t.progress.variants},
                          {"resumable", t.resumable()}});
  }
  return {{"kind", plan.kind},
          {"split", plan.split},
          {"tasks", tasks_json},
          {"merge_job", merge_job},
          {"merge_state", merge ? nlohmann::json(merge->state) : nlohmann::json(nullptr)},
          {"merged", merged ? *merged : nlohmann::json(nullptr)},
          {"slurm_unreachable",
           slurm_unreachable.empty() ? nlohmann::json(nullptr) : nlohmann::json(slurm_unreachable)}};
}

}  // namespace varex::fleet
