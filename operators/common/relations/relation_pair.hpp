#pragma once
// Two relations for the Red Fox operators that take a left and a right one: --input and --input2
// (key,value… lines, both), or generated.
//   PRODUCT: --rows and --rows2 and the relation flags (--values, --keys, --seed: the right relation is
//            generated with a seed of its own);
//   JOIN and the set operations, which need sorted inputs: --rows, --rows2, --values, --distinct, --zipf,
//            --match-ratio, --seed (operators/common/relations/sorted_pairs.hpp), and user files must be in
//            the order the operator needs (UsageError naming the file and the first tuple out of order).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/operators/bound_run.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/common/relations/sorted_pairs.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::TupleLayout;
}  // namespace varex::operators

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
// Two relations on the device as a run's kernels take them: their buffers (in the variant's layout), tuples,
// capacities (SoA's stride: attribute c of tuple i at word c * capacity + i) and words per tuple.
struct PairOperands {
  const DeviceBuffer& left;
  const DeviceBuffer& right;
  std::uint64_t n = 0, m = 0;  // tuples of the left and the right relation
  std::uint64_t left_capacity = 0, right_capacity = 0;
  std::uint32_t width = 0;  // 1 + values
};

// Both relations of a pair on one device, each uploaded once in both layouts (RelationInputs, capacity =
// its tuples) and restored together.
struct RelationPairInputs {
  RelationPairInputs(Engine& engine, const datasets::Relation& left_relation,
                     const datasets::Relation& right_relation)
      : left(engine, left_relation, left_relation.rows()),
        right(engine, right_relation, right_relation.rows()),
        width(left_relation.attributes()) {}
  double h2d_ms() const { return left.h2d_ms() + right.h2d_ms(); }
  void restore() {
    left.restore();
    right.restore();
  }
  // Both in `layout` (each one's capacity is its tuples).
  PairOperands operands(TupleLayout layout) const {
    return {left.buffer(layout),
            right.buffer(layout),
            left.capacity(),
            right.capacity(),
            left.capacity(),
            right.capacity(),
            width};
  }
  RelationInputs left, right;
  std::uint32_t width;  // words per tuple (the left relation's)
};

// A UsageError when the output of `operation` ("product", "join") on the spec's two relations would have
// more than 2^30 tuples (`tuples`), the most varex handles (the output and the host's reference hold them).
constexpr std::uint64_t kMaxPairOutputTuples = 1ULL << 30;
void refuse_oversized_output(const std::string& operation, const datasets::WorkloadSpec& spec,
                             std::uint64_t tuples);
// The same for an application's relations of `n` and `m` tuples.
void refuse_oversized_output(const std::string& operation, std::uint64_t n, std::uint64_t m,
                             std::uint64_t tuples);

// Both relations of either kind of spec (files read again; UsageError when one has changed since).
std::pair<datasets::Relation, datasets::Relation> materialise_relation_pair(
    const datasets::WorkloadSpec& spec);

// ---- An application's two relations (Operator::bind, the runtime library) ----
// Refuses any query of a workload of `op` with a UsageError, the runtime's buffer keys (values, layout:
// relation_buffer_keys) among them.
void refuse_pair_query(const std::string& op, const WorkloadOptions& options);

// The caller's relations of a binding (inputs left and right), both as the query's buffer keys describe
// them (relation_buffer_keys, bound_relation): `rows` tuples of 1 + `values` uint32 words (the key first),
// packed (layout=aos, the default: tuple i at words [i * width, (i + 1) * width)) or one array of `rows`
// words per attribute, back to back (layout=soa: attribute c of tuple i at word c * rows + i). UsageError
// for a bad key, more than kMaxRelationRows tuples, or a buffer smaller than its tuples. An empty relation's
// kernels get a word of the binding's own in place of the caller's buffer (which may hold nothing).
class BoundRelationPair {
 public:
  BoundRelationPair(Engine& engine, const std::string& op, const Binding& binding);
  PairOperands operands() const;
  std::uint64_t n() const { return left_.rows; }
  std::uint64_t m() const { return right_.rows; }
  std::uint32_t width() const { return left_.width; }
  TupleLayout layout() const { return left_.layout; }
  // Why a variant of `layout` (or the vendor call, which reads packed tuples) cannot run on these
  // relations: the binding's layout is another; empty where it can.
  std::string refuses(TupleLayout variant_layout, bool vendor) const;
  // The class a workload of these relations has as far as the call knows: shape values, scale rows and
  // rows2 (the names the operators' workload classes use; no generator, nor the keys' statistics).
  datasets::WorkloadClass workload_class() const;

 private:
  BoundRelation left_, right_;
  std::unique_ptr<DeviceBuffer> empty_;
};

// The tuples a bound run writes and hands over, `width` words each in the binding's layout (SoA at a stride
// of capacity(), which the runs make the result's rows), allocated by the run, with a 32-bit device counter
// where the kernels count them.
class BoundTuples {
 public:
  BoundTuples(Engine& engine, std::uint32_t width, TupleLayout layout = TupleLayout::Aos)
      : engine_(engine), width_(width), layout_(layout) {}
  // Buffers for `capacity` tuples, new unless the ones held have exactly that capacity.
  void reserve(std::uint64_t capacity);
  bool held() const { return tuples_ != nullptr; }
  DeviceBuffer& tuples() { return *tuples_; }
  DeviceBuffer& count();
  std::uint64_t capacity() const { return capacity_; }
  // Hands the tuples over (DeviceResult::buffers = {tuples}) with `rows`, or where it is not given with the
  // kernels' count, read back from the device (a LaunchError if it exceeds the capacity). The next run
  // reserves buffers of its own.
  DeviceResult take(OutputKind kind, std::optional<std::uint64_t> rows = std::nullopt);

 private:
  Engine& engine_;
  std::uint32_t width_;
  TupleLayout layout_;
  std::uint64_t capacity_ = 0;
  std::unique_ptr<DeviceBuffer> tuples_, count_;
  std::unique_ptr<HostBuffer> host_count_;
};

}  // namespace varex::operators
