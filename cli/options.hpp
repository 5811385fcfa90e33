#pragma once
// Option groups shared by several commands, and their resolution into harness types.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/device.hpp"
#include "harness/measure.hpp"
#include "harness/operators/operator.hpp"

namespace varex::cli {

// A tune's --strategy-seed where none is given; a fleet tune derives each node task's seed from it.
inline constexpr std::uint64_t kDefaultStrategySeed = 1;

// The workload flags of every operator (their declarations), parsed once; resolve() takes those one
// operator declares and refuses the others.
struct WorkloadFlags {
  std::vector<std::string> query;

  void add_to(CLI::App& app);
  // The workload for `op`; generated row counts default to four times the largest device cache. A series
  // (a list or range in a numeric flag, cli/series.hpp) is refused: it is for resolve_series.
  datasets::WorkloadSpec resolve(const harness::Operator& op, const std::vector<DeviceInfo>& devices) const;
  // Every workload of the series the flags name, in order and each once (one when no flag holds a series).
  std::vector<datasets::WorkloadSpec> resolve_series(const harness::Operator& op,
                                                     const std::vector<DeviceInfo>& devices) const;

 private:
  datasets::WorkloadSpec resolve_flags(const harness::Operator& op, const std::vector<DeviceInfo>& devices,
                                       const std::map<std::string, std::string>& given) const;

  std::map<std::string, std::string> values_;
  std::map<std::string, CLI::Option*> options_;
};

// A check for a number option: finite and from `lo` to `hi` (CLI::Range lets NaN through), refused in the
// words cli/messages.cpp turns into "--flag V: give a number from lo to hi".
CLI::Validator number_from(double lo, double hi);

struct MeasureFlags {
  varex::MeasureSettings settings;
  double timeout_seconds = 300;

  void add_to(CLI::App& app);
};

// An operator's own workload: inputs, the flags and query keys it takes, its output kind (as text).
std::string workload_help(const harness::Operator& op);
nlohmann::json workload_json(const harness::Operator& op);
// `--op X` (or `--op=X`) among the arguments, for `run|sweep|tune --op X --help`.
std::optional<std::string> op_argument(int argc, char** argv);

std::vector<DeviceInfo> resolve_devices(const std::string& selector);
// The devices `op` runs on among those `selector` matches (a note on stderr for those left out); UsageError
// with the operator's reason where it runs on none of them.
std::vector<DeviceInfo> resolve_devices(const std::string& selector, const harness::Operator& op);
// At least 2^24 rows, and enough 4-byte rows to fill four times the largest last-level cache.
std::uint64_t default_rows(const std::vector<DeviceInfo>& devices);
// An integer or 2^N; `flag` names the option in errors.
std::uint64_t parse_rows(const std::string& text, const std::string& flag = "--rows");
// The running binary, which also serves as the worker process.
std::string self_executable();

// Prints rows as aligned columns.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
std::string fixed(double value, int decimals);

}  // namespace varex::cli
