// The plan's own words on varex's command line: `varex plan run|sweep|tune PLAN …`, an alias of
// `varex run|sweep|tune --op plan --plan PLAN …`, and `varex tpch`, which writes the tables a plan reads
// and its reference result's summary for another database (bench/duckdb_plans.py).
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "operators/plan/plan.hpp"
#include "operators/plan/plan_tables.hpp"

namespace varex::operators {
namespace {

bool is_help(const std::string& word) {
  return word == "--help" || word == "-h";
}

std::string plan_help() {
  return "Run, sweep or tune a whole TPC-H query plan as one operator (docs/PLANS.md)\n"
         "Usage: varex plan run|sweep|tune PLAN [OPTIONS]\n\n"
         "PLAN is a shipped plan (" +
         join(shipped_plans(), ", ") +
         ") or a plan file (JSON). `varex plan run PLAN ...` is `varex run --op plan --plan PLAN ...`: the\n"
         "same flags, the plan's own (scale factor, residency, fusion) among them; `varex plan run --help`\n"
         "lists them.\n"
         "Examples:\n"
         "  varex plan run A --device ocl:0:0 --sf 1\n"
         "  varex plan tune D --device gpu --sf 10 --budget 60s\n";
}

std::vector<std::string> expand_plan(const std::vector<std::string>& words) {
  const bool command = !words.empty() && (words[0] == "run" || words[0] == "sweep" || words[0] == "tune");
  if (command && words.size() >= 2 && is_help(words[1]))
    return {words[0], "--op", "plan", "--help"};  // the command's flags with the plan's own
  if (!command || words.size() < 2 || words[1].empty() || words[1][0] == '-') {
    throw UsageError(
        "plan takes run, sweep or tune and a plan (a shipped one or a file), as in `varex plan run A "
        "--device "
        "ocl:0:0` (varex help plan)");
  }
  std::vector<std::string> out{words[0], "--op", "plan", "--plan", words[1]};
  out.insert(out.end(), words.begin() + 2, words.end());
  return out;
}

double scale_factor(const std::string& text) {
  char* end = nullptr;
  const double sf = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(sf >= 1e-6 && sf <= 1000.0))
    throw UsageError("--sf must be a scale factor from 1e-6 to 1000, not '" + text + "'");
  return sf;
}

std::uint64_t seed_of(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
    throw UsageError("--seed must be a whole number below 2^64, not '" + text + "'");
  return seed;
}

// The directory `varex tpch` writes: named, and a directory where something already stands there.
const std::string& out_dir(const std::string& dir) {
  if (dir.empty()) throw UsageError("--out: empty; name the directory to write");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw UsageError("--out '" + dir + "' is not a directory");
  return dir;
}

}  // namespace

std::vector<OperatorCommand> PlanOperator::commands() const {
  OperatorCommand plan{"plan",      "run|sweep|tune PLAN  a whole TPC-H query plan (varex help plan)",
                       plan_help(), expand_plan,
                       {},          nullptr};
  OperatorCommand tpch{
      "tpch",
      "Write the TPC-H columns a plan reads as CSV, with the plan and its reference result's summary",
      "",
      nullptr,
      {{"plan", "PLAN", "A shipped plan or a plan file", "A", false},
       {"sf", "X", "TPC-H scale factor", "1", false},
       {"seed", "N", "Seed of the generator", "42", false},
       {"out", "DIR", "Directory to write", "", true}},
      [](const std::map<std::string, std::string>& flags) {
        const std::string& name = flags.at("plan");
        const nlohmann::json summary =
            plan::write_plan_tables(plan_document(name), name, scale_factor(flags.at("sf")),
                                    seed_of(flags.at("seed")), out_dir(flags.at("out")));
        return summary.dump(2) + "\n";
      }};
  return {plan, tpch};
}

}  // namespace varex::operators
