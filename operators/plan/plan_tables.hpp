#pragma once
// A plan's tables and its reference result for other databases: the columns the plan's scans read, as CSV
// files in SQL's notation (dates YYYY-MM-DD, decimals with their point, dictionary values as strings), and
// a summary of each output (rows, and each column's exact sum in the column's own units: days, hundredths,
// dictionary codes) that a database running the plan's SQL on those files must reproduce.
#include <string>

#include "operators/plan/plan_file.hpp"
#include "operators/plan/tpch.hpp"

namespace varex::plan {

// Writes DIR/<table>.csv for every table the plan scans, DIR/plan.json (the plan with its SQL) and
// DIR/summary.json; returns the summary. RuntimeError when DIR cannot be written.
nlohmann::json write_plan_tables(const nlohmann::json& doc, const std::string& origin, double scale_factor,
                                 std::uint64_t seed, const std::string& dir);

}  // namespace varex::plan
