// ra_reduce_by_key (Red Fox REDUCE BY KEY): the reference against hand-made cases; every variant on the
// OpenCL CPU device on awkward inputs (empty, one tuple, all keys equal, every key unique, runs crossing
// work-group and partition edges, runs through many partitions, unsorted keys, sums that wrap, sizes that
// are no multiple of 8, 32 or the local size, 1 to 3 values, both layouts) and on a user file, against an
// expectation computed here.
// That a poisoned output never verifies is the operator contract's check (tests/test_contract.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <random>

#include "base/errors.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_reduce_by_key/ra_reduce_by_key.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

using datasets::KeyDistribution;

// The digest of (key, sum of v0 mod 2^32) per run of equal keys, computed without the operator's code.
Digest rbk_expected(const datasets::Relation& r) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> runs;
  for (std::uint64_t i = 0; i < r.rows(); ++i) {
    if (i == 0 || r.columns[0][i] != r.columns[0][i - 1]) runs.emplace_back(r.columns[0][i], 0);
    runs.back().second += r.columns[1][i];
  }
  Digest d;
  for (const auto& [key, sum] : runs) {
    ++d.rows;
    d.checksum += d.rows * (std::uint64_t{key} * 1000003u + (sum & 0xFFFFFFFFu));
  }
  return d;
}

// The extremes of the tile (local 32 and 1024, ept 1 and 8: 12 programs with both algorithms and layouts),
// shared by the tests below so that a test finds the programs an earlier one compiled; the generated runs
// add local 64, 128 and 256 and ept 2 and 4.
const std::map<std::string, std::string> kRbkExtremes{{"local", "32,1024"}, {"ept", "1,8"}};
const std::map<std::string, std::string> kRbkSample{
    {"local", "32,1024"}, {"ept", "1,8"}, {"grid", "cover,2"}};

TEST(RaReduceByKey, ReferenceOnHandMadeCases) {
  datasets::Relation r;
  r.columns = {
      {5, 5, 3, 3, 3, 5, 7, 7, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {10, 20, 30, 40, 50, 60, 70, 80, 90}};
  EXPECT_EQ(reduce_by_key_reference(r), (std::vector<std::uint32_t>{5, 3, 3, 12, 5, 6, 7, 15, 5, 9}));
  r.columns = {{9}, {4}};
  EXPECT_EQ(reduce_by_key_reference(r), (std::vector<std::uint32_t>{9, 4}));
  // Sums are unsigned 32-bit: 0xFFFFFFFF + 2 + 0xFFFFFFFF = 0 modulo 2^32.
  r.columns = {{2, 2, 2, 1}, {0xFFFFFFFFu, 2, 0xFFFFFFFFu, 1}};
  EXPECT_EQ(reduce_by_key_reference(r), (std::vector<std::uint32_t>{2, 0, 1, 1}));
  r.columns = {{1, 2, 1, 2}, {1, 1, 1, 1}};
  EXPECT_EQ(reduce_by_key_reference(r), (std::vector<std::uint32_t>{1, 1, 2, 1, 1, 1, 2, 1}));
  r.columns = {{}, {}};
  EXPECT_TRUE(reduce_by_key_reference(r).empty());
}

TEST(RaReduceByKey, BothAlgorithmsAndLayoutsAtTheExtremesOfTheTileOnRunsCrossingTiles) {
  // Runs of 1 to 2049 tuples cross work-items, work-groups and tiles of the smallest and largest sizes; three
  // values. A sample of the space (12 programs, every grid): the whole of it is 84 programs, minutes of PoCL
  // compilation on CI's two cores; every compile-time variant builds for CUDA in Cuda/CudaCompile
  // (test_cuda.cpp).
  const auto r = test::runs_relation(4099, 3, {1, 31, 33, 2, 127, 129, 2049, 3, 64}, 1);
  test::verify_variants(RaReduceByKeyOperator(),
                        test::relation_file_workload(RaReduceByKeyOperator(), r, "space"), rbk_expected(r),
                        kRbkExtremes);
}

TEST(RaReduceByKey, AwkwardInputsOnEveryAlgorithmAndLayout) {
  std::uint32_t values = 0;
  for (std::uint64_t rows : {1, 2, 7, 33, 1000, 4099}) {
    values = values % 3 + 1;
    const auto seed = static_cast<std::uint32_t>(rows);
    const std::vector<std::pair<std::string, datasets::Relation>> cases{
        {"equal", test::runs_relation(rows, values, {rows}, seed)},
        {"unique", test::runs_relation(rows, values, {1}, seed)},
        {"runs", test::runs_relation(rows, values, {5, 32, 1, 129, 300}, seed)},
        {"alphabet", test::small_alphabet(rows, values, seed)},
        {"wrap", test::runs_relation(rows, values, {3, 64, 1000}, seed, 0xFFFFFFF0u)},
    };
    for (const auto& [name, r] : cases) {
      SCOPED_TRACE(name + ", " + std::to_string(rows) + " rows");
      test::verify_variants(
          RaReduceByKeyOperator(),
          test::relation_file_workload(RaReduceByKeyOperator(), r, name + std::to_string(rows)),
          rbk_expected(r), kRbkSample);
    }
  }
}

TEST(RaReduceByKey, RunsThroughManyPartitions) {
  // One run through thousands of tiles, and long runs beside short ones.
  const auto equal = test::runs_relation(100003, 1, {100003}, 5);
  test::verify_variants(RaReduceByKeyOperator(),
                        test::relation_file_workload(RaReduceByKeyOperator(), equal, "equal-long"),
                        rbk_expected(equal), {{"local", "32"}, {"ept", "1,8"}, {"grid", "cover,1"}});
  const auto mixed = test::runs_relation(100003, 2, {1, 7000, 2, 40000, 33}, 6);
  test::verify_variants(RaReduceByKeyOperator(),
                        test::relation_file_workload(RaReduceByKeyOperator(), mixed, "mixed-long"),
                        rbk_expected(mixed), {{"local", "32,1024"}, {"ept", "1,8"}, {"grid", "cover,1"}});
}

TEST(RaReduceByKey, GeneratedRunsOfSeveralLengths) {
  for (const std::uint64_t run : {1, 3, 16, 100, 5000}) {
    WorkloadOptions options;
    options.flags = {{"rows", "4099"}, {"values", "3"}, {"run", std::to_string(run)}};
    const auto spec = RaReduceByKeyOperator().workload(options);  // --keys runs by default
    EXPECT_EQ(spec.params.at("keys"), "runs");
    const auto r = datasets::generate_relation(4099, 3, KeyDistribution::Runs, options.seed(), run);
    EXPECT_EQ(rbk_expected(r).rows, (4099 + run - 1) / run);
    test::verify_variants(RaReduceByKeyOperator(), spec, rbk_expected(r),
                          {{"local", "64"}, {"ept", "2"}, {"grid", "cover,4"}});
  }
  // Other key distributions too (dup: 256 keys drawn at random, mostly runs of one).
  WorkloadOptions options;
  options.flags = {{"rows", "4099"}, {"keys", "dup"}};
  const auto r = datasets::generate_relation(4099, 1, KeyDistribution::Dup, options.seed());
  // Local 128 and 256 (each algorithm and each layout once at either size): 4 programs, not 8.
  test::verify_variants(RaReduceByKeyOperator(), RaReduceByKeyOperator().workload(options), rbk_expected(r),
                        {{"local", "128,256"}, {"ept", "4"}, {"grid", "cover"}},
                        [](std::vector<variants::Params> all) {
                          std::vector<variants::Params> kept;
                          for (variants::Params& p : all) {
                            const bool segscan = variants::get_string(p, "algorithm") == "segmented_scan";
                            const bool soa = variants::get_string(p, "layout") == "soa";
                            if ((segscan == soa) == (variants::get_int(p, "local") == 128))
                              kept.push_back(std::move(p));
                          }
                          return kept;
                        });
}

TEST(RaReduceByKey, RunsAreRefusedWithOtherKeys) {
  WorkloadOptions bad;
  bad.flags = {{"rows", "10"}, {"keys", "dup"}, {"run", "4"}};
  EXPECT_THROW(RaReduceByKeyOperator().workload(bad), UsageError);
}

}  // namespace
}  // namespace varex::operators
