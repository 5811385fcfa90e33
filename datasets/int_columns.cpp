#include "datasets/int_columns.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"

namespace varex::datasets {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void parallel_rows(std::uint64_t rows, const std::function<void(std::uint64_t, std::uint64_t)>& body) {
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 64));
  const std::uint64_t per = (rows + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads && t * per < rows; ++t) {
    pool.emplace_back([&, t] { body(t * per, std::min(rows, (t + 1) * per)); });
  }
  for (auto& th : pool) th.join();
}

std::vector<std::int32_t> uniform_int32(std::uint64_t rows, std::uint64_t seed) {
  std::vector<std::int32_t> out(rows);
  const std::uint64_t key = splitmix64(seed);
  parallel_rows(rows, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      out[i] = static_cast<std::int32_t>(
          static_cast<std::uint32_t>(splitmix64(key ^ (i * 0xd1342543de82ef95ULL))));
    }
  });
  return out;
}

void for_each_line(const std::string& bytes, const std::string& path,
                   const std::function<void(std::size_t, std::string_view)>& row) {
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    std::size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = bytes.size();
    ++line_no;
    const std::string_view line = trim(std::string_view(bytes).substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) {
      if (end == bytes.size()) break;  // a final newline is not an empty row
      throw UsageError(path + ":" + std::to_string(line_no) + ": empty line where a row was expected");
    }
    row(line_no, line);
  }
}

std::int32_t parse_int32(std::string_view text, const std::string& path, std::size_t line_no) {
  std::int64_t value = 0;
  const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw UsageError(path + ":" + std::to_string(line_no) + ": '" + std::string(text.substr(0, 40)) +
                     "' is not an integer");
  }
  if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max()) {
    throw UsageError(path + ":" + std::to_string(line_no) + ": " + std::to_string(value) +
                     " does not fit in a 32-bit integer");
  }
  return static_cast<std::int32_t>(value);
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::int32_t> load_int32_column(const std::string& path) {
  return parse_int32_column(read_input_file(path), path, ends_with(path, ".bin"));
}

std::vector<std::int32_t> parse_int32_column(const std::string& bytes, const std::string& path, bool binary) {
  std::vector<std::int32_t> out;
  if (binary) {
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
  for_each_line(bytes, path, [&](std::size_t line_no, std::string_view line) {
    out.push_back(parse_int32(line, path, line_no));
  });
  return out;
}

std::vector<std::pair<std::int32_t, std::int32_t>> load_key_value_rows(const std::string& path) {
  return parse_key_value_rows(read_input_file(path), path);
}

std::vector<std::pair<std::int32_t, std::int32_t>> parse_key_value_rows(const std::string& bytes,
                                                                        const std::string& path) {
  std::vector<std::pair<std::int32_t, std::int32_t>> out;
  for_each_line(bytes, path, [&](std::size_t line_no, std::string_view line) {
    const std::size_t comma = line.find(',');
    if (comma == std::string_view::npos) {
      throw UsageError(path + ":" + std::to_string(line_no) + ": expected 'key,value', got '" +
                       std::string(line.substr(0, 40)) + "'");
    }
    out.emplace_back(parse_int32(trim(line.substr(0, comma)), path, line_no),
                     parse_int32(trim(line.substr(comma + 1)), path, line_no));
  });
  return out;
}

std::string file_fingerprint(const std::string& path) {
  return hex64(fnv1a(read_input_file(path)));
}

WorkloadSpec int32_file_workload(const std::string& op, const std::string& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  const std::vector<std::int32_t> column = load_int32_column(absolute);
  WorkloadSpec spec;
  spec.op = op;
  spec.generator = "file";
  spec.params = {{"path", bytes_json(absolute)},
                 {"rows", column.size()},
                 {"format", absolute.ends_with(".bin") ? "int32le" : "text"},
                 {"fingerprint", file_fingerprint(absolute)}};
  return spec;
}

std::vector<std::int32_t> int32_column_of(const WorkloadSpec& spec) {
  if (spec.generator == "uniform_int32")
    return uniform_int32(spec.rows(), spec.params.at("seed").get<std::uint64_t>());
  if (spec.generator != "file")
    throw UsageError(spec.op + " cannot use workload generator '" + spec.generator + "'");
  std::vector<std::int32_t> column = load_int32_column(bytes_from_json(spec.params.at("path")));
  if (column.size() != spec.rows()) throw UsageError("input file changed while varex was running");
  return column;
}

}  // namespace varex::datasets
