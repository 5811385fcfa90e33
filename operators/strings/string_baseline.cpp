#include "operators/strings/string_baseline.hpp"

#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "base/errors.hpp"
#include "operators/strings/byte_regex.hpp"
#include "operators/strings/regex/pattern.hpp"

namespace varex::operators {

namespace {

// Runs match(row) over all rows on every host core; each thread owns whole bytes of the bitmap.
std::vector<std::uint8_t> scan(const datasets::StringColumn& column, unsigned threads,
                               const std::function<std::function<bool(std::string_view)>()>& make_matcher) {
  const std::uint64_t rows = column.rows();
  std::vector<std::uint8_t> bitmap((rows + 7) / 8, 0);
  const std::uint64_t bytes = bitmap.size();
  const std::uint64_t per = (bytes + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads && t * per < bytes; ++t) {
    pool.emplace_back([&, t] {
      const auto match = make_matcher();
      for (std::uint64_t r = t * per * 8; r < std::min(rows, (t + 1) * per * 8); ++r) {
        if (match(column.at(r))) bitmap[r / 8] |= static_cast<std::uint8_t>(1u << (r % 8));
      }
    });
  }
  for (auto& th : pool) th.join();
  return bitmap;
}

struct HyperscanDatabase {
  hs_database_t* db = nullptr;
  ~HyperscanDatabase() {
    if (db) hs_free_database(db);
  }
};

struct HyperscanScratch {
  hs_scratch_t* scratch = nullptr;
  ~HyperscanScratch() {
    if (scratch) hs_free_scratch(scratch);
  }
};

}  // namespace

CpuBaseline run_cpu_baseline(StringOp op, const std::string& operand, const datasets::StringColumn& column,
                             int repetitions) {
  CpuBaseline b;
  b.threads = std::max(1u, std::thread::hardware_concurrency());
  std::function<std::function<bool(std::string_view)>()> make_matcher;
  HyperscanDatabase hs;
  std::unique_ptr<ByteRegex> re;
  if (op == StringOp::Equal || op == StringOp::Prefix) {
    b.engine = "memcmp";
    make_matcher = [&] {
      return std::function<bool(std::string_view)>([&](std::string_view s) {
        return op == StringOp::Equal ? s == operand : s.substr(0, operand.size()) == operand;
      });
    };
  } else {
    const std::string pattern = op == StringOp::Like ? regex::like_to_regex(operand) : operand;
    hs_compile_error_t* error = nullptr;
    const unsigned flags = HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY;
    if (hs_compile(pattern.c_str(), flags, HS_MODE_BLOCK, nullptr, &hs.db, &error) == HS_SUCCESS) {
      b.engine = "hyperscan";
      make_matcher = [&] {
        auto scratch = std::make_shared<HyperscanScratch>();
        if (hs_alloc_scratch(hs.db, &scratch->scratch) != HS_SUCCESS)
          throw RuntimeError("hs_alloc_scratch failed");
        return std::function<bool(std::string_view)>([&, scratch](std::string_view s) {
          bool matched = false;
          hs_scan(
              hs.db, s.data(), static_cast<unsigned>(s.size()), 0, scratch->scratch,
              [](unsigned, unsigned long long, unsigned long long, unsigned, void* context) {
                *static_cast<bool*>(context) = true;
                return 1;  // stop at the first match
              },
              &matched);
          return matched;
        });
      };
    } else {
      hs_free_compile_error(error);
      re = std::make_unique<ByteRegex>(pattern);
      if (!re->ok()) throw UsageError("the CPU baseline cannot compile '" + pattern + "': " + re->error());
      b.engine = "re2";
      make_matcher = [&] {
        return std::function<bool(std::string_view)>([&](std::string_view s) { return re->search(s); });
      };
    }
  }
  std::vector<double> times;
  for (int i = 0; i < std::max(1, repetitions); ++i) {
    const auto start = std::chrono::steady_clock::now();
    b.bitmap = scan(column, b.threads, make_matcher);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  b.ms = times[times.size() / 2];
  return b;
}

}  // namespace varex::operators
