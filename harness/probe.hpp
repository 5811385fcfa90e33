#pragma once
// The copy-bandwidth probe: the best of the runtime's own device-to-device copy and a tuned copy kernel
// over a buffer far larger than the device's cache. Every measurement's GB/s is reported against it.
#include <nlohmann/json.hpp>
#include <string>

#include "harness/engine.hpp"

namespace varex::harness {

struct ProbeResult {
  double gbps = 0;         // bytes read + bytes written per second, best method
  std::string method;      // which method gave it
  nlohmann::json details;  // every method's figure and the buffer size
};

ProbeResult probe_bandwidth(Engine& engine);

}  // namespace varex::harness
