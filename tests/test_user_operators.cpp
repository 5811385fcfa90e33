// User operators (docs/USER-OPERATORS.md): the expression language of declarations, a declaration's
// mistakes refused in one line with exit status 2, and examples/user-operators/reduce_sum loaded with
// --op-dir and VAREX_OP_PATH, listed, run, swept and tuned on PoCL with every variant verified against its
// reference command; a kernel that adds wrongly is never best.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/command.hpp"
#include "base/errors.hpp"
#include "operators/user/expression.hpp"
#include "support.hpp"

namespace varex::operators::user {
namespace {

namespace fs = std::filesystem;

std::int64_t eval(const std::string& text, const std::vector<std::string>& names = {},
                  const std::vector<Value>& values = {}) {
  return Expression::parse(text, names).integer(values);
}

std::string parse_error(const std::string& text, const std::vector<std::string>& names = {}) {
  try {
    Expression::parse(text, names);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string eval_error(const std::string& text) {
  try {
    eval(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(UserExpressions, CPrecedenceAndPythonSpellings) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("7 / 2 + 7 % 2"), 4);
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("2 ** 3 ** 2"), 512);
  EXPECT_EQ(eval("-2 ** 2"), -4);
  EXPECT_EQ(eval("(-1) ** 3"), -1);
  EXPECT_EQ(eval("1 < 2 && 2 < 1 || 3 == 3"), 1);
  EXPECT_EQ(eval("1 < 2 and not 2 < 1"), 1);
  EXPECT_EQ(eval("0 ? 5 : 1 ? 6 : 7"), 6);
  EXPECT_EQ(eval("min(3, max(1, 2)) + ceil_div(10, 4) + round_up(10, 4) + log2(1024) + abs(-3)"),
            2 + 3 + 12 + 10 + 3);
  EXPECT_EQ(eval("True + true + False"), 2);
  EXPECT_EQ(eval("next_pow2(0) + next_pow2(1) + next_pow2(5) + next_pow2(64)"), 1 + 1 + 8 + 64);
}

TEST(UserExpressions, NamesAndStrings) {
  const std::vector<std::string> names{"block", "method"};
  EXPECT_EQ(eval("block * 2", names, {std::int64_t{64}, std::string("tree")}), 128);
  EXPECT_EQ(eval("method == \"tree\"", names, {std::int64_t{64}, std::string("tree")}), 1);
  EXPECT_EQ(eval("method != 'tree'", names, {std::int64_t{64}, std::string("tree")}), 0);
  EXPECT_TRUE(Expression::parse("block", names).reads(0));
  EXPECT_FALSE(Expression::parse("block", names).reads(1));
  EXPECT_THROW(eval("method + 1", names, {std::int64_t{1}, std::string("x")}), UsageError);
}

TEST(UserExpressions, MistakesNameWhatAndWhere) {
  EXPECT_EQ(parse_error("block * 2", {"ept"}), "expression 'block * 2': unknown name 'block' at column 1");
  EXPECT_EQ(parse_error("1 +"), "expression '1 +': unexpected end at column 4");
  EXPECT_EQ(parse_error("(1"), "expression '(1': expected ')' at column 3");
  EXPECT_EQ(parse_error("1 2"), "expression '1 2': unexpected '2' at column 3");
  EXPECT_EQ(parse_error("sqrt(4)"), "expression 'sqrt(4)': unknown function 'sqrt' at column 1");
  EXPECT_EQ(parse_error("min(1)"), "expression 'min(1)': min takes 2 arguments at column 1");
  EXPECT_EQ(parse_error("'abc"), "expression ''abc': unterminated string at column 1");
  EXPECT_EQ(parse_error("99999999999999999999"),
            "expression '99999999999999999999': number out of range at column 1");
  EXPECT_NE(parse_error(std::string(5000, '(') + "1" + std::string(5000, ')')).find("nested too deeply"),
            std::string::npos);
  EXPECT_EQ(eval_error("1 / 0"), "expression '1 / 0': division by zero");
  EXPECT_EQ(eval_error("2 ** 64"), "expression '2 ** 64': overflow");
  EXPECT_EQ(eval_error("9223372036854775807 + 1"), "expression '9223372036854775807 + 1': overflow");
  EXPECT_EQ(eval_error("'a' < 1"), "expression ''a' < 1': '<' of a string and an integer");
}

// Random texts over the language's characters: each parses or is refused with a UsageError, and what parses
// evaluates to a value or a UsageError (never a crash; the sanitizers watch).
TEST(UserExpressions, RandomTextsParseOrAreRefused) {
  // Tokens of the language and a few that are not, joined with and without spaces.
  const std::vector<std::string> tokens{"a", "b",  "tx", "0", "3",    "64",    "+",   "-",  "*",   "/",
                                        "%", "**", "(",  ")", "<",    "==",    "&&",  "||", "and", "not",
                                        "!", "?",  ":",  ",", "min(", "log2(", "'x'", "\"", "@",   " "};
  std::uint64_t state = 7;
  int parsed = 0, evaluated = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int length = 1 + static_cast<int>((state >> 40) % 7);
    for (int c = 0; c < length; ++c) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      text += tokens[(state >> 33) % tokens.size()];
      if ((state >> 20) % 2) text += ' ';
    }
    try {
      const Expression e = Expression::parse(text, {"a", "b", "tx"});
      ++parsed;
      try {
        e.evaluate({std::int64_t{3}, std::int64_t{-5}, std::string("x")});
        ++evaluated;
      } catch (const UsageError&) {
      }
    } catch (const UsageError&) {
    }
  }
  EXPECT_GT(parsed, 500);  // the generator reaches the evaluator…
  EXPECT_GT(evaluated, 250);
}

// A copy of an example in a scratch directory, with its operator.json changed by `edit`.
fs::path example_copy(
    const std::string& name, const std::function<void(nlohmann::json&)>& edit = [](nlohmann::json&) {},
    const std::string& example = "reduce_sum") {
  const fs::path dir = test::scratch_dir("user-op-" + name);
  fs::remove_all(dir);
  fs::copy(fs::path(VAREX_SOURCE_DIR) / "examples/user-operators" / example, dir);
  nlohmann::json doc = nlohmann::json::parse(test::slurp((dir / "operator.json").string()));
  edit(doc);
  std::ofstream((dir / "operator.json").string()) << doc.dump(2);
  return dir;
}

// `varex ops` with the operator's directory: exit status 2 and one line naming the mistake.
void expect_refused(const fs::path& dir, const std::string& says) {
  const auto r = test::run_varex({"ops", "--op-dir", dir.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(UserOperators, BadDeclarationsAreRefusedInOneLine) {
  expect_refused(test::scratch_dir("user-op-none-such") + "/missing", "not a directory");
  const fs::path empty = test::scratch_dir("user-op-empty");
  fs::create_directories(empty);
  expect_refused(empty, "no operator.json");
  expect_refused(example_copy("unknown-name", [](auto& d) { d["constraints"].push_back("blocks < 8"); }),
                 "'constraints': expression 'blocks < 8': unknown name 'blocks' at column 1");
  expect_refused(example_copy("bad-expression", [](auto& d) { d["kernel"]["global"] = "rows *"; }),
                 "'kernel.global': expression 'rows *': unexpected end");
  expect_refused(example_copy("no-args", [](auto& d) { d["kernel"].erase("args"); }),
                 "'kernel.args' is an array");
  expect_refused(example_copy("foreign-default", [](auto& d) { d["tunables"][0]["default"] = 3; }),
                 "'tunables.block.default' is not one of its values");
  expect_refused(example_copy("no-kernel-file", [](auto& d) { d["kernel"]["file"] = "gone.cl"; }),
                 "'source': cannot read");
  expect_refused(example_copy("twice",
                              [](auto& d) {
                                d["parameters"] = {{{"name", "block"}, {"default", 1}}};
                              }),
                 "'block' is declared twice");
  expect_refused(example_copy("builtin", [](auto& d) { d["name"] = "selection"; }),
                 "'selection' is an operator already");
  expect_refused(
      example_copy("no-contract", [](auto& d) { d["contract"] = "sort"; }),
      "'contract': no built-in operator 'sort' offers one (those that do: groupby, hashjoin, selection)");
  expect_refused(example_copy("contract-inputs", [](auto& d) { d["contract"] = "selection"; }),
                 "'inputs': an operator with a contract has selection's");
  expect_refused(example_copy(
                     "base-tunable",
                     [](auto& d) {
                       d["tunables"].push_back({{"name", "vec"}, {"values", {1}}});
                     },
                     "my_selection"),
                 "'tunables.vec': selection has a tunable of that name");
  expect_refused(example_copy(
                     "contract-name", [](auto& d) { d["tunables"][0]["name"] = "lo"; }, "my_selection"),
                 "'lo' is declared twice (or is a name of the workload: rows, capacity, lo, hi, negate)");
  expect_refused(
      example_copy(
          "unknown-buffer", [](auto& d) { d["kernels"][0]["args"][1] = "tables"; }, "my_hash_join"),
      "'kernels.build_table.args[]': expression 'tables': unknown name 'tables'");
  expect_refused(example_copy(
                     "two-files", [](auto& d) { d["kernels"][1]["file"] = "other.cl"; }, "my_hash_join"),
                 "'kernels.probe_table.file': every kernel comes from one file, 'my_hash_join.cl'");
  const fs::path include = example_copy("include");
  std::ofstream((include / "reduce_sum.cl").string(), std::ios::app) << "#include \"mine.h\"\n";
  expect_refused(include, "kernel include \"mine.h\" was not embedded");
}

TEST(UserOperators, AReferenceOfTheWrongSizeOrAFailingOneIsRefused) {
  const fs::path dir = example_copy("short-reference");
  const std::string db = test::scratch_dir("user-op-reference-db") + ".db";
  std::ofstream((dir / "reference.py").string())
      << "import sys\nopen(sys.argv[sys.argv.index('--sum') + 1], 'wb').write(b'12')\n";
  auto r = test::run_varex({"run", "--op-dir", dir.string(), "--op", "reduce_sum", "--rows", "100",
                            "--device", "ocl:0:0", "--db", db});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("wrote 2 bytes of 'sum', expected 4 (1 elements of 4 bytes)"), std::string::npos)
      << r.err;
  std::ofstream((dir / "reference.py").string()) << "import sys\nsys.exit('no sums today')\n";
  r = test::run_varex({"run", "--op-dir", dir.string(), "--op", "reduce_sum", "--rows", "100", "--device",
                       "ocl:0:0", "--db", db});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("failed (status 1): no sums today"), std::string::npos) << r.err;
}

// A kernel that does not compile where a session starts (its default variant): one line naming the user's
// file and the line of the mistake (not a line of the text with varex's headers inlined), exit status 2, and
// nothing recorded. Where only other variants do not compile, each is a compile error naming that line too,
// and the session goes on.
TEST(UserOperators, ACompileErrorNamesTheUsersFileAndLine) {
  const auto broken = [](const std::string& name, const std::string& right, const std::string& wrong) {
    const fs::path dir = example_copy(name);
    std::string kernel = test::slurp((dir / "reduce_sum.cl").string());
    EXPECT_NE(kernel.find(right), std::string::npos);
    const auto line = 1 + std::count(kernel.begin(),
                                     kernel.begin() + static_cast<std::ptrdiff_t>(kernel.find(right)), '\n');
    kernel.replace(kernel.find(right), right.size(), wrong);
    std::ofstream((dir / "reduce_sum.cl").string()) << kernel;
    return std::pair{dir, "reduce_sum.cl:" + std::to_string(line) + ":"};
  };
  const auto [dir, where] = broken("compile-error", "own += (uint)values[i];", "own += (uint)values[i] +;");
  const std::string db = test::scratch_dir("user-op-compile-db") + ".db";
  for (const std::string command : {"run", "tune"}) {
    std::vector<std::string> args{command,    "--op-dir", dir.string(), "--op", "reduce_sum", "--rows", "100",
                                  "--device", "ocl:0:0",  "--db",       db};
    if (command == "tune") args.insert(args.end(), {"--budget", "5s"});
    const auto r = test::run_varex(args);
    EXPECT_EQ(r.status, 2) << r.err;
    // The compiler may print its own count of errors on stderr; varex says one line.
    const auto said = r.err.find("varex: reduce_sum's kernel does not compile on ocl:0:0: ");
    ASSERT_NE(said, std::string::npos) << r.err;
    EXPECT_NE(r.err.find(where, said), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n', said), r.err.size() - 1) << r.err;
  }
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(*) FROM sessions"), 0);

  // Only the atomic method's code is broken: the tree variant verifies, the atomic one fails to compile.
  const auto [atomic_dir, atomic_where] = broken("compile-error-atomic", "if (own) atomic_add_u32(sum, own);",
                                                 "if (own) atomic_add_u32(sum own);");
  const std::string atomic_db = test::scratch_dir("user-op-compile-atomic-db") + ".db";
  const auto r = test::run_varex({"sweep",   "--op-dir", atomic_dir.string(), "--op",    "reduce_sum",
                                  "--rows",  "100",      "--device",          "ocl:0:0", "--db",
                                  atomic_db, "--set",    "block=64",          "--set",   "ept=16",
                                  "--set",   "groups=0", "--max-reps",        "1",       "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(
      test::count_where(atomic_db, "SELECT COUNT(DISTINCT variant_id) FROM measurements WHERE status = 'ok'"),
      1);
  EXPECT_EQ(test::count_where(atomic_db,
                              "SELECT COUNT(*) FROM measurements WHERE status = 'compile_error' "
                              "AND error LIKE '%" +
                                  atomic_where + "%'"),
            1);
}

// A copy of an example whose reference is a shared library, built from its reference.c as its comment says.
fs::path with_reference_library(const fs::path& dir) {
  const auto r = run_command({"cc", "-O2", "-shared", "-fPIC", (dir / "reference.c").string(), "-o",
                              (dir / "reference.so").string()});
  EXPECT_TRUE(r.ok()) << r.first_line();
  return dir;
}

// The stencil of floats: every variant of a sub-space that holds both ways of reading (local memory or not),
// the narrowest and the widest tile, at sizes no tile divides, verified against a C function of a shared
// library within the output's tolerance; a copy whose local-memory path scales the neighbours wrongly is a
// wrong result there and never best.
TEST(UserOperators, AStencilOfFloatsVerifiesAgainstALibraryFunction) {
  const fs::path dir = with_reference_library(example_copy(
      "diffusion", [](auto&) {}, "diffusion"));
  const std::vector<std::string> pins{"--set",      "block_x=16,128", "--set", "block_y=1,16", "--set",
                                      "tile_y=1,4", "--min-reps",     "1",     "--max-reps",   "1",
                                      "--quiet"};
  const std::string db = test::scratch_dir("user-op-diffusion-db") + ".db";
  for (const auto& [rows, width] : {std::pair{"37", "45"}, std::pair{"1", "3"}}) {
    std::vector<std::string> args{"sweep",   "--op-dir", dir.string(), "--op",    "diffusion", "--rows", rows,
                                  "--width", width,      "--device",   "ocl:0:0", "--db",      db};
    args.insert(args.end(), pins.begin(), pins.end());
    const auto r = test::run_varex(args);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // (16, 16) and (128, 1) of the four tiles are valid: 2 tiles x 2 tile_y x 2 ways, at each size.
  EXPECT_EQ(test::count_where(db,
                              "SELECT COUNT(*) FROM (SELECT DISTINCT variant_id, workload_id FROM "
                              "measurements WHERE status = 'ok')"),
            2 * 8);
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE status != 'ok'"), 0);

  const fs::path wrong = with_reference_library(example_copy(
      "diffusion-wrong", [](auto&) {}, "diffusion"));
  std::string kernel = test::slurp((wrong / "diffusion.cl").string());
  const std::string right = "tile[r][lx] + tile[r][lx + 2];";
  ASSERT_NE(kernel.find(right), std::string::npos);
  kernel.replace(kernel.find(right), right.size(), "tile[r][lx] + 1.001f * tile[r][lx + 2];");
  std::ofstream((wrong / "diffusion.cl").string()) << kernel;
  const std::string wrong_db = test::scratch_dir("user-op-diffusion-wrong-db") + ".db";
  std::vector<std::string> args{"tune",    "--op-dir", wrong.string(), "--op",     "diffusion",
                                "--rows",  "40",       "--width",      "40",       "--device",
                                "ocl:0:0", "--db",     wrong_db,       "--budget", "100%"};
  args.insert(args.end(), pins.begin(), pins.end());
  auto r = test::run_varex(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::count_where(wrong_db,
                              "SELECT COUNT(*) FROM measurements WHERE status = 'wrong_result' AND "
                              "error LIKE '%output ''next'' element %where the reference has%'"),
            4);
  r = test::run_varex({"best", "--op-dir", wrong.string(), "--db", wrong_db, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at(0).at("params").at("use_local"), 0) << r.out;
}

// CUDA C++ runs on CUDA devices only: on an OpenCL device the command says so in one line.
TEST(UserOperators, ACudaKernelIsRefusedOnAnOpenCLDeviceInOneLine) {
  const fs::path dir = example_copy(
      "sum-cuda", [](auto&) {}, "sum_cuda");
  const auto r =
      test::run_varex({"sweep", "--op-dir", dir.string(), "--op", "sum_cuda", "--rows", "100", "--device",
                       "ocl:0:0", "--db", test::scratch_dir("user-op-cuda-db") + ".db"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err,
            "varex: sum_cuda's kernels are CUDA C++ (sum.cu): they run on CUDA devices only, not ocl:0:0\n");
}

// An operator with two outputs, its input read from a file (its rows are the file's), and a reference of
// its own in a shared library: both outputs verified; a file that holds part of a word is refused.
TEST(UserOperators, TwoOutputsAndAnInputFromAFile) {
  const fs::path dir = test::scratch_dir("user-op-minmax");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream((dir / "minmax.cl").string()) << R"(#include "common/portable.h"
KERNEL void minmax(CONSTANT_PTR int* RESTRICT v, GLOBAL int* RESTRICT lo, GLOBAL int* RESTRICT hi, uint n) {
  int a = 2147483647, b = -2147483647 - 1;
  for (uint i = gid(); i < n; i += gsize()) { a = min(a, v[i]); b = max(b, v[i]); }
  atomic_min_i32(lo, a);
  atomic_max_i32(hi, b);
}
)";
  std::ofstream((dir / "reference.c").string()) << R"(#include <stdint.h>
int minmax_reference(const int32_t* v, int32_t* lo, int32_t* hi, int64_t n) {
  for (int64_t i = 0; i < n; ++i) { if (v[i] < *lo) *lo = v[i]; if (v[i] > *hi) *hi = v[i]; }
  return 0;
}
)";
  std::ofstream((dir / "operator.json").string()) << R"({
  "name": "minmax",
  "tunables": [{"name": "block", "values": [32, 64], "kind": "launch"}],
  "inputs": [{"name": "v", "type": "int32"}],
  "outputs": [{"name": "lo", "type": "int32", "count": "1", "clear": 2147483647},
              {"name": "hi", "type": "int32", "count": "1", "clear": -2147483648}],
  "kernel": {"file": "minmax.cl", "name": "minmax", "global": "4 * block", "local": "block",
             "args": ["v", "lo", "hi", "rows"]},
  "reference": {"library": "reference.so", "function": "minmax_reference", "args": ["v", "lo", "hi", "rows"]}
})";
  with_reference_library(dir);
  const std::vector<std::int32_t> values{5, -7, 1000, 3, -7, 42, 999};
  const std::string file = (dir / "values.bin").string();
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
  const std::string db = test::scratch_dir("user-op-minmax-db") + ".db";
  auto r = test::run_varex({"sweep", "--op-dir", dir.string(), "--op", "minmax", "--input", "v=" + file,
                            "--device", "ocl:0:0", "--db", db, "--max-reps", "1", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::count_where(db,
                              "SELECT COUNT(*) FROM (SELECT DISTINCT variant_id FROM measurements WHERE "
                              "status = 'ok')"),
            2);
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(*) FROM workloads WHERE generator = 'files' AND rows = 7"),
            1);
  std::ofstream(file, std::ios::binary | std::ios::app).write("x", 1);
  r = test::run_varex({"run", "--op-dir", dir.string(), "--op", "minmax", "--input", file, "--device",
                       "ocl:0:0", "--db", db});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("holds 29 bytes, not a whole number of 32-bit words"), std::string::npos) << r.err;
}

// An argument that cannot be computed for one variant (a division by zero) fails that variant alone.
TEST(UserOperators, AVariantWhoseArgumentCannotBeComputedFailsAlone) {
  const fs::path dir = example_copy("division", [](auto& d) {
    d["kernel"]["args"][2] = {{"value", "rows + 0 * (100 / (block - 64))"}, {"type", "uint"}};
  });
  const std::string db = test::scratch_dir("user-op-division-db") + ".db";
  const auto r = test::run_varex(
      {"sweep",      "--op-dir", dir.string(),  "--op",  "reduce_sum", "--rows",       "100",
       "--device",   "ocl:0:0",  "--db",        db,      "--set",      "block=64,128", "--set",
       "ept=16",     "--set",    "method=tree", "--set", "groups=0",   "--min-reps",   "1",
       "--max-reps", "1",        "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(
      test::count_where(db,
                        "SELECT COUNT(*) FROM measurements WHERE status = 'launch_error' AND error LIKE "
                        "'%division by zero%'"),
      1);
  EXPECT_GE(test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE status = 'ok'"), 1);
}

TEST(UserOperators, TheExampleIsListedAndEveryVariantOfASweepVerifies) {
  const std::string dir = (fs::path(VAREX_SOURCE_DIR) / "examples/user-operators").string();
  auto r = test::run_varex({"ops", "--op-dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("reduce_sum"), std::string::npos);
  const std::string db = test::scratch_dir("user-op-sweep") + ".db";
  fs::remove(db);
  // Odd sizes: fewer rows than a work-group, and rows that fill no tile exactly; every variant of a sub-space
  // that holds both methods, the smallest and the largest block and every grid.
  for (const std::string rows : {"3", "10007"}) {
    r = test::run_varex({"sweep", "--op-dir=" + dir, "--op", "reduce_sum", "--rows", rows, "--device",
                         "ocl:0:0", "--db", db, "--set", "ept=16", "--set", "block=64,512", "--min-reps", "1",
                         "--max-reps", "2", "--quiet"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // 2 blocks x 4 grids x 2 methods per size, every one verified.
  EXPECT_EQ(test::count_where(db,
                              "SELECT COUNT(*) FROM (SELECT DISTINCT variant_id, workload_id FROM "
                              "measurements WHERE status = 'ok')"),
            2 * 2 * 4 * 2);
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE status != 'ok'"), 0);
}

TEST(UserOperators, AKernelThatAddsWronglyIsNeverBest) {
  // Under the atomic method a work-item adds only its first row: wrong wherever EPT > 1, faster too.
  const fs::path dir = example_copy("wrong");
  std::string kernel = test::slurp((dir / "reduce_sum.cl").string());
  const std::string right = "if (own) atomic_add_u32(sum, own);";
  ASSERT_NE(kernel.find(right), std::string::npos);
  kernel.replace(kernel.find(right), right.size(), "if (own) atomic_add_u32(sum, ept > 1 ? 1u : own);");
  std::ofstream((dir / "reduce_sum.cl").string()) << kernel;
  const std::string db = test::scratch_dir("user-op-wrong-db") + ".db";
  fs::remove(db);
  auto r =
      test::run_varex({"tune",     "--op-dir", dir.string(), "--op",     "reduce_sum", "--rows",   "5000",
                       "--device", "ocl:0:0",  "--db",       db,         "--set",      "block=64", "--set",
                       "ept=1,4",  "--set",    "groups=0",   "--budget", "100%",       "--quiet",  "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE status = 'wrong_result'"), 0);
  r = test::run_varex({"best", "--op-dir", dir.string(), "--db", db, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out).at(0).at("params");
  EXPECT_TRUE(best.at("method") == "tree" || best.at("ept") == 1) << best.dump();
}

// A user's selection with selection's contract: its variants and varex's in one sweep, on selection's
// workload, each verified by selection's reference; the report's measurements hold both.
TEST(UserOperators, ASelectionWithSelectionsContractIsSweptBesideVarexsVariants) {
  const std::string dir = (fs::path(VAREX_SOURCE_DIR) / "examples/user-operators").string();
  const std::string db = test::scratch_dir("user-op-contract-selection") + ".db";
  fs::remove(db);
  // Odd sizes: fewer rows than a bitmap word, and rows that fill no work-group's words exactly.
  for (const std::string rows : {"5", "10007"}) {
    const auto r = test::run_varex(
        {"sweep",        "--op-dir",     dir,           "--op",  "my_selection",  "--rows",    rows,
         "--device",     "ocl:0:0",      "--db",        db,      "--set",         "words=1,8", "--set",
         "block=64,512", "--set",        "kernel=loop", "--set", "local=128,256", "--set",     "ept=8,32",
         "--set",        "padding=host", "--min-reps",  "1",     "--max-reps",    "1",         "--quiet"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // Per size: 6 of the user's variants (2 methods x 2 word counts x 2 blocks, but serial with 512) and 4 of
  // varex's (2 local sizes x 2 ept).
  EXPECT_EQ(test::count_where(db,
                              "SELECT COUNT(*) FROM (SELECT DISTINCT variant_id, workload_id FROM "
                              "measurements WHERE status = 'ok')"),
            2 * (6 + 4));
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE status != 'ok'"), 0);
  const std::string out = test::scratch_dir("user-op-contract-report");
  const auto r = test::run_varex({"report", "--op-dir", dir, "--db", db, "--out", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv = test::slurp(out + "/measurements.csv");
  EXPECT_NE(csv.find(",user,"), std::string::npos);
  EXPECT_NE(csv.find(",varex,"), std::string::npos);
}

// A user's hash join with the join's contract, made wrong where ept is 4: the right variants verify beside
// varex's own join, the wrong ones are wrong results and never best.
TEST(UserOperators, AJoinWithTheJoinsContractVerifiesAndAWrongOneIsNeverBest) {
  const fs::path dir = example_copy(
      "contract-join", [](nlohmann::json&) {}, "my_hash_join");
  std::string kernel = test::slurp((dir / "my_hash_join.cl").string());
  const std::string right = "right[at] = p;";
  ASSERT_NE(kernel.find(right), std::string::npos);
  kernel.replace(kernel.find(right), right.size(), "right[at] = ept > 2 ? p ^ 1u : p;");
  std::ofstream((dir / "my_hash_join.cl").string()) << kernel;
  const std::string db = test::scratch_dir("user-op-contract-join-db") + ".db";
  fs::remove(db);
  auto r = test::run_varex({"tune",      "--op-dir",       dir.string(),
                            "--op",      "my_hash_join",   "--rows",
                            "3001",      "--rows2",        "9001",
                            "--device",  "ocl:0:0",        "--db",
                            db,          "--set",          "fill=25,75",
                            "--set",     "ept=1,4",        "--set",
                            "block=128", "--set",          "plan=source,unique",
                            "--set",     "local=256",      "--set",
                            "grid=32wg", "--set",          "hash=mult",
                            "--set",     "probing=double", "--set",
                            "batch=1",   "--set",          "preprocess=off",
                            "--set",     "lookup=private", "--set",
                            "load=50",   "--set",          "padding=none",
                            "--set",     "append=group",   "--budget",
                            "100%",      "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  // 2 fills x ept 1 of the user's and varex's 2 plans verify; the user's 2 variants with ept 4 do not.
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(DISTINCT variant_id) FROM measurements WHERE status = 'ok'"),
            2 + 2);
  EXPECT_EQ(test::count_where(db,
                              "SELECT COUNT(DISTINCT variant_id) FROM measurements WHERE status = "
                              "'wrong_result'"),
            2);
  r = test::run_varex({"best", "--op-dir", dir.string(), "--db", db, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out).at(0).at("params");
  EXPECT_TRUE(best.at("origin") == "varex" || best.at("ept") == 1) << best.dump();
}

// Kernel Tuner's users come with their work: its tune_params and restrictions (a JSON dump of them) are the
// declaration's space, and its cache file, imported, is a sweep that tuner-bench replays. The cache is made
// here from a real sweep's T4 export, as Kernel Tuner writes one (keys in tune_params_keys' order, times in
// ms, a failed configuration, one outside the space, and the closing braces missing as a killed run leaves
// them).
TEST(UserOperators, KernelTunersSpaceIsADeclarationAndItsCacheAReplayedSweep) {
  const fs::path dir = example_copy("kernel-tuner", [](nlohmann::json& d) {
    d.erase("tunables");
    d.erase("constraints");
    d["kernel_tuner"] = "tune_params.json";
  });
  std::ofstream((dir / "tune_params.json").string())
      << R"({"tune_params": {"block": [64, 256], "ept": [4, 16], "method": ["tree", "atomic"],
             "groups": [0, 132]}, "restrictions": ["method == 'tree' or block >= 64"]})";
  const std::string db = test::scratch_dir("user-op-kt-sweep-db") + ".db";
  fs::remove(db);
  auto r =
      test::run_varex({"sweep", "--op-dir", dir.string(), "--op", "reduce_sum", "--rows", "5000", "--device",
                       "ocl:0:0", "--db", db, "--min-reps", "2", "--max-reps", "2", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(DISTINCT variant_id) FROM measurements WHERE status = 'ok'"),
            16);
  const std::string t4 = test::scratch_dir("user-op-kt-t4");
  r = test::run_varex({"export", "--op-dir", dir.string(), "--db", db, "--format", "kt-t4", "--out", t4});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json results;
  for (const auto& f : fs::directory_iterator(t4)) {
    if (f.path().string().find("metadata") == std::string::npos)
      results = nlohmann::json::parse(test::slurp(f.path().string())).at("results");
  }
  ASSERT_EQ(results.size(), 16u);
  const std::vector<std::string> keys{"block", "ept", "method", "groups"};
  nlohmann::json cache = nlohmann::json::object();
  for (const auto& result : results) {
    const auto& c = result.at("configuration");
    std::string key;
    nlohmann::json entry = nlohmann::json::object();
    for (const std::string& k : keys) {
      key += (key.empty() ? "" : ",") + (c.at(k).is_string() ? c.at(k).get<std::string>() : c.at(k).dump());
      entry[k] = c.at(k);
    }
    nlohmann::json times = nlohmann::json::array();
    for (const auto& t : result.at("times").at("runtimes")) times.push_back(t.get<double>() * 1e3);
    entry["time"] = times.at(0);
    entry["times"] = times;
    entry["compile_time"] = result.at("times").at("compilation_time").get<double>() * 1e3;
    for (const char* k : {"verification_time", "benchmark_time", "strategy_time", "framework_time"})
      entry[k] = 0;
    entry["timestamp"] = "2026-11-29 06:00:00";
    cache[key] = entry;
  }
  cache["64,4,tree,0"]["time"] = "CompilationFailedConfig";
  nlohmann::json outside = cache["64,4,tree,0"];
  outside["block"] = 1024;
  cache["1024,4,tree,0"] = outside;
  const nlohmann::json head = {{"schema_version", "1.0.0"},   {"device_name", "pthread-cpu"},
                               {"kernel_name", "reduce_sum"}, {"problem_size", {5000}},
                               {"tune_params_keys", keys},    {"objective", "time"}};
  // The cache last, as Kernel Tuner writes it, and both closing braces cut off.
  std::string text = head.dump(1);
  text.pop_back();
  const std::string entries = cache.dump(1);
  text += ",\n\"cache\": " + entries.substr(0, entries.rfind('}'));
  const std::string cache_file = (dir / "cache.json").string();
  std::ofstream(cache_file) << text;

  const std::string imported = test::scratch_dir("user-op-kt-import-db") + ".db";
  fs::remove(imported);
  r = test::run_varex({"import", "--op-dir", dir.string(), "--format", "kt-cache", cache_file, "--op",
                       "reduce_sum", "--db", imported, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("rows"), 5000);
  EXPECT_EQ(summary.at("ok"), 15);
  EXPECT_EQ(summary.at("failed"), 1);
  EXPECT_EQ(summary.at("outside_the_space"), 1);
  r = test::run_varex({"tuner-bench", "--op-dir", dir.string(), "--db", imported, "--op", "reduce_sum",
                       "--seeds", "2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto bench = nlohmann::json::parse(r.out);
  ASSERT_EQ(bench.at("sweeps").size(), 1u);
  EXPECT_EQ(bench.at("sweeps").at(0).at("device_name"), "pthread-cpu");
  EXPECT_FALSE(bench.at("quality").empty());
  // Never verified by varex: no best.
  r = test::run_varex({"best", "--op-dir", dir.string(), "--db", imported, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).empty()) << r.out;
  // Not a cache: one line, exit 2, and nothing recorded.
  r = test::run_varex({"import", "--op-dir", dir.string(), "--format", "kt-cache",
                       (dir / "operator.json").string(), "--op", "reduce_sum", "--db", imported});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("not a Kernel Tuner cache file: no 'cache' object"), std::string::npos) << r.err;
  EXPECT_EQ(test::count_where(imported, "SELECT COUNT(*) FROM sessions"), 1);
  // Merged into another database with its rows, once however often it is merged.
  const std::string merged = test::scratch_dir("user-op-kt-merged-db") + ".db";
  fs::remove(merged);
  for (int twice = 0; twice < 2; ++twice) {
    r = test::run_varex({"merge", "--into", merged, imported});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(test::count_where(merged, "SELECT COUNT(*) FROM imported_measurements"), 16);
  EXPECT_EQ(test::count_where(merged, "SELECT COUNT(*) FROM sessions"), 1);
}

// The user's group-by on groupby's workloads: generated keys (uniform and Zipf) and a file whose keys include
// the table's EMPTY word and both ends of int32, every user variant verified by groupby's own check; a copy
// that misses the least value where ept is 8 is a wrong result there and never best.
TEST(UserOperators, AGroupByWithTheGroupBysContractVerifiesAndAWrongOneIsNeverBest) {
  const fs::path dir = example_copy(
      "contract-groupby", [](nlohmann::json&) {}, "my_group_by");
  const std::string file = (dir / "pairs.txt").string();
  {
    std::ofstream out(file);
    const std::int64_t keys[] = {-2147483648LL, 2147483647, 0, -1, 7};
    for (int i = 0; i < 3001; ++i)
      out << (i % 3 == 0 ? i % 11 : keys[(i * 7) % 5]) << "," << (i * 7919) % 4001 - 2000 << "\n";
  }
  const std::string db = test::scratch_dir("user-op-contract-groupby-db") + ".db";
  fs::remove(db);
  const std::vector<std::vector<std::string>> workloads{
      {"--rows", "5003", "--distinct", "97"},
      {"--rows", "4096", "--distinct", "1000", "--zipf", "1"},
      {"--input", file}};
  for (const auto& workload : workloads) {
    std::vector<std::string> args{"sweep",       "--op-dir", dir.string(), "--op",  "my_group_by",
                                  "--device",    "ocl:0:0",  "--db",       db,      "--set",
                                  "origin=user", "--set",    "block=128",  "--set", "fill=25,75",
                                  "--max-reps",  "1",        "--quiet"};
    args.insert(args.end(), workload.begin(), workload.end());
    const auto r = test::run_varex(args);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // 2 fills x 4 ept, at each of the three workloads.
  EXPECT_EQ(
      test::count_where(db,
                        "SELECT COUNT(*) FROM (SELECT DISTINCT variant_id, workload_id FROM measurements "
                        "WHERE status = 'ok')"),
      3 * 8);
  EXPECT_EQ(test::count_where(db, "SELECT COUNT(*) FROM measurements WHERE status != 'ok'"), 0);

  const fs::path wrong = example_copy(
      "contract-groupby-wrong", [](nlohmann::json&) {}, "my_group_by");
  std::string kernel = test::slurp((wrong / "my_group_by.cl").string());
  const std::string right = "atomic_min_i32(&mins[g], value);";
  ASSERT_NE(kernel.find(right), std::string::npos);
  kernel.replace(kernel.find(right), right.size(),
                 "if (ept != 8 || value > -1000) atomic_min_i32(&mins[g], value);");
  std::ofstream((wrong / "my_group_by.cl").string()) << kernel;
  const std::string wrong_db = test::scratch_dir("user-op-contract-groupby-wrong-db") + ".db";
  fs::remove(wrong_db);
  auto r = test::run_varex({"tune",    "--op-dir",   wrong.string(), "--op",     "my_group_by", "--rows",
                            "5003",    "--distinct", "97",           "--device", "ocl:0:0",     "--db",
                            wrong_db,  "--set",      "origin=user",  "--set",    "block=128",   "--set",
                            "fill=50", "--budget",   "100%",         "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::count_where(wrong_db,
                              "SELECT COUNT(DISTINCT variant_id) FROM measurements WHERE status = "
                              "'wrong_result'"),
            1);
  r = test::run_varex({"best", "--op-dir", wrong.string(), "--db", wrong_db, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out).at(0).at("params").at("ept"), 8) << r.out;
}

// A cache Kernel Tuner 1.5.0 wrote (examples/kernel-tuner/reduce_kt/run_kt.py, on PoCL through pyopencl) over
// the space of its own tune_params dump: imported whole as a sweep, replayed by every strategy.
TEST(UserOperators, ACacheKernelTunerWroteIsImportedAndReplayed) {
  const fs::path dir = fs::path(VAREX_SOURCE_DIR) / "examples/kernel-tuner";
  const std::string db = test::scratch_dir("user-op-kt-real-db") + ".db";
  fs::remove(db);
  auto r =
      test::run_varex({"import", "--op-dir", dir.string(), "--format", "kt-cache",
                       (dir / "reduce_kt/cache.json").string(), "--op", "reduce_kt", "--db", db, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("rows"), 100000);
  EXPECT_EQ(summary.at("ok"), 45);  // 5 blocks x 5 ept x 2 reductions, less the 5 the restriction refuses
  EXPECT_EQ(summary.at("outside_the_space"), 0);
  EXPECT_EQ(summary.at("device"), "pthread-skylake-avx512-AMD EPYC");
  r = test::run_varex(
      {"tuner-bench", "--op-dir", dir.string(), "--db", db, "--op", "reduce_kt", "--seeds", "2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto bench = nlohmann::json::parse(r.out);
  EXPECT_EQ(bench.at("sweeps").at(0).at("variants"), 45) << bench.at("sweeps").dump();
  EXPECT_FALSE(bench.at("cost_to_5pct").empty());

  // The same run's results as Kernel Tuner stores them in T4 (its times in milliseconds, where the schema
  // says seconds): the same 45 configurations and the same optimum.
  const std::string t4_db = test::scratch_dir("user-op-kt-real-t4-db") + ".db";
  fs::remove(t4_db);
  r = test::run_varex({"import", "--op-dir", dir.string(), "--format", "t4",
                       (dir / "reduce_kt/t4_results.json").string(), "--op", "reduce_kt", "--rows", "100000",
                       "--db", t4_db, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("ok"), 45);
  r = test::run_varex({"tuner-bench", "--op-dir", dir.string(), "--db", t4_db, "--op", "reduce_kt", "--seeds",
                       "1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const double t4_optimum = nlohmann::json::parse(r.out).at("sweeps").at(0).at("optimum_ms").get<double>();
  const double cache_optimum = bench.at("sweeps").at(0).at("optimum_ms").get<double>();
  EXPECT_NEAR(t4_optimum, cache_optimum, 0.02 * cache_optimum);
}

TEST(UserOperators, VarexOpPathFindsTheOperatorsOfADirectory) {
  const std::string dir = (fs::path(VAREX_SOURCE_DIR) / "examples/user-operators").string();
  ::setenv("VAREX_OP_PATH", dir.c_str(), 1);
  const auto r = test::run_varex({"run", "--op", "reduce_sum", "--rows", "2^12", "--device", "ocl:0:0",
                                  "--db", test::scratch_dir("user-op-path") + ".db", "--json"});
  ::unsetenv("VAREX_OP_PATH");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).at("verified").get<bool>()) << r.out;
}

}  // namespace
}  // namespace varex::operators::user
