#pragma once
// String columns in the Arrow layout (one contiguous byte buffer, int32 offsets, offsets[rows] = bytes),
// loaded from text files or generated like document 003's workloads: TPC-H p_type and p_name, and titles
// made of English words. A planted string sets the selectivity exactly.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace varex::datasets {

struct StringColumn {
  std::string bytes;
  std::vector<std::int32_t> offsets{0};

  std::uint64_t rows() const { return offsets.size() - 1; }
  std::string_view at(std::uint64_t row) const {
    return std::string_view(bytes).substr(offsets[row], offsets[row + 1] - offsets[row]);
  }
};

// One string per line: the bytes between newlines, a carriage return before a newline dropped, no final
// empty row after a last newline. More than 2^31 - 1 bytes is a UsageError.
StringColumn load_string_column(const std::string& path);
// The same from a file's bytes.
StringColumn parse_string_column(const std::string& text);

enum class Plant {
  Whole,   // planted rows are the plant (equality)
  Prefix,  // planted rows start with the plant, then a space and a generated string (for titles, the
           // plant counts towards the title's length)
};

struct StringWorkload {
  std::string dataset;  // "ptype", "pname" or "titles"
  std::uint64_t rows = 0;
  double selectivity = 0;  // exactly round(selectivity x rows) rows are planted
  std::string plant;
  Plant mode = Plant::Whole;
  std::uint64_t seed = 42;
};

// TPC-H p_type: three words from the syllable lists of the TPC-H specification (150 values, upper case,
// 16-25 bytes); p_name: five distinct TPC-H colour words; titles: English words from the system's word
// list (Debian's wamerican; $VAREX_WORD_LIST names another) to about 76 bytes, lower case. Rows that are not
// planted never contain the plant. Throws UsageError for an unknown dataset or a missing word list.
StringColumn generate_strings(const StringWorkload& w);

// Changes whenever generate_strings makes other rows from the same parameters; it is part of a generated
// workload's parameters, so that timings of old and new rows never share a workload id.
// 2: titles average 76 bytes (version 1's averaged 80).
constexpr int kStringGeneratorVersion = 2;

// The plant document 003's experiments use on each dataset when none is given.
std::string default_plant(const std::string& dataset);

}  // namespace varex::datasets
