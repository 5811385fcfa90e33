// ra_intersect, ra_union and ra_difference (Red Fox's set operations, operators/ra_set): the host reference
// against hand-made multiset cases; both algorithms on the OpenCL CPU device for all three operations on
// awkward inputs (one tuple each, identical and disjoint relations, equal keys with different values, runs
// of equal tuples crossing work-groups and shares, sizes no multiple of the work-group, 1 and 3 values)
// against a digest computed here by counting copies; and the workloads they refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include "base/errors.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_set/ra_set.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::RowOrder;
using harness::tuple_digest;
}  // namespace varex::operators

namespace varex::operators {
namespace {

using Tuple = std::vector<std::uint32_t>;
constexpr SetOperation kOperations[] = {SetOperation::Intersection, SetOperation::Union,
                                        SetOperation::Difference};

// A relation of the given tuples (all of one width), sorted by tuple.
datasets::Relation relation_of(std::vector<Tuple> tuples) {
  std::sort(tuples.begin(), tuples.end());
  datasets::Relation r;
  r.columns.assign(tuples.front().size(), {});
  for (const Tuple& t : tuples) {
    for (std::size_t c = 0; c < t.size(); ++c) r.columns[c].push_back(t[c]);
  }
  return r;
}

std::vector<Tuple> copies(const Tuple& t, std::size_t count) {
  return std::vector<Tuple>(count, t);
}

std::vector<Tuple> operator+(std::vector<Tuple> a, const std::vector<Tuple>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// How many copies of each tuple the operation gives, from the copies on either side (counted here, without
// the standard set algorithms), as the free-order digest of RowsOutput (third term 0).
Digest expected(SetOperation op, const datasets::Relation& left, const datasets::Relation& right) {
  std::map<Tuple, std::pair<std::uint64_t, std::uint64_t>> count;
  const auto add = [&](const datasets::Relation& r, bool is_left) {
    for (std::uint64_t i = 0; i < r.rows(); ++i) {
      Tuple t;
      for (const auto& column : r.columns) t.push_back(column[i]);
      auto& [l, rr] = count[t];
      ++(is_left ? l : rr);
    }
  };
  add(left, true);
  add(right, false);
  Digest d;
  for (const auto& [t, c] : count) {
    const auto [m, n] = c;
    const std::uint64_t k = op == SetOperation::Intersection ? std::min(m, n)
                            : op == SetOperation::Union      ? std::max(m, n)
                                                             : (m > n ? m - n : 0);
    const std::uint64_t a = t[0], b = t[1];
    d.rows += k;
    d.checksum += k * ((a * 1000003u + b) * 1000003u);
  }
  return d;
}

// One program per algorithm and operation (6 in all, the rank ones the defaults that the contract tests
// build too: PoCL compiles each for seconds on CI's two cores): tiles of 512 candidates, 4 per work-item
// (rank's next copy of a tuple takes its count from the previous one; merge path's shares start inside
// runs). Every compile-time variant builds for CUDA in Cuda/CudaCompile (test_cuda.cpp).
const std::map<std::string, std::string> kPins{{"local", "128"}, {"ept", "4"}, {"grid", "cover,1"}};

datasets::WorkloadSpec file_workload(const RaSetOperator& op, const datasets::Relation& left,
                                     const datasets::Relation& right, const std::string& name) {
  const std::string dir = test::scratch_dir("ra-set-" + name);
  WorkloadOptions options;
  options.flags["input"] = test::write_relation(left, dir + "/left.csv");
  options.flags["input2"] = test::write_relation(right, dir + "/right.csv");
  return op.workload(options);
}

TEST(RaSet, ReferenceOnHandMadeMultisets) {
  // (1,1) three times on the left, twice on the right; (1,2) left only (equal key, other value); (2,5) right
  // only; (3,3) once each; (4,0) twice on the left, five times on the right.
  const auto left =
      relation_of(copies({1, 1}, 3) + copies({1, 2}, 1) + copies({3, 3}, 1) + copies({4, 0}, 2));
  const auto right =
      relation_of(copies({1, 1}, 2) + copies({2, 5}, 1) + copies({3, 3}, 1) + copies({4, 0}, 5));
  EXPECT_EQ(set_reference(SetOperation::Intersection, left, right),
            (std::vector<std::uint32_t>{1, 1, 1, 1, 3, 3, 4, 0, 4, 0}));
  EXPECT_EQ(set_reference(SetOperation::Union, left, right),
            (std::vector<std::uint32_t>{1, 1, 1, 1, 1, 1, 1, 2, 2, 5, 3, 3, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0}));
  EXPECT_EQ(set_reference(SetOperation::Difference, left, right), (std::vector<std::uint32_t>{1, 1, 1, 2}));
  EXPECT_EQ(set_reference(SetOperation::Difference, right, left),
            (std::vector<std::uint32_t>{2, 5, 4, 0, 4, 0, 4, 0}));
  // Three values: only the last one differs, so nothing matches.
  const auto a = relation_of({{7, 1, 2, 3}, {7, 1, 2, 3}});
  const auto b = relation_of({{7, 1, 2, 4}});
  EXPECT_TRUE(set_reference(SetOperation::Intersection, a, b).empty());
  EXPECT_EQ(set_reference(SetOperation::Difference, a, b),
            (std::vector<std::uint32_t>{7, 1, 2, 3, 7, 1, 2, 3}));
  EXPECT_EQ(set_reference(SetOperation::Union, a, b).size(), 12u);
  for (SetOperation op : kOperations) {
    const auto want = expected(op, left, right);
    const auto got = set_reference(op, left, right);
    EXPECT_EQ(tuple_digest(got.data(), got.size() / 2, 2, RowOrder::any()), want);
  }
}

// Tuples of `values` values drawn from a small alphabet: many duplicates, within and across relations.
std::vector<Tuple> small_alphabet(std::size_t rows, std::uint32_t values, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tuple> out(rows);
  for (Tuple& t : out) {
    t.push_back(rng() % 5);
    for (std::uint32_t c = 0; c < values; ++c) t.push_back(rng() % 3);
  }
  return out;
}

// A tuple of `values` values: key k, the values v, v + 1, ...
Tuple tuple(std::uint32_t k, std::uint32_t v, std::uint32_t values) {
  Tuple t{k};
  for (std::uint32_t c = 0; c < values; ++c) t.push_back(v + c);
  return t;
}

std::vector<Tuple> spread(std::size_t rows, std::uint32_t values, std::uint32_t key_step,
                          std::uint32_t first) {
  std::vector<Tuple> out;
  for (std::size_t i = 0; i < rows; ++i)
    out.push_back(tuple(first + key_step * static_cast<std::uint32_t>(i), 9, values));
  return out;
}

TEST(RaSet, BothAlgorithmsOnAwkwardInputs) {
  for (const std::uint32_t values : {1u, 3u}) {
    const Tuple run = tuple(1000, 7, values);
    const auto mixed = small_alphabet(1001, values, values);
    const std::vector<std::tuple<std::string, std::vector<Tuple>, std::vector<Tuple>>> cases{
        {"one", {tuple(5, 1, values)}, {tuple(5, 1, values)}},
        {"one-apart", {tuple(5, 1, values)}, {tuple(5, 2, values)}},
        {"identical", mixed, mixed},
        {"disjoint", spread(77, values, 2, 0), spread(45, values, 2, 1)},
        // Equal keys, values differing in the last one only: nothing matches.
        {"other-values", spread(40, values, 1, 0),
         [&] {
           auto r = spread(40, values, 1, 0);
           for (Tuple& t : r) ++t.back();
           return r;
         }()},
        // Runs of 300 and 170 copies of one tuple cross tiles (512 candidates) and shares, between
        // other tuples.
        {"runs", spread(237, values, 3, 0) + copies(run, 300) + spread(61, values, 5, 2000),
         spread(11, values, 3, 0) + copies(run, 170) + spread(5, values, 5, 2000)},
        {"runs-swapped", copies(run, 170) + spread(33, values, 1, 1001),
         spread(300, values, 3, 0) + copies(run, 300) + spread(3, values, 7, 2000)},
        {"mixed", mixed, small_alphabet(777, values, values + 10)},
    };
    for (const auto& [name, l, r] : cases) {
      const auto left = relation_of(l);
      const auto right = relation_of(r);
      for (SetOperation operation : kOperations) {
        const RaSetOperator op(operation);
        SCOPED_TRACE(op.name() + ", " + name + ", " + std::to_string(values) + " values");
        test::verify_variants(op, file_workload(op, left, right, name + std::to_string(values)),
                              expected(operation, left, right), kPins);
      }
    }
  }
}

TEST(RaSet, GeneratedPairsWithDuplicates) {
  for (SetOperation operation : kOperations) {
    const RaSetOperator op(operation);
    WorkloadOptions options;
    options.flags = {
        {"rows", "3001"}, {"rows2", "1999"}, {"values", "2"}, {"distinct", "300"}, {"match-ratio", "0.8"}};
    const auto spec = op.workload(options);
    const auto [left, right] = materialise_relation_pair(spec);
    test::verify_variants(op, spec, expected(operation, left, right), kPins);
  }
}

TEST(RaSet, RefusesUnsortedFilesOneFileAndAQuery) {
  const std::string dir = test::scratch_dir("ra-set-refused");
  // Sorted by key, not by value.
  const std::string unsorted = dir + "/unsorted.csv";
  std::ofstream(unsorted) << "1,5\n1,3\n2,0\n";
  const std::string sorted = test::write_relation(relation_of({{1, 3}, {1, 5}, {2, 0}}), dir + "/sorted.csv");
  for (SetOperation operation : kOperations) {
    const RaSetOperator op(operation);
    WorkloadOptions options;
    options.flags = {{"input", sorted}, {"input2", unsorted}};
    try {
      op.workload(options);
      ADD_FAILURE() << op.name() << " took a file out of order";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(unsorted), std::string::npos) << e.what();
    }
    options.flags = {{"input", sorted}};
    EXPECT_THROW(op.workload(options), UsageError) << "--input without --input2";
    options.flags = {{"rows", "10"}};
    options.query = {{"attr", "v0"}};
    EXPECT_THROW(op.workload(options), UsageError) << "a query";
  }
  const auto r = test::run_varex({"run", "--op", "ra_difference", "--device", test::cpu_device().id, "--db",
                                  dir + "/varex.db", "--input", unsorted, "--input2", sorted});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(unsorted), std::string::npos) << r.err;
}

}  // namespace
}  // namespace varex::operators
