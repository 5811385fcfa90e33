#pragma once
// The measurement protocol (DESIGN "Measuring honestly"): compile, poison the outputs, run once and
// verify against the host reference, warm up, then repeat until the median is known well enough.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/operators/operator.hpp"
#include "harness/stats.hpp"

namespace varex::harness {

enum class Status { Ok, CompileError, LaunchError, Timeout, WrongResult };
std::string to_string(Status status);
Status status_from_string(std::string_view text);

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

  bool ok() const { return status == Status::Ok; }
  // What the measurement cost: its wall time, or for rows recorded before wall times were kept an
  // estimate from its parts (compilation, the verified run, a warm-up and the repetitions, the download).
  double cost_s() const;
  nlohmann::json to_json() const;
  static Measurement from_json(const nlohmann::json& j);
};

nlohmann::json baseline_json(const std::optional<BaselineTiming>& baseline);  // null when absent
std::optional<BaselineTiming> baseline_from_json(const nlohmann::json& j);

// Never throws for a failing variant: compile and launch failures and wrong results become the status.
// `probe_gbps` (0 if unknown) turns GB/s into a fraction of the device's copy bandwidth.
Measurement measure(Engine& engine, PreparedRun& run, const variants::Params& params,
                    const MeasureSettings& settings, double probe_gbps);

}  // namespace varex::harness
