#pragma once
// What a variant's repetitions cost in energy, read from the device's own meter: NVIDIA GPUs through NVML
// (libnvidia-ml.so.1, loaded at run time like the driver: a machine without it measures no energy), CPU
// devices through RAPL (/sys/class/powercap) where the machine exposes it. Read-only: varex never changes
// clocks or power limits.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/device.hpp"
#include "base/measurement.hpp"

namespace varex::harness {

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  virtual std::string method() const = 0;
  // The total-energy counter (in counter_unit_j() joules, wrapping after counter_max()), where there is one.
  virtual std::optional<std::uint64_t> counter() = 0;
  virtual double counter_unit_j() const = 0;
  virtual std::uint64_t counter_max() const = 0;
  // The power drawn now, in watts (0 where the meter cannot say).
  virtual double power_w() = 0;
  virtual double sm_clock_mhz() { return 0; }
  virtual double mem_clock_mhz() { return 0; }
};

// The meter of `device`, or nullptr where it has none (no NVML, not an NVIDIA device, no RAPL). NVML's
// library is $VAREX_NVML_LIBRARY where set (the tests' scripted one), else libnvidia-ml.so.1; NVML finds the
// device by its PCI address, or, where $VAREX_NVML_BIND_ALL names an NVML index, every device is read from
// that one (for the tests, whose PoCL device has no NVML counterpart).
std::unique_ptr<EnergyMeter> energy_meter(const DeviceInfo& device);

// The difference of two counter readings, across one wrap of a counter that wraps after `max`.
std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after, std::uint64_t max);

// Runs `repetition` back to back for at least `min_ms` (measured median `rep_ms` per repetition) and reads
// the meter meanwhile. A counter is polled on a thread of its own, and the power fitted over the times of its
// ticks (the moments it changes) inside the repetitions: a counter that moves in coarse steps (NVML's: 12 J
// steps on an H100; on an H200 about ten ticks a second were seen) is then read to the polls' precision, not
// to a step. The repetitions run on, watched throughout, until the fit leaves at most a hundredth of
// uncertainty (or 30 s have passed). Without a counter, the power is sampled every few milliseconds and
// integrated. nullopt when the meter gives nothing (a counter that never moved).
std::optional<EnergyReading> measure_energy(EnergyMeter& meter, const std::function<void()>& repetition,
                                            double rep_ms, double min_ms);

}  // namespace varex::harness
