// The string operators on the OpenCL CPU device: every operator x naive/refill x automaton layout on
// awkward data (empty strings, very long strings, all rows matching, none, bytes >= 128), generated
// regular expressions against RE2 through the device, the generators and loader, and the CPU baseline.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "base/errors.hpp"
#include "harness/measure.hpp"
#include "operators/strings/byte_regex.hpp"
#include "operators/strings/regex/pattern.hpp"
#include "operators/strings/string_baseline.hpp"
#include "operators/strings/string_columns.hpp"
#include "operators/strings/strings.hpp"
#include "string_variants.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

std::string write_lines(const std::string& name, const std::vector<std::string>& lines) {
  const std::string path = test::scratch_dir("strings-" + name) + "/column.txt";
  std::ofstream out(path, std::ios::binary);
  for (const auto& l : lines) out << l << "\n";
  return path;
}

datasets::WorkloadSpec file_workload(const StringOperator& op, const std::string& name,
                                     const std::vector<std::string>& lines, const std::string& operand) {
  WorkloadOptions o;
  o.flags["input"] = write_lines(name, lines);
  o.query[op.operand_key()] = operand;
  return op.workload(o);
}

Digest brute(StringOp op, const std::string& operand, const std::vector<std::string>& lines) {
  const ByteRegex re(op == StringOp::Regex ? operand : "x");
  Digest d;
  for (std::size_t r = 0; r < lines.size(); ++r) {
    const std::string& s = lines[r];
    bool m = false;
    if (op == StringOp::Equal) m = s == operand;
    if (op == StringOp::Prefix) m = s.rfind(operand, 0) == 0;
    if (op == StringOp::Like) m = like_matches(operand, s);
    if (op == StringOp::Regex) m = re.search(s);
    if (m) {
      ++d.rows;
      d.checksum += r;
    }
  }
  return d;
}

// Awkward rows: empty strings, a very long one, bytes >= 128, near-misses of the operand.
std::vector<std::string> awkward_rows(const std::string& hit, std::size_t rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  const std::string near = hit.substr(0, hit.size() / 2);
  for (std::size_t i = 0; i < rows; ++i) {
    switch (rng() % 8) {
      case 0:
        out.push_back("");
        break;
      case 1:
        out.push_back(hit);
        break;
      case 2:
        out.push_back(hit + " \xc3\xa9t\xe9 \xff");
        break;
      case 3:
        out.push_back(near);
        break;
      case 4:
        out.push_back(std::string(3000 + rng() % 2000, 'a') + hit);  // long, matching late (regex, like)
        break;
      default: {
        std::string s(rng() % 40, 'x');
        for (char& c : s) c = static_cast<char>(rng() % 2 ? 'a' + rng() % 26 : 128 + rng() % 128);
        out.push_back(s);
      }
    }
  }
  return out;
}

// Every variant of test::kStringVariants on `spec`, each checked in full.
void verify_shared_variants(const StringOperator& op, const datasets::WorkloadSpec& spec,
                            const Digest& want) {
  for (auto pins : test::kStringVariants) {
    if (op.op() != StringOp::Like && op.op() != StringOp::Regex) pins.erase("layout");
    test::verify_variants(op, spec, want, pins);
  }
}

TEST(StringsDevice, EveryOperatorKernelAndLayoutOnAwkwardRows) {
  for (const test::StringCase& c : test::kStringCases) {
    const StringOperator op(c.op);
    SCOPED_TRACE(op.name());
    const auto lines = awkward_rows("MEDIUM LASERED TIN", 1031, 5);
    const auto spec = file_workload(op, "awkward-" + op.name(), lines, c.operand);
    const Digest want = brute(c.op, c.operand, lines);
    ASSERT_GT(want.rows, 0u);
    verify_shared_variants(op, spec, want);
  }
}

TEST(StringsDevice, AllRowsMatchingAndNoneMatching) {
  for (const test::StringCase& c : test::kStringCases) {
    const StringOperator op(c.op);
    SCOPED_TRACE(op.name());
    const std::vector<std::string> all(777, "MEDIUM LASERED TIN");
    const std::vector<std::string> none(777, "SMALL BRUSHED BRASS \xfe");
    for (const auto& [name, lines] : {std::pair{"all", all}, {"none", none}}) {
      const Digest want = brute(c.op, c.operand, lines);
      EXPECT_EQ(want.rows, name == std::string("all") ? 777u : 0u);
      verify_shared_variants(op, file_workload(op, std::string(name) + op.name(), lines, c.operand), want);
    }
  }
}

TEST(StringsDevice, EmptyOperandsAndEmptyColumns) {
  const std::vector<std::string> lines{"", "a", "", "abc"};
  for (const test::StringCase& c :
       {test::StringCase{StringOp::Equal, ""}, test::StringCase{StringOp::Prefix, ""},
        test::StringCase{StringOp::Like, ""}, test::StringCase{StringOp::Regex, ""},
        test::StringCase{StringOp::Regex, "^$"}, test::StringCase{StringOp::Like, "%"}}) {
    const StringOperator op(c.op);
    SCOPED_TRACE(op.name() + " '" + c.operand + "'");
    verify_shared_variants(op, file_workload(op, "empty-operand", lines, c.operand),
                           brute(c.op, c.operand, lines));
  }
  const StringOperator regex(StringOp::Regex);
  verify_shared_variants(regex, file_workload(regex, "no-rows", {}, "a"), Digest{});
}

// DogQC's LIKE by segments on awkward patterns: empty, only %, %%, % at either end or both, _ at the ends,
// escapes, bytes >= 128, patterns longer than most rows; each against the plain host matcher and RE2 (the
// pattern translated), through the naive and the refill kernel with both loads.
TEST(StringsDevice, LikeBySegmentsOnAwkwardPatterns) {
  const StringOperator op(StringOp::Like);
  auto lines = awkward_rows("MEDIUM LASERED TIN", 613, 9);
  for (const char* extra :
       {"%", "%%", "_", "a_", "\\", "100%", "50% off", "caf\xc3\xa9", "\xc3", "TIN", "MEDIUM"})
    lines.emplace_back(extra);
  const std::vector<std::string> patterns{"",
                                          "%",
                                          "%%",
                                          "MEDIUM%",
                                          "%TIN",
                                          "%LASERED%",
                                          "MEDIUM%TIN",
                                          "%M%E%D%",
                                          "_",
                                          "_%",
                                          "%_",
                                          "__",
                                          "_EDIUM%TI_",
                                          "%\\%%",
                                          "100\\%",
                                          "%\\_",
                                          "%\xc3\xa9%",
                                          "%\xa9 \xff",
                                          "a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a",
                                          std::string(2000, '_') + "%"};
  for (const std::string& pattern : patterns) {
    SCOPED_TRACE("LIKE '" + pattern.substr(0, 40) + "'");
    const Digest want = brute(StringOp::Like, pattern, lines);
    const ByteRegex re2(regex::like_to_regex(pattern));
    ASSERT_TRUE(re2.ok());
    Digest by_re2;
    for (std::size_t r = 0; r < lines.size(); ++r) {
      if (re2.search(lines[r])) {
        ++by_re2.rows;
        by_re2.checksum += r;
      }
    }
    ASSERT_EQ(by_re2, want);
    const auto spec = file_workload(op, "segments", lines, pattern);
    for (auto pins : test::kStringVariants) {
      if (pins.at("layout") != "flat") continue;
      pins["algorithm"] = "segments";
      test::verify_variants(op, spec, want, pins);
    }
  }
}

TEST(StringsDevice, GeneratedRegularExpressionsAgreeWithRe2) {
  // Patterns over the bytes of generated p_name rows; each through both kernels and layouts.
  const StringOperator op(StringOp::Regex);
  WorkloadOptions o;
  o.flags["rows"] = std::to_string(3001);
  o.flags["strings"] = "pname";
  o.flags["selectivity"] = std::to_string(0.1);
  const auto base = op.workload(o);
  const auto column =
      datasets::generate_strings({"pname", 3001, 0.1, "cerulean vermilion", datasets::Plant::Prefix, 42});
  std::vector<std::string> lines;
  for (std::uint64_t r = 0; r < column.rows(); ++r) lines.emplace_back(column.at(r));
  for (const char* pattern : {"^cerulean", "(red|blue) (green|grey)", "o{2,}", "[^a-z ]", "n e",
                              "^[a-m]+ .*t$", "(ivory|lace)$", "(a|e)(b|c|d)[[:alpha:]]{3}", ".*"}) {
    SCOPED_TRACE(pattern);
    auto spec = base;
    spec.query = {{"pattern", pattern}};
    verify_shared_variants(op, spec, brute(StringOp::Regex, pattern, lines));
  }
}

TEST(StringsDevice, MeasurementCarriesTheCpuBaseline) {
  const StringOperator op(StringOp::Like);
  WorkloadOptions o;
  o.flags["rows"] = std::to_string(20000);
  o.flags["strings"] = "titles";
  o.flags["selectivity"] = std::to_string(0.05);
  const auto spec = op.workload(o);
  Engine& engine = test::cpu_engine();
  auto run = op.prepare(engine, spec);
  MeasureSettings settings;
  settings.min_reps = 2;
  settings.max_reps = 3;
  settings.baseline = true;
  const Measurement m =
      measure(engine, *run, op.space({engine.device(), spec.rows()}).defaults(), settings, 10.0);
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_EQ(m.result.rows, 1000u);  // exactly 5% planted
  ASSERT_TRUE(m.baseline.has_value());
  EXPECT_EQ(m.baseline->engine, "hyperscan");
  EXPECT_TRUE(m.baseline->verified);
  EXPECT_GT(m.baseline->ms, 0);
  const Measurement back = Measurement::from_json(m.to_json());
  ASSERT_TRUE(back.baseline.has_value());
  EXPECT_EQ(back.baseline->engine, "hyperscan");
}

TEST(StringColumns, GeneratorsKeepTheirPromises) {
  const auto ptype =
      datasets::generate_strings({"ptype", 5000, 0.2, "MEDIUM LASERED TIN", datasets::Plant::Whole, 3});
  std::set<std::string> values;
  std::size_t planted = 0;
  for (std::uint64_t r = 0; r < ptype.rows(); ++r) {
    const std::string s(ptype.at(r));
    if (s == "MEDIUM LASERED TIN") {
      ++planted;
      continue;
    }
    EXPECT_GE(s.size(), 16u);
    EXPECT_LE(s.size(), 25u);
    values.insert(s);
  }
  EXPECT_EQ(planted, 1000u);
  EXPECT_EQ(values.size(), 150u);  // every TPC-H type occurs in 4000 draws

  const auto pname = datasets::generate_strings({"pname", 2000, 0, "x", datasets::Plant::Whole, 4});
  std::set<std::string> colours;
  for (std::uint64_t r = 0; r < pname.rows(); ++r) {
    std::istringstream words{std::string(pname.at(r))};
    std::set<std::string> row;
    for (std::string w; words >> w;) row.insert(w), colours.insert(w);
    EXPECT_EQ(row.size(), 5u);
  }
  EXPECT_EQ(colours.size(), 92u);  // the TPC-H colour list

  const auto titles =
      datasets::generate_strings({"titles", 4000, 0.5, "a quasiperiodic tiling", datasets::Plant::Prefix, 5});
  double total = 0;
  std::size_t with_plant = 0;
  for (std::uint64_t r = 0; r < titles.rows(); ++r) {
    const std::string_view s = titles.at(r);
    total += static_cast<double>(s.size());
    if (s.find("a quasiperiodic tiling") != std::string_view::npos) {
      EXPECT_EQ(s.find("a quasiperiodic tiling"), 0u);
      ++with_plant;
    }
  }
  EXPECT_EQ(with_plant, 2000u);
  EXPECT_NEAR(total / 4000, 76.0, 2.0);  // planted rows too: the plant counts towards their length
}

TEST(StringColumns, TheLoaderKeepsBytesAndEmptyLines) {
  const std::string path = test::scratch_dir("strings-loader") + "/in.txt";
  std::ofstream(path, std::ios::binary) << "a\r\n\n\xff\xc3\xa9\nlast";
  const auto c = datasets::load_string_column(path);
  ASSERT_EQ(c.rows(), 4u);
  EXPECT_EQ(c.at(0), "a");
  EXPECT_EQ(c.at(1), "");
  EXPECT_EQ(c.at(2), "\xff\xc3\xa9");
  EXPECT_EQ(c.at(3), "last");
}

TEST(StringOperators, BadQueriesAreUsageErrors) {
  WorkloadOptions o;
  o.flags["rows"] = std::to_string(100);
  o.query["pattern"] = "a(b";
  EXPECT_THROW(StringOperator(StringOp::Regex).workload(o), UsageError);
  o.query["pattern"] = "ab\\";
  EXPECT_THROW(StringOperator(StringOp::Like).workload(o), UsageError);
  o.query = {{"value", "x"}};
  EXPECT_THROW(check_declared(StringOperator(StringOp::Regex), o), UsageError);  // wrong key
  o.query.clear();
  o.flags["strings"] = "novels";
  EXPECT_THROW(StringOperator(StringOp::Equal).workload(o), UsageError);
  o.flags.erase("strings");
  o.flags["zipf"] = std::to_string(1.0);
  EXPECT_THROW(check_declared(StringOperator(StringOp::Prefix), o), UsageError);
  WorkloadOptions f;
  f.flags["input"] = write_lines("no-query", {"a"});
  EXPECT_THROW(StringOperator(StringOp::Equal).workload(f), UsageError);  // a file needs the operand
}

TEST(StringOperators, TheQueryPlanCountsTheMinimalAutomaton) {
  WorkloadOptions o;
  o.flags["rows"] = std::to_string(100);
  const auto states = [&](const std::string& pattern) {
    o.query["pattern"] = pattern;
    const StringOperator regex(StringOp::Regex);
    return regex.query_plan(regex.workload(o)).at("automaton").at("states").get<int>();
  };
  EXPECT_EQ(states("^abc"), 5);  // start, a, ab, matched, dead
  EXPECT_EQ(states("abc"), 4);   // a search never dies: start, a, ab, matched
  EXPECT_EQ(states("a|b"), 2);   // start, matched
  // LIKE's plan names both algorithms' shapes: "%LASER_D%TIN" is two segments of 10 tokens, the last at the
  // end.
  o.query["pattern"] = "%LASER_D%TIN";
  const StringOperator like(StringOp::Like);
  const auto segments = like.query_plan(like.workload(o)).at("segments");
  EXPECT_EQ(segments.at("segments"), 2);
  EXPECT_EQ(segments.at("tokens"), 10);
  EXPECT_FALSE(segments.at("anchored_start").get<bool>());
  EXPECT_TRUE(segments.at("anchored_end").get<bool>());
  o.query.clear();
  const StringOperator equal(StringOp::Equal);
  const auto spec = equal.workload(o);
  EXPECT_TRUE(equal.query_plan(spec).empty());
  EXPECT_EQ(spec.params.at("version"), datasets::kStringGeneratorVersion);
}

}  // namespace
}  // namespace varex::operators
