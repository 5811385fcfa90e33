#pragma once
// Two relations for the Red Fox operators that take a left and a right one: --input and --input2
// (key,value… lines, both), or generated.
//   PRODUCT: --rows and --rows2 and the relation flags (--values, --keys, --seed: the right relation is
//            generated with a seed of its own);
//   JOIN and the set operations, which need sorted inputs: --rows, --rows2, --values, --distinct, --zipf,
//            --match-ratio, --seed (datasets/sorted_pairs.hpp), and user files must be in the order the
//            operator needs (UsageError naming the file and the first tuple out of order).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "datasets/relations.hpp"
#include "datasets/sorted_pairs.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// The generated right relation's seed is the workload's seed XOR this (another stream of the same generator).
constexpr std::uint64_t kRightSeed = 0x9E3779B97F4A7C15ULL;

// relation_flags() plus --input2 and --rows2 (`rows2_help` says what the default is).
std::vector<FlagDecl> relation_pair_flags(const std::string& rows2_help);
// The spec: the left relation as relation_workload() gives it, and the right one's rows2 (and path2, when
// read from a file). `default_rows2` from the left's rows when --rows2 is not given. UsageError for one file
// without the other, an empty right file, or a right relation with another number of values.
datasets::WorkloadSpec relation_pair_workload(const std::string& op, const WorkloadOptions& options,
                                              std::uint64_t (*default_rows2)(std::uint64_t rows));
std::uint64_t relation_rows2(const datasets::WorkloadSpec& spec);

// --rows2 defaults to --rows (for relation_pair_workload and sorted_pair_workload).
std::uint64_t same_rows(std::uint64_t rows);

// The flags of two sorted relations (see above); `rows2_help` says what --rows2's default is.
std::vector<FlagDecl> sorted_pair_flags(const std::string& rows2_help);
// The spec of two sorted relations (generator "sorted_pair"), or of two files, each of which must be sorted
// in `order`. UsageError for a flag out of range (--distinct 1..rows, --match-ratio 0..1, --zipf 0..10), one
// file without the other, an empty file, unequal numbers of values or a file out of order. --rows2
// defaults to `default_rows2` of the left's rows.
datasets::WorkloadSpec sorted_pair_workload(const std::string& op, const WorkloadOptions& options,
                                            datasets::SortOrder order,
                                            std::uint64_t (*default_rows2)(std::uint64_t rows));
// The declaration of an operator on two sorted relations (JOIN, the set operations): inputs left and right
// (their generator, and the order their files must be in), sorted_pair_flags() with --rows2 defaulting to
// --rows, and an output compared as a multiset (its order is a variant's choice).
WorkloadDecl sorted_pair_declaration(datasets::SortOrder order);
// A UsageError naming `path` and the first tuple of `relation` out of `order`, if there is one.
void require_sorted(const datasets::Relation& relation, datasets::SortOrder order, const std::string& op,
                    const std::string& path);
// Both relations of a pair on one device, each uploaded once in both layouts (RelationInputs, capacity =
// its tuples) and restored together.
struct RelationPairInputs {
  RelationPairInputs(Engine& engine, const datasets::Relation& left_relation,
                     const datasets::Relation& right_relation)
      : left(engine, left_relation, left_relation.rows()),
        right(engine, right_relation, right_relation.rows()) {}
  double h2d_ms() const { return left.h2d_ms() + right.h2d_ms(); }
  void restore() {
    left.restore();
    right.restore();
  }
  RelationInputs left, right;
};

// A UsageError when the output of `operation` ("product", "join") on the spec's two relations would have
// more than 2^30 tuples (`tuples`), the most varex handles (the output and the host's reference hold them).
constexpr std::uint64_t kMaxPairOutputTuples = 1ULL << 30;
void refuse_oversized_output(const std::string& operation, const datasets::WorkloadSpec& spec,
                             std::uint64_t tuples);

// Both relations of either kind of spec (files read again; UsageError when one has changed since).
std::pair<datasets::Relation, datasets::Relation> materialise_relation_pair(
    const datasets::WorkloadSpec& spec);

}  // namespace varex::operators
