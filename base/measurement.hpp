#pragma once
// What one measurement of a variant is, as the harness produces it and the store keeps it. The base
// layer's vocabulary, so that results/ and the tuner depend on no device code.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/stats.hpp"

namespace varex {

// What the host reduces an operator's output to: the number of result rows and a checksum, both as each
// operator documents them.
struct Digest {
  std::uint64_t rows = 0;
  std::uint64_t checksum = 0;
  bool operator==(const Digest&) const = default;
};

struct KernelTiming {
  std::string kernel;
  double ms = 0;
};

// A CPU implementation a user would pick instead of the device, timed on the same data (host clock).
struct BaselineTiming {
  std::string engine;
  unsigned threads = 0;
  double ms = 0;
  bool verified = false;  // its result equals the host reference
};

// What the variant's repetitions cost in energy (harness/energy.hpp): the energy of `reps` back-to-back
// repetitions over `seconds`: their wall time by the power fitted over the ticks of the device's
// total-energy counter, or by its power sampled meanwhile; the clocks seen. `reps` is raised until the
// reading's uncertainty is at most a hundredth of what is measured.
struct EnergyReading {
  std::string method;  // "nvml counter", "nvml power", "rapl"
  double joules = 0;   // for all `reps` repetitions
  double seconds = 0;  // the host's wall time of those repetitions
  int reps = 0;
  double resolution_j = 0;  // what `joules` may be off by (from when the counter's ticks were seen)
  int ticks = 0;            // the counter's ticks the power was fitted over (0: no counter)
  double sm_clock_mhz = 0;  // 0 where the meter does not say
  double mem_clock_mhz = 0;
  double joules_per_rep() const { return reps > 0 ? joules / reps : 0; }
  double watts() const { return seconds > 0 ? joules / seconds : 0; }
  nlohmann::json to_json() const;
  static EnergyReading from_json(const nlohmann::json& j);
};

enum class Status { Ok, CompileError, LaunchError, Timeout, WrongResult };
std::string to_string(Status status);
Status status_from_string(std::string_view text);

// How a variant's first result is checked against the host reference before its times count.
enum class Check {
  Host,    // downloaded and compared in full on the host, naming the first mismatch
  Device,  // reduced to a digest on the device (order-aware, or order-free for multisets) and compared
           // with the reference's digest, so that only a few words cross the bus; a digest that differs
           // is then compared in full on the host, which names the mismatch
};
std::string to_string(Check check);
Check check_from_string(std::string_view text);

struct MeasureSettings {
  int warmup = 1;
  int min_reps = 5;
  int max_reps = 50;
  // Stop repeating once the median's confidence interval is within this fraction of the median…
  double target_rel_ci = 0.02;
  double confidence = 0.95;
  // …or once the timed repetitions have taken this long.
  double max_rep_seconds = 2.0;
  // Also time the operator's CPU baseline once the variant is measured.
  bool baseline = false;
  // Per request, set by the tuner (not part of a session's identity):
  Check check = Check::Host;
  // A variant whose first timed repetition is slower than this (0: never) is recorded after that one
  // repetition, marked cut off (the warm-up is skipped when the verified run was already slower).
  double cutoff_ms = 0;
  // A result checked by its digest whose median time comes out below this (0: never) is then also compared
  // in full on the host, from one more run: the re-measurement's way to compare in full only a candidate
  // that can still be declared best.
  double compare_in_full_below_ms = 0;
  // Measure the energy of repetitions run back to back for at least this long, where the device has a meter
  // (harness/energy.hpp); 0: no energy.
  double energy_ms = 0;
  // Per request: the energy is measured only where the median time comes out below this (infinity: always).
  // A tune by energy or edp sets it to what can still beat its best at the lowest power seen.
  double energy_below_ms = std::numeric_limits<double>::infinity();

  nlohmann::json to_json() const;
  static MeasureSettings from_json(const nlohmann::json& j);
};

struct Measurement {
  Status status = Status::Ok;
  std::string error;
  double compile_ms = 0;
  bool compile_cached = false;
  double wall_ms = 0;  // everything the measurement took on the host, compile included: its cost
  double h2d_ms = 0;
  double d2h_ms = 0;
  // What comparing the result in full on the host took (its download included; 0 where only its digest
  // was checked). Passed from the worker, not stored: the tuner reserves it for the re-measurement.
  double host_check_ms = 0;
  std::vector<double> samples_ms;     // kernel time of each timed repetition
  SampleSummary kernel;               // summary of the samples (median, interval, spread)
  std::vector<KernelTiming> kernels;  // median per kernel of the operator's sequence
  bool cache_flushed = false;
  std::uint64_t bytes_moved = 0;
  double gbps = 0;
  double probe_fraction = 0;
  Digest result;
  bool verified = false;
  std::optional<BaselineTiming> baseline;
  Check checked = Check::Host;  // how the result was verified
  bool cut_off = false;         // stopped after one repetition, far slower than the incumbent: never a best
  std::optional<EnergyReading> energy;  // where asked for and the device has a meter

  bool ok() const { return status == Status::Ok; }
  // What the measurement cost: its wall time, or for rows recorded before wall times were kept an
  // estimate from its parts (compilation, the verified run, a warm-up and the repetitions, the download).
  double cost_s() const;
  nlohmann::json to_json() const;
  static Measurement from_json(const nlohmann::json& j);
};

nlohmann::json baseline_json(const std::optional<BaselineTiming>& baseline);  // null when absent
std::optional<BaselineTiming> baseline_from_json(const nlohmann::json& j);

// The copy-bandwidth probe's result (harness/probe.hpp).
struct ProbeResult {
  double gbps = 0;         // bytes read + bytes written per second, best method
  std::string method;      // which method gave it
  nlohmann::json details;  // every method's figure and the buffer size
};

}  // namespace varex
