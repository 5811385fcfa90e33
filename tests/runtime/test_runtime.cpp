// The runtime library as an application sees it: only <varex/runtime.hpp> and OpenCL, linked against the
// shared library, on the application's own PoCL context, queue and buffers. Results are checked against
// plain C++ computations here.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <varex/runtime.hpp>
#include <vector>

namespace {

// The first CPU device (PoCL), with a context and a queue of the test's own.
struct Application {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;

  explicit Application(bool profiling = true) {
    cl_uint platforms = 0;
    clGetPlatformIDs(0, nullptr, &platforms);
    std::vector<cl_platform_id> ids(platforms);
    if (platforms) clGetPlatformIDs(platforms, ids.data(), nullptr);
    for (cl_platform_id p : ids) {
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &device, nullptr) == CL_SUCCESS) break;
    }
    if (!device) return;
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    queue = clCreateCommandQueue(context, device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
  }
  ~Application() {
    for (cl_mem m : buffers) clReleaseMemObject(m);
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
  }
  Application(const Application&) = delete;
  Application& operator=(const Application&) = delete;

  varex::Input column(const std::vector<std::int32_t>& values) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE, std::max<std::size_t>(values.size() * 4, 4),
                                nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (!values.empty())
      clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, values.size() * 4, values.data(), 0, nullptr, nullptr);
    buffers.push_back(mem);
    return {varex::Buffer::opencl(mem, values.size() * 4), values.size()};
  }

  varex::Runtime runtime(const varex::Options& options = {}) {
    return varex::Runtime::attach_opencl(context, device, queue, options);
  }

  std::vector<cl_mem> buffers;
};

std::vector<std::int32_t> random_column(std::size_t rows, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<std::int32_t> column(rows);
  for (auto& v : column) v = static_cast<std::int32_t>(random());
  return column;
}

// The bitmap a range selection must give, computed here.
std::vector<bool> expected_bits(const std::vector<std::int32_t>& column, std::int32_t lo, std::int32_t hi,
                                bool negate) {
  std::vector<bool> bits(column.size());
  for (std::size_t r = 0; r < column.size(); ++r) bits[r] = (column[r] >= lo && column[r] <= hi) != negate;
  return bits;
}

std::vector<bool> bits_of(const varex::Result& result) {
  std::vector<std::uint8_t> bytes((result.rows() + 7) / 8);
  result.download(bytes.data(), bytes.size());
  std::vector<bool> bits(result.rows());
  for (std::size_t r = 0; r < bits.size(); ++r) bits[r] = (bytes[r / 8] >> (r % 8)) & 1;
  return bits;
}

// A profile entry of this runtime's device for `op` at `rows`: the variant a call chose.
varex::profile::Entry entry_for(const varex::Runtime& rt, const std::string& op, std::size_t rows,
                                const varex::Choice& chosen) {
  varex::profile::Entry entry;
  entry.device = rt.device_key();
  entry.op = op;
  entry.workload.scale["rows"] = static_cast<double>(rows);
  entry.params = chosen.params;
  entry.variant = chosen.variant;
  entry.kernel_ms = 1;
  return entry;
}

#define REQUIRE_DEVICE(app) \
  if (!(app).device) GTEST_SKIP() << "no OpenCL CPU device"

TEST(Runtime, RangeSelectionOnTheApplicationsBuffers) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  EXPECT_EQ(rt.device_key().backend, "opencl");
  EXPECT_EQ(rt.device_key().type, "cpu");
  EXPECT_FALSE(rt.device_key().name.empty());
  const auto column = random_column(10007, 1);
  const varex::Input input = app.column(column);
  const varex::Result typed = rt.select_range(input, -500000000, 700000000);
  EXPECT_EQ(typed.kind(), varex::ResultKind::Bitmap);
  EXPECT_EQ(typed.rows(), column.size());
  EXPECT_EQ(bits_of(typed), expected_bits(column, -500000000, 700000000, false));
  // Without a profile: the operator's default variant.
  EXPECT_EQ(rt.last_choice().level, varex::profile::Level::Default);
  EXPECT_FALSE(rt.last_choice().pinned);
  const std::string default_variant = rt.last_choice().variant;
  EXPECT_FALSE(default_variant.empty());

  const varex::Result generic =
      rt.run("selection", {input}, {{"lo", "-500000000"}, {"hi", "700000000"}, {"negate", "true"}});
  EXPECT_EQ(bits_of(generic), expected_bits(column, -500000000, 700000000, true));
  EXPECT_EQ(rt.last_choice().variant, default_variant);
}

TEST(Runtime, EmptyColumnGivesAnEmptyBitmap) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  const varex::Result r = rt.select_range(app.column({}), 0, 10);
  EXPECT_EQ(r.rows(), 0u);
  EXPECT_NO_THROW(r.download(nullptr, 0));
}

// A user operator (docs/USER-OPERATORS.md) loaded from its directory through VAREX_OP_PATH, run on the
// application's buffer: its default, then the variant a profile names. ctest runs each test in a process of
// its own, so the operators are installed here with the directory set.
TEST(Runtime, AUserOperatorFromItsDirectoryRunsTheVariantItsProfileNames) {
  ::setenv("VAREX_OP_PATH", VAREX_SOURCE_DIR "/examples/user-operators/reduce_sum", 1);
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  const auto column = random_column(10007, 7);
  const varex::Input input = app.column(column);
  std::uint32_t expected = 0;
  for (std::int32_t v : column) expected += static_cast<std::uint32_t>(v);
  const auto sum_of = [](const varex::Result& r) {
    std::uint32_t sum = 0;
    r.download(&sum, 4);
    return sum;
  };
  const varex::Result first = rt.run("reduce_sum", {input});
  EXPECT_EQ(first.rows(), 1u);
  EXPECT_EQ(sum_of(first), expected);
  EXPECT_EQ(rt.last_choice().level, varex::profile::Level::Default);
  const std::string default_variant = rt.last_choice().variant;

  rt.override_parameters("reduce_sum", {{"method", "atomic"}, {"ept", "16"}, {"block", "256"}});
  EXPECT_EQ(sum_of(rt.run("reduce_sum", {input})), expected);
  const varex::Choice chosen = rt.last_choice();
  EXPECT_NE(chosen.variant, default_variant);
  rt.clear_overrides("reduce_sum");

  rt.set_profile(varex::profile::Profile({entry_for(rt, "reduce_sum", column.size(), chosen)}, {}));
  EXPECT_EQ(sum_of(rt.run("reduce_sum", {input})), expected);
  EXPECT_EQ(rt.last_choice().variant, chosen.variant) << rt.last_choice().note;
  EXPECT_EQ(rt.last_choice().level, varex::profile::Level::ExactDevice);
  ::unsetenv("VAREX_OP_PATH");
}

// A user operator with two outputs, as docs/USER-OPERATORS.md declares one: the result holds one buffer per
// output in the declared order, on an odd row count and on one row.
TEST(Runtime, AUserOperatorsOutputsAreTheResultsBuffersInTheirOrder) {
  const std::string dir = testing::TempDir() + "runtime-minmax";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/minmax.cl") << R"(#include "common/portable.h"
KERNEL void minmax(CONSTANT_PTR int* RESTRICT v, GLOBAL int* RESTRICT lo, GLOBAL int* RESTRICT hi, uint n) {
  int a = 2147483647, b = -2147483647 - 1;
  for (uint i = gid(); i < n; i += gsize()) { a = min(a, v[i]); b = max(b, v[i]); }
  atomic_min_i32(lo, a);
  atomic_max_i32(hi, b);
}
)";
  std::ofstream(dir + "/operator.json") << R"({
  "name": "minmax",
  "tunables": [{"name": "block", "values": [32, 64], "kind": "launch"}],
  "inputs": [{"name": "v", "type": "int32"}],
  "outputs": [{"name": "lo", "type": "int32", "count": "1", "clear": 2147483647},
              {"name": "hi", "type": "int32", "count": "1", "clear": -2147483648}],
  "kernel": {"file": "minmax.cl", "name": "minmax", "global": "4 * block", "local": "block",
             "args": ["v", "lo", "hi", "rows"]},
  "reference": {"library": "reference.so", "function": "minmax_reference", "args": ["v", "lo", "hi", "rows"]}
})";
  ::setenv("VAREX_OP_PATH", dir.c_str(), 1);
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  for (const std::size_t rows : {std::size_t{10007}, std::size_t{1}}) {
    const auto column = random_column(rows, 13);
    const varex::Result r = rt.run("minmax", {app.column(column)});
    ASSERT_EQ(r.buffer_count(), 2u);
    EXPECT_EQ(r.rows(), 1u);
    std::int32_t lo = 0, hi = 0;
    r.download(&lo, 4, 0);
    r.download(&hi, 4, 1);
    EXPECT_EQ(lo, *std::min_element(column.begin(), column.end())) << rows;
    EXPECT_EQ(hi, *std::max_element(column.begin(), column.end())) << rows;
  }
  ::unsetenv("VAREX_OP_PATH");
}

TEST(Runtime, PinnedParametersRunAndProfilesChooseTheirEntry) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  const auto column = random_column(4099, 2);
  const varex::Input input = app.column(column);
  rt.select_range(input, 0, 1 << 30);
  const varex::Choice defaults = rt.last_choice();

  rt.override_parameters("selection", {{"kernel", "overflow"}, {"ept", "16"}, {"vec", "4"}});
  const varex::Result pinned = rt.select_range(input, 0, 1 << 30);
  EXPECT_EQ(bits_of(pinned), expected_bits(column, 0, 1 << 30, false));
  const varex::Choice chosen = rt.last_choice();
  EXPECT_TRUE(chosen.pinned);
  EXPECT_EQ(chosen.params.at("ept"), "16");
  EXPECT_EQ(chosen.params.at("kernel"), "overflow");
  EXPECT_NE(chosen.variant, defaults.variant);
  rt.clear_overrides("selection");

  // A profile whose entry for this device is the pinned variant: the call runs it, at the first level.
  varex::profile::Entry entry = entry_for(rt, "selection", column.size(), chosen);
  rt.set_profile(varex::profile::Profile({entry}, {}));
  rt.select_range(input, 0, 1 << 30);
  EXPECT_EQ(rt.last_choice().variant, chosen.variant);
  EXPECT_EQ(rt.last_choice().level, varex::profile::Level::ExactDevice);
  EXPECT_TRUE(rt.last_choice().note.empty()) << rt.last_choice().note;

  // The same entry measured with other kernels: refused with a note, and the defaults run.
  entry.source_hash = "0123456789abcdef";
  rt.set_profile(varex::profile::Profile({entry}, {}));
  const varex::Result fallback = rt.select_range(input, 0, 1 << 30);
  EXPECT_EQ(bits_of(fallback), expected_bits(column, 0, 1 << 30, false));
  EXPECT_EQ(rt.last_choice().variant, defaults.variant);
  EXPECT_EQ(rt.last_choice().level, varex::profile::Level::Default);
  EXPECT_NE(rt.last_choice().note.find("other selection kernels"), std::string::npos)
      << rt.last_choice().note;

  // Parameters this build does not know: refused the same way.
  entry.source_hash.clear();
  entry.params = {{"no_such_knob", "3"}};
  rt.set_profile(varex::profile::Profile({entry}, {}));
  rt.select_range(input, 0, 1 << 30);
  EXPECT_EQ(rt.last_choice().variant, defaults.variant);
  EXPECT_FALSE(rt.last_choice().note.empty());
}

// An entry exported from `varex tune` carries its generator in its class's shape, which no call knows: the
// call's class is still the entry's (exact_class), so online adaptation leaves the tuned class alone. An
// entry of other rows is not. (Runtime.InstalledPackageConsumer does the same with a real sweep's export.)
TEST(Runtime, AnEntryOfTheCallsClassMatchesExactlyWhateverOnlyItKnows) {
  Application app;
  REQUIRE_DEVICE(app);
  const auto column = random_column(4099, 9);
  const varex::Input input = app.column(column);
  varex::Options adapt;
  adapt.adapt = true;
  varex::Runtime rt = app.runtime(adapt);
  varex::profile::Entry tuned;
  tuned.device = rt.device_key();
  tuned.op = "selection";
  tuned.workload.shape = {{"generator", "uniform_int32"}, {"negate", "false"}};
  tuned.workload.scale = {{"rows", 4099.0}, {"selectivity", 0.25}};
  tuned.params = {{"kernel", "overflow"}, {"ept", "16"}};
  tuned.kernel_ms = 1;
  rt.set_profile(varex::profile::Profile({tuned}, {}));
  for (int call = 0; call < 3; ++call) {
    const varex::Result r = rt.select_range(input, 0, (1 << 30) - 1);  // a quarter of the int32 range
    EXPECT_EQ(bits_of(r), expected_bits(column, 0, (1 << 30) - 1, false));
    EXPECT_TRUE(rt.last_choice().exact_class);
    EXPECT_FALSE(rt.last_choice().exploring);
    EXPECT_EQ(rt.last_choice().params.at("ept"), "16");
  }
  EXPECT_TRUE(rt.adaptation().empty());
  tuned.workload.scale["rows"] = 8192;
  rt.set_profile(varex::profile::Profile({tuned}, {}));
  rt.select_range(input, 0, (1 << 30) - 1);
  EXPECT_FALSE(rt.last_choice().exact_class);
}

// A runtime opened by energy runs the profile's energy entry; one by time its time entry; where the profile
// has no entry of the objective, the defaults.
TEST(Runtime, TheObjectivePicksTheProfilesEntry) {
  Application app;
  REQUIRE_DEVICE(app);
  const auto column = random_column(4099, 3);
  const varex::Input input = app.column(column);
  varex::profile::Entry fast, frugal;
  fast.device = frugal.device = app.runtime().device_key();
  fast.op = frugal.op = "selection";
  fast.workload.scale["rows"] = frugal.workload.scale["rows"] = static_cast<double>(column.size());
  fast.params = {{"kernel", "overflow"}, {"ept", "16"}};
  frugal.params = {{"kernel", "overflow"}, {"ept", "32"}};
  fast.kernel_ms = 1;
  frugal.kernel_ms = 1.1;
  frugal.objective = "energy";
  frugal.value = frugal.energy_j = 0.2;
  const varex::profile::Profile profile({fast, frugal}, {});
  for (const char* objective : {"time", "energy", "edp"}) {
    varex::Options options;
    options.objective = objective;
    varex::Runtime rt = app.runtime(options);
    rt.set_profile(profile);
    const varex::Result r = rt.select_range(input, 0, 1 << 30);
    EXPECT_EQ(bits_of(r), expected_bits(column, 0, 1 << 30, false)) << objective;
    const std::string want = objective == std::string("time")     ? "16"
                             : objective == std::string("energy") ? "32"
                                                                  : "";
    if (want.empty()) {
      EXPECT_EQ(rt.last_choice().level, varex::profile::Level::Default) << objective;
    } else {
      EXPECT_EQ(rt.last_choice().level, varex::profile::Level::ExactDevice)
          << objective << ": " << rt.last_choice().note;
      EXPECT_EQ(rt.last_choice().params.at("ept"), want) << objective;
    }
  }
  varex::Options bad;
  bad.objective = "joules";
  EXPECT_THROW(app.runtime(bad), varex::Error);
  // Online adaptation learns from device times only.
  varex::Options adapt;
  adapt.objective = "energy";
  adapt.adapt = true;
  try {
    app.runtime(adapt);
    ADD_FAILURE() << "adaptation by energy was accepted";
  } catch (const varex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("device times"), std::string::npos) << e.what();
  }
}

// The join's pairs, (build row, probe row) sorted, as the application reads them back.
std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs_of(const varex::Result& r) {
  std::vector<std::uint32_t> left(r.rows()), right(r.rows());
  r.download(left.data(), left.size() * 4, 0);
  r.download(right.data(), right.size() * 4, 1);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::size_t i = 0; i < left.size(); ++i) pairs.emplace_back(left[i], right[i]);
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// User operators with a built-in's contract (examples/user-operators/my_hash_join, my_group_by, my_selection)
// on the application's buffers as the built-ins take them: the user's kernels by default, the built-in's own
// variant where the call pins origin=varex, the same results. Duplicate build keys give more pairs than
// probe rows, more than the first arrays hold: the user's kernels run again on grown ones.
TEST(Runtime, UserKernelsWithABuiltInsContractRunOnTheApplicationsBuffers) {
  ::setenv("VAREX_OP_PATH", VAREX_SOURCE_DIR "/examples/user-operators", 1);
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  std::vector<std::int32_t> build(4000), probe = random_column(3000, 5);
  for (std::size_t i = 0; i < build.size(); ++i)
    build[i] = static_cast<std::int32_t>(i % 500);  // 8 rows a key
  for (auto& v : probe) v = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) % 1000);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> want;
  for (std::size_t p = 0; p < probe.size(); ++p) {
    for (std::size_t b = 0; b < build.size(); ++b)
      if (build[b] == probe[p]) want.emplace_back(b, p);
  }
  std::sort(want.begin(), want.end());
  ASSERT_GT(want.size(), probe.size());
  const varex::Input b = app.column(build), p = app.column(probe);
  EXPECT_EQ(pairs_of(rt.run("my_hash_join", {b, p})), want);
  EXPECT_EQ(rt.last_choice().params.at("origin"), "user");
  EXPECT_EQ(pairs_of(rt.run("my_hash_join", {b, p})), want);  // on arrays the first call grew
  rt.override_parameters("my_hash_join", {{"origin", "varex"}});
  EXPECT_EQ(pairs_of(rt.run("my_hash_join", {b, p})), want);
  EXPECT_EQ(rt.last_choice().params.at("origin"), "varex");

  // The group-by's groups, (key, count, sum, min, max) sorted, by the user's kernels and by varex's.
  std::vector<std::int32_t> keys = random_column(7001, 11), values = random_column(7001, 12);
  for (auto& k : keys) k = static_cast<std::int32_t>(static_cast<std::uint32_t>(k) % 300) - 150;
  keys[5] = std::numeric_limits<std::int32_t>::min();
  std::map<std::int32_t, std::tuple<std::uint32_t, std::int64_t, std::int32_t, std::int32_t>> expected;
  for (std::size_t r = 0; r < keys.size(); ++r) {
    auto [it, fresh] = expected.try_emplace(keys[r], 0, 0, values[r], values[r]);
    auto& [count, sum, lo, hi] = it->second;
    ++count;
    sum += values[r];
    lo = std::min(lo, values[r]);
    hi = std::max(hi, values[r]);
  }
  const varex::Input k = app.column(keys), v = app.column(values);
  for (const std::string origin : {"user", "varex"}) {
    rt.override_parameters("my_group_by", {{"origin", origin}});
    const varex::Result groups = rt.run("my_group_by", {k, v});
    ASSERT_EQ(groups.rows(), expected.size()) << origin;
    const std::size_t n = groups.rows();
    std::vector<std::int32_t> gk(n), lo(n), hi(n);
    std::vector<std::uint32_t> counts(n);
    std::vector<std::int64_t> sums(n);
    groups.download(gk.data(), n * 4, 0);
    groups.download(counts.data(), n * 4, 1);
    groups.download(sums.data(), n * 8, 2);
    groups.download(lo.data(), n * 4, 3);
    groups.download(hi.data(), n * 4, 4);
    std::map<std::int32_t, std::tuple<std::uint32_t, std::int64_t, std::int32_t, std::int32_t>> got;
    for (std::size_t g = 0; g < n; ++g) got[gk[g]] = {counts[g], sums[g], lo[g], hi[g]};
    EXPECT_EQ(got, expected) << origin;
  }

  const auto column = random_column(10007, 9);
  const varex::Input c = app.column(column);
  for (const std::string origin : {"user", "varex"}) {
    rt.override_parameters("my_selection", {{"origin", origin}});
    const varex::Result bits = rt.run("my_selection", {c}, {{"lo", "-100000000"}, {"hi", "900000000"}});
    EXPECT_EQ(bits.kind(), varex::ResultKind::Bitmap);
    EXPECT_EQ(bits_of(bits), expected_bits(column, -100000000, 900000000, false)) << origin;
  }
  ::unsetenv("VAREX_OP_PATH");
}

TEST(Runtime, CallsReuseTheDeviceMemoryOfEarlierCalls) {
  Application app;
  REQUIRE_DEVICE(app);
  std::vector<std::int32_t> build(3000), probe = random_column(20000, 3);
  for (std::size_t i = 0; i < build.size(); ++i) build[i] = static_cast<std::int32_t>(i * 7);
  for (auto& v : probe) v = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) % 25000);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> want;
  for (std::size_t p = 0; p < probe.size(); ++p)
    if (probe[p] % 7 == 0 && probe[p] / 7 < 3000) want.emplace_back(probe[p] / 7, p);
  std::sort(want.begin(), want.end());
  const varex::Input b = app.column(build), p = app.column(probe);

  varex::Runtime rt = app.runtime();
  EXPECT_EQ(pairs_of(rt.hash_join(b, p)), want);
  // The call's scratch and, once its Result is gone, its pairs are kept; the next call takes them again
  // rather than allocating more.
  const std::uint64_t kept = rt.cached_memory_bytes();
  EXPECT_GE(kept, probe.size() * 8);
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(pairs_of(rt.hash_join(b, p)), want);
    EXPECT_EQ(rt.cached_memory_bytes(), kept);
  }
  rt.release_cached_memory();
  EXPECT_EQ(rt.cached_memory_bytes(), 0u);
  EXPECT_EQ(pairs_of(rt.hash_join(b, p)), want);

  varex::Options off;
  off.cached_memory_share = 0;
  varex::Runtime plain = app.runtime(off);
  EXPECT_EQ(pairs_of(plain.hash_join(b, p)), want);
  EXPECT_EQ(plain.cached_memory_bytes(), 0u);
}

TEST(Runtime, BadCallsThrowErrorsThatNameTheProblem) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  const varex::Input input = app.column(random_column(100, 3));
  const auto message = [](auto call) {
    try {
      call();
    } catch (const varex::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { rt.select_range({varex::Buffer{}, 100}, 0, 1); }).find("null"), std::string::npos);
  EXPECT_NE(message([&] { rt.select_range({input.buffer, 101}, 0, 1); }).find("bytes"), std::string::npos);
  EXPECT_NE(message([&] { rt.run("no_such_operator", {input}); }).find("no_such_operator"),
            std::string::npos);
  EXPECT_NE(message([&] { rt.run("selection", {input}, {{"low", "1"}}); }).find("low"), std::string::npos);
  EXPECT_NE(message([&] { rt.run("selection", {input, input}); }).find("input"), std::string::npos);
  EXPECT_NE(message([&] { rt.run("selection", {input}, {{"lo", "twelve"}}); }), "no error");
  EXPECT_NE(message([&] {
              rt.override_parameters("selection", {{"no_such_knob", "1"}});
            }).find("no_such_knob"),
            std::string::npos);
  EXPECT_NE(message([&] { rt.load_profile("/nonexistent/profile.json"); }).find("profile"),
            std::string::npos);
  EXPECT_NE(message([] { varex::Runtime::open("ocl:99:0"); }).find("ocl:99:0"), std::string::npos);
  EXPECT_NE(message([] { varex::Runtime::attach_opencl(nullptr, nullptr, nullptr); }), "no error");
  varex::Options share;
  share.explore_share = 1.5;
  EXPECT_NE(message([&] { app.runtime(share); }).find("explore_share"), std::string::npos);
  varex::Options cache;
  cache.cached_memory_share = -0.5;
  EXPECT_NE(message([&] { app.runtime(cache); }).find("cached_memory_share"), std::string::npos);
  // A buffer a result does not have, as download does: an Error naming the index and the count.
  const varex::Result bitmap = rt.select_range(input, 0, 1);
  EXPECT_NE(bitmap.buffer(0).handle, 0u);
  const std::string beyond = message([&] { bitmap.buffer(99); });
  EXPECT_NE(beyond.find("buffer 99"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("of 1 "), std::string::npos) << beyond;
  const std::string none = message([] { varex::Result().buffer(0); });
  EXPECT_NE(none.find("buffer 0"), std::string::npos) << none;
  EXPECT_NE(none.find("of 0 "), std::string::npos) << none;
  // After all of them, the runtime still works.
  EXPECT_NO_THROW(rt.select_range(input, 0, 1));
}

TEST(Runtime, CorruptProfileIsAnError) {
  Application app;
  REQUIRE_DEVICE(app);
  const std::string path = testing::TempDir() + "corrupt-profile.json";
  std::ofstream(path) << "{\"format\": \"varex-profile\", \"version\": 3, \"devices\": [";
  varex::Options options;
  options.profile = path;
  EXPECT_THROW(app.runtime(options), varex::Error);
  std::ofstream(path) << "{\"format\": \"something else\"}";
  EXPECT_THROW(app.runtime(options), varex::Error);
}

TEST(Runtime, DeviceTimeOnlyWhereTheQueueTimes) {
  varex::Options timed;
  timed.time_calls = true;
  {
    Application app(true);
    REQUIRE_DEVICE(app);
    varex::Runtime rt = app.runtime(timed);
    rt.select_range(app.column(random_column(5000, 4)), 0, 100);
    ASSERT_TRUE(rt.last_choice().device_ms.has_value());
    EXPECT_GT(*rt.last_choice().device_ms, 0.0);
  }
  Application untimed(false);
  varex::Runtime rt = untimed.runtime(timed);
  const auto column = random_column(5000, 5);
  const varex::Result r = rt.select_range(untimed.column(column), 0, 100);
  EXPECT_FALSE(rt.last_choice().device_ms.has_value());
  EXPECT_EQ(bits_of(r), expected_bits(column, 0, 100, false));
}

// A string column as the operators take it: rows + 1 int32 offsets counted from the buffer's start, then the
// bytes, and a word of slack for the variants that load whole words.
varex::Input string_column(Application& app, const std::vector<std::string>& strings) {
  const std::size_t head = 4 * (strings.size() + 1);
  std::vector<char> bytes(head);
  std::vector<std::int32_t> offsets{static_cast<std::int32_t>(head)};
  for (const std::string& s : strings) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    offsets.push_back(static_cast<std::int32_t>(bytes.size()));
  }
  std::copy_n(reinterpret_cast<const char*>(offsets.data()), head, bytes.begin());
  const std::size_t used = bytes.size();
  bytes.resize(used + 4, 0);
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(app.context, CL_MEM_READ_WRITE, bytes.size(), nullptr, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  clEnqueueWriteBuffer(app.queue, mem, CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr, nullptr);
  app.buffers.push_back(mem);
  return {varex::Buffer::opencl(mem, bytes.size()), strings.size()};
}

// The bits of a bitmap's last 32-bit word past its rows (0 where rows() is a multiple of 32).
std::uint32_t tail_bits(const varex::Result& bitmap) {
  const std::uint64_t rows = bitmap.rows();
  if (rows % 32 == 0) return 0;
  std::uint32_t last = 0;
  std::vector<std::uint8_t> words((rows + 31) / 32 * 4);
  bitmap.download(words.data(), words.size());
  std::copy_n(words.end() - 4, 4, reinterpret_cast<std::uint8_t*>(&last));
  return last & ~((1u << (rows % 32)) - 1u);
}

// The documentation promises 0 for the bits past rows() in a bitmap's last word. Before each call, the same
// operator keeps every row of a column of whole words; its bitmap, all ones, goes back to the runtime's cache
// of device memory, from which the call's own bitmap is likely to come: bits the call leaves unwritten show.
TEST(Runtime, EveryBitmapOperatorLeavesTheBitsPastItsRowsZero) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  struct Call {
    std::string op;
    std::map<std::string, std::string> query;              // what the checked call asks
    std::map<std::string, std::string> every;              // a query that keeps every row
    std::vector<std::pair<std::string, std::string>> pin;  // parameters pinned, if any
  };
  const std::vector<Call> calls{
      {"selection", {{"lo", "0"}}, {}, {}},
      {"selection", {{"lo", "0"}, {"negate", "true"}}, {}, {{"kernel", "overflow"}, {"ept", "16"}}},
      {"selection", {{"hi", "0"}}, {}, {{"kernel", "overflow"}, {"ept", "8"}}},
      {"selection", {{"hi", "0"}}, {}, {{"kernel", "loop"}, {"ept", "16"}}},
      {"cnf_filter", {{"where", "a0 < 0"}}, {{"where", "a0 = a0"}}, {}},
      {"range", {{"low", "0"}}, {{"low", "-2147483648"}, {"high", "2147483647"}}, {}},
      {"semilinear", {{"coef", "1"}}, {{"coef", "0"}, {"op", "<="}, {"b", "0"}}, {}},
      {"str_like", {{"pattern", "1%"}}, {{"pattern", "%"}}, {}},
      {"regex", {{"pattern", "^1"}}, {{"pattern", ".*"}}, {}},
      {"str_equal", {{"value", "12"}}, {{"value", "7"}}, {}},
      {"str_prefix", {{"prefix", "1"}}, {{"prefix", "7"}}, {}},
  };
  for (const std::uint64_t rows : {1, 7, 1000, 12345}) {
    const std::uint64_t whole = (rows + 31) / 32 * 32;
    const auto values = random_column(whole, static_cast<unsigned>(rows));
    const varex::Input all = app.column(values);
    const varex::Input column{all.buffer, rows};
    std::vector<std::string> strings(rows), sevens(whole, "7");
    for (std::size_t r = 0; r < rows; ++r) strings[r] = std::to_string(values[r] & 0xff);
    const varex::Input text = string_column(app, strings), every_text = string_column(app, sevens);
    // The records have one attribute: the buffer holds the rows alone.
    const varex::Input records{{column.buffer.handle, rows * 4}, rows};
    for (const Call& call : calls) {
      const bool strings_op = call.op.rfind("str_", 0) == 0 || call.op == "regex";
      if (!call.pin.empty()) rt.override_parameters(call.op, {call.pin.begin(), call.pin.end()});
      rt.run(call.op, {strings_op ? every_text : all}, call.every);
      const varex::Result bitmap = rt.run(call.op,
                                          {strings_op               ? text
                                           : call.op == "selection" ? column
                                                                    : records},
                                          call.query);
      rt.clear_overrides(call.op);
      ASSERT_EQ(bitmap.kind(), varex::ResultKind::Bitmap) << call.op;
      ASSERT_EQ(bitmap.rows(), rows) << call.op;
      EXPECT_EQ(tail_bits(bitmap), 0u)
          << call.op << " " << rt.last_choice().variant << " on " << rows << " rows";
    }
  }
}

// Pinning one tunable of a relation operator leaves the layout to the buffers, as the defaults do: a soa
// relation sorts with the pinned algorithm. A pin that names the layout overrides the buffers, and a call
// whose buffers it cannot read is refused.
TEST(Runtime, PinnedParametersLeaveTheLayoutToTheBuffers) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  const std::size_t rows = 1000;
  const auto keys = random_column(rows, 11);
  std::vector<std::int32_t> soa(2 * rows);  // the keys' column, then the values'
  std::vector<std::pair<std::uint32_t, std::uint32_t>> want;
  for (std::size_t i = 0; i < rows; ++i) {
    soa[i] = keys[i] & 0xff;  // repeated keys: the values decide the order within one
    soa[rows + i] = static_cast<std::int32_t>(rows - i);
    want.emplace_back(static_cast<std::uint32_t>(soa[i]), static_cast<std::uint32_t>(soa[rows + i]));
  }
  std::sort(want.begin(), want.end());
  const varex::Input column = app.column(soa);
  const varex::Input relation{column.buffer, rows};
  const std::map<std::string, std::string> query{{"values", "1"}, {"layout", "soa"}};

  rt.override_parameters("ra_sort", {{"algorithm", "radix"}});
  const varex::Result sorted = rt.run("ra_sort", {relation}, query);
  EXPECT_TRUE(rt.last_choice().pinned);
  EXPECT_EQ(rt.last_choice().params.at("algorithm"), "radix");
  EXPECT_EQ(rt.last_choice().params.at("layout"), "soa");
  std::vector<std::uint32_t> words(2 * rows);
  ASSERT_EQ(sorted.rows(), rows);
  sorted.download(words.data(), words.size() * 4);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> got;
  for (std::size_t i = 0; i < rows; ++i) got.emplace_back(words[i], words[rows + i]);
  EXPECT_EQ(got, want);

  rt.override_parameters("ra_sort", {{"algorithm", "radix"}, {"layout", "aos"}});
  EXPECT_THROW(rt.run("ra_sort", {relation}, query), varex::Error);
  rt.clear_overrides("ra_sort");
}

// What the message of the Error a call throws says ("no error" where it throws none).
template <class Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const varex::Error& e) {
    return e.what();
  }
  return "no error";
}

// A k beyond the rows the filter keeps has no k-th largest: an Error that says so, for every variant, as
// `varex run` gives; and records wider than the operators take are an Error, not read as their first 16.
TEST(Runtime, KthLargestBeyondTheKeptRowsAndTooWideRecordsAreErrors) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  const std::size_t rows = 1000;
  std::vector<std::int32_t> values(2 * rows);  // a0 = r, a1 = -r
  for (std::size_t r = 0; r < rows; ++r) {
    values[r] = static_cast<std::int32_t>(r);
    values[rows + r] = -static_cast<std::int32_t>(r);
  }
  const varex::Input records = app.column(values);
  const varex::Input two{records.buffer, rows};
  // 10 rows pass a0 < 10: the 10th largest is 0, the 11th none.
  const varex::Result tenth = rt.kth_largest(two, 10, 0, "a0 < 10");
  std::uint64_t words[2] = {};
  tenth.download(words, sizeof words);
  EXPECT_EQ(words[0], 10u);
  EXPECT_EQ(static_cast<std::int64_t>(words[1]), 0);
  const std::string beyond = error_of([&] { rt.kth_largest(two, 11, 0, "a0 < 10"); });
  EXPECT_NE(beyond.find("k=11"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("10 rows pass the filter"), std::string::npos) << beyond;
  const std::string none = error_of([&] { rt.kth_largest(two, 1, 1, "a0 < 0"); });
  EXPECT_NE(none.find("no row passes the filter"), std::string::npos) << none;
  const std::string by_quantile = error_of([&] {
    rt.run("kth_largest", {two}, {{"quantile", "0.5"}, {"where", "a0 < 0"}});
  });
  EXPECT_NE(by_quantile.find("no row passes the filter"), std::string::npos) << by_quantile;
  EXPECT_EQ(error_of([&] { rt.kth_largest(two, 1000, 1); }), "no error");

  // 17 attributes of 10 records: more than the 16 the operators take.
  const varex::Input wide{{records.buffer.handle, 17 * 10 * 4}, 10};
  for (const char* op : {"aggregate", "cnf_filter"}) {
    const std::string message = error_of([&] {
      if (op == std::string("aggregate"))
        rt.aggregate(wide, "sum");
      else
        rt.cnf_filter(wide, "a0 < 5");
    });
    EXPECT_NE(message.find("17 attributes"), std::string::npos) << op << ": " << message;
    EXPECT_NE(message.find("at most 16"), std::string::npos) << op << ": " << message;
  }
  const varex::Input sixteen{{records.buffer.handle, 16 * 10 * 4}, 10};
  EXPECT_EQ(error_of([&] { rt.aggregate(sixteen, "count"); }), "no error");
}

TEST(Runtime, OpensDevicesByVarexIds) {
  const std::vector<std::string> ops = varex::Runtime::operators();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "selection"), ops.end());
  Application app;
  REQUIRE_DEVICE(app);
  const std::string id = app.runtime().device_id();
  varex::Runtime rt = varex::Runtime::open(id);
  EXPECT_EQ(rt.device_id(), id);
  EXPECT_EQ(rt.device_key().name, app.runtime().device_key().name);

  // An application that let the runtime open the device makes its buffers in the runtime's context and
  // writes them on the runtime's queue.
  const varex::Runtime::Native native = rt.native();
  ASSERT_NE(native.context, nullptr);
  ASSERT_NE(native.queue, nullptr);
  EXPECT_EQ(native.device, app.device);
  const auto column = random_column(3001, 12);
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(static_cast<cl_context>(native.context), CL_MEM_READ_WRITE, column.size() * 4,
                              nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(clEnqueueWriteBuffer(static_cast<cl_command_queue>(native.queue), mem, CL_FALSE, 0,
                                 column.size() * 4, column.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  const varex::Result bits =
      rt.select_range({varex::Buffer::opencl(mem, column.size() * 4), column.size()}, -5000, 5000000);
  EXPECT_EQ(bits_of(bits), expected_bits(column, -5000, 5000000, false));
  clReleaseMemObject(mem);
  // An attached runtime's are the application's own.
  const varex::Runtime attached = app.runtime();
  EXPECT_EQ(attached.native().context, static_cast<void*>(app.context));
  EXPECT_EQ(attached.native().device, static_cast<void*>(app.device));
  EXPECT_EQ(attached.native().queue, static_cast<void*>(app.queue));
}

}  // namespace

namespace {

// Online adaptation without a profile: every call's result is right, the exploring calls stay within the
// share, every candidate is checked before its times count, the settled variant is the fastest by median
// of those measured, and a database written from it gives that variant as `varex best`.
TEST(RuntimeAdaptation, SettlesOnTheFastestCandidateWithinItsShare) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Options options;
  options.adapt = true;
  options.explore_share = 0.34;  // at most 10 of the 30 calls: each new candidate costs PoCL a compile
  varex::Runtime rt = app.runtime(options);
  const auto column = random_column(20011, 6);
  const varex::Input input = app.column(column);
  const auto want = expected_bits(column, -1000000, 1000000000, false);
  const int calls = 30;
  int exploring = 0;
  for (int i = 0; i < calls; ++i) {
    const varex::Result r = rt.select_range(input, -1000000, 1000000000);
    ASSERT_EQ(bits_of(r), want) << "call " << i << ", variant " << rt.last_choice().variant;
    exploring += rt.last_choice().exploring ? 1 : 0;
  }
  const std::vector<varex::Adaptation> adaptation = rt.adaptation();
  ASSERT_EQ(adaptation.size(), 1u);
  const varex::Adaptation& a = adaptation[0];
  EXPECT_EQ(a.op, "selection");
  EXPECT_EQ(a.calls, static_cast<std::uint64_t>(calls));
  EXPECT_EQ(a.exploring_calls, static_cast<std::uint64_t>(exploring));
  EXPECT_LE(a.exploring_calls, calls * options.explore_share);
  EXPECT_GE(a.candidates, 3u);
  EXPECT_EQ(a.rejected, 0u);
  EXPECT_GE(a.regret_ms, 0.0);
  // The settled candidate is the fastest by median of those run, every one of them checked first.
  double fastest = 1e300;
  std::string fastest_variant;
  std::size_t run = 0;
  for (const varex::Adaptation::Tried& t : a.tried) {
    if (t.runs == 0) continue;
    ++run;
    EXPECT_TRUE(t.verified) << t.variant;
    if (t.median_ms < fastest) {
      fastest = t.median_ms;
      fastest_variant = t.variant;
    }
  }
  EXPECT_GE(run, 3u);  // the defaults and at least two candidates
  EXPECT_EQ(a.settled_variant, fastest_variant);
  EXPECT_DOUBLE_EQ(a.settled_ms, fastest);
  // A call that does not explore runs the variant settled before it. (Its time then counts: afterwards
  // another candidate may be the fastest by median, which a comparison with rt.adaptation() after the call
  // missed.)
  rt.select_range(input, -1000000, 1000000000);
  if (!rt.last_choice().exploring) {
    EXPECT_EQ(rt.last_choice().variant, a.settled_variant);
  }

  // What it learned, as varex's own database: `varex best` names the settled variant.
  const std::string db = testing::TempDir() + "runtime-learned.db";
  std::remove(db.c_str());
  rt.write_learned(db);
  const std::string out = testing::TempDir() + "runtime-learned.json";
  ASSERT_EQ(std::system((std::string(VAREX_EXECUTABLE) + " best --db " + db + " --json > " + out).c_str()),
            0);
  std::ifstream in(out);
  const std::string best((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(best.find("\"variant\": \"" + rt.adaptation()[0].settled_variant + "\""), std::string::npos)
      << best;
}

TEST(RuntimeAdaptation, NeedsDeviceTimesAndLeavesPinnedCallsAlone) {
  varex::Options options;
  options.adapt = true;
  options.explore_share = 0.5;
  Application untimed(false);
  REQUIRE_DEVICE(untimed);
  varex::Runtime rt = untimed.runtime(options);
  const varex::Input input = untimed.column(random_column(3000, 7));
  for (int i = 0; i < 6; ++i) rt.select_range(input, 0, 1000);
  EXPECT_TRUE(rt.adaptation().empty());

  Application app;
  varex::Runtime pinned = app.runtime(options);
  pinned.override_parameters("selection", {{"kernel", "overflow"}, {"ept", "16"}, {"vec", "4"}});
  const varex::Input column = app.column(random_column(3000, 8));
  for (int i = 0; i < 6; ++i) pinned.select_range(column, 0, 1000);
  EXPECT_TRUE(pinned.adaptation().empty());
  EXPECT_TRUE(pinned.last_choice().pinned);

  // The strategy is one of the tuner's, named.
  options.adapt_strategy = "annealing";
  try {
    app.runtime(options);
    ADD_FAILURE() << "an unknown strategy was taken";
  } catch (const varex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Options::adapt_strategy: unknown strategy 'annealing'"),
              std::string::npos)
        << e.what();
  }
}

// Any of the tuner's strategies drives the calls (here genetic): every result right, the settled variant
// checked and the fastest of those run.
TEST(RuntimeAdaptation, AnotherOfTheTunersStrategiesDrivesTheCalls) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Options options;
  options.adapt = true;
  options.explore_share = 0.34;
  options.adapt_strategy = "genetic";
  varex::Runtime rt = app.runtime(options);
  const auto column = random_column(20011, 9);
  const varex::Input input = app.column(column);
  const auto want = expected_bits(column, -5000, 1000000, true);
  for (int i = 0; i < 24; ++i) {
    const varex::Result r = rt.select_range(input, -5000, 1000000, true);
    ASSERT_EQ(bits_of(r), want) << "call " << i << ", variant " << rt.last_choice().variant;
  }
  const varex::Adaptation a = rt.adaptation().at(0);
  EXPECT_GE(a.exploring_calls, 1u);
  std::size_t run = 0;
  for (const varex::Adaptation::Tried& t : a.tried) {
    if (t.runs == 0) continue;
    ++run;
    EXPECT_TRUE(t.verified) << t.variant;
    EXPECT_GE(t.median_ms, a.settled_ms) << t.variant;
  }
  EXPECT_GE(run, 2u);
}

// Every shipped plan through Runtime::run on the application's tables, as a user who read docs/RUNTIME.md and
// docs/PLANS.md lays them out: `varex tpch` writes the columns as CSV and the reference's summary (each
// output's rows and column sums); the test encodes the columns (dates as days since 1970-01-01, decimals as
// integers of their scale, dictionary columns as indices into their sorted values) and checks the sums.
namespace plans {

std::int64_t days_since_1970(const std::string& date) {  // YYYY-MM-DD, by the civil calendar
  int y = std::stoi(date.substr(0, 4));
  const unsigned m = static_cast<unsigned>(std::stoi(date.substr(5, 2)));
  const unsigned d = static_cast<unsigned>(std::stoi(date.substr(8, 2)));
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::int64_t scaled(const std::string& text, int scale) {  // "26349.12" at scale 2: 2634912
  const bool negative = !text.empty() && text.front() == '-';
  const std::string digits = negative ? text.substr(1) : text;
  const auto dot = digits.find('.');
  std::string whole = digits.substr(0, dot),
              fraction = dot == std::string::npos ? "" : digits.substr(dot + 1);
  fraction.resize(static_cast<std::size_t>(scale), '0');
  const std::int64_t v = std::stoll(whole + fraction);
  return negative ? -v : v;
}

// A table's CSV: its header's names, each column's texts.
std::map<std::string, std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  for (std::stringstream header(line); std::getline(header, names.emplace_back(), ',');) {
  }
  names.pop_back();
  std::map<std::string, std::vector<std::string>> columns;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    for (const std::string& name : names) std::getline(row, columns[name].emplace_back(), ',');
  }
  return columns;
}

std::vector<std::int32_t> encode(const std::vector<std::string>& texts, const std::string& type, int scale) {
  std::vector<std::string> dictionary(texts);
  std::sort(dictionary.begin(), dictionary.end());
  dictionary.erase(std::unique(dictionary.begin(), dictionary.end()), dictionary.end());
  std::vector<std::int32_t> out;
  for (const std::string& t : texts) {
    std::int64_t v = 0;
    if (type == "date") {
      v = days_since_1970(t);
    } else if (type == "dict") {
      v = std::lower_bound(dictionary.begin(), dictionary.end(), t) - dictionary.begin();
    } else {
      v = scaled(t, type == "decimal" ? scale : 0);
    }
    out.push_back(static_cast<std::int32_t>(v));
  }
  return out;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace plans

TEST(Runtime, EveryShippedPlanRunsOnTheApplicationsTables) {
  Application app;
  REQUIRE_DEVICE(app);
  varex::Runtime rt = app.runtime();
  for (const std::string name : {"A", "B", "C", "D", "E"}) {
    SCOPED_TRACE("plan " + name);
    const std::string dir = testing::TempDir() + "runtime-plan-" + name;
    ASSERT_EQ(std::system((std::string(VAREX_EXECUTABLE) + " tpch --plan " + name + " --sf 0.002 --out " +
                           dir + " > /dev/null")
                              .c_str()),
              0);
    const nlohmann::json plan = plans::read_json(dir + "/plan.json");
    const nlohmann::json summary = plans::read_json(dir + "/summary.json");
    // The scans' columns, scan by scan in step order, each scan's columns in its order.
    std::vector<varex::Input> inputs;
    std::set<std::string> computed;  // arithmetic results: int64 columns
    for (const auto& step : plan["steps"]) {
      if (step["op"] == "arith") computed.insert(step["compute"][0].get<std::string>());
      if (step["op"] != "scan") continue;
      const std::string table = step["table"];
      auto texts = plans::read_csv(dir + "/" + table + ".csv");
      for (const auto& column : step["columns"]) {
        for (const auto& declared : summary["tables"][table]) {
          if (declared["name"] != column) continue;
          inputs.push_back(
              app.column(plans::encode(texts[column], declared["type"], declared["scale"].get<int>())));
        }
      }
    }
    const varex::Result result = rt.run("plan", inputs, {{"plan", name}});
    ASSERT_EQ(result.kind(), varex::ResultKind::Rows);
    const auto& outputs = summary["outputs"];
    std::size_t buffer = 0;
    std::vector<std::uint32_t> counts(outputs.size());
    for (const auto& output : outputs) {
      const std::uint64_t rows = output["rows"];
      for (const auto& column : output["columns"]) {
        const bool wide = computed.count(column["name"].get<std::string>()) > 0;
        long long sum = 0;
        if (wide) {
          std::vector<std::int64_t> values(rows);
          result.download(values.data(), rows * 8, buffer);
          for (std::int64_t v : values) sum += v;
        } else {
          std::vector<std::int32_t> values(rows);
          result.download(values.data(), rows * 4, buffer);
          for (std::int32_t v : values) sum += v;
        }
        EXPECT_EQ(std::to_string(sum), column["sum"].get<std::string>())
            << output["id"] << "." << column["name"];
        ++buffer;
      }
    }
    ASSERT_EQ(result.buffer_count(), buffer + 1);  // then each output's row count
    result.download(counts.data(), counts.size() * 4, buffer);
    for (std::size_t o = 0; o < outputs.size(); ++o)
      EXPECT_EQ(counts[o], outputs[o]["rows"].get<std::uint32_t>());
    EXPECT_EQ(result.rows(), outputs[0]["rows"].get<std::uint64_t>());
  }
}

}  // namespace
