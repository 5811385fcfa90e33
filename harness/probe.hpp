#pragma once
// The copy-bandwidth probe: the best of the runtime's own device-to-device copy and a tuned copy kernel
// over a buffer far larger than the device's cache. Every measurement's GB/s is reported against it.
#include <nlohmann/json.hpp>
#include <string>

#include "base/measurement.hpp"
#include "harness/engine.hpp"

namespace varex::harness {

ProbeResult probe_bandwidth(Engine& engine);

}  // namespace varex::harness
