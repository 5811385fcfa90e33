// `varex report`: CSV files and an HTML report with plots.
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "results/report.hpp"

namespace varex::cli {

void add_report(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Write CSV files and an HTML report with plots");
  struct Flags {
    std::string db = "varex.db", out, device;
    std::optional<std::string> op;
    bool include_runs = false;
    std::vector<std::string> objectives;
  };
  auto f = std::make_shared<Flags>();
  add_db_option(cmd, f->db, "Results database");
  cmd->add_option("--out", f->out, "Output directory (a directory: - is refused)")->required();
  cmd->add_option("--op", f->op, "Only this operator");
  cmd->add_option("--device", f->device,
                  "Only these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  cmd->add_flag("--include-runs", f->include_runs, "Let single `varex run` measurements compete for best");
  add_objectives_option(cmd, f->objectives);
  cmd->callback([f, &exit_code] {
    if (f->out == "-") {
      throw UsageError(
          "report --out -: a report is a directory of files (CSV files and index.html), not one stream; "
          "give a directory (varex best --json and varex export --out - print to standard output)");
    }
    const auto store = open_results(f->db);
    const auto filter = export_filter(*store, f->op, f->device, f->include_runs, f->objectives);
    const auto files =
        results::write_report(*store, f->out, filter, operator_defaults(), probe_not_a_bound());
    for (const auto& c : files.csv) std::cout << c << "\n";
    if (files.html.empty()) {
      std::cerr << "varex: " << files.plot_problem << "\n";
      exit_code = 1;
    } else {
      std::cout << files.html << "\n";
    }
  });
}

}  // namespace varex::cli
