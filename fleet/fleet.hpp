#pragma once
// Submitting, resuming and cancelling a fleet run (docs/FLEET.md). The sweep's or tune's own flags are
// checked by the command line before a plan gets here; these check the directory and Slurm's side, and
// submit nothing unless every check passed.
#include <string>
#include <vector>

#include "fleet/plan.hpp"
#include "fleet/slurm.hpp"
#include "fleet/status.hpp"

namespace varex::fleet {

// Checks that Slurm answers, that the directory is new (or empty), writable and seen by the partition's
// nodes, and that Slurm takes the tasks' options (sbatch --test-only); then writes the plan and the scripts
// and submits the task array and the merge job after it (--dependency=afterany). UsageError, with nothing
// submitted and nothing left in the directory, when a check fails. Without `slurm` it writes the plan and
// scripts only (to run by hand, or through another scheduler) and returns nullopt.
std::optional<Submission> submit(const FleetDir& dir, FleetPlan plan, const Slurm* slurm, bool assume_shared);

// Submits again the tasks that are neither done nor waiting or running (failed, cancelled, timed out, lost
// with their node, never started), and a merge after them and after every task still live. Where every task
// is done but fleet.db is missing or older than a task's result, a merge alone. Returns nullopt when there
// is nothing to submit.
std::optional<Submission> resume(const FleetDir& dir, const Slurm& slurm);

// scancel of every job of the run that is still waiting or running; returns their ids.
std::vector<std::string> cancel(const FleetDir& dir, const Slurm& slurm);

}  // namespace varex::fleet
