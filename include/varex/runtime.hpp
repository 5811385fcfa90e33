#pragma once
// varex's operators inside an application (C++17): the kernels varex tunes, run on the application's own
// device buffers with the variant its tuning profile chose for this device and workload.
//
//   varex::Runtime rt = varex::Runtime::attach_opencl(context, device, queue, {"tuned.json"});
//   varex::Result bits = rt.select_range({varex::Buffer::opencl(column, bytes), rows}, 10, 99);
//   rt.last_choice();  // which variant ran, which level of the profile answered
//
// Inputs are the application's buffers (cl_mem of the runtime's context, or CUdeviceptr of its CUDA
// context) in the layouts docs/RUNTIME.md gives per operator; results stay on the device, owned by a Result.
// Every failure is a varex::Error naming the problem. A Runtime is used by one thread at a time.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "varex/profile.hpp"

#if defined(__GNUC__)
#define VAREX_API __attribute__((visibility("default")))
#else
#define VAREX_API
#endif

namespace varex {

// A bad call (a null buffer, a size that does not match, an unknown operator, query key or parameter), a
// device that cannot be opened, a kernel that does not build or fails.
class VAREX_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A device buffer of the application: a cl_mem or a CUdeviceptr, and its size in bytes.
struct Buffer {
  std::uint64_t handle = 0;
  std::size_t bytes = 0;

  static Buffer opencl(const void* mem, std::size_t bytes) {
    return {static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(mem)), bytes};
  }
  static Buffer cuda(std::uint64_t device_pointer, std::size_t bytes) { return {device_pointer, bytes}; }
  // The buffer as a cl_mem (cast it: `static_cast<cl_mem>(b.opencl_mem())`).
  void* opencl_mem() const { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(handle)); }
};

// One input of an operator: its buffer and its rows (tuples, or strings of a string column).
struct Input {
  Buffer buffer;
  std::uint64_t rows = 0;
};

// What a result holds (docs/RUNTIME.md gives each layout).
enum class ResultKind { Bitmap, Rows, RowsMultiset, Pairs, Groups, Scalar };
VAREX_API const char* to_string(ResultKind kind);

// A result on the device, freed with the last copy of this object (it keeps its device alive).
class VAREX_API Result {
 public:
  Result();
  ~Result();
  Result(const Result&);
  Result& operator=(const Result&);
  Result(Result&&) noexcept;
  Result& operator=(Result&&) noexcept;

  ResultKind kind() const;
  // Tuples, pairs or groups; for a bitmap the rows of its input (one bit each); 1 for a scalar.
  std::uint64_t rows() const;
  // The result's device buffers, in the order docs/RUNTIME.md gives for the operator (one for most; a
  // relation's columns or the groups' keys and aggregates are several). Each holds at least what rows()
  // needs. An index past buffer_count() (any index of a default-constructed Result) is an Error.
  std::size_t buffer_count() const;
  Buffer buffer(std::size_t index = 0) const;
  // Copies the first `bytes` of buffer `index` to host memory and waits for the copy.
  void download(void* host, std::size_t bytes, std::size_t index = 0) const;

  struct Impl;
  explicit Result(std::shared_ptr<Impl> impl);

 private:
  std::shared_ptr<Impl> impl_;
};

// What the last call ran and why.
struct Choice {
  std::string op;
  std::string variant;     // varex's variant id (as in `varex best`, profiles and databases)
  profile::Params params;  // the variant's parameters as text
  profile::Level level = profile::Level::Default;  // which level of the profile's fallback chain answered
  bool exact_class = false;                        // the profile's entry is of the call's own workload class
  bool pinned = false;              // parameters the application pinned (Runtime::override_parameters)
  std::string note;                 // why the profile's choice did not run, where it did not; else empty
  bool exploring = false;           // online adaptation tried a candidate in this call
  std::optional<double> device_ms;  // the kernels' device time, with Options::time_calls on a timed queue
  std::vector<std::pair<std::string, double>> kernels;  // with device_ms: each kernel's label and time
};

struct Options {
  // A profile written by `varex export --format json`; empty: the operators' default variants. A file that
  // cannot be read or is not a profile is an Error.
  std::string profile;
  // Which of the profile's entries the calls run: the best by "time" (the median kernel time), "energy" (per
  // repetition) or "edp" (energy x time), as `varex tune --objective` tuned them. A class the profile holds
  // no entry of this objective for runs the defaults. Online adaptation learns from device times, so it goes
  // only with "time" (an Error otherwise), as does any other word.
  std::string objective = "time";
  // Device time of each call in last_choice() (device events; on OpenCL, only where the queue was made with
  // CL_QUEUE_PROFILING_ENABLE).
  bool time_calls = false;
  // Online adaptation: a call whose workload class the profile does not hold exactly (and whose parameters
  // are not pinned) tunes itself over the application's calls of that class, searched by the tuner's strategy
  // `adapt_strategy` (any of `varex tune --strategy`'s; "local", a first-improvement local search from where
  // the calls start, by default). Candidates: the defaults, the profile's nearest entry and its runners-up,
  // then what the strategy proposes that can run on the call's buffers. A candidate's first run is its
  // evaluation, which the strategy learns of before it proposes the next.
  // A candidate's first result is compared with the reference's on the same inputs (the call returns the
  // reference's then) before its times count; one that differs is never run again. The reference is the
  // defaults, then the fastest candidate that agreed with them. At most `explore_share` of
  // a class's calls, and of their device time beyond the fastest's, try a candidate that is not the fastest
  // so far; the others run the fastest by median. Needs device times (on OpenCL a queue with
  // CL_QUEUE_PROFILING_ENABLE). Runtime::adaptation() reports, write_learned() records.
  bool adapt = false;
  double explore_share = 0.1;
  std::string adapt_strategy = "local";
  // Device memory the calls allocate (scratch, the results' arrays) is kept when released and reused by
  // later calls, up to this share of the device's memory (a caching allocator, as CUB's and RMM's): a call
  // then allocates nothing and its kernels meet the addresses of the last call's. Reuse follows the
  // runtime's queue or stream order, so a result's buffers must not be used on another queue or stream
  // after the Result is destroyed. 0 turns it off. Runtime::release_cached_memory() frees what is kept.
  double cached_memory_share = 0.25;
};

// What online adaptation did for one operator and workload class.
struct Adaptation {
  std::string op;
  std::string workload;  // the class, as `varex best` describes it
  std::uint64_t calls = 0;
  std::uint64_t exploring_calls = 0;
  std::size_t candidates = 0, verified = 0, rejected = 0;
  std::string settled_variant;  // the fastest verified candidate by median
  profile::Params settled_params;
  double settled_ms = 0;
  double regret_ms = 0;  // the calls' device time above settled_ms, summed over all calls
  // What the exploring calls took beyond a call of the fastest candidate at the time (held to explore_share
  // of total_ms).
  double exploring_ms = 0;
  double total_ms = 0;  // the calls' device time, the checking runs included
  struct Tried {
    std::string variant;
    std::size_t runs = 0;
    double median_ms = 0;  // of its runs (0 without any)
    bool verified = false, rejected = false;
    std::string why;  // of a rejection
  };
  std::vector<Tried> tried;  // every candidate, the defaults first
};

class VAREX_API Runtime {
 public:
  // A device by varex's id, as `varex devices` lists them: "cuda:0", "ocl:1:0". The runtime makes its own
  // context and queue (OpenCL) or takes the device's primary context and a stream of its own (CUDA).
  static Runtime open(const std::string& device_id, const Options& options = {});
  // The application's OpenCL objects (cl_context, cl_device_id, cl_command_queue; retained while the runtime
  // lives): calls run on that queue, in order with the application's own commands.
  static Runtime attach_opencl(void* context, void* device, void* queue, const Options& options = {});
  // The application's CUDA context and stream (CUcontext, CUstream; a null stream is the default stream).
  static Runtime attach_cuda(void* context, void* stream, const Options& options = {});

  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;
  ~Runtime();

  // The device as profiles name it, derived from the device handle.
  const profile::DeviceKey& device_key() const;
  // varex's id of the device ("ocl:0:0").
  std::string device_id() const;
  // The native objects the calls run on: what an application that let Runtime::open make them needs to
  // hand the runtime buffers of its own (made in this context) and to order its own work with the calls.
  // OpenCL: context, device and queue are the cl_context, cl_device_id and cl_command_queue (made with
  // CL_QUEUE_PROFILING_ENABLE by open); CUDA: the CUcontext and CUstream, and device null. They are the
  // runtime's: valid while it (or a Result of it) lives; retain them (clRetainContext, …) to keep them
  // longer. An attached runtime gives back the application's own objects.
  struct Native {
    void* context = nullptr;
    void* device = nullptr;
    void* queue = nullptr;
  };
  Native native() const;
  // The operators this runtime knows.
  static std::vector<std::string> operators();

  void load_profile(const std::string& path);
  void set_profile(profile::Profile profile);
  // Pins parameters of `op` for later calls (CLBlast's OverrideParameters): tunables not named keep their
  // defaults. An Error names a tunable or value the operator's space does not have.
  void override_parameters(const std::string& op, const profile::Params& params);
  void clear_overrides(const std::string& op);

  // The generic call: any operator, its inputs as it declares them (`varex ops`; layouts in
  // docs/RUNTIME.md), its query keys as `varex run --query key=value` takes them.
  Result run(const std::string& op, const std::vector<Input>& inputs,
             const std::map<std::string, std::string>& query = {});

  // Typed calls.
  // Rows of an int32 column with lo <= value <= hi (a bound left out: none), or outside it with `negate`:
  // a bitmap (bit r % 8 of byte r / 8).
  Result select_range(const Input& column, std::optional<std::int32_t> lo, std::optional<std::int32_t> hi,
                      bool negate = false);
  // Equi-join of two int32 key columns by hashing: pairs (build row, probe row), buffers 0 and 1 (uint32
  // row ids), rows() pairs in any order.
  Result hash_join(const Input& build, const Input& probe);
  // Group-by of int32 keys over int32 values: per group (rows() of them, in any order) its key, row count,
  // sum (int64), min, max and one row of the group (buffers 0 to 5); buffer 6 gives each input row's group.
  Result group_by(const Input& keys, const Input& values);
  // Sorts a relation of tuples of uint32 words (a key and `values` values, 1 to 3, packed tuple by tuple) by
  // the whole tuple, stably: one buffer of the sorted tuples.
  Result sort(const Input& relation, unsigned values = 1);
  // Records of int32 attributes stored column after column (attribute c of row r at word c * rows + r; the
  // buffer's size says how many attributes): a bitmap of the rows a conjunctive predicate keeps, e.g.
  // "(a0 < 10 or a1 >= a2) and a3 != 7".
  Result cnf_filter(const Input& records, const std::string& where);
  // count, sum, avg, min or max of attribute `attribute` over the rows `where` keeps (empty: all): a scalar
  // of two uint64 words, the rows aggregated and the value (as int64; avg gives the sum).
  Result aggregate(const Input& records, const std::string& function, unsigned attribute = 0,
                   const std::string& where = {});
  // The k-th largest value (k = 1: the maximum) of an attribute over the rows `where` keeps: the same scalar.
  Result kth_largest(const Input& records, std::uint64_t k, unsigned attribute = 0,
                     const std::string& where = {});
  // A string column (rows + 1 int32 offsets, counted from the buffer's start, then the bytes; row r is bytes
  // [offsets[r], offsets[r + 1])): a bitmap of the rows that match a LIKE pattern (% any run, _ any byte,
  // backslash escapes) or a regular expression.
  Result like(const Input& strings, const std::string& pattern);
  Result regex(const Input& strings, const std::string& pattern);

  const Choice& last_choice() const;

  // Frees the device memory kept for later calls (Options::cached_memory_share), for an application that
  // needs it; an allocation the device refuses does this before trying again.
  void release_cached_memory();
  std::uint64_t cached_memory_bytes() const;

  // Online adaptation's state per operator and workload class (Options::adapt).
  std::vector<Adaptation> adaptation() const;
  // Records what adaptation measured in a varex database (made if missing): per class, a session of kind
  // tune and strategy online whose verified candidates are re-measurements, so that `varex best`, `merge`
  // and `export` read the settled variants as their bests.
  void write_learned(const std::string& database) const;

  struct Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace varex
