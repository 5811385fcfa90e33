#pragma once
// Combining databases from several machines: devices by identity, variants and workloads by id, sessions
// by (device, kind, operator, workload, strategy, settings, start time, host), measurements by (session,
// variant, time, purpose, fidelity). Merging the same file twice adds nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "results/store.hpp"

namespace varex::results {

struct MergeStats {
  std::int64_t devices = 0;
  std::int64_t sessions = 0;
  std::int64_t measurements = 0;
};

// Reads `source` (checked, and a private copy of it brought to the current schema first; the source file is
// not changed) and adds what `target` lacks, in one transaction. UsageError naming the source and what is
// wrong with it (missing, not a file, corrupt, newer schema, not a varex database); no temporary file stays.
MergeStats merge_into(Store& target, const std::string& source);

struct MergeReport {
  std::vector<MergeStats> sources;  // what each source brought that the sources before it had not
  MergeStats added;                 // what the target gained
};
// All sources into the database at `target`, all or nothing: every source is checked and copied before the
// target is touched, and the target gains them in one transaction; a target that did not exist appears
// only when everything succeeded. Measurements recorded twice before schema version 6 (duplicate_of) are
// not merged.
MergeReport merge_databases(const std::string& target, const std::vector<std::string>& sources);

}  // namespace varex::results
