#include "cli/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <iostream>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/engine.hpp"

namespace varex::cli {

void WorkloadFlags::add_to(CLI::App& app) {
  app.add_option(
      "--input", input,
      "Input file: one integer per line, or little-endian int32 if it ends in .bin (join: the build "
      "side; group-by: key,value lines)");
  app.add_option("--input2", input2, "Second input file (join: the probe side)");
  app.add_option(
      "--rows", rows,
      "Generated rows (an integer or 2^N; default: 4x the largest device cache); join: build side");
  app.add_option("--rows2", rows2, "Generated rows of the join's probe side (default: 4 x --rows)");
  app.add_option("--distinct", distinct, "Distinct keys: the join's build side, the group-by's groups");
  app.add_option("--match-ratio", match_ratio,
                 "Share of the join's probe rows that have a partner (default 1)");
  app.add_option("--zipf", zipf, "Zipf exponent of the generated key choice (default: 0, uniform)");
  app.add_option(
      "--selectivity", selectivity,
      "Fraction of rows the generated query selects (selection: 0.5) or that carry the planted string "
      "(string operators: 0.01)");
  app.add_option("--strings", dataset, "Generated strings: ptype, pname or titles (string operators)");
  app.add_option("--plant", plant, "The planted string that sets a string workload's selectivity");
  app.add_option("--seed", seed, "Seed of the generated data")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--query", query, "Query parameter key=value (repeatable); see the operator's keys");
}

datasets::WorkloadSpec WorkloadFlags::resolve(const harness::Operator& op,
                                              const std::vector<DeviceInfo>& devices) const {
  harness::WorkloadOptions options;
  options.input = input;
  options.input2 = input2;
  if (input && !rows.empty()) throw UsageError("--rows and --input exclude each other");
  if (input2 && !rows2.empty()) throw UsageError("--rows2 and --input2 exclude each other");
  if (!input) {
    options.rows = rows.empty() ? op.default_rows(default_rows(devices)) : parse_rows(rows, "--rows");
    if (*options.rows == 0) throw UsageError("--rows 0: a generated workload needs at least one row");
  }
  if (!rows2.empty()) options.rows2 = parse_rows(rows2, "--rows2");
  if (!distinct.empty()) options.distinct = parse_rows(distinct, "--distinct");
  options.match_ratio = match_ratio;
  options.zipf = zipf;
  options.selectivity = selectivity;
  options.dataset = dataset;
  options.plant = plant;
  options.seed = seed;
  options.query = parse_assignments(query, "--query");
  return op.workload(options);
}

void MeasureFlags::add_to(CLI::App& app) {
  app.add_option("--warmup", settings.warmup, "Untimed runs after the verified one")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--min-reps", settings.min_reps, "Fewest timed repetitions")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-reps", settings.max_reps, "Most timed repetitions")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--rel-ci", settings.target_rel_ci,
                 "Stop repeating when the median's 95% interval is within this fraction of it")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--timeout", timeout_seconds, "Seconds one variant may take before it counts as hung")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  // Checked once every option is parsed: the two bounds of the repetitions must agree. A --max-reps under
  // the default --min-reps lowers it; both given the wrong way round is an error.
  app.parse_complete_callback([this, &app] {
    if (settings.min_reps <= settings.max_reps) return;
    if (app.count("--min-reps") == 0) {
      settings.min_reps = settings.max_reps;
      return;
    }
    throw UsageError("--min-reps " + std::to_string(settings.min_reps) + " is more than --max-reps " +
                     std::to_string(settings.max_reps));
  });
}

std::vector<DeviceInfo> resolve_devices(const std::string& selector) {
  return select_devices(harness::enumerate_devices(), selector);
}

std::uint64_t default_rows(const std::vector<DeviceInfo>& devices) {
  std::uint64_t cache = 0;
  for (const DeviceInfo& d : devices) cache = std::max(cache, d.cache_bytes);
  return std::max<std::uint64_t>(1ULL << 24, std::bit_ceil(std::max<std::uint64_t>(cache, 1)));
}

std::uint64_t parse_rows(const std::string& text, const std::string& flag) {
  const std::string t(trim(text));
  std::int64_t value;
  if (t.rfind("2^", 0) == 0) {
    const std::int64_t exponent = parse_int(t.substr(2), flag);
    if (exponent < 0 || exponent > 40)
      throw UsageError(flag + ": exponent " + std::to_string(exponent) + " is out of range");
    value = std::int64_t{1} << exponent;
  } else {
    value = parse_int(t, flag);
  }
  if (value < 0) throw UsageError(flag + ": " + t + " is negative");
  return static_cast<std::uint64_t>(value);
}

std::string self_executable() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw RuntimeError("cannot find the varex executable through /proc/self/exe");
  return std::string(buffer, static_cast<std::size_t>(n));
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  }
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::cout << line << "\n";
  };
  print(header);
  for (const auto& row : rows) print(row);
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace varex::cli
