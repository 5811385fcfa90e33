#include "datasets/int_columns.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "harness/errors.hpp"
#include "harness/hash.hpp"

namespace varex::datasets {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<std::int32_t> uniform_int32(std::uint64_t rows, std::uint64_t seed) {
  std::vector<std::int32_t> out(rows);
  const std::uint64_t key = splitmix64(seed);
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 64));
  const std::uint64_t per = (rows + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::uint64_t end = std::min(rows, (t + 1) * per);
      for (std::uint64_t i = t * per; i < end; ++i) {
        out[i] = static_cast<std::int32_t>(
            static_cast<std::uint32_t>(splitmix64(key ^ (i * 0xd1342543de82ef95ULL))));
      }
    });
  }
  for (auto& th : pool) th.join();
  return out;
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read input file '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw UsageError("error while reading input file '" + path + "'");
  return std::move(buffer).str();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::int32_t> load_int32_column(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<std::int32_t> out;
  if (ends_with(path, ".bin")) {
    if (bytes.size() % 4 != 0) {
      throw UsageError("input file '" + path + "' has " + std::to_string(bytes.size()) +
                       " bytes, not a whole number of little-endian int32 values");
    }
    out.resize(bytes.size() / 4);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto* b = reinterpret_cast<const unsigned char*>(bytes.data()) + 4 * i;
      out[i] = static_cast<std::int32_t>(
          static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
          (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24));
    }
    return out;
  }
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    std::size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = bytes.size();
    ++line_no;
    std::size_t a = pos, b = end;
    while (a < b && (bytes[a] == ' ' || bytes[a] == '\t' || bytes[a] == '\r')) ++a;
    while (b > a && (bytes[b - 1] == ' ' || bytes[b - 1] == '\t' || bytes[b - 1] == '\r')) --b;
    pos = end + 1;
    if (a == b) {
      if (end == bytes.size()) break;  // a final newline is not an empty row
      throw UsageError(path + ":" + std::to_string(line_no) + ": empty line where an integer was expected");
    }
    std::int64_t value = 0;
    const char* first = bytes.data() + a + (bytes[a] == '+' ? 1 : 0);
    const auto [ptr, ec] = std::from_chars(first, bytes.data() + b, value);
    if (ec != std::errc() || ptr != bytes.data() + b) {
      throw UsageError(path + ":" + std::to_string(line_no) + ": '" +
                       bytes.substr(a, std::min<std::size_t>(b - a, 40)) + "' is not an integer");
    }
    if (value < std::numeric_limits<std::int32_t>::min() ||
        value > std::numeric_limits<std::int32_t>::max()) {
      throw UsageError(path + ":" + std::to_string(line_no) + ": " + std::to_string(value) +
                       " does not fit in a 32-bit integer");
    }
    out.push_back(static_cast<std::int32_t>(value));
  }
  return out;
}

std::string file_fingerprint(const std::string& path) {
  return hex64(fnv1a(read_file(path)));
}

}  // namespace varex::datasets
