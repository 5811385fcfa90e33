#include "operators/common/attributes/attribute_baseline.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <thread>

namespace varex::operators {

namespace {

// Runs body(begin, end) over [0, rows) in chunks of whole blocks, one chunk per host thread.
void parallel_blocks(std::uint64_t rows,
                     const std::function<void(unsigned, std::uint64_t, std::uint64_t)>& body) {
  const unsigned threads = baseline_threads();
  const std::uint64_t blocks = (rows + kBaselineBlock - 1) / kBaselineBlock;
  const std::uint64_t per = (blocks + threads - 1) / threads * kBaselineBlock;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads && t * per < rows; ++t) {
    pool.emplace_back([&, t] { body(t, t * per, std::min(rows, (t + 1) * per)); });
  }
  for (auto& th : pool) th.join();
}

template <typename Cmp>
void or_compare(const std::int32_t* a, const std::int32_t* b, std::int32_t c, std::uint64_t n,
                std::uint8_t* m, Cmp cmp) {
  if (b) {
    for (std::uint64_t i = 0; i < n; ++i) m[i] |= static_cast<std::uint8_t>(cmp(a[i], b[i]));
  } else {
    for (std::uint64_t i = 0; i < n; ++i) m[i] |= static_cast<std::uint8_t>(cmp(a[i], c));
  }
}

void or_predicate(const Predicate& p, const datasets::AttributeTable& t, std::uint64_t begin, std::uint64_t n,
                  std::uint8_t* m) {
  const std::int32_t* a = t.columns[p.attribute].data() + begin;
  const std::int32_t* b =
      p.rhs_is_attribute ? t.columns[static_cast<std::size_t>(p.rhs)].data() + begin : nullptr;
  const auto c = static_cast<std::int32_t>(p.rhs_is_attribute ? 0 : p.rhs);
  switch (p.op) {
    case CompareOp::Eq:
      return or_compare(a, b, c, n, m, [](std::int32_t x, std::int32_t y) { return x == y; });
    case CompareOp::Ne:
      return or_compare(a, b, c, n, m, [](std::int32_t x, std::int32_t y) { return x != y; });
    case CompareOp::Lt:
      return or_compare(a, b, c, n, m, [](std::int32_t x, std::int32_t y) { return x < y; });
    case CompareOp::Le:
      return or_compare(a, b, c, n, m, [](std::int32_t x, std::int32_t y) { return x <= y; });
    case CompareOp::Gt:
      return or_compare(a, b, c, n, m, [](std::int32_t x, std::int32_t y) { return x > y; });
    case CompareOp::Ge:
      return or_compare(a, b, c, n, m, [](std::int32_t x, std::int32_t y) { return x >= y; });
  }
}

}  // namespace

unsigned baseline_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

BlockFilter cnf_block_filter(const Cnf& cnf, const datasets::AttributeTable& table) {
  return [cnf, &table](std::uint64_t begin, std::uint64_t end, std::uint8_t* keep) {
    const std::uint64_t n = end - begin;
    std::fill(keep, keep + n, std::uint8_t{1});
    std::array<std::uint8_t, kBaselineBlock> clause{};
    for (const Clause& c : cnf.all) {
      std::fill(clause.begin(), clause.begin() + static_cast<std::ptrdiff_t>(n), std::uint8_t{0});
      for (const Predicate& p : c.any) or_predicate(p, table, begin, n, clause.data());
      for (std::uint64_t i = 0; i < n; ++i) keep[i] &= clause[i];
    }
  };
}

std::vector<std::uint8_t> cpu_filter_bitmap(std::uint64_t rows, const BlockFilter& filter) {
  std::vector<std::uint8_t> bitmap((rows + 7) / 8, 0);
  parallel_blocks(rows, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    std::array<std::uint8_t, kBaselineBlock> keep{};
    for (std::uint64_t b = begin; b < end; b += kBaselineBlock) {
      const std::uint64_t e = std::min(end, b + kBaselineBlock);
      filter(b, e, keep.data());
      for (std::uint64_t i = 0; i < e - b; i += 8) {  // blocks start on whole bytes
        std::uint8_t byte = 0;
        for (std::uint64_t j = 0; j < 8 && i + j < e - b; ++j)
          byte |= static_cast<std::uint8_t>(keep[i + j] << j);
        bitmap[(b + i) / 8] = byte;
      }
    }
  });
  return bitmap;
}

CpuAggregate cpu_aggregate(const std::vector<std::int32_t>& column, const BlockFilter& filter) {
  std::vector<CpuAggregate> parts(baseline_threads());
  parallel_blocks(column.size(), [&](unsigned t, std::uint64_t begin, std::uint64_t end) {
    std::array<std::uint8_t, kBaselineBlock> keep{};
    std::uint64_t rows = 0;
    std::int64_t sum = 0;
    std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = std::numeric_limits<std::int32_t>::min();
    for (std::uint64_t b = begin; b < end; b += kBaselineBlock) {
      const std::uint64_t e = std::min(end, b + kBaselineBlock);
      filter(b, e, keep.data());
      const std::int32_t* v = column.data() + b;
      for (std::uint64_t i = 0; i < e - b; ++i) {  // branch-free, so that it vectorises
        const std::int32_t k = keep[i];
        rows += static_cast<std::uint64_t>(k);
        sum += static_cast<std::int64_t>(v[i]) * k;
        lo = std::min(lo, k ? v[i] : std::numeric_limits<std::int32_t>::max());
        hi = std::max(hi, k ? v[i] : std::numeric_limits<std::int32_t>::min());
      }
    }
    parts[t] = {rows, sum, lo, hi};
  });
  CpuAggregate total{0, 0, std::numeric_limits<std::int32_t>::max(),
                     std::numeric_limits<std::int32_t>::min()};
  for (const CpuAggregate& p : parts) {
    if (!p.rows) continue;
    total.rows += p.rows;
    total.sum =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(total.sum) + static_cast<std::uint64_t>(p.sum));
    total.min = std::min(total.min, p.min);
    total.max = std::max(total.max, p.max);
  }
  if (!total.rows) total.min = total.max = 0;
  return total;
}

std::pair<std::optional<std::int32_t>, std::uint64_t> cpu_kth_largest(const std::vector<std::int32_t>& column,
                                                                      std::uint64_t k,
                                                                      const BlockFilter& filter) {
  // The kept rows' values in order-preserving unsigned form, gathered once.
  std::vector<std::vector<std::uint32_t>> kept(baseline_threads());
  parallel_blocks(column.size(), [&](unsigned t, std::uint64_t begin, std::uint64_t end) {
    std::array<std::uint8_t, kBaselineBlock> keep{};
    auto& out = kept[t];
    out.reserve(end - begin);
    for (std::uint64_t b = begin; b < end; b += kBaselineBlock) {
      const std::uint64_t e = std::min(end, b + kBaselineBlock);
      filter(b, e, keep.data());
      for (std::uint64_t i = 0; i < e - b; ++i) {
        if (keep[i]) out.push_back(static_cast<std::uint32_t>(column[b + i]) ^ 0x80000000u);
      }
    }
  });
  std::uint64_t rows = 0;
  for (const auto& part : kept) rows += part.size();
  if (k < 1 || k > rows) return {std::nullopt, rows};
  std::uint32_t prefix = 0;
  std::uint64_t remaining = k;
  for (int shift = 24; shift >= 0; shift -= 8) {
    std::vector<std::array<std::uint64_t, 256>> hist(kept.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < kept.size(); ++t) {
      pool.emplace_back([&, t] {
        auto& h = hist[t];
        h.fill(0);
        for (std::uint32_t u : kept[t]) {
          if (shift == 24 || (u >> (shift + 8)) == prefix) ++h[(u >> shift) & 0xff];
        }
      });
    }
    for (auto& th : pool) th.join();
    int digit = 255;
    for (; digit > 0; --digit) {
      std::uint64_t count = 0;
      for (const auto& h : hist) count += h[static_cast<std::size_t>(digit)];
      if (remaining <= count) break;
      remaining -= count;
    }
    prefix = (prefix << 8) | static_cast<std::uint32_t>(digit);
  }
  return {static_cast<std::int32_t>(prefix ^ 0x80000000u), rows};
}

BaselineTiming time_cpu_baseline(const std::string& engine, const std::function<bool()>& run,
                                 int repetitions) {
  BaselineTiming timing;
  timing.engine = engine;
  timing.threads = baseline_threads();
  timing.verified = true;
  std::vector<double> ms;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    timing.verified = run() && timing.verified;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  timing.ms = ms[ms.size() / 2];
  return timing;
}

}  // namespace varex::operators
