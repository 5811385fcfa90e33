// The Red Fox relations (generator and file loader) and the Rows and Scalar output kinds, checked with
// tuples uploaded by hand to the OpenCL CPU device.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "base/errors.hpp"
#include "harness/operators/operator.hpp"
#include "harness/outputs/rows.hpp"
#include "harness/outputs/scalar.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/common/relations/sorted_pairs.hpp"
#include "support.hpp"

namespace varex {
namespace {

using datasets::KeyDistribution;

std::string usage_error(const std::string& text) {
  try {
    datasets::parse_relation(text, "r.csv");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Relations, GeneratedRelationsAreSeededAndShaped) {
  const auto a = datasets::generate_relation(1001, 3, KeyDistribution::Uniform, 7);
  const auto b = datasets::generate_relation(1001, 1, KeyDistribution::Uniform, 7);
  const auto c = datasets::generate_relation(1001, 3, KeyDistribution::Uniform, 8);
  EXPECT_EQ(a.rows(), 1001u);
  EXPECT_EQ(a.values(), 3u);
  EXPECT_EQ(b.values(), 1u);
  EXPECT_EQ(a.columns[0], b.columns[0]);  // keys do not depend on the number of values
  EXPECT_EQ(a.columns[1], b.columns[1]);
  EXPECT_NE(a.columns[0], c.columns[0]);
  EXPECT_NE(a.columns[1], a.columns[2]);
  EXPECT_EQ(a.columns, datasets::generate_relation(1001, 3, KeyDistribution::Uniform, 7).columns);

  const auto sorted = datasets::generate_relation(1001, 2, KeyDistribution::Sorted, 7);
  EXPECT_TRUE(std::is_sorted(sorted.columns[0].begin(), sorted.columns[0].end()));
  auto keys = a.columns[0];
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(sorted.columns[0], keys);

  const auto dup = datasets::generate_relation(5000, 1, KeyDistribution::Dup, 7);
  auto distinct = dup.columns[0];
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_LE(distinct.size(), 256u);
  EXPECT_GT(distinct.size(), 200u);
  for (std::uint32_t k : distinct) EXPECT_EQ(k % (1u << 24), 1u << 23);

  EXPECT_THROW(datasets::generate_relation(10, 0, KeyDistribution::Uniform, 1), UsageError);
  EXPECT_THROW(datasets::generate_relation(10, 4, KeyDistribution::Uniform, 1), UsageError);
  EXPECT_THROW(datasets::key_distribution_from_string("zipf"), UsageError);
  EXPECT_EQ(datasets::key_distribution_from_string("dup"), KeyDistribution::Dup);
}

TEST(Relations, FilesAreReadStrictly) {
  const auto r = datasets::parse_relation("4,1,2\n 1 , 4294967295 ,0\r\n0,0,7", "r.csv");
  ASSERT_EQ(r.rows(), 3u);
  EXPECT_EQ(r.values(), 2u);
  EXPECT_EQ(r.columns[0], (std::vector<std::uint32_t>{4, 1, 0}));
  EXPECT_EQ(r.columns[1], (std::vector<std::uint32_t>{1, 4294967295u, 0}));
  EXPECT_EQ(r.columns[2], (std::vector<std::uint32_t>{2, 0, 7}));
  EXPECT_EQ(datasets::parse_relation("1,2\n", "r.csv").rows(), 1u);
  EXPECT_EQ(datasets::parse_relation("", "r.csv").rows(), 0u);

  EXPECT_NE(usage_error("1,2\n3,4\n5,6,7\n").find("r.csv:3: 3 fields where line 1 has 2"), std::string::npos)
      << usage_error("1,2\n3,4\n5,6,7\n");
  EXPECT_NE(usage_error("1,2,3\n3,4\n").find("r.csv:2:"), std::string::npos);
  EXPECT_NE(usage_error("1\n").find("r.csv:1:"), std::string::npos);
  EXPECT_NE(usage_error("1,2,3,4,5\n").find("2 to 4 fields"), std::string::npos);
  EXPECT_NE(usage_error("1,2\n3,x\n").find("r.csv:2: 'x' is not an unsigned decimal"), std::string::npos);
  EXPECT_NE(usage_error("1,-2\n").find("not an unsigned decimal"), std::string::npos);
  EXPECT_NE(usage_error("1,2\n4294967296,1\n").find("r.csv:2: 4294967296 does not fit"), std::string::npos);
  EXPECT_NE(usage_error("1,2\n\n3,4\n").find("r.csv:2: empty line"), std::string::npos);
  EXPECT_NE(usage_error("1,,2\n").find("r.csv:1:"), std::string::npos);
  EXPECT_NE(usage_error("1,2 3\n").find("r.csv:1:"), std::string::npos);
  EXPECT_THROW(datasets::load_relation(test::scratch_dir("relations-missing") + "/none.csv"), UsageError);
}

TEST(Relations, TupleDigestFollowsTheSpecification) {
  const std::vector<std::uint32_t> pairs{4, 9, 1, 2};
  // (0+1) * (4 * 1000003 + 9) + (1+1) * (1 * 1000003 + 2)
  EXPECT_EQ(harness::tuple_digest(pairs.data(), 2, 2), (Digest{2, 4000021 + 2000010}));
  const std::vector<std::uint32_t> keys{4, 1};
  EXPECT_EQ(harness::tuple_digest(keys.data(), 2, 1), (Digest{2, 4000012 + 2000006}));
  const std::vector<std::uint32_t> big{0xFFFFFFFFu, 0xFFFFFFFFu};
  EXPECT_EQ(harness::tuple_digest(big.data(), 1, 2).checksum, 0xFFFFFFFFull * 1000003u + 0xFFFFFFFFull);
}

void upload(harness::Engine& engine, harness::DeviceBuffer& buffer, const std::vector<std::uint32_t>& words,
            std::size_t offset_words = 0) {
  auto host = engine.allocate_host(words.size() * 4);
  std::memcpy(host->data(), words.data(), words.size() * 4);
  engine.upload(buffer, offset_words * 4, *host, words.size() * 4)->elapsed_ms();
}

TEST(RowsOutput, VerifiesAoSAndSoAResultsAndNamesTheFirstMismatch) {
  harness::Engine& engine = test::cpu_engine();
  const std::vector<std::uint32_t> want{4, 9, 7, 1, 2, 8, 5, 5, 5};  // three tuples of three attributes
  harness::RowsOutput out(engine, 3, 5, want, /*counted=*/true);
  EXPECT_EQ(out.reference(), harness::tuple_digest(want.data(), 3, 3));
  EXPECT_EQ(out.bytes_written(), 9u * 4 + 4);

  out.poison();
  auto c = out.collect();
  EXPECT_FALSE(c.verified);
  EXPECT_NE(c.mismatch.find("more than the 5"), std::string::npos) << c.mismatch;

  upload(engine, out.tuple_buffer(), want);
  upload(engine, out.count_buffer(), {3});
  c = out.collect();
  EXPECT_TRUE(c.verified) << c.mismatch;
  EXPECT_EQ(c.digest, out.reference());

  upload(engine, out.tuple_buffer(), {9}, 5);  // tuple 1, attribute 2
  c = out.collect();
  EXPECT_FALSE(c.verified);
  EXPECT_EQ(c.mismatch, "tuple 1: expected (1,2,8), got (1,2,9)");

  upload(engine, out.tuple_buffer(), want);
  upload(engine, out.count_buffer(), {2});
  c = out.collect();
  EXPECT_FALSE(c.verified);
  EXPECT_EQ(c.digest.rows, 2u);
  EXPECT_NE(c.mismatch.find("2 tuples, expected 3"), std::string::npos) << c.mismatch;

  // SoA: attribute a of tuple i at word a * capacity + i.
  out.poison();
  out.set_layout(harness::TupleLayout::Soa);
  upload(engine, out.tuple_buffer(), {4, 1, 5}, 0);
  upload(engine, out.tuple_buffer(), {9, 2, 5}, 5);
  upload(engine, out.tuple_buffer(), {7, 8, 5}, 10);
  upload(engine, out.count_buffer(), {3});
  c = out.collect();
  EXPECT_TRUE(c.verified) << c.mismatch;
  EXPECT_EQ(c.digest, out.reference());
}

TEST(RowsOutput, KnownCountsAndMultisets) {
  harness::Engine& engine = test::cpu_engine();
  const std::vector<std::uint32_t> want{3, 1, 2};
  harness::RowsOutput known(engine, 1, 3, want, /*counted=*/false);
  known.poison();
  EXPECT_FALSE(known.collect().verified);
  upload(engine, known.tuple_buffer(), want);
  EXPECT_TRUE(known.collect().verified);
  upload(engine, known.tuple_buffer(), {1, 2, 3});
  EXPECT_FALSE(known.collect().verified);

  harness::RowsOutput multiset(engine, 1, 3, want, /*counted=*/false, harness::RowOrder::any());
  upload(engine, multiset.tuple_buffer(), {1, 3, 2});
  auto c = multiset.collect();
  EXPECT_TRUE(c.verified) << c.mismatch;
  // The order-free digest: the sum of (a * 1000003 + b) * 1000003 + c with b = c = 0 for one attribute.
  EXPECT_EQ(c.digest, (Digest{3, (1 + 2 + 3) * 1000003ull * 1000003ull}));
  upload(engine, multiset.tuple_buffer(), {1, 3, 3});
  EXPECT_FALSE(multiset.collect().verified);

  // A join's tuples (key, left value, right value) in either order; the third term is attribute 2.
  const std::vector<std::uint32_t> joined{7, 1, 2, 5, 3, 4};
  harness::RowsOutput pairs(engine, 3, 2, joined, /*counted=*/false, harness::RowOrder::any(2));
  EXPECT_EQ(pairs.reference().checksum,
            (7 * 1000003ull + 1) * 1000003ull + 2 + (5 * 1000003ull + 3) * 1000003ull + 4);
  upload(engine, pairs.tuple_buffer(), {5, 3, 4, 7, 1, 2});
  c = pairs.collect();
  EXPECT_TRUE(c.verified) << c.mismatch;
  EXPECT_EQ(c.digest, pairs.reference());
}

TEST(SortedPairs, GeneratedPairsAreSortedSeededAndShaped) {
  const datasets::SortedPairShape shape{
      .rows = 5000, .rows2 = 4000, .values = 2, .distinct = 500, .match_ratio = 0.6, .zipf = 0, .seed = 3};
  const auto [left, right] = datasets::generate_sorted_pair(shape);
  EXPECT_EQ(left.rows(), 5000u);
  EXPECT_EQ(right.rows(), 4000u);
  EXPECT_EQ(right.values(), 2u);
  EXPECT_FALSE(datasets::first_unsorted(left, datasets::SortOrder::ByTuple));
  EXPECT_FALSE(datasets::first_unsorted(right, datasets::SortOrder::ByTuple));
  std::set<std::uint32_t> left_keys(left.columns[0].begin(), left.columns[0].end());
  EXPECT_EQ(left_keys.size(), 500u);
  std::set<std::array<std::uint32_t, 3>> left_tuples;
  for (std::uint64_t i = 0; i < left.rows(); ++i)
    left_tuples.insert({left.columns[0][i], left.columns[1][i], left.columns[2][i]});
  std::uint64_t key_matches = 0, tuple_matches = 0;
  for (std::uint64_t j = 0; j < right.rows(); ++j) {
    key_matches += left_keys.count(right.columns[0][j]);
    tuple_matches += left_tuples.count({right.columns[0][j], right.columns[1][j], right.columns[2][j]});
  }
  EXPECT_NEAR(static_cast<double>(key_matches) / 4000, 0.6, 0.04);
  EXPECT_NEAR(static_cast<double>(tuple_matches) / 4000, 0.3, 0.04);
  EXPECT_EQ(datasets::generate_sorted_pair(shape).first.columns, left.columns);
  auto other = shape;
  other.seed = 4;
  EXPECT_NE(datasets::generate_sorted_pair(other).first.columns, left.columns);

  // Zipf: the most frequent key takes far more than its uniform share.
  other.zipf = 1.0;
  const auto skewed = datasets::generate_sorted_pair(other).first;
  std::map<std::uint32_t, std::uint64_t> counts;
  for (std::uint32_t k : skewed.columns[0]) ++counts[k];
  std::uint64_t most = 0;
  for (const auto& [key, n] : counts) most = std::max(most, n);
  EXPECT_EQ(counts.size(), 500u);
  EXPECT_GT(most, 200u);  // uniform: about 10
}

TEST(SortedPairs, TheFirstTupleOutOfOrderIsFound) {
  datasets::Relation r;
  r.columns = {{1, 2, 2, 5}, {9, 4, 3, 0}};
  EXPECT_FALSE(datasets::first_unsorted(r, datasets::SortOrder::ByKey));
  EXPECT_EQ(datasets::first_unsorted(r, datasets::SortOrder::ByTuple), std::optional<std::uint64_t>(2));
  datasets::sort_tuples(r);
  EXPECT_EQ(r.columns, (std::vector<std::vector<std::uint32_t>>{{1, 2, 2, 5}, {9, 3, 4, 0}}));
  r.columns = {{3, 1}, {0, 0}};
  EXPECT_EQ(datasets::first_unsorted(r, datasets::SortOrder::ByKey), std::optional<std::uint64_t>(1));
}

TEST(ScalarOutput, ValueOrPartialSumsFinishedOnTheHost) {
  harness::Engine& engine = test::cpu_engine();
  const std::uint64_t want = 0xFFFFFFFFFFFFFFFFull;  // sums wrap modulo 2^64
  harness::ScalarOutput out(engine, want, 4);
  EXPECT_EQ(out.reference(), (Digest{1, want}));
  out.poison();
  EXPECT_FALSE(out.collect().verified);
  upload(engine, out.buffer(), {0xFFFFFFFFu, 0xFFFFFFFFu});
  auto c = out.collect();
  EXPECT_TRUE(c.verified) << c.mismatch;
  EXPECT_EQ(c.digest, (Digest{1, want}));
  // 3 + 0xFFFFFFFFFFFFFFFC + 0 = 2^64 - 1
  upload(engine, out.buffer(), {3, 0, 0xFFFFFFFCu, 0xFFFFFFFFu, 0, 0});
  out.set_parts(3);
  c = out.collect();
  EXPECT_TRUE(c.verified) << c.mismatch;
  out.poison();
  c = out.collect();
  EXPECT_FALSE(c.verified);
  EXPECT_NE(c.mismatch.find("partial sums"), std::string::npos);
  EXPECT_THROW(out.set_parts(5), std::logic_error);
}

// What every operator of one relation refuses or takes alike (relation_workload.hpp): no rows asked for, a
// ragged file (named with its line); an empty file is an empty relation (tests/test_cli.cpp runs every
// relational operator on one). Flags and query keys an operator does not declare are the contract's check.
class OneRelation : public testing::TestWithParam<std::string> {};

TEST_P(OneRelation, NoRowsAndRaggedFilesAreRefusedAnEmptyFileIsTaken) {
  const harness::Operator& op = harness::find_operator(GetParam());
  harness::WorkloadOptions zero;
  zero.flags["rows"] = "0";
  EXPECT_THROW(op.workload(zero), UsageError);

  const std::string dir = test::scratch_dir(op.name() + "-bad");
  std::ofstream(dir + "/empty.csv").close();
  std::ofstream(dir + "/ragged.csv") << "1,2\n3,4,5\n";
  harness::WorkloadOptions file;
  file.flags["input"] = dir + "/empty.csv";
  EXPECT_EQ(op.workload(file).rows(), 0u);
  file.flags["input"] = dir + "/ragged.csv";
  try {
    op.workload(file);
    ADD_FAILURE() << "a ragged file was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ragged.csv:2:"), std::string::npos) << e.what();
  }
}

// An empty relation through every algorithm and layout, at the extremes of the tile: nothing out (the
// kernels, edge fix-ups and look-backs have no tile to look at).
TEST_P(OneRelation, AnEmptyRelationGivesNothingOnEveryAlgorithmAndLayout) {
  const harness::Operator& op = harness::find_operator(GetParam());
  datasets::WorkloadSpec spec;
  spec.op = op.name();
  spec.generator = "relation";
  spec.params = {{"rows", 0}, {"values", 2}, {"keys", "runs"}, {"run", 4}, {"seed", 1}};
  test::verify_variants(op, spec, Digest{}, {{"local", "32,1024"}, {"ept", "1,8"}, {"grid", "cover,2"}});
}

INSTANTIATE_TEST_SUITE_P(RedFox, OneRelation, testing::Values("ra_select", "ra_unique", "ra_reduce_by_key"),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace varex
