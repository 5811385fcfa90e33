// varex::Runtime: a call binds the operator's kernels to the caller's buffers, chooses the variant
// (runtime/variant_choice), compiles it through the engine's caches (the same disk cache as `varex`) and
// runs it on the caller's queue or stream. Errors of every layer leave as varex::Error.
#include "varex/runtime.hpp"

#include <mutex>

#include "base/errors.hpp"
#include "base/stats.hpp"
#include "harness/backends/opencl_engine.hpp"
#include "harness/kernel_source.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/install.hpp"
#include "results/export.hpp"
#include "results/store.hpp"
#include "runtime/adaptation.hpp"
#include "runtime/variant_choice.hpp"
#include "varex/profile_json.hpp"
#ifdef VAREX_HAVE_CUDA
#include "harness/backends/cuda_engine.hpp"
#endif

namespace varex {

namespace {

void install_operators_once() {
  static std::once_flag once;
  std::call_once(once, [] { operators::install(); });
}

// Runs `body`, turning whatever it throws into varex::Error.
template <class Body>
auto guarded(Body body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

ResultKind result_kind(harness::OutputKind kind) {
  switch (kind) {
    case harness::OutputKind::Bitmap:
      return ResultKind::Bitmap;
    case harness::OutputKind::Rows:
      return ResultKind::Rows;
    case harness::OutputKind::RowsMultiset:
      return ResultKind::RowsMultiset;
    case harness::OutputKind::Pairs:
      return ResultKind::Pairs;
    case harness::OutputKind::Groups:
      return ResultKind::Groups;
    case harness::OutputKind::Scalar:
      return ResultKind::Scalar;
  }
  return ResultKind::Rows;
}

// The caller's host memory as the engine's download takes it.
class HostView final : public harness::HostBuffer {
 public:
  HostView(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {}
  void* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* data_;
  std::size_t bytes_;
};

}  // namespace

const char* to_string(ResultKind kind) {
  switch (kind) {
    case ResultKind::Bitmap:
      return "bitmap";
    case ResultKind::Rows:
      return "rows";
    case ResultKind::RowsMultiset:
      return "rows_multiset";
    case ResultKind::Pairs:
      return "pairs";
    case ResultKind::Groups:
      return "groups";
    case ResultKind::Scalar:
      return "scalar";
  }
  return "rows";
}

// ---- Result ----

struct Result::Impl {
  std::shared_ptr<harness::Engine> engine;  // outlives the buffer
  harness::DeviceResult result;

  // Buffer `index` of `result`; an Error naming the index and the count where it has none (a default
  // Result has none). `what` names the call.
  static const harness::DeviceBuffer& at(const Result& result, std::size_t index, const char* what);
};

Result::Result() = default;
Result::~Result() = default;
Result::Result(const Result&) = default;
Result& Result::operator=(const Result&) = default;
Result::Result(Result&&) noexcept = default;
Result& Result::operator=(Result&&) noexcept = default;
Result::Result(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

ResultKind Result::kind() const {
  return impl_ ? result_kind(impl_->result.kind) : ResultKind::Rows;
}
std::uint64_t Result::rows() const {
  return impl_ ? impl_->result.rows : 0;
}

std::size_t Result::buffer_count() const {
  return impl_ ? impl_->result.buffers.size() : 0;
}

const harness::DeviceBuffer& Result::Impl::at(const Result& result, std::size_t index, const char* what) {
  if (!result.impl_ || index >= result.impl_->result.buffers.size())
    throw Error(std::string(what) + " of buffer " + std::to_string(index) + " of a result of " +
                std::to_string(result.buffer_count()) + " buffers");
  return *result.impl_->result.buffers[index];
}

Buffer Result::buffer(std::size_t index) const {
  const harness::DeviceBuffer& b = Impl::at(*this, index, "Result::buffer");
  return {impl_->engine->handle(b), b.bytes()};
}

void Result::download(void* host, std::size_t bytes, std::size_t index) const {
  guarded([&] {
    if (bytes == 0) return;
    const harness::DeviceBuffer& b = Impl::at(*this, index, "download");
    if (!host) throw UsageError("download into a null pointer");
    if (bytes > b.bytes())
      throw UsageError("download of " + std::to_string(bytes) + " bytes from a result buffer of " +
                       std::to_string(b.bytes()));
    HostView view(host, bytes);
    impl_->engine->download(view, b, bytes)->elapsed_ms();
  });
}

// ---- Runtime ----

// Online adaptation of one operator and workload class: the tuner and what write_learned records.
struct Adapting {
  std::string op;
  datasets::WorkloadSpec workload;  // the calls as a workload of generator "application"
  datasets::WorkloadClass workload_class;
  runtime::ClassTuner tuner;
};

struct Runtime::Impl {
  std::shared_ptr<harness::Engine> engine;
  profile::DeviceKey key;
  Options options;
  std::optional<profile::Profile> profile;
  std::map<std::string, profile::Params> pinned;
  std::map<std::string, Adapting> adapting;  // by operator and class id
  Choice last;

  Adapting& adapting_for(const harness::Operator& op, const variants::Space& space,
                         const harness::BoundRun& run, const harness::Binding& binding,
                         const runtime::VariantChoice& chosen);
};

namespace {

// Whether `params` is a variant of `space` that can run on the call's buffers.
bool runnable(const variants::Space& space, const harness::BoundRun& run, const variants::Params& params) {
  return space.valid(params) && run.refuses(params).empty();
}

}  // namespace

Adapting& Runtime::Impl::adapting_for(const harness::Operator& op, const variants::Space& space,
                                      const harness::BoundRun& run, const harness::Binding& binding,
                                      const runtime::VariantChoice& chosen) {
  const datasets::WorkloadClass workload_class = run.workload_class();
  const std::string key = op.name() + "|" + workload_class.id();
  if (const auto it = adapting.find(key); it != adapting.end()) return it->second;
  // The defaults (the reference every candidate's first result is compared with), where the calls start and
  // its runners-up, those of them that can run on these buffers; then what the strategy proposes.
  std::vector<variants::Params> start{runtime::call_defaults(space, run)};
  std::size_t first = 0;
  for (const variants::Params& p : chosen.runners_up)
    if (runnable(space, run, p)) start.push_back(p);
  if (runnable(space, run, chosen.params)) {
    first = 1;
    start.insert(start.begin() + 1, chosen.params);
  }
  const Backend backend = engine->device().backend;
  runtime::ClassTuner tuner(
      space, start, first, options.adapt_strategy, options.explore_share,
      [&op, backend](const variants::Params& p) { return harness::variant_id(op, backend, p); });
  datasets::WorkloadSpec workload;
  workload.op = op.name();
  workload.generator = "application";
  workload.params = {{"rows", binding.rows.empty() ? 0 : binding.rows[0]}};
  if (binding.rows.size() > 1) workload.params["rows2"] = binding.rows[1];
  workload.query = binding.query;
  return adapting.emplace(key, Adapting{op.name(), workload, workload_class, std::move(tuner)}).first->second;
}

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;
Runtime::~Runtime() = default;

namespace {

Runtime::Impl* fill(Runtime::Impl* impl, std::unique_ptr<harness::Engine> engine, const Options& options) {
  impl->engine = std::move(engine);
  impl->key = results::profile_device(impl->engine->device());
  impl->options = options;
  for (const auto& [name, share] : {std::pair{"explore_share", options.explore_share},
                                    std::pair{"cached_memory_share", options.cached_memory_share}}) {
    if (!(share >= 0 && share <= 1))
      throw UsageError(std::string("Options::") + name + " must lie between 0 and 1, got " +
                       std::to_string(share));
  }
  objective_from_string(options.objective, "Options::objective");  // UsageError for another word
  try {
    tuner::check_strategy_name(options.adapt_strategy);
  } catch (const UsageError& e) {
    throw UsageError(std::string("Options::adapt_strategy: ") + e.what());
  }
  if (options.adapt && options.objective != "time")
    throw UsageError("Options::adapt learns from device times: it cannot tune for the objective " +
                     options.objective);
  impl->engine->set_buffer_pool(static_cast<std::size_t>(
      options.cached_memory_share * static_cast<double>(impl->engine->device().global_mem)));
  if (!options.profile.empty()) impl->profile = profile::load_profile_file(options.profile);
  return impl;
}

}  // namespace

Runtime Runtime::open(const std::string& device_id, const Options& options) {
  return guarded([&] {
    install_operators_once();
    for (const DeviceInfo& device : harness::enumerate_devices()) {
      if (device.id != device_id) continue;
      auto impl = std::make_unique<Impl>();
      fill(impl.get(), harness::open_engine(device), options);
      return Runtime(std::move(impl));
    }
    throw UsageError("no device " + device_id + " (`varex devices` lists them)");
  });
}

Runtime Runtime::attach_opencl(void* context, void* device, void* queue, const Options& options) {
  return guarded([&] {
    install_operators_once();
    auto impl = std::make_unique<Impl>();
    fill(impl.get(), harness::attach_opencl_engine(context, device, queue), options);
    return Runtime(std::move(impl));
  });
}

Runtime Runtime::attach_cuda(void* context, void* stream, const Options& options) {
  return guarded([&] {
    install_operators_once();
#ifdef VAREX_HAVE_CUDA
    auto impl = std::make_unique<Impl>();
    fill(impl.get(), harness::attach_cuda_engine(context, stream), options);
    return Runtime(std::move(impl));
#else
    (void)context;
    (void)stream;
    (void)options;
    throw UsageError("this varex runtime was built without CUDA");
#endif
  });
}

const profile::DeviceKey& Runtime::device_key() const {
  return impl_->key;
}
std::string Runtime::device_id() const {
  return impl_->engine->device().id;
}
Runtime::Native Runtime::native() const {
  const harness::Engine::NativeObjects objects = impl_->engine->native_objects();
  return {objects.context, objects.device, objects.queue};
}

std::vector<std::string> Runtime::operators() {
  install_operators_once();
  std::vector<std::string> names;
  for (const harness::Operator* op : harness::operators()) names.push_back(op->name());
  return names;
}

void Runtime::load_profile(const std::string& path) {
  guarded([&] { impl_->profile = profile::load_profile_file(path); });
}

void Runtime::set_profile(profile::Profile profile) {
  impl_->profile = std::move(profile);
}

void Runtime::override_parameters(const std::string& op, const profile::Params& params) {
  guarded([&] {
    const harness::Operator& found = harness::find_operator(op);
    harness::Binding no_call;
    no_call.rows = {std::uint64_t{1} << 20};
    const variants::Space space = harness::space_for(found, impl_->engine->device(), no_call);
    // Names and values are checked here; constraints that depend on the call's rows, at the call.
    space.with_settings(space.defaults(), {params.begin(), params.end()});
    impl_->pinned[op] = params;
  });
}

void Runtime::clear_overrides(const std::string& op) {
  impl_->pinned.erase(op);
}

Result Runtime::run(const std::string& op_name, const std::vector<Input>& inputs,
                    const std::map<std::string, std::string>& query) {
  return guarded([&] {
    const harness::Operator& op = harness::find_operator(op_name);
    harness::Engine& engine = *impl_->engine;
    std::vector<std::unique_ptr<harness::DeviceBuffer>> borrowed;
    harness::Binding binding;
    binding.query = query;
    for (const Input& input : inputs) {
      if (!input.buffer.handle) {
        throw UsageError(op_name + ": input " + std::to_string(borrowed.size()) + " is a null buffer");
      }
      borrowed.push_back(engine.borrow(input.buffer.handle, input.buffer.bytes));
      binding.inputs.push_back(borrowed.back().get());
      binding.rows.push_back(input.rows);
    }
    std::unique_ptr<harness::BoundRun> bound = op.bind(engine, binding);
    const variants::Space space = harness::space_for(op, engine.device(), binding);
    const auto pin = impl_->pinned.find(op_name);
    const runtime::VariantChoice chosen = runtime::choose_variant(
        op, engine.device(), space, *bound, impl_->profile ? &*impl_->profile : nullptr,
        pin == impl_->pinned.end() ? std::nullopt : std::optional<profile::Params>(pin->second),
        impl_->options.objective);

    // What runs: the chosen variant, or with adaptation (a class the profile does not hold exactly, nothing
    // pinned, device times to learn from) the tuner's pick.
    const bool adapt = impl_->options.adapt && !chosen.pinned && !chosen.exact_class && engine.timed();
    Adapting* adapting = adapt ? &impl_->adapting_for(op, space, *bound, binding, chosen) : nullptr;
    const runtime::ClassTuner::Call call =
        adapting
            ? adapting->tuner.plan_call([&](const variants::Params& p) { return runnable(space, *bound, p); })
            : runtime::ClassTuner::Call{};
    const auto execute = [&](const variants::Params& params) {
      bound->compile(params);
      return bound->execute(params);
    };

    variants::Params ran = chosen.params;
    std::string variant = chosen.variant;
    harness::ExecutionTimes times;
    harness::DeviceResult result;
    if (!adapting) {
      times = execute(ran);
      result = bound->take_result();
    } else {
      // The call returns the planned candidate's result; an unchecked candidate runs after it on the same
      // inputs and is compared with it.
      const runtime::Candidate& returned = adapting->tuner.candidates()[call.returns];
      ran = returned.params;
      variant = returned.variant;
      times = execute(ran);
      result = bound->take_result();
      std::optional<runtime::ClassTuner::Check> check;
      if (call.checks) {
        check.emplace();
        try {
          const harness::ExecutionTimes checked = execute(adapting->tuner.candidates()[*call.checks].params);
          check->ms = checked.total_ms;
          check->why = runtime::result_difference(engine, result, bound->take_result());
        } catch (const harness::CompileError& e) {
          check->why = e.what();
        } catch (const harness::LaunchError& e) {
          if (e.fatal()) throw;
          check->why = e.what();
        }
      }
      adapting->tuner.finish_call(call, times.total_ms, check);
    }

    Choice& last = impl_->last;
    last = Choice{};
    last.op = op_name;
    last.variant = variant;
    for (const auto& [name, value] : ran) last.params[name] = variants::to_string(value);
    last.level = chosen.level;
    last.exact_class = chosen.exact_class;
    last.pinned = chosen.pinned;
    last.note = chosen.note;
    last.exploring = call.explore;
    if (impl_->options.time_calls && engine.timed()) {
      last.device_ms = times.total_ms;
      for (const KernelTiming& k : times.kernels) last.kernels.emplace_back(k.kernel, k.ms);
    }

    auto handed = std::make_shared<Result::Impl>();
    handed->engine = impl_->engine;
    handed->result = std::move(result);
    return Result(std::move(handed));
  });
}

void Runtime::release_cached_memory() {
  impl_->engine->release_cached_memory();
}

std::uint64_t Runtime::cached_memory_bytes() const {
  return impl_->engine->cached_memory_bytes();
}

Result Runtime::select_range(const Input& column, std::optional<std::int32_t> lo,
                             std::optional<std::int32_t> hi, bool negate) {
  std::map<std::string, std::string> query;
  if (lo) query["lo"] = std::to_string(*lo);
  if (hi) query["hi"] = std::to_string(*hi);
  if (negate) query["negate"] = "true";
  return run("selection", {column}, query);
}

Result Runtime::hash_join(const Input& build, const Input& probe) {
  return run("hashjoin", {build, probe});
}

Result Runtime::group_by(const Input& keys, const Input& values) {
  return run("groupby", {keys, values});
}

Result Runtime::sort(const Input& relation, unsigned values) {
  return run("ra_sort", {relation}, {{"values", std::to_string(values)}});
}

Result Runtime::cnf_filter(const Input& records, const std::string& where) {
  return run("cnf_filter", {records}, {{"where", where}});
}

namespace {

std::map<std::string, std::string> attribute_query(unsigned attribute, const std::string& where) {
  std::map<std::string, std::string> query{{"attr", "a" + std::to_string(attribute)}};
  if (!where.empty()) query["where"] = where;
  return query;
}

}  // namespace

Result Runtime::aggregate(const Input& records, const std::string& function, unsigned attribute,
                          const std::string& where) {
  auto query = attribute_query(attribute, where);
  query["fn"] = function;
  return run("aggregate", {records}, query);
}

Result Runtime::kth_largest(const Input& records, std::uint64_t k, unsigned attribute,
                            const std::string& where) {
  auto query = attribute_query(attribute, where);
  query["k"] = std::to_string(k);
  return run("kth_largest", {records}, query);
}

Result Runtime::like(const Input& strings, const std::string& pattern) {
  return run("str_like", {strings}, {{"pattern", pattern}});
}

Result Runtime::regex(const Input& strings, const std::string& pattern) {
  return run("regex", {strings}, {{"pattern", pattern}});
}

std::vector<Adaptation> Runtime::adaptation() const {
  std::vector<Adaptation> out;
  for (const auto& [key, a] : impl_->adapting) {
    const runtime::ClassReport r = a.tuner.report();
    const runtime::Candidate& settled = a.tuner.candidates()[r.settled];
    Adaptation report;
    report.op = a.op;
    report.workload = a.workload_class.describe();
    report.calls = r.calls;
    report.exploring_calls = r.exploring_calls;
    report.candidates = r.candidates;
    report.verified = r.verified;
    report.rejected = r.rejected;
    report.settled_variant = settled.variant;
    report.settled_ms = r.settled_ms;
    report.regret_ms = r.regret_ms;
    report.exploring_ms = r.exploring_ms;
    report.total_ms = r.total_ms;
    for (const auto& [name, value] : settled.params) report.settled_params[name] = variants::to_string(value);
    for (const runtime::Candidate& c : a.tuner.candidates())
      report.tried.push_back(
          {c.variant, c.ms.size(), c.ms.empty() ? 0 : c.median(), c.verified, c.rejected, c.why});
    out.push_back(std::move(report));
  }
  return out;
}

void Runtime::write_learned(const std::string& database) const {
  guarded([&] {
    results::Store store(database);
    const DeviceInfo& device = impl_->engine->device();
    const std::int64_t device_row = store.device(device);
    for (const auto& [key, a] : impl_->adapting) {
      const harness::Operator& op = harness::find_operator(a.op);
      store.ensure_operator(op.name(), op.description());
      store.ensure_workload(a.workload, a.workload_class);
      const std::string kernel_hash = harness::kernel_source(device.backend, op.kernel_family()).hash;
      const runtime::ClassReport r = a.tuner.report();
      const std::int64_t session =
          store.begin_session("tune", op.name(), device_row, a.workload.id(), "online",
                              {{"explore_share", impl_->options.explore_share},
                               {"checked_against", "the default variant's result on the same inputs"}},
                              std::nullopt, std::to_string(r.calls) + " calls");
      std::int64_t evaluations = 0;
      for (const runtime::Candidate& c : a.tuner.candidates()) {
        if (!c.verified || c.ms.empty()) continue;
        store.ensure_variant(c.variant, op.name(), device.backend, c.params, kernel_hash,
                             a.tuner.space().compile_part(c.params));
        Measurement m;
        m.samples_ms = c.ms;
        m.kernel = summarize(c.ms);
        m.verified = true;
        m.checked = Check::Device;
        store.record(session, c.variant, device_row, a.workload.id(), m, 0, "remeasure");
        ++evaluations;
      }
      const runtime::Candidate& settled = a.tuner.candidates()[r.settled];
      store.end_session(session, "finished",
                        results::SessionOutcome{settled.variant, r.settled_ms, evaluations, 0});
    }
  });
}

const Choice& Runtime::last_choice() const {
  return impl_->last;
}

}  // namespace varex
