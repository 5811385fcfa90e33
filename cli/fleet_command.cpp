#include "cli/fleet_command.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/options.hpp"
#include "fleet/fleet.hpp"
#include "fleet/merge.hpp"
#include "fleet/placement_check.hpp"
#include "variants/shard.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

struct SubmitFlags {
  std::string dir;
  std::optional<std::uint32_t> shards;
  std::optional<std::uint32_t> nodes;
  fleet::Placement placement;
  bool exclusive = false;
  std::string varex;
  bool assume_shared = false;
  bool no_submit = false;
};

// The sweep's or tune's flags a fleet sets itself for each task.
void refuse_fleet_owned(const std::vector<std::string>& args) {
  static const std::vector<std::pair<std::string, std::string>> owned{
      {"--db", "each task writes its own database under the fleet directory (shards/task-K.db)"},
      {"--shard", "the fleet gives each task its shard: use --shards N"},
      {"--fresh", "a task run again must resume its sessions, not start new ones"},
      {"--check", "the fleet checks the flags itself"}};
  for (const std::string& a : args) {
    for (const auto& [flag, why] : owned) {
      if (a == flag || a.rfind(flag + "=", 0) == 0)
        throw UsageError(flag + " is not for a fleet run: " + why);
    }
  }
}

// Takes `flag`'s value ("--flag V" or "--flag=V") out of `args`: the last one given, or nullopt.
std::optional<std::string> take_value(std::vector<std::string>& args, const std::string& flag) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < args.size();) {
    if (args[i] == flag && i + 1 < args.size()) {
      value = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i + 2));
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return value;
}

// Node tasks are meant to take a node each; more of them than the partition has nodes run on one node one
// after the other (on like devices, a tune's with their own seeds: fleet/plan.hpp), which is worth saying.
void warn_of_shared_nodes(const fleet::Slurm& slurm, const fleet::FleetPlan& plan) {
  const std::size_t nodes = slurm.partition_nodes(plan.placement.partition).size();
  if (nodes == 0 || nodes >= plan.tasks) return;
  const std::string partition = plan.placement.partition.empty()
                                    ? "the default partition"
                                    : "partition '" + plan.placement.partition + "'";
  std::cerr << "varex: " << plan.tasks << " node tasks on " << partition << " of " << nodes << " node"
            << (nodes == 1 ? "" : "s") << ": tasks will share nodes, one after another\n";
}

void add_submit(CLI::App* fleet_cmd, SessionCheck check_session, const std::string& kind) {
  const bool sweep = kind == "sweep";
  auto* cmd = fleet_cmd->add_subcommand(
      kind,
      sweep ? "Submit a sweep as Slurm tasks: shards of the space (--shards N) or whole nodes (--nodes N); "
              "then the merge of their databases. The sweep's own flags follow (varex help sweep)"
            : "Submit a tune of every device of N nodes as Slurm tasks (--nodes N), then the merge of their "
              "databases. The tune's own flags follow (varex help tune)");
  cmd->allow_extras();
  auto f = std::make_shared<SubmitFlags>();
  cmd->add_option(
         "--dir", f->dir,
         "Fleet directory, new or empty, on a file system this host and the nodes share: the plan, job "
         "scripts, each task's database, logs and the merged fleet.db")
      ->required();
  auto* shards = cmd->add_option(
      "--shards", f->shards,
      "Split the space into N shards of equal variant counts, one task each (sweep --shard K/N)");
  if (sweep) {
    shards->check(CLI::Range(1u, variants::kMaxShards));
  } else {
    // Known to a tune too, but hidden, so that the callback says why it is refused instead of CLI11's
    // "unexpected argument".
    shards->group("");
  }
  cmd->add_option("--nodes", f->nodes,
                  "N tasks, each on a whole node (--exclusive), each running the command on its devices")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--partition", f->placement.partition, "Slurm partition (default: the cluster's default)");
  cmd->add_option("--gres", f->placement.gres, "Generic resources of each task, e.g. gpu:1 or gpu:h100:1");
  cmd->add_option("--account", f->placement.account, "Slurm account to charge");
  cmd->add_option("--qos", f->placement.qos, "Slurm quality of service");
  cmd->add_option("--time", f->placement.time,
                  "Time limit of each task, as sbatch takes it (90, 2:00:00, 1-0)");
  // The placement keeps 0 for "not given" (Slurm's default): a 0 given would pass unseen.
  cmd->add_option("--cpus-per-task", f->placement.cpus_per_task, "Cores of each task")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_flag(
      "--exclusive", f->exclusive,
      "Each task takes a whole node (always for --nodes; for --shards the default without --gres, where "
      "the tasks measure the node's CPUs)");
  cmd->add_option(
      "--sbatch-option", f->placement.options,
      "One more sbatch option for the tasks, e.g. --sbatch-option=--constraint=h100 (repeatable)");
  cmd->add_option("--varex", f->varex,
                  "The varex executable the tasks run, at the same path on every node (default: this one)");
  cmd->add_flag(
      "--no-submit", f->no_submit,
      "Write the plan and job scripts only, without Slurm: run each task by hand as SLURM_ARRAY_TASK_ID=K "
      "bash DIR/task.sh, then varex fleet merge --dir DIR");
  cmd->add_flag("--assume-shared", f->assume_shared,
                "Take the directory as shared with the nodes though its file system is this host's own type");
  cmd->callback([cmd, f, check_session, kind, sweep] {
    const std::vector<std::string> args = cmd->remaining();
    refuse_fleet_owned(args);
    fleet::FleetPlan plan;
    plan.kind = kind;
    if (!sweep && f->shards)
      throw UsageError(
          "--shards is for a sweep: a tune's strategy searches the whole space; split it by --nodes");
    if (f->shards && f->nodes) throw UsageError("--shards and --nodes exclude each other: pick one split");
    if (sweep && !f->shards && !f->nodes)
      throw UsageError("a fleet sweep needs --shards N (shards of the space) or --nodes N (whole nodes)");
    plan.split = f->shards ? "shard" : "node";
    plan.tasks = f->shards ? *f->shards : f->nodes.value_or(1);
    plan.args = args;
    fleet::check_placement(f->placement);
    plan.placement = f->placement;
    // A shard task placed by neither GPUs nor cores measures the node's CPUs: it takes the node whole.
    plan.placement.exclusive = f->exclusive || plan.split == "node" ||
                               (f->placement.gres.empty() && f->placement.cpus_per_task == 0);
    plan.varex = f->varex.empty() ? self_executable() : f->varex;
    // The user operators this command loaded, for the nodes: each directory absolute.
    if (const char* op_path = std::getenv("VAREX_OP_PATH")) {
      std::vector<std::string> dirs;
      for (const std::string& d : split(op_path, ':')) {
        if (!d.empty()) dirs.push_back(std::filesystem::absolute(d).lexically_normal().string());
      }
      plan.op_path = join(dirs, ":");
    }
    // The command each task runs, checked here as the sweep or tune itself would check it.
    check_session(kind, args);
    if (!sweep) {
      // Node tasks of one tune with one seed would repeat one another's evaluations wherever their nodes are
      // alike: the plan keeps the base seed and gives each task its own (fleet/plan.hpp).
      const auto given = take_value(plan.args, "--strategy-seed");
      // Base 0, as CLI11 read it for the check above (0x10 is 16).
      plan.strategy_seed = given ? std::stoull(*given, nullptr, 0) : kDefaultStrategySeed;
    }
    const fleet::FleetDir dir(f->dir);
    const fleet::Slurm slurm;
    const auto s = fleet::submit(dir, plan, f->no_submit ? nullptr : &slurm, f->assume_shared);
    if (!s) {
      std::cout << "wrote the plan and job scripts of " << plan.tasks << " task"
                << (plan.tasks == 1 ? "" : "s") << " to " << dir.root << "; submitted nothing\n"
                << "  run task K: SLURM_ARRAY_TASK_ID=K bash " << dir.task_script() << "   (K = 0 ... "
                << plan.tasks - 1 << ")\n"
                << "  then:       varex fleet merge --dir " << dir.root << "\n";
      return;
    }
    if (plan.split == "node") warn_of_shared_nodes(slurm, plan);
    std::cout << "submitted " << plan.tasks << " " << (plan.split == "shard" ? "shard" : "node") << " task"
              << (plan.tasks == 1 ? "" : "s") << " of a " << kind << " as Slurm job array " << s->array_job
              << ", and their merge as job " << s->merge_job << " (afterany)\n"
              << "  directory: " << dir.root << "\n"
              << "  watch:     varex fleet status --dir " << dir.root << "\n"
              << "  result:    " << dir.merged_db() << " once the merge has run\n";
  });
}

std::string progress_text(const fleet::TaskProgress& p) {
  if (!p.exists) return "-";
  if (p.sessions == 0) return "starting";
  std::string text = std::to_string(p.measured);
  if (p.variants > 0) text += "/" + std::to_string(p.variants);
  return text;
}

std::string sessions_text(const fleet::TaskProgress& p) {
  if (p.sessions == 0) return "-";
  if (p.finished == p.sessions) return std::to_string(p.sessions) + " finished";
  std::map<std::string, int> by_status;
  for (const std::string& s : p.statuses) ++by_status[s];
  std::vector<std::string> parts;
  for (const auto& [status, n] : by_status) parts.push_back(std::to_string(n) + " " + status);
  return join(parts, ", ");
}

std::string state_text(const std::optional<fleet::JobState>& s, bool submitted, bool slurm_unreachable) {
  if (!submitted) return "-";
  if (slurm_unreachable) return "(unknown)";
  if (!s) return "(forgotten)";
  return s->reason.empty() ? s->state : s->state + " (" + s->reason + ")";
}

void print_status(const fleet::FleetDir& dir, const fleet::FleetStatus& st) {
  std::cout << "fleet " << dir.root << ": " << st.plan.kind << ", " << st.plan.tasks << " "
            << (st.plan.split == "shard" ? "shards" : "node tasks") << ", " << st.plan.submissions.size()
            << " submission" << (st.plan.submissions.size() == 1 ? "" : "s") << "\n";
  std::vector<std::vector<std::string>> rows;
  std::size_t done = 0, resumable = 0;
  for (const fleet::TaskStatus& t : st.tasks) {
    done += t.done;
    resumable += t.resumable();
    rows.push_back({std::to_string(t.task), t.job.empty() ? "-" : t.job,
                    state_text(t.slurm, !t.job.empty(), t.slurm_unreachable), t.done ? "yes" : "no",
                    sessions_text(t.progress), progress_text(t.progress)});
  }
  rows.push_back({"merge", st.merge_job.empty() ? "-" : st.merge_job,
                  state_text(st.merge, !st.merge_job.empty(), !st.slurm_unreachable.empty()), "", "", ""});
  print_table({"task", "job", "slurm", "done", "sessions", "variants measured"}, rows);
  if (!st.slurm_unreachable.empty())
    std::cout << st.slurm_unreachable << ": the jobs' states are unknown, not forgotten\n";
  std::cout << done << " of " << st.tasks.size() << " tasks done";
  if (resumable > 0)
    std::cout << "; " << resumable << " to resume (varex fleet resume --dir " << dir.root << ")";
  std::cout << "\n";
  if (st.merged) {
    const json& m = *st.merged;
    std::cout << "merged " << m.value("merged_at", "") << ": " << m.value("database", "") << " holds "
              << m.value("sessions", 0) << " sessions, " << m.value("measurements", 0) << " measurements"
              << (m.value("complete", false) ? " (every task done)" : " (not every task was done then)")
              << "\n";
  } else {
    std::cout << "not merged yet\n";
  }
}

void add_dir_option(CLI::App* cmd, std::string& dir) {
  cmd->add_option("--dir", dir, "Fleet directory (as given to varex fleet sweep|tune)")->required();
}

}  // namespace

void add_fleet(CLI::App& app, SessionCheck check_session) {
  auto* fleet_cmd = app.add_subcommand(
      "fleet",
      "Sweeps and tunes spread over a Slurm cluster: submit, watch, resume, cancel, merge (docs/FLEET.md)");
  fleet_cmd->require_subcommand(1);
  add_submit(fleet_cmd, check_session, "sweep");
  add_submit(fleet_cmd, check_session, "tune");

  auto dir = std::make_shared<std::string>();
  auto json_out = std::make_shared<bool>(false);
  auto* status = fleet_cmd->add_subcommand("status", "Each task's Slurm state and progress, and the merge");
  add_dir_option(status, *dir);
  status->add_flag("--json", *json_out, "Print JSON");
  status->callback([dir, json_out] {
    const fleet::FleetDir d(*dir);
    const fleet::FleetStatus st = fleet::read_status(d, fleet::Slurm{});
    if (*json_out) {
      std::cout << st.to_json().dump(2) << "\n";
    } else {
      print_status(d, st);
    }
  });

  auto* resume = fleet_cmd->add_subcommand(
      "resume",
      "Submit again the tasks that failed, were cancelled or lost (they resume their sessions), and a merge");
  add_dir_option(resume, *dir);
  resume->callback([dir] {
    const fleet::FleetDir d(*dir);
    const auto s = fleet::resume(d, fleet::Slurm{});
    if (!s) {
      std::cout << "nothing to resume: every task is done or still waiting or running, and the merge is "
                   "done or on its way (varex fleet status --dir "
                << d.root << ")\n";
      return;
    }
    std::vector<std::string> tasks;
    for (const std::uint32_t t : s->tasks) tasks.push_back(std::to_string(t));
    if (tasks.empty()) {
      std::cout << "every task is done: submitted their merge as job " << s->merge_job << "\n";
    } else {
      std::cout << "submitted task" << (tasks.size() == 1 ? " " : "s ") << join(tasks, ", ")
                << " again as Slurm job array " << s->array_job << ", and their merge as job " << s->merge_job
                << " (afterany)\n";
    }
  });

  auto* cancel = fleet_cmd->add_subcommand("cancel", "scancel every job of the run still waiting or running");
  add_dir_option(cancel, *dir);
  cancel->callback([dir] {
    const fleet::FleetDir d(*dir);
    const auto jobs = fleet::cancel(d, fleet::Slurm{});
    if (jobs.empty()) {
      std::cout << "nothing to cancel: no job of the run is waiting or running\n";
    } else {
      std::cout << "cancelled " << join(jobs, ", ")
                << "; their sessions are kept, to go on with varex fleet resume --dir " << d.root << "\n";
    }
  });

  auto* merge = fleet_cmd->add_subcommand(
      "merge", "Merge every task's database into the fleet directory's fleet.db (the merge job runs this)");
  add_dir_option(merge, *dir);
  merge->add_flag("--json", *json_out, "Print JSON");
  merge->callback([dir, json_out] {
    const fleet::FleetDir d(*dir);
    const json report = fleet::merge_fleet(d);
    if (*json_out) std::cout << report.dump(2) << "\n";
    // A merge job that found nothing fails, so that `fleet status` shows it did not produce fleet.db.
    if (report["merged_tasks"].empty())
      throw RuntimeError("merged nothing: none of the " + std::to_string(report["tasks"].get<int>()) +
                         " tasks has a database yet (" + d.shards() + "/task-K.db), so " + d.merged_db() +
                         " was not written");
    if (*json_out) return;
    std::cout << "merged " << report["merged_tasks"].size() << " of " << report["tasks"].get<int>()
              << " task databases into " << report["database"].get<std::string>() << ": "
              << report["sessions"].get<std::int64_t>() << " sessions, "
              << report["measurements"].get<std::int64_t>() << " measurements\n";
    if (!report["complete"].get<bool>()) {
      std::vector<std::string> missing;
      for (const auto& t : report["not_done"]) missing.push_back(std::to_string(t.get<int>()));
      std::cout << "not done: task" << (missing.size() == 1 ? " " : "s ") << join(missing, ", ")
                << " (varex fleet resume --dir " << *dir << " runs them and merges again)\n";
    }
  });
}

}  // namespace varex::cli
