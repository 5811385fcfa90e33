#include "operators/common/attributes/attribute_workload.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/workload_flags.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::LaunchBundle;
using harness::round_up;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

InputDecl attribute_input() {
  return {"records", "1..16 signed 32-bit attributes a0, a1, …",
          "uniform, or the paper's TCP/IP-trace or census shapes (--data), seeded",
          "one record per line: a0,a1,… (signed 32-bit decimals)"};
}

std::vector<FlagDecl> attribute_flags() {
  return {flags::input("Read the records from FILE (one per line, a0,a1,…) instead of generating them"),
          flags::rows("Generated records (an integer or 2^N; default: four times the largest device cache "
                      "over all attributes)"),
          {"attributes", "N", "Attributes per generated record, 1 to 16 (default 4)"},
          {"data", "SHAPE",
           "Generated values: uniform (default: all of int32), traces (the paper's TCP/IP trace records: "
           "bytes, duration, port, packets, skewed) or census (age, income, hours, education, skewed)"},
          flags::seed()};
}

datasets::WorkloadSpec attribute_workload(const std::string& op, const WorkloadOptions& options) {
  datasets::WorkloadSpec spec;
  spec.op = op;
  if (const auto input = options.text("input")) {
    const std::string path = std::filesystem::absolute(*input).string();
    const datasets::AttributeTable table = datasets::load_attribute_table(path);
    spec.generator = "file";
    spec.params = {{"path", bytes_json(path)},
                   {"rows", table.rows()},
                   {"attributes", table.attributes()},
                   {"format", "csv"},
                   {"fingerprint", datasets::file_fingerprint(path)}};
  } else {
    const auto rows = options.count("rows");
    if (!rows) throw std::logic_error(op + ": generated workloads need a row count");
    const std::uint64_t attributes = options.count("attributes").value_or(4);
    if (attributes < 1 || attributes > datasets::kMaxAttributes) {
      throw UsageError("--attributes " + std::to_string(attributes) + ": a record has 1 to " +
                       std::to_string(datasets::kMaxAttributes) + " attributes");
    }
    const auto data = datasets::attribute_data_from_string(options.text("data").value_or("uniform"));
    spec.generator = "attributes";
    spec.params = {{"rows", *rows},
                   {"attributes", attributes},
                   {"data", datasets::to_string(data)},
                   {"seed", options.seed()}};
  }
  if (spec.rows() > kMaxAttributeRows) {
    throw UsageError("input too large: " + op + " handles at most " + std::to_string(kMaxAttributeRows) +
                     " records, got " + std::to_string(spec.rows()));
  }
  return spec;
}

std::uint32_t attribute_count(const datasets::WorkloadSpec& spec) {
  return spec.params.at("attributes").get<std::uint32_t>();
}

datasets::AttributeTable materialise_attributes(const datasets::WorkloadSpec& spec) {
  if (spec.generator == "attributes") {
    return datasets::generate_attribute_table(
        spec.rows(), attribute_count(spec),
        datasets::attribute_data_from_string(spec.params.at("data").get<std::string>()),
        spec.params.at("seed").get<std::uint64_t>());
  }
  if (spec.generator == "file") {
    const std::string path = bytes_from_json(spec.params.at("path"));
    datasets::AttributeTable table = datasets::load_attribute_table(path);
    if (table.rows() != spec.rows() || table.attributes() != attribute_count(spec)) {
      throw UsageError("input file '" + path + "' changed while varex was running");
    }
    // An empty file has no attribute count: the query may name any attribute (parse_attribute's 0), so the
    // table holds every attribute, each empty, and whatever reads a column by index finds one.
    if (table.attributes() == 0) table.columns.resize(datasets::kMaxAttributes);
    return table;
  }
  throw UsageError(spec.op + " cannot use workload generator '" + spec.generator + "'");
}

std::uint32_t parse_attribute(const std::string& text, std::uint32_t attributes, const std::string& key) {
  const bool named = text.size() > 1 && text.size() < 4 && text[0] == 'a' &&
                     std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!named) throw UsageError("query " + key + "=" + text + ": name an attribute a0, a1, …");
  const auto index = static_cast<std::uint32_t>(std::stoul(text.substr(1)));
  if ((attributes && index >= attributes) || index >= datasets::kMaxAttributes) {
    throw UsageError("query " + key + "=" + text + ": the records have attributes a0 to a" +
                     std::to_string(std::max(attributes, 1u) - 1));
  }
  return index;
}

Cnf parse_where(const std::map<std::string, std::string>& query, std::uint32_t attributes) {
  const auto it = query.find("where");
  if (it == query.end()) return {};
  Cnf cnf = Cnf::parse(it->second, attributes);
  if (cnf.all.size() > 8) {
    throw UsageError("query where: " + std::to_string(cnf.all.size()) + " clauses; at most 8 are supported");
  }
  return cnf;
}

Cnf where_of(const nlohmann::json& query) {
  return query.contains("where") ? Cnf::parse(query.at("where").get<std::string>(), 0) : Cnf{};
}

bool keeps(const Cnf& cnf, const datasets::AttributeTable& table, std::uint64_t r) {
  for (const Clause& clause : cnf.all) {
    bool any = false;
    for (const Predicate& p : clause.any) {
      const std::int64_t a = table.columns[p.attribute][r];
      const std::int64_t b = p.rhs_is_attribute ? table.columns[static_cast<std::size_t>(p.rhs)][r] : p.rhs;
      any = any || compares(a, p.op, b);
    }
    if (!any) return false;
  }
  return true;
}

std::uint64_t attribute_capacity(std::uint64_t rows) {
  return round_up(std::max<std::uint64_t>(rows, 1), 32);
}

std::uint64_t attribute_image_bytes(const datasets::WorkloadSpec& spec) {
  const std::uint32_t columns = attribute_count(spec) ? attribute_count(spec) : datasets::kMaxAttributes;
  return attribute_capacity(spec.rows()) * columns * 4;
}

AttributeInputs::AttributeInputs(Engine& engine, const datasets::AttributeTable& table)
    : engine_(engine),
      rows_(table.rows()),
      capacity_(attribute_capacity(table.rows())),
      columns_(table.attributes()) {
  const std::uint32_t columns = table.attributes() ? table.attributes() : datasets::kMaxAttributes;
  bytes_ = capacity_ * columns * 4;
  host_ = engine.allocate_host(bytes_);
  std::memset(host_->data(), 0, bytes_);
  for (std::uint32_t c = 0; c < table.attributes(); ++c) {
    if (rows_) std::memcpy(host_->as<std::int32_t>() + c * capacity_, table.columns[c].data(), rows_ * 4);
  }
  device_ = engine.allocate(bytes_);
  restore();
}

void AttributeInputs::restore() {
  h2d_ms_ = engine_.upload(*device_, 0, *host_, bytes_)->elapsed_ms();
}

AttributeColumns bind_attributes(const std::string& op, const Binding& binding) {
  const DeviceBuffer& buffer = *binding.inputs.at(0);
  const std::uint64_t rows = binding.rows.at(0);
  if (rows > kMaxAttributeRows) {
    throw UsageError(op + " handles at most " + std::to_string(kMaxAttributeRows) + " records, got " +
                     std::to_string(rows));
  }
  if (buffer.bytes() < rows * 4) {
    throw UsageError("the records' buffer holds " + std::to_string(buffer.bytes()) + " bytes, " +
                     std::to_string(rows) + " records need at least " + std::to_string(rows * 4) +
                     " (one int32 column)");
  }
  const std::uint64_t whole = rows ? buffer.bytes() / (rows * 4) : 0;
  // The buffer's size is all that says how many attributes the records have: reading a wider record as
  // its first attributes would hide a layout the caller got wrong.
  if (whole > datasets::kMaxAttributes) {
    throw UsageError("the records' buffer holds " + std::to_string(buffer.bytes()) + " bytes, " +
                     std::to_string(whole) + " attributes of " + std::to_string(rows) + " records; " + op +
                     " takes at most " + std::to_string(datasets::kMaxAttributes) + " attributes");
  }
  return {&buffer, rows, rows, static_cast<std::uint32_t>(whole)};
}

datasets::WorkloadClass bound_attribute_class(std::uint64_t rows, const nlohmann::json& query) {
  // The tuned workloads' class without what only a workload spec knows.
  datasets::WorkloadSpec spec;
  spec.params = {{"rows", rows}};
  spec.query = query;
  datasets::WorkloadClass c = datasets::default_class(spec);
  c.shape.erase("generator");
  return c;
}

std::vector<variants::Tunable> attribute_launch_tunables(const DeviceInfo& device) {
  return {relation_local(device, variants::TunableKind::Compile,
                         "work-group size (compile-time: sizes the work-group arrays)"),
          {"ept",
           variants::TunableKind::Compile,
           {1, 4, 16},
           4,
           "rows per work-item and tile; a work-item's rows lie local apart (coalesced)"},
          relation_grid()};
}

AttributeVariant::AttributeVariant(const variants::Params& params, const DeviceInfo& device)
    : LaunchBundle(params, device),
      local(static_cast<std::uint64_t>(variants::get_int(params, "local"))),
      ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))) {
  defines = {{"WG_SIZE", std::to_string(local)}, {"EPT", std::to_string(ept)}};
}

Defines filter_defines(const Cnf& cnf) {
  if (cnf.all.empty()) return {};
  std::string keep;
  for (const Clause& clause : cnf.all) keep += (keep.empty() ? "(" : "&(") + kernel_expression(clause) + ")";
  return {{"KEEP", keep}};
}

}  // namespace varex::operators
