#pragma once
// Sessions on devices: `varex sweep` (the exhaustive strategy, no budget), `varex tune` (any strategy and
// budget) and `varex run` (one variant, measured once: the "single" strategy). One session per device, the
// devices of different physical devices at the same time (tuner/schedule.hpp). Running the same command again
// resumes every interrupted session from its recorded measurements, and reports a finished one instead of
// measuring again.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/operators/operator.hpp"
#include "harness/worker.hpp"
#include "results/store.hpp"
#include "tuner/schedule.hpp"
#include "tuner/tuner.hpp"
#include "variants/shard.hpp"

namespace varex::tuner {

struct RunOptions {
  std::string kind = "tune";  // "sweep", "tune" or "run"
  const harness::Operator* op = nullptr;
  std::vector<DeviceInfo> devices;
  datasets::WorkloadSpec workload;
  std::string strategy = "genetic";
  Budget budget;
  std::uint64_t seed = 1;
  int remeasure = 3;
  // What the strategy minimises and the best is declared by; energy and edp need settings.energy_ms > 0 and a
  // meter on every device (UsageError otherwise, before anything is recorded).
  Objective objective = Objective::Time;
  double cutoff = 0;  // TuneSettings::cutoff (the command line gives tunes default_cutoff)
  // TuneSettings::small_instance: a tune with a budget in seconds may search on a small instance of the
  // workload (harness::small_instance_for) in a second worker.
  TuneSettings::SmallInstance small_instance = TuneSettings::SmallInstance::Auto;
  bool warm_start = false;  // a tune measures the store's bests of the operator first (tuner/warm_start.hpp)
  varex::MeasureSettings settings;
  double timeout_seconds = 300;
  // A sub-space; for a run, the settings that pick its one variant (defaults otherwise).
  std::map<std::string, std::string> pins;
  // One shard of the (pinned) space: a fleet task's part of a sweep (variants/shard.hpp); part of the
  // session's settings, so each shard is a session of its own.
  std::optional<variants::Shard> shard;
  bool progress = false;    // a live line per device on stderr (a run: only the note that it probes)
  SchedulePolicy schedule;  // which devices run at the same time
  bool reprobe = false;
  bool fresh = false;  // a new session even if the same command ran before (every run is one)
  bool wait = false;   // wait for a session another process runs, instead of refusing
  std::string worker_executable;
  // When the command started. A wall-time budget counts from here: each session is charged what came
  // before the lanes started (the devices' claims, the first worker) and its lane's own time since (a
  // first probe and the workload's preparation included), so that a tune ends on its budget.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

struct DeviceRun {
  DeviceInfo device;
  std::int64_t session = 0;
  std::string status;  // "finished", "finished before" (nothing measured), or "failed" with `error`
  std::string error;
  std::size_t resumed_measurements = 0;  // taken from the interrupted session instead of measured
  double probe_gbps = 0;
  std::uint64_t valid_variants = 0;
  TuneOutcome outcome;
  std::string best_variant;
  std::optional<varex::Measurement> last;  // the last search evaluation's (a run's one measurement)
  std::optional<datasets::WorkloadSpec> small_workload;  // the small instance it searched on, if it did
  std::string small_error;  // why the small instance it was to search on could not be prepared
};

// The energy measurement an energy objective turns on where the command gives none (MeasureSettings::
// energy_ms): the meter lengthens it until its resolution is a hundredth of what it measures.
inline constexpr double kObjectiveEnergyMs = 100;

// UsageError, one line, where the objective needs energy and the settings measure none, or (with `meters`)
// the objective or the settings' energy_ms (--energy-ms) needs a meter that a device lacks
// (harness/energy.hpp).
void check_objective(const RunOptions& options, bool meters = true);

// The settings that, with operator, device, workload and strategy, identify a session for resuming.
nlohmann::json session_settings(const RunOptions& options);

// Throws harness::Interrupted (after giving back every session: one with measurements closed as
// interrupted, a new one without any deleted) and UsageError (before anything is recorded). A device that
// fails at run time is reported in its DeviceRun; the others still run. Devices that run at the same time
// write through connections of their own to `store`'s file. The runs come back in the order of
// `options.devices`.
std::vector<DeviceRun> run_sessions(results::Store& store, const RunOptions& options);

// The device's stored probe bandwidth, measured first when missing or when `force` is set.
double ensure_probe(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote, bool force,
                    const std::function<void(long holder)>& waiting = {});

// A probe never overlaps another probe of the same physical device (harness::DeviceLock); one that comes
// out under kProbeDrop of the stored figure is taken twice more, and stored only if one of them is not.
inline constexpr double kProbeDrop = 0.5;
struct ProbeOutcome {
  double gbps = 0;      // the figure to use: the new one, or the stored one that was kept
  bool stored = false;  // a new figure was stored
  std::string note;     // why a new measurement was not stored
  std::optional<varex::ProbeResult> measured;  // the best of this call's measurements, if it took any
};
// `waiting` is told the process id that holds the device's probe lock where this probe must wait for it;
// Ctrl-C ends the wait (harness::Interrupted).
ProbeOutcome probe_device(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote,
                          bool force, const std::function<void(long holder)>& waiting = {});

}  // namespace varex::tuner
