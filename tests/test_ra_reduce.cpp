// ra_reduce (Red Fox REDUCE) on the OpenCL CPU device: tree and sub-group reductions, host and device
// finish, both layouts, a spread of launch shapes, awkward sizes, against sums computed here.
#include <gtest/gtest.h>

#include <fstream>

#include "base/errors.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_reduce/ra_reduce.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

Digest expected(const datasets::Relation& r, std::uint32_t attribute) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < r.rows(); ++i) sum += r.columns[attribute][i];
  return {1, sum};
}

TEST(RaReduce, EveryReductionFinishAndLayoutOnAwkwardSizes) {
  const char* names[] = {"key", "v0", "v1", "v2"};
  for (std::uint64_t rows : {1, 7, 33, 1000, 4099, 100003}) {
    const std::uint32_t values = static_cast<std::uint32_t>(rows % 3 + 1);
    const std::uint32_t attribute = static_cast<std::uint32_t>(rows % (values + 1));
    WorkloadOptions options;
    options.flags = {{"rows", std::to_string(rows)}, {"values", std::to_string(values)}, {"keys", "dup"}};
    options.query["attr"] = names[attribute];
    const auto r = datasets::generate_relation(rows, values, datasets::KeyDistribution::Dup, options.seed());
    test::verify_variants(RaReduceOperator(), RaReduceOperator().workload(options), expected(r, attribute),
                          {{"local", "32,128"}, {"ept", "1,16"}, {"grid", "cover,2"}});
  }
}

TEST(RaReduce, FileInputAndTheDefaultAttribute) {
  const std::string path = test::scratch_dir("ra-reduce") + "/relation.csv";
  std::ofstream(path) << "1,4294967295\n2,4294967295\n3,4294967295\n";
  WorkloadOptions options;
  options.flags["input"] = path;
  const auto spec = RaReduceOperator().workload(options);
  test::verify_variants(RaReduceOperator(), spec, {1, 3 * 4294967295ull}, {{"local", "32"}, {"ept", "1"}});
}

TEST(RaReduce, PoisonedOutputDoesNotVerifyAndBadQueriesAreRefused) {
  RaReduceOperator op;
  WorkloadOptions options;
  options.flags = {{"rows", "1000"}, {"values", "1"}};
  auto run = op.prepare(test::cpu_engine(), op.workload(options));
  run->poison();
  EXPECT_FALSE(run->collect().verified);
  run->execute(op.space({test::cpu_device(), 1000}).defaults());
  EXPECT_TRUE(run->collect().verified);
  run->poison();
  EXPECT_FALSE(run->collect().verified);

  options.query["attr"] = "v1";
  EXPECT_THROW(op.workload(options), UsageError);
  options.query["attr"] = "sum";
  EXPECT_THROW(op.workload(options), UsageError);
  options.query = {{"keep", "key"}};
  EXPECT_THROW(check_declared(op, options), UsageError);
  WorkloadOptions foreign;
  foreign.flags["plant"] = "x";
  EXPECT_THROW(check_declared(op, foreign), UsageError);
}

}  // namespace
}  // namespace varex::operators
