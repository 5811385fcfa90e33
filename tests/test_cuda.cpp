// The CUDA backend without a GPU: the CUDA kernel variants compile through NVRTC (every one, or every pair
// of compile-time values where there are many), and a machine without an NVIDIA driver simply has no CUDA
// devices.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "harness/engine.hpp"
#include "harness/kernel_source.hpp"
#include "harness/operators/operator.hpp"
#include "operators/user/compile_check.hpp"
#include "operators/user/contract_operator.hpp"
#include "operators/user/user_kernels.hpp"
#include "operators/user/user_operator.hpp"
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

// Builds every compile-time variant of `space` with NVRTC, or a pairwise covering of their compile-time
// values where there are more than kExhaustiveParts; a failure names the operator and the variant. Returns
// how many it built.
std::size_t expect_variants_build(const Operator& op, const variants::Space& space,
                                  const DeviceInfo& device) {
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
                                     op.defines(params, device), device.arch),
                0u);
    } catch (const CompileError& e) {
      ADD_FAILURE() << op.name() << " " << variants::describe(space.compile_part(params)) << ": " << e.what();
    }
  }
  return points.size();
}

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
  EXPECT_GT(expect_variants_build(op, space, h100), 0u) << op.name();
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaCompile, testing::ValuesIn(test::operator_names()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

// The user operators of examples/user-operators build through NVRTC: the OpenCL C ones through varex's
// portable header, sum_cuda's CUDA C++ as it is written (every compile-time variant of the user's kernels,
// or a pairwise covering where there are many, as above).
// A mistake in CUDA C++ is reported as one line naming the user's file and line.
TEST(Cuda, UserOperatorExamplesBuildWithNvrtc) {
  namespace fs = std::filesystem;
  DeviceInfo h100;
  h100.id = "cuda:0";
  h100.backend = Backend::Cuda;
  h100.arch = "sm_90";
  h100.max_work_group = 1024;
  operators::user::Contracts contracts;
  for (const auto& op : operators()) {
    if (auto c = op->contract()) contracts.emplace(op->name(), std::move(*c));
  }
  const auto load = [&](const fs::path& dir) -> std::unique_ptr<Operator> {
    operators::user::Declaration d = operators::user::read_declaration(dir, contracts);
    if (d.contract.empty()) return std::make_unique<operators::user::UserOperator>(std::move(d));
    const Operator& base = find_operator(d.contract);
    return std::make_unique<operators::user::ContractOperator>(std::move(d), base);
  };
  std::set<std::string> built;
  for (const auto& entry : fs::directory_iterator(fs::path(VAREX_SOURCE_DIR) / "examples/user-operators")) {
    const std::unique_ptr<Operator> op = load(entry.path());
    // With a contract: the user's side of the space alone (the built-in's has its own test above).
    const auto* contract = dynamic_cast<const operators::user::ContractOperator*>(op.get());
    const variants::Space space =
        contract ? variants::Space(op->name(), operators::user::user_tunables(contract->declared()),
                                   operators::user::user_constraints(contract->declared(), h100))
                 : op->space({h100, 1 << 20});
    EXPECT_GT(expect_variants_build(*op, space, h100), 0u) << op->name();
    built.insert(op->name());
  }
  EXPECT_TRUE(built.count("sum_cuda") && built.count("diffusion") && built.count("my_hash_join"))
      << built.size();

  const fs::path broken = test::scratch_dir("cuda-user-broken");
  fs::remove_all(broken);
  fs::copy(fs::path(VAREX_SOURCE_DIR) / "examples/user-operators/sum_cuda", broken);
  std::string json = test::slurp((broken / "operator.json").string());
  json.replace(json.find("\"sum_cuda\""), 10, "\"sum_broken\"");
  std::ofstream((broken / "operator.json").string()) << json;
  std::string cu = test::slurp((broken / "sum.cu").string());
  const std::string right = "own += static_cast<unsigned>(__ldg(values + i));";
  ASSERT_NE(cu.find(right), std::string::npos);
  const auto line =
      1 + std::count(cu.begin(), cu.begin() + static_cast<std::ptrdiff_t>(cu.find(right)), '\n');
  cu.replace(cu.find(right), right.size(), "own += undeclared_name;");
  std::ofstream((broken / "sum.cu").string()) << cu;
  const std::unique_ptr<Operator> op = load(broken);
  try {
    compile_cuda_offline(kernel_source(Backend::Cuda, op->kernel_family()),
                         op->defines(op->space({h100, 1 << 20}).defaults(), h100), h100.arch);
    ADD_FAILURE() << "the broken kernel compiled";
  } catch (const CompileError& e) {
    const std::string said = operators::user::first_compiler_error(e.what());
    EXPECT_EQ(said.rfind("sum.cu(" + std::to_string(line) + "): error", 0), 0u) << said;
    EXPECT_EQ(said.find('\n'), std::string::npos) << said;
  }
}

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
