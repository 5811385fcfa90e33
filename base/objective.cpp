#include "base/objective.hpp"

#include "base/errors.hpp"

namespace varex {

namespace {

// Each objective's name, its value over a measurements row aliased `m` in SQL, and its unit.
struct ObjectiveInfo {
  Objective objective;
  const char* name;
  const char* sql;
  const char* unit;
};
constexpr ObjectiveInfo kObjectiveTable[] = {
    {Objective::Time, "time", "m.kernel_ms", "ms"},
    {Objective::Energy, "energy", "m.energy_j", "J"},
    {Objective::Edp, "edp", "(m.energy_j * m.kernel_ms / 1000.0)", "J*s"},
};

const ObjectiveInfo& objective_info(Objective objective) {
  for (const ObjectiveInfo& i : kObjectiveTable) {
    if (i.objective == objective) return i;
  }
  return kObjectiveTable[0];
}

}  // namespace

std::string to_string(Objective objective) {
  return objective_info(objective).name;
}

Objective objective_from_string(std::string_view text, std::string_view flag) {
  for (const ObjectiveInfo& i : kObjectiveTable) {
    if (text == i.name) return i.objective;
  }
  throw UsageError(std::string(flag) + ": '" + std::string(text) + "' is not one (time, energy, edp)");
}

std::optional<double> objective_value(const Measurement& m, Objective objective) {
  if (m.samples_ms.empty()) return std::nullopt;
  if (objective == Objective::Time) return m.kernel.median;
  if (!m.energy) return std::nullopt;
  const double joules = m.energy->joules_per_rep();
  return objective == Objective::Energy ? joules : joules * m.kernel.median / 1e3;
}

double objective_rel_uncertainty(const Measurement& m, Objective objective) {
  if (!objective_value(m, objective)) return 0;
  const double time = m.kernel.relative_ci();
  if (objective == Objective::Time) return time;
  const double energy = m.energy->joules > 0 ? m.energy->resolution_j / m.energy->joules : 0;
  return objective == Objective::Energy ? energy : time + energy;
}

const char* objective_sql(Objective objective) {
  return objective_info(objective).sql;
}

const char* objective_unit(Objective objective) {
  return objective_info(objective).unit;
}

}  // namespace varex
