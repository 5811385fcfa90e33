// ra_project (Red Fox PROJECT) on the OpenCL CPU device: both layouts, a spread of launch shapes, awkward
// sizes, 1 to 3 values and several projections, against an expectation computed here.
#include <gtest/gtest.h>

#include <fstream>

#include "base/errors.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_project/ra_project.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

Digest expected(const datasets::Relation& r, const std::vector<std::uint32_t>& keep) {
  Digest d;
  for (std::uint64_t i = 0; i < r.rows(); ++i) {
    const std::uint64_t a = r.columns[keep[0]][i];
    const std::uint64_t b = keep.size() > 1 ? r.columns[keep[1]][i] : 0;
    d.checksum += (i + 1) * (a * 1000003u + b);
  }
  d.rows = r.rows();
  return d;
}

TEST(RaProject, EveryLayoutAndProjectionOnAwkwardSizes) {
  struct Keep {
    std::string text;
    std::vector<std::uint32_t> attrs;
    std::uint32_t needs;
  };
  const std::vector<Keep> keeps{{"key", {0}, 1},
                                {"v0,key", {1, 0}, 1},
                                {"key,v0,v1,v2", {0, 1, 2, 3}, 3},
                                {"v2,v0", {3, 1}, 3},
                                {"v1", {2}, 2}};
  for (std::uint64_t rows : {1, 7, 33, 1000, 4099}) {
    for (std::uint32_t values = 1; values <= 3; ++values) {
      WorkloadOptions options;
      options.flags = {{"rows", std::to_string(rows)}, {"values", std::to_string(values)}, {"seed", "9"}};
      const auto r = datasets::generate_relation(rows, values, datasets::KeyDistribution::Uniform, 9);
      for (const Keep& k : keeps) {
        if (k.needs > values) continue;
        options.query = {{"keep", k.text}};
        test::verify_variants(RaProjectOperator(), RaProjectOperator().workload(options),
                              expected(r, k.attrs),
                              {{"local", "32,128"}, {"ept", "1,8"}, {"grid", "cover,2"}});
      }
    }
  }
}

TEST(RaProject, FileInputOnAPrimeSize) {
  const auto r = datasets::generate_relation(100003, 2, datasets::KeyDistribution::Sorted, 4);
  const std::string path = test::write_relation(r, test::scratch_dir("ra-project") + "/relation.csv");
  WorkloadOptions options;
  options.flags["input"] = path;
  options.query["keep"] = "v1,key";
  test::verify_variants(RaProjectOperator(), RaProjectOperator().workload(options), expected(r, {2, 0}),
                        {{"local", "256"}, {"ept", "4"}, {"grid", "cover,1"}});
}

TEST(RaProject, PoisonedOutputDoesNotVerifyAndBadQueriesAreRefused) {
  RaProjectOperator op;
  WorkloadOptions options;
  options.flags = {{"rows", "33"}, {"values", "1"}};
  auto run = op.prepare(test::cpu_engine(), op.workload(options));
  run->poison();
  EXPECT_FALSE(run->collect().verified);
  run->execute(op.space({test::cpu_device(), 33}).defaults());
  EXPECT_TRUE(run->collect().verified);

  options.query["keep"] = "v1";  // one value only
  EXPECT_THROW(op.workload(options), UsageError);
  options.query["keep"] = "key,key";
  EXPECT_THROW(op.workload(options), UsageError);
  options.query["keep"] = "colour";
  EXPECT_THROW(op.workload(options), UsageError);
  options.query = {{"attr", "v0"}};
  EXPECT_THROW(check_declared(op, options), UsageError);
  WorkloadOptions foreign;
  foreign.flags["plant"] = "x";
  EXPECT_THROW(check_declared(op, foreign), UsageError);
  WorkloadOptions values;
  values.flags = {{"rows", "10"}, {"values", "4"}};
  EXPECT_THROW(op.workload(values), UsageError);
}

}  // namespace
}  // namespace varex::operators
