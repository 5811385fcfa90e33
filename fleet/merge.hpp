#pragma once
// The fleet's merge: every task's database into fleet.db with `varex merge` semantics (devices by identity,
// sessions and measurements once), built as a new file and renamed over the old one, so that fleet.db is
// always one whole merge and a merge run again (after `fleet resume`) counts nothing twice.
#include <nlohmann/json.hpp>

#include "fleet/plan.hpp"

namespace varex::fleet {

// Merges under the directory's lock (two merge jobs never interleave), writes merged.json and returns it:
// which task databases it merged, which tasks are not done, and what fleet.db holds. Where no task has a
// database yet it writes neither file and returns a report of no merged tasks whose "database" is null.
// UsageError when a task database cannot be read.
nlohmann::json merge_fleet(const FleetDir& dir);

}  // namespace varex::fleet
