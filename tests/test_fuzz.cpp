// The fuzz checks (tests/fuzz/fuzz_checks.hpp) driven by a bounded random generator, so that every CI run
// (under AddressSanitizer and UBSan in one of its two builds) fuzzes the pattern compiler and the input
// loaders for a few seconds; scripts/fuzz.sh runs the same checks under libFuzzer for millions of inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "operators/plan/plan.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

namespace varex {
namespace {

// Inputs built from the pieces patterns and files are made of, and mutations of them: random bytes alone
// rarely get past a parser's first check.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : random_(seed) {}

  std::string pattern() {
    static const std::vector<std::string> pieces{
        "a",           "b",    "ab",  ".",   "*",   "+",     "?",     "|",     "(",    ")",
        "[",           "]",    "^",   "$",   "{2}", "{1,3}", "{0,}",  "[a-z]", "[^x]", "[[:alpha:]]",
        "[[:digit:]]", "\\d",  "\\w", "\\s", "\\.", "\\x41", "%",     "_",     "\\%",  "\\",
        "\xff",        "\x80", "-",   ",",   "{",   "}",     "{300}", "\n"};
    std::string out;
    for (int n = pick(12); n > 0; --n) out += pieces[pick(pieces.size())];
    return mutate(out);
  }

  std::string file() {
    static const std::vector<std::string> pieces{
        "1",  "-7", "2147483647", "-2147483648", "2147483648", "+3",  ",",        " ",
        "\t", "\r", "\n",         "\n\n",        "x",          "1,2", "\xff\xfe", "0"};
    std::string out;
    for (int n = pick(24); n > 0; --n) out += pieces[pick(pieces.size())];
    return mutate(out);
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }
  std::string mutate(std::string s) {
    for (int n = static_cast<int>(pick(3)); n > 0 && !s.empty(); --n) {
      const std::size_t at = pick(s.size());
      switch (pick(3)) {
        case 0:
          s[at] = static_cast<char>(pick(256));
          break;
        case 1:
          s.erase(at, 1);
          break;
        default:
          s.insert(at, 1, static_cast<char>(pick(256)));
      }
    }
    return s;
  }
  std::mt19937_64 random_;
};

// Runs `check` (a fuzz target's body) on `count` inputs that `next` makes.
template <typename Next>
void feed(int count, Next next, void (*check)(const std::uint8_t*, std::size_t)) {
  for (int i = 0; i < count; ++i) {
    const std::string input = next();
    check(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  }
}

TEST(Fuzz, ThePatternCompilerAcceptsOrRefusesEveryInput) {
  Generator g(20261122);
  feed(
      20000, [&] { return g.pattern(); }, fuzz::patterns);
}

// What the libFuzzer runs found, kept as regression inputs (hex): the pattern compiler once read `\s` as
// isspace() does, vertical tab included, and disagreed with RE2 on these seven.
TEST(Fuzz, InputsTheFuzzerFoundStayFixed) {
  for (const char* hex :
       {"5c537c1003616e6b000b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b260000ff6700",
        "5b5d5e5b5e0b007eca5d5c73", "5b7a5c0b645c5c5d2e5c73", "5b5eea5c0b5b5eea5d5c73",
        "5b010000005effea0b5c5c5d5c73", "5bb35eff0b0000005d5c73",
        "5c535c537c3a0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0be2"}) {
    std::string bytes;
    for (const char* h = hex; h[0] && h[1]; h += 2)
      bytes += static_cast<char>(std::stoi(std::string(h, 2), nullptr, 16));
    fuzz::patterns(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());  // aborts on a failure
  }
  // A declaration with a number past a double's range: the JSON parser's out_of_range, not its parse_error,
  // escaped the reader (libFuzzer, 43,440 executions in).
  for (
      const std::string declaration :
      {R"({"name": "x", "tunables": [{"name": "a", "values": [32, 5555555555555555555555555555E55555555555564]}]})",
       R"({"name": "x", "tunables": [{"name": "a", "values": [18446744073709551615]}]})"})
    fuzz::declarations(reinterpret_cast<const std::uint8_t*>(declaration.data()), declaration.size());
}

// The shipped plans with parts of their JSON replaced, removed or swapped: values of other types, steps
// that refer to nothing or to each other, empty lists (the plan loader's structure, which bytes alone rarely
// reach).
class JsonMutator {
 public:
  // Mutations of `bases`, their values replaced by `values` among others.
  JsonMutator(std::uint64_t seed, std::vector<nlohmann::json> bases, std::vector<nlohmann::json> values)
      : random_(seed), bases_(std::move(bases)), values_(std::move(values)) {}

  std::string next() {
    nlohmann::json doc = bases_[pick(bases_.size())];
    for (int n = 1 + static_cast<int>(pick(4)); n > 0; --n) mutate(doc);
    return doc.dump();
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }

  nlohmann::json any_value() {
    if (pick(2) == 0) return values_[pick(values_.size())];
    static const std::vector<nlohmann::json> values{nullptr,
                                                    true,
                                                    0,
                                                    -1,
                                                    4294967296LL,
                                                    1.5,
                                                    "",
                                                    "lineitem",
                                                    "l_quantity",
                                                    "s1",
                                                    "<",
                                                    "between",
                                                    "sum",
                                                    nlohmann::json::array(),
                                                    nlohmann::json::object(),
                                                    nlohmann::json::array({"a", 1}),
                                                    nlohmann::json::array({"l_quantity", "<", 24}),
                                                    nlohmann::json::object({{"column", 3}})};
    return values[pick(values.size())];
  }

  // One change somewhere in the tree: a value replaced, a member or element removed, or an element copied.
  void mutate(nlohmann::json& node) {
    if ((!node.is_object() && !node.is_array()) || node.empty() || pick(4) == 0) {
      node = any_value();
      return;
    }
    const std::size_t at = pick(node.size());
    auto child = node.begin();
    std::advance(child, static_cast<std::ptrdiff_t>(at));
    switch (pick(6)) {
      case 0:
        if (node.is_object()) {
          node.erase(child.key());
        } else {
          node.erase(at);
        }
        return;
      case 1:
        if (node.is_array()) node.push_back(*child);
        return;
      default:
        mutate(*child);
    }
  }

  std::mt19937_64 random_;
  std::vector<nlohmann::json> bases_;
  std::vector<nlohmann::json> values_;
};

TEST(Fuzz, ThePlanLoaderAcceptsOrRefusesEveryInput) {
  std::vector<nlohmann::json> shipped;
  for (const std::string& name : operators::shipped_plans())
    shipped.push_back(operators::plan_document(name));
  JsonMutator g(20261126, shipped, {"l_shipdate", "project", "fuse"});
  feed(
      5000, [&] { return g.next(); }, fuzz::plans);
}

TEST(Fuzz, TheUserOperatorDeclarationReaderAcceptsOrRefusesEveryInput) {
  // Every example: an operator of its own workload, one with selection's contract and one with several
  // kernels and a scratch buffer (whose contract, hashjoin's, the fuzz target does not offer: a refusal to
  // reach too).
  std::vector<nlohmann::json> examples;
  for (const char* name : {"reduce_sum", "my_selection", "my_hash_join"}) {
    examples.push_back(nlohmann::json::parse(std::ifstream(
        std::string(VAREX_SOURCE_DIR) + "/examples/user-operators/" + name + "/operator.json")));
  }
  JsonMutator g(51, examples,
                {"rows",
                 "block * ept",
                 "1 / (block - 128)",
                 "2 ** 70",
                 "ceil_div(rows, 0)",
                 "k.cl",
                 "k",
                 "tree",
                 "compile",
                 "launch",
                 "int32",
                 "uint32",
                 "iota",
                 "selection",
                 "next_pow2(rows)",
                 "lo",
                 "bitmap",
                 nlohmann::json::array({"python3"}),
                 nlohmann::json::object({{"uniform", nlohmann::json::array({5, 1})}}),
                 nlohmann::json::object({{"block", nlohmann::json::array({1, 2})}}),
                 9223372036854775807LL});
  feed(
      5000, [&] { return g.next(); }, fuzz::declarations);
}

TEST(Fuzz, TheInputLoadersAcceptOrRefuseEveryInput) {
  Generator g(7);
  feed(
      20000, [&] { return g.file(); }, fuzz::loaders);
}

}  // namespace
}  // namespace varex
