// The shared device primitives (kernels/common/scan.h, compact.h, reduce.h, histogram.h through
// kernels/primitives.cl and harness/primitives/) on the OpenCL CPU device, each against a plain host
// computation for awkward sizes and several work-group shapes; outputs start poisoned, and each checker
// is shown to reject a poisoned result. Also: kernels/primitives.cl builds with NVRTC.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "harness/primitives/compact.hpp"
#include "harness/primitives/histogram.hpp"
#include "harness/primitives/reduce.hpp"
#include "harness/primitives/scan.hpp"
#include "support.hpp"
#ifdef VAREX_HAVE_CUDA
#include "harness/backends/cuda_engine.hpp"
#endif

namespace varex::harness::primitives {
namespace {

constexpr std::uint32_t kPoison = 0xDEADBEEFu;
const std::vector<std::uint64_t> kSizes = {0, 1, 7, 31, 33, 1000, (1u << 16) + 3, 1u << 20};

template <typename T>
std::unique_ptr<DeviceBuffer> to_device(Engine& engine, const std::vector<T>& v) {
  auto buffer = engine.allocate(v.size() * sizeof(T));
  if (!v.empty()) {
    auto host = engine.allocate_host(v.size() * sizeof(T));
    std::copy(v.begin(), v.end(), static_cast<T*>(host->data()));
    engine.upload(*buffer, 0, *host, v.size() * sizeof(T))->elapsed_ms();
  }
  return buffer;
}

template <typename T>
std::vector<T> from_device(Engine& engine, const DeviceBuffer& buffer, std::size_t count) {
  if (count == 0) return {};
  auto host = engine.allocate_host(count * sizeof(T));
  engine.download(*host, buffer, count * sizeof(T))->elapsed_ms();
  return std::vector<T>(static_cast<T*>(host->data()), static_cast<T*>(host->data()) + count);
}

std::unique_ptr<DeviceBuffer> poisoned(Engine& engine, std::size_t words) {
  auto buffer = engine.allocate(words * 4);
  if (words) engine.fill(*buffer, kPoison, 0, words * 4)->elapsed_ms();
  return buffer;
}

std::vector<std::uint32_t> random_words(std::uint64_t n, std::uint32_t below, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> dist(0, below - 1);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// ---- checkers: "" when `got` is right, else the first difference ----

std::string check_scan(const std::vector<std::uint32_t>& in, const std::vector<std::uint32_t>& got) {
  if (got.size() != in.size() + 1) return "size " + std::to_string(got.size());
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i <= in.size(); ++i) {
    if (got[i] != sum)
      return "at " + std::to_string(i) + ": " + std::to_string(got[i]) + " != " + std::to_string(sum);
    if (i < in.size()) sum += in[i];
  }
  return "";
}

std::string check_compact(const std::vector<std::uint32_t>& in, const std::vector<std::uint32_t>& flags,
                          const std::vector<std::uint32_t>& got) {
  std::vector<std::uint32_t> want;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (flags[i]) want.push_back(in[i]);
  if (got.size() != want.size())
    return "kept " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) return "at " + std::to_string(i);
  return "";
}

std::vector<std::uint32_t> host_histogram(const std::vector<std::uint32_t>& keys, std::uint32_t bins) {
  std::vector<std::uint32_t> h(bins, 0);
  for (std::uint32_t k : keys)
    if (k < bins) ++h[k];
  return h;
}

// ---- scan ----

TEST(Primitives, ScanMatchesTheHostForEverySizeAndShape) {
  Engine& engine = test::cpu_engine();
  for (const ScanShape shape :
       {ScanShape{128, 8}, ScanShape{64, 4}, ScanShape{32, 1}, ScanShape{256, 2}, ScanShape{48, 3}}) {
    DeviceScan scan(engine, 1u << 20, shape);
    for (std::uint64_t n : kSizes) {
      const auto in = random_words(n, 1000, static_cast<unsigned>(n + shape.local));
      auto d_in = to_device(engine, in);
      auto d_out = poisoned(engine, n + 1);
      const Timings t = scan.run(*d_in, *d_out, n);
      const std::string where = "n=" + std::to_string(n) + " local=" + std::to_string(shape.local) +
                                " items=" + std::to_string(shape.items);
      ASSERT_EQ(check_scan(in, from_device<std::uint32_t>(engine, *d_out, n + 1)), "") << where;
      if (n) {
        ASSERT_EQ(t.size(), 3u) << where;
        EXPECT_EQ(t[0].kernel, "scan_tiles");
      }
      // In place, as the group-by scans its flags.
      auto d_same = to_device(engine, [&] {
        auto v = in;
        v.push_back(kPoison);
        return v;
      }());
      scan.run(*d_same, *d_same, n);
      ASSERT_EQ(check_scan(in, from_device<std::uint32_t>(engine, *d_same, n + 1)), "")
          << where << " in place";
    }
  }
}

TEST(Primitives, ScanCheckerRejectsPoisonedOutput) {
  Engine& engine = test::cpu_engine();
  const auto in = random_words(1000, 1000, 7);
  auto d_in = to_device(engine, in);
  auto d_out = poisoned(engine, in.size() + 1);
  EXPECT_NE(check_scan(in, from_device<std::uint32_t>(engine, *d_out, in.size() + 1)), "");
  DeviceScan scan(engine, in.size());
  scan.run(*d_in, *d_out, in.size());
  auto got = from_device<std::uint32_t>(engine, *d_out, in.size() + 1);
  ASSERT_EQ(check_scan(in, got), "");
  got[500] = kPoison;
  EXPECT_NE(check_scan(in, got), "");
}

TEST(Primitives, ScanRefusesMoreThanItWasSizedFor) {
  Engine& engine = test::cpu_engine();
  DeviceScan scan(engine, 10);
  auto d = engine.allocate(64 * 4);
  EXPECT_THROW(scan.run(*d, *d, 11), std::invalid_argument);
}

// ---- compaction ----

TEST(Primitives, CompactKeepsFlaggedItemsInOrder) {
  Engine& engine = test::cpu_engine();
  for (const ScanShape shape : {ScanShape{128, 8}, ScanShape{64, 32}, ScanShape{32, 1}, ScanShape{48, 3}}) {
    Compact compact(engine, 1u << 20, shape);
    for (std::uint64_t n : kSizes) {
      for (std::uint32_t keep_one_in : {1u, 2u, 97u}) {
        const auto in = random_words(n, 0xFFFFFFFFu, static_cast<unsigned>(n * 3 + keep_one_in));
        auto flags = random_words(n, keep_one_in, static_cast<unsigned>(n + 11));
        for (auto& f : flags) f = f == 0 ? 1u + (f & 7u) : 0u;  // several non-zero flag values
        auto d_in = to_device(engine, in);
        auto d_flags = to_device(engine, flags);
        auto d_out = poisoned(engine, n);
        std::uint64_t kept = 0;
        compact.run(*d_in, *d_flags, *d_out, n, kept);
        const std::string where = "n=" + std::to_string(n) + " local=" + std::to_string(shape.local) +
                                  " items=" + std::to_string(shape.items) + " 1/" +
                                  std::to_string(keep_one_in);
        ASSERT_LE(kept, n) << where;
        ASSERT_EQ(check_compact(in, flags, from_device<std::uint32_t>(engine, *d_out, kept)), "") << where;
        if (kept < n) {  // nothing written past the kept items
          ASSERT_EQ(from_device<std::uint32_t>(engine, *d_out, kept + 1).back(), kPoison) << where;
        }
      }
    }
  }
}

TEST(Primitives, CompactCheckerRejectsPoisonedOutput) {
  Engine& engine = test::cpu_engine();
  const auto in = random_words(1000, 1u << 30, 3);
  const auto flags = random_words(1000, 2, 4);
  auto d_in = to_device(engine, in);
  auto d_flags = to_device(engine, flags);
  auto d_out = poisoned(engine, in.size());
  std::uint64_t kept = 0;
  Compact compact(engine, in.size());
  compact.run(*d_in, *d_flags, *d_out, in.size(), kept);
  auto got = from_device<std::uint32_t>(engine, *d_out, kept);
  ASSERT_EQ(check_compact(in, flags, got), "");
  ASSERT_GT(got.size(), 1u);
  got[got.size() / 2] = kPoison;
  EXPECT_NE(check_compact(in, flags, got), "");
  std::swap(got[0], got[1]);  // order matters
  got[got.size() / 2] = from_device<std::uint32_t>(engine, *d_out, kept)[got.size() / 2];
  EXPECT_NE(check_compact(in, flags, got), "");
}

// ---- reduction ----

TEST(Primitives, ReduceSumsToSixtyFourBits) {
  Engine& engine = test::cpu_engine();
  for (std::uint64_t local : {1u, 7u, 32u, 33u, 64u, 256u, 1024u}) {
    for (std::uint64_t n : kSizes) {
      const auto in = random_words(n, 0xFFFFFFFFu, static_cast<unsigned>(n + local));
      const std::uint64_t want = std::accumulate(in.begin(), in.end(), std::uint64_t{0});
      auto d_in = to_device(engine, in);
      for (const Reduce::Width width : {Reduce::Width::U64, Reduce::Width::U32}) {
        const bool wide = width == Reduce::Width::U64;
        // The 32-bit work-group sum needs small values: each group's share below 2^32.
        const auto small = random_words(n, 1000, static_cast<unsigned>(n));
        auto d_small = to_device(engine, small);
        const std::uint64_t want_small = std::accumulate(small.begin(), small.end(), std::uint64_t{0});
        std::uint64_t got = kPoison;
        Reduce reduce(engine, local, 0, width);
        reduce.run(wide ? *d_in : *d_small, n, got);
        ASSERT_EQ(got, wide ? want : want_small) << "n=" << n << " local=" << local << " wide=" << wide;
      }
      // A fixed number of work-groups strides over the input.
      std::uint64_t got = kPoison;
      Reduce(engine, local, 3).run(*d_in, n, got);
      ASSERT_EQ(got, want) << "n=" << n << " local=" << local << " 3 groups";
    }
  }
}

// ---- histograms ----

TEST(Primitives, HistogramOfBytesAndSmallKeys) {
  Engine& engine = test::cpu_engine();
  for (std::uint64_t local : {1u, 7u, 64u, 256u}) {
    for (std::uint64_t n : kSizes) {
      const std::string where = "n=" + std::to_string(n) + " local=" + std::to_string(local);
      // Bytes: a skewed distribution, so bins collide within a work-group.
      const auto wide = random_words(n, 1024, static_cast<unsigned>(n + 5));
      std::vector<std::uint8_t> bytes(n);
      std::vector<std::uint32_t> as_keys(n);
      for (std::uint64_t i = 0; i < n; ++i)
        as_keys[i] = bytes[i] = static_cast<std::uint8_t>(wide[i] % 300 % 256);
      auto d_bytes = to_device(engine, bytes);
      auto d_bins = poisoned(engine, 256);
      Histogram(engine, 256, local).run_bytes(*d_bytes, n, *d_bins);
      ASSERT_EQ(from_device<std::uint32_t>(engine, *d_bins, 256), host_histogram(as_keys, 256)) << where;
      for (std::uint32_t bins : {1u, 7u, 256u, 1000u}) {
        const auto keys = random_words(n, bins + 10, static_cast<unsigned>(n + bins));  // some out of range
        auto d_keys = to_device(engine, keys);
        auto d_out = poisoned(engine, bins);
        Histogram(engine, bins, local).run_keys(*d_keys, n, *d_out);
        ASSERT_EQ(from_device<std::uint32_t>(engine, *d_out, bins), host_histogram(keys, bins))
            << where << " bins=" << bins;
      }
    }
  }
}

TEST(Primitives, HistogramCheckRejectsPoisonedBins) {
  Engine& engine = test::cpu_engine();
  const auto keys = random_words(1000, 16, 9);
  auto d_keys = to_device(engine, keys);
  auto d_out = poisoned(engine, 16);
  EXPECT_NE(from_device<std::uint32_t>(engine, *d_out, 16), host_histogram(keys, 16));
  Histogram(engine, 16, 64).run_keys(*d_keys, keys.size(), *d_out);
  auto got = from_device<std::uint32_t>(engine, *d_out, 16);
  ASSERT_EQ(got, host_histogram(keys, 16));
  got[3] = kPoison;
  EXPECT_NE(got, host_histogram(keys, 16));
}

#ifdef VAREX_HAVE_CUDA
TEST(Primitives, BuildWithNvrtc) {
  for (const ScanShape shape : {ScanShape{128, 8}, ScanShape{256, 4}, ScanShape{32, 1}}) {
    Defines defines = shape.defines();
    defines.push_back({"MAX_LOCAL", "1024"});
    defines.push_back({"HIST_BINS", "1000"});
    EXPECT_GT(compile_cuda_offline(kernel_source(Backend::Cuda, "primitives"), defines, "sm_90"), 0u);
  }
}
#endif

}  // namespace
}  // namespace varex::harness::primitives
