#pragma once
// A sweep recorded under an older space, fitted to the operator's space of today (issue 49): operators gain
// and lose tunables and values, and a replay should go on over what the two still share rather than refuse
// the sweep. Each recorded point is mapped as follows:
//   - a tunable that the record lacks (added since) takes today's default: a new tunable's default is the
//     kernel as it was before the tunable existed;
//   - a tunable that today's space lacks (removed or renamed since) was one knob of the old space: only the
//     records at its most frequent value stay, so that no two old variants become one;
//   - a value that today's tunable no longer offers, or a point that today's constraints refuse, is left
//     out;
//   - the rest is put in today's canonical form (where two records become one variant, the later stays).
#include <cstddef>
#include <string>
#include <vector>

#include "results/store.hpp"
#include "variants/space.hpp"

namespace varex::tuner {

struct FittedMeasurements {
  std::vector<results::RecordedMeasurement> kept;  // in today's canonical form
  std::size_t recorded = 0;                        // distinct recorded points
  std::size_t replayable = 0;                      // distinct points kept
  std::vector<std::string> changes;                // what was mapped or left out, one phrase each
  bool changed() const { return !changes.empty(); }
  // "1080 recorded variants, 720 replayed: ...; ..." (empty when nothing changed).
  std::string summary() const;
};

FittedMeasurements fit_to_space(const variants::Space& space,
                                std::vector<results::RecordedMeasurement> measurements);

}  // namespace varex::tuner
