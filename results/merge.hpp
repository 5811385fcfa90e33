#pragma once
// Combining databases from several machines: devices by identity, variants and workloads by id, sessions
// by (device, kind, operator, workload, strategy, settings, start time, host), measurements by (session,
// variant, time, purpose, fidelity). Merging the same file twice adds nothing.
#include <cstdint>
#include <memory>
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

// For commands that only read a database (tuner-bench): a private copy of `source`, checked as merge checks
// its sources and brought to the current schema, so the user's file is opened read-only and never
// migrated. UsageError as for merge_into. The copy is removed with this object.
class PrivateCopy {
 public:
  explicit PrivateCopy(const std::string& source);
  ~PrivateCopy();
  PrivateCopy(const PrivateCopy&) = delete;
  PrivateCopy& operator=(const PrivateCopy&) = delete;
  Store& store() { return *store_; }

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
  std::unique_ptr<Store> store_;
};

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
