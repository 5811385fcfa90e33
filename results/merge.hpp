#pragma once
// Combining databases from several machines: devices by identity, variants and workloads by id, sessions
// by (device, kind, operator, workload, strategy, settings, start time, host), measurements by (session,
// variant, time, purpose, fidelity). Merging the same file twice adds nothing.
#include <cstdint>
#include <string>

#include "results/store.hpp"

namespace varex::results {

struct MergeStats {
  std::int64_t devices = 0;
  std::int64_t sessions = 0;
  std::int64_t measurements = 0;
};

// Reads `source` (a copy of it is brought to the current schema first; the source file is not changed)
// and adds what `target` lacks, in one transaction. UsageError when the source cannot be read.
MergeStats merge_into(Store& target, const std::string& source);

}  // namespace varex::results
