// ra_sort (Red Fox SORT) on the OpenCL CPU device: the merge sort, the radix sort and the one-sweep radix
// sort, both layouts, against an order computed here. The space is sampled, not enumerated: its programs
// take seconds each to build on PoCL, so the tests build nine (kSortPrograms: each algorithm in both
// layouts; tiles of 32 to 1024 tuples, so a merge sort makes up to 8 merge passes and a one-sweep pass up
// to 129 tiles' look-backs; every digit width; the defaults) and run them with
// every launch-time choice (skip on and off, grid cover and 2 work-groups per compute unit). Every
// pair of compile-time values is built for CUDA by Cuda/CudaCompile.CompileVariantsBuildWithNvrtc. Inputs:
// no tuple, one tuple, sizes that are no multiple of 8, 32 or the local size, 1 to 3 values, keys all equal
// (the values decide), already sorted, reverse sorted, 256 distinct keys, identical tuples, and user files.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <random>

#include "base/errors.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_sort/ra_sort.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

// The digest of the relation's tuples in lexicographic order (of all the words, or of the key alone with
// `key_only`, equal keys in input order), computed without the operator's code.
Digest sorted_expected(const datasets::Relation& r, bool key_only = false) {
  std::vector<std::uint64_t> order(r.rows());
  for (std::uint64_t i = 0; i < r.rows(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&r, key_only](std::uint64_t x, std::uint64_t y) {
    for (const auto& column : r.columns) {
      if (column[x] != column[y]) return column[x] < column[y];
      if (key_only) break;
    }
    return x < y;
  });
  Digest d;
  for (const std::uint64_t i : order) {
    ++d.rows;
    d.checksum += d.rows * (std::uint64_t{r.columns[0][i]} * 1000003u + r.columns[1][i]);
  }
  return d;
}

// Keys and values from small ranges and edge values, so that keys tie and whole tuples repeat.
datasets::Relation tie_relation(std::uint64_t rows, std::uint32_t values, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::uint32_t edges[] = {0, 1, 0xFFu, 0x100u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  datasets::Relation r;
  r.columns.assign(1 + values, std::vector<std::uint32_t>(rows));
  for (std::uint64_t i = 0; i < rows; ++i) {
    for (std::uint32_t c = 0; c <= values; ++c) {
      const std::uint32_t pick = rng() % 4;
      r.columns[c][i] = pick == 0   ? edges[rng() % 8]
                        : pick == 1 ? static_cast<std::uint32_t>(rng())
                                    : static_cast<std::uint32_t>(rng() % 5);
    }
  }
  return r;
}

// The compile-time variants the tests build: algorithm, layout, local, ept, bits.
struct SortProgram {
  const char* algorithm;
  const char* layout;
  std::int64_t local, ept, bits;
};
const SortProgram kSortPrograms[] = {
    {"merge", "aos", 32, 1, 8},    {"merge", "aos", 128, 4, 8},    {"merge", "soa", 128, 8, 8},
    {"radix", "aos", 32, 1, 4},    {"radix", "aos", 128, 4, 8},    {"radix", "soa", 32, 8, 6},
    {"onesweep", "aos", 32, 1, 4}, {"onesweep", "soa", 64, 16, 6}, {"onesweep", "aos", 256, 4, 8},
};

std::vector<variants::Params> sort_sampled(std::vector<variants::Params> all) {
  std::vector<variants::Params> out;
  for (auto& p : all) {
    for (const SortProgram& program : kSortPrograms) {
      if (variants::get_string(p, "algorithm") == program.algorithm &&
          variants::get_string(p, "layout") == program.layout &&
          variants::get_int(p, "local") == program.local && variants::get_int(p, "ept") == program.ept &&
          variants::get_int(p, "bits") == program.bits) {
        out.push_back(std::move(p));
        break;
      }
    }
  }
  return out;
}

// Every launch-time choice, or the grid that covers the tiles only (for the tests that vary the input).
const std::map<std::string, std::string> kEveryLaunch{{"grid", "cover,2"}};
const std::map<std::string, std::string> kCover{{"grid", "cover"}};

TEST(RaSort, ReferenceIsTheLexicographicOrder) {
  datasets::Relation r;
  r.columns = {{3, 1, 3, 1, 2, 3}, {9, 5, 1, 5, 0, 1}, {0, 2, 7, 1, 0, 6}};
  EXPECT_EQ(sort_reference(r),
            (std::vector<std::uint32_t>{1, 5, 1, 1, 5, 2, 2, 0, 0, 3, 1, 6, 3, 1, 7, 3, 9, 0}));
  datasets::Relation empty;
  empty.columns = {{}, {}};
  EXPECT_TRUE(sort_reference(empty).empty());
}

TEST(RaSort, ReferenceSortsInPartsAndMergesThem) {
  // More tuples than one core's share (2^16 at least): the reference sorts shares side by side and merges.
  const datasets::Relation r = tie_relation(300007, 2, 5);
  std::vector<std::array<std::uint32_t, 3>> tuples(r.rows());
  for (std::uint64_t i = 0; i < r.rows(); ++i)
    tuples[i] = {r.columns[0][i], r.columns[1][i], r.columns[2][i]};
  std::sort(tuples.begin(), tuples.end());
  std::vector<std::uint32_t> want;
  for (const auto& t : tuples) want.insert(want.end(), t.begin(), t.end());
  EXPECT_EQ(sort_reference(r), want);
}

TEST(RaSort, EveryAlgorithmAndLayoutOnAwkwardSizes) {
  std::uint32_t values = 0;
  for (std::uint64_t rows : {1, 7, 33, 1000, 4099}) {
    values = values % 3 + 1;
    const auto r = tie_relation(rows, values, static_cast<std::uint32_t>(rows));
    test::verify_variants(
        RaSortOperator(),
        test::relation_file_workload(RaSortOperator(), r, "awkward-" + std::to_string(rows)),
        sorted_expected(r), kEveryLaunch, sort_sampled);
  }
}

TEST(RaSort, KeyOrdersThatStressStability) {
  const std::uint64_t rows = 2051;
  std::mt19937 rng(7);
  datasets::Relation equal_keys;  // one key: v0, then v1 decide
  equal_keys.columns.assign(3, std::vector<std::uint32_t>(rows, 0x12345678u));
  for (std::uint64_t i = 0; i < rows; ++i) {
    equal_keys.columns[1][i] = rng() % 7;
    equal_keys.columns[2][i] = static_cast<std::uint32_t>(rng());
  }
  datasets::Relation ascending = tie_relation(rows, 1, 11);
  {
    std::vector<std::array<std::uint32_t, 2>> t(rows);
    for (std::uint64_t i = 0; i < rows; ++i) t[i] = {ascending.columns[0][i], ascending.columns[1][i]};
    std::sort(t.begin(), t.end());
    for (std::uint64_t i = 0; i < rows; ++i) {
      ascending.columns[0][i] = t[i][0];
      ascending.columns[1][i] = t[i][1];
    }
  }
  datasets::Relation descending = ascending;
  for (auto& column : descending.columns) std::reverse(column.begin(), column.end());
  datasets::Relation identical;  // every pass of the radix sort skippable
  identical.columns.assign(4, std::vector<std::uint32_t>(rows, 0xA5A5A5A5u));
  const std::vector<std::pair<std::string, datasets::Relation>> cases{{"equal-keys", equal_keys},
                                                                      {"ascending", ascending},
                                                                      {"descending", descending},
                                                                      {"identical", identical}};
  for (const auto& [name, r] : cases) {
    SCOPED_TRACE(name);
    test::verify_variants(RaSortOperator(), test::relation_file_workload(RaSortOperator(), r, name),
                          sorted_expected(r), kCover, sort_sampled);
  }
}

TEST(RaSort, ByKeyTheReferenceKeepsEqualKeysInInputOrder) {
  datasets::Relation r;
  r.columns = {{3, 1, 3, 1, 2}, {9, 5, 1, 4, 0}, {7, 6, 5, 4, 3}};
  EXPECT_EQ(sort_reference(r, 1), (std::vector<std::uint32_t>{1, 5, 6, 1, 4, 4, 2, 0, 3, 3, 9, 7, 3, 1, 5}));
  const datasets::Relation big = tie_relation(300007, 1, 9);  // shares sorted side by side, then merged
  const Digest d = sorted_expected(big, true);
  const auto got = sort_reference(big, 1);
  Digest from_reference;
  for (std::uint64_t i = 0; i < big.rows(); ++i) {
    ++from_reference.rows;
    from_reference.checksum += from_reference.rows * (std::uint64_t{got[2 * i]} * 1000003u + got[2 * i + 1]);
  }
  EXPECT_EQ(from_reference, d);
}

// by=key: only the key is compared; tuples of equal keys (few distinct keys here) stay in input order, which
// every algorithm must keep (the radix sorts run only the key's passes, the merge sort compares the key).
TEST(RaSort, ByKeyEveryAlgorithmKeepsTheInputOrderOfEqualKeys) {
  for (const auto& [rows, values] : {std::pair<std::uint64_t, std::uint32_t>{1, 1}, {2051, 1}, {4099, 3}}) {
    const auto r = tie_relation(rows, values, static_cast<std::uint32_t>(rows + 3));
    SCOPED_TRACE(rows);
    // Equal keys whose values are out of order: a sort by the whole tuple would not verify.
    if (rows > 1) {
      ASSERT_NE(sorted_expected(r, true), sorted_expected(r));
    }
    test::verify_variants(
        RaSortOperator(),
        test::relation_file_workload(RaSortOperator(), r, "by-key-" + std::to_string(rows), {{"by", "key"}}),
        sorted_expected(r, true), kEveryLaunch, sort_sampled);
  }
  WorkloadOptions bad;
  bad.flags["rows"] = "10";
  bad.query["by"] = "value";
  EXPECT_THROW(RaSortOperator().workload(bad), UsageError);
}

TEST(RaSort, GeneratedRelationsWithEveryKeyDistribution) {
  std::uint32_t values = 0;
  for (const char* keys : {"uniform", "sorted", "dup"}) {
    values = values % 3 + 1;
    WorkloadOptions options;
    options.flags = {{"rows", "3001"}, {"values", std::to_string(values)}, {"keys", keys}};
    const auto r = datasets::generate_relation(3001, values, datasets::key_distribution_from_string(keys),
                                               options.seed());
    test::verify_variants(RaSortOperator(), RaSortOperator().workload(options), sorted_expected(r), kCover,
                          sort_sampled);
  }
}

TEST(RaSort, NoTupleRunsAndVerifiesAndAnEmptyFileIsAWorkload) {
  RaSortOperator op;
  datasets::WorkloadSpec spec;
  spec.op = "ra_sort";
  spec.generator = "relation";
  spec.params = {{"rows", 0}, {"values", 2}, {"keys", "uniform"}, {"seed", 1}};
  auto run = op.prepare(test::cpu_engine(), spec);
  EXPECT_EQ(run->reference(), (Digest{0, 0}));
  for (const auto& params : sort_sampled(op.space({test::cpu_device(), 0}).enumerate(kCover))) {
    run->poison();
    run->execute(params);
    const Collected c = run->collect();
    EXPECT_TRUE(c.verified) << variants::describe(params) << ": " << c.mismatch;
  }

  WorkloadOptions zero;
  zero.flags["rows"] = "0";
  EXPECT_THROW(op.workload(zero), UsageError);
  const std::string path = test::scratch_dir("ra-sort-empty") + "/empty.csv";
  std::ofstream(path).close();
  WorkloadOptions file;
  file.flags["input"] = path;
  EXPECT_EQ(op.workload(file).rows(), 0u);  // an empty relation, sorted as it is (issue 28)
}

TEST(RaSort, PoisonedOutputDoesNotVerifyAndQueriesAreRefused) {
  RaSortOperator op;
  WorkloadOptions options;
  options.flags = {{"rows", "1000"}, {"values", "3"}};
  auto run = op.prepare(test::cpu_engine(), op.workload(options));
  run->poison();
  EXPECT_FALSE(run->collect().verified);
  const auto space = op.space({test::cpu_device(), 1000});
  for (const char* algorithm : {"merge", "radix", "onesweep"}) {
    run->poison();
    run->execute(space.with_settings(space.defaults(), {{"algorithm", algorithm}, {"local", "256"}}));
    EXPECT_TRUE(run->collect().verified) << algorithm;
    run->poison();
    const Collected c = run->collect();
    EXPECT_FALSE(c.verified) << algorithm;
    EXPECT_FALSE(c.mismatch.empty()) << algorithm;
  }

  WorkloadOptions query;
  query.flags["rows"] = "10";
  query.query["lo"] = "1";
  EXPECT_THROW(check_declared(op, query), UsageError);
  EXPECT_THROW(op.workload(query), UsageError);
  WorkloadOptions foreign;
  foreign.flags["selectivity"] = "0.5";
  EXPECT_THROW(check_declared(op, foreign), UsageError);
}

TEST(RaSort, SpaceKeepsMergeFreeOfDigitsAndTilesWithinBounds) {
  const auto space = RaSortOperator().space({test::cpu_device(), 1000});
  const auto defaults = space.defaults();
  EXPECT_EQ(variants::get_string(defaults, "algorithm"), "merge");
  EXPECT_THROW(space.with_settings(defaults, {{"bits", "4"}}), UsageError);
  EXPECT_THROW(space.with_settings(defaults, {{"skip", "on"}}), UsageError);
  EXPECT_THROW(space.with_settings(defaults, {{"algorithm", "radix"}, {"local", "32"}, {"ept", "1"}}),
               UsageError);  // 32 tuples, 256 digits
  EXPECT_THROW(space.with_settings(defaults, {{"algorithm", "onesweep"}, {"local", "128"}}),
               UsageError);  // a work-item per digit
  EXPECT_THROW(space.with_settings(defaults, {{"algorithm", "radix"}, {"ept", "16"}}), UsageError);
  for (const auto& p : space.enumerate()) {
    const std::int64_t tile = variants::get_int(p, "local") * variants::get_int(p, "ept");
    if (variants::get_string(p, "algorithm") == "merge") {
      EXPECT_LE(tile, 1024);
    } else {
      EXPECT_LE(tile, variants::get_string(p, "algorithm") == "onesweep" ? 8192 : 2048);
      EXPECT_GE(tile, std::int64_t{1} << variants::get_int(p, "bits"));
    }
  }
}

}  // namespace
}  // namespace varex::operators
