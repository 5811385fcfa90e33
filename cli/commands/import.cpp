// `varex import`: another tuner's recorded measurements (a Kernel Tuner cache file, a T4 results file) as a
// finished sweep of an operator on a recorded device, which `tuner-bench`, `report` and `export` then read
// like varex's own. Imported times were not verified by varex, so they never become a best.
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "harness/operators/operator.hpp"
#include "results/import.hpp"
#include "results/sqlite.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

struct ImportFlags {
  std::string format, file, op, db = "varex.db", device_name, backend = "cuda";
  std::optional<std::string> rows;
  bool json_out = false;
};

// The device the file was recorded on, as far as it says: a device of its own host ("imported"), so that it
// never merges with a device of this machine.
DeviceInfo imported_device(const ImportFlags& f, const results::ImportedRecords& records) {
  DeviceInfo d;
  d.backend = f.backend == "opencl" ? Backend::OpenCL : Backend::Cuda;
  d.name = !f.device_name.empty()         ? f.device_name
           : !records.device_name.empty() ? records.device_name
                                          : "unknown device";
  d.id = (d.backend == Backend::Cuda ? "cuda:0" : "ocl:0:0");
  d.platform = d.backend == Backend::Cuda ? "CUDA" : "unknown";
  d.type = "gpu";
  d.driver = "unknown";
  d.host = "imported";
  d.physical = "imported " + hex64(fnv1a(f.file));
  return d;
}

// The file's configurations that are variants of the space, each with its measurement; how many are not.
struct Fitted {
  std::vector<std::pair<variants::Params, const results::ImportedMeasurement*>> kept;
  std::size_t outside = 0;
};

Fitted fit(const variants::Space& space, const results::ImportedRecords& records) {
  Fitted out;
  for (const results::ImportedMeasurement& r : records.measurements) {
    variants::Params params = space.defaults();
    bool fits = true;
    for (const auto& [name, value] : r.configuration.items()) {
      const auto it = params.find(name);
      if (it == params.end()) {
        fits = false;
        break;
      }
      it->second = variants::value_from_json(value);
    }
    if (!fits || space.violation(params) || !space.is_canonical(params)) {
      ++out.outside;
      continue;
    }
    out.kept.emplace_back(std::move(params), &r);
  }
  return out;
}

// Records the file as a finished sweep session; what it recorded, as `--json` prints it.
json import_file(const ImportFlags& f) {
  const harness::Operator& op = harness::find_operator(f.op);
  const results::ImportedRecords records =
      f.format == "kt-cache" ? results::read_kt_cache(f.file) : results::read_t4(f.file);
  harness::WorkloadOptions options;
  if (f.rows) {
    options.flags["rows"] = *f.rows;
  } else {
    std::uint64_t rows = records.problem_size.empty() ? 0 : 1;
    for (std::uint64_t n : records.problem_size) rows *= n;
    if (rows == 0) throw UsageError(f.file + ": no problem_size to take the rows from: give --rows");
    options.flags["rows"] = std::to_string(rows);
  }
  harness::check_declared(op, options);
  const datasets::WorkloadSpec spec = op.workload(options);
  const DeviceInfo device = imported_device(f, records);
  const variants::Space space = harness::space_for(op, device, spec);

  const Fitted fitted = fit(space, records);
  const auto& kept = fitted.kept;
  const std::size_t outside = fitted.outside;
  if (kept.empty())
    throw UsageError(f.file + ": none of its " + std::to_string(records.measurements.size()) +
                     " configurations is a variant of " + op.name() + "'s space");

  auto store = std::make_unique<results::Store>(f.db);
  store->ensure_operator(op.name(), op.description());
  store->ensure_workload(spec, op.workload_class(spec));
  const std::int64_t device_row = store->device(device);
  const json settings = {{"imported", f.format}, {"file", f.file}, {"kernel_name", records.kernel_name}};
  const std::int64_t session =
      store->begin_session("sweep", op.name(), device_row, spec.id(), "imported", settings);
  const std::string kernel_hash = op.sources_hash(device.backend);
  std::size_t ok = 0;
  results::SessionOutcome outcome;
  try {
    // The file's rows go in together or not at all.
    results::Transaction t(store->db());
    for (const auto& [params, r] : kept) {
      const std::string id = harness::variant_id(op, device.backend, params);
      store->ensure_variant(id, op.name(), device.backend, params, kernel_hash, space.compile_part(params));
      store->record_imported(session, id, r->m);
      outcome.spent_seconds += r->m.cost_s();
      ++outcome.evaluations;
      if (!r->m.ok()) continue;
      ++ok;
      if (outcome.best_variant.empty() || r->m.kernel.median < outcome.best_kernel_ms) {
        outcome.best_variant = id;
        outcome.best_kernel_ms = r->m.kernel.median;
      }
    }
    t.commit();
  } catch (...) {
    store->discard_session(session);
    throw;
  }
  store->set_session_variants(session, space.count_valid());
  store->end_session(session, "finished", outcome);
  const json out = {{"session", session},
                    {"device", device.name},
                    {"rows", spec.rows()},
                    {"measurements", kept.size()},
                    {"ok", ok},
                    {"failed", kept.size() - ok},
                    {"outside_the_space", outside}};
  return out;
}

}  // namespace

void add_import(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand(
      "import", "Record another tuner's measurements (a Kernel Tuner cache, a T4 results file) as a sweep");
  auto f = std::make_shared<ImportFlags>();
  cmd->add_option("--format", f->format, "kt-cache (Kernel Tuner's cache file) or t4 (T4 results)")
      ->required()
      ->check(CLI::IsMember({"kt-cache", "t4"}));
  cmd->add_option("file", f->file, "The file to import")->required();
  cmd->add_option("--op", f->op, "The operator whose variants the configurations are (a user operator's)")
      ->required();
  cmd->add_option("--rows", f->rows,
                  "The workload's rows (default: the product of the cache's problem_size)");
  cmd->add_option("--device-name", f->device_name, "The device's name (default: the file's device_name)");
  cmd->add_option("--backend", f->backend, "cuda or opencl: the API the file was measured through (cuda)")
      ->check(CLI::IsMember({"cuda", "opencl"}));
  add_db_option(cmd, f->db, "Database to record into (created if missing)");
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->callback([f] {
    const json out = import_file(*f);
    if (f->json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    const auto n = out["measurements"].get<std::size_t>(), ok = out["ok"].get<std::size_t>();
    std::cout << f->file << ": " << n << " measurements (" << ok << " timed, " << n - ok
              << " failed) recorded as sweep session " << out["session"] << " of " << f->op << " on "
              << out["device"].get<std::string>() << " (" << out["rows"] << " rows) in " << f->db;
    if (const auto outside = out["outside_the_space"].get<std::size_t>())
      std::cout << "; " << outside << " configurations are not variants of its space, left out";
    std::cout << "\n";
  });
}

}  // namespace varex::cli
