// Selection variants on the OpenCL CPU device, verified against the host reference: every compile-time
// variant (kernel, ept, vec) under a spread of launch shapes, on awkward sizes and edge-value data.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "datasets/int_columns.hpp"
#include "harness/measure.hpp"
#include "operators/selection/selection.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::kernel_source;
using harness::KernelSource;
using harness::open_engine;
}  // namespace varex::operators

namespace varex::operators {
namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

// Edge values mixed into random data: the extremes of int32 and the bounds used by the queries.
std::vector<std::int32_t> edge_column(std::size_t rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::int32_t edges[] = {kMin, kMin + 1, -1, 0, 1, 4, 5, kMax - 1, kMax};
  std::vector<std::int32_t> column(rows);
  for (auto& v : column) v = rng() % 3 == 0 ? edges[rng() % 9] : static_cast<std::int32_t>(rng());
  return column;
}

datasets::WorkloadSpec file_workload(const std::vector<std::int32_t>& column, const SelectionQuery& query) {
  const std::string path = test::scratch_dir("selection-" + std::to_string(column.size())) + "/column.txt";
  std::ofstream out(path);
  for (std::int32_t v : column) out << v << "\n";
  out.close();
  SelectionOperator op;
  WorkloadOptions options;
  options.flags["input"] = path;
  auto spec = op.workload(options);
  spec.query = query.to_json();
  return spec;
}

Digest expected(const std::vector<std::int32_t>& column, const SelectionQuery& query) {
  Digest d;
  for (std::size_t r = 0; r < column.size(); ++r) {
    if (query.matches(column[r])) {
      ++d.rows;
      d.checksum += r;
    }
  }
  return d;
}

std::vector<SelectionQuery> queries() {
  std::vector<SelectionQuery> out(6);
  out[0].hi = 0;  // half of the random values
  out[0].hi_inclusive = false;
  out[1].lo = kMin;  // everything, both bounds at the extremes
  out[1].hi = kMax;
  out[2].lo = 5;  // empty range
  out[2].hi = 4;
  out[3].lo = -1;  // exclusive bounds, negated
  out[3].hi = 5;
  out[3].lo_inclusive = out[3].hi_inclusive = false;
  out[3].negate = true;
  out[4].hi = kMin;  // nothing: x < INT_MIN
  out[4].hi_inclusive = false;
  out[5].lo = kMax;  // only INT_MAX
  return out;
}

void verify_variants(const datasets::WorkloadSpec& spec, const Digest& want,
                     const std::map<std::string, std::string>& pins) {
  test::verify_variants(SelectionOperator(), spec, want, pins);
}

const std::map<std::string, std::string> kLaunchSample{{"local", "auto,32,256"}, {"grid", "cover,1,4"}};

TEST(SelectionDevice, EveryCompileVariantOnAwkwardSizes) {
  for (std::size_t rows : {0, 1, 7, 8, 31, 33, 127, 1000, 4099}) {
    const auto column = edge_column(rows, static_cast<std::uint32_t>(rows));
    const SelectionQuery q = queries()[3];
    verify_variants(file_workload(column, q), expected(column, q), kLaunchSample);
  }
}

TEST(SelectionDevice, EveryQueryShapeOnAPrimeSize) {
  const auto column = edge_column(10007, 1);
  for (const SelectionQuery& q : queries()) {
    verify_variants(file_workload(column, q), expected(column, q),
                    {{"local", "auto,64"}, {"grid", "cover,2"}});
  }
}

TEST(SelectionDevice, WholeSpaceOnGeneratedData) {
  // Every valid variant of the space (all local sizes and grids) on a size that is no multiple of 8.
  SelectionOperator op;
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(20011);
  options.flags["selectivity"] = std::to_string(0.3);
  const auto spec = op.workload(options);
  const auto column = datasets::uniform_int32(20011, options.seed());
  verify_variants(spec, expected(column, SelectionQuery::from_json(spec.query)), {});
}

TEST(SelectionDevice, MeasurementReportsTimesAndBandwidth) {
  SelectionOperator op;
  Engine& engine = test::cpu_engine();
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(1 << 20);
  const auto spec = op.workload(options);
  auto run = op.prepare(engine, spec);
  const auto space = op.space({engine.device(), spec.rows()});
  MeasureSettings settings;
  settings.min_reps = 3;
  settings.max_reps = 5;
  const Measurement m = measure(engine, *run, space.defaults(), settings, 10.0);
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_TRUE(m.verified);
  EXPECT_GE(m.samples_ms.size(), 3u);
  EXPECT_LE(m.samples_ms.size(), 5u);
  EXPECT_GT(m.kernel.median, 0);
  EXPECT_GT(m.h2d_ms, 0);
  EXPECT_GT(m.d2h_ms, 0);
  EXPECT_TRUE(m.cache_flushed);  // 4 MiB fits the cache
  EXPECT_EQ(m.bytes_moved, (1u << 20) * 4 + (1u << 17));
  EXPECT_NEAR(m.gbps, m.bytes_moved / (m.kernel.median * 1e6), 1e-9);
  EXPECT_NEAR(m.probe_fraction, m.gbps / 10.0, 1e-9);
  EXPECT_EQ(m.result, run->reference());
}

TEST(SelectionDevice, ABrokenKernelIsRecordedNotThrown) {
  // A launch the device refuses (a work-group larger than the device allows) becomes a status.
  SelectionOperator op;
  Engine& engine = test::cpu_engine();
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(4096);
  const auto spec = op.workload(options);
  auto run = op.prepare(engine, spec);
  variants::Params params = op.space({engine.device(), spec.rows()}).defaults();
  params["kernel"] = std::string("overflow");
  params["padding"] = std::string("guard");
  params["local"] = static_cast<std::int64_t>(engine.device().max_work_group * 2);
  const Measurement m = measure(engine, *run, params, MeasureSettings{}, 0);
  EXPECT_EQ(m.status, Status::LaunchError);
  EXPECT_FALSE(m.error.empty());
}

}  // namespace
}  // namespace varex::operators

namespace varex::operators {
namespace {

TEST(CompileCache, ProgramsAreKeptOnDiskAcrossEngines) {
  const std::string dir = test::scratch_dir("compile-cache");
  setenv("VAREX_CACHE_DIR", dir.c_str(), 1);
  SelectionOperator op;
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(10007);
  const auto spec = op.workload(options);
  variants::Params params = op.space({test::cpu_device(), spec.rows()}).defaults();
  params["kernel"] = std::string("overflow");
  params["vec"] = std::int64_t{4};
  const Defines defines = op.defines(params, test::cpu_device());
  const KernelSource& source = kernel_source(Backend::OpenCL, "selection");
  CompileInfo first, second;
  {
    auto engine = open_engine(test::cpu_device());
    engine->compile(source, defines, &first);
  }
  EXPECT_FALSE(first.cached);
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    files += entry.path().extension() == ".bin";
  EXPECT_EQ(files, 1u);
  auto engine = open_engine(test::cpu_device());
  engine->compile(source, defines, &second);
  EXPECT_TRUE(second.cached);
  // The program loaded from disk computes the right result.
  auto run = op.prepare(*engine, spec);
  run->poison();
  run->execute(params);
  EXPECT_TRUE(run->collect().verified);
  unsetenv("VAREX_CACHE_DIR");
}

TEST(CompileCache, EnginesBuildingTheSameProgramAtOnceBuildItOnce) {
  // Identical GPUs tuned at the same time ask for the same programs at the same moment: one builds, the
  // other waits for the cache entry and loads it.
  const std::string dir = test::scratch_dir("compile-cache-shared");
  setenv("VAREX_CACHE_DIR", dir.c_str(), 1);
  SelectionOperator op;
  variants::Params params = op.space({test::cpu_device(), 4096}).defaults();
  params["kernel"] = std::string("overflow");
  params["ept"] = std::int64_t{16};
  params["vec"] = std::int64_t{8};
  const Defines defines = op.defines(params, test::cpu_device());
  const KernelSource& source = kernel_source(Backend::OpenCL, "selection");
  std::vector<std::unique_ptr<Engine>> engines;
  for (int i = 0; i < 2; ++i) engines.push_back(open_engine(test::cpu_device()));
  std::vector<CompileInfo> info(2);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < 2) std::this_thread::yield();
      engines[i]->compile(source, defines, &info[i]);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_NE(info[0].cached, info[1].cached) << "exactly one of the two built the program";
  unsetenv("VAREX_CACHE_DIR");
}

TEST(CompileCache, BackgroundCompilationServesTheNextCompile) {
  setenv("VAREX_CACHE_DIR", "off", 1);
  auto engine = open_engine(test::cpu_device());
  engine->set_background_compile(true);
  SelectionOperator op;
  variants::Params params = op.space({test::cpu_device(), 4096}).defaults();
  params["ept"] = std::int64_t{32};
  const KernelSource& source = kernel_source(Backend::OpenCL, "selection");
  engine->prefetch(source, op.defines(params, test::cpu_device()));
  // Meanwhile the engine keeps working on another program.
  WorkloadOptions options;
  options.flags["rows"] = std::to_string(4096);
  auto run = op.prepare(*engine, op.workload(options));
  const variants::Params other = op.space({test::cpu_device(), 4096}).defaults();
  run->poison();
  run->execute(other);
  EXPECT_TRUE(run->collect().verified);
  CompileInfo info;
  engine->compile(source, op.defines(params, test::cpu_device()), &info);
  EXPECT_FALSE(info.cached);  // built by the background thread for this first use
  EXPECT_GT(info.ms, 0);
  run->poison();
  run->execute(params);
  EXPECT_TRUE(run->collect().verified);
  unsetenv("VAREX_CACHE_DIR");
}

}  // namespace
}  // namespace varex::operators
