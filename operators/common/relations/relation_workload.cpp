#include "operators/common/relations/relation_workload.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/workload_flags.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::TupleLayout;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

InputDecl relation_input() {
  return {"relation", "uint32 key + 1..3 uint32 values",
          "keys uniform, sorted, 256 distinct or in runs (--keys, --run), values uniform, seeded",
          "one tuple per line: key,value[,value[,value]] (unsigned 32-bit decimals)"};
}

std::vector<FlagDecl> relation_flags(datasets::KeyDistribution default_keys) {
  using datasets::KeyDistribution;
  // "name (what)", or "name (default: what)" for the default.
  const auto choice = [default_keys](KeyDistribution keys, const std::string& what) {
    if (keys == default_keys)
      return datasets::to_string(keys) + " (default" + (what.empty() ? "" : ": ") + what + ")";
    return datasets::to_string(keys) + (what.empty() ? "" : " (" + what + ")");
  };
  return {flags::input("Read the relation from FILE (one tuple per line, key,value[,value...]) instead of "
                       "generating it"),
          flags::rows("Generated tuples (an integer or 2^N; default: twice the largest device cache in "
                      "8-byte tuples)"),
          {"values", "N", "Value attributes per generated tuple, 1 to 3 (default 1)"},
          {"keys", "DIST",
           "Generated keys: " + choice(KeyDistribution::Uniform, "") + ", " +
               choice(KeyDistribution::Sorted, "ascending") + ", " +
               choice(KeyDistribution::Dup, "256 distinct keys k*2^24+2^23") + " or " +
               choice(KeyDistribution::Runs, "ascending, each key repeated --run times in a row")},
          {"run", "N", "Tuples per run of equal keys under --keys runs, at least 1 (default 16)"},
          flags::seed()};
}

datasets::WorkloadSpec relation_workload(const std::string& op, const WorkloadOptions& options,
                                         datasets::KeyDistribution default_keys) {
  datasets::WorkloadSpec spec;
  spec.op = op;
  if (const auto input = options.text("input")) {
    const std::string path = std::filesystem::absolute(*input).string();
    const datasets::Relation relation = datasets::load_relation(path);
    spec.generator = "file";
    // An empty file is an empty relation (its result is empty, or the other side's); with no line to count
    // its attributes by, it has one value, as a generated relation by default.
    spec.params = {{"path", bytes_json(path)},
                   {"rows", relation.rows()},
                   {"values", relation.rows() ? relation.values() : 1u},
                   {"format", "csv"},
                   {"fingerprint", datasets::file_fingerprint(path)}};
  } else {
    const auto rows = options.count("rows");
    if (!rows) throw std::logic_error(op + ": generated workloads need a row count");
    if (*rows == 0) throw UsageError("--rows 0: a generated workload needs at least one row");
    const std::uint64_t values = options.count("values").value_or(1);
    if (values < 1 || values > 3) {
      throw UsageError("--values " + std::to_string(values) + ": a relation has 1 to 3 values per tuple");
    }
    const auto keys =
        options.text("keys") ? datasets::key_distribution_from_string(*options.text("keys")) : default_keys;
    spec.generator = "relation";
    spec.params = {
        {"rows", *rows}, {"values", values}, {"keys", datasets::to_string(keys)}, {"seed", options.seed()}};
    // The run length is part of the workload only where it shapes the keys (other specs keep their ids).
    if (keys == datasets::KeyDistribution::Runs) {
      const std::uint64_t run = options.count("run").value_or(datasets::kDefaultRun);
      if (run == 0) throw UsageError("--run 0: a run holds at least one tuple");
      spec.params["run"] = run;
    } else if (const auto run = options.text("run")) {
      throw UsageError("--run " + *run + " applies to --keys runs only (the keys are " +
                       datasets::to_string(keys) + ")");
    }
  }
  if (spec.rows() > kMaxRelationRows) {
    throw UsageError("input too large: " + op + " handles at most " + std::to_string(kMaxRelationRows) +
                     " tuples, got " + std::to_string(spec.rows()));
  }
  return spec;
}

std::uint32_t relation_values(const datasets::WorkloadSpec& spec) {
  return spec.params.at("values").get<std::uint32_t>();
}

datasets::Relation load_recorded_relation(const std::string& path, std::uint64_t rows, std::uint64_t values) {
  datasets::Relation relation = datasets::load_relation(path);
  // An empty file has no attributes to count; the workload gave it its width.
  if (relation.rows() == 0 && rows == 0) relation.columns.assign(values + 1, {});
  if (relation.rows() != rows || relation.values() != values)
    throw UsageError("input file '" + path + "' changed while varex was running");
  return relation;
}

datasets::Relation materialise_relation(const datasets::WorkloadSpec& spec) {
  if (spec.generator == "relation") {
    return datasets::generate_relation(
        spec.rows(), relation_values(spec),
        datasets::key_distribution_from_string(spec.params.at("keys").get<std::string>()),
        spec.params.at("seed").get<std::uint64_t>(), spec.params.value("run", datasets::kDefaultRun));
  }
  if (spec.generator == "file")
    return load_recorded_relation(bytes_from_json(spec.params.at("path")), spec.rows(),
                                  relation_values(spec));
  throw UsageError(spec.op + " cannot use workload generator '" + spec.generator + "'");
}

std::vector<std::uint32_t> relation_image(const datasets::Relation& relation, TupleLayout layout,
                                          std::uint64_t capacity) {
  const std::uint64_t rows = relation.rows();
  const std::uint32_t width = relation.attributes();
  std::vector<std::uint32_t> image(std::max(capacity, rows) * width, 0);
  for (std::uint32_t c = 0; c < width; ++c) {
    const auto& column = relation.columns[c];
    for (std::uint64_t i = 0; i < rows; ++i) {
      image[layout == TupleLayout::Aos ? i * width + c : c * std::max(capacity, rows) + i] = column[i];
    }
  }
  return image;
}

RelationInputs::RelationInputs(Engine& engine, const datasets::Relation& relation, std::uint64_t capacity)
    : engine_(engine), capacity_(std::max(capacity, relation.rows())) {
  bytes_ = std::max<std::uint64_t>(capacity_ * relation.attributes() * 4, 4);
  for (TupleLayout layout : {TupleLayout::Aos, TupleLayout::Soa}) {
    const std::vector<std::uint32_t> image = relation_image(relation, layout, capacity_);
    auto host = engine.allocate_host(bytes_);
    if (!image.empty()) std::memcpy(host->data(), image.data(), image.size() * 4);
    (layout == TupleLayout::Aos ? host_aos_ : host_soa_) = std::move(host);
    (layout == TupleLayout::Aos ? aos_ : soa_) = engine.allocate(bytes_);
  }
  restore();
}

void RelationInputs::restore() {
  h2d_ms_ = engine_.upload(*aos_, 0, *host_aos_, bytes_)->elapsed_ms();
  engine_.upload(*soa_, 0, *host_soa_, bytes_)->elapsed_ms();
}

std::vector<QueryKeyDecl> relation_buffer_keys() {
  return {
      {"values",
       "runtime calls only: value attributes per tuple of the application's relation, 1 to 3 (default 1; "
       "on the command line --values)"},
      {"layout",
       "runtime calls only: the application's relation as aos (tuples packed, the default) or soa (one "
       "array of rows words per attribute, back to back); variants of the other layout do not run on it"}};
}

BoundRelation bound_relation(const std::string& op, const DeviceBuffer& buffer, std::uint64_t rows,
                             std::map<std::string, std::string>& query) {
  BoundRelation relation;
  relation.buffer = &buffer;
  relation.rows = rows;
  if (const auto it = query.find("values"); it != query.end()) {
    const std::uint64_t values = parse_count(it->second, op + " query values");
    if (values < 1 || values > 3)
      throw UsageError(op + ": query values=" + it->second + ": a relation has 1 to 3 values per tuple");
    relation.width = static_cast<std::uint32_t>(1 + values);
    query.erase(it);
  }
  if (const auto it = query.find("layout"); it != query.end()) {
    if (it->second != "aos" && it->second != "soa")
      throw UsageError(op + ": query layout=" + printable(it->second) + ": the relation is aos or soa");
    relation.layout = it->second == "soa" ? TupleLayout::Soa : TupleLayout::Aos;
    query.erase(it);
  }
  if (rows > kMaxRelationRows) {
    throw UsageError(op + " handles at most " + std::to_string(kMaxRelationRows) + " tuples, got " +
                     std::to_string(rows));
  }
  const std::uint64_t need = rows * relation.width * 4;
  if (buffer.bytes() < need) {
    throw UsageError(op + ": the relation's buffer holds " + std::to_string(buffer.bytes()) + " bytes, " +
                     std::to_string(rows) + " tuples of " + std::to_string(relation.width) + " uint32 need " +
                     std::to_string(need));
  }
  return relation;
}

TupleLayout layout_of(const variants::Params& params) {
  return variants::get_string(params, "layout") == "soa" ? TupleLayout::Soa : TupleLayout::Aos;
}

variants::Tunable relation_local(const DeviceInfo& device, variants::TunableKind kind,
                                 const std::string& help) {
  return variants::local_tunable(device, {.with_auto = false,
                                          .kind = kind,
                                          .default_value = variants::Value{128},
                                          .largest = 1024,
                                          .help = help});
}

variants::Tunable relation_grid() {
  return variants::grid_tunable({variants::Value{"cover"}, 1, 2, 4, 8}, variants::Value{"cover"},
                                "the tiles (local x ept tuples each)");
}

variants::Tunable relation_layout() {
  return {"layout",
          variants::TunableKind::Compile,
          {variants::Value{"aos"}, variants::Value{"soa"}},
          variants::Value{"aos"},
          "aos: packed array of tuples, as in the source; soa: one array per attribute (input and output)"};
}

std::optional<std::uint32_t> attribute_index(std::string_view name) {
  static constexpr std::string_view kNames[] = {"key", "v0", "v1", "v2"};
  for (std::uint32_t i = 0; i < 4; ++i) {
    if (kNames[i] == name) return i;
  }
  return std::nullopt;
}

}  // namespace varex::operators
