#pragma once
// The placement flags of `fleet sweep|tune` checked before anything is written or submitted. Each value
// becomes an #SBATCH line of the task script, which no quoting protects: a newline in one would end the line
// and start another (a shell command, or another #SBATCH option), and sbatch splits a line at spaces. So
// every value is one word of the form Slurm takes, or the run is refused.
#include "fleet/plan.hpp"

namespace varex::fleet {

// UsageError of one line naming the flag and its value when a placement value is malformed.
void check_placement(const Placement& placement);

}  // namespace varex::fleet
