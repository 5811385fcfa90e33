#include "results/report.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "base/embedded.hpp"
#include "base/errors.hpp"
#include "results/sqlite.hpp"

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

// Runs `args` (the first found on PATH), its stdout and stderr into `log`, and returns its exit status:
// nullopt where it could not be started or did not exit.
std::optional<int> run_logged(std::vector<std::string> args, const std::string& log) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return std::nullopt;
  return WEXITSTATUS(status);
}

// The sessions the filter admits, with their measurements and workload classes.
struct ReportData {
  std::vector<RecordedSession> sessions;
  std::vector<std::vector<RecordedMeasurement>> measurements;  // per session
  std::vector<std::string> workload;                           // per session: its class in words
  std::set<std::string> tunables;                              // every tunable name that occurs
};

ReportData read_data(Store& store, const ExportFilter& filter) {
  ReportData data;
  for (RecordedSession& s : store.sessions(std::nullopt, filter.op)) {
    if (!filter.admits(s.op, s.device_row)) continue;
    data.measurements.push_back(store.session_measurements(s.id));
    for (const auto& r : data.measurements.back()) {
      for (const auto& [name, _] : r.params) data.tunables.insert(name);
    }
    data.workload.push_back(s.workload_class.describe());
    data.sessions.push_back(std::move(s));
  }
  return data;
}

// One cell per tunable, empty where the variant has no such tunable.
void add_params(std::vector<std::string>& cells, const std::set<std::string>& tunables,
                const variants::Params& params) {
  for (const auto& t : tunables) {
    const auto it = params.find(t);
    cells.push_back(it == params.end() ? "" : variants::to_string(it->second));
  }
}

std::vector<std::string> with_params(std::vector<std::string> header, const std::set<std::string>& tunables) {
  for (const auto& t : tunables) header.push_back("p_" + t);
  return header;
}

std::string write_devices(const ReportData& data, const std::string& out_dir) {
  CsvFile f(out_dir + "/devices.csv", {"device", "host", "backend", "name", "vendor", "type", "arch",
                                       "compute_units", "global_mem", "cache_bytes", "probe_gbps"});
  std::set<std::string> seen;
  for (const RecordedSession& s : data.sessions) {
    if (!seen.insert(s.device.uid()).second) continue;
    f.row({s.device.id, s.device.host, to_string(s.device.backend), s.device.name, s.device.vendor,
           s.device.type, s.device.arch, std::to_string(s.device.compute_units),
           std::to_string(s.device.global_mem), std::to_string(s.device.cache_bytes),
           s.probe_gbps ? number(*s.probe_gbps) : ""});
  }
  return f.path();
}

std::string write_sessions(const ReportData& data, const std::string& out_dir) {
  CsvFile f(out_dir + "/sessions.csv", {"session", "kind", "op", "device", "host", "device_name", "strategy",
                                        "budget", "seed", "status", "rows", "workload", "evaluations",
                                        "spent_s", "best_variant", "best_kernel_ms", "workload_json"});
  for (std::size_t i = 0; i < data.sessions.size(); ++i) {
    const RecordedSession& s = data.sessions[i];
    f.row({std::to_string(s.id), s.kind, s.op, s.device.id, s.device.host, s.device.name, s.strategy,
           s.budget, s.seed ? std::to_string(*s.seed) : "", s.status, std::to_string(s.workload.rows()),
           data.workload[i], s.outcome ? std::to_string(s.outcome->evaluations) : "",
           s.outcome ? number(s.outcome->spent_seconds) : "", s.outcome ? s.outcome->best_variant : "",
           s.outcome ? number(s.outcome->best_kernel_ms) : "", s.workload.to_json().dump()});
  }
  return f.path();
}

std::vector<std::string> measurement_cells(const RecordedSession& s, const std::string& workload,
                                           std::size_t order, const RecordedMeasurement& r) {
  const varex::Measurement& m = r.m;
  const bool timed = !m.samples_ms.empty();
  return {std::to_string(s.id),
          s.kind,
          s.strategy,
          s.op,
          s.device.id,
          s.device.host,
          std::to_string(s.workload.rows()),
          workload,
          std::to_string(order),
          r.variant_id,
          r.purpose,
          std::to_string(r.fidelity),
          to_string(m.status),
          m.verified ? "1" : "0",
          varex::to_string(m.checked),
          m.cut_off ? "1" : "0",
          timed ? number(m.kernel.median) : "",
          timed ? number(m.kernel.ci_low) : "",
          timed ? number(m.kernel.ci_high) : "",
          std::to_string(m.samples_ms.size()),
          number(m.compile_ms),
          number(m.h2d_ms),
          number(m.d2h_ms),
          number(m.cost_s()),
          m.ok() ? number(m.gbps) : "",
          m.ok() ? number(m.probe_fraction) : "",
          m.energy ? number(m.energy->joules_per_rep() * 1e3) : "",
          m.energy ? number(m.energy->watts()) : ""};
}

std::string write_measurements(const ReportData& data, const std::string& out_dir) {
  CsvFile f(
      out_dir + "/measurements.csv",
      with_params({"session",  "kind",    "strategy",  "op",      "device",         "host",      "rows",
                   "workload", "order",   "variant",   "purpose", "fidelity",       "status",    "verified",
                   "checked",  "cut_off", "kernel_ms", "ci_low",  "ci_high",        "reps",      "compile_ms",
                   "h2d_ms",   "d2h_ms",  "cost_s",    "gbps",    "probe_fraction", "energy_mj", "power_w"},
                  data.tunables));
  for (std::size_t i = 0; i < data.sessions.size(); ++i) {
    std::size_t order = 0;
    for (const RecordedMeasurement& r : data.measurements[i]) {
      auto cells = measurement_cells(data.sessions[i], data.workload[i], ++order, r);
      add_params(cells, data.tunables, r.params);
      f.row(cells);
    }
  }
  return f.path();
}

// The median of each kernel (each label of the operator's sequence: a plan's steps, transfers and launch
// gaps) of every verified measurement, keyed as measurements.csv's rows (session, order).
std::string write_kernels(const ReportData& data, const std::string& out_dir) {
  CsvFile f(out_dir + "/kernels.csv", {"session", "order", "op", "device", "workload", "kernel", "ms"});
  for (std::size_t i = 0; i < data.sessions.size(); ++i) {
    std::size_t order = 0;
    for (const RecordedMeasurement& r : data.measurements[i]) {
      ++order;
      if (!r.m.ok()) continue;
      for (const KernelTiming& k : r.m.kernels) {
        f.row({std::to_string(data.sessions[i].id), std::to_string(order), data.sessions[i].op,
               data.sessions[i].device.id, data.workload[i], k.kernel, number(k.ms)});
      }
    }
  }
  return f.path();
}

// Every column, tunables included: this is the data; the HTML table shows the columns that apply. A row per
// best of each objective (ExportFilter::objectives).
std::string write_best(Store& store, const ReportData& data, const ExportFilter& filter,
                       const std::set<std::string>& unbounded, const std::string& out_dir) {
  CsvFile f(out_dir + "/best.csv",
            with_params({"device", "host", "device_name", "op", "rows", "workload", "objective", "value",
                         "variant", "kernel_ms", "gbps", "probe_fraction", "probe_bound", "h2d_ms", "d2h_ms",
                         "energy_mj", "power_w", "method", "session"},
                        data.tunables));
  for (const Objective objective : filter.objectives_or_all()) {
    for (const BestRow& b : store.best(filter.best_query(objective))) {
      std::vector<std::string> cells{b.device.id,
                                     b.device.host,
                                     b.device.name,
                                     b.op,
                                     std::to_string(b.workload.rows()),
                                     b.workload_class.describe(),
                                     to_string(b.objective),
                                     number(b.value),
                                     b.variant_id,
                                     number(b.kernel_ms),
                                     number(b.gbps),
                                     number(b.probe_fraction),
                                     unbounded.count(b.op) ? "no" : "yes",
                                     number(b.h2d_ms),
                                     number(b.d2h_ms),
                                     b.energy_j ? number(*b.energy_j * 1e3) : "",
                                     b.power_w ? number(*b.power_w) : "",
                                     b.method,
                                     std::to_string(b.session)};
      add_params(cells, data.tunables, b.params);
      f.row(cells);
    }
  }
  return f.path();
}

std::string write_defaults(const DefaultParams& defaults, const std::string& out_dir) {
  CsvFile f(out_dir + "/defaults.csv", {"op", "tunable", "value"});
  for (const auto& [op, params] : defaults) {
    for (const auto& [t, v] : params) f.row({op, t, v});
  }
  return f.path();
}

}  // namespace

ReportFiles write_report(Store& store, const std::string& requested_dir, const ExportFilter& filter,
                         const DefaultParams& defaults, const std::set<std::string>& unbounded) {
  // The files are named out_dir + "/" + name: without the trailing slashes a user may type (`--out rep/`),
  // so that the paths printed are the plain ones.
  std::string out_dir = requested_dir;
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw UsageError("cannot create report directory '" + out_dir + "': " + ec.message());
  ReportFiles files;
  const ReportData data = read_data(store, filter);
  files.csv.push_back(write_devices(data, out_dir));
  files.csv.push_back(write_sessions(data, out_dir));
  files.csv.push_back(write_measurements(data, out_dir));
  files.csv.push_back(write_kernels(data, out_dir));
  files.csv.push_back(write_best(store, data, filter, unbounded, out_dir));
  files.csv.push_back(write_defaults(defaults, out_dir));

  // The plots: the embedded script, run on the CSV files. What an earlier report left is removed first, so
  // that a failed script cannot leave a stale page that looks current.
  std::filesystem::remove(out_dir + "/index.html", ec);
  std::filesystem::remove(out_dir + "/plots.json", ec);
  const std::string script = out_dir + "/.report.py";
  {
    std::ofstream out(script);
    for (std::size_t i = 0; i < embedded::kFileCount; ++i) {
      if (std::string(embedded::kFiles[i].name) == "report.py") out << embedded::kFiles[i].text;
    }
  }
  const std::string interpreter = python();
  const std::string log = out_dir + "/report.log";
  const std::optional<int> status = run_logged({interpreter, script, out_dir}, log);
  std::filesystem::remove(script);
  if (status == 0) {
    files.html = out_dir + "/index.html";
  } else if (!status) {
    files.plot_problem = "cannot run " + interpreter + " for the plots; install python3 or set VAREX_PYTHON";
  } else {
    // The hint only where it is the cause: a script that fails with matplotlib there has its own reason.
    const bool matplotlib = run_logged({interpreter, "-c", "import matplotlib"}, "/dev/null") == 0;
    files.plot_problem =
        "the report script failed (" + interpreter + ", see " + log + ")" +
        (matplotlib ? std::string()
                    : "; it has no matplotlib: install it (scripts/setup.sh does) or set VAREX_PYTHON to a "
                      "Python that has it");
  }
  return files;
}

}  // namespace varex::results
