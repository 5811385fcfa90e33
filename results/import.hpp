#pragma once
// Other tuners' recorded measurements, read as varex's (`varex import`): Kernel Tuner's cache files (the
// `.json` of `tune_kernel(..., cache=...)`, schema 1.0.0) and T4 results files. What is read here is only
// the file: which operator and workload the measurements belong to, and whether a configuration is a
// variant of its space, the command decides (cli/commands/import.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/measurement.hpp"

namespace varex::results {

struct ImportedMeasurement {
  nlohmann::json configuration;  // parameter name -> value, as the file has it
  varex::Measurement m;          // status, samples (ms), compile and wall time; never verified by varex
};

struct ImportedRecords {
  std::string format;       // "kt-cache" or "t4"
  std::string device_name;  // the cache's device_name; empty where the file does not say
  std::string kernel_name;
  std::vector<std::uint64_t> problem_size;
  std::vector<ImportedMeasurement> measurements;
};

// UsageError (one line naming the file) where the file cannot be read or is not of the format. A Kernel
// Tuner cache that a killed run left without its closing braces is read as Kernel Tuner reads it.
ImportedRecords read_kt_cache(const std::string& path);
ImportedRecords read_t4(const std::string& path);

}  // namespace varex::results
