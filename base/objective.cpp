#include "base/objective.hpp"

#include "base/errors.hpp"

namespace varex {

std::string to_string(Objective objective) {
  switch (objective) {
    case Objective::Time:
      return "time";
    case Objective::Energy:
      return "energy";
    case Objective::Edp:
      return "edp";
  }
  return "time";
}

Objective objective_from_string(std::string_view text, std::string_view flag) {
  if (text == "time") return Objective::Time;
  if (text == "energy") return Objective::Energy;
  if (text == "edp") return Objective::Edp;
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
  switch (objective) {
    case Objective::Time:
      return "m.kernel_ms";
    case Objective::Energy:
      return "m.energy_j";
    case Objective::Edp:
      return "(m.energy_j * m.kernel_ms / 1000.0)";
  }
  return "m.kernel_ms";
}

const char* objective_unit(Objective objective) {
  switch (objective) {
    case Objective::Time:
      return "ms";
    case Objective::Energy:
      return "J";
    case Objective::Edp:
      return "J*s";
  }
  return "ms";
}

}  // namespace varex
