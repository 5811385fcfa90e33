#include "operators/plan/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <map>

#include "base/embedded.hpp"
#include "base/errors.hpp"
#include "base/hash.hpp"
#include "base/text.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/workload_flags.hpp"
#include "harness/outputs/output.hpp"
#include "harness/primitives/digest.hpp"
#include "harness/primitives/scan.hpp"
#include "operators/common/relations/compaction.hpp"
#include "operators/plan/plan_codegen.hpp"
#include "operators/plan/plan_reference.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DecodedRun;
using harness::DeviceResult;
using harness::kernel_source;
using harness::KernelSource;
using harness::kPoisonWord;
using harness::max_local;
using harness::offers_mapped_memory;
using harness::round_up;
namespace flags = harness::flags;
namespace primitives = harness::primitives;
}  // namespace varex::operators

namespace varex::plan::embedded {
extern const EmbeddedFile kFiles[];
extern const std::size_t kFileCount;
}  // namespace varex::plan::embedded

namespace varex::operators {

namespace {

using plan::Plan;
using plan::StepKind;

constexpr std::uint64_t kLocals[] = {64, 128, 256, 512};
constexpr std::uint64_t kSmallestTile = 64;  // local 64 x one row per work-item: sizes the tile counts

std::string tunable(const plan::Step& step, const char* what) {
  return step.id + "." + what;
}

Plan plan_of(const nlohmann::json& query) {
  return plan::parse_plan(query.at("plan"), query.value("origin", std::string("(workload)")));
}

// The rows of the plan's largest table at a scale factor: the workload's "rows".
std::uint64_t largest_table_rows(const Plan& plan, double sf, std::uint64_t seed) {
  datasets::TpchData data(sf, seed);  // not const: lineitem is laid out on first use
  std::uint64_t rows = 0;
  for (const std::string& table : plan::tables_of(plan)) rows = std::max(rows, data.rows(table));
  return rows;
}

// A plan's variant decoded once (harness/operators/variant_run.hpp): fusion, where the tables are, and the
// knobs of each group leader (its work-group size and rows per work-item) and each join (its table's load).
struct PlanVariant {
  bool fuse = false;
  bool transferred = false;  // residency=transferred: the tables cross the bus in every execution
  std::string memory;        // the host memory they cross from (pinned, pageable, mapped)
  std::map<int, primitives::ScanShape> shapes;  // by step, those with tunables of their own
  std::map<int, std::uint64_t> load;            // by join step: its table's slots per 100 build rows
};

PlanVariant decode_plan_variant(const Plan& plan, const variants::Params& params) {
  PlanVariant v;
  v.fuse = variants::get_string(params, "fuse") == "on";
  v.transferred = variants::get_string(params, "residency") == "transferred";
  v.memory = params.count("memory") ? variants::get_string(params, "memory") : "";
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const plan::Step& step = plan.steps[s];
    const int at = static_cast<int>(s);
    if (params.count(tunable(step, "local")))
      v.shapes[at] = {static_cast<std::uint64_t>(variants::get_int(params, tunable(step, "local"))),
                      static_cast<std::uint64_t>(variants::get_int(params, tunable(step, "ept")))};
    if (params.count(tunable(step, "load")))
      v.load[at] = static_cast<std::uint64_t>(variants::get_int(params, tunable(step, "load")));
  }
  return v;
}

// Where a relation lies on the device: its columns (a scan's, another relation's or its own) and the word
// that holds its row count.
struct DeviceRelation {
  std::vector<const DeviceBuffer*> columns;
  const DeviceBuffer* count = nullptr;
  std::uint32_t count_index = 0;
};

// Slots of a join's table: the smallest power of two that keeps the build side's keys at `load` percent
// (at least 64).
std::uint64_t table_slots(std::uint64_t build_rows, std::uint64_t load) {
  std::uint64_t slots = 64;
  while (slots * load < build_rows * 100) slots *= 2;
  return slots;
}

std::size_t width_of(const plan::Column& c) {
  return c.type.wide ? 8 : 4;
}

// The digest of a column's values in order: each value's low and high words mixed from its position, summed
// (primitives::HostDigest, on all host cores: FNV-1a byte by byte took seconds at SF 10).
std::uint64_t column_digest(const std::vector<std::int64_t>& values) {
  using primitives::HostDigest;
  return HostDigest::sum(values.size(), [&](std::uint64_t r) {
    const auto v = static_cast<std::uint64_t>(values[r]);
    return HostDigest::add(HostDigest::add(HostDigest::start(r + 1), static_cast<std::uint32_t>(v)),
                           static_cast<std::uint32_t>(v >> 32));
  });
}

// The digest of the plan's outputs: their rows, and the columns' digests folded in order, output by output,
// column by column.
std::uint64_t fold_column(std::uint64_t h, const std::vector<std::int64_t>& values) {
  const std::uint64_t column = column_digest(values);
  return fnv1a_bytes(&column, sizeof column, h);
}

Digest digest_of(const Plan& plan, const std::vector<plan::HostRelation>& relations) {
  Digest d;
  std::uint64_t h = kFnvOffset;
  for (int o : plan.outputs) {
    const plan::HostRelation& r = relations[static_cast<std::size_t>(o)];
    d.rows += r.rows;
    for (const auto& column : r.columns) h = fold_column(h, *column);
  }
  d.checksum = h;
  return d;
}

// One device operation of a plan's execution and its event (kernels, fills, transfers), in order.
struct Op {
  std::string label;
  EventPtr event;
};

// The plan's chain on the device, whoever owns its tables: each scan's columns (uploaded by varex's own run,
// or an application's buffers) and the words that hold their row counts go in; every group of steps runs
// over them, fused or step by step, and every relation it makes stays on the device. The prepared run adds
// the host's tables, the transfers and the checks; the bound run hands the outputs over.
class PlanChain {
 public:
  // `scan_rows[s]`: the rows scan step s may hold (0 for other steps); `mapped_outputs`: the outputs'
  // columns also in mapped host memory, which the kernels write in place under memory=mapped.
  PlanChain(Engine& engine, Plan plan, const std::vector<std::uint64_t>& scan_rows, bool mapped_outputs)
      : engine_(engine), plan_(std::move(plan)), mapped_outputs_(mapped_outputs) {
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
      const plan::Step& step = plan_.steps[s];
      // A join keeps at most its probe rows: its build side's keys are unique.
      capacity_.push_back(step.kind == StepKind::Scan ? scan_rows.at(s)
                                                      : capacity_[static_cast<std::size_t>(step.input)]);
      if (step.kind == StepKind::Join) {
        const std::uint64_t slots = table_slots(capacity_[static_cast<std::size_t>(step.build)], 25);
        JoinTable& t = joins_[static_cast<int>(s)];
        t.keys = engine.allocate(slots * 4);
        t.rows = engine.allocate(slots * 4);
      }
    }
    for (const bool fuse : {false, true}) {
      for (const plan::Group& g : plan::plan_groups(plan_, fuse)) {
        const plan::GroupCode& code = code_of(fuse, g);
        const std::uint64_t cap = capacity_[static_cast<std::size_t>(g.source)];
        if (code.compacted) {
          TileCounts& c = counts_[count_key(fuse, g)];
          c.tiles = engine.allocate(
              Compaction::words((cap + kSmallestTile - 1) / kSmallestTile, code.compacted) * 4);
          c.totals = engine.allocate(code.compacted * 4);
        }
      }
    }
    allocate_written();
  }

  std::uint64_t capacity(int step) const { return capacity_[static_cast<std::size_t>(step)]; }
  std::vector<Op>& ops() { return ops_; }
  const std::map<int, DeviceRelation>& relations() const { return relations_; }
  bool is_output(int step) const {
    return std::find(plan_.outputs.begin(), plan_.outputs.end(), step) != plan_.outputs.end();
  }

  CompileInfo compile(const PlanVariant& v) {
    CompileInfo total;
    total.cached = true;
    for (const plan::Group& g : plan::plan_groups(plan_, v.fuse)) {
      const plan::GroupCode& code = code_of(v.fuse, g);
      if (!code.compacted && !code.mapped) continue;
      CompileInfo info;
      engine_.compile(source_of(code), shape_of(v, g).defines(), &info);
      total.ms += info.ms;
      total.cached = total.cached && info.cached;
    }
    return total;
  }

  // Every group of the plan over `scans` (each scan step's relation), its operations appended to ops();
  // `mapped`: outputs written to mapped host memory.
  void run(const PlanVariant& v, const std::map<int, DeviceRelation>& scans, bool mapped) {
    mapped_ = mapped;
    allocate_written();
    relations_ = scans;
    for (const plan::Group& g : plan::plan_groups(plan_, v.fuse)) run_group(v, v.fuse, g);
  }

  // The column the kernels wrote for `step`, handed over (the next run writes a buffer of its own), or null
  // where the step's column is another relation's.
  std::unique_ptr<DeviceBuffer> take_written(int step, int column) {
    const auto it = written_.find({step, column});
    if (it == written_.end()) return nullptr;
    std::unique_ptr<DeviceBuffer> b = std::move(it->second);
    written_.erase(it);
    return b;
  }

  void poison() {
    for (auto& [key, buffer] : written_) engine_.fill(*buffer, kPoisonWord, 0, buffer->bytes())->elapsed_ms();
    for (auto& [key, c] : counts_) {
      for (DeviceBuffer* b : {c.tiles.get(), c.totals.get()})
        engine_.fill(*b, kPoisonWord, 0, b->bytes())->elapsed_ms();
    }
    for (auto& [key, buffer] : mapped_written_)
      engine_.fill(*buffer, kPoisonWord, 0, buffer->bytes())->elapsed_ms();
  }

  std::uint64_t written_bytes() const {
    std::uint64_t bytes = 0;
    for (const auto& [key, buffer] : written_) bytes += buffer->bytes();
    return bytes;
  }

  // Whether `b` is one of the outputs' columns in mapped host memory.
  bool mapped_output(const DeviceBuffer* b) const {
    for (const auto& [key, mapped] : mapped_written_) {
      if (mapped.get() == b) return true;
    }
    return false;
  }

 private:
  struct JoinTable {
    std::unique_ptr<DeviceBuffer> keys, rows;
  };
  // A compacted group's tile counts and its outputs' row counts (compact_offsets' totals), by count_key.
  struct TileCounts {
    std::unique_ptr<DeviceBuffer> tiles, totals;
  };

  // Everything either execution (fused or not) writes, allocated before it runs so that poison() reaches it.
  void allocate_written() {
    for (const bool fuse : {false, true}) {
      for (const plan::Group& g : plan::plan_groups(plan_, fuse)) {
        const plan::GroupCode& code = code_of(fuse, g);
        const std::uint64_t cap = capacity_[static_cast<std::size_t>(g.source)];
        for (const auto& [step, column] : code.writes) {
          auto& buffer = written_[{step, column}];
          const auto& c =
              plan_.steps[static_cast<std::size_t>(step)].schema[static_cast<std::size_t>(column)];
          if (!buffer) buffer = engine_.allocate(std::max<std::size_t>(cap * width_of(c), 8));
          if (mapped_outputs_ && is_output(step) && !mapped_written_.count({step, column}))
            mapped_written_[{step, column}] = engine_.allocate_mapped(buffer->bytes());
        }
      }
    }
  }

  // Where the kernels write a column: an output's goes to mapped host memory when the plan runs mapped.
  const DeviceBuffer& written(int step, int column) const {
    if (mapped_) {
      const auto it = mapped_written_.find({step, column});
      if (it != mapped_written_.end()) return *it->second;
    }
    return *written_.at({step, column});
  }

  static std::string count_key(bool fuse, const plan::Group& g) {
    return std::string(fuse ? "fused/" : "steps/") + std::to_string(g.steps.front());
  }

  // The work-group size and rows per work-item of a group: its leader's tunables.
  static primitives::ScanShape shape_of(const PlanVariant& v, const plan::Group& g) {
    return v.shapes.at(g.leader);
  }

  const plan::GroupCode& code_of(bool fuse, const plan::Group& g) {
    const std::string key = count_key(fuse, g);
    auto it = code_.find(key);
    if (it == code_.end()) it = code_.emplace(key, plan::generate_group(plan_, g)).first;
    return it->second;
  }

  // kernels/plan.cl behind the group's generated defines: a source of its own (its hash covers them).
  const KernelSource& source_of(const plan::GroupCode& code) {
    auto it = sources_.find(code.prelude);
    if (it == sources_.end()) {
      const KernelSource& base = kernel_source(engine_.device().backend, "plan");
      std::string text = code.prelude + base.text;
      std::string hash = hex64(fnv1a(text));
      it = sources_.emplace(code.prelude, KernelSource{base.name, std::move(text), std::move(hash)}).first;
    }
    return it->second;
  }

  void launch(const std::string& label, const Program& program, const std::string& kernel,
              const LaunchShape& shape, const std::vector<KernelArg>& args) {
    if (shape.global == 0) return;
    ops_.push_back({label, engine_.launch(program, kernel, shape, args)});
  }

  void run_group(const PlanVariant& v, bool fuse, const plan::Group& g) {
    const plan::GroupCode& code = code_of(fuse, g);
    const DeviceRelation& source = relations_.at(g.source);
    const std::uint64_t cap = capacity_[static_cast<std::size_t>(g.source)];
    TileCounts* counts = code.compacted ? &counts_.at(count_key(fuse, g)) : nullptr;
    std::uint64_t tiles = 0, local = 0;
    if (code.compacted || code.mapped) {
      const primitives::ScanShape shape = shape_of(v, g);
      tiles = shape.tiles(cap);
      local = shape.local;
    }
    const std::uint32_t stride = Compaction::stride(static_cast<std::uint32_t>(tiles));
    for (const plan::OutputLayout& out : code.outputs) {
      DeviceRelation r;
      const plan::Step& step = plan_.steps[static_cast<std::size_t>(out.step)];
      for (std::size_t c = 0; c < step.schema.size(); ++c) {
        r.columns.push_back(out.shared[c] >= 0 ? source.columns[static_cast<std::size_t>(out.shared[c])]
                                               : &written(out.step, static_cast<int>(c)));
      }
      if (out.compacted >= 0) {
        r.count = counts->totals.get();
        r.count_index = static_cast<std::uint32_t>(out.compacted);
      } else {
        r.count = source.count;
        r.count_index = source.count_index;
      }
      relations_[out.step] = r;
    }
    if (!code.compacted && !code.mapped) return;

    const Program& program = engine_.compile(source_of(code), shape_of(v, g).defines());
    std::vector<KernelArg> in, out;
    for (const DeviceBuffer* b : source.columns) in.push_back(KernelArg::of(*b));
    for (int j : code.joins) {
      const plan::Step& join = plan_.steps[static_cast<std::size_t>(j)];
      const DeviceRelation& build = relations_.at(join.build);
      const std::uint32_t mask = build_table(program, v, join, build, local);
      for (const DeviceBuffer* b : build.columns) in.push_back(KernelArg::of(*b));
      in.push_back(KernelArg::of(*joins_.at(j).keys));
      in.push_back(KernelArg::of(*joins_.at(j).rows));
      in.push_back(KernelArg::of(mask));
    }
    for (const auto& [step, column] : code.writes) out.push_back(KernelArg::of(written(step, column)));
    const auto concat = [](std::vector<KernelArg> a, const std::vector<KernelArg>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    const std::string prefix = plan_.steps[static_cast<std::size_t>(g.leader)].id + ".";
    const LaunchShape over_tiles{tiles * local, local};
    const std::vector<KernelArg> n_at{KernelArg::of(*source.count), KernelArg::of(source.count_index)};
    if (code.compacted) {
      const KernelArg tile_counts = KernelArg::of(*counts->tiles);
      run_compaction(
          [&](const std::string& label, const std::string& kernel, const LaunchShape& shape,
              const std::vector<KernelArg>& args) { launch(label, program, kernel, shape, args); },
          {{"plan_count", concat(concat(in, {tile_counts}), concat(n_at, {KernelArg::of(stride)}))},
           {"plan_scatter",
            concat(concat(concat(in, out), {tile_counts}), concat(n_at, {KernelArg::of(stride)}))},
           over_tiles,
           local,
           static_cast<std::uint32_t>(tiles),
           static_cast<std::uint32_t>(code.compacted)},
          *counts->tiles, *counts->totals, prefix);
    }
    if (code.mapped) launch(prefix + "map", program, "plan_map", over_tiles, concat(concat(in, out), n_at));
  }

  // Clears the join's table and inserts its build side's keys; returns the slot mask.
  std::uint32_t build_table(const Program& program, const PlanVariant& v, const plan::Step& join,
                            const DeviceRelation& build, std::uint64_t local) {
    const int at = static_cast<int>(&join - plan_.steps.data());
    const std::uint64_t cap = capacity_[static_cast<std::size_t>(join.build)];
    const std::uint64_t slots = table_slots(cap, v.load.at(at));
    JoinTable& t = joins_.at(at);
    ops_.push_back({join.id + ".build", engine_.fill(*t.keys, 0x80000000u, 0, slots * 4)});
    launch(join.id + ".build", program, "plan_build",
           {round_up(std::max<std::uint64_t>(cap, 1), local), local},
           {KernelArg::of(*build.columns[static_cast<std::size_t>(join.build_key)]), KernelArg::of(*t.keys),
            KernelArg::of(*t.rows), KernelArg::of(static_cast<std::uint32_t>(slots - 1)),
            KernelArg::of(*build.count), KernelArg::of(build.count_index)});
    return static_cast<std::uint32_t>(slots - 1);
  }

  Engine& engine_;
  Plan plan_;
  bool mapped_outputs_;
  bool mapped_ = false;                  // the last run's
  std::vector<std::uint64_t> capacity_;  // rows each step's relation may hold
  std::map<int, JoinTable> joins_;       // by join step
  std::map<std::string, TileCounts> counts_;
  std::map<std::pair<int, int>, std::unique_ptr<DeviceBuffer>> written_;
  std::map<std::pair<int, int>, std::unique_ptr<DeviceBuffer>> mapped_written_;  // the outputs' columns
  std::map<std::string, plan::GroupCode> code_;
  std::map<std::string, KernelSource> sources_;
  std::map<int, DeviceRelation> relations_;  // of the last run
  std::vector<Op> ops_;
};

// Device time of a run's operations: each label's sum, the span from the first to the last, and the gaps
// between them (launches, and the read-back of the result sizes) as "launch".
ExecutionTimes times_of(Engine& engine, std::vector<Op>& ops) {
  ExecutionTimes times;
  std::map<std::string, double> by_label;
  std::vector<std::string> order;
  double sum = 0;
  for (Op& op : ops) {
    const double ms = op.event->elapsed_ms();
    if (!by_label.count(op.label)) order.push_back(op.label);
    by_label[op.label] += ms;
    sum += ms;
  }
  times.total_ms = ops.empty() ? 0 : engine.span_ms(*ops.front().event, *ops.back().event);
  for (const std::string& label : order) times.kernels.push_back({label, by_label[label]});
  times.kernels.push_back({"launch", std::max(0.0, times.total_ms - sum)});
  return times;
}

// The rows each scan step of `plan` reads from `data` (0 for the other steps).
std::vector<std::uint64_t> scan_rows_of(const Plan& plan, datasets::TpchData& data) {
  std::vector<std::uint64_t> rows;
  for (const plan::Step& step : plan.steps)
    rows.push_back(step.kind == StepKind::Scan ? data.rows(step.table) : 0);
  return rows;
}

class PlanRun final : public DecodedRun<PlanVariant> {
 public:
  PlanRun(Engine& engine, const datasets::WorkloadSpec& spec)
      : engine_(engine),
        plan_(plan_of(spec.query)),
        data_(spec.params.at("sf").get<double>(), spec.params.value("seed", std::uint64_t{42})),
        chain_(engine, plan_, scan_rows_of(plan_, data_), offers_mapped_memory(engine.device())) {
    reference_ = plan::plan_reference(plan_, data_);
    reference_digest_ = digest_of(plan_, reference_);
    scan_counts_ = engine.allocate(plan_.steps.size() * 4);
    auto counts_host = engine.allocate_host(plan_.steps.size() * 4);
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
      const plan::Step& step = plan_.steps[s];
      counts_host->as<std::uint32_t>()[s] = static_cast<std::uint32_t>(reference_[s].rows);
      if (step.kind != StepKind::Scan) continue;
      for (const plan::Column& c : step.schema) {
        const std::vector<std::int32_t>& values = data_.column(c.name);
        TableColumn t;
        t.bytes = values.size() * 4;
        t.pinned = engine.allocate_host(std::max<std::size_t>(t.bytes, 4));
        t.pageable = engine.allocate_pageable(std::max<std::size_t>(t.bytes, 4));
        std::copy(values.begin(), values.end(), t.pinned->as<std::int32_t>());
        std::copy(values.begin(), values.end(), t.pageable->as<std::int32_t>());
        t.device = engine.allocate(std::max<std::size_t>(t.bytes, 4));
        if (offers_mapped_memory(engine.device())) {
          t.mapped = engine.allocate_mapped(std::max<std::size_t>(t.bytes, 4));
          if (t.bytes) engine.upload(*t.mapped, 0, *t.pinned, t.bytes)->elapsed_ms();
        }
        tables_[static_cast<int>(s)].push_back(std::move(t));
      }
    }
    engine.upload(*scan_counts_, 0, *counts_host, plan_.steps.size() * 4)->elapsed_ms();
    for (int o : plan_.outputs) {
      std::size_t bytes = 4;
      for (const auto& c : plan_.steps[static_cast<std::size_t>(o)].schema)
        bytes += chain_.capacity(o) * width_of(c);
      results_pinned_[o] = engine.allocate_host(bytes);
      results_pageable_[o] = engine.allocate_pageable(bytes);
    }
    std::uint64_t largest = 8;
    for (std::size_t st = 0; st < plan_.steps.size(); ++st)
      largest = std::max(largest, chain_.capacity(static_cast<int>(st)) * 8);
    staging_ = engine.allocate_pageable(largest);
    h2d_ms_ = upload_tables(false, nullptr);
  }

  double h2d_ms() const override { return h2d_ms_; }
  void restore_inputs() override { upload_tables(false, nullptr); }

  void poison() override { chain_.poison(); }

 protected:
  PlanVariant decode(const variants::Params& params) const override {
    return decode_plan_variant(plan_, params);
  }
  CompileInfo compile_variant(const PlanVariant& v) override { return chain_.compile(v); }

  ExecutionTimes execute_variant(const PlanVariant& v) override {
    const bool transferred = v.transferred;
    const bool pageable = v.memory == "pageable";
    // Mapped: the kernels read the tables and write the outputs in host memory; nothing is copied.
    mapped_ = transferred && v.memory == "mapped";
    if (mapped_ && !offers_mapped_memory(engine_.device()))
      throw LaunchError("memory=mapped: " + engine_.device().id + " offers no mapped host memory");
    std::vector<Op>& ops = chain_.ops();
    ops.clear();
    if (transferred && !mapped_) upload_tables(pageable, &ops);
    std::map<int, DeviceRelation> scans;
    for (const auto& [s, columns] : tables_) {
      DeviceRelation& r = scans[s];
      for (const TableColumn& c : columns) r.columns.push_back(mapped_ ? c.mapped.get() : c.device.get());
      r.count = scan_counts_.get();
      r.count_index = static_cast<std::uint32_t>(s);
    }
    chain_.run(v, scans, mapped_);
    if (transferred) download_outputs(pageable);
    engine_.finish();
    return times_of(engine_, ops);
  }

 public:
  Collected collect(Check how) override {
    return how == Check::Device ? check_on_device() : collect_in_full();
  }

  // The steps whose relations are checked: the plan's outputs in order, then every other materialised
  // step that is not a scan.
  std::vector<int> checked_steps() const {
    std::vector<int> order(plan_.outputs.begin(), plan_.outputs.end());
    for (const auto& [s, rel] : chain_.relations()) {
      if (plan_.steps[static_cast<std::size_t>(s)].kind != StepKind::Scan &&
          std::find(order.begin(), order.end(), s) == order.end())
        order.push_back(s);
    }
    return order;
  }

  // Every materialised relation by its row count and one device digest per column (harness/primitives/
  // digest.hpp: each value mixed with its row's position), against the same digests of the reference's
  // columns: only a count and a word per column cross the bus.
  Collected check_on_device() {
    Collected c;
    c.checked = Check::Device;
    if (!device_digest_) device_digest_ = std::make_unique<primitives::DeviceDigest>(engine_);
    for (const int s : checked_steps()) {
      const plan::Step& step = plan_.steps[static_cast<std::size_t>(s)];
      const auto it = chain_.relations().find(s);
      if (it == chain_.relations().end()) return c;
      const DeviceRelation& rel = it->second;
      const plan::HostRelation& want = reference_[static_cast<std::size_t>(s)];
      c.d2h_ms += engine_.download(*staging_, *rel.count, 4, rel.count_index * 4ull)->elapsed_ms();
      if (staging_->as<std::uint32_t>()[0] != want.rows) return c;
      for (std::size_t col = 0; col < step.schema.size(); ++col) {
        const auto words = static_cast<std::uint32_t>(width_of(step.schema[col]) / 4);
        if (device_digest_->columns({{rel.columns[col], words}}, want.rows, true) !=
            reference_column_digest(s, col, words))
          return c;
      }
    }
    c.verified = true;
    c.digest = reference_digest_;
    return c;
  }

  // The device digest of a reference column, computed once: its values as 32-bit words (a 64-bit value's low
  // word, then its high one), each row started from its position.
  std::uint64_t reference_column_digest(int step, std::size_t col, std::uint32_t words) {
    const auto key = std::make_pair(step, col);
    if (const auto it = reference_digests_.find(key); it != reference_digests_.end()) return it->second;
    const std::vector<std::int64_t>& values = *reference_[static_cast<std::size_t>(step)].columns[col];
    using primitives::HostDigest;
    return reference_digests_[key] = HostDigest::sum(values.size(), [&](std::uint64_t r) {
             const auto v = static_cast<std::uint64_t>(values[r]);
             const std::uint64_t h = HostDigest::add(HostDigest::start(r + 1), static_cast<std::uint32_t>(v));
             return words == 2 ? HostDigest::add(h, static_cast<std::uint32_t>(v >> 32)) : h;
           });
  }

  // Every materialised relation downloaded and compared with the reference's in full; the digest runs over
  // the plan's outputs in order, as digest_of does over the reference.
  Collected collect_in_full() {
    Collected c;
    const std::vector<int> order = checked_steps();
    const auto fail = [&](const std::string& what) {
      if (c.mismatch.empty()) c.mismatch = what;
    };
    std::uint64_t h = kFnvOffset;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const plan::Step& step = plan_.steps[static_cast<std::size_t>(order[i])];
      const bool output = i < plan_.outputs.size();
      const auto it = chain_.relations().find(order[i]);
      if (it == chain_.relations().end()) {
        fail("output '" + step.id + "' was not made");
        continue;
      }
      const DeviceRelation& rel = it->second;
      const plan::HostRelation& want = reference_[static_cast<std::size_t>(order[i])];
      c.d2h_ms += engine_.download(*staging_, *rel.count, 4, rel.count_index * 4ull)->elapsed_ms();
      const std::uint64_t rows = staging_->as<std::uint32_t>()[0];
      if (rows != want.rows) {
        fail("step '" + step.id + "': " + std::to_string(rows) + " rows, expected " +
             std::to_string(want.rows));
        continue;
      }
      if (output) c.digest.rows += rows;
      for (std::size_t col = 0; col < step.schema.size(); ++col) {
        const std::size_t width = width_of(step.schema[col]);
        if (rows) c.d2h_ms += engine_.download(*staging_, *rel.columns[col], rows * width)->elapsed_ms();
        const auto& expected = *want.columns[col];
        got_.resize(rows);
        std::atomic<std::uint64_t> first_bad{rows};
        datasets::parallel_rows(rows, [&](std::uint64_t b, std::uint64_t e) {
          for (std::uint64_t r = b; r < e; ++r) {
            got_[r] = width == 8 ? staging_->as<std::int64_t>()[r] : staging_->as<std::int32_t>()[r];
            if (got_[r] != expected[r]) {
              for (std::uint64_t seen = first_bad; r < seen && !first_bad.compare_exchange_weak(seen, r);) {
              }
            }
          }
        });
        if (const std::uint64_t r = first_bad; r < rows) {
          fail("step '" + step.id + "': row " + std::to_string(r) + " of " + step.schema[col].name + " is " +
               std::to_string(got_[r]) + ", expected " + std::to_string(expected[r]));
        }
        if (output) h = fold_column(h, got_);
      }
    }
    c.digest.checksum = h;
    c.verified = c.mismatch.empty() && c.digest == reference_digest_;
    if (!c.verified) fail("the outputs' digest differs");
    return c;
  }

  Digest reference() const override { return reference_digest_; }

  // At least: every scanned column read once, every output written once.
  std::uint64_t bytes_moved() const override {
    std::uint64_t bytes = 0;
    for (const auto& [s, columns] : tables_) {
      for (const TableColumn& c : columns) bytes += c.bytes;
    }
    for (int o : plan_.outputs) {
      for (const auto& c : plan_.steps[static_cast<std::size_t>(o)].schema)
        bytes += reference_[static_cast<std::size_t>(o)].rows * width_of(c);
    }
    return bytes;
  }
  std::uint64_t working_set_bytes() const override {
    std::uint64_t bytes = 0;
    for (const auto& [s, columns] : tables_) {
      for (const TableColumn& c : columns) bytes += c.bytes;
    }
    return bytes + chain_.written_bytes();
  }

 private:
  struct TableColumn {
    std::size_t bytes = 0;
    std::unique_ptr<HostBuffer> pinned, pageable;
    std::unique_ptr<DeviceBuffer> device;
    std::unique_ptr<DeviceBuffer> mapped;  // where the device offers mapped host memory
  };

  double upload_tables(bool pageable, std::vector<Op>* ops) {
    double ms = 0;
    for (auto& [s, columns] : tables_) {
      for (TableColumn& c : columns) {
        if (!c.bytes) continue;
        EventPtr e = engine_.upload(*c.device, 0, pageable ? *c.pageable : *c.pinned, c.bytes);
        if (ops) {
          ops->push_back({"h2d", std::move(e)});
        } else {
          ms += e->elapsed_ms();
        }
      }
    }
    return ms;
  }

  bool in_host_memory(const DeviceBuffer* b) const {
    if (chain_.mapped_output(b)) return true;
    for (const auto& [s, columns] : tables_) {
      for (const TableColumn& c : columns) {
        if (c.mapped.get() == b) return true;
      }
    }
    return false;
  }

  // The outputs to the host, as a caller of the plan gets them: each one's row count, then its rows (but
  // those the kernels wrote, or left, in mapped host memory).
  void download_outputs(bool pageable) {
    for (int o : plan_.outputs) {
      const DeviceRelation& r = chain_.relations().at(o);
      HostBuffer& host = pageable ? *results_pageable_.at(o) : *results_pinned_.at(o);
      EventPtr count = engine_.download(host, *r.count, 4, r.count_index * 4ull);
      count->elapsed_ms();  // the host needs the size before it asks for the rows
      const std::uint64_t rows = host.as<std::uint32_t>()[0];
      chain_.ops().push_back({"d2h", std::move(count)});
      const auto& schema = plan_.steps[static_cast<std::size_t>(o)].schema;
      for (std::size_t c = 0; c < schema.size() && rows <= chain_.capacity(o); ++c) {
        if (rows && !(mapped_ && in_host_memory(r.columns[c])))
          chain_.ops().push_back({"d2h", engine_.download(host, *r.columns[c], rows * width_of(schema[c]))});
      }
    }
  }

  Engine& engine_;
  Plan plan_;
  datasets::TpchData data_;
  PlanChain chain_;
  std::vector<plan::HostRelation> reference_;
  Digest reference_digest_;
  std::vector<std::int64_t> got_;  // a downloaded column, widened as the reference's
  std::map<int, std::vector<TableColumn>> tables_;
  std::unique_ptr<DeviceBuffer> scan_counts_;
  bool mapped_ = false;  // the last execution's
  std::map<int, std::unique_ptr<HostBuffer>> results_pinned_, results_pageable_;
  std::unique_ptr<HostBuffer> staging_;  // collect()'s downloads, one column at a time
  std::unique_ptr<primitives::DeviceDigest> device_digest_;
  std::map<std::pair<int, std::size_t>, std::uint64_t> reference_digests_;  // by step and column
  double h2d_ms_ = 0;
};

// A plan on an application's tables: each scan step's columns (int32, one buffer each, in step order and
// each scan's column order) as the inputs and the plan (a shipped plan's name or its JSON) as the query. The
// tables are on the device already, so the plan runs resident; its outputs are handed over as they lie: each
// output's columns in order (int32, or int64 for arithmetic results), then one buffer of each output's row
// count (uint32).
class PlanBound final : public DecodedRun<PlanVariant, BoundRun> {
 public:
  PlanBound(Engine& engine, Plan plan, const std::string& plan_text, const Binding& binding)
      : engine_(engine),
        plan_(std::move(plan)),
        plan_hash_(hex64(fnv1a(plan_text))),
        chain_(engine, plan_, scan_rows(binding), false) {
    auto counts = engine.allocate_host(plan_.steps.size() * 4);
    scan_counts_ = engine.allocate(plan_.steps.size() * 4);
    std::size_t input = 0;
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
      const plan::Step& step = plan_.steps[s];
      counts->as<std::uint32_t>()[s] = static_cast<std::uint32_t>(chain_.capacity(static_cast<int>(s)));
      if (step.kind != StepKind::Scan) continue;
      DeviceRelation& r = scans_[static_cast<int>(s)];
      for (std::size_t c = 0; c < step.schema.size(); ++c) r.columns.push_back(binding.inputs[input++]);
      r.count = scan_counts_.get();
      r.count_index = static_cast<std::uint32_t>(s);
    }
    engine.upload(*scan_counts_, 0, *counts, plan_.steps.size() * 4)->elapsed_ms();
  }

  datasets::WorkloadClass workload_class() const override {
    datasets::WorkloadClass c;
    c.shape = {{"plan", plan_.name}, {"plan_text", plan_hash_}};
    std::uint64_t rows = 0;
    for (std::size_t s = 0; s < plan_.steps.size(); ++s)
      rows = std::max(rows, chain_.capacity(static_cast<int>(s)));
    c.set_scale("rows", rows, datasets::ScaleKind::Count);
    return c;
  }

  std::string refuses(const variants::Params& params) const override {
    if (variants::get_string(params, "residency") == "resident") return {};
    return "residency=transferred: the tables are the application's device buffers, so the plan runs "
           "resident";
  }
  std::map<std::string, std::string> fixed() const override { return {{"residency", "resident"}}; }

  // (take_result below.)

 protected:
  PlanVariant decode(const variants::Params& params) const override {
    if (!refuses(params).empty()) throw UsageError(refuses(params));
    return decode_plan_variant(plan_, params);
  }
  CompileInfo compile_variant(const PlanVariant& v) override { return chain_.compile(v); }

  ExecutionTimes execute_variant(const PlanVariant& v) override {
    chain_.ops().clear();
    chain_.run(v, scans_, false);
    engine_.finish();
    return times_of(engine_, chain_.ops());
  }

 public:
  DeviceResult take_result() override {
    DeviceResult result(OutputKind::Rows, {}, 0);
    auto host = engine_.allocate_host(std::max<std::size_t>(plan_.outputs.size(), 1) * 4);
    std::vector<std::uint64_t> rows;
    for (const int o : plan_.outputs) {
      const DeviceRelation& r = chain_.relations().at(o);
      engine_.download(*host, *r.count, 4, r.count_index * 4ull)->elapsed_ms();
      rows.push_back(host->as<std::uint32_t>()[0]);
    }
    for (std::size_t i = 0; i < plan_.outputs.size(); ++i) {
      const int o = plan_.outputs[i];
      const plan::Step& step = plan_.steps[static_cast<std::size_t>(o)];
      const DeviceRelation& r = chain_.relations().at(o);
      for (std::size_t c = 0; c < step.schema.size(); ++c) {
        const std::size_t bytes = rows[i] * width_of(step.schema[c]);
        // The column the chain wrote for this output is handed over; one it shares with another relation (a
        // scan's, the application's) is copied.
        std::unique_ptr<DeviceBuffer> column = chain_.take_written(o, static_cast<int>(c));
        if (!column || column.get() != r.columns[c]) {
          column = engine_.allocate(std::max<std::size_t>(bytes, 8));
          if (bytes) engine_.copy(*column, *r.columns[c], bytes)->elapsed_ms();
        }
        result.buffers.push_back(std::move(column));
        result.parts.push_back({result.buffers.size() - 1, 0, bytes, 0});
      }
      host->as<std::uint32_t>()[i] = static_cast<std::uint32_t>(rows[i]);
    }
    auto counts = engine_.allocate(std::max<std::size_t>(rows.size(), 1) * 4);
    engine_.upload(*counts, 0, *host, rows.size() * 4)->elapsed_ms();
    result.buffers.push_back(std::move(counts));
    result.parts.push_back({result.buffers.size() - 1, 0, rows.size() * 4, 0});
    result.rows = rows.empty() ? 0 : rows[0];
    return result;
  }

 private:
  // The rows of each scan step from its columns' inputs, which must be the plan's columns in number and agree
  // in rows within a scan.
  std::vector<std::uint64_t> scan_rows(const Binding& binding) const {
    std::vector<std::uint64_t> rows;
    std::size_t input = 0, wanted = 0;
    for (const plan::Step& step : plan_.steps) wanted += step.kind == StepKind::Scan ? step.schema.size() : 0;
    if (binding.inputs.size() != wanted) {
      throw UsageError("plan " + plan_.name + " scans " + std::to_string(wanted) + " columns, got " +
                       std::to_string(binding.inputs.size()) + " input buffers");
    }
    for (const plan::Step& step : plan_.steps) {
      if (step.kind != StepKind::Scan) {
        rows.push_back(0);
        continue;
      }
      const std::uint64_t n = binding.rows[input];
      for (const plan::Column& c : step.schema) {
        if (binding.rows[input] != n)
          throw UsageError("plan " + plan_.name + ": column " + c.name + " of " + step.table + " has " +
                           std::to_string(binding.rows[input]) + " rows, the table's first column " +
                           std::to_string(n));
        if (binding.inputs[input]->bytes() < n * 4)
          throw UsageError("plan " + plan_.name + ": column " + c.name + " is a buffer of " +
                           std::to_string(binding.inputs[input]->bytes()) + " bytes for " +
                           std::to_string(n) + " int32 rows");
        ++input;
      }
      if (n >= (1ull << 32))
        throw UsageError("plan " + plan_.name + ": more than 2^32 rows in " + step.table);
      rows.push_back(n);
    }
    return rows;
  }

  Engine& engine_;
  Plan plan_;
  std::string plan_hash_;  // of the plan's JSON, as the prepared run's workload class has it
  PlanChain chain_;
  std::unique_ptr<DeviceBuffer> scan_counts_;
  std::map<int, DeviceRelation> scans_;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::vector<std::string> shipped_plans() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < plan::embedded::kFileCount; ++i) {
    std::string name = plan::embedded::kFiles[i].name;
    name = name.substr(0, name.rfind('.'));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    names.push_back(name);
  }
  return names;
}

nlohmann::json plan_document(const std::string& name_or_path) {
  const std::string file = lower(name_or_path) + ".json";
  for (std::size_t i = 0; i < plan::embedded::kFileCount; ++i) {
    if (file == plan::embedded::kFiles[i].name) return nlohmann::json::parse(plan::embedded::kFiles[i].text);
  }
  if (name_or_path.find('/') == std::string::npos && name_or_path.find('.') == std::string::npos)
    throw UsageError("--plan " + name_or_path + ": neither a shipped plan (" + join(shipped_plans(), ", ") +
                     ") nor a file");
  return plan::read_plan_file(name_or_path);
}

WorkloadDecl PlanOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {
      {"tables",
       "the TPC-H columns the plan's scans name (docs/PLANS.md); on an application's buffers one int32 "
       "column per buffer, in scan order",
       "TPC-H's value rules by scale factor, seeded", "none: generated only", true}};
  d.query = {{"plan",
              "the plan of a call on an application's buffers: a shipped plan's name or the plan's JSON "
              "(the command line takes --plan)"}};
  d.flags = {
      {"plan", "PLAN",
       "The plan: a shipped one (" + join(shipped_plans(), ", ") + ", default A) or a plan file (JSON)"},
      {"sf", "X", "TPC-H scale factor (default: --rows / 6,000,000)", datasets::ScaleKind::Count},
      flags::rows("About N lineitem rows when --sf is not given (default 6,000,000: scale factor 1)"),
      flags::seed()};
  d.output = OutputKind::Rows;
  return d;
}

variants::Space PlanOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  const Plan plan = context.query && context.query->contains("plan")
                        ? plan_of(*context.query)
                        : plan::parse_plan(plan_document("A"), "A");
  std::vector<variants::Tunable> tunables{
      {"fuse",
       variants::TunableKind::Compile,
       {Value{"off"}, Value{"on"}},
       Value{"off"},
       "off: a kernel triple per step, every intermediate written to device memory (the source's chain of "
       "primitives); on: the element-wise steps over one table as one triple, intermediates in registers "
       "(Kernel Weaver's fusion)"},
      {"residency",
       variants::TunableKind::Launch,
       {Value{"resident"}, Value{"transferred"}},
       Value{"transferred"},
       "resident: the tables are on the device before the plan starts and the outputs stay there; "
       "transferred: the plan uploads its tables and downloads its outputs (the source's total time)"},
      {"memory",
       variants::TunableKind::Launch,
       {Value{"pinned"}, Value{"pageable"}, Value{"mapped"}},
       Value{"pinned"},
       "host memory the transfers use: page-locked, ordinary pageable memory the runtime stages, or mapped "
       "(zero-copy) memory the kernels read the tables from and write the outputs to, where the device "
       "offers it (CUDA, OpenCL CPU devices)"},
  };
  std::vector<variants::Constraint> constraints;
  std::vector<variants::Inactive> inactive{
      {"host memory matters only when the plan transfers its data",
       [](const variants::Params& p) { return variants::get_string(p, "residency") == "resident"; },
       {"memory"}},
  };
  if (!offers_mapped_memory(context.device)) {
    constraints.push_back({"no mapped host memory on this device", [](const variants::Params& p) {
                             return variants::get_string(p, "memory") != "mapped";
                           }});
  }
  const std::uint64_t largest = max_local(context.device);
  std::vector<std::string> leaders;  // the steps whose tunables fused groups take
  for (const plan::Group& g : plan::plan_groups(plan, true)) {
    if (g.leader >= 0) leaders.push_back(plan.steps[static_cast<std::size_t>(g.leader)].id);
  }
  for (const plan::Step& step : plan.steps) {
    if (!plan::has_kernel(step.kind)) continue;
    std::vector<Value> locals;
    for (std::uint64_t l : kLocals) {
      if (l <= largest) locals.push_back(static_cast<std::int64_t>(l));
    }
    tunables.push_back({tunable(step, "local"), variants::TunableKind::Compile, locals,
                        Value{std::int64_t{256}}, "work-group size of the kernels of step " + step.id});
    tunables.push_back(
        {tunable(step, "ept"),
         variants::TunableKind::Compile,
         {std::int64_t{1}, std::int64_t{2}, std::int64_t{4}, std::int64_t{8}, std::int64_t{16}},
         Value{std::int64_t{4}},
         "rows per work-item of the kernels of step " + step.id});
    if (step.kind == StepKind::Join) {
      tunables.push_back(
          {tunable(step, "load"),
           variants::TunableKind::Launch,
           {std::int64_t{50}, std::int64_t{25}},
           Value{std::int64_t{50}},
           "largest load of join " + step.id + "'s hash table in percent (its build side's keys)"});
    }
    if (std::find(leaders.begin(), leaders.end(), step.id) != leaders.end()) continue;
    inactive.push_back({"fused, step " + step.id +
                            " runs in its group's kernels, which take their first step's "
                            "shape",
                        [](const variants::Params& p) { return variants::get_string(p, "fuse") == "on"; },
                        {tunable(step, "local"), tunable(step, "ept")}});
  }
  return variants::Space("plan", std::move(tunables), std::move(constraints), std::move(inactive));
}

datasets::WorkloadSpec PlanOperator::workload(const WorkloadOptions& options) const {
  // --plan, or the query's plan as the runtime library's calls give it.
  const auto query_plan = options.query.find("plan");
  const std::string which =
      options.text("plan").value_or(query_plan == options.query.end() ? "A" : query_plan->second);
  nlohmann::json doc = plan_document(which);
  const Plan plan = plan::parse_plan(doc, which);
  double sf = 0;
  if (options.text("sf")) {
    sf = *options.number("sf");
    if (!(sf > 0) || sf > 1000)
      throw UsageError("--sf " + *options.text("sf") + ": a scale factor is above 0 and at most 1000");
  } else {
    const std::uint64_t rows = options.count("rows").value_or(6000000);
    if (rows == 0) throw UsageError("--rows 0: a plan needs at least one row");
    sf = static_cast<double>(rows) / 6000000.0;
    if (sf > 1000)
      throw UsageError("input too large: --rows " + std::to_string(rows) +
                       " is a scale factor above 1000 (6,000,000 rows each)");
  }
  datasets::WorkloadSpec spec;
  spec.op = name();
  spec.generator = "tpch";
  spec.params["sf"] = sf;
  spec.params["seed"] = options.seed();
  spec.params["plan"] = plan.name;
  spec.query = {{"plan", doc}, {"origin", which}};
  const std::uint64_t rows = largest_table_rows(plan, sf, options.seed());
  if (rows >= (1ull << 32)) throw UsageError("--sf: more than 2^32 rows in one table");
  spec.params["rows"] = rows;
  return spec;
}

std::optional<datasets::WorkloadSpec> PlanOperator::small_instance(const datasets::WorkloadSpec& spec,
                                                                   std::uint64_t divisor) const {
  const double sf = spec.params.value("sf", 0.0);
  if (divisor < 2 || !(sf > 0)) return std::nullopt;
  datasets::WorkloadSpec out = spec;
  out.params["sf"] = sf / static_cast<double>(divisor);
  out.params["rows"] = largest_table_rows(plan_of(spec.query), out.params["sf"].get<double>(),
                                          spec.params.value("seed", std::uint64_t{0}));
  return out;
}

datasets::WorkloadClass PlanOperator::workload_class(const datasets::WorkloadSpec& spec) const {
  datasets::WorkloadClass c;
  c.shape = {{"generator", spec.generator},
             {"plan", spec.params.value("plan", std::string())},
             {"plan_text", hex64(fnv1a(spec.query.value("plan", nlohmann::json::object()).dump()))}};
  c.set_scale("rows", spec.rows(), datasets::ScaleKind::Count);
  c.set_scale("sf", spec.params.value("sf", 0.0), datasets::ScaleKind::Count);
  return c;
}

DeviceFootprint PlanOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const Plan plan = plan_of(spec.query);
  const std::uint64_t rows = spec.rows();
  DeviceFootprint f;
  for (const plan::Step& step : plan.steps) {
    for (const plan::Column& c : step.schema) {
      const std::uint64_t bytes = rows * (step.kind == StepKind::Scan ? 4 : width_of(c));
      f.total += bytes;
      f.largest = std::max(f.largest, bytes);
    }
  }
  return f;
}

std::unique_ptr<PreparedRun> PlanOperator::prepare(Engine& engine, const datasets::WorkloadSpec& spec) const {
  return std::make_unique<PlanRun>(engine, spec);
}

// The plan a call's query names (a shipped plan's name, or the plan's JSON) as a workload's query holds it:
// the document, and where it came from.
nlohmann::json PlanOperator::binding_query(const Binding& binding) const {
  const auto it = binding.query.find("plan");
  if (it == binding.query.end()) return nlohmann::json::object();  // the space of plan A; bind refuses it
  const std::string& which = it->second;
  const bool json = !which.empty() && which.front() == '{';
  nlohmann::json doc;
  if (json) {
    doc = nlohmann::json::parse(which, nullptr, false);
    if (doc.is_discarded()) throw UsageError("plan: the query's plan is not JSON");
  } else {
    doc = plan_document(which);
  }
  return {{"plan", doc}, {"origin", json ? std::string("(query)") : which}};
}

std::unique_ptr<BoundRun> PlanOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  if (!binding.query.count("plan")) throw UsageError("plan: the query names no plan (key 'plan')");
  const nlohmann::json query = binding_query(binding);
  return std::make_unique<PlanBound>(engine, plan_of(query), query.at("plan").dump(), binding);
}

nlohmann::json PlanOperator::query_plan(const datasets::WorkloadSpec& spec) const {
  const Plan plan = plan_of(spec.query);
  nlohmann::json steps = nlohmann::json::array();
  for (const plan::Step& s : plan.steps) {
    nlohmann::json columns = nlohmann::json::array();
    for (const plan::Column& c : s.schema) columns.push_back(c.name + ":" + c.type.describe());
    steps.push_back({{"id", s.id}, {"op", plan::to_string(s.kind)}, {"columns", columns}});
  }
  return {{"plan", plan.name}, {"steps", steps}};
}

}  // namespace varex::operators

namespace varex::operators {

void register_plan(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<PlanOperator>());
}

}  // namespace varex::operators
