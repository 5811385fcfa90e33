#include "fleet/fleet.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "fleet/scripts.hpp"
#include "fleet/shared_dir.hpp"

namespace varex::fleet {

namespace fs = std::filesystem;

namespace {

void write_script(const std::string& path, const std::string& text) {
  write_atomically(path, text);
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
}

// "0-3" for all tasks, "1,3" for some: sbatch's --array.
std::string array_spec(const std::vector<std::uint32_t>& tasks) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(tasks[i])
                           : std::to_string(tasks[i]) + "-" + std::to_string(tasks[j]));
    i = j + 1;
  }
  return join(parts, ",");
}

// The task array and the merge after it (and after `also_after`, jobs of earlier submissions still live).
Submission submit_tasks(const FleetDir& dir, const Slurm& slurm, const std::vector<std::uint32_t>& tasks,
                        const std::vector<std::string>& also_after) {
  Submission s;
  s.tasks = tasks;
  s.submitted_at = utc_now();
  std::vector<std::string> after = also_after;
  if (!tasks.empty()) {
    s.array_job = slurm.submit(dir.task_script(), {"--array=" + array_spec(tasks)});
    after.push_back(s.array_job);
  }
  std::vector<std::string> merge_options;
  if (!after.empty()) merge_options.push_back("--dependency=afterany:" + join(after, ":"));
  s.merge_job = slurm.submit(dir.merge_script(), merge_options);
  return s;
}

}  // namespace

std::optional<Submission> submit(const FleetDir& dir, FleetPlan plan, const Slurm* slurm,
                                 bool assume_shared) {
  if (dir.root.find_first_of(" \t\n'\"\\%") != std::string::npos)
    throw UsageError(
        "fleet directory '" + dir.root +
        "' has a space, quote, backslash or % in its path, which Slurm's #SBATCH lines cannot take");
  if (fs::exists(dir.plan()))
    throw UsageError("'" + dir.root + "' already holds a fleet run: see varex fleet status --dir " +
                     dir.root + ", or give another --dir");
  const bool existed = fs::exists(dir.root);
  if (existed && fs::is_directory(dir.root) && !fs::is_empty(dir.root))
    throw UsageError("fleet directory '" + dir.root + "' is not empty: give a new or empty one");
  std::vector<std::string> nodes;
  if (slurm) {
    slurm->check_reachable();
    nodes = slurm->partition_nodes(plan.placement.partition);
  }
  try {
    check_fleet_directory(dir.root, nodes, assume_shared);
    fs::create_directories(dir.shards());
    fs::create_directories(dir.logs());
    write_script(dir.task_script(), task_script(dir, plan));
    write_script(dir.merge_script(), merge_script(dir, plan));
    if (slurm) slurm->check_submission(dir.task_script(), {"--array=0-" + std::to_string(plan.tasks - 1)});
  } catch (...) {
    // A refusal leaves the directory as it was: empty, or not there.
    std::error_code ignored;
    if (existed) {
      for (const auto& entry : fs::directory_iterator(dir.root, ignored))
        fs::remove_all(entry.path(), ignored);
    } else {
      fs::remove_all(dir.root, ignored);
    }
    throw;
  }
  const PlanLock lock(dir, PlanLock::Run::New);
  std::vector<std::uint32_t> all(plan.tasks);
  for (std::uint32_t k = 0; k < plan.tasks; ++k) all[k] = k;
  // The plan is written before the jobs are submitted, and again with their ids: a task that starts at once
  // finds its directory complete.
  dir.save(plan);
  if (!slurm) return std::nullopt;
  plan.submissions.push_back(submit_tasks(dir, *slurm, all, {}));
  dir.save(plan);
  return plan.submissions.back();
}

std::optional<Submission> resume(const FleetDir& dir, const Slurm& slurm) {
  const PlanLock lock(dir);
  FleetStatus st = read_status(dir, slurm);
  // Unknown states are not ended ones: resubmitting would run live tasks twice.
  if (!st.slurm_unreachable.empty()) throw SlurmUnreachable(st.slurm_unreachable);
  std::vector<std::uint32_t> again;
  std::set<std::string> live_jobs;
  for (const TaskStatus& t : st.tasks) {
    if (t.resumable()) again.push_back(t.task);
    if (t.slurm && t.slurm->live()) live_jobs.insert(t.job.substr(0, t.job.find('_')));
  }
  if (again.empty()) {
    // Every task done or still running. A merge alone where fleet.db lacks a done task's result.
    const bool all_done =
        std::all_of(st.tasks.begin(), st.tasks.end(), [](const TaskStatus& t) { return t.done; });
    const bool merge_live = st.merge && st.merge->live();
    const bool merged_complete = st.merged && st.merged->value("complete", false);
    if (!all_done || merge_live || merged_complete) return std::nullopt;
  }
  if (!st.merge_job.empty() && st.merge && st.merge->live()) live_jobs.insert(st.merge_job);
  st.plan.submissions.push_back(submit_tasks(dir, slurm, again, {live_jobs.begin(), live_jobs.end()}));
  dir.save(st.plan);
  return st.plan.submissions.back();
}

std::vector<std::string> cancel(const FleetDir& dir, const Slurm& slurm) {
  const PlanLock lock(dir);
  const FleetStatus st = read_status(dir, slurm);
  // Unknown states are not ended ones: "nothing to cancel" would be a guess.
  if (!st.slurm_unreachable.empty()) throw SlurmUnreachable(st.slurm_unreachable);
  std::set<std::string> live;
  for (const TaskStatus& t : st.tasks) {
    if (t.slurm && t.slurm->live()) live.insert(t.job);
  }
  // Every merge job still waiting: one waits on tasks that will now never finish.
  std::vector<std::string> merges;
  for (const Submission& s : st.plan.submissions) merges.push_back(s.merge_job);
  for (const auto& [job, state] : slurm.states(merges)) {
    if (state.live()) live.insert(job);
  }
  std::vector<std::string> jobs(live.begin(), live.end());
  slurm.cancel(jobs);
  return jobs;
}

}  // namespace varex::fleet
