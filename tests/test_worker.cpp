// The worker protocol's failure handling, with stand-in programs for workers that hang or die.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "base/errors.hpp"
#include "harness/worker.hpp"
#include "support.hpp"

namespace varex::harness {
namespace {

std::string script(const std::string& name, const std::string& body) {
  const std::string path = test::scratch_dir("worker-" + name) + "/worker.sh";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

TEST(Worker, AHungWorkerTimesOutAndIsReplaced) {
  WorkerClient client(script("hang", "exec sleep 600"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.request({{"cmd", "probe"}}, 0.5), WorkerTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(client.running());
}

TEST(Worker, ACrashedWorkerIsReported) {
  WorkerClient client(script("crash", "kill -SEGV $$"));
  try {
    client.request({{"cmd", "probe"}}, 10);
    FAIL();
  } catch (const WorkerCrashed& e) {
    EXPECT_NE(std::string(e.what()).find("signal"), std::string::npos) << e.what();
  }
}

TEST(Worker, ErrorsTheWorkerReportsKeepTheirKind) {
  // A stand-in that answers on descriptor 4 the way the real worker does.
  WorkerClient client(script("answer", R"(read line <&3
echo '{"ok":false,"usage":true,"error":"bad input"}' >&4
read line <&3
echo '{"ok":false,"usage":false,"error":"driver trouble"}' >&4
read line <&3
echo '{"ok":true,"value":7}' >&4
sleep 600)"));
  EXPECT_THROW(client.request({{"cmd", "x"}}, 10), UsageError);
  EXPECT_THROW(client.request({{"cmd", "x"}}, 10), RuntimeError);
  EXPECT_EQ(client.request({{"cmd", "x"}}, 10).at("value"), 7);
}

TEST(Worker, HangingVariantBecomesATimeoutMeasurement) {
  // prepare answers, measure never does: the variant is recorded as a timeout, not an exception.
  RemoteDevice remote(script("measure-hang", R"(read line <&3
echo '{"ok":true,"h2d_ms":1,"reference":{"rows":0,"checksum":0}}' >&4
read line <&3
sleep 600)"),
                      DeviceInfo{});
  datasets::WorkloadSpec spec;
  spec.op = "selection";
  spec.generator = "uniform_int32";
  const Measurement m = remote.measure(spec, {}, MeasureSettings{}, 0, 0.5);
  EXPECT_EQ(m.status, Status::Timeout);
  EXPECT_FALSE(m.error.empty());
}

TEST(Worker, RealWorkerProbesTheCpuDevice) {
  RemoteDevice remote(VAREX_EXECUTABLE, test::cpu_device());
  const ProbeResult p = remote.probe();
  EXPECT_GT(p.gbps, 0.1);
  EXPECT_FALSE(p.method.empty());
  EXPECT_GE(p.details.at("methods").size(), 2u);
  // Source and destination each twice the cache: a declared cache (the test script declares one) is taken
  // at its word, a reported one as at least 256 MiB; both within the allocation limits.
  const DeviceInfo& d = test::cpu_device();
  std::uint64_t want = 2 * d.cache_bytes;
  if (!d.cache_declared) want = std::max<std::uint64_t>(want, 256ULL << 20);
  want = std::min({want, d.max_alloc, d.global_mem / 4}) / 4096 * 4096;
  EXPECT_EQ(p.details.at("bytes").get<std::uint64_t>(), want);
}

}  // namespace
}  // namespace varex::harness
