// The vendor library (CUB through vendor/varex_vendor.h) as variants: whether it loads and how the spaces
// offer it. Its calls need a GPU; they run on the GPU machine (docs/RESULTS.md).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/operator.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "tuner/strategy.hpp"

namespace varex::harness {
namespace {

DeviceInfo cuda_device() {
  DeviceInfo d;
  d.id = "cuda:0";
  d.backend = Backend::Cuda;
  d.arch = "sm_90";
  d.compute_units = 132;
  d.max_work_group = 1024;
  d.local_mem = 48 * 1024;
  return d;
}

TEST(Vendor, TheLibraryBuiltWithVarexLoads) {
#if VAREX_HAVE_VENDOR
  const varex_vendor_table* cub = vendor_library();
  ASSERT_NE(cub, nullptr) << "libvarex_cub.so was built but does not load";
  EXPECT_EQ(cub->abi, VAREX_VENDOR_ABI);
  EXPECT_NE(std::string(cub->name).find("CUB"), std::string::npos) << cub->name;
  EXPECT_EQ(cub->sticky(700), 1);  // cudaErrorIllegalAddress
  EXPECT_EQ(cub->sticky(1), 0);
  EXPECT_STRNE(cub->error_string(700), "");
#else
  EXPECT_EQ(vendor_library(), nullptr);
  GTEST_SKIP() << "built without nvcc: no vendor library";
#endif
}

TEST(Vendor, OnlyCudaDevicesOfferIt) {
  DeviceInfo opencl = cuda_device();
  opencl.backend = Backend::OpenCL;
  opencl.id = "ocl:0:0";
  // One vendor variant per setting of the own tunables it honours: ra_reduce and ra_reduce_by_key read
  // either layout, ra_sort has CUB's radix and merge sorts.
  const std::map<std::string, std::size_t> vendor_variants{
      {"ra_select", 1}, {"ra_reduce", 2},    {"ra_unique", 1}, {"ra_reduce_by_key", 2}, {"ra_sort", 2},
      {"ra_join", 1},   {"ra_intersect", 1}, {"ra_union", 1},  {"ra_difference", 1}};
  for (const auto& [name, count] : vendor_variants) {
    const Operator& op = find_operator(name);
    EXPECT_THROW(op.space({opencl, 1000}).tunable("impl"), UsageError) << name;
    if (!vendor_library()) continue;
    const variants::Space space = op.space({cuda_device(), 1000});
    const auto cub = space.enumerate({{"impl", "cub"}});
    ASSERT_FALSE(cub.empty()) << name;
    for (const variants::Params& p : cub) EXPECT_TRUE(is_vendor(p));
    EXPECT_EQ(cub.size(), count) << name;
    EXPECT_GT(space.enumerate({{"impl", "own"}}).size(), 1u) << name;
  }
}

// The vendor variant's own tunables are inactive: a search draws it about as often as all the own variants
// together, where a constraint pinning them made it one draw in the own space's size.
TEST(Vendor, ASearchDrawsTheVendorVariantAsOftenAsTheOwnOnes) {
  if (!vendor_library()) GTEST_SKIP() << "built without nvcc: no vendor library";
  const variants::Space space = find_operator("ra_sort").space({cuda_device(), 1 << 20});
  ASSERT_GT(space.enumerate({{"impl", "own"}}).size(), 20u);
  tuner::SearchSpace search(space, 7);
  int cub = 0;
  const int draws = 400;
  for (int i = 0; i < draws; ++i) {
    const auto p = search.random_unseen();  // not marked: the same point may come again
    ASSERT_TRUE(p);
    if (is_vendor(*p)) ++cub;
  }
  EXPECT_GT(cub, draws / 4);
  EXPECT_LT(cub, 3 * draws / 4);
}

}  // namespace
}  // namespace varex::harness
