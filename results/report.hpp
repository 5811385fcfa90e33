#pragma once
// `varex report`: CSV files of the store (devices, sessions, measurements, best variants, defaults) and a
// self-contained HTML report whose plots scripts/report.py draws with matplotlib. The script also writes
// plots.json, one entry per plot (title, kind, sessions, panels), so that what was drawn can be checked.
#include <set>
#include <string>
#include <vector>

#include "results/export.hpp"

namespace varex::results {

struct ReportFiles {
  std::vector<std::string> csv;
  std::string html;          // empty when the plots could not be made
  std::string plot_problem;  // why not
};

// Writes the CSV files into `out_dir` (created if needed), then runs the report script with
// $VAREX_PYTHON, /usr/bin/python3 or python3. UsageError when `out_dir` cannot be written. `unbounded` names
// the operators whose variants may move fewer bytes than their runs count (Operator::moves_all_its_bytes):
// their bests' share of the copy probe is no bound (best.csv's probe_bound).
ReportFiles write_report(Store& store, const std::string& out_dir, const ExportFilter& filter,
                         const DefaultParams& defaults, const std::set<std::string>& unbounded = {});

}  // namespace varex::results
