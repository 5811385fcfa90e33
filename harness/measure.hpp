#pragma once
// The measurement protocol (DESIGN "Measuring honestly"): compile, poison the outputs, run once and
// verify against the host reference, warm up, then repeat until the median is known well enough.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/measurement.hpp"
#include "harness/operators/operator.hpp"

namespace varex::harness {

// Never throws for a failing variant: compile and launch failures and wrong results become the status.
// `probe_gbps` (0 if unknown) turns GB/s into a fraction of the device's copy bandwidth.
Measurement measure(Engine& engine, PreparedRun& run, const variants::Params& params,
                    const MeasureSettings& settings, double probe_gbps);

}  // namespace varex::harness
