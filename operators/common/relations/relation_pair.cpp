#include "operators/common/relations/relation_pair.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/workload_flags.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::tuple_parts;
using harness::TupleLayout;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

// The right relation's rows: a count of the class and an input size (the small instance divides it).
FlagDecl rows2_flag(const std::string& help) {
  return {"rows2", "N", "Generated tuples of the right relation (" + help + ")", datasets::ScaleKind::Count,
          /*sizes_input=*/true};
}

}  // namespace

std::vector<FlagDecl> relation_pair_flags(const std::string& rows2_help) {
  std::vector<FlagDecl> flags = relation_flags();
  flags.push_back(
      {"input2", "FILE", "Read the right relation from FILE (with --input; key,value[,value...] lines)"});
  flags.push_back(rows2_flag(rows2_help));
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
    // An empty side takes the other side's width (it has no line to count its own by).
    if (spec.rows() == 0 && right.rows() > 0) spec.params["values"] = right.values();
    if (right.rows() > 0 && right.values() != relation_values(spec)) {
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

std::vector<FlagDecl> sorted_pair_flags(const std::string& rows2_help) {
  return {
      flags::input("Read the left relation from FILE (with --input2; key,value[,value...] lines, sorted)"),
      {"input2", "FILE", "Read the right relation from FILE (with --input; sorted as --input)"},
      flags::rows("Generated tuples of the left relation (an integer or 2^N)"),
      rows2_flag(rows2_help),
      {"values", "N", "Value attributes per generated tuple, 1 to 3 (default 1)"},
      flags::distinct("Distinct keys of the left relation, 1 to its tuples (default: all unique)"),
      {"match-ratio", "X",
       "Share of right tuples whose key occurs on the left, 0 to 1 (default 1); half of those equal a "
       "left tuple in their values too",
       datasets::ScaleKind::Fraction},
      flags::zipf(),
      flags::seed()};
}

void refuse_oversized_output(const std::string& operation, const datasets::WorkloadSpec& spec,
                             std::uint64_t tuples) {
  refuse_oversized_output(operation, spec.rows(), relation_rows2(spec), tuples);
}

void refuse_oversized_output(const std::string& operation, std::uint64_t n, std::uint64_t m,
                             std::uint64_t tuples) {
  if (tuples <= kMaxPairOutputTuples) return;
  throw UsageError("input too large: the " + operation + " of " + std::to_string(n) + " x " +
                   std::to_string(m) + " tuples has " + std::to_string(tuples) +
                   " tuples, more than the 2^30 varex handles");
}

WorkloadDecl sorted_pair_declaration(datasets::SortOrder order) {
  const std::string sorted =
      order == datasets::SortOrder::ByKey ? "sorted by key" : "sorted by key, then values";
  WorkloadDecl d;
  d.inputs = {relation_input(), relation_input()};
  d.inputs[0].name = "left";
  d.inputs[1].name = "right";
  d.inputs[0].generator = "--distinct keys spread over 2^32 (uniform or --zipf), values uniform, " + sorted;
  d.inputs[1].generator =
      "keys of left tuples (--match-ratio of them, half with their values too) or keys found nowhere on the "
      "left, " +
      sorted;
  for (InputDecl& input : d.inputs) input.file_format += ", " + sorted;
  d.flags = sorted_pair_flags("default: --rows");
  d.query = relation_buffer_keys();
  d.output = OutputKind::RowsMultiset;
  return d;
}

void require_sorted(const datasets::Relation& relation, datasets::SortOrder order, const std::string& op,
                    const std::string& path) {
  if (const auto row = datasets::first_unsorted(relation, order)) {
    throw UsageError("input file '" + path + "' is not sorted by " +
                     (order == datasets::SortOrder::ByKey ? "key" : "key and values") + " as " + op +
                     " needs: line " + std::to_string(*row + 1) + " comes before line " +
                     std::to_string(*row) + " in that order");
  }
}

datasets::WorkloadSpec sorted_pair_workload(const std::string& op, const WorkloadOptions& options,
                                            datasets::SortOrder order,
                                            std::uint64_t (*default_rows2)(std::uint64_t rows)) {
  const auto input = options.text("input"), input2 = options.text("input2");
  if (input.has_value() != input2.has_value())
    throw UsageError(op + " reads its left relation from --input and its right one from --input2: give both");
  datasets::WorkloadSpec spec;
  spec.op = op;
  if (input) {
    for (const char* generated : {"rows2", "values", "distinct", "match-ratio", "zipf"}) {
      if (options.text(generated))
        throw UsageError(std::string("--") + generated +
                         " applies to generated "
                         "relations, not to --input files");
    }
    spec.generator = "file";
    for (const auto& [flag, suffix] : {std::pair{*input, ""}, std::pair{*input2, "2"}}) {
      const std::string path = std::filesystem::absolute(flag).string();
      const datasets::Relation relation = datasets::load_relation(path);
      // An empty side takes the other side's width (it has no line to count its own by), one value if both
      // are empty.
      if (relation.rows() > 0 && (!*suffix || spec.params.at("rows").get<std::uint64_t>() == 0)) {
        spec.params["values"] = relation.values();
      } else if (relation.rows() > 0 && relation.values() != relation_values(spec)) {
        throw UsageError(op + ": the right relation's tuples have " + std::to_string(relation.values()) +
                         " values, the left one's " + std::to_string(relation_values(spec)));
      } else if (!*suffix) {
        spec.params["values"] = 1;
      }
      require_sorted(relation, order, op, path);
      spec.params[std::string("path") + suffix] = bytes_json(path);
      spec.params[std::string("rows") + suffix] = relation.rows();
      spec.params[std::string("fingerprint") + suffix] = datasets::file_fingerprint(path);
    }
    spec.params["format"] = "csv";
  } else {
    const auto rows = options.count("rows");
    if (!rows) throw std::logic_error(op + ": generated workloads need a row count");
    if (*rows == 0) throw UsageError("--rows 0: a generated workload needs at least one row");
    const std::uint64_t rows2 = options.count("rows2").value_or(default_rows2(*rows));
    if (rows2 == 0) throw UsageError("--rows2 0: a generated workload needs at least one row");
    const std::uint64_t values = options.count("values").value_or(1);
    if (values < 1 || values > 3)
      throw UsageError("--values " + std::to_string(values) + ": a relation has 1 to 3 values per tuple");
    const std::uint64_t distinct = options.count("distinct").value_or(*rows);
    if (distinct < 1 || distinct > *rows) {
      throw UsageError("--distinct must lie between 1 and the left relation's tuples (" +
                       std::to_string(*rows) + "), got " + std::to_string(distinct));
    }
    const double match = options.number("match-ratio").value_or(1.0);
    if (!(match >= 0.0 && match <= 1.0)) throw UsageError("--match-ratio must lie between 0 and 1");
    const double zipf = options.number("zipf").value_or(0.0);
    if (!(zipf >= 0.0 && zipf <= 10.0)) throw UsageError("--zipf must lie between 0 and 10");
    spec.generator = "sorted_pair";
    spec.params = {{"rows", *rows},        {"rows2", rows2}, {"values", values},      {"distinct", distinct},
                   {"match_ratio", match}, {"zipf", zipf},   {"seed", options.seed()}};
  }
  for (const std::uint64_t rows : {spec.rows(), relation_rows2(spec)}) {
    if (rows > kMaxRelationRows) {
      throw UsageError("input too large: " + op + " handles at most " + std::to_string(kMaxRelationRows) +
                       " tuples per relation, got " + std::to_string(rows));
    }
  }
  return spec;
}

std::pair<datasets::Relation, datasets::Relation> materialise_relation_pair(
    const datasets::WorkloadSpec& spec) {
  if (spec.generator == "sorted_pair") {
    const auto& p = spec.params;
    return datasets::generate_sorted_pair({.rows = p.at("rows").get<std::uint64_t>(),
                                           .rows2 = p.at("rows2").get<std::uint64_t>(),
                                           .values = p.at("values").get<std::uint32_t>(),
                                           .distinct = p.at("distinct").get<std::uint64_t>(),
                                           .match_ratio = p.at("match_ratio").get<double>(),
                                           .zipf = p.at("zipf").get<double>(),
                                           .seed = p.at("seed").get<std::uint64_t>()});
  }
  datasets::Relation left = materialise_relation(spec);
  datasets::Relation right;
  if (spec.generator == "relation") {
    right = datasets::generate_relation(
        relation_rows2(spec), relation_values(spec),
        datasets::key_distribution_from_string(spec.params.at("keys").get<std::string>()),
        spec.params.at("seed").get<std::uint64_t>() ^ kRightSeed);
  } else {
    right = load_recorded_relation(bytes_from_json(spec.params.at("path2")), relation_rows2(spec),
                                   relation_values(spec));
  }
  return {std::move(left), std::move(right)};
}

std::uint64_t same_rows(std::uint64_t rows) {
  return rows;
}

void refuse_pair_query(const std::string& op, const WorkloadOptions& options) {
  if (options.query.empty()) return;
  const std::string& key = options.query.begin()->first;
  for (const QueryKeyDecl& k : relation_buffer_keys()) {
    if (k.key == key) {
      throw UsageError(op + ": query key '" + key +
                       "' describes an application's buffers (runtime calls); here the relations are --input "
                       "and --input2 or generated (--values) and their layout a tunable");
    }
  }
  throw UsageError(op + ": unknown query key '" + key + "' (it takes no query)");
}

BoundRelationPair::BoundRelationPair(Engine& engine, const std::string& op, const Binding& binding) {
  // Both relations as the one query describes them (bound_relation takes its keys out of a copy each).
  std::map<std::string, std::string> query = binding.query;
  left_ = bound_relation(op + " (left)", *binding.inputs.at(0), binding.rows.at(0), query);
  query = binding.query;
  right_ = bound_relation(op + " (right)", *binding.inputs.at(1), binding.rows.at(1), query);
  if (n() == 0 || m() == 0) {
    empty_ = engine.allocate(4);
    if (n() == 0) left_.buffer = empty_.get();
    if (m() == 0) right_.buffer = empty_.get();
  }
}

PairOperands BoundRelationPair::operands() const {
  return {*left_.buffer, *right_.buffer, n(), m(), n(), m(), width()};
}

std::string BoundRelationPair::refuses(TupleLayout variant_layout, bool vendor) const {
  const char* const names[] = {"aos", "soa"};
  const TupleLayout wanted = vendor ? TupleLayout::Aos : variant_layout;
  if (wanted == layout()) return {};
  return std::string(vendor ? "the vendor call" : "the variant") +
         " reads layout=" + names[static_cast<int>(wanted)] +
         ", the relations are layout=" + names[static_cast<int>(layout())];
}

datasets::WorkloadClass BoundRelationPair::workload_class() const {
  datasets::WorkloadClass c;
  c.shape["values"] = std::to_string(left_.values());
  c.set_scale("rows", n(), datasets::ScaleKind::Count);
  c.set_scale("rows2", m(), datasets::ScaleKind::Count);
  return c;
}

void BoundTuples::reserve(std::uint64_t capacity) {
  if (tuples_ && capacity_ == capacity) return;
  tuples_ = engine_.allocate(std::max<std::uint64_t>(capacity * width_ * 4, 4));
  capacity_ = capacity;
}

DeviceBuffer& BoundTuples::count() {
  if (!count_) count_ = engine_.allocate(4);
  return *count_;
}

DeviceResult BoundTuples::take(OutputKind kind, std::optional<std::uint64_t> rows) {
  if (!tuples_) throw std::logic_error("a bound run's result was taken before it ran");
  if (!rows) {
    if (!host_count_) host_count_ = engine_.allocate_host(4);
    engine_.download(*host_count_, count(), 4)->elapsed_ms();
    rows = *host_count_->as<std::uint32_t>();
    if (*rows > capacity_) {
      throw LaunchError("the kernels counted " + std::to_string(*rows) + " tuples, more than the " +
                        std::to_string(capacity_) + " their output holds");
    }
  }
  DeviceResult result{kind, {}, *rows};
  result.buffers.push_back(std::move(tuples_));
  result.parts =
      tuple_parts(*rows, width_, layout_ == TupleLayout::Soa ? capacity_ * 4 : 0, kind == OutputKind::Rows);
  capacity_ = 0;
  return result;
}

}  // namespace varex::operators
