#pragma once
// An operator: its parameter space, how its workloads are described, and how a workload is prepared on
// a device and executed there. Each operator's runner is written once against Engine and serves every
// backend; only the kernels differ.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/measurement.hpp"
#include "base/workload.hpp"
#include "harness/engine.hpp"
#include "variants/space.hpp"

namespace varex::harness {

// Device time of one execution of the operator's kernel sequence.
struct ExecutionTimes {
  double total_ms = 0;
  std::vector<KernelTiming> kernels;
};

struct Collected {
  double d2h_ms = 0;
  Digest digest;
  bool verified = false;
  std::string mismatch;         // where the output first differs from the reference
  Check checked = Check::Host;  // how: an output without a device check compares in full whatever is asked
};

// A prepared or bound run's side of its operator's contract (Operator::contract): the device buffers and
// scalars a kernel of another source reads and writes in place of the operator's own, by the names the
// contract declares.
struct ContractBuffers {
  std::map<std::string, DeviceBuffer*> buffers;
  std::map<std::string, std::int64_t> scalars;
  std::vector<DeviceBuffer*>
      zeroed;  // set to 0 before every execution of the other kernels (timed with them)
  // After those kernels ran: completes the output (a count read back). False where the output did not fit
  // and the run grew it (a bound join's pairs): the kernels run again on the buffers contract_buffers()
  // hands over next.
  std::function<bool()> finish;
};

// A count the kernels of a contract leave in one 32-bit device word (a join's pairs, a group-by's groups):
// zeroed before them (name it in ContractBuffers::zeroed), read back after them.
class ContractCounter {
 public:
  explicit ContractCounter(Engine& engine)
      : engine_(engine), device_(engine.allocate(4)), host_(engine.allocate_host(4)) {}
  DeviceBuffer& word() { return *device_; }
  std::uint32_t read();

 private:
  Engine& engine_;
  std::unique_ptr<DeviceBuffer> device_;
  std::unique_ptr<HostBuffer> host_;
};

// A workload prepared on one device: inputs uploaded, the host reference computed, outputs allocated.
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;
  virtual double h2d_ms() const = 0;
  // Uploads the inputs again (after a variant that failed and may have written over them).
  virtual void restore_inputs() = 0;
  virtual CompileInfo compile(const variants::Params& params) = 0;
  // Fills every output buffer with a pattern, so an unwritten output cannot pass verification.
  virtual void poison() = 0;
  virtual ExecutionTimes execute(const variants::Params& params) = 0;
  // Checks the output against the reference: downloaded and compared in full (Check::Host), or by a digest
  // computed on the device (Check::Device; harness/outputs/output.hpp).
  virtual Collected collect(Check how) = 0;
  Collected collect() { return collect(Check::Host); }
  virtual Digest reference() const = 0;
  // Bytes the operator must read and write at least (the bytes-moved model behind GB/s).
  virtual std::uint64_t bytes_moved() const = 0;
  // Bytes that one execution touches on the device; decides whether caches need flushing.
  virtual std::uint64_t working_set_bytes() const = 0;
  // The operator's CPU baseline, where it has one.
  virtual std::optional<BaselineTiming> time_baseline() { return std::nullopt; }
  // The buffers of the contract, where the operator offers one; collect() then checks what another kernel
  // wrote there as it checks the operator's own.
  virtual std::optional<ContractBuffers> contract_buffers() { return std::nullopt; }
};

struct Binding;  // harness/operators/bound_run.hpp
class BoundRun;

struct DeviceFootprint {
  std::uint64_t total = 0;    // all buffers together
  std::uint64_t largest = 0;  // the largest single buffer
};

// What an operator declares about its workloads; the command line, `varex ops`, `run --op X --help` and
// the shared checks (a flag or query key the operator does not take is refused, naming those it takes)
// are built from it, so adding an operator or a flag edits no other operator.
struct FlagDecl {
  std::string name;        // without dashes: "rows"
  std::string value_name;  // "N", "FILE", "X", …: how --help shows the value
  std::string help;
  // A flag whose value is a scale key of the workload's class (its parameter: the name, dashes as
  // underscores), and how its values compare; the other numeric parameters are the class's shape.
  std::optional<datasets::ScaleKind> scale = std::nullopt;
  // A count of an input's rows: the small instance a short tune searches divides it
  // (Operator::small_instance); other counts (a group-by's groups) it keeps.
  bool sizes_input = false;
};

struct QueryKeyDecl {
  std::string key;
  std::string help;
};

// One input relation or column: what it holds, how it is generated, what a user file looks like.
struct InputDecl {
  std::string name;         // "column", "build", "relation"
  std::string columns;      // "int32", "uint32 key + 1..3 uint32 values"
  std::string generator;    // "uniform int32, seeded"
  std::string file_format;  // "one decimal per line, or .bin little-endian int32"
  // The last input only: a binding gives it one or more times (a plan's scanned columns, one buffer each).
  bool repeated = false;
};

// How an operator's result is checked and digested (harness/outputs/).
enum class OutputKind { Bitmap, Rows, RowsMultiset, Pairs, Groups, Scalar };
std::string to_string(OutputKind kind);

struct WorkloadDecl {
  std::vector<InputDecl> inputs;
  std::vector<FlagDecl> flags;
  std::vector<QueryKeyDecl> query;
  OutputKind output = OutputKind::Bitmap;
};

// The workload flags and query of one command, as typed; typed readers throw UsageError naming the flag.
// The shared parser (check_declared) has already refused anything the operator does not declare.
struct WorkloadOptions {
  std::map<std::string, std::string> flags;  // flag name without dashes -> value
  std::map<std::string, std::string> query;  // --query key=value

  std::optional<std::string> text(std::string_view flag) const;
  // An integer or 2^N.
  std::optional<std::uint64_t> count(std::string_view flag) const;
  std::optional<double> number(std::string_view flag) const;
  std::uint64_t seed() const;  // --seed, default 42
};

// A command an operator adds to varex's command line, so that the command line names no operator. Either:
// - an alias: `expand` turns the words after the command's name into another varex command's words
//   (`varex plan run A …` is `varex run --op plan --plan A …`), throwing UsageError for words it cannot
//   take; or
// - a command of its own: `flags` as declared (each a string value; `required` or with a default), and
//   `run`, given their values, returns what to print (UsageError for a bad value).
struct CommandFlag {
  std::string name;  // without dashes
  std::string value_name;
  std::string help;
  std::string default_value;  // empty: none
  bool required = false;
};

struct OperatorCommand {
  std::string name;
  std::string summary;  // one line, for `varex help`
  std::string help;     // `varex help NAME`, `varex NAME --help`: an alias's whole help
  std::function<std::vector<std::string>(const std::vector<std::string>& words)> expand;
  std::vector<CommandFlag> flags;
  std::function<std::string(const std::map<std::string, std::string>& flags)> run;
};

// What an operator offers a kernel of another source that stands in for its own (a user operator with this
// operator's contract, docs/USER-OPERATORS.md): the workload, reference and verification stay the operator's,
// and the other kernel reads and writes the prepared run's buffers (PreparedRun::contract_buffers).
struct ContractDecl {
  std::vector<std::string> buffers;  // the buffers' names, for the other kernel's arguments
  std::vector<std::string> scalars;  // integer values of the workload, for its expressions
  std::string help;                  // the layouts, and what the kernel must write
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::string kernel_family() const = 0;
  // The hash of every source a variant may be built from: part of each variant id.
  virtual std::string sources_hash(Backend backend) const;
  // The operator's contract for a kernel of another source; none by default.
  virtual std::optional<ContractDecl> contract() const { return std::nullopt; }
  // Why the operator cannot run on `device` at all (a user's CUDA C++ kernels on an OpenCL device); empty
  // where it can. Commands leave such devices out of a selector that matches others too.
  virtual std::string device_refusal(const DeviceInfo&) const { return {}; }
  // Whether every variant moves the bytes its run counts (OperatorRun::bytes_moved): then none is faster
  // than those bytes at the copy probe's speed, and a tune stops where its best gets there
  // (TuneSettings::at_bound). Not where a variant may read less: a string comparison stops at the first
  // mismatch (str_prefix's best ran at 119% of the probe by its count).
  virtual bool moves_all_its_bytes() const { return true; }
  virtual WorkloadDecl declaration() const = 0;
  virtual variants::Space space(const variants::SpaceContext& context) const = 0;
  // The preprocessor defines that specialise the kernels for a variant on a device.
  virtual Defines defines(const variants::Params& params, const DeviceInfo& device) const = 0;
  // Throws UsageError for unknown query keys, bad values or unreadable files.
  virtual datasets::WorkloadSpec workload(const WorkloadOptions& options) const = 0;
  // What in a workload decides the best variant (datasets::WorkloadClass): "best" and profiles are kept
  // per class. The default follows the generators' conventions (datasets::default_class).
  virtual datasets::WorkloadClass workload_class(const datasets::WorkloadSpec& spec) const {
    return datasets::default_class(spec, scale_keys());
  }
  // The scale keys of the workload's class: the declared flags that are (FlagDecl::scale).
  std::vector<datasets::ScaleKey> scale_keys() const;
  // Generated rows when none are asked for, from the rows of 4-byte values that fill four times the
  // largest device cache: operators with wider rows take fewer.
  virtual std::uint64_t default_rows(std::uint64_t cache_rows) const { return cache_rows; }
  // A smaller instance of the same workload class, about `divisor` times smaller, on which a short tune
  // searches before it measures its finalists on `spec` itself (tuner/tuner.hpp); nullopt where there is
  // none (data read from files). The default divides the counts its flags declare as input sizes
  // (FlagDecl::sizes_input: rows, rows2) and keeps every other parameter (distinct keys, selectivity, skew),
  // clamping the distinct keys to the rows left.
  // Operators override it where a count decides the best variant (the hash join keeps its build side: the
  // size of the table is what its variants differ in).
  virtual std::optional<datasets::WorkloadSpec> small_instance(const datasets::WorkloadSpec& spec,
                                                               std::uint64_t divisor) const;
  // Device memory a workload needs (checked against the device before anything runs).
  virtual DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const = 0;
  virtual std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const = 0;
  // The operator's kernels on an application's device buffers (the runtime library's calls), laid out as
  // docs/RUNTIME.md says for the operator. Throws UsageError for a binding that does not fit; the default,
  // for operators that do not run there yet, says so.
  virtual std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const;
  // A binding's query as a workload's (WorkloadSpec::query), for the space of a call (space_for): each key's
  // text as a string; an operator whose space reads its query in another form (a plan's document) says so.
  virtual nlohmann::json binding_query(const Binding& binding) const;
  // What the operator makes of a workload's query before any kernel runs (the automaton of a pattern,
  // say), for the user to see beside the timings; empty where there is nothing to tell.
  virtual nlohmann::json query_plan(const datasets::WorkloadSpec&) const { return nlohmann::json::object(); }
  // The result a digest stands for, where it is a number the user asked for (an aggregate's value, the
  // average of AVG); printed as `value` beside rows and checksum. NaN where the result has no value (MIN,
  // MAX or AVG of no row): JSON null, "none" on screen.
  virtual std::optional<double> result_value(const datasets::WorkloadSpec&, const Digest&) const {
    return std::nullopt;
  }
  // Commands of the operator's own on varex's command line (the plan's `plan` and `tpch`); most have none.
  virtual std::vector<OperatorCommand> commands() const { return {}; }
};

const std::vector<const Operator*>& operators();
// Throws UsageError naming the known operators.
const Operator& find_operator(std::string_view name);

// The class of a recorded workload through its operator; nullopt for an operator this varex does not know.
std::optional<datasets::WorkloadClass> workload_class_of(const datasets::WorkloadSpec& spec);

// The variant space of `op` for `workload` on `device`: the one way every command, the tuner and varex-bench
// build it (an operator's space may depend on the workload's rows and query, as a plan's on its steps).
variants::Space space_for(const Operator& op, const DeviceInfo& device,
                          const datasets::WorkloadSpec& workload);
// The same for a call on an application's buffers (the runtime library): the binding's first input's rows and
// its query, as the operator reads it (Operator::binding_query).
variants::Space space_for(const Operator& op, const DeviceInfo& device, const Binding& binding);
// The space where no workload is at hand (`varex ops`, a profile's defaults): on a generic OpenCL GPU with
// 1024-wide work-groups and 2^20 rows, without a query.
variants::Space generic_space(const Operator& op);

// Throws UsageError for a flag or query key that `op` does not declare, naming those it does.
void check_declared(const Operator& op, const WorkloadOptions& options);

// The small instance a short tune searches on (Operator::small_instance) and how many times smaller it
// is: the largest divisor of 16, 8 and 4 that leaves it at least four times the device's last-level cache
// on the device (kSmallInstanceBytes where the cache is unknown), so that its inputs are not cache-resident
// and still fill the device (on an H200, the 2^24 x 2^28 join keeps its build side and 2^24 probe rows).
// nullopt where the operator has none, where a quarter of the workload is under that floor, or where both
// would not fit in nine tenths of the device's memory together.
inline constexpr std::uint64_t kSmallInstanceBytes = std::uint64_t{32} << 20;
struct SmallInstance {
  datasets::WorkloadSpec workload;
  std::uint64_t divisor = 0;
};
std::optional<SmallInstance> small_instance_for(const Operator& op, const datasets::WorkloadSpec& workload,
                                                const DeviceInfo& device);

// Throws UsageError when the workload cannot fit the device.
void check_fits(const Operator& op, const datasets::WorkloadSpec& spec, const DeviceInfo& device);

// The variant id: a stable hash of operator, backend, parameters and the kernel source's hash, so that
// editing a kernel makes new variants instead of mixing old timings in.
std::string variant_id(const Operator& op, Backend backend, const variants::Params& params);

}  // namespace varex::harness
