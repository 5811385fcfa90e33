#include "fleet/plan.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.hpp"

namespace varex::fleet {

namespace fs = std::filesystem;

std::vector<std::string> Placement::sbatch_options() const {
  std::vector<std::string> out;
  if (!partition.empty()) out.push_back("--partition=" + partition);
  if (!gres.empty()) out.push_back("--gres=" + gres);
  if (!account.empty()) out.push_back("--account=" + account);
  if (!qos.empty()) out.push_back("--qos=" + qos);
  if (!time.empty()) out.push_back("--time=" + time);
  if (cpus_per_task > 0) out.push_back("--cpus-per-task=" + std::to_string(cpus_per_task));
  if (exclusive) out.push_back("--exclusive");
  out.insert(out.end(), options.begin(), options.end());
  return out;
}

nlohmann::json Placement::to_json() const {
  return {{"partition", partition}, {"gres", gres},
          {"account", account},     {"qos", qos},
          {"time", time},           {"cpus_per_task", cpus_per_task},
          {"exclusive", exclusive}, {"sbatch_options", options}};
}

Placement Placement::from_json(const nlohmann::json& j) {
  Placement p;
  p.partition = j.at("partition");
  p.gres = j.at("gres");
  p.account = j.at("account");
  p.qos = j.at("qos");
  p.time = j.at("time");
  p.cpus_per_task = j.at("cpus_per_task");
  p.exclusive = j.at("exclusive");
  p.options = j.at("sbatch_options").get<std::vector<std::string>>();
  return p;
}

std::string FleetPlan::task_job(std::uint32_t k) const {
  for (auto it = submissions.rbegin(); it != submissions.rend(); ++it) {
    for (const std::uint32_t t : it->tasks) {
      if (t == k) return it->array_job + "_" + std::to_string(k);
    }
  }
  return "";
}

nlohmann::json FleetPlan::to_json() const {
  nlohmann::json subs = nlohmann::json::array();
  for (const Submission& s : submissions) {
    subs.push_back({{"array_job", s.array_job},
                    {"tasks", s.tasks},
                    {"merge_job", s.merge_job},
                    {"submitted_at", s.submitted_at}});
  }
  return {{"format", 1},
          {"kind", kind},
          {"split", split},
          {"tasks", tasks},
          {"varex", varex},
          {"args", args},
          {"placement", placement.to_json()},
          {"strategy_seed", strategy_seed ? nlohmann::json(*strategy_seed) : nlohmann::json(nullptr)},
          {"op_path", op_path},
          {"submissions", subs}};
}

FleetPlan FleetPlan::from_json(const nlohmann::json& j) {
  FleetPlan p;
  p.kind = j.at("kind");
  p.split = j.at("split");
  p.tasks = j.at("tasks");
  p.varex = j.at("varex");
  p.args = j.at("args").get<std::vector<std::string>>();
  p.placement = Placement::from_json(j.at("placement"));
  // Plans written before the seeds were derived per task have none.
  if (j.contains("strategy_seed") && !j.at("strategy_seed").is_null())
    p.strategy_seed = j.at("strategy_seed").get<std::uint64_t>();
  p.op_path = j.value("op_path", "");  // plans written before user operators have none
  for (const auto& s : j.at("submissions")) {
    p.submissions.push_back({s.at("array_job"), s.at("tasks").get<std::vector<std::uint32_t>>(),
                             s.at("merge_job"), s.at("submitted_at")});
  }
  return p;
}

namespace {

UsageError not_a_fleet(const FleetDir& dir) {
  return UsageError("'" + dir.root + "' is not a fleet directory: it has no fleet.json");
}

}  // namespace

FleetDir::FleetDir(std::string dir) {
  if (dir.empty()) throw UsageError("--dir is empty: give the fleet directory");
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error);
  root = (error ? fs::path(dir) : absolute).lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
}

FleetPlan FleetDir::load() const {
  std::ifstream in(plan());
  if (!in) throw not_a_fleet(*this);
  try {
    return FleetPlan::from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("'" + plan() + "' is not a fleet plan varex can read: " + e.what());
  }
}

void FleetDir::save(const FleetPlan& plan_) const {
  write_atomically(plan(), plan_.to_json().dump(2) + "\n");
}

PlanLock::PlanLock(const FleetDir& dir, Run run) {
  if (run == Run::Existing && !fs::exists(dir.plan())) throw not_a_fleet(dir);
  fd_ = ::open(dir.lock().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw UsageError("cannot lock the fleet directory '" + dir.root + "': " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

PlanLock::~PlanLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw RuntimeError("cannot write '" + temporary + "'");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw RuntimeError("cannot replace '" + path + "': " + std::strerror(errno));
  }
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace varex::fleet
