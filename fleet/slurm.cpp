#include "fleet/slurm.hpp"

#include <algorithm>
#include <set>

#include "base/command.hpp"
#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::fleet {

namespace {

// A client command that could not run at all: not installed, or Slurm's configuration missing.
CommandResult slurm(const std::vector<std::string>& argv) {
  CommandResult r = run_command(argv);
  if (r.status == 127)
    throw UsageError("Slurm is not installed here: " + argv[0] +
                     " was not found (scripts/slurm_local.sh start sets up a one-node Slurm)");
  return r;
}

// Slurm's messages start with the command's name and "error:"; the reason is what follows.
std::string reason(const CommandResult& r) {
  std::string line = r.first_line();
  for (const char* prefix : {"sbatch: error: ", "scontrol: error: ", "sacct: error: ", "scancel: error: ",
                             "sinfo: error: ", "error: "}) {
    if (line.rfind(prefix, 0) == 0) line = line.substr(std::string(prefix).size());
  }
  return line;
}

// What says that the controller did not answer, as opposed to refusing a request.
bool unreachable(const CommandResult& r) {
  const std::string all = r.err + r.out;
  for (const char* sign : {"Unable to contact slurm controller", "Could not establish a configuration source",
                           "Connection refused", "Zero Bytes were transmitted", "Unable to establish"}) {
    if (all.find(sign) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool JobState::live() const {
  static const std::set<std::string> live_states{"PENDING",   "RUNNING",      "CONFIGURING", "COMPLETING",
                                                 "SUSPENDED", "REQUEUED",     "RESIZING",    "SIGNALING",
                                                 "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "STOPPED"};
  return live_states.count(state) > 0;
}

std::vector<std::map<std::string, std::string>> parse_scontrol_records(const std::string& text) {
  std::vector<std::map<std::string, std::string>> out;
  for (const std::string& line : split(text, '\n')) {
    if (trim(line).empty()) continue;
    std::map<std::string, std::string> record;
    // Values hold no spaces but for a few free-text keys we do not read (Command=, WorkDir= with spaces
    // would be cut short; only the id and state keys are used).
    for (const std::string& word : split(line, ' ')) {
      const auto eq = word.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      record.emplace(word.substr(0, eq), word.substr(eq + 1));
    }
    out.push_back(std::move(record));
  }
  return out;
}

void Slurm::check_reachable() const {
  const CommandResult r = slurm({"scontrol", "ping"});
  if (!r.ok() || r.out.find("is UP") == std::string::npos)
    throw SlurmUnreachable("Slurm is not reachable: " + (r.ok() ? std::string(trim(r.out)) : reason(r)));
}

std::vector<std::string> Slurm::partition_nodes(const std::string& partition) const {
  const CommandResult r = slurm({"scontrol", "show", "partition", "-o"});
  if (!r.ok()) throw SlurmUnreachable("Slurm is not reachable: " + reason(r));
  std::string nodes;
  bool found = false;
  for (const auto& record : parse_scontrol_records(r.out)) {
    const auto name = record.find("PartitionName");
    if (name == record.end()) continue;
    const bool is_default = record.count("Default") && record.at("Default") == "YES";
    if (partition.empty() ? is_default : name->second == partition) {
      found = true;
      nodes = record.count("Nodes") ? record.at("Nodes") : "";
      break;
    }
  }
  if (!found) {
    throw UsageError(partition.empty() ? std::string("Slurm has no default partition: give --partition")
                                       : "Slurm has no partition '" + partition + "'");
  }
  if (nodes.empty() || nodes == "(null)") return {};
  const CommandResult names = slurm({"scontrol", "show", "hostnames", nodes});
  if (!names.ok()) throw UsageError("Slurm cannot expand the node list '" + nodes + "': " + reason(names));
  std::vector<std::string> out;
  for (const std::string& line : split(names.out, '\n')) {
    if (!trim(line).empty()) out.emplace_back(trim(line));
  }
  return out;
}

void Slurm::check_submission(const std::string& script, const std::vector<std::string>& options) const {
  std::vector<std::string> argv{"sbatch", "--test-only"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  const CommandResult r = slurm(argv);
  // --test-only answers on stderr, "Job … to start at …", with status 0 when Slurm would take the job.
  if (!r.ok()) {
    if (unreachable(r)) throw SlurmUnreachable("Slurm is not reachable: " + reason(r));
    throw UsageError("Slurm refuses the tasks' options: " + reason(r));
  }
}

std::string Slurm::submit(const std::string& script, const std::vector<std::string>& options) const {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  const CommandResult r = slurm(argv);
  if (!r.ok()) throw RuntimeError("sbatch failed: " + reason(r));
  // "123" or "123;cluster".
  const std::string id(trim(split(r.out, ';').front()));
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw RuntimeError("sbatch answered '" + std::string(trim(r.out)) + "', not a job id");
  return id;
}

std::map<std::string, JobState> Slurm::states(const std::vector<std::string>& jobs) const {
  std::map<std::string, JobState> out;
  if (jobs.empty()) return out;
  // The controller, job by job: an array's id shows every task of it, one record each.
  std::set<std::string> asked;
  for (const std::string& job : jobs) asked.insert(split(job, '_').front());
  for (const std::string& id : asked) {
    const CommandResult r = slurm({"scontrol", "show", "job", "-o", id});
    if (!r.ok()) {
      if (unreachable(r)) throw SlurmUnreachable("Slurm is not reachable: " + reason(r));
      continue;  // "Invalid job id specified": ended too long ago for the controller
    }
    for (const auto& record : parse_scontrol_records(r.out)) {
      auto get = [&](const char* key) {
        const auto it = record.find(key);
        return it == record.end() ? std::string() : it->second;
      };
      const std::string array = get("ArrayJobId"), task = get("ArrayTaskId");
      // A pending array's remaining tasks are one record with ArrayTaskId=2-3 (or 2,4).
      std::vector<std::string> names;
      if (!array.empty() && !task.empty()) {
        for (const std::string& part : split(task, ',')) {
          const auto dash = part.find('-');
          if (dash == std::string::npos) {
            names.push_back(array + "_" + part);
            continue;
          }
          const std::string range = part.substr(0, part.find('%'));
          const std::int64_t lo = parse_int(range.substr(0, dash), "an array task id");
          const std::int64_t hi = parse_int(range.substr(dash + 1), "an array task id");
          for (std::int64_t t = lo; t <= hi; ++t) names.push_back(array + "_" + std::to_string(t));
        }
      } else {
        names.push_back(get("JobId"));
      }
      for (const std::string& name : names)
        out[name] = {get("JobState"), get("Reason") == "None" ? "" : get("Reason"), get("ExitCode")};
    }
  }
  // What the controller has forgotten, from the accounting database where there is one.
  std::vector<std::string> missing;
  for (const std::string& job : jobs) {
    if (!out.count(job)) missing.push_back(job);
  }
  if (missing.empty()) return out;
  const CommandResult r =
      slurm({"sacct", "-n", "-P", "-X", "-o", "JobID,State,ExitCode", "-j", join(missing, ",")});
  if (!r.ok()) return out;  // no accounting storage: those jobs stay unknown
  for (const std::string& line : split(r.out, '\n')) {
    const auto fields = split(line, '|');
    if (fields.size() < 3) continue;
    // "CANCELLED by 0" is CANCELLED.
    out[fields[0]] = {split(fields[1], ' ').front(), "", fields[2]};
  }
  return out;
}

void Slurm::cancel(const std::vector<std::string>& jobs) const {
  if (jobs.empty()) return;
  std::vector<std::string> argv{"scancel"};
  argv.insert(argv.end(), jobs.begin(), jobs.end());
  const CommandResult r = slurm(argv);
  if (!r.ok() && unreachable(r)) throw SlurmUnreachable("Slurm is not reachable: " + reason(r));
}

}  // namespace varex::fleet
