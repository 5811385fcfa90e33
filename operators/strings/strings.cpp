#include "operators/strings/strings.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/workload_flags.hpp"
#include "harness/outputs/bitmap.hpp"
#include "operators/strings/regex/automaton.hpp"
#include "operators/strings/regex/like_segments.hpp"
#include "operators/strings/string_baseline.hpp"
#include "operators/strings/string_columns.hpp"
#include "operators/strings/string_space.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::BitmapOutput;
using harness::DeviceResult;
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::max_local;
using harness::round_up;
using harness::VariantRun;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint64_t kStringMaxRows = (1ULL << 31) - 1;

bool is_automaton(StringOp op) {
  return op == StringOp::Like || op == StringOp::Regex;
}

regex::Automaton compile_operand(StringOp op, const std::string& operand) {
  return regex::compile(op == StringOp::Like ? regex::parse_like(operand) : regex::parse_regex(operand));
}

std::string escape_like(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string escape_regex(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

datasets::StringColumn materialise_strings(const datasets::WorkloadSpec& spec) {
  const auto& p = spec.params;
  if (spec.generator == "file") {
    auto column = datasets::load_string_column(bytes_from_json(p.at("path")));
    if (column.rows() != spec.rows()) throw UsageError("input file changed while varex was running");
    return column;
  }
  datasets::StringWorkload w;
  w.dataset = p.at("dataset").get<std::string>();
  w.rows = spec.rows();
  w.selectivity = p.at("selectivity").get<double>();
  w.plant = bytes_from_json(p.at("plant"));
  w.mode =
      p.at("plant_mode").get<std::string>() == "whole" ? datasets::Plant::Whole : datasets::Plant::Prefix;
  w.seed = p.at("seed").get<std::uint64_t>();
  return datasets::generate_strings(w);
}

// A variant of a string operator, decoded once: LIKE's algorithm, the kernel (naive or lane refill), its
// refill threshold, unroll, load width and buffer, the automaton's layout, and the defines the kernel is
// built with (which also depend on the operator and the device).
struct StringVariant : LaunchBundle {
  StringVariant(const variants::Params& params, const DeviceInfo& device, StringOp op);
  bool segments;            // LIKE by DogQC's segments (else its automaton)
  bool table;               // the automaton's table layout (LIKE and regex only; else flat)
  bool refill;              // kernel=refill (else naive)
  std::uint32_t threshold;  // refill below this percentage of active lanes
  std::uint32_t unroll;     // bytes (or automaton steps) per activity check
  std::uint32_t load;       // bytes per load
  bool registers;           // buffer=registers (else shared)
};

StringVariant::StringVariant(const variants::Params& params, const DeviceInfo& device, StringOp op)
    : LaunchBundle(params, device),
      segments(op == StringOp::Like && variants::get_string(params, "algorithm") == "segments"),
      table(is_automaton(op) && variants::get_string(params, "layout") == "table"),
      refill(variants::get_string(params, "kernel") == "refill"),
      threshold(static_cast<std::uint32_t>(variants::get_int(params, "threshold"))),
      unroll(static_cast<std::uint32_t>(variants::get_int(params, "unroll"))),
      load(static_cast<std::uint32_t>(variants::get_int(params, "load"))),
      registers(variants::get_string(params, "buffer") == "registers") {
  const int mode = op == StringOp::Equal ? 1 : op == StringOp::Prefix ? 2 : segments ? 4 : 3;
  defines = {{"MODE", std::to_string(mode)},         {"LAYOUT", table ? "2" : "1"},
             {"REFILL", refill ? "1" : "0"},         {"THRESHOLD_PCT", std::to_string(threshold)},
             {"UNROLL", std::to_string(unroll)},     {"LOAD_BYTES", std::to_string(load)},
             {"BUFFER_REGS", registers ? "1" : "0"}, {"MAX_LOCAL", std::to_string(max_local(device))}};
}

// Host memory holding a copy of `bytes` bytes (at least 4: zero-sized allocations are errors).
std::unique_ptr<HostBuffer> host_copy(Engine& engine, const void* data, std::size_t bytes) {
  auto host = engine.allocate_host(std::max<std::size_t>(bytes, 4));
  if (bytes) std::memcpy(host->data(), data, bytes);
  return host;
}

// A small read-only buffer (the needle, an automaton image), uploaded once.
std::unique_ptr<DeviceBuffer> upload_constant(Engine& engine, const void* data, std::size_t bytes) {
  auto host = host_copy(engine, data, bytes);
  auto device = engine.allocate(std::max<std::size_t>(bytes, 4));
  engine.upload(*device, 0, *host, std::max<std::size_t>(bytes, 4))->elapsed_ms();
  return device;
}

// The operand on the device, made on the host from the query and uploaded once: the needle (the operand's
// bytes, which the automata do not read), the automaton in both layouts (a zeroed header for equality
// and prefix, which read no automaton) and LIKE's segments (a zeroed header for the others).
struct DeviceOperand {
  DeviceOperand(Engine& engine, StringOp op, const std::string& operand);
  const DeviceBuffer& image(const StringVariant& variant) const {
    return variant.segments ? *segments : variant.table ? *table : *flat;
  }
  std::uint32_t length;
  std::unique_ptr<DeviceBuffer> needle, flat, table, segments;
};

DeviceOperand::DeviceOperand(Engine& engine, StringOp op, const std::string& operand)
    : length(static_cast<std::uint32_t>(operand.size())) {
  std::vector<std::int32_t> flat_image(regex::kImageHeader, 0), table_image(regex::kImageHeader, 0);
  std::vector<std::int32_t> segments_image(regex::kSegHeader, 0);
  if (is_automaton(op)) {
    const regex::Automaton a = compile_operand(op, operand);  // UsageError for a bad pattern
    flat_image = a.flat_image();
    table_image = a.table_image();
  }
  if (op == StringOp::Like) segments_image = regex::like_segments(operand).image();
  needle = upload_constant(engine, operand.data(), operand.size());
  flat = upload_constant(engine, flat_image.data(), flat_image.size() * 4);
  table = upload_constant(engine, table_image.data(), table_image.size() * 4);
  segments = upload_constant(engine, segments_image.data(), segments_image.size() * 4);
}

// The string kernel over a column of `rows` strings (its bytes and int32 offsets) into the bitmap of the
// rows, whoever owns the buffers: the bitmap's words are cleared, then the kernel sets the matching rows'
// bits (bit r%32 of word r/32). No work-item reads past offsets[rows] or past byte offsets[rows] - 1 (with
// load=4, past the aligned word holding it).
void run_strings(const StringVariant& variant, KernelSequence& seq, const DeviceBuffer& bytes,
                 const DeviceBuffer& offsets, std::uint64_t rows, const DeviceOperand& operand,
                 DeviceBuffer& out) {
  seq.fill("clear", out, 0, (rows + 31) / 32 * 4);
  const LaunchShape shape = variant.launch.rows(rows);
  seq.run("strings_select", "strings_select", shape,
          {KernelArg::of(bytes), KernelArg::of(offsets), KernelArg::of(static_cast<std::uint32_t>(rows)),
           KernelArg::of(*operand.needle), KernelArg::of(operand.length),
           KernelArg::of(operand.image(variant)), KernelArg::of(out)});
}

// An application's string column: int32 offsets (rows + 1 of them, not decreasing) and the bytes they
// index. In a column of one buffer, `bytes` is the offsets' own buffer and the offsets count from its start.
struct BoundColumn {
  const DeviceBuffer& offsets;
  const DeviceBuffer& bytes;
  std::uint64_t rows;
  std::uint64_t first;  // the lowest offset allowed (past the offsets themselves in a column of one buffer)
  std::uint64_t limit;  // the highest: the strings' bytes end at or before it
};

// On an application's column, read where it lies (no copy): the needle and automaton are made on the host
// from the query and uploaded into buffers of the run's own; the bitmap is allocated by the run (whole
// 32-bit words) and handed over.
class StringBound final : public VariantRun<StringVariant, BoundRun> {
 public:
  StringBound(Engine& engine, const StringOperator& op, const BoundColumn& column, const std::string& operand)
      : VariantRun(engine, "strings"),
        op_(op.op()),
        key_(op.operand_key()),
        offsets_(column.offsets),
        bytes_(column.bytes),
        rows_(column.rows),
        operand_text_(operand) {
    const std::string name = op.name();
    if (rows_ > kStringMaxRows)
      throw UsageError(name + " handles fewer than 2^31 strings, got " + std::to_string(rows_));
    if (offsets_.bytes() < (rows_ + 1) * 4)
      throw UsageError(name + ": the offsets' buffer holds " + std::to_string(offsets_.bytes()) + " bytes, " +
                       std::to_string(rows_) + " strings need " + std::to_string(rows_ + 1) +
                       " int32 offsets (" + std::to_string((rows_ + 1) * 4) + " bytes)");
    operand_.emplace(engine, op_, operand);
    if (rows_ == 0) return;
    // The kernels read the bytes from offsets[0] up to offsets[rows]: both are read back (a few bytes,
    // waited for) so that no read leaves the caller's buffer. The offsets between are not checked.
    auto first = engine.allocate_host(4), last = engine.allocate_host(4);
    engine.download(*first, offsets_, 4, 0)->elapsed_ms();
    engine.download(*last, offsets_, 4, rows_ * 4)->elapsed_ms();
    const std::int64_t lo = *first->as<std::int32_t>(), hi = *last->as<std::int32_t>();
    if (lo < static_cast<std::int64_t>(column.first) || hi < lo ||
        hi > static_cast<std::int64_t>(column.limit))
      throw UsageError(name + ": the offsets run from " + std::to_string(lo) + " to " + std::to_string(hi) +
                       "; they must lie between " + std::to_string(column.first) + " and " +
                       std::to_string(column.limit) + " and not decrease");
    end_ = static_cast<std::uint64_t>(hi);
  }

  datasets::WorkloadClass workload_class() const override {
    // As the default class of a workload has it, without what only generated or file data tells.
    datasets::WorkloadClass c;
    const nlohmann::json operand = bytes_json(operand_text_);
    c.shape[key_] = operand.is_string() ? operand.get<std::string>() : operand.dump();
    c.set_scale("rows", rows_, datasets::ScaleKind::Count);
    return c;
  }

  std::string refuses(const variants::Params& params) const override {
    if (decode(params).load != 4) return {};
    // Word loads read the aligned words that hold the strings' bytes, up to offsets[rows] rounded up to 4.
    const std::uint64_t read = round_up(end_, 4);
    if (read > bytes_.bytes())
      return "load=4 reads " + std::to_string(read) + " bytes of a strings' buffer of " +
             std::to_string(bytes_.bytes());
    if (reinterpret_cast<std::uintptr_t>(engine_.native_address(bytes_)) % 4 != 0)
      return "load=4 reads aligned words, and the strings' buffer does not start at a multiple of 4 bytes";
    return {};
  }

  DeviceResult take_result() override {
    DeviceResult result{OutputKind::Bitmap, {}, rows_};
    result.buffers.push_back(std::move(out_));
    return result;
  }

 private:
  StringVariant decode(const variants::Params& params) const override {
    return StringVariant(params, engine_.device(), op_);
  }

  void run(const StringVariant& variant, KernelSequence& seq) override {
    if (!out_) out_ = engine_.allocate(std::max<std::uint64_t>((rows_ + 31) / 32 * 4, 4));
    run_strings(variant, seq, bytes_, offsets_, rows_, *operand_, *out_);
  }

  StringOp op_;
  std::string key_;
  const DeviceBuffer& offsets_;
  const DeviceBuffer& bytes_;
  std::uint64_t rows_;
  std::uint64_t end_ = 0;  // offsets[rows]
  std::string operand_text_;
  std::optional<DeviceOperand> operand_;
  std::unique_ptr<DeviceBuffer> out_;
};

class StringRun final : public VariantRun<StringVariant> {
 public:
  StringRun(Engine& engine, const datasets::WorkloadSpec& spec, const StringOperator& op)
      : VariantRun(engine, "strings"), op_(op), column_(materialise_strings(spec)) {
    rows_ = column_.rows();
    operand_ = bytes_from_json(spec.query.at(op.operand_key()));
    out_ = std::make_unique<BitmapOutput>(engine, rows_, string_reference(op.op(), operand_, column_));
    words_ = (rows_ + 31) / 32;
    // An empty column or operand still gets real (4-byte) buffers: zero-sized allocations are errors. The
    // bytes are padded to whole words for the kernels that load them a word at a time.
    host_bytes_ = host_copy(engine, column_.bytes.data(), column_.bytes.size());
    host_offsets_ = host_copy(engine, column_.offsets.data(), column_.offsets.size() * 4);
    bytes_ = engine.allocate(std::max<std::uint64_t>(round_up(column_.bytes.size(), 4), 4));
    offsets_ = engine.allocate(column_.offsets.size() * 4);
    device_operand_.emplace(engine, op.op(), operand_);
    restore_inputs();
  }

  double h2d_ms() const override { return h2d_ms_; }

  void restore_inputs() override {
    h2d_ms_ = engine_.upload(*offsets_, 0, *host_offsets_, column_.offsets.size() * 4)->elapsed_ms();
    if (!column_.bytes.empty())
      h2d_ms_ += engine_.upload(*bytes_, 0, *host_bytes_, column_.bytes.size())->elapsed_ms();
  }

  void poison() override { out_->poison(); }

  Collected collect(Check how) override { return harness::collect(*out_, how); }

  Digest reference() const override { return out_->reference(); }
  std::uint64_t bytes_moved() const override {
    return column_.bytes.size() + column_.offsets.size() * 4 + words_ * 4;
  }
  std::uint64_t working_set_bytes() const override { return bytes_moved(); }

  std::optional<BaselineTiming> time_baseline() override {
    const CpuBaseline b = run_cpu_baseline(op_.op(), operand_, column_);
    return BaselineTiming{b.engine, b.threads, b.ms, b.bitmap == out_->reference_bits()};
  }

 private:
  StringVariant decode(const variants::Params& params) const override {
    return StringVariant(params, engine_.device(), op_.op());
  }

  void run(const StringVariant& variant, KernelSequence& seq) override {
    run_strings(variant, seq, *bytes_, *offsets_, rows_, *device_operand_, out_->buffer());
  }

  const StringOperator op_;
  datasets::StringColumn column_;
  std::uint64_t rows_ = 0, words_ = 0;
  std::string operand_;
  std::unique_ptr<HostBuffer> host_bytes_, host_offsets_;
  std::unique_ptr<DeviceBuffer> bytes_, offsets_;
  std::optional<DeviceOperand> device_operand_;
  std::unique_ptr<BitmapOutput> out_;
  double h2d_ms_ = 0;
};

}  // namespace

std::string StringOperator::name() const {
  switch (op_) {
    case StringOp::Equal:
      return "str_equal";
    case StringOp::Prefix:
      return "str_prefix";
    case StringOp::Like:
      return "str_like";
    case StringOp::Regex:
      return "regex";
  }
  return "";
}

std::string StringOperator::description() const {
  switch (op_) {
    case StringOp::Equal:
      return "DogQC's string equality with lane refill (--query value=...) into a bitmap";
    case StringOp::Prefix:
      return "DogQC's prefix test with lane refill (--query prefix=...) into a bitmap";
    case StringOp::Like:
      return "SQL LIKE with %, _ and backslash escapes (--query pattern=...), as a minimal automaton or by "
             "DogQC's segments, with lane refill";
    case StringOp::Regex:
      return "POSIX extended regular expressions over bytes, search semantics (--query pattern=...), as a "
             "minimal automaton, with lane refill";
  }
  return "";
}

std::string StringOperator::operand_key() const {
  return op_ == StringOp::Equal ? "value" : op_ == StringOp::Prefix ? "prefix" : "pattern";
}

variants::Space StringOperator::space(const variants::SpaceContext& context) const {
  return string_space(context, name(), is_automaton(op_), op_ == StringOp::Like);
}

Defines StringOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return StringVariant(params, device, op_).defines;
}

WorkloadDecl StringOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {{"strings", "byte strings (Arrow layout: offsets + bytes)",
               "ptype, pname (TPC-H) or titles, a planted string setting the selectivity",
               "one string per line (bytes kept as they are; \\n ends a row)"}};
  d.flags = {flags::input("Read one string per line from FILE"),
             flags::rows(),
             flags::seed(),
             {"strings", "NAME", "Generated strings: ptype, pname or titles"},
             {"plant", "S", "The planted string that sets the selectivity"},
             flags::selectivity("Share of rows holding the planted string, 0 to 1 (default 0.01)")};
  const std::string what = op_ == StringOp::Equal    ? "the string rows must equal"
                           : op_ == StringOp::Prefix ? "the prefix rows must start with"
                           : op_ == StringOp::Like   ? "the SQL LIKE pattern (% and _, \\ escapes)"
                                                     : "the POSIX extended regular expression (searched)";
  d.query = {{operand_key(), what + " (default: the planted string)"}};
  d.output = OutputKind::Bitmap;
  return d;
}

datasets::WorkloadSpec StringOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  if (const auto input = options.text("input")) {
    for (const char* generated : {"strings", "plant", "selectivity"}) {
      if (options.text(generated))
        throw UsageError(std::string("--") + generated + " describes generated strings; " + name() +
                         " reads a file here");
    }
    if (!options.query.count(operand_key())) {
      throw UsageError(name() + " needs --query " + operand_key() + "=... with an input file");
    }
    const std::string path = std::filesystem::absolute(*input).string();
    spec.generator = "file";
    spec.params = {{"path", bytes_json(path)},
                   {"rows", datasets::load_string_column(path).rows()},
                   {"fingerprint", datasets::file_fingerprint(path)}};
  } else {
    const auto rows = options.count("rows");
    if (!rows) throw std::logic_error(name() + ": generated workloads need a row count");
    const std::string dataset = options.text("strings").value_or(op_ == StringOp::Equal  ? "ptype"
                                                                 : op_ == StringOp::Like ? "pname"
                                                                                         : "titles");
    const std::string plant = options.text("plant").value_or(datasets::default_plant(dataset));
    const double selectivity = options.number("selectivity").value_or(0.01);
    if (!(selectivity >= 0.0 && selectivity <= 1.0))
      throw UsageError("--selectivity must lie between 0 and 1");
    if (plant.empty() || plant.find('\n') != std::string::npos) {
      throw UsageError("--plant must be a non-empty string without newlines");
    }
    spec.generator = "strings";
    spec.params = {{"dataset", dataset},
                   {"rows", *rows},
                   {"selectivity", selectivity},
                   {"plant", bytes_json(plant)},
                   {"plant_mode", op_ == StringOp::Equal ? "whole" : "prefix"},
                   {"seed", options.seed()},
                   {"version", datasets::kStringGeneratorVersion}};
    // Without a query the operator looks for the plant: equal to it, starting with it.
    const std::string operand = op_ == StringOp::Like    ? escape_like(plant) + "%"
                                : op_ == StringOp::Regex ? "^" + escape_regex(plant)
                                                         : plant;
    spec.query = {{operand_key(), bytes_json(operand)}};
  }
  if (!options.query.empty()) spec.query = {{operand_key(), bytes_json(options.query.at(operand_key()))}};
  if (spec.rows() > kStringMaxRows)
    throw UsageError("input too large: " + name() + " handles fewer than 2^31 rows");
  if (is_automaton(op_)) compile_operand(op_, bytes_from_json(spec.query.at(operand_key())));  // errors now
  return spec;
}

std::uint64_t StringOperator::default_rows(std::uint64_t cache_rows) const {
  return std::max<std::uint64_t>(cache_rows / 8, 1 << 20);
}

DeviceFootprint StringOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t rows = spec.rows();
  std::uint64_t bytes = 0;
  if (spec.generator == "file") {
    bytes = std::filesystem::file_size(bytes_from_json(spec.params.at("path")));
  } else {
    const std::string dataset = spec.params.at("dataset").get<std::string>();
    bytes = rows * (dataset == "ptype" ? 21 : dataset == "pname" ? 36 : 80);
  }
  return {bytes + (rows + 1) * 4 + rows / 8 + 4096, std::max(bytes, (rows + 1) * 4)};
}

nlohmann::json StringOperator::query_plan(const datasets::WorkloadSpec& spec) const {
  if (!is_automaton(op_)) return nlohmann::json::object();
  const std::string operand = bytes_from_json(spec.query.at(operand_key()));
  const regex::Automaton a = compile_operand(op_, operand);
  nlohmann::json plan = {{"automaton",
                          {{"states", a.states},
                           {"byte_classes", a.classes},
                           {"flat_bytes", a.flat_image().size() * 4},
                           {"table_bytes", a.table_image().size() * 4}}}};
  if (op_ == StringOp::Like) {
    const regex::LikeSegments s = regex::like_segments(operand);
    plan["segments"] = {{"segments", s.segments()},
                        {"tokens", s.tokens.size()},
                        {"anchored_start", s.anchored_start},
                        {"anchored_end", s.anchored_end}};
  }
  return plan;
}

std::unique_ptr<PreparedRun> StringOperator::prepare(Engine& engine,
                                                     const datasets::WorkloadSpec& spec) const {
  return std::make_unique<StringRun>(engine, spec, *this);
}

std::unique_ptr<BoundRun> StringOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  const auto operand = binding.query.find(operand_key());
  if (operand == binding.query.end())
    throw UsageError(name() + " needs the query key " + operand_key() + " on an application's buffers");
  const DeviceBuffer& first = *binding.inputs[0];
  const std::uint64_t rows = binding.rows[0];
  if (binding.inputs.size() == 2) {
    // Declared as two inputs: the offsets (rows: the strings) and the bytes (rows: the bytes the column
    // holds), each a buffer of its own as Arrow keeps them; the offsets count from the bytes' start.
    const DeviceBuffer& bytes = *binding.inputs[1];
    if (bytes.bytes() < binding.rows[1])
      throw UsageError(name() + ": the bytes' buffer holds " + std::to_string(bytes.bytes()) +
                       " bytes, not " + std::to_string(binding.rows[1]));
    return std::make_unique<StringBound>(engine, *this, BoundColumn{first, bytes, rows, 0, binding.rows[1]},
                                         operand->second);
  }
  // Declared as one input, the column in one buffer: the rows + 1 int32 offsets, then the bytes, the offsets
  // counting from the buffer's start (so the first is at least 4 x (rows + 1)); the kernels take the one
  // buffer as both their offsets and their bytes.
  return std::make_unique<StringBound>(
      engine, *this, BoundColumn{first, first, rows, (rows + 1) * 4, first.bytes()}, operand->second);
}

}  // namespace varex::operators

namespace varex::operators {

void register_strings(harness::OperatorRegistry& registry) {
  for (const operators::StringOp op : {operators::StringOp::Equal, operators::StringOp::Prefix,
                                       operators::StringOp::Like, operators::StringOp::Regex})
    registry.add(std::make_unique<StringOperator>(op));
}

}  // namespace varex::operators
