// Profiles for other builds (export, the header-only lookup and its fallback chain, the consumer example
// built and run), merging databases, Kernel Tuner T4 export, reports, and the Google Benchmark binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <varex/profile_json.hpp>

#include "results/export.hpp"
#include "results/merge.hpp"
#include "support.hpp"
#include "synthetic_sweep.hpp"

namespace varex {
namespace {

using test::slurp;

using test::run_varex;

int count(const std::string& db, const std::string& table) {
  results::Store store(db, results::Database::Mode::Existing);
  results::Statement s(store.db(), "SELECT COUNT(*) FROM " + table);
  s.step();
  return static_cast<int>(s.integer(0));
}

DeviceInfo other_machine() {
  DeviceInfo d = test::synthetic_device();
  d.host = "other";
  d.name = "Synthetic GPU 2";
  return d;
}

profile::Entry entry(profile::DeviceKey device, std::uint64_t rows, profile::Params params, double ms) {
  profile::Entry e;
  e.device = std::move(device);
  e.op = "selection";
  e.workload.scale["rows"] = static_cast<double>(rows);
  e.params = std::move(params);
  e.kernel_ms = ms;
  return e;
}

TEST(ProfileLookup, FallbackChain) {
  const profile::Entry exact =
      entry({"cuda", "NVIDIA", "H100", "sm_90", "gpu", "13.0"}, 1 << 20, {{"ept", "8"}}, 1.0);
  const profile::Entry big =
      entry({"cuda", "NVIDIA", "H100", "sm_90", "gpu", "13.0"}, 1 << 28, {{"ept", "16"}}, 1.0);
  const profile::Entry cpu =
      entry({"opencl", "Intel", "Xeon", "skylake", "cpu", ""}, 1 << 20, {{"ept", "32"}}, 2.0);
  const profile::Profile p({exact, big, cpu}, {{"selection", {{"ept", "8"}, {"kernel", "loop"}}}});

  auto c = p.lookup("selection", {"cuda", "NVIDIA", "H100", "sm_90", "gpu", ""}, 1 << 21);
  EXPECT_EQ(c.level, profile::Level::ExactDevice);
  EXPECT_EQ(c.text("ept"), "8");  // the nearer workload size
  c = p.lookup("selection", {"cuda", "NVIDIA", "H100", "sm_90", "gpu", ""}, 1 << 27);
  EXPECT_EQ(c.text("ept"), "16");
  EXPECT_EQ(c.integer("ept", 0), 16);
  c = p.lookup("selection", {"cuda", "NVIDIA", "H200", "sm_90", "gpu", ""}, 1 << 27);
  EXPECT_EQ(c.level, profile::Level::SameArchitecture);
  c = p.lookup("selection", {"cuda", "NVIDIA", "A100", "sm_80", "gpu", ""}, 1 << 27);
  EXPECT_EQ(c.level, profile::Level::SameVendorAndType);
  c = p.lookup("selection", {"opencl", "AMD", "EPYC", "znver4", "cpu", ""}, 1 << 20);
  EXPECT_EQ(c.level, profile::Level::Default);
  EXPECT_EQ(c.text("kernel"), "loop");
  EXPECT_EQ(c.entry, nullptr);
  EXPECT_TRUE(p.lookup("hashjoin", {"cuda", "NVIDIA", "H100", "sm_90", "gpu", ""}, 1).params.empty());
}

TEST(ProfileLookup, SameShapeFirstThenTheNearestScaleThenTheNextLevel) {
  const profile::DeviceKey h200{"cuda", "NVIDIA", "H200", "sm_90", "gpu", "13.0"};
  const profile::DeviceKey h100{"cuda", "NVIDIA", "H100", "sm_90", "gpu", "13.0"};
  auto like = [](const profile::DeviceKey& d, std::string pattern, double rows, std::string params) {
    profile::Entry e;
    e.device = d;
    e.op = "str_like";
    e.workload.shape = {{"dataset", "titles"}, {"pattern", std::move(pattern)}};
    e.workload.scale = {{"rows", rows}, {"selectivity", 0.01}};
    e.params = {{"kernel", std::move(params)}};
    e.kernel_ms = 1;
    return e;
  };
  const profile::Profile p({like(h200, "%green%", 1 << 24, "refill"), like(h200, "%green%", 1 << 16, "small"),
                            like(h200, "abc%", 1 << 24, "naive"), like(h100, "x%", 1 << 24, "h100")},
                           {{"str_like", {{"kernel", "default"}}}});
  profile::Workload w{{{"dataset", "titles"}, {"pattern", "%green%"}},
                      {{"rows", 1 << 24}, {"selectivity", 0.01}}};
  auto c = p.lookup("str_like", h200, w);
  EXPECT_EQ(c.text("kernel"), "refill");
  EXPECT_TRUE(c.exact_class);
  // Another pattern of the same device: only that pattern's entries compete, whatever their size.
  w.shape["pattern"] = "abc%";
  w.scale["rows"] = 1 << 16;
  c = p.lookup("str_like", h200, w);
  EXPECT_EQ(c.text("kernel"), "naive");
  EXPECT_FALSE(c.exact_class);
  // The nearest size of the same shape.
  w.shape["pattern"] = "%green%";
  w.scale["rows"] = 1 << 17;
  EXPECT_EQ(p.lookup("str_like", h200, w).text("kernel"), "small");
  // A shape the exact device never measured: the next level of the chain has it.
  w.shape["pattern"] = "x%";
  c = p.lookup("str_like", h200, w);
  EXPECT_EQ(c.level, profile::Level::SameArchitecture);
  EXPECT_EQ(c.text("kernel"), "h100");
  // Nothing of that shape anywhere: the operator's default.
  w.shape["pattern"] = "nobody%";
  EXPECT_EQ(p.lookup("str_like", h200, w).level, profile::Level::Default);
  // A consumer that gives no pattern matches any.
  EXPECT_EQ(p.lookup("str_like", h200, profile::Workload{{}, {{"rows", 1 << 24}}}).level,
            profile::Level::ExactDevice);
}

TEST(ProfileLookup, VersionOneProfilesAreStillRead) {
  const nlohmann::json v1 = {
      {"format", "varex-profile"},
      {"version", 1},
      {"devices",
       {{{"backend", "cuda"},
         {"vendor", "NVIDIA"},
         {"name", "H200"},
         {"arch", "sm_90"},
         {"type", "gpu"},
         {"operators",
          {{"selection",
            {{{"workload", {{"rows", 1 << 20}, {"selectivity", 0.5}}}, {"params", {{"ept", 16}}}},
             {{"workload", {{"rows", 1 << 20}, {"selectivity", 0.01}}}, {"params", {{"ept", 8}}}}}}}}}}},
      {"defaults", nlohmann::json::object()}};
  const profile::Profile p = profile::load_profile(v1);
  const profile::DeviceKey h200{"cuda", "NVIDIA", "H200", "sm_90", "gpu", ""};
  EXPECT_EQ(p.lookup("selection", h200, 1 << 20, 0.02).text("ept"), "8");
  EXPECT_EQ(p.lookup("selection", h200, 1 << 20, 0.4).text("ept"), "16");
  // Its entries are time entries: a lookup by energy finds none of them.
  EXPECT_EQ(p.entries()[0].objective, "time");
  EXPECT_EQ(p.lookup("selection", h200, 1 << 20, 0.4, "energy").level, profile::Level::Default);
}

// The one distance between workload classes (profile lookup and the tuner's warm start): counts by their
// doublings, fractions by 4 times their difference, each key by the kind its operator declared (profile
// version 5); where none is declared (older profiles), a count where both values are at least 1.
TEST(ProfileLookup, OneDistanceComparesCountsByRatioAndFractionsByDifference) {
  const profile::Workload a{{}, {{"rows", 1 << 20}, {"selectivity", 0.1}, {"zipf", 1.0}, {"only_a", 7}}};
  const profile::Workload b{{}, {{"rows", 1 << 22}, {"selectivity", 0.5}, {"zipf", 2.0}}};
  // rows: 2 doublings; selectivity: 4 x 0.4; zipf, both at least 1 and undeclared: 1 doubling; only_a: none.
  EXPECT_NEAR(profile::workload_distance(a, b), 2 + 1.6 + 1, 1e-12);
  profile::Workload declared = b;
  declared.kinds = {{"rows", "count"}, {"selectivity", "fraction"}, {"zipf", "fraction"}};
  EXPECT_NEAR(profile::workload_distance(a, declared), 2 + 1.6 + 4, 1e-12);  // zipf: 4 x 1.0
  EXPECT_NEAR(profile::workload_distance(declared, a), profile::workload_distance(a, declared), 1e-12);
  EXPECT_EQ(profile::workload_distance(a, a), 0);
  // Lookup goes by it. At zipf 1.0, declared a fraction, the entry at 0.5 is nearer (4 x 0.5) than the one at
  // 2.0 (4 x 1.0); undeclared, 2.0 and 1.0 compare as counts (one doubling) and 0.5 as a fraction (2).
  const profile::DeviceKey h200{"cuda", "NVIDIA", "H200", "sm_90", "gpu", ""};
  auto lookup = [&](bool with_kinds) {
    std::vector<profile::Entry> entries(2);
    for (std::size_t i = 0; i < 2; ++i) {
      entries[i].device = h200;
      entries[i].op = "hashjoin";
      entries[i].workload.scale = {{"rows", 1 << 20}, {"zipf", i == 0 ? 2.0 : 0.5}};
      if (with_kinds) entries[i].workload.kinds = {{"rows", "count"}, {"zipf", "fraction"}};
      entries[i].params = {{"plan", i == 0 ? "unique" : "partitioned"}};
    }
    const profile::Profile p(entries, {});
    return p.lookup("hashjoin", h200, profile::Workload{{}, {{"rows", 1 << 20}, {"zipf", 1.0}}}).text("plan");
  };
  EXPECT_EQ(lookup(true), "partitioned");
  EXPECT_EQ(lookup(false), "unique");
}

// Entries of each objective answer only lookups by it (version 4); within an objective, ties of the scale go
// to the lower value.
TEST(ProfileLookup, EachObjectiveHasItsOwnEntries) {
  const profile::DeviceKey h100{"cuda", "NVIDIA", "H100", "sm_90", "gpu", ""};
  std::vector<profile::Entry> entries{entry(h100, 1 << 24, {{"ept", "16"}}, 0.30),
                                      entry(h100, 1 << 24, {{"ept", "8"}}, 0.31),
                                      entry(h100, 1 << 24, {{"ept", "4"}}, 0.33)};
  entries[1].objective = entries[2].objective = "energy";
  entries[1].value = entries[1].energy_j = 0.090;
  entries[2].value = entries[2].energy_j = 0.085;
  const profile::Profile p(entries, {{"selection", {{"ept", "1"}}}});
  EXPECT_EQ(p.lookup("selection", h100, 1 << 24).text("ept"), "16");
  EXPECT_EQ(p.lookup("selection", h100, 1 << 24, -1, "time").text("ept"), "16");
  EXPECT_EQ(p.lookup("selection", h100, 1 << 24, -1, "energy").text("ept"), "4");
  const auto edp = p.lookup("selection", h100, 1 << 24, -1, "edp");
  EXPECT_EQ(edp.level, profile::Level::Default);
  EXPECT_EQ(edp.text("ept"), "1");
  EXPECT_DOUBLE_EQ(p.entries()[0].value, 0.30);  // a time entry is valued by its time
}

// A file that is not a profile is one std::runtime_error naming it, never an uncaught JSON exception that
// aborts the consumer (issue 28).
TEST(ProfileLookup, AFileThatIsNoProfileIsOneErrorNamingIt) {
  const std::string dir = test::scratch_dir("profile-bad");
  std::ofstream(dir + "/garbage.json") << "{not json";
  std::ofstream(dir + "/shape.json") << R"({"format": "varex-profile", "version": 2, "devices": 7})";
  for (const char* name : {"garbage.json", "shape.json"}) {
    try {
      profile::load_profile_file(dir + "/" + name);
      ADD_FAILURE() << name << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + " is not a varex profile"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(profile::load_profile_file(dir + "/missing.json"), std::runtime_error);
}

// Profiles from before the one launch vocabulary: groups_per_cu, processors and groups are read as grid.
TEST(ProfileLookup, OldGridNamesAreReadAsGrid) {
  const auto entry = [](const char* op, nlohmann::json params) {
    return nlohmann::json{{op, {{{"workload", {{"rows", 1 << 20}}}, {"params", params}}}}};
  };
  nlohmann::json operators = entry("selection", {{"groups_per_cu", 4}, {"ept", 16}});
  operators.update(entry("hashjoin", {{"processors", 512}}));
  operators.update(entry("groupby", {{"groups", "cover"}}));
  const nlohmann::json v1 = {{"format", "varex-profile"},
                             {"version", 1},
                             {"devices",
                              {{{"backend", "cuda"},
                                {"vendor", "NVIDIA"},
                                {"name", "H200"},
                                {"arch", "sm_90"},
                                {"type", "gpu"},
                                {"operators", operators}}}},
                             {"defaults", {{"hashjoin", {{"processors", "32"}, {"local", "256"}}}}}};
  const profile::Profile p = profile::load_profile(v1);
  const profile::DeviceKey h200{"cuda", "NVIDIA", "H200", "sm_90", "gpu", ""};
  const profile::DeviceKey other{"opencl", "Someone", "CPU", "x86", "cpu", ""};
  const auto selection = p.lookup("selection", h200, 1 << 20, 0.5);
  EXPECT_EQ(selection.text("grid"), "4");
  EXPECT_EQ(selection.text("groups_per_cu"), "");
  EXPECT_EQ(selection.work_groups(132), 528u);
  EXPECT_EQ(p.lookup("hashjoin", h200, profile::Workload{{}, {{"rows", 1 << 20}}}).text("grid"), "512wg");
  EXPECT_EQ(p.lookup("hashjoin", h200, profile::Workload{{}, {{"rows", 1 << 20}}}).work_groups(132), 512u);
  EXPECT_EQ(p.lookup("groupby", h200, profile::Workload{{}, {{"rows", 1 << 20}}}).work_groups(132), 0u);
  EXPECT_EQ(p.lookup("hashjoin", other, profile::Workload{{}, {{"rows", 1 << 20}}}).text("grid"), "32wg");
}

TEST(ProfileExport, JsonRoundTripReturnsTheStoredBest) {
  const std::string dir = test::scratch_dir("profile-roundtrip");
  results::Store store(dir + "/v.db");
  test::record_synthetic(store, test::synthetic_device(), 1 << 20);
  const auto best = store.best({.op = "selection"});
  ASSERT_EQ(best.size(), 1u);
  const nlohmann::json j = results::profile_json(store, {}, {{"selection", {{"kernel", "loop"}}}});
  EXPECT_EQ(j["format"], "varex-profile");
  EXPECT_EQ(j["version"], 5);
  const profile::Profile p = profile::load_profile(j);
  const DeviceInfo d = test::synthetic_device();
  const auto c = p.lookup("selection", {"opencl", d.vendor, d.name, d.arch, d.type, d.driver}, 1 << 20);
  ASSERT_EQ(c.level, profile::Level::ExactDevice);
  for (const auto& [name, value] : best[0].params)
    EXPECT_EQ(c.text(name), variants::to_string(value)) << name;
  EXPECT_DOUBLE_EQ(c.entry->kernel_ms, best[0].kernel_ms);
  EXPECT_EQ(c.entry->method, "sweep exhaustive");
  EXPECT_THROW(profile::load_profile(nlohmann::json{{"format", "varex-profile"}, {"version", 99}}),
               std::runtime_error);
}

TEST(ProfileExport, ConsumerExampleBuildsAndReadsBothWays) {
  const std::string dir = test::scratch_dir("consumer");
  const std::string db = dir + "/v.db";
  {
    results::Store store(db);
    test::record_synthetic(store, test::synthetic_device(), 1 << 20, 0, 5, true);  // with energy
  }
  ASSERT_EQ(run_varex({"export", "--db", db, "--format", "json", "--out", dir + "/profile.json"}).status, 0);
  // An entry per objective (version 4), as the database's bests by each.
  const profile::Profile exported = profile::load_profile_file(dir + "/profile.json");
  ASSERT_EQ(exported.entries().size(), 3u);
  std::map<std::string, const profile::Entry*> by_objective;
  for (const profile::Entry& entry : exported.entries()) by_objective[entry.objective] = &entry;
  ASSERT_EQ(by_objective.size(), 3u);
  {
    results::Store store(db, results::Database::Mode::Existing);
    for (const auto& [name, entry] : by_objective) {
      const auto best = store.best({.op = "selection", .objective = objective_from_string(name)}).at(0);
      EXPECT_EQ(entry->variant, best.variant_id) << name;
      EXPECT_DOUBLE_EQ(entry->value, best.value) << name;
      EXPECT_DOUBLE_EQ(entry->energy_j, *best.energy_j) << name;
    }
    EXPECT_NE(by_objective["time"]->variant, by_objective["energy"]->variant);
  }
  // --objective keeps the bests of the objectives it names.
  ASSERT_EQ(run_varex({"export", "--db", db, "--objective", "energy", "--out", dir + "/energy.json"}).status,
            0);
  const profile::Profile energy_only = profile::load_profile_file(dir + "/energy.json");
  ASSERT_EQ(energy_only.entries().size(), 1u);
  EXPECT_EQ(energy_only.entries()[0].objective, "energy");
  const auto bad = run_varex({"export", "--db", db, "--objective", "time,watts", "--out", dir + "/bad.json"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("'watts' is not one"), std::string::npos) << bad.err;
  // What a run needs travels with each entry (version 3): the kernel family, the source's hash and the
  // defines the program is built with, as the operator makes them for the recorded parameters.
  const profile::Entry& e = *by_objective["time"];
  EXPECT_EQ(e.family, "selection");
  {
    results::Store store(db, results::Database::Mode::Existing);
    const auto best = store.best({.op = "selection"}).at(0);
    EXPECT_EQ(e.source_hash, best.kernel_hash);  // as recorded with the variant
    EXPECT_FALSE(e.source_hash.empty());
    std::map<std::string, std::string> defines;
    for (const harness::Define& d :
         harness::find_operator("selection").defines(best.params, test::synthetic_device()))
      defines[d.name] = d.value;
    EXPECT_EQ(e.defines, defines);
    EXPECT_FALSE(defines.empty());
    // The next fastest variants of the class, fastest first, the best not among them.
    ASSERT_EQ(e.runners_up.size(), std::min<std::size_t>(best.candidates - 1, 4));
    ASSERT_EQ(best.runners_up.size(), e.runners_up.size());
    for (std::size_t i = 0; i < best.runners_up.size(); ++i) {
      EXPECT_NE(best.runners_up[i].variant_id, best.variant_id);
      EXPECT_GE(best.runners_up[i].kernel_ms, i ? best.runners_up[i - 1].kernel_ms : best.kernel_ms);
    }
  }
  const auto header = run_varex({"export", "--db", db, "--format", "header", "--out", dir + "/tuned.hpp"});
  ASSERT_EQ(header.status, 0) << header.err;
  const std::string build = dir + "/build";
  const std::string configure = std::string(VAREX_CMAKE) + " -S " + VAREX_SOURCE_DIR +
                                "/examples/profile-consumer -B " + build +
                                " -Dvarex_DIR=" + VAREX_BINARY_DIR + " -DVAREX_PROFILE_HEADER=" + dir +
                                "/tuned.hpp > " + dir + "/cmake.log 2>&1";
  ASSERT_EQ(std::system(configure.c_str()), 0) << slurp(dir + "/cmake.log");
  ASSERT_EQ(
      std::system((std::string(VAREX_CMAKE) + " --build " + build + " > " + dir + "/build.log 2>&1").c_str()),
      0)
      << slurp(dir + "/build.log");
  const DeviceInfo d = test::synthetic_device();
  const std::string run = build + "/profile_consumer --profile " + dir +
                          "/profile.json --backend opencl --vendor " + d.vendor + " --name '" + d.name +
                          "' --arch " + d.arch + " --type gpu --rows 1048576 > " + dir + "/out.txt";
  ASSERT_EQ(std::system(run.c_str()), 0);
  const std::string out = slurp(dir + "/out.txt");
  results::Store store(db, results::Database::Mode::Existing);
  const auto params_of = [](const results::BestRow& best) {
    std::string params;
    for (const auto& [name, value] : best.params)
      params += (params.empty() ? "" : ",") + name + "=" + variants::to_string(value);
    return params;
  };
  const std::string params = params_of(store.best({.op = "selection"}).at(0));
  EXPECT_NE(out.find("json: level=exact_device params=" + params), std::string::npos) << out;
  EXPECT_NE(out.find("header: level=exact_device params=" + params), std::string::npos) << out;
  // By energy, both paths take the energy entry.
  ASSERT_EQ(
      std::system((run.substr(0, run.find(" > ")) + " --objective energy > " + dir + "/energy.txt").c_str()),
      0);
  const std::string frugal = params_of(store.best({.op = "selection", .objective = Objective::Energy}).at(0));
  EXPECT_NE(frugal, params);
  EXPECT_NE(slurp(dir + "/energy.txt").find("json: level=exact_device params=" + frugal), std::string::npos)
      << slurp(dir + "/energy.txt");
  EXPECT_NE(slurp(dir + "/energy.txt").find("header: level=exact_device params=" + frugal),
            std::string::npos);
  // An unknown device of the same architecture falls back one level, in both paths.
  const std::string other = build + "/profile_consumer --profile " + dir +
                            "/profile.json --backend opencl --vendor Else --name Other --arch " + d.arch +
                            " --type gpu > " + dir + "/other.txt";
  ASSERT_EQ(std::system(other.c_str()), 0);
  EXPECT_NE(slurp(dir + "/other.txt").find("json: level=same_architecture"), std::string::npos);
  EXPECT_NE(slurp(dir + "/other.txt").find("header: level=same_architecture"), std::string::npos);
}

TEST(Merge, CombinesMachinesWithoutDuplicates) {
  const std::string dir = test::scratch_dir("merge");
  const std::string a = dir + "/a.db", b = dir + "/b.db", into = dir + "/all.db";
  {
    results::Store sa(a), sb(b);
    test::record_synthetic(sa, test::synthetic_device(), 1 << 20, 10);
    test::record_synthetic(sb, other_machine(), 1 << 20, 0, 7);
  }
  const int per_a = count(a, "measurements"), per_b = count(b, "measurements");
  auto r = run_varex({"merge", "--into", into, a, b, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(into, "measurements"), per_a + per_b);
  EXPECT_EQ(count(into, "samples"), count(a, "samples") + count(b, "samples"));
  EXPECT_EQ(count(into, "devices"), 2);
  EXPECT_EQ(count(into, "sessions"), 3);
  // Again, and the other way round: nothing new.
  r = run_varex({"merge", "--into", into, b, a});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(into, "measurements"), per_a + per_b);
  EXPECT_EQ(count(into, "sessions"), 3);
  const auto best = run_varex({"best", "--db", into, "--json"});
  EXPECT_EQ(nlohmann::json::parse(best.out).size(), 2u);
  EXPECT_EQ(run_varex({"merge", "--into", into, dir + "/missing.db"}).status, 2);
  EXPECT_EQ(run_varex({"merge", "--into", into, into}).status, 2);
}

TEST(KtT4, ExportsEveryMeasurement) {
  const std::string dir = test::scratch_dir("t4");
  {
    results::Store store(dir + "/v.db");
    test::record_synthetic(store, test::synthetic_device(), 1 << 20);
  }
  const auto r = run_varex({"export", "--db", dir + "/v.db", "--format", "kt-t4", "--out", dir + "/t4"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::size_t results = 0, files = 0;
  std::set<std::string> invalidity;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/t4")) {
    const auto j = nlohmann::json::parse(slurp(e.path()));
    if (e.path().string().find(".metadata.") != std::string::npos) {
      EXPECT_TRUE(j["metadata"].contains("hardware"));
      continue;
    }
    ++files;
    EXPECT_EQ(j["schema_version"], "1.0.0");
    for (const auto& x : j["results"]) {
      ++results;
      invalidity.insert(x["invalidity"]);
      for (const char* key : {"configuration", "times", "invalidity", "correctness"})
        EXPECT_TRUE(x.contains(key));
    }
  }
  EXPECT_EQ(files, 1u);
  // Every search measurement (T4 records what a search observed; re-measurements are varex's own step).
  results::Store store(dir + "/v.db", results::Database::Mode::Existing);
  results::Statement search(store.db(), "SELECT COUNT(*) FROM measurements WHERE purpose = 'search'");
  search.step();
  EXPECT_EQ(static_cast<int>(results), search.integer(0));
  EXPECT_EQ(invalidity, (std::set<std::string>{"correct", "correctness", "runtime"}));
}

TEST(Report, WritesCsvAndPlots) {
  const std::string dir = test::scratch_dir("report");
  {
    results::Store store(dir + "/v.db");
    test::record_synthetic(store, test::synthetic_device(), 1 << 20, 40);
  }
  // A trailing slash, as a user types a directory: the paths printed are the plain ones (issue 28).
  const auto r = run_varex({"report", "--db", dir + "/v.db", "--out", dir + "/report/"});
  ASSERT_EQ(r.status, 0) << r.err << slurp(dir + "/report/report.log");
  EXPECT_EQ(r.out.find("//"), std::string::npos) << r.out;
  for (const char* f :
       {"devices.csv", "sessions.csv", "measurements.csv", "best.csv", "defaults.csv", "index.html"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/report/" + f)) << f;
  }
  const std::string html = slurp(dir + "/report/index.html");
  for (const char* series : {"Heat map", "Tunable speedups", "Kernel against transfer time", "Convergence",
                             "Bandwidth", "exhaustive", "random", "ocl:0:0"}) {
    EXPECT_NE(html.find(series), std::string::npos) << series;
  }
  EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);  // self-contained
  EXPECT_EQ(html.find("http"), std::string::npos);                    // nothing fetched from the network
  const std::string measurements = slurp(dir + "/report/measurements.csv");
  EXPECT_NE(measurements.find("p_grid"), std::string::npos);
}

// One operator's benchmarks run; every operator's workload is prepared only where it fits (the contract
// tests run every operator's variants: here it is the benchmark binary that is tested).
TEST(Bench, GoogleBenchmarkSmokeRunOnTheCpuDevice) {
  const std::string dir = test::scratch_dir("bench");
  const std::string out = dir + "/bench.json";
  const std::string cmd = std::string(VAREX_BENCH) + " --varex-device=" + test::cpu_device().id +
                          " --varex-op=selection --varex-rows=30000 --benchmark_min_time=0.01 "
                          "--benchmark_format=json > " +
                          out + " 2> " + dir + "/err";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir + "/err");
  const auto j = nlohmann::json::parse(slurp(out));
  std::set<std::string> names;
  for (const auto& b : j["benchmarks"]) {
    names.insert(b["name"].get<std::string>().substr(0, b["name"].get<std::string>().find("/manual_time")));
    EXPECT_GT(b["real_time"].get<double>(), 0);
    EXPECT_GT(b["GB/s"].get<double>(), 0);
    EXPECT_FALSE(b.contains("error_occurred")) << b.dump();
  }
  const std::string prefix = "selection/" + test::cpu_device().id + "/";
  EXPECT_EQ(names, (std::set<std::string>{prefix + "default", prefix + "runtime_copy"}));
  // Every operator at 2^33 rows: more than the device holds, so each is left out with a note and nothing is
  // prepared; the binary still succeeds.
  const std::string all = std::string(VAREX_BENCH) + " --varex-device=" + test::cpu_device().id +
                          " --varex-rows=2^33 --benchmark_format=json > " + dir + "/all.json 2> " + dir +
                          "/all.err";
  ASSERT_EQ(std::system(all.c_str()), 0) << slurp(dir + "/all.err");
  EXPECT_EQ(slurp(dir + "/all.json").find("\"name\""), std::string::npos) << "no benchmark runs";
  for (const std::string& op : test::operator_names()) {
    EXPECT_NE(
        slurp(dir + "/all.err").find(op + " on " + test::cpu_device().id + " left out: input too large"),
        std::string::npos)
        << op << ": " << slurp(dir + "/all.err");
  }
}

TEST(Bench, FlagsAreDeclaredAndCheckedAndTimesShowInCompare) {
  const std::string dir = test::scratch_dir("bench-flags");
  auto run = [&](const std::string& args, const std::string& out) {
    return std::system(
        (std::string(VAREX_BENCH) + " " + args + " > " + dir + "/" + out + " 2> " + dir + "/err").c_str());
  };
  ASSERT_EQ(run("--help", "help"), 0);
  for (const char* flag :
       {"--varex-device", "--varex-op", "--varex-rows", "--varex-profile", "--varex-db", "--varex-objective"})
    EXPECT_NE(slurp(dir + "/help").find(flag), std::string::npos) << flag;
  EXPECT_EQ(WEXITSTATUS(run("--varex-objective=watts", "out")), 2);
  EXPECT_NE(slurp(dir + "/err").find("--varex-objective: 'watts' is not one"), std::string::npos)
      << slurp(dir + "/err");
  // Typos are refused with exit status 2 and named.
  EXPECT_EQ(WEXITSTATUS(run("--varex-op=selectoin", "out")), 2);
  EXPECT_NE(slurp(dir + "/err").find("unknown operator 'selectoin'"), std::string::npos)
      << slurp(dir + "/err");
  // Zero rows left most operators out and timed the rest on nothing (issue 28).
  EXPECT_EQ(WEXITSTATUS(run("--varex-rows=0", "out")), 2);
  EXPECT_NE(slurp(dir + "/err").find("--varex-rows 0"), std::string::npos) << slurp(dir + "/err");
  EXPECT_EQ(WEXITSTATUS(run("--varex-colour=red", "out")), 2);
  EXPECT_NE(slurp(dir + "/err").find("unknown flag '--varex-colour'"), std::string::npos);
  EXPECT_EQ(WEXITSTATUS(run("--benchmark_min_tim=1", "out")), 2);

  // A workload that fits the cache runs round copies of itself instead of untimed flushes, so the device
  // time Google Benchmark counts is the time it spends: its min time is the budget.
  const std::string common = "--varex-op=selection --varex-device=" + test::cpu_device().id +
                             " --varex-rows=2^14 --benchmark_min_time=0.05 --benchmark_format=json";
  ASSERT_EQ(run(common, "a.json"), 0) << slurp(dir + "/err");
  ASSERT_EQ(run(common, "b.json"), 0) << slurp(dir + "/err");
  // While a workload is prepared, before any benchmark prints, it says so (issue 28: silent for minutes).
  EXPECT_NE(slurp(dir + "/err").find("varex-bench: preparing selection on " + test::cpu_device().id),
            std::string::npos)
      << slurp(dir + "/err");
  const auto j = nlohmann::json::parse(slurp(dir + "/a.json"));
  bool found = false;
  for (const auto& b : j["benchmarks"]) {
    if (b["name"].get<std::string>().find("/default/") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(b["time_unit"], "ns");
    EXPECT_GT(b["input copies"].get<double>(), 1);
    EXPECT_GE(b["iterations"].get<double>() * b["real_time"].get<double>() * 1e-9, 0.05);
  }
  EXPECT_TRUE(found) << j.dump();
  // compare.py (Debian's libbenchmark-tools) shows the times: non-zero Old/New columns.
  ASSERT_EQ(std::system(("/usr/bin/python3 /usr/share/benchmark/compare.py --no-color benchmarks " + dir +
                         "/a.json " + dir + "/b.json > " + dir + "/compare 2>&1")
                            .c_str()),
            0)
      << slurp(dir + "/compare");
  std::istringstream lines(slurp(dir + "/compare"));
  std::string line;
  bool shown = false;
  while (std::getline(lines, line)) {
    if (line.find("/default/manual_time") == std::string::npos) continue;
    std::istringstream cells(line);
    std::string name;
    double change_time, change_cpu, old_time, new_time;
    cells >> name >> change_time >> change_cpu >> old_time >> new_time;
    EXPECT_GT(old_time, 0) << line;
    EXPECT_GT(new_time, 0) << line;
    shown = true;
  }
  EXPECT_TRUE(shown) << slurp(dir + "/compare");
}

}  // namespace
}  // namespace varex
