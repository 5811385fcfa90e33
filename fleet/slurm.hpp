#pragma once
// Slurm through its own client commands (sbatch, scontrol, sacct, scancel, in PATH; SLURM_CONF as they read
// it): varex submits, watches and cancels jobs and keeps no scheduler of its own. Every refusal is a
// UsageError of one line that names what Slurm said.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.hpp"

namespace varex::fleet {

// The controller did not answer (as opposed to refusing a request): what a job's state is, Slurm could not
// say. A UsageError (exit status 2) like Slurm's other refusals; its own type so that `fleet status` can
// show what it knows without Slurm.
class SlurmUnreachable : public UsageError {
 public:
  using UsageError::UsageError;
};

// A job's state as Slurm names it (PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, …).
struct JobState {
  std::string state;
  std::string reason;     // why it waits or how it ended ("Dependency", "NonZeroExitCode"), when Slurm says
  std::string exit_code;  // "0:0": status and signal, once it ended
  // Still waiting or running: neither resubmitted nor merged over.
  bool live() const;
};

class Slurm {
 public:
  // UsageError when the client commands are missing or the controller does not answer.
  void check_reachable() const;
  // The names of the nodes `partition` holds (the default partition's for ""), expanded; UsageError for a
  // partition Slurm does not know.
  std::vector<std::string> partition_nodes(const std::string& partition) const;
  // sbatch --test-only: whether Slurm would take the script with these options, without submitting it;
  // UsageError with sbatch's reason when it would not.
  void check_submission(const std::string& script, const std::vector<std::string>& options) const;
  // sbatch --parsable: the new job's id.
  std::string submit(const std::string& script, const std::vector<std::string>& options) const;
  // The states of the jobs (job ids, or array tasks as "123_4"): from the controller (scontrol, which knows
  // running jobs and ended ones for a while), else from the accounting database (sacct) where the cluster
  // keeps one. A job neither knows is missing from the map. SlurmUnreachable when the controller does not
  // answer: a job missing then would be taken for one Slurm has forgotten.
  std::map<std::string, JobState> states(const std::vector<std::string>& jobs) const;
  // scancel of these jobs (ids or "123_4").
  void cancel(const std::vector<std::string>& jobs) const;
};

// "key=value key=value …" records of `scontrol show … -o`, one per line.
std::vector<std::map<std::string, std::string>> parse_scontrol_records(const std::string& text);

}  // namespace varex::fleet
