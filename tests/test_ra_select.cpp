// ra_select (Red Fox SELECT) on the OpenCL CPU device: both algorithms, both layouts, a spread of local
// sizes, items per work-item and grids, on sizes that are no multiple of 8, 32 or the local size, with 1
// to 3 values, against an expectation computed here.
// That a poisoned output never verifies is the operator contract's check (tests/test_contract.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "base/errors.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_select/ra_select.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

datasets::Relation edge_relation(std::uint64_t rows, std::uint32_t values, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::uint32_t edges[] = {0, 1, 99, 100, 101, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  datasets::Relation r;
  r.columns.assign(1 + values, std::vector<std::uint32_t>(rows));
  for (std::uint64_t i = 0; i < rows; ++i) {
    r.columns[0][i] = rng() % 3 == 0 ? edges[rng() % 9] : static_cast<std::uint32_t>(rng());
    for (std::uint32_t c = 1; c <= values; ++c) r.columns[c][i] = static_cast<std::uint32_t>(rng());
  }
  return r;
}

datasets::WorkloadSpec select_workload(const datasets::Relation& r,
                                       const std::map<std::string, std::string>& query) {
  return test::relation_file_workload(RaSelectOperator(), r,
                                      std::to_string(r.rows()) + "-" + std::to_string(r.values()), query);
}

// The digest of the tuples whose key passes `keep`, in input order, computed without the operator's code.
template <typename Keep>
Digest select_expected(const datasets::Relation& r, Keep keep) {
  Digest d;
  for (std::uint64_t i = 0; i < r.rows(); ++i) {
    if (!keep(r.columns[0][i])) continue;
    const std::uint64_t a = r.columns[0][i];
    const std::uint64_t b = r.columns[1][i];
    ++d.rows;
    d.checksum += d.rows * (a * 1000003u + b);
  }
  return d;
}

// The compile-time variants every test here builds (algorithm, layout, local, ept): one set shared by the
// tests, so that a test finds the programs an earlier one compiled, instead of a cross product per test.
// Each algorithm with each layout, with small and large tiles (32 to 1024 tuples); between them every
// local size (32, 64, 128) and ept (1, 2, 4, 8) the tests used.
struct SelectProgram {
  const char* algorithm;
  const char* layout;
  std::int64_t local, ept;
};
const SelectProgram kSelectPrograms[] = {
    {"source", "aos", 32, 1},       {"source", "soa", 128, 8},     {"source", "soa", 64, 4},
    {"single_pass", "aos", 128, 8}, {"single_pass", "soa", 32, 1}, {"single_pass", "aos", 64, 2},
};

std::vector<variants::Params> select_sampled(std::vector<variants::Params> all) {
  std::vector<variants::Params> out;
  for (auto& p : all) {
    for (const SelectProgram& program : kSelectPrograms) {
      if (variants::get_string(p, "algorithm") == program.algorithm &&
          variants::get_string(p, "layout") == program.layout &&
          variants::get_int(p, "local") == program.local && variants::get_int(p, "ept") == program.ept) {
        out.push_back(std::move(p));
        break;
      }
    }
  }
  return out;
}

TEST(RaSelect, EveryAlgorithmAndLayoutOnAwkwardSizes) {
  std::uint32_t values = 0;
  for (std::uint64_t rows : {1, 7, 33, 1000, 4099}) {
    values = values % 3 + 1;
    const auto r = edge_relation(rows, values, static_cast<std::uint32_t>(rows));
    // 100 < key <= 0x80000000, negated
    const auto spec = select_workload(
        r, {{"lo", "100"}, {"lo_inclusive", "false"}, {"hi", "2147483648"}, {"negate", "true"}});
    test::verify_variants(RaSelectOperator(), spec,
                          select_expected(r, [](std::uint32_t k) { return !(k > 100 && k <= 0x80000000u); }),
                          {{"grid", "cover,2"}}, select_sampled);
  }
}

TEST(RaSelect, QueryShapesOnAPrimeSize) {
  const auto r = edge_relation(100003, 3, 5);
  struct Case {
    std::map<std::string, std::string> query;
    std::function<bool(std::uint32_t)> keep;
  };
  const std::vector<Case> cases{
      {{{"lo", "0"}, {"hi", "4294967295"}}, [](std::uint32_t) { return true; }},
      {{{"lo", "101"}, {"hi", "100"}}, [](std::uint32_t) { return false; }},
      {{{"hi", "0"}, {"hi_inclusive", "false"}}, [](std::uint32_t) { return false; }},
      {{{"lo", "4294967295"}}, [](std::uint32_t k) { return k == 0xFFFFFFFFu; }},
      {{{"hi", "99"}, {"negate", "true"}}, [](std::uint32_t k) { return k > 99; }},
  };
  for (const Case& c : cases) {
    test::verify_variants(RaSelectOperator(), select_workload(r, c.query), select_expected(r, c.keep),
                          {{"grid", "cover,1"}}, select_sampled);
  }
}

TEST(RaSelect, GeneratedRelationsWithEveryKeyDistribution) {
  for (const char* keys : {"uniform", "sorted", "dup"}) {
    WorkloadOptions options;
    options.flags = {{"rows", "4099"}, {"values", "2"}, {"keys", keys}, {"selectivity", "0.3"}};
    const auto spec = RaSelectOperator().workload(options);
    const auto r =
        datasets::generate_relation(4099, 2, datasets::key_distribution_from_string(keys), options.seed());
    const std::uint32_t cut = static_cast<std::uint32_t>(0.3 * 4294967296.0 + 0.5);
    test::verify_variants(RaSelectOperator(), spec,
                          select_expected(r, [cut](std::uint32_t k) { return k < cut; }),
                          {{"grid", "cover,4"}}, select_sampled);
  }
}

TEST(RaSelect, RefusesWhatItDoesNotTake) {
  RaSelectOperator op;
  WorkloadOptions foreign;
  foreign.flags["plant"] = "x";
  EXPECT_THROW(check_declared(op, foreign), UsageError);
  WorkloadOptions key;
  key.query["attr"] = "v0";
  EXPECT_THROW(check_declared(op, key), UsageError);

  WorkloadOptions bounds;
  bounds.flags["rows"] = "10";
  bounds.query["lo"] = "-1";
  EXPECT_THROW(op.workload(bounds), UsageError);
  bounds.query["lo"] = "4294967296";
  EXPECT_THROW(op.workload(bounds), UsageError);
}

}  // namespace
}  // namespace varex::operators
