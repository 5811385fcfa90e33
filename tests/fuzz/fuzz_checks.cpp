#include "tests/fuzz/fuzz_checks.hpp"

#include <re2/re2.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/errors.hpp"
#include "datasets/int_columns.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/plan/plan_file.hpp"
#include "operators/strings/byte_regex.hpp"
#include "operators/strings/regex/automaton.hpp"
#include "operators/strings/regex/like_segments.hpp"
#include "operators/strings/regex/pattern.hpp"
#include "operators/strings/string_columns.hpp"
#include "operators/user/declaration.hpp"

namespace varex::fuzz {

namespace {

[[noreturn]] void fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "fuzz: %s\n  input (%zu bytes): ", what.c_str(), input.size());
  for (unsigned char c : input) std::fprintf(stderr, "\\x%02x", c);
  std::fprintf(stderr, "\n");
  std::abort();
}

// Strings to run an automaton over: the empty one, the input itself and pieces of it.
std::vector<std::string> probes(std::string_view input) {
  std::vector<std::string> out{"", std::string(input), "abc", "\n"};
  for (std::size_t i = 0; i < input.size() && out.size() < 8; i += 3) out.emplace_back(input.substr(i, 5));
  return out;
}

// Lower bounds than the operators' (see regex::Limits): a refused pattern costs microseconds, not the
// 0.1–0.8 s of a subset construction near 16,384 NFA states the fuzzer otherwise steers to.
constexpr regex::Limits kLimits{256, 1024};

void check_automaton(const regex::Automaton& a, std::string_view input) {
  if (a.states == 0 || a.states > kLimits.states)
    fail("automaton of " + std::to_string(a.states) + " states", input);
  if (a.byte_class.size() != 256 || a.next.size() != std::size_t{a.states} * a.classes ||
      a.flags.size() != a.states)
    fail("automaton tables of the wrong size", input);
  for (std::uint32_t n : a.next) {
    if (n >= a.states) fail("transition to a state that does not exist", input);
  }
  a.flat_image();
  a.table_image();
}

}  // namespace

void patterns(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // As a regular expression, checked against RE2 (the reference of the regex operator) wherever both
  // accept it: a disagreement would be a wrong result that verification blames on the device.
  try {
    const regex::Automaton a = regex::compile(regex::parse_regex(input), kLimits);
    check_automaton(a, input);
    const operators::ByteRegex re(input);
    if (re.ok()) {
      for (const std::string& s : probes(input)) {
        const bool ours = a.matches(s);
        const bool theirs = re.search(s);
        if (ours != theirs) fail("the automaton and RE2 disagree on \"" + s + "\"", input);
      }
    }
  } catch (const UsageError&) {
  }
  // As a LIKE pattern; its translation to a regular expression must parse too, and DogQC's segments
  // (the other algorithm of str_like) must match what its automaton matches.
  try {
    const regex::LikeSegments segments = regex::like_segments(input);
    const regex::Automaton a = regex::compile(regex::parse_like(input), kLimits);
    check_automaton(a, input);
    regex::parse_regex(regex::like_to_regex(input));
    for (const std::string& s : probes(input)) {
      if (segments.matches(s) != a.matches(s))
        fail("LIKE's segments and automaton disagree on \"" + s + "\"", input);
    }
    if (segments.image().size() != regex::kSegHeader + segments.tokens.size() + segments.segments() + 1)
      fail("a segments image of the wrong size", input);
  } catch (const UsageError&) {
  }
}

void loaders(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    datasets::parse_int32_column(bytes, "fuzz", false);
  } catch (const UsageError&) {
  }
  try {
    const auto column = datasets::parse_int32_column(bytes, "fuzz.bin", true);
    if (column.size() * 4 != bytes.size()) fail("a binary column of the wrong length", bytes);
  } catch (const UsageError&) {
  }
  try {
    datasets::parse_key_value_rows(bytes, "fuzz");
  } catch (const UsageError&) {
  }
  try {
    const datasets::Relation relation = datasets::parse_relation(bytes, "fuzz.csv");
    for (const auto& c : relation.columns) {
      if (c.size() != relation.rows()) fail("a relation's columns of different lengths", bytes);
    }
  } catch (const UsageError&) {
  }
  try {
    const datasets::AttributeTable table = datasets::parse_attribute_table(bytes, "fuzz.csv");
    for (const auto& c : table.columns) {
      if (c.size() != table.rows()) fail("a record file's attributes of different lengths", bytes);
    }
  } catch (const UsageError&) {
  }
  const datasets::StringColumn column = datasets::parse_string_column(bytes);
  if (column.offsets.empty() || column.offsets.front() != 0) fail("string offsets do not start at 0", bytes);
  for (std::size_t i = 1; i < column.offsets.size(); ++i) {
    if (column.offsets[i] < column.offsets[i - 1]) fail("string offsets go backwards", bytes);
  }
  if (static_cast<std::size_t>(column.offsets.back()) != column.bytes.size())
    fail("offsets past the bytes", bytes);
}

void plans(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::exception&) {
    return;  // not JSON, or a number no double holds: read_plan_file refuses it
  }
  try {
    const plan::Plan p = plan::parse_plan(doc, "fuzz.json");
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      for (const int in : {p.steps[i].input, p.steps[i].build}) {
        if (in >= static_cast<int>(i)) fail("a step reads a step after it", bytes);
      }
    }
    for (const int out : p.outputs) {
      if (out < 0 || out >= static_cast<int>(p.steps.size())) fail("an output past the steps", bytes);
    }
  } catch (const UsageError&) {
  }
}

void declarations(const std::uint8_t* data, std::size_t size) {
  using operators::user::Expression;
  static const std::filesystem::path dir = [] {
    const auto d =
        std::filesystem::temp_directory_path() / ("varex-fuzz-declarations-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    // The kernel file of the seed corpus's declarations (examples/user-operators/*/) and a short name.
    for (const char* name : {"k.cl", "reduce_sum.cl", "my_selection.cl", "my_hash_join.cl"})
      std::ofstream(d / name)
          << "#include \"common/portable.h\"\nKERNEL void k(GLOBAL int* out) { out[0] = 1; }\n";
    return d;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    Expression::parse(text, {"a", "b", "rows"})
        .evaluate({std::int64_t{3}, std::string("x"), std::int64_t{1000}});
  } catch (const UsageError&) {
  }
  try {
    // A contract like selection's, without linking the operators.
    static const operators::user::Contracts contracts{
        {"selection", {{"column", "bitmap"}, {"rows", "capacity", "lo", "hi", "negate"}, ""}}};
    const operators::user::Declaration d = operators::user::parse_declaration(text, dir, contracts);
    std::vector<variants::Value> values;
    for (const auto& t : d.tunables) values.push_back(t.default_value);
    for (std::size_t w = 0; w < d.workload_names.size(); ++w) values.push_back(std::int64_t{1000});
    if (values.size() != d.names().size()) fail("a value for every name", text);
    if (d.kernels.empty()) fail("a kernel", text);
    const std::vector<variants::Value> tunables(
        values.begin(), values.begin() + static_cast<std::ptrdiff_t>(d.tunables.size()));
    for (const auto& k : d.kernels) {
      for (const Expression* e : {&k.global, &k.local}) {
        try {
          e->evaluate(values);
        } catch (const UsageError&) {
        }
      }
    }
    for (const auto& b : d.scratch) {
      try {
        b.count.evaluate(values);
      } catch (const UsageError&) {
      }
    }
    for (const Expression& c : d.constraints) {
      try {
        c.truth(tunables);
      } catch (const UsageError&) {
      }
    }
  } catch (const UsageError&) {
  }
}

}  // namespace varex::fuzz
