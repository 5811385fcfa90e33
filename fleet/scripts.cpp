#include "fleet/scripts.hpp"

#include "base/command.hpp"

namespace varex::fleet {

namespace {

std::string words(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

std::string header(const std::string& name, const std::string& output,
                   const std::vector<std::string>& options) {
  std::string out = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --output=" + output + "\n";
  for (const std::string& o : options) out += "#SBATCH " + o + "\n";
  return out;
}

}  // namespace

std::string task_script(const FleetDir& dir, const FleetPlan& plan) {
  std::string s =
      header("varex-" + plan.kind, dir.logs() + "/task-%a.%A.out", plan.placement.sbatch_options());
  s += "# A task of a varex fleet run (docs/FLEET.md), written by `varex fleet " + plan.kind + "`.\n";
  s += "# Without Slurm: SLURM_ARRAY_TASK_ID=K bash " + dir.task_script() + " (K from 0 to " +
       std::to_string(plan.tasks - 1) + ").\n";
  s += "set -eu\n";
  s += "task=\"${SLURM_ARRAY_TASK_ID:?set SLURM_ARRAY_TASK_ID to the task number}\"\n";
  s += "dir=" + shell_quote(dir.root) + "\n";
  if (!plan.op_path.empty()) s += "export VAREX_OP_PATH=" + shell_quote(plan.op_path) + "\n";
  s += "echo \"varex fleet task $task of " + std::to_string(plan.tasks) +
       " on $(hostname) at $(date -u +%FT%TZ)\" >&2\n";
  std::vector<std::string> argv{plan.varex, plan.kind};
  argv.insert(argv.end(), plan.args.begin(), plan.args.end());
  // The marker says the command succeeded, whatever Slurm remembers of the job: `fleet resume` submits again
  // every task without one. --wait: a task started again while the process it replaces still holds the
  // session (a node lost without notice) waits for that owner's lease to end instead of failing.
  if (plan.strategy_seed) {
    // Each task's own seed, listed rather than computed by the shell, whose arithmetic is signed.
    std::string seeds;
    for (std::uint32_t k = 0; k < plan.tasks; ++k)
      seeds += (k ? " " : "") + std::to_string(plan.task_strategy_seed(k));
    s += "seeds=(" + seeds + ")\n";
  }
  s += "done_marker=\"$dir/shards/task-$task.done\"\n";
  s += "rm -f \"$done_marker\"\n";
  s += "status=0\n";
  s += words(argv) + " --db \"$dir/shards/task-$task.db\"";
  if (plan.split == "shard") s += " --shard \"$task/" + std::to_string(plan.tasks) + "\"";
  if (plan.strategy_seed) s += " --strategy-seed \"${seeds[$task]}\"";
  s += " --wait --quiet || status=$?\n";
  s += "if [ \"$status\" -eq 0 ]; then date -u +%FT%TZ > \"$done_marker\"; fi\n";
  s += "exit \"$status\"\n";
  return s;
}

std::string merge_script(const FleetDir& dir, const FleetPlan& plan) {
  // The merge is light: one core, no GPU, whatever the tasks asked for.
  Placement light;
  light.partition = plan.placement.partition;
  light.account = plan.placement.account;
  light.qos = plan.placement.qos;
  std::string s = header("varex-merge", dir.logs() + "/merge.%j.out", light.sbatch_options());
  s += "# Merges the task databases of a varex fleet run into fleet.db (docs/FLEET.md).\n";
  s += "set -eu\n";
  if (!plan.op_path.empty()) s += "export VAREX_OP_PATH=" + shell_quote(plan.op_path) + "\n";
  s += "exec " + words({plan.varex, "fleet", "merge", "--dir", dir.root}) + "\n";
  return s;
}

}  // namespace varex::fleet
