#pragma once
// The job scripts of a fleet run: plain bash with Slurm's options as #SBATCH lines, so that each can be read,
// submitted again by hand, or run without Slurm (SLURM_ARRAY_TASK_ID=K bash task.sh), as the tasks of the
// two-GPU evidence were.
#include <string>

#include "fleet/plan.hpp"

namespace varex::fleet {

// Task K (SLURM_ARRAY_TASK_ID) runs `varex sweep|tune` with the plan's flags into shards/task-K.db; a shard
// split adds --shard K/N. Resubmitted, it resumes its sessions from that database.
std::string task_script(const FleetDir& dir, const FleetPlan& plan);

// Merges every task's database into fleet.db (`varex fleet merge`).
std::string merge_script(const FleetDir& dir, const FleetPlan& plan);

}  // namespace varex::fleet
