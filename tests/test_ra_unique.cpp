// ra_unique (Red Fox UNIQUE) and the runs key distribution it is measured on: the reference against
// hand-made cases; every variant on the OpenCL CPU device on awkward inputs (empty, one tuple, all keys
// equal, every key unique, runs crossing work-group and partition edges, unsorted keys, sizes that are no
// multiple of 8, 32 or the local size, 1 to 3 values, both layouts) and on a user file, against an
// expectation computed here.
// That a poisoned output never verifies is the operator contract's check (tests/test_contract.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "base/errors.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_unique/ra_unique.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

using datasets::KeyDistribution;

// The digest of the first tuple of each run of equal keys, computed without the operator's code.
Digest unique_expected(const datasets::Relation& r) {
  Digest d;
  for (std::uint64_t i = 0; i < r.rows(); ++i) {
    if (i > 0 && r.columns[0][i] == r.columns[0][i - 1]) continue;
    const std::uint64_t a = r.columns[0][i];
    const std::uint64_t b = r.columns[1][i];
    ++d.rows;
    d.checksum += d.rows * (a * 1000003u + b);
  }
  return d;
}

// The extremes of the tile (local 32 and 1024, ept 1 and 8: 12 programs with both algorithms and layouts),
// shared by the tests below so that a test finds the programs an earlier one compiled; the generated runs
// add local 64 and 128 with ept 2.
const std::map<std::string, std::string> kUniqueExtremes{{"local", "32,1024"}, {"ept", "1,8"}};
const std::map<std::string, std::string> kUniqueSample{
    {"local", "32,1024"}, {"ept", "1,8"}, {"grid", "cover,2"}};

TEST(RaUnique, ReferenceOnHandMadeCases) {
  datasets::Relation r;
  r.columns = {
      {5, 5, 3, 3, 3, 5, 7, 7, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {10, 20, 30, 40, 50, 60, 70, 80, 90}};
  EXPECT_EQ(unique_reference(r),
            (std::vector<std::uint32_t>{5, 1, 10, 3, 3, 30, 5, 6, 60, 7, 7, 70, 5, 9, 90}));

  r.columns = {{9}, {4}};
  EXPECT_EQ(unique_reference(r), (std::vector<std::uint32_t>{9, 4}));
  r.columns = {{2, 2, 2, 2}, {4, 3, 2, 1}};
  EXPECT_EQ(unique_reference(r), (std::vector<std::uint32_t>{2, 4}));
  r.columns = {{1, 2, 1, 2}, {0, 0, 0, 0}};
  EXPECT_EQ(unique_reference(r), (std::vector<std::uint32_t>{1, 0, 2, 0, 1, 0, 2, 0}));
  r.columns = {{0xFFFFFFFFu, 0xFFFFFFFFu, 0}, {1, 2, 3}};
  EXPECT_EQ(unique_reference(r), (std::vector<std::uint32_t>{0xFFFFFFFFu, 1, 0, 3}));
  r.columns = {{}, {}};
  EXPECT_TRUE(unique_reference(r).empty());
}

TEST(RaUnique, BothAlgorithmsAndLayoutsAtTheExtremesOfTheTileOnRunsCrossingTiles) {
  // Runs of 1 to 2049 tuples cross work-items, work-groups and tiles of the smallest and largest sizes; three
  // values. A sample of the space (12 programs, every grid): the whole of it is 84 programs, minutes of PoCL
  // compilation on CI's two cores; every compile-time variant builds for CUDA in Cuda/CudaCompile
  // (test_cuda.cpp).
  const auto r = test::runs_relation(4099, 3, {1, 31, 33, 2, 127, 129, 2049, 3, 64}, 1);
  test::verify_variants(RaUniqueOperator(), test::relation_file_workload(RaUniqueOperator(), r, "space"),
                        unique_expected(r), kUniqueExtremes);
}

TEST(RaUnique, AwkwardInputsOnEveryAlgorithmAndLayout) {
  std::uint32_t values = 0;
  for (std::uint64_t rows : {1, 2, 7, 33, 1000, 4099}) {
    values = values % 3 + 1;
    const auto seed = static_cast<std::uint32_t>(rows);
    const std::vector<std::pair<std::string, datasets::Relation>> cases{
        {"equal", test::runs_relation(rows, values, {rows}, seed)},
        {"unique", test::runs_relation(rows, values, {1}, seed)},
        {"runs", test::runs_relation(rows, values, {5, 32, 1, 129, 300}, seed)},
        {"alphabet", test::small_alphabet(rows, values, seed)},
    };
    for (const auto& [name, r] : cases) {
      SCOPED_TRACE(name + ", " + std::to_string(rows) + " rows");
      test::verify_variants(RaUniqueOperator(),
                            test::relation_file_workload(RaUniqueOperator(), r, name + std::to_string(rows)),
                            unique_expected(r), kUniqueSample);
    }
  }
}

TEST(RaUnique, GeneratedRunsOfSeveralLengths) {
  for (const std::uint64_t run : {1, 3, 16, 100, 5000}) {
    WorkloadOptions options;
    options.flags = {{"rows", "4099"}, {"values", "2"}, {"run", std::to_string(run)}};
    const auto spec = RaUniqueOperator().workload(options);  // --keys runs by default
    EXPECT_EQ(spec.params.at("keys"), "runs");
    EXPECT_EQ(spec.params.at("run"), run);
    const auto r = datasets::generate_relation(4099, 2, KeyDistribution::Runs, options.seed(), run);
    EXPECT_EQ(unique_expected(r).rows, (4099 + run - 1) / run);
    // Local 64 and 128 (each algorithm and each layout once at either size): 4 programs, not 8.
    test::verify_variants(RaUniqueOperator(), spec, unique_expected(r),
                          {{"local", "64,128"}, {"ept", "2"}, {"grid", "cover,4"}},
                          [](std::vector<variants::Params> all) {
                            std::vector<variants::Params> kept;
                            for (variants::Params& p : all) {
                              const bool compact = variants::get_string(p, "algorithm") == "compact";
                              const bool soa = variants::get_string(p, "layout") == "soa";
                              if ((compact == soa) == (variants::get_int(p, "local") == 64))
                                kept.push_back(std::move(p));
                            }
                            return kept;
                          });
  }
}

TEST(RaUnique, RefusesWhatItDoesNotTake) {
  RaUniqueOperator op;
  WorkloadOptions key;
  key.query["attr"] = "v0";
  EXPECT_THROW(op.workload(key), UsageError);  // refused before the relation is read
  WorkloadOptions run;
  run.flags["run"] = "4";
  EXPECT_NO_THROW(check_declared(op, run));

  WorkloadOptions bad;
  bad.flags = {{"rows", "10"}, {"run", "0"}};
  EXPECT_THROW(op.workload(bad), UsageError);
  bad.flags = {{"rows", "10"}, {"keys", "uniform"}, {"run", "4"}};
  try {
    op.workload(bad);
    ADD_FAILURE() << "--run was taken with uniform keys";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--keys runs"), std::string::npos) << e.what();
  }
}

// The runs key distribution (operators/common/relations/relations.hpp) and its --run flag
// (relation_workload.hpp).
TEST(RelationsRuns, KeysAscendInRunsOfTheGivenLength) {
  for (const std::uint64_t run : {1, 2, 16, 1000, 5000}) {
    const auto a = datasets::generate_relation(4099, 3, KeyDistribution::Runs, 7, run);
    const auto b = datasets::generate_relation(4099, 1, KeyDistribution::Runs, 7, run);
    EXPECT_EQ(a.columns[0], b.columns[0]);  // keys do not depend on the number of values
    EXPECT_EQ(a.columns[1], b.columns[1]);
    EXPECT_EQ(a.columns, datasets::generate_relation(4099, 3, KeyDistribution::Runs, 7, run).columns);
    EXPECT_NE(a.columns[0], datasets::generate_relation(4099, 3, KeyDistribution::Runs, 8, run).columns[0]);
    const auto& keys = a.columns[0];
    for (std::uint64_t i = 1; i < keys.size(); ++i) {
      if (i % run == 0) {
        ASSERT_LT(keys[i - 1], keys[i]) << "run " << run << ", row " << i;
      } else {
        ASSERT_EQ(keys[i - 1], keys[i]) << "run " << run << ", row " << i;
      }
    }
  }
  // The keys spread over all 2^32 values.
  const auto wide = datasets::generate_relation(1 << 16, 1, KeyDistribution::Runs, 3, 4);
  EXPECT_GT(wide.columns[0].back(), 0xF0000000u);
  EXPECT_EQ(datasets::key_distribution_from_string("runs"), KeyDistribution::Runs);
  EXPECT_EQ(datasets::to_string(KeyDistribution::Runs), "runs");
  EXPECT_THROW(datasets::generate_relation(10, 1, KeyDistribution::Runs, 1, 0), UsageError);
  EXPECT_NO_THROW(datasets::generate_relation(10, 1, KeyDistribution::Uniform, 1, 0));  // ignored there
}

TEST(RelationsRuns, TheRunLengthIsPartOfTheWorkload) {
  WorkloadOptions options;
  options.flags = {{"rows", "1000"}, {"keys", "runs"}, {"run", "8"}};
  const auto eight = relation_workload("ra_select", options);
  options.flags["run"] = "32";
  const auto thirty_two = relation_workload("ra_select", options);
  EXPECT_NE(eight.id(), thirty_two.id());
  EXPECT_NE(datasets::default_class(eight).id(), datasets::default_class(thirty_two).id());
  options.flags.erase("run");
  EXPECT_EQ(relation_workload("ra_select", options).params.at("run"), datasets::kDefaultRun);
  // Other distributions carry no run length (their workload ids stay what they were).
  options.flags["keys"] = "sorted";
  EXPECT_FALSE(relation_workload("ra_select", options).params.contains("run"));
  // The relation the workload names has those runs.
  const auto r = materialise_relation(eight);
  EXPECT_EQ(r.columns[0], datasets::generate_relation(1000, 1, KeyDistribution::Runs, 42, 8).columns[0]);
  // Every relation operator declares --run; the keys' default is the operator's.
  bool declared = false;
  for (const FlagDecl& f : relation_flags()) {
    declared |= f.name == "run";
    if (f.name == "keys") {
      EXPECT_NE(f.help.find("uniform (default)"), std::string::npos) << f.help;
    }
  }
  EXPECT_TRUE(declared);
  for (const FlagDecl& f : RaUniqueOperator().declaration().flags) {
    if (f.name == "keys") {
      EXPECT_NE(f.help.find("runs (default"), std::string::npos) << f.help;
    }
  }
}

}  // namespace
}  // namespace varex::operators
