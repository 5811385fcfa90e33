// ra_join (Red Fox INNER JOIN of relations sorted by key): the reference against hand-made cases; both own
// algorithms on the OpenCL CPU device on awkward inputs (one tuple each, no match, every key unique, all
// keys equal on both sides, duplicates crossing partitions and work-groups, Zipf skew, sizes no multiple of
// the work-group, 1 and 3 values, both layouts), against a digest computed here from every pair of tuples;
// the workloads it refuses (a file out of order, one file without the other, a query, too large a join).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/errors.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_join/ra_join.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

datasets::Relation relation(std::vector<std::vector<std::uint32_t>> columns) {
  datasets::Relation r;
  r.columns = std::move(columns);
  return r;
}

// The order-free digest of the join (rows.hpp): Σ over every pair of a left and a right tuple with equal
// keys of (key × 1000003 + left value) × 1000003 + right value; all pairs looked at, nothing shared with
// the operator.
Digest expected(const datasets::Relation& left, const datasets::Relation& right) {
  Digest d;
  for (std::uint64_t i = 0; i < left.rows(); ++i) {
    for (std::uint64_t j = 0; j < right.rows(); ++j) {
      if (left.columns[0][i] != right.columns[0][j]) continue;
      ++d.rows;
      d.checksum += (std::uint64_t{left.columns[0][i]} * 1000003u + left.columns[1][i]) * 1000003u +
                    right.columns[1][j];
    }
  }
  return d;
}

datasets::WorkloadSpec file_workload(const datasets::Relation& left, const datasets::Relation& right,
                                     const std::string& name) {
  const std::string dir = test::scratch_dir("ra-join-" + name);
  test::write_relation(left, dir + "/left.csv");
  test::write_relation(right, dir + "/right.csv");
  WorkloadOptions options;
  options.flags = {{"input", dir + "/left.csv"}, {"input2", dir + "/right.csv"}};
  return RaJoinOperator().workload(options);
}

// Keys in runs of the given lengths (cycled), ascending from `first` in steps of `step`; values counted up
// from `value`.
datasets::Relation runs(std::uint64_t rows, std::uint32_t values, const std::vector<std::uint64_t>& lengths,
                        std::uint32_t first, std::uint32_t step, std::uint32_t value) {
  datasets::Relation r;
  r.columns.assign(1 + values, std::vector<std::uint32_t>(rows));
  std::uint64_t run = 0, left = lengths[0];
  std::uint32_t key = first;
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (left == 0) {
      left = lengths[++run % lengths.size()];
      key += step;
    }
    --left;
    r.columns[0][i] = key;
    for (std::uint32_t c = 1; c <= values; ++c) r.columns[c][i] = value + static_cast<std::uint32_t>(i * c);
  }
  return r;
}

// Both algorithms and layouts with the smallest partition (the most edges) and the shortest merge-path
// steps (the most diagonal searches), small work-groups, cover and a fixed grid: 16 runs of 4 programs (PoCL
// compiles take most of the time; the default partition and ept run in the contract suite and the command
// below, every compile-time variant builds for CUDA in Cuda/CudaCompile). The pins keep each algorithm's
// other tunable at its default (the space's constraint); `shortest` drops those defaults.
const std::map<std::string, std::string> kSample{
    {"partition", "256,1024"}, {"ept", "2,8"}, {"local", "32,128"}, {"grid", "cover,1"}};

std::vector<variants::Params> shortest(std::vector<variants::Params> all) {
  std::vector<variants::Params> kept;
  for (variants::Params& p : all) {
    const bool merge_path = variants::get_string(p, "algorithm") == "merge_path";
    if (merge_path ? variants::get_int(p, "ept") == 2 : variants::get_int(p, "partition") == 256)
      kept.push_back(std::move(p));
  }
  return kept;
}

void verify(const datasets::Relation& left, const datasets::Relation& right, const std::string& name,
            const std::map<std::string, std::string>& pins = kSample) {
  SCOPED_TRACE(name);
  test::verify_variants(RaJoinOperator(), file_workload(left, right, name), expected(left, right), pins,
                        shortest);
}

TEST(RaJoin, ReferenceOnHandMadeCases) {
  // The source's example (table 2), sorted: x = {(1, b), (4, a)}, y = {(1, c)} -> {(1, b, c)}.
  EXPECT_EQ(join_reference(relation({{1, 4}, {'b', 'a'}}), relation({{1}, {'c'}})),
            (std::vector<std::uint32_t>{1, 'b', 'c'}));
  // Duplicates on both sides: the full product of key 2's tuples; keys on one side only drop out.
  const auto left = relation({{1, 2, 2, 4, 9}, {10, 20, 21, 40, 90}});
  const auto right = relation({{2, 2, 3, 4, 4}, {200, 201, 300, 400, 401}});
  EXPECT_EQ(join_reference(left, right), (std::vector<std::uint32_t>{2, 20, 200, 2, 20, 201, 2, 21, 200, 2,
                                                                     21, 201, 4, 40, 400, 4, 40, 401}));
  EXPECT_EQ(join_size(left, right), 6u);
  // Three values: (key, left values, right values).
  EXPECT_EQ(join_reference(relation({{5}, {1}, {2}, {3}}), relation({{5}, {4}, {5}, {6}})),
            (std::vector<std::uint32_t>{5, 1, 2, 3, 4, 5, 6}));
  // No common key, and the largest key.
  EXPECT_TRUE(
      join_reference(relation({{1, 3, 5}, {0, 0, 0}}), relation({{0, 2, 4, 6}, {0, 0, 0, 0}})).empty());
  EXPECT_EQ(join_reference(relation({{0xFFFFFFFFu}, {1}}), relation({{0, 0xFFFFFFFFu}, {2, 3}})),
            (std::vector<std::uint32_t>{0xFFFFFFFFu, 1, 3}));
  EXPECT_EQ(join_size(relation({std::vector<std::uint32_t>(40, 7), std::vector<std::uint32_t>(40, 0)}),
                      relation({std::vector<std::uint32_t>(30, 7), std::vector<std::uint32_t>(30, 0)})),
            1200u);
}

TEST(RaJoin, SmallCasesOnBothAlgorithms) {
  verify(relation({{7}, {1}}), relation({{7}, {2}}), "one-each");
  verify(relation({{7}, {1}}), relation({{8}, {2}}), "one-each-no-match");
  verify(runs(333, 1, {1}, 1, 2, 5), runs(257, 1, {1}, 2, 2, 9), "no-match");  // odd keys against even ones
  // 40 x 30 tuples of one key: 1200 pairs.
  verify(runs(40, 1, {40}, 77, 1, 1), runs(30, 1, {30}, 77, 1, 100), "all-equal");
}

TEST(RaJoin, DuplicatesCrossingPartitionsAndWorkGroups) {
  // Left runs of 1 to 300 tuples cross partitions of 256 and work-groups of 32 and 128; the right has runs
  // of its own over every other key, so some keys have no partner; three values.
  const auto left = runs(1001, 3, {300, 1, 31, 2, 129, 257, 5}, 10, 1, 1);
  const auto right = runs(777, 3, {3, 1, 40, 2, 300}, 9, 1, 1000);
  verify(left, right, "runs");
  // One key on both sides spanning several partitions: 600 x 70.
  verify(runs(600, 1, {600}, 5, 1, 0), runs(70, 1, {70}, 5, 1, 0), "one-key-many-partitions",
         {{"partition", "256,1024"}, {"ept", "2,8"}, {"local", "32"}, {"grid", "cover"}});
}

TEST(RaJoin, GeneratedPairs) {
  struct Case {
    std::map<std::string, std::string> flags;
  };
  const std::vector<Case> cases{
      {{{"rows", "1000"}, {"values", "1"}}},                                        // every key unique
      {{{"rows", "999"}, {"rows2", "1501"}, {"distinct", "50"}, {"zipf", "1.2"}}},  // Zipf skew
      {{{"rows", "777"}, {"rows2", "333"}, {"values", "3"}, {"distinct", "100"}, {"match-ratio", "0.5"}}},
  };
  for (const Case& c : cases) {
    WorkloadOptions options;
    options.flags = c.flags;
    const auto spec = RaJoinOperator().workload(options);
    const auto [left, right] = materialise_relation_pair(spec);
    SCOPED_TRACE(spec.id());
    test::verify_variants(RaJoinOperator(), spec, expected(left, right),
                          {{"partition", "256,1024"}, {"ept", "2,8"}, {"local", "64"}, {"grid", "cover,2"}},
                          shortest);
  }
}

TEST(RaJoin, RefusesWhatItCannotJoin) {
  RaJoinOperator op;
  const std::string dir = test::scratch_dir("ra-join-refused");
  test::write_relation(relation({{1, 2, 3}, {0, 0, 0}}), dir + "/sorted.csv");
  test::write_relation(relation({{1, 3, 2}, {0, 0, 0}}), dir + "/unsorted.csv");
  WorkloadOptions options;
  options.flags = {{"input", dir + "/sorted.csv"}, {"input2", dir + "/unsorted.csv"}};
  try {
    op.workload(options);
    ADD_FAILURE() << "an unsorted file was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unsorted.csv"), std::string::npos) << e.what();
  }
  options.flags = {{"input", dir + "/sorted.csv"}};
  EXPECT_THROW(op.workload(options), UsageError);  // --input2 missing
  options.flags = {{"rows", "10"}};
  options.query = {{"key", "1"}};
  EXPECT_THROW(op.workload(options), UsageError);
  options.query.clear();
  // One key on both sides: 2^16 x 2^16 = 2^32 pairs.
  options.flags = {{"rows", "65536"}, {"rows2", "65536"}, {"distinct", "1"}};
  try {
    op.workload(options);
    ADD_FAILURE() << "a join of 2^32 tuples was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("4294967296 tuples"), std::string::npos) << e.what();
  }
  // As many tuples, every key unique: 2^16 pairs, taken.
  options.flags = {{"rows", "65536"}, {"rows2", "65536"}};
  EXPECT_NO_THROW(op.workload(options));

  // The command line: exit status 2, the file named.
  const auto result =
      test::run_varex({"run", "--op", "ra_join", "--device", test::cpu_device().id, "--db", dir + "/v.db",
                       "--input", dir + "/unsorted.csv", "--input2", dir + "/sorted.csv"});
  EXPECT_EQ(result.status, 2) << result.err;
  EXPECT_NE(result.err.find("unsorted.csv"), std::string::npos) << result.err;
}

TEST(RaJoin, RunPrintsTheOrderFreeDigest) {
  const std::string dir = test::scratch_dir("ra-join-cli");
  test::write_relation(relation({{1, 2, 2, 4}, {10, 20, 21, 40}}), dir + "/left.csv");
  test::write_relation(relation({{2, 3, 4, 4}, {200, 300, 400, 401}}), dir + "/right.csv");
  const auto r =
      test::run_varex({"run", "--op", "ra_join", "--device", test::cpu_device().id, "--db", dir + "/v.db",
                       "--input", dir + "/left.csv", "--input2", dir + "/right.csv", "--set",
                       "algorithm=merge_path", "--set", "ept=2", "--json"});  // a program of the sample
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // (2, 20, 200), (2, 21, 200), (4, 40, 400), (4, 40, 401).
  const auto term = [](std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    return (a * 1000003 + b) * 1000003 + c;
  };
  EXPECT_EQ(j["rows"], 4);
  EXPECT_EQ(j["checksum"].get<std::uint64_t>(),
            term(2, 20, 200) + term(2, 21, 200) + term(4, 40, 400) + term(4, 40, 401));
  EXPECT_TRUE(j["verified"].get<bool>());
}

}  // namespace
}  // namespace varex::operators
