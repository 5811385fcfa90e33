#include "harness/operators/relation_pair.hpp"

#include <filesystem>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/relation_workload.hpp"

namespace varex::harness {

std::vector<FlagDecl> relation_pair_flags(const std::string& rows2_help) {
  std::vector<FlagDecl> flags = relation_flags();
  flags.push_back(
      {"input2", "FILE", "Read the right relation from FILE (with --input; key,value[,value...] lines)"});
  flags.push_back({"rows2", "N", "Generated tuples of the right relation (" + rows2_help + ")"});
  return flags;
}

datasets::WorkloadSpec relation_pair_workload(const std::string& op, const WorkloadOptions& options,
                                              std::uint64_t (*default_rows2)(std::uint64_t rows)) {
  const auto input = options.text("input"), input2 = options.text("input2");
  if (input.has_value() != input2.has_value())
    throw UsageError(op + " reads its left relation from --input and its right one from --input2: give both");
  datasets::WorkloadSpec spec = relation_workload(op, options);
  if (input2) {
    const std::string path2 = std::filesystem::absolute(*input2).string();
    const datasets::Relation right = datasets::load_relation(path2);
    if (right.rows() == 0)
      throw UsageError("input file '" + path2 + "' holds no tuples; " + op + " needs at least one");
    if (right.values() != relation_values(spec)) {
      throw UsageError(op + ": the right relation's tuples have " + std::to_string(right.values()) +
                       " values, the left one's " + std::to_string(relation_values(spec)));
    }
    spec.params["path2"] = bytes_json(path2);
    spec.params["rows2"] = right.rows();
    spec.params["fingerprint2"] = datasets::file_fingerprint(path2);
  } else {
    const std::uint64_t rows2 = options.count("rows2").value_or(default_rows2(spec.rows()));
    if (rows2 == 0) throw UsageError("--rows2 0: a generated workload needs at least one row");
    spec.params["rows2"] = rows2;
  }
  if (relation_rows2(spec) > kMaxRelationRows) {
    throw UsageError("input too large: " + op + " handles at most " + std::to_string(kMaxRelationRows) +
                     " tuples per relation, got " + std::to_string(relation_rows2(spec)));
  }
  return spec;
}

std::uint64_t relation_rows2(const datasets::WorkloadSpec& spec) {
  return spec.params.at("rows2").get<std::uint64_t>();
}

std::pair<datasets::Relation, datasets::Relation> materialise_relation_pair(
    const datasets::WorkloadSpec& spec) {
  datasets::Relation left = materialise_relation(spec);
  datasets::Relation right;
  if (spec.generator == "relation") {
    right = datasets::generate_relation(
        relation_rows2(spec), relation_values(spec),
        datasets::key_distribution_from_string(spec.params.at("keys").get<std::string>()),
        spec.params.at("seed").get<std::uint64_t>() ^ kRightSeed);
  } else {
    const std::string path2 = bytes_from_json(spec.params.at("path2"));
    right = datasets::load_relation(path2);
    if (right.rows() != relation_rows2(spec) || right.values() != relation_values(spec))
      throw UsageError("input file '" + path2 + "' changed while varex was running");
  }
  return {std::move(left), std::move(right)};
}

}  // namespace varex::harness
