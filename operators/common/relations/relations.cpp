#include "operators/common/relations/relations.hpp"

#include <algorithm>
#include <charconv>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"

namespace varex::datasets {

namespace {

std::uint32_t draw(std::uint64_t key, std::uint64_t row) {
  return static_cast<std::uint32_t>(splitmix64(key ^ (row * 0xd1342543de82ef95ULL)));
}

std::string where(const std::string& path, std::size_t line_no) {
  return path + ":" + std::to_string(line_no) + ": ";
}

std::uint32_t parse_field(std::string_view text, const std::string& path, std::size_t line_no) {
  const std::string_view field = trim(text);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec == std::errc::invalid_argument || ptr != field.data() + field.size()) {
    throw UsageError(where(path, line_no) + "'" + std::string(field.substr(0, 40)) +
                     "' is not an unsigned decimal");
  }
  if (ec == std::errc::result_out_of_range || value > 0xFFFFFFFFull) {
    throw UsageError(where(path, line_no) + std::string(field.substr(0, 40)) +
                     " does not fit in an unsigned 32-bit integer");
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

KeyDistribution key_distribution_from_string(std::string_view name) {
  if (name == "uniform") return KeyDistribution::Uniform;
  if (name == "sorted") return KeyDistribution::Sorted;
  if (name == "dup") return KeyDistribution::Dup;
  if (name == "runs") return KeyDistribution::Runs;
  throw UsageError("--keys " + std::string(name) + ": choose uniform, sorted, dup or runs");
}

std::string to_string(KeyDistribution keys) {
  switch (keys) {
    case KeyDistribution::Uniform:
      return "uniform";
    case KeyDistribution::Sorted:
      return "sorted";
    case KeyDistribution::Dup:
      return "dup";
    case KeyDistribution::Runs:
      return "runs";
  }
  return "?";
}

Relation generate_relation(std::uint64_t rows, std::uint32_t values, KeyDistribution keys, std::uint64_t seed,
                           std::uint64_t run) {
  if (values < 1 || values > 3) {
    throw UsageError("--values " + std::to_string(values) + ": a relation has 1 to 3 values per tuple");
  }
  if (keys == KeyDistribution::Runs && run == 0) throw UsageError("--run 0: a run holds at least one tuple");
  Relation r;
  r.columns.assign(1 + values, std::vector<std::uint32_t>(rows));
  const std::uint64_t base = splitmix64(seed);
  // Runs: run j's key is j * step plus a draw (of its own stream) below step; with fewer than 2^32 rows,
  // step >= 1 and the keys strictly increase from run to run.
  const std::uint64_t runs = keys == KeyDistribution::Runs ? (rows + run - 1) / run : 0;
  const std::uint64_t step = runs ? std::max<std::uint64_t>((1ULL << 32) / runs, 1) : 0;
  const std::uint64_t run_base = splitmix64(base ^ 0x52554e53ULL);
  parallel_rows(rows, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint32_t k = draw(base, i);
      if (keys == KeyDistribution::Runs) {
        const std::uint64_t j = i / run;
        r.columns[0][i] = static_cast<std::uint32_t>(j * step + draw(run_base, j) % step);
      } else {
        r.columns[0][i] = keys == KeyDistribution::Dup ? (k >> 24 << 24) + (1u << 23) : k;
      }
      for (std::uint32_t c = 1; c <= values; ++c) r.columns[c][i] = draw(splitmix64(base + c), i);
    }
  });
  if (keys == KeyDistribution::Sorted) std::sort(r.columns[0].begin(), r.columns[0].end());
  return r;
}

Relation parse_relation(std::string_view bytes, const std::string& path) {
  Relation r;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  std::size_t width = 0;
  while (pos < bytes.size()) {
    std::size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) end = bytes.size();
    ++line_no;
    const std::string_view line = trim(bytes.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) {
      if (end >= bytes.size() || pos >= bytes.size()) break;  // a final newline is not an empty tuple
      throw UsageError(where(path, line_no) + "empty line where a tuple was expected");
    }
    std::size_t fields = 1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
    if (width == 0) {
      if (fields < 2 || fields > 4) {
        throw UsageError(where(path, line_no) +
                         "a tuple is 'key,value[,value[,value]]' (2 to 4 fields), got " +
                         std::to_string(fields) + " field" + (fields == 1 ? "" : "s"));
      }
      width = fields;
      r.columns.assign(width, {});
    } else if (fields != width) {
      throw UsageError(where(path, line_no) + std::to_string(fields) + " fields where line 1 has " +
                       std::to_string(width));
    }
    std::string_view rest = line;
    for (std::size_t c = 0; c < width; ++c) {
      const std::size_t comma = rest.find(',');
      r.columns[c].push_back(parse_field(rest.substr(0, comma), path, line_no));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return r;
}

Relation load_relation(const std::string& path) {
  return parse_relation(read_input_file(path), path);
}

}  // namespace varex::datasets
