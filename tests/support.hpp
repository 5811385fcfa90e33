#pragma once
// Shared fixtures: the OpenCL CPU device (PoCL), scratch files and running the varex binary.
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/device.hpp"
#include "harness/engine.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/operator.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/common/relations/relations.hpp"

namespace varex::test {

// The first OpenCL CPU device; the test fails (not skips) without one, since CI installs PoCL.
const DeviceInfo& cpu_device();
harness::Engine& cpu_engine();

// Prepares `spec` on the CPU device, checks the host reference against `want` (computed independently by
// the test), then runs every variant of the operator's space on the device that `pins` and `pick` leave
// (pick: a subset of the enumerated points, all by default) and checks each output in full.
void verify_variants(
    const harness::Operator& op, const datasets::WorkloadSpec& spec, const varex::Digest& want,
    const std::map<std::string, std::string>& pins,
    const std::function<std::vector<variants::Params>(std::vector<variants::Params>)>& pick = {});

// Points of `points` in which every pair of values of the `knobs` occurs together at least once (greedy
// pairwise covering): every interplay of two knobs is exercised with a fraction of the programs an
// exhaustive product would compile.
std::vector<variants::Params> pairwise(const std::vector<variants::Params>& points,
                                       const std::vector<std::string>& knobs);

// Runs one variant of a bound run (an application's buffers) and hands over its result; the variant must not
// be refused.
harness::DeviceResult run_bound(harness::BoundRun& run, const variants::Params& params);

// The first `count` values of type T in a device buffer of `engine`.
template <typename T>
std::vector<T> download(harness::Engine& engine, const harness::DeviceBuffer& buffer, std::uint64_t count) {
  std::vector<T> out(count);
  if (count == 0) return out;
  auto host = engine.allocate_host(count * sizeof(T));
  engine.download(*host, buffer, count * sizeof(T))->elapsed_ms();
  std::memcpy(out.data(), host->data(), count * sizeof(T));
  return out;
}

// The names of every registered operator, for suites parametrised over all of them.
std::vector<std::string> operator_names();

// A fresh directory under the test's temporary root.
std::string scratch_dir(const std::string& name);

// `varex VERB --op selection --device <the CPU device> --db DB --rows ROWS` and then `more`: the command line
// the CLI's tests of sessions start from.
std::vector<std::string> selection_command(const std::string& verb, const std::string& db,
                                           const std::string& rows, const std::vector<std::string>& more);

// Writes a relation as a user file: key,value[,value...] lines; returns `path`.
std::string write_relation(const datasets::Relation& relation, const std::string& path);
// Keys in runs whose lengths cycle through `lengths`; run j's key is j * 2654435761 (a bijection, so
// neighbouring runs differ, and the keys are not sorted). Values uniform, or all `value` when given.
datasets::Relation runs_relation(std::uint64_t rows, std::uint32_t values,
                                 const std::vector<std::uint64_t>& lengths, std::uint32_t seed,
                                 std::optional<std::uint32_t> value = std::nullopt);
// Keys drawn from {0, 1, 2}: short runs, and equal keys that are not consecutive. Values uniform.
datasets::Relation small_alphabet(std::uint64_t rows, std::uint32_t values, std::uint32_t seed);
// `op`'s workload on `relation` written as a user file (in a scratch directory named after the operator and
// `name`), with `query`.
datasets::WorkloadSpec relation_file_workload(const harness::Operator& op, const datasets::Relation& relation,
                                              const std::string& name,
                                              const std::map<std::string, std::string>& query = {});
// Writes records as a user file: a0,a1,… lines; returns `path`.
std::string write_records(const datasets::AttributeTable& table, const std::string& path);

// A file's bytes ("" when it cannot be read).
std::string slurp(const std::string& path);
// The integer the SQL query's first row starts with, in the database at `db` (0 when there is no file).
int count_where(const std::string& db, const std::string& sql);

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};
// Runs the varex binary with `args` (no shell), capturing its output.
CommandResult run_varex(const std::vector<std::string>& args);

// Starts the varex binary in the background; `finish` waits for it.
struct Background {
  int pid = -1;
  std::string out_path, err_path;
  CommandResult finish();
};
Background start_varex(const std::vector<std::string>& args);

}  // namespace varex::test
