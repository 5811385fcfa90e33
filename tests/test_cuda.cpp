// The CUDA backend without a GPU: the CUDA kernel variants compile through NVRTC (every one, or every pair
// of compile-time values where there are many), and a machine without an NVIDIA driver simply has no CUDA
// devices.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "harness/engine.hpp"
#include "harness/operators/operator.hpp"
#ifdef VAREX_HAVE_CUDA
#include "harness/backends/cuda_driver.hpp"
#include "harness/backends/cuda_engine.hpp"
#endif

#include "support.hpp"

namespace varex::harness {
namespace {

#ifdef VAREX_HAVE_CUDA
// One test per operator, so that ctest runs them side by side (all of them took three minutes in a row).
class CudaCompile : public testing::TestWithParam<std::string> {};

// Every compile-time variant where a space has at most this many; past it, a pairwise covering of their
// compile-time values (every two values of two compile-time tunables built together at least once): ra_sort's
// and the hash join's hundreds of programs took three of the release tests' six minutes on CI's two cores,
// and the set operations' 48 each 35-42 s of its 114 s at 26d4cd1. The GPU machine's checks build and run
// every variant of each new kernel class (docs/RESULTS.md).
constexpr std::size_t kExhaustiveParts = 24;

TEST_P(CudaCompile, CompileVariantsBuildWithNvrtc) {
  DeviceInfo h100;
  h100.id = "cuda:0";
  h100.backend = Backend::Cuda;
  h100.arch = "sm_90";
  h100.max_work_group = 1024;
  h100.compute_units = 132;
  h100.local_mem = 48 << 10;  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: static shared memory
  const Operator& op = find_operator(GetParam());
  const auto space = op.space({h100, 1 << 20});
  if (op.defines(space.defaults(), h100).empty())
    GTEST_SKIP() << op.name()
                 << " specialises its kernels while it runs: its own tests build them with NVRTC";
  std::vector<variants::Params> points = space.compile_parts();
  if (points.size() > kExhaustiveParts) {
    std::vector<std::string> knobs;
    for (const auto& t : space.tunables()) {
      if (t.kind == variants::TunableKind::Compile) knobs.push_back(t.name);
    }
    points = test::pairwise(points, knobs);
  }
  for (const auto& params : points) {
    try {
      EXPECT_GT(compile_cuda_offline(kernel_source(Backend::Cuda, op.kernel_family()),
                                     op.defines(params, h100), h100.arch),
                0u);
    } catch (const CompileError& e) {
      ADD_FAILURE() << op.name() << " " << variants::describe(space.compile_part(params)) << ": " << e.what();
    }
  }
  EXPECT_FALSE(points.empty()) << op.name();
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaCompile, testing::ValuesIn(test::operator_names()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Cuda, ProbeKernelsBuildForHopper) {
  EXPECT_GT(compile_cuda_offline(kernel_source(Backend::Cuda, "probe"), {}, "sm_90"), 0u);
}

TEST(Cuda, NoDriverMeansNoDevicesAndNoError) {
  if (CudaDriver::get()) GTEST_SKIP() << "an NVIDIA driver is present";
  std::vector<DeviceInfo> devices;
  EXPECT_NO_THROW(devices = enumerate_devices());
  for (const DeviceInfo& d : devices) EXPECT_NE(d.backend, Backend::Cuda);
}
#else
TEST(Cuda, BackendNotBuilt) {
  GTEST_SKIP() << "built without the CUDA toolkit";
}
#endif

}  // namespace
}  // namespace varex::harness
