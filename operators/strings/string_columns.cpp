#include "operators/strings/string_columns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include "base/errors.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"
#include "datasets/row_random.hpp"

namespace varex::datasets {

namespace {

constexpr std::uint64_t kStringRowStride = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::int32_t>::max();

// TPC-H 2.18, clause 4.2.2.13.
const std::vector<std::string> kTypeSyllable1{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
const std::vector<std::string> kTypeSyllable2{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
const std::vector<std::string> kTypeSyllable3{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
const std::vector<std::string> kColours{
    "almond",    "antique",    "aquamarine", "azure",     "beige",     "bisque",     "black",     "blanched",
    "blue",      "blush",      "brown",      "burlywood", "burnished", "chartreuse", "chiffon",   "chocolate",
    "coral",     "cornflower", "cornsilk",   "cream",     "cyan",      "dark",       "deep",      "dim",
    "dodger",    "drab",       "firebrick",  "floral",    "forest",    "frosted",    "gainsboro", "ghost",
    "goldenrod", "green",      "grey",       "honeydew",  "hot",       "indian",     "ivory",     "khaki",
    "lace",      "lavender",   "lawn",       "lemon",     "light",     "lime",       "linen",     "magenta",
    "maroon",    "medium",     "metallic",   "midnight",  "mint",      "misty",      "moccasin",  "navajo",
    "navy",      "olive",      "orange",     "orchid",    "pale",      "papaya",     "peach",     "peru",
    "pink",      "plum",       "powder",     "puff",      "purple",    "red",        "rose",      "rosy",
    "royal",     "saddle",     "salmon",     "sandy",     "seashell",  "sienna",     "sky",       "slate",
    "smoke",     "snow",       "spring",     "steel",     "tan",       "thistle",    "tomato",    "turquoise",
    "violet",    "wheat",      "white",      "yellow"};

const std::vector<std::string>& english_words() {
  static const std::vector<std::string> words = [] {
    const char* env = std::getenv("VAREX_WORD_LIST");
    const std::string path = env && *env ? env : "/usr/share/dict/words";
    std::ifstream in(path);
    if (!in) {
      throw UsageError("the titles dataset needs the word list " + path +
                       " (Debian's wamerican, or set VAREX_WORD_LIST to another list)");
    }
    std::vector<std::string> out;
    for (std::string w; std::getline(in, w);) {
      if (!w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
        out.push_back(w);
      }
    }
    if (out.size() < 1000) throw UsageError("the word list " + path + " has too few lower-case words");
    return out;
  }();
  return words;
}

// One generated string of the dataset, never containing `avoid`. A title starts with `lead` (a planted
// prefix), which counts towards its length.
std::string generate_one(const std::string& dataset, RowRandom& r, const std::string& avoid,
                         const std::string& lead = "") {
  for (;;) {
    std::string s;
    if (dataset == "ptype") {
      s = kTypeSyllable1[r.below(6)] + " " + kTypeSyllable2[r.below(5)] + " " + kTypeSyllable3[r.below(5)];
    } else if (dataset == "pname") {
      std::vector<std::size_t> chosen;
      while (chosen.size() < 5) {
        const std::size_t w = r.below(kColours.size());
        if (std::find(chosen.begin(), chosen.end(), w) == chosen.end()) chosen.push_back(w);
      }
      for (std::size_t w : chosen) s += (s.empty() ? "" : " ") + kColours[w];
    } else {
      // DBLP-like titles: 76 bytes on average, 20 to 250. Words are added while that brings the length
      // closer to the target, so that overshoot and shortfall cancel on average.
      const auto& words = english_words();
      const double gauss =
          std::sqrt(-2.0 * std::log(1.0 - r.uniform())) * std::cos(6.283185307179586 * r.uniform());
      const auto target = static_cast<std::size_t>(std::clamp(76.0 + 28.0 * gauss, 20.0, 250.0));
      s = lead;
      for (;;) {
        const std::string& w = words[r.below(words.size())];
        const std::size_t longer = s.size() + (s.empty() ? 0 : 1) + w.size();
        if (!s.empty() && longer > target && longer - target > target - std::min(target, s.size())) break;
        s += (s.empty() ? "" : " ") + w;
      }
    }
    if (avoid.empty() || s.find(avoid) == std::string::npos) return s;
  }
}

}  // namespace

std::string default_plant(const std::string& dataset) {
  if (dataset == "ptype") return "MEDIUM LASERED TIN";
  if (dataset == "pname") return "cerulean vermilion";
  if (dataset == "titles") return "a quasiperiodic tiling of the plane";
  throw UsageError("unknown string dataset '" + dataset + "' (datasets: ptype, pname, titles)");
}

StringColumn generate_strings(const StringWorkload& w) {
  default_plant(w.dataset);  // validates the name
  if (w.dataset == "titles") english_words();
  const std::uint64_t planted =
      static_cast<std::uint64_t>(std::llround(w.selectivity * static_cast<double>(w.rows)));
  // Row i is planted when its place in an affine permutation of the rows is below `planted`.
  std::uint64_t a = (splitmix64(w.seed + 3) | 1) % std::max<std::uint64_t>(w.rows, 1);
  while (w.rows > 1 && std::gcd(a, w.rows) != 1) a = (a + 1) % w.rows;
  const std::uint64_t b = w.rows ? splitmix64(w.seed + 5) % w.rows : 0;

  constexpr std::uint64_t kChunk = 1 << 16;
  const std::uint64_t chunks = (w.rows + kChunk - 1) / kChunk;
  std::vector<std::string> chunk_bytes(chunks);
  std::vector<std::vector<std::int32_t>> chunk_lengths(chunks);
  parallel_rows(chunks, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t c = first; c < last; ++c) {
      for (std::uint64_t row = c * kChunk; row < std::min(w.rows, (c + 1) * kChunk); ++row) {
        RowRandom r(w.seed, row, kStringRowStride);
        const bool plant = (static_cast<unsigned __int128>(row) * a + b) % w.rows < planted;
        std::string s;
        if (!plant)
          s = generate_one(w.dataset, r, w.plant);
        else if (w.mode == Plant::Whole)
          s = w.plant;
        else if (w.dataset == "titles")
          s = generate_one(w.dataset, r, "", w.plant);
        else
          s = w.plant + " " + generate_one(w.dataset, r, "");
        chunk_bytes[c] += s;
        chunk_lengths[c].push_back(static_cast<std::int32_t>(s.size()));
      }
    }
  });
  StringColumn column;
  std::uint64_t total = 0;
  for (const auto& c : chunk_bytes) total += c.size();
  if (total > kMaxBytes) {
    throw UsageError("input too large: " + std::to_string(total) +
                     " string bytes, more than int32 offsets address");
  }
  column.bytes.reserve(total);
  column.offsets.reserve(w.rows + 1);
  for (std::uint64_t c = 0; c < chunks; ++c) {
    column.bytes += chunk_bytes[c];
    for (std::int32_t len : chunk_lengths[c]) column.offsets.push_back(column.offsets.back() + len);
    std::string().swap(chunk_bytes[c]);
  }
  return column;
}

StringColumn load_string_column(const std::string& path) {
  // Offsets are int32: at most 2^31 - 1 bytes of strings.
  return parse_string_column(read_input_file(path, kMaxBytes));
}

StringColumn parse_string_column(const std::string& text) {
  if (text.size() > kMaxBytes) throw UsageError("input too large: more than 2^31 - 1 bytes of strings");
  StringColumn column;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    std::size_t stop = end;
    if (!last && stop > pos && text[stop - 1] == '\r') --stop;
    column.bytes.append(text, pos, stop - pos);
    column.offsets.push_back(static_cast<std::int32_t>(column.bytes.size()));
    pos = end + 1;
  }
  return column;
}

}  // namespace varex::datasets
