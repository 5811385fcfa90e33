// The string operators on an application's buffers (StringOperator::bind) on the OpenCL CPU device: a
// column uploaded in the layout the operators document, each operator's default variant and a few others
// (both kernels, both loads, both automaton layouts) checked in full against the host reference, an empty
// column, the workload class, and the bindings that are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/strings/string_columns.hpp"
#include "operators/strings/strings.hpp"
#include "string_variants.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::find_operator;
}  // namespace varex::operators

namespace varex::operators {
namespace {

// Variants beside the default, three of those tests/test_strings.cpp runs (so the programs it compiled are
// found again): the naive kernel with word loads and the table layout, and lane refill with each load and
// each layout. `layout` is dropped for equality and prefix.
const std::vector<std::map<std::string, std::string>> kPins(test::kStringVariants.begin() + 1,
                                                            test::kStringVariants.begin() + 4);

void add(datasets::StringColumn& column, const std::string& row) {
  column.bytes += row;
  column.offsets.push_back(static_cast<std::int32_t>(column.bytes.size()));
}

// Generated TPC-H p_type rows, a tenth starting with the plant, then awkward rows: empty ones (the last one
// too), the operand itself, bytes >= 128, a long row matching late, near misses. Its bytes are not a
// multiple of 4.
datasets::StringColumn awkward_column() {
  datasets::StringWorkload w;
  w.dataset = "ptype";
  w.rows = 400;
  w.selectivity = 0.1;
  w.plant = "MEDIUM LASERED";
  w.mode = datasets::Plant::Prefix;
  w.seed = 11;
  datasets::StringColumn column = datasets::generate_strings(w);
  for (const std::string& row :
       {std::string(""), std::string("MEDIUM LASERED TIN"), std::string("MEDIUM LASERED TIN \xc3\xa9\xff"),
        std::string("MEDIUM"), std::string(2500, 'a') + "MEDIUM LASERING TIN", std::string("\xe9"),
        std::string("x"), std::string("LASERED TIN"), std::string("MEDIUM LASERED TIN"), std::string("")}) {
    add(column, row);
  }
  if (column.bytes.size() % 4 == 0) add(column, "y");
  return column;
}

std::size_t whole_words(std::size_t bytes, std::size_t word) {
  return (bytes + word - 1) / word * word;
}

std::unique_ptr<DeviceBuffer> upload(const std::string& image, std::size_t bytes) {
  Engine& engine = test::cpu_engine();
  auto host = engine.allocate_host(bytes);
  std::memset(host->data(), 0, bytes);
  std::memcpy(host->data(), image.data(), std::min(bytes, image.size()));
  auto device = engine.allocate(bytes);
  engine.upload(*device, 0, *host, bytes)->elapsed_ms();
  return device;
}

std::string int32_bytes(const std::vector<std::int64_t>& values) {
  std::string out(values.size() * 4, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<std::int32_t>(values[i]);
    std::memcpy(out.data() + i * 4, &v, 4);
  }
  return out;
}

// A column on the device, bound as the operator declares its input(s), with its buffers.
struct DeviceColumn {
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  Binding binding;
};

bool one_buffer(const StringOperator& op) {
  return op.declaration().inputs.size() == 1;
}

// One buffer: the rows + 1 int32 offsets counted from the buffer's start, then the bytes. Where two inputs
// are declared: the offsets, then the bytes, each a buffer of its own. `pad` rounds the buffer holding the
// bytes up to whole words; `cut` leaves that many bytes off its end.
DeviceColumn on_device(const StringOperator& op, const datasets::StringColumn& column, bool pad = true,
                       std::size_t cut = 0) {
  DeviceColumn d;
  const std::uint64_t rows = column.rows();
  std::string bytes_image = column.bytes;
  if (one_buffer(op)) {
    std::vector<std::int64_t> offsets;
    for (const std::int32_t o : column.offsets)
      offsets.push_back(o + static_cast<std::int64_t>(rows + 1) * 4);
    bytes_image = int32_bytes(offsets) + column.bytes;
  } else {
    d.buffers.push_back(
        upload(int32_bytes({column.offsets.begin(), column.offsets.end()}), column.offsets.size() * 4));
    d.binding.rows.push_back(rows);
  }
  std::size_t size = pad ? whole_words(bytes_image.size(), 4) : bytes_image.size();
  size = std::max<std::size_t>(size - cut, 4);
  d.buffers.push_back(upload(bytes_image, size));
  d.binding.rows.push_back(one_buffer(op) ? rows : column.bytes.size());
  for (const auto& b : d.buffers) d.binding.inputs.push_back(b.get());
  return d;
}

std::vector<std::uint8_t> download_bitmap(const DeviceResult& result) {
  const std::size_t bytes = (result.rows + 7) / 8;
  if (bytes == 0) return {};
  Engine& engine = test::cpu_engine();
  auto host = engine.allocate_host(bytes);
  engine.download(*host, *result.buffers.at(0), bytes)->elapsed_ms();
  const auto* data = host->as<std::uint8_t>();
  return {data, data + bytes};
}

std::vector<variants::Params> string_variants(const StringOperator& op, std::uint64_t rows) {
  const variants::Space space = op.space({test::cpu_device(), rows});
  std::vector<variants::Params> out{space.defaults()};
  for (auto pins : kPins) {
    if (op.op() != StringOp::Like && op.op() != StringOp::Regex) pins.erase("layout");
    out.push_back(space.with_settings(space.defaults(), pins));
    const auto violation = space.violation(out.back());
    EXPECT_FALSE(violation.has_value()) << violation.value_or("");
  }
  return out;
}

TEST(BoundStrings, EveryOperatorOnAnApplicationsColumnMatchesTheReference) {
  const datasets::StringColumn column = awkward_column();
  for (const test::StringCase& c : test::kStringCases) {
    const StringOperator op(c.op);
    SCOPED_TRACE(op.name());
    DeviceColumn d = on_device(op, column);
    d.binding.query = {{op.operand_key(), c.operand}};
    const std::vector<std::uint8_t> want = string_reference(c.op, c.operand, column);
    ASSERT_TRUE(std::any_of(want.begin(), want.end(), [](std::uint8_t b) { return b != 0; }));
    // One bound run for every variant: each execute writes a bitmap of its own once the last was taken.
    const auto run = find_operator(op.name()).bind(test::cpu_engine(), d.binding);
    for (const variants::Params& params : string_variants(op, column.rows())) {
      SCOPED_TRACE(variants::describe(params));
      ASSERT_EQ(run->refuses(params), "");
      run->compile(params);
      run->execute(params);
      const DeviceResult result = run->take_result();
      EXPECT_EQ(result.kind, OutputKind::Bitmap);
      EXPECT_EQ(result.rows, column.rows());
      ASSERT_EQ(result.buffers.size(), 1u);
      ASSERT_GE(result.buffers[0]->bytes(), (column.rows() + 31) / 32 * 4);
      EXPECT_EQ(download_bitmap(result), want);
    }
  }
}

TEST(BoundStrings, AnEmptyColumnGivesAnEmptyBitmap) {
  for (const test::StringCase& c : test::kStringCases) {
    const StringOperator op(c.op);
    SCOPED_TRACE(op.name());
    DeviceColumn d = on_device(op, datasets::StringColumn{});
    d.binding.query = {{op.operand_key(), c.operand}};
    const auto run = op.bind(test::cpu_engine(), d.binding);
    const variants::Params params = op.space({test::cpu_device(), 0}).defaults();
    run->compile(params);
    run->execute(params);
    const DeviceResult result = run->take_result();
    EXPECT_EQ(result.rows, 0u);
    ASSERT_EQ(result.buffers.size(), 1u);
    EXPECT_TRUE(result.buffers[0] != nullptr);
  }
}

TEST(BoundStrings, WordLoadsAreRefusedWhereTheyWouldReadPastTheBuffer) {
  const datasets::StringColumn column = awkward_column();
  const StringOperator op(StringOp::Prefix);
  DeviceColumn d = on_device(op, column, /*pad=*/false);
  d.binding.query = {{"prefix", "MEDIUM"}};
  const auto run = op.bind(test::cpu_engine(), d.binding);
  const variants::Space space = op.space({test::cpu_device(), column.rows()});
  EXPECT_EQ(run->refuses(space.with_settings(space.defaults(), {{"load", "1"}})), "");
  EXPECT_NE(run->refuses(space.with_settings(space.defaults(), {{"load", "4"}})), "");
}

TEST(BoundStrings, TheWorkloadClassIsTheOperatorsWithoutTheGenerator) {
  for (const test::StringCase& c :
       {test::kStringCases[0], test::kStringCases[3], test::StringCase{StringOp::Like, "caf\xe9%"}}) {
    const StringOperator op(c.op);
    SCOPED_TRACE(op.name());
    DeviceColumn d = on_device(op, awkward_column());
    d.binding.query = {{op.operand_key(), c.operand}};
    const datasets::WorkloadClass bound = op.bind(test::cpu_engine(), d.binding)->workload_class();
    WorkloadOptions options;
    options.flags["rows"] = "1000";
    options.query[op.operand_key()] = c.operand;
    const datasets::WorkloadClass tuned = op.workload_class(op.workload(options));
    EXPECT_FALSE(bound.shape.contains("generator"));
    EXPECT_EQ(bound.shape.at(op.operand_key()), tuned.shape.at(op.operand_key()));
    EXPECT_EQ(bound.scale.at("rows"), awkward_column().rows());
    for (const auto& [key, value] : bound.shape.items()) EXPECT_TRUE(tuned.shape.contains(key)) << key;
    for (const auto& [key, value] : bound.scale.items()) EXPECT_TRUE(tuned.scale.contains(key)) << key;
  }
}

TEST(BoundStrings, BindingsThatDoNotFitAreUsageErrors) {
  const datasets::StringColumn column = awkward_column();
  const StringOperator op(StringOp::Like);
  Engine& engine = test::cpu_engine();
  const auto bind = [&](Binding b) { return op.bind(engine, b); };
  DeviceColumn d = on_device(op, column);
  d.binding.query = {{"pattern", "%TIN"}};
  EXPECT_NO_THROW(bind(d.binding));

  // Missing and null inputs: the contract (test_contract.cpp).
  Binding no_pattern = d.binding;
  no_pattern.query.clear();
  EXPECT_THROW(bind(no_pattern), UsageError);
  Binding unknown_key = d.binding;
  unknown_key.query["value"] = "x";
  EXPECT_THROW(bind(unknown_key), UsageError);
  Binding bad_pattern = d.binding;
  bad_pattern.query["pattern"] = "ends with \\";
  EXPECT_THROW(bind(bad_pattern), UsageError);
  Binding too_many = d.binding;
  too_many.rows[0] = 1ULL << 31;
  EXPECT_THROW(bind(too_many), UsageError);

  // The offsets' buffer too small for its rows.
  Binding more_rows = d.binding;
  more_rows.rows[0] = d.binding.inputs[0]->bytes() / 4;
  EXPECT_THROW(bind(more_rows), UsageError);
  // The bytes' buffer ending before the last string.
  DeviceColumn cut = on_device(op, column, true, 8);
  cut.binding.query = d.binding.query;
  EXPECT_THROW(bind(cut.binding), UsageError);
  if (one_buffer(op)) {
    // Offsets counted from the bytes (as Arrow's separate buffers have them) would read the offsets as text.
    std::vector<std::int64_t> offsets{column.offsets.begin(), column.offsets.end()};
    const std::unique_ptr<DeviceBuffer> arrow =
        upload(int32_bytes(offsets) + column.bytes, whole_words(offsets.size() * 4 + column.bytes.size(), 4));
    EXPECT_THROW(bind({{arrow.get()}, {column.rows()}, d.binding.query}), UsageError);
  }
}

}  // namespace
}  // namespace varex::operators
