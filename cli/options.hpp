#pragma once
// Option groups shared by several commands, and their resolution into harness types.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/device.hpp"
#include "harness/measure.hpp"
#include "harness/operators/operator.hpp"

namespace varex::cli {

struct WorkloadFlags {
  std::optional<std::string> input;
  std::optional<std::string> input2;
  std::string rows;  // "" = default; an integer or 2^N
  std::string rows2;
  std::string distinct;
  std::optional<double> match_ratio;
  std::optional<double> zipf;
  std::optional<double> selectivity;
  std::optional<std::string> dataset;
  std::optional<std::string> plant;
  std::uint64_t seed = 42;
  std::vector<std::string> query;

  void add_to(CLI::App& app);
  // The workload for `op`; generated row counts default to four times the largest device cache.
  datasets::WorkloadSpec resolve(const harness::Operator& op, const std::vector<DeviceInfo>& devices) const;
};

struct MeasureFlags {
  varex::MeasureSettings settings;
  double timeout_seconds = 300;

  void add_to(CLI::App& app);
};

std::vector<DeviceInfo> resolve_devices(const std::string& selector);
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
