#pragma once
// What "best" minimises: the kernel's median time (the default), the energy of one repetition, or their
// product, the energy-delay product (where a measurement carries energy: --energy-ms, harness/energy.hpp).
#include <optional>
#include <string>
#include <string_view>

#include "base/measurement.hpp"

namespace varex {

enum class Objective { Time, Energy, Edp };

std::string to_string(Objective objective);
// "time", "energy" or "edp"; UsageError naming them (and `flag`) otherwise.
Objective objective_from_string(std::string_view text, std::string_view flag = "--objective");

// The measurement's value under the objective: milliseconds, joules per repetition, or joules × seconds;
// nullopt where it was not timed, or lacks the energy the objective needs.
std::optional<double> objective_value(const Measurement& m, Objective objective);

// The value's uncertainty relative to it: the median time's confidence interval, the energy meter's
// resolution against the energy it measured, and for edp both added. 0 where the value is missing.
double objective_rel_uncertainty(const Measurement& m, Objective objective);

// The same over a measurements row aliased `m` in SQL (NULL where it lacks the energy).
const char* objective_sql(Objective objective);

// The unit the values are in, for tables.
const char* objective_unit(Objective objective);

}  // namespace varex
