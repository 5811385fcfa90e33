// ra_product (Red Fox PRODUCT) on the OpenCL CPU device: every code path (layout x stage x order x store)
// with every ept among them, awkward sizes and 1 to 3 values, against a digest computed here from the two
// relations directly. Every compile-time variant builds for CUDA in Cuda/CudaCompile (test_cuda.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "base/errors.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_product/ra_product.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

// Σ (p + 1)(left key × 1000003 + right key) over p = i × m + j.
Digest product_expected(const datasets::Relation& left, const datasets::Relation& right) {
  Digest d;
  for (std::uint64_t i = 0; i < left.rows(); ++i) {
    for (std::uint64_t j = 0; j < right.rows(); ++j) {
      const std::uint64_t p = i * right.rows() + j;
      d.checksum += (p + 1) * (std::uint64_t{left.columns[0][i]} * 1000003u + right.columns[0][j]);
    }
  }
  d.rows = left.rows() * right.rows();
  return d;
}

// Every code path (layout x stage x order x store: 12 with vector stores AoS only) once, each with one ept,
// the ept values taken in turn so that each of them runs (with two or three paths): 12 programs instead of
// the 60 of the cross product, which PoCL compiled once per local size.
std::vector<variants::Params> every_path_once(std::vector<variants::Params> all) {
  const std::int64_t epts[] = {1, 2, 4, 8, 16};
  std::map<std::string, std::size_t> paths;
  std::vector<variants::Params> kept;
  for (variants::Params& p : all) {
    const std::string path = variants::get_string(p, "layout") + "/" + variants::get_string(p, "stage") +
                             "/" + variants::get_string(p, "order") + "/" + variants::get_string(p, "store");
    const std::size_t index = paths.emplace(path, paths.size()).first->second;
    if (variants::get_int(p, "ept") == epts[index % 5]) kept.push_back(std::move(p));
  }
  return kept;
}

TEST(RaProduct, EveryCodePathAndEptOnAwkwardSizes) {
  {
    // The sample holds every path and every ept.
    const auto kept = every_path_once(
        RaProductOperator().space({test::cpu_device(), 1}).enumerate({{"local", "32"}, {"grid", "cover"}}));
    std::set<std::int64_t> epts;
    for (const auto& p : kept) epts.insert(variants::get_int(p, "ept"));
    EXPECT_EQ(kept.size(), 12u);
    EXPECT_EQ(epts.size(), 5u);
  }
  for (const auto& [n, m] :
       std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 1}, {1, 77}, {7, 33}, {33, 130}}) {
    for (std::uint32_t values = 1; values <= 3; ++values) {
      WorkloadOptions options;
      options.flags = {{"rows", std::to_string(n)},
                       {"rows2", std::to_string(m)},
                       {"values", std::to_string(values)},
                       {"seed", "5"}};
      const auto left = datasets::generate_relation(n, values, datasets::KeyDistribution::Uniform, 5);
      const auto right =
          datasets::generate_relation(m, values, datasets::KeyDistribution::Uniform, 5 ^ kRightSeed);
      test::verify_variants(RaProductOperator(), RaProductOperator().workload(options),
                            product_expected(left, right), {{"local", "32,64"}, {"grid", "cover,1"}},
                            every_path_once);
    }
  }
}

TEST(RaProduct, FilesAndTheirErrors) {
  const std::string dir = test::scratch_dir("ra-product");
  const auto write = [&](const std::string& name, const datasets::Relation& r) {
    test::write_relation(r, dir + "/" + name);
  };
  const auto left = datasets::generate_relation(45, 2, datasets::KeyDistribution::Dup, 3);
  const auto right = datasets::generate_relation(67, 2, datasets::KeyDistribution::Sorted, 4);
  write("left.csv", left);
  write("right.csv", right);
  write("one.csv", datasets::generate_relation(3, 1, datasets::KeyDistribution::Uniform, 1));
  WorkloadOptions options;
  options.flags = {{"input", dir + "/left.csv"}, {"input2", dir + "/right.csv"}};
  test::verify_variants(RaProductOperator(), RaProductOperator().workload(options),
                        product_expected(left, right), {{"local", "64"}, {"grid", "cover"}}, every_path_once);

  options.flags = {{"input", dir + "/left.csv"}};
  EXPECT_THROW(RaProductOperator().workload(options), UsageError);  // --input2 missing
  options.flags = {{"input", dir + "/left.csv"}, {"input2", dir + "/one.csv"}};
  EXPECT_THROW(RaProductOperator().workload(options), UsageError);  // 2 values against 1
  options.flags = {{"rows", "65536"}, {"rows2", "65536"}};
  EXPECT_THROW(RaProductOperator().workload(options), UsageError);  // 2^32 tuples
  options.flags = {{"rows", "4"}};
  options.query = {{"keep", "key"}};
  EXPECT_THROW(RaProductOperator().workload(options), UsageError);  // no query
}

TEST(RaProduct, PoisonedOutputDoesNotVerify) {
  RaProductOperator op;
  WorkloadOptions options;
  options.flags = {{"rows", "9"}, {"rows2", "31"}};
  auto run = op.prepare(test::cpu_engine(), op.workload(options));
  run->poison();
  EXPECT_FALSE(run->collect().verified);
  run->execute(op.space({test::cpu_device(), 9}).defaults());
  EXPECT_TRUE(run->collect().verified);
}

}  // namespace
}  // namespace varex::operators
