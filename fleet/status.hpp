#pragma once
// Where a fleet run stands: each task's Slurm state and its progress read off its own database.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fleet/plan.hpp"
#include "fleet/slurm.hpp"

namespace varex::fleet {

// What a task's database holds: its sweep and tune sessions and how far they got.
struct TaskProgress {
  bool exists = false;
  std::int64_t sessions = 0;
  std::int64_t finished = 0;          // sessions that ended as finished
  std::int64_t measured = 0;          // distinct variants measured (search measurements) in its sessions
  std::int64_t variants = 0;          // the variants its sessions' spaces hold (0 where unknown)
  std::vector<std::string> statuses;  // each session's
};
// Reads a task database without changing it; a missing file is progress nothing.
TaskProgress read_progress(const std::string& db);

struct TaskStatus {
  std::uint32_t task = 0;
  std::string job;                // "123_4", or "" if never submitted
  std::optional<JobState> slurm;  // nullopt where Slurm has forgotten the job (or never had one)
  bool done = false;              // the task's command ended successfully (shards/task-K.done)
  TaskProgress progress;
  bool slurm_unreachable = false;  // Slurm could not be asked: `slurm` is unknown, not forgotten
  // Neither done nor waiting or running: what `fleet resume` submits again.
  bool resumable() const { return !done && !slurm_unreachable && !(slurm && slurm->live()); }
};

struct FleetStatus {
  FleetPlan plan;
  std::vector<TaskStatus> tasks;
  std::string merge_job;
  std::optional<JobState> merge;
  std::optional<nlohmann::json> merged;  // merged.json, once a merge wrote it
  // Why Slurm could not be asked (its controller down), or "" when it answered. Every job's state is then
  // unknown, not forgotten: no task is resumable.
  std::string slurm_unreachable;
  nlohmann::json to_json() const;
};

// Each task's state and progress. Where the controller does not answer, the states are left unknown and
// `slurm_unreachable` says why; a command that acts on the states (resume, cancel) must refuse then.
FleetStatus read_status(const FleetDir& dir, const Slurm& slurm);

// The marker a task's script leaves when its command succeeded.
std::string done_marker(const FleetDir& dir, std::uint32_t task);

}  // namespace varex::fleet
