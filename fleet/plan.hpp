#pragma once
// A fleet run's directory and its plan (docs/FLEET.md): what each task runs, where Slurm places it, and
// which Slurm jobs ran which tasks. The directory must be one the submitting host and every node see:
//
//   fleet.json          the plan (this file's FleetPlan), rewritten atomically under fleet.lock
//   task.sh, merge.sh   the job scripts (fleet/scripts.hpp): a task is `task.sh` with SLURM_ARRAY_TASK_ID set
//   shards/task-K.db    task K's database (its sessions, resumed in place when the task runs again)
//   logs/               Slurm's output of every task and merge job
//   fleet.db            the merge of every task's database, replaced whole by each merge job
//   merged.json         what the last merge found (fleet/merge.hpp)
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace varex::fleet {

// Where Slurm runs the tasks: sbatch's own options.
struct Placement {
  std::string partition;
  std::string gres;  // e.g. gpu:h100:1
  std::string account;
  std::string qos;
  std::string time;  // the time limit of each task
  std::uint32_t cpus_per_task = 0;
  bool exclusive = false;            // each task takes a whole node
  std::vector<std::string> options;  // more sbatch options as given (--constraint=h100 …)

  // The #SBATCH options, as sbatch takes them on its command line.
  std::vector<std::string> sbatch_options() const;
  nlohmann::json to_json() const;
  static Placement from_json(const nlohmann::json& j);
};

// One submission: a job array of some of the tasks and the merge job after it.
struct Submission {
  std::string array_job;             // Slurm's id of the job array
  std::vector<std::uint32_t> tasks;  // the array's task ids (the tasks it runs)
  std::string merge_job;
  std::string submitted_at;
};

struct FleetPlan {
  std::string kind;   // sweep or tune
  std::string split;  // "shard": each task one shard of the space; "node": each task a whole node's devices
  std::uint32_t tasks = 1;
  std::string varex;              // the executable every task and the merge run
  std::vector<std::string> args;  // the sweep's or tune's flags, as given (no --db, --shard, --fresh)
  Placement placement;
  // A tune's base --strategy-seed (taken out of `args`): task k tunes with task_strategy_seed(k), so that
  // tasks on like nodes search differently instead of repeating one another's evaluations.
  std::optional<std::uint64_t> strategy_seed;
  // The user operators' directories the command was given (VAREX_OP_PATH, --op-dir made absolute): each task
  // and the merge load them too. Empty: none.
  std::string op_path;
  std::vector<Submission> submissions;  // oldest first

  // The base seed plus k (wrapping around, as seeds are any 64-bit value): task 0 tunes as a plain tune with
  // the base seed would.
  std::uint64_t task_strategy_seed(std::uint32_t k) const { return strategy_seed.value_or(0) + k; }

  // The job that ran task `k` last, as Slurm names it ("123_4"), or "" if never submitted.
  std::string task_job(std::uint32_t k) const;

  nlohmann::json to_json() const;
  static FleetPlan from_json(const nlohmann::json& j);
};

// The paths of a fleet directory.
struct FleetDir {
  std::string root;  // absolute
  explicit FleetDir(std::string dir);
  std::string plan() const { return root + "/fleet.json"; }
  std::string lock() const { return root + "/fleet.lock"; }
  std::string task_script() const { return root + "/task.sh"; }
  std::string merge_script() const { return root + "/merge.sh"; }
  std::string shards() const { return root + "/shards"; }
  std::string shard_db(std::uint32_t k) const { return shards() + "/task-" + std::to_string(k) + ".db"; }
  std::string logs() const { return root + "/logs"; }
  std::string merged_db() const { return root + "/fleet.db"; }
  std::string merge_report() const { return root + "/merged.json"; }

  // The plan, or UsageError naming the directory when it holds none (not a fleet directory).
  FleetPlan load() const;
  // Writes the plan atomically (a temporary file renamed over the old).
  void save(const FleetPlan& plan) const;
};

// An exclusive lock on a fleet directory for the time a command changes its plan (flock on fleet.lock).
class PlanLock {
 public:
  // Whether the directory must hold a plan already. A command on an existing run refuses a directory without
  // one (UsageError) before it creates fleet.lock, so that no lock file is left in a directory that is not a
  // fleet's (a lock file would make `fleet sweep` refuse it as not empty).
  enum class Run { Existing, New };
  explicit PlanLock(const FleetDir& dir, Run run = Run::Existing);
  ~PlanLock();
  PlanLock(const PlanLock&) = delete;
  PlanLock& operator=(const PlanLock&) = delete;

 private:
  int fd_ = -1;
};

// Writes `text` to `path` through a temporary file in the same directory renamed over it, so that a reader
// sees the old file or the new, never half of one. RuntimeError when it cannot.
void write_atomically(const std::string& path, const std::string& text);

std::string utc_now();

}  // namespace varex::fleet
