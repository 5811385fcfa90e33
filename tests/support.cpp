#include "support.hpp"

#include "harness/operators/operator.hpp"
#include "operators/install.hpp"
#include "results/store.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace varex::test {

const DeviceInfo& cpu_device() {
  static const DeviceInfo device = [] {
    for (const DeviceInfo& d : harness::enumerate_devices()) {
      if (d.backend == Backend::OpenCL && d.type == "cpu") return d;
    }
    throw std::runtime_error("no OpenCL CPU device: install pocl-opencl-icd (scripts/setup.sh does)");
  }();
  return device;
}

harness::Engine& cpu_engine() {
  static std::unique_ptr<harness::Engine> engine = harness::open_engine(cpu_device());
  return *engine;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int count_where(const std::string& db, const std::string& sql) {
  if (!std::filesystem::exists(db)) return 0;
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(), sql);
  s.step();
  return static_cast<int>(s.integer(0));
}

void verify_variants(
    const harness::Operator& op, const datasets::WorkloadSpec& spec, const varex::Digest& want,
    const std::map<std::string, std::string>& pins,
    const std::function<std::vector<variants::Params>(std::vector<variants::Params>)>& pick) {
  harness::Engine& engine = cpu_engine();
  auto run = op.prepare(engine, spec);
  ASSERT_EQ(run->reference(), want) << op.name() << ": the host reference disagrees with the test's own";
  auto variants = op.space({engine.device(), spec.rows()}).enumerate(pins);
  if (pick) variants = pick(std::move(variants));
  ASSERT_FALSE(variants.empty());
  for (const auto& params : variants) {
    run->poison();
    run->execute(params);
    const harness::Collected c = run->collect();
    ASSERT_TRUE(c.verified) << op.name() << ", " << spec.rows() << " rows, " << variants::describe(params)
                            << ": " << c.mismatch;
    ASSERT_EQ(c.digest, want) << variants::describe(params);
  }
}

namespace {
// The test binary's operators, installed before main as varex's own main does first thing (a suite's
// parameters are computed during static initialisation too: operator_names installs them itself).
[[maybe_unused]] const bool operators_installed = (operators::install(), true);
}  // namespace

std::vector<std::string> operator_names() {
  operators::install();
  std::vector<std::string> names;
  for (const harness::Operator* op : harness::operators()) names.push_back(op->name());
  return names;
}

std::vector<std::string> selection_command(const std::string& verb, const std::string& db,
                                           const std::string& rows, const std::vector<std::string>& more) {
  std::vector<std::string> args{verb,   "--op", "selection", "--device", cpu_device().id,
                                "--db", db,     "--rows",    rows};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("varex-test-" + std::to_string(getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

namespace {

// One line per row, the columns' values separated by commas.
template <typename Column>
std::string write_columns(const std::vector<Column>& columns, const std::string& path) {
  std::ofstream out(path);
  const std::size_t rows = columns.empty() ? 0 : columns[0].size();
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << columns[c][i];
    out << "\n";
  }
  return path;
}

}  // namespace

datasets::Relation runs_relation(std::uint64_t rows, std::uint32_t values,
                                 const std::vector<std::uint64_t>& lengths, std::uint32_t seed,
                                 std::optional<std::uint32_t> value) {
  std::mt19937 rng(seed);
  datasets::Relation r;
  r.columns.assign(1 + values, std::vector<std::uint32_t>(rows));
  std::uint64_t run = 0;
  std::uint64_t left = lengths[0];
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (left == 0) left = lengths[++run % lengths.size()];
    --left;
    r.columns[0][i] = static_cast<std::uint32_t>(run * 2654435761u);
    for (std::uint32_t c = 1; c <= values; ++c)
      r.columns[c][i] = value ? *value : static_cast<std::uint32_t>(rng());
  }
  return r;
}

datasets::Relation small_alphabet(std::uint64_t rows, std::uint32_t values, std::uint32_t seed) {
  std::mt19937 rng(seed);
  datasets::Relation r;
  r.columns.assign(1 + values, std::vector<std::uint32_t>(rows));
  for (std::uint64_t i = 0; i < rows; ++i) {
    r.columns[0][i] = rng() % 3;
    for (std::uint32_t c = 1; c <= values; ++c) r.columns[c][i] = static_cast<std::uint32_t>(rng());
  }
  return r;
}

datasets::WorkloadSpec relation_file_workload(const harness::Operator& op, const datasets::Relation& relation,
                                              const std::string& name,
                                              const std::map<std::string, std::string>& query) {
  harness::WorkloadOptions options;
  options.flags["input"] = write_relation(relation, scratch_dir(op.name() + "-" + name) + "/relation.csv");
  options.query = query;
  return op.workload(options);
}

std::string write_relation(const datasets::Relation& relation, const std::string& path) {
  return write_columns(relation.columns, path);
}

std::string write_records(const datasets::AttributeTable& table, const std::string& path) {
  return write_columns(table.columns, path);
}

Background start_varex(const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string dir = scratch_dir("command-" + std::to_string(++counter));
  Background b;
  b.out_path = dir + "/out";
  b.err_path = dir + "/err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, b.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, b.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv_storage{VAREX_EXECUTABLE};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, VAREX_EXECUTABLE, &actions, nullptr, argv.data(), environ) == 0) b.pid = pid;
  posix_spawn_file_actions_destroy(&actions);
  return b;
}

CommandResult Background::finish() {
  CommandResult result;
  if (pid <= 0) return result;
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

CommandResult run_varex(const std::vector<std::string>& args) {
  return start_varex(args).finish();
}

harness::DeviceResult run_bound(harness::BoundRun& run, const variants::Params& params) {
  EXPECT_EQ(run.refuses(params), "");
  run.compile(params);
  run.execute(params);
  return run.take_result();
}

// Valid points of the pinned sub-space in which every pair of values of the `knobs` occurs together at
// least once (greedy pairwise covering): every interplay of two knobs is exercised with a fraction of the
// programs an exhaustive product would compile.
std::vector<variants::Params> pairwise(const std::vector<variants::Params>& points,
                                       const std::vector<std::string>& knobs) {
  const auto pairs_of = [&](const variants::Params& p) {
    std::set<std::string> out;
    for (std::size_t a = 0; a < knobs.size(); ++a) {
      for (std::size_t b = a + 1; b < knobs.size(); ++b) {
        out.insert(knobs[a] + "=" + variants::to_string(p.at(knobs[a])) + "," + knobs[b] + "=" +
                   variants::to_string(p.at(knobs[b])));
      }
    }
    return out;
  };
  std::set<std::string> uncovered;
  for (const auto& p : points) {
    for (const auto& pair : pairs_of(p)) uncovered.insert(pair);
  }
  std::vector<variants::Params> chosen;
  while (!uncovered.empty()) {
    std::size_t best = 0, best_gain = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      std::size_t gain = 0;
      for (const auto& pair : pairs_of(points[i])) gain += uncovered.count(pair);
      if (gain > best_gain) best = i, best_gain = gain;
    }
    for (const auto& pair : pairs_of(points[best])) uncovered.erase(pair);
    chosen.push_back(points[best]);
  }
  return chosen;
}

}  // namespace varex::test
