// The hash join and the group-by on the OpenCL CPU device: every compile-time variant, every launch shape
// and the source's awkward inputs (prime sizes, all keys equal, no matches, every row its own group,
// negative keys, INT_MIN/INT_MAX), each checked in full against the host reference, which is itself
// checked against brute force here. Also the key generators and the distinct-count sketch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "base/errors.hpp"
#include "datasets/keys.hpp"
#include "harness/measure.hpp"
#include "operators/common/hash/hash_columns.hpp"
#include "operators/common/hash/hash_common.hpp"
#include "operators/groupby/groupby.hpp"
#include "operators/hashjoin/hashjoin.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::GroupAggregates;
using harness::PairsOutput;
}  // namespace varex::operators

namespace varex::operators {
namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

// ---- brute force, sharing nothing with the operators ----

Digest brute_join(const std::vector<std::int32_t>& build, const std::vector<std::int32_t>& probe) {
  std::multimap<std::int32_t, std::uint64_t> rows;
  for (std::uint64_t i = 0; i < build.size(); ++i) rows.emplace(build[i], i);
  Digest d;
  for (std::uint64_t j = 0; j < probe.size(); ++j) {
    const auto [first, last] = rows.equal_range(probe[j]);
    for (auto it = first; it != last; ++it) {
      ++d.rows;
      d.checksum += it->second * 1000003ULL + j;
    }
  }
  return d;
}

Digest brute_groups(const std::vector<std::int32_t>& keys, const std::vector<std::int32_t>& values) {
  std::map<std::int32_t, std::pair<std::uint64_t, std::int64_t>> groups;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto& g = groups[keys[i]];
    ++g.first;
    g.second += values[i];
  }
  Digest d;
  d.rows = groups.size();
  for (const auto& [key, g] : groups) {
    d.checksum += static_cast<std::uint64_t>(static_cast<std::int64_t>(key)) * 1000003ULL + g.first +
                  static_cast<std::uint64_t>(g.second);
  }
  return d;
}

// ---- inputs ----

std::string write_column(const std::string& dir, const std::string& name,
                         const std::vector<std::int32_t>& v) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path);
  for (std::int32_t x : v) out << x << "\n";
  return path;
}

datasets::WorkloadSpec join_files(const std::string& name, const std::vector<std::int32_t>& build,
                                  const std::vector<std::int32_t>& probe) {
  const std::string dir = test::scratch_dir("join-" + name);
  WorkloadOptions options;
  options.flags["input"] = write_column(dir, "build.txt", build);
  options.flags["input2"] = write_column(dir, "probe.txt", probe);
  return HashJoinOperator().workload(options);
}

datasets::WorkloadSpec group_file(const std::string& name, const std::vector<std::int32_t>& keys,
                                  const std::vector<std::int32_t>& values) {
  const std::string dir = test::scratch_dir("groupby-" + name);
  const std::string path = dir + "/rows.csv";
  std::ofstream out(path);
  for (std::size_t i = 0; i < keys.size(); ++i) out << keys[i] << "," << values[i] << "\n";
  out.close();
  WorkloadOptions options;
  options.flags["input"] = path;
  return GroupByOperator().workload(options);
}

// Random keys from a small pool (duplicates) mixed with the extremes and negative values.
std::vector<std::int32_t> awkward_keys(std::size_t rows, std::size_t pool, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> values(pool);
  for (auto& v : values) v = static_cast<std::int32_t>(rng());
  const std::int32_t edges[] = {kMin, kMin + 1, -1, 0, 1, kMax - 1, kMax};
  std::vector<std::int32_t> out(rows);
  for (auto& v : out) v = rng() % 5 == 0 ? edges[rng() % 7] : values[rng() % pool];
  return out;
}

void verify_variants(const Operator& op, const datasets::WorkloadSpec& spec, const Digest& want,
                     const std::map<std::string, std::string>& pins,
                     const std::vector<std::string>& knobs = {}) {
  if (knobs.empty()) return test::verify_variants(op, spec, want, pins);
  test::verify_variants(op, spec, want, pins,
                        [&](std::vector<variants::Params> all) { return test::pairwise(all, knobs); });
}

// ---- generators and references ----

TEST(KeyColumns, KeysAreABijectionAndJoinColumnsKeepTheirPromises) {
  std::set<std::int32_t> keys;
  for (std::uint32_t i = 0; i < 100000; ++i) keys.insert(datasets::key_of(i, 7));
  EXPECT_EQ(keys.size(), 100000u);
  EXPECT_NE(datasets::key_of(5, 7), datasets::key_of(5, 8));

  const auto c = datasets::join_columns(5000, 20000, 1000, 0.25, 0.0, 3);
  EXPECT_EQ(std::set<std::int32_t>(c.build.begin(), c.build.end()).size(), 1000u);
  const std::set<std::int32_t> build(c.build.begin(), c.build.end());
  const auto matching =
      std::count_if(c.probe.begin(), c.probe.end(), [&](std::int32_t k) { return build.count(k) > 0; });
  EXPECT_NEAR(static_cast<double>(matching) / 20000.0, 0.25, 0.02);
  EXPECT_EQ(c.build, datasets::join_columns(5000, 20000, 1000, 0.25, 0.0, 3).build);  // deterministic
}

TEST(KeyColumns, ZipfSkewsTowardsTheFirstRanks) {
  const datasets::ZipfSampler zipf(1000, 1.0);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::uint64_t> counts(1001, 0);
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) ++counts[zipf.sample([&] { return u(rng); })];
  double harmonic = 0;
  for (int k = 1; k <= 1000; ++k) harmonic += 1.0 / k;
  EXPECT_NEAR(static_cast<double>(counts[1]) / draws, 1.0 / harmonic, 0.01);
  EXPECT_NEAR(static_cast<double>(counts[10]) / draws, 0.1 / harmonic, 0.005);
  EXPECT_EQ(counts[0], 0u);

  const auto g = datasets::group_columns(50000, 300, 1.2, 9);
  EXPECT_EQ(std::set<std::int32_t>(g.keys.begin(), g.keys.end()).size(), 300u);  // every group occurs
}

TEST(References, JoinAndGroupByReferencesMatchBruteForce) {
  const auto c = datasets::join_columns(3000, 7001, 400, 0.7, 0.8, 11);
  EXPECT_EQ(join_reference(c.build, c.probe).digest, brute_join(c.build, c.probe));
  const auto keys = awkward_keys(9973, 50, 2);
  const auto values = awkward_keys(9973, 5000, 3);
  const GroupReference r = group_reference(keys, values);
  EXPECT_EQ(r.digest, brute_groups(keys, values));
  for (const GroupAggregates& g : r.groups) {
    std::int32_t lo = kMax, hi = kMin;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == g.key) lo = std::min(lo, values[i]), hi = std::max(hi, values[i]);
    }
    ASSERT_EQ(g.min, lo);
    ASSERT_EQ(g.max, hi);
  }
}

TEST(References, HyperLogLogEstimatesDistinctKeys) {
  for (std::uint64_t distinct : {10ULL, 5000ULL, 300000ULL}) {
    std::vector<std::uint32_t> registers(1u << kSketchBits, 0);
    for (std::uint32_t i = 0; i < distinct; ++i) {
      // The sketch kernel's hash: murmur3's finaliser of the key.
      std::uint32_t h = static_cast<std::uint32_t>(datasets::key_of(i, 5));
      h ^= h >> 16;
      h *= 0x85EBCA6Bu;
      h ^= h >> 13;
      h *= 0xC2B2AE35u;
      h ^= h >> 16;
      const std::uint32_t bucket = h >> (32 - kSketchBits);
      const std::uint32_t rest = (h << kSketchBits) | (1u << (kSketchBits - 1));
      registers[bucket] = std::max<std::uint32_t>(registers[bucket], __builtin_clz(rest) + 1);
    }
    EXPECT_NEAR(hyperloglog_estimate(registers) / static_cast<double>(distinct), 1.0, 0.05) << distinct;
  }
}

// ---- hash join on the device ----

TEST(HashJoinDevice, EveryPairOfCompileTimeValuesOnAPrimeSizeWithDuplicatesAndExtremes) {
  const auto build = awkward_keys(1009, 300, 4);
  const auto probe = awkward_keys(4099, 600, 5);
  verify_variants(
      HashJoinOperator(), join_files("compile", build, probe), brute_join(build, probe),
      {{"local", "auto"}, {"grid", "cover"}, {"padding", "none"}, {"load", "50"}, {"plan", "source"}},
      {"hash", "probing", "batch", "preprocess", "lookup"});
}

TEST(HashJoinDevice, EveryLaunchShape) {
  const auto build = awkward_keys(1013, 200, 6);
  const auto probe = awkward_keys(2003, 400, 7);
  verify_variants(HashJoinOperator(), join_files("launch", build, probe), brute_join(build, probe),
                  // The table's load and the partitioning's scatter are not launch shapes: the pairwise
                  // tests below cover them.
                  {{"batch", "4"},
                   {"lookup", "local"},
                   {"preprocess", "on"},
                   {"hash", "murmur"},
                   {"load", "50"},
                   {"scatter", "direct"}},
                  // Every grid with every local size, each padding and probing with both (pairwise): 63 of
                  // the 212 shapes, where the largest launches (8192 groups of 4096) took a second each.
                  {"grid", "local", "padding", "probing"});
}

TEST(HashJoinDevice, AwkwardInputs) {
  struct Case {
    std::string name;
    std::vector<std::int32_t> build, probe;
  };
  auto unmatched = awkward_keys(997, 997, 8);
  std::replace(unmatched.begin(), unmatched.end(), 123456789, 0);
  std::vector<Case> cases{
      {"all-equal", std::vector<std::int32_t>(257, -5), std::vector<std::int32_t>(131, -5)},
      {"no-matches", unmatched, std::vector<std::int32_t>(503, 123456789)},
      {"extremes", {kMin, kMax, kMin, 0, kMax}, {kMax, kMin, 1, kMin, kMax, kMax}},
      {"empty-build", {}, awkward_keys(101, 10, 9)},
      {"empty-probe", awkward_keys(101, 10, 10), {}},
      {"one-row", {42}, {42}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // Every pair of these values once (pairwise, as above): each case runs a handful of variants instead
    // of the cross product, and PoCL compiles a handful of programs and local sizes.
    verify_variants(HashJoinOperator(), join_files(c.name, c.build, c.probe), brute_join(c.build, c.probe),
                    {{"local", "auto,64"},
                     {"grid", "cover,16wg"},
                     {"batch", "1,8"},
                     {"hash", "identity,mult"},
                     {"load", "75"},
                     {"preprocess", "on"},
                     {"probing", "linear"}},
                    {"local", "grid", "batch", "hash", "lookup"});
  }
}

TEST(HashJoinDevice, GeneratedSkewedWorkloadAndMeasurement) {
  HashJoinOperator op;
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(20000);
  options.flags["rows2"] = std::to_string(60013);
  options.flags["distinct"] = std::to_string(5000);
  options.flags["match-ratio"] = std::to_string(0.5);
  options.flags["zipf"] = std::to_string(1.1);
  const auto spec = op.workload(options);
  const auto c = datasets::join_columns(20000, 60013, 5000, 0.5, 1.1, options.seed());
  Engine& engine = test::cpu_engine();
  auto run = op.prepare(engine, spec);
  EXPECT_EQ(run->reference(), brute_join(c.build, c.probe));
  MeasureSettings settings;
  settings.min_reps = 2;
  settings.max_reps = 3;
  const auto params = op.space({engine.device(), spec.rows()}).defaults();
  const Measurement m = measure(engine, *run, params, settings, 10.0);
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_EQ(m.result, run->reference());
  // One time per kernel of the sequence, adding up to the operator's total.
  std::set<std::string> names;
  for (const KernelTiming& k : m.kernels) names.insert(k.kernel);
  for (const char* k :
       {"build", "count_cardinality", "prefix_sum_build", "build_lookup", "hj_count", "hj_exec"})
    EXPECT_TRUE(names.count(k)) << k;
  EXPECT_EQ(m.bytes_moved, 20000 * 4 + 60013 * 4 + m.result.rows * 8);
}

// varex's own plans: the single pass for unique build keys (which falls back to the source's sequence on a
// duplicate) and the radix-partitioned join, including a partition larger than one local-memory table.
TEST(HashJoinDevice, SinglePassAndPartitionedPlansOnAwkwardInputs) {
  struct Case {
    std::string name;
    std::vector<std::int32_t> build, probe;
  };
  std::vector<std::int32_t> unique_build{kMin, kMax, 0, -1, 1, kMin + 1, kMax - 1};
  for (std::int32_t i = 0; i < 2000; ++i)
    unique_build.push_back(static_cast<std::int32_t>(i * 2654435761u) | 1);
  std::vector<std::int32_t>
      big_partition;  // 7001 build rows of three keys: several chunks of the local table
  for (std::int32_t i = 0; i < 7001; ++i) big_partition.push_back(i % 3 - 1);
  const std::vector<Case> cases{
      {"unique-with-extremes", unique_build, awkward_keys(3001, 40, 21)},
      {"duplicate-int-min", {kMin, 5, kMin}, {kMin, 5, 6, kMin}},
      {"duplicates", awkward_keys(1009, 300, 22), awkward_keys(2003, 600, 23)},
      {"big-partition", big_partition, {0, -1, 1, 2, 0, kMin}},
      {"no-matches", {1, 2, 3}, std::vector<std::int32_t>(257, 9)},
      {"empty-build", {}, {1, 2}},
      {"empty-probe", {1, 2}, {}},
      {"one-row", {kMin}, {kMin}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    verify_variants(
        HashJoinOperator(), join_files("plans-" + c.name, c.build, c.probe), brute_join(c.build, c.probe),
        {{"plan", "unique,partitioned"},
         {"append", "group,item"},
         {"radix_bits", "6,12,14"},
         {"scatter", "direct,buffered"},
         {"passes", "1,2,3"},
         {"batch", "1,4"},
         {"local", "64"},
         {"grid", "cover,32wg"},
         {"padding", "guard,none"},
         {"hash", "identity,mult"},
         {"probing", "linear,double"},
         {"load", "50,75"}},
        {"plan", "radix_bits", "scatter", "passes", "batch", "hash", "probing", "grid", "append"});
  }
}

TEST(HashJoinDevice, TheSinglePassRunsOnlyWithoutDuplicateBuildKeys) {
  HashJoinOperator op;
  Engine& engine = test::cpu_engine();
  MeasureSettings settings;
  settings.min_reps = 1;
  settings.max_reps = 1;
  for (const bool duplicate : {false, true}) {
    std::vector<std::int32_t> build(3001);
    for (std::size_t i = 0; i < build.size(); ++i) build[i] = static_cast<std::int32_t>(i * 7);
    if (duplicate) build[2999] = build[5];
    const auto probe = build;
    const auto spec = join_files(duplicate ? "dup" : "nodup", build, probe);
    auto run = op.prepare(engine, spec);
    auto params = op.space({engine.device(), spec.rows()}).defaults();
    params["plan"] = variants::Value{"unique"};
    const Measurement m = measure(engine, *run, params, settings, 10.0);
    ASSERT_TRUE(m.ok()) << m.error;
    EXPECT_EQ(m.result, brute_join(build, probe));
    std::set<std::string> names;
    for (const KernelTiming& k : m.kernels) names.insert(k.kernel);
    EXPECT_EQ(names.count("probe"), duplicate ? 0u : 1u);
    EXPECT_EQ(names.count("hj_count"), duplicate ? 1u : 0u);
  }
}

// Pairs in any order verify as a multiset; a changed, repeated or out-of-range pair does not.
TEST(PairsOutput, PairsInAnyOrderVerifyAndWrongOnesAreNamed) {
  Engine& engine = test::cpu_engine();
  const std::vector<std::int32_t> build{7, 7, 3}, probe{3, 7, 9, 7};
  const auto upload = [&](DeviceBuffer& buffer, const std::vector<std::uint32_t>& words) {
    auto host = engine.allocate_host(words.size() * 4);
    std::memcpy(host->data(), words.data(), words.size() * 4);
    engine.upload(buffer, 0, *host, words.size() * 4)->elapsed_ms();
  };
  const auto collect = [&](const std::vector<std::uint32_t>& left, const std::vector<std::uint32_t>& right) {
    PairsOutput out(engine, join_reference(build, probe));
    upload(out.left_buffer(), left);
    upload(out.right_buffer(), right);
    out.set_count(left.size());
    return out.collect();
  };
  // The pairs (build row, probe row): (2,0) (0,1) (1,1) (0,3) (1,3), here shuffled.
  const auto good = collect({1, 2, 0, 1, 0}, {3, 0, 3, 1, 1});
  EXPECT_TRUE(good.verified) << good.mismatch;
  EXPECT_EQ(good.digest, brute_join(build, probe));
  const auto changed = collect({1, 2, 0, 2, 0}, {3, 0, 3, 1, 1});
  EXPECT_FALSE(changed.verified);
  EXPECT_NE(changed.mismatch.find("right row 1"), std::string::npos) << changed.mismatch;
  const auto repeated = collect({1, 2, 0, 1, 1}, {3, 0, 3, 1, 3});
  EXPECT_FALSE(repeated.verified);
  EXPECT_NE(repeated.mismatch.find("fewer pairs"), std::string::npos) << repeated.mismatch;
  const auto past = collect({1, 2, 0, 1, 0}, {3, 0, 3, 1, 4});
  EXPECT_FALSE(past.verified);
  EXPECT_NE(past.mismatch.find("past the input"), std::string::npos) << past.mismatch;
}

// ---- group-by on the device ----

TEST(GroupByDevice, EveryPairOfCompileTimeValuesAndBuildPaths) {
  const auto keys = awkward_keys(10007, 700, 12);
  const auto values = awkward_keys(10007, 100000, 13);
  verify_variants(GroupByOperator(), group_file("compile", keys, values), brute_groups(keys, values),
                  {{"local", "64"}, {"grid", "128wg"}, {"padding", "guard"}, {"load", "50"}},
                  {"hash", "probing", "agg", "fuse", "build", "sizing", "extents"});
}

TEST(GroupByDevice, EveryLaunchShape) {
  const auto keys = awkward_keys(4999, 300, 14);
  const auto values = awkward_keys(4999, 1000, 15);
  verify_variants(
      GroupByOperator(), group_file("launch", keys, values), brute_groups(keys, values),
      {{"fuse", "on"},
       {"hash", "murmur"},
       {"probing", "linear"},
       {"load", "50"},  // not a launch shape: the pairwise tests cover it
       {"sizing", "rows"},
       {"extents", "pass"},
       // local aggregation, whose kernels size their local tables by the work-group: the other aggregations'
       // launch shapes are in the pairwise tests above and below (both took 59 s of CI's sanitizer tests).
       {"agg", "local"}},
      // Every grid with every local size, each padding and build with both (pairwise): 48 of the 291 shapes,
      // which took 67 s of PoCL's time, most of it in launches of 8192 groups of 4096 (1.3 s each).
      {"grid", "local", "padding", "build"});
}

TEST(GroupByDevice, AwkwardInputs) {
  std::vector<std::int32_t> own(1021);
  for (std::size_t i = 0; i < own.size(); ++i) own[i] = static_cast<std::int32_t>(i * 2654435761u);
  const std::vector<std::int32_t> big(509, kMax);
  struct Case {
    std::string name;
    std::vector<std::int32_t> keys, values;
  };
  std::vector<Case> cases{
      {"all-equal", std::vector<std::int32_t>(3001, 7), awkward_keys(3001, 3001, 16)},
      {"own-group", own, awkward_keys(1021, 50, 17)},
      {"extremes", {kMin, kMax, kMin, -1, kMax, kMin}, {kMax, kMax, kMin, kMin, 0, kMax}},
      {"sum-overflows-int32", std::vector<std::int32_t>(509, kMin), big},
      {"one-row", {kMin}, {kMin}},
      {"empty", {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // Every pair of these values once (pairwise): a handful of variants per case, not the cross product.
    verify_variants(GroupByOperator(), group_file(c.name, c.keys, c.values), brute_groups(c.keys, c.values),
                    {{"local", "auto,32"},
                     {"grid", "cover,16wg"},
                     {"padding", "none,host"},
                     {"agg", "global,local,registers,partitioned"},
                     {"scatter", "direct,buffered"},
                     {"passes", "2"},
                     {"extents", "pass,build"},
                     {"build", "optimistic,pessimistic"},
                     {"hash", "identity"},
                     {"sizing", "rows,sketch"},
                     {"probing", "double"},
                     {"load", "50,75"}},
                    {"local", "grid", "padding", "agg", "build", "sizing", "load", "fuse", "extents"});
  }
}

TEST(GroupByDevice, CollidingKeysFallBackToThePessimisticBuild) {
  // With the identity hash, keys that differ only above the table's bits share their first slot: the
  // optimistic build loses some, validation sees it and the pessimistic build takes over.
  std::vector<std::int32_t> keys, values;
  for (std::int32_t i = 0; i < 4000; ++i) {
    keys.push_back((i % 40) << 24);
    values.push_back(i);
  }
  verify_variants(GroupByOperator(), group_file("collide", keys, values), brute_groups(keys, values),
                  {{"hash", "identity"},
                   {"build", "optimistic"},
                   {"local", "auto"},
                   {"grid", "cover"},
                   {"padding", "none"},
                   {"fuse", "off,on"},
                   {"extents", "pass"},
                   {"probing", "linear,double"}});
}

TEST(GroupByDevice, ManyGroupsGeneratedWithSkew) {
  GroupByOperator op;
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(200003);
  options.flags["distinct"] = std::to_string(50000);
  options.flags["zipf"] = std::to_string(0.9);
  const auto spec = op.workload(options);
  const auto c = datasets::group_columns(200003, 50000, 0.9, options.seed());
  verify_variants(op, spec, brute_groups(c.keys, c.values),
                  {{"local", "128"},
                   {"grid", "cover,512wg"},
                   {"padding", "guard"},
                   {"sizing", "rows,sketch"},
                   {"agg", "global,partitioned"},
                   {"scatter", "direct,buffered"},
                   {"passes", "1,2,3"},
                   {"fuse", "off"},
                   {"extents", "pass,build"},
                   {"hash", "murmur"},
                   {"probing", "double"},
                   {"build", "optimistic,pessimistic"}},
                  {"grid", "sizing", "agg", "scatter", "passes", "extents", "build"});
}

TEST(HashOperators, BadWorkloadOptionsAreUsageErrors) {
  WorkloadOptions o;
  o.flags["rows"] = std::to_string(100);
  o.flags["distinct"] = std::to_string(101);
  EXPECT_THROW(HashJoinOperator().workload(o), varex::UsageError);
  EXPECT_THROW(GroupByOperator().workload(o), varex::UsageError);
  o.flags["distinct"] = std::to_string(10);
  o.flags["match-ratio"] = std::to_string(1.5);
  EXPECT_THROW(HashJoinOperator().workload(o), varex::UsageError);
  EXPECT_THROW(check_declared(GroupByOperator(), o), varex::UsageError);  // the group-by takes no match ratio
  o.flags.erase("match-ratio");
  o.flags["input2"] = "x";
  EXPECT_THROW(HashJoinOperator().workload(o), varex::UsageError);  // --input2 without --input
  o.flags.erase("input2");
  o.query["lo"] = "1";
  EXPECT_THROW(check_declared(HashJoinOperator(), o), varex::UsageError);
}

}  // namespace
}  // namespace varex::operators
