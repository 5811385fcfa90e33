#include "results/report.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/embedded.hpp"
#include "harness/errors.hpp"

extern char** environ;

namespace varex::results {

namespace embedded {
extern const EmbeddedFile kFiles[];
extern const std::size_t kFileCount;
}  // namespace embedded

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

class CsvFile {
 public:
  CsvFile(const std::string& path, const std::vector<std::string>& header) : out_(path), path_(path) {
    if (!out_) throw UsageError("cannot write " + path);
    row(header);
  }
  void row(const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << csv_field(cells[i]);
    out_ << "\n";
  }
  const std::string& path() const { return path_; }

 private:
  std::ofstream out_;
  std::string path_;
};

std::string python() {
  if (const char* p = std::getenv("VAREX_PYTHON"); p && *p) return p;
  if (std::filesystem::exists("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

ReportFiles write_report(Store& store, const std::string& out_dir, const ExportFilter& filter,
                         const DefaultParams& defaults) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw UsageError("cannot create report directory '" + out_dir + "': " + ec.message());
  ReportFiles files;
  const auto sessions = store.sessions(std::nullopt, filter.op);

  // Every tunable name that occurs, for one column each.
  std::set<std::string> tunables;
  std::vector<std::pair<const RecordedSession*, std::vector<RecordedMeasurement>>> data;
  for (const RecordedSession& s : sessions) {
    if (!filter.admits(s.op, s.device_row)) continue;
    data.emplace_back(&s, store.session_measurements(s.id));
    for (const auto& r : data.back().second) {
      for (const auto& [name, _] : r.params) tunables.insert(name);
    }
  }
  {
    CsvFile f(out_dir + "/devices.csv", {"device", "host", "backend", "name", "vendor", "type", "arch",
                                         "compute_units", "global_mem", "cache_bytes", "probe_gbps"});
    std::set<std::string> seen;
    for (const auto& [s, _] : data) {
      if (!seen.insert(s->device.uid()).second) continue;
      f.row({s->device.id, s->device.host, to_string(s->device.backend), s->device.name, s->device.vendor,
             s->device.type, s->device.arch, std::to_string(s->device.compute_units),
             std::to_string(s->device.global_mem), std::to_string(s->device.cache_bytes),
             s->probe_gbps ? number(*s->probe_gbps) : ""});
    }
    files.csv.push_back(f.path());
  }
  {
    CsvFile f(out_dir + "/sessions.csv",
              {"session", "kind", "op", "device", "host", "device_name", "strategy", "budget", "seed",
               "status", "rows", "evaluations", "spent_s", "best_variant", "best_kernel_ms"});
    for (const auto& [s, _] : data) {
      f.row({std::to_string(s->id), s->kind, s->op, s->device.id, s->device.host, s->device.name, s->strategy,
             s->budget, s->seed ? std::to_string(*s->seed) : "", s->status,
             std::to_string(s->workload.rows()), s->outcome ? std::to_string(s->outcome->evaluations) : "",
             s->outcome ? number(s->outcome->spent_seconds) : "", s->outcome ? s->outcome->best_variant : "",
             s->outcome ? number(s->outcome->best_kernel_ms) : ""});
    }
    files.csv.push_back(f.path());
  }
  {
    std::vector<std::string> header{
        "session", "kind",       "strategy", "op",     "device",   "host",      "rows",          "order",
        "variant", "purpose",    "fidelity", "status", "verified", "kernel_ms", "ci_low",        "ci_high",
        "reps",    "compile_ms", "h2d_ms",   "d2h_ms", "cost_s",   "gbps",      "probe_fraction"};
    for (const auto& t : tunables) header.push_back("p_" + t);
    CsvFile f(out_dir + "/measurements.csv", header);
    for (const auto& [s, rows] : data) {
      std::size_t order = 0;
      for (const auto& r : rows) {
        const harness::Measurement& m = r.m;
        std::vector<std::string> cells{std::to_string(s->id),
                                       s->kind,
                                       s->strategy,
                                       s->op,
                                       s->device.id,
                                       s->device.host,
                                       std::to_string(s->workload.rows()),
                                       std::to_string(++order),
                                       r.variant_id,
                                       r.purpose,
                                       std::to_string(r.fidelity),
                                       harness::to_string(m.status),
                                       m.verified ? "1" : "0",
                                       m.samples_ms.empty() ? "" : number(m.kernel.median),
                                       m.samples_ms.empty() ? "" : number(m.kernel.ci_low),
                                       m.samples_ms.empty() ? "" : number(m.kernel.ci_high),
                                       std::to_string(m.samples_ms.size()),
                                       number(m.compile_ms),
                                       number(m.h2d_ms),
                                       number(m.d2h_ms),
                                       number(m.cost_s()),
                                       m.ok() ? number(m.gbps) : "",
                                       m.ok() ? number(m.probe_fraction) : ""};
        for (const auto& t : tunables) {
          const auto it = r.params.find(t);
          cells.push_back(it == r.params.end() ? "" : variants::to_string(it->second));
        }
        f.row(cells);
      }
    }
    files.csv.push_back(f.path());
  }
  {
    std::vector<std::string> header{"device",    "host", "device_name",    "op",     "rows",   "variant",
                                    "kernel_ms", "gbps", "probe_fraction", "h2d_ms", "d2h_ms", "method"};
    for (const auto& t : tunables) header.push_back("p_" + t);
    CsvFile f(out_dir + "/best.csv", header);
    for (const BestRow& b : store.best(filter.best_query())) {
      std::vector<std::string> cells{b.device.id,
                                     b.device.host,
                                     b.device.name,
                                     b.op,
                                     std::to_string(b.workload.rows()),
                                     b.variant_id,
                                     number(b.kernel_ms),
                                     number(b.gbps),
                                     number(b.probe_fraction),
                                     number(b.h2d_ms),
                                     number(b.d2h_ms),
                                     b.method};
      for (const auto& t : tunables) {
        const auto it = b.params.find(t);
        cells.push_back(it == b.params.end() ? "" : variants::to_string(it->second));
      }
      f.row(cells);
    }
    files.csv.push_back(f.path());
  }
  {
    CsvFile f(out_dir + "/defaults.csv", {"op", "tunable", "value"});
    for (const auto& [op, params] : defaults) {
      for (const auto& [t, v] : params) f.row({op, t, v});
    }
    files.csv.push_back(f.path());
  }

  // The plots: the embedded script, run on the CSV files.
  const std::string script = out_dir + "/.report.py";
  {
    std::ofstream out(script);
    for (std::size_t i = 0; i < embedded::kFileCount; ++i) {
      if (std::string(embedded::kFiles[i].name) == "report.py") out << embedded::kFiles[i].text;
    }
  }
  const std::string interpreter = python();
  const std::string log = out_dir + "/report.log";
  std::vector<std::string> args{interpreter, script, out_dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, interpreter.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 1;
  if (rc == 0) waitpid(pid, &status, 0);
  std::filesystem::remove(script);
  if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    files.html = out_dir + "/index.html";
  } else {
    files.plot_problem = "the report script failed (" + interpreter + ", see " + log +
                         "); install matplotlib (scripts/setup.sh does) or set VAREX_PYTHON";
  }
  return files;
}

}  // namespace varex::results
