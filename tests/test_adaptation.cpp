// Online adaptation's bandit (runtime/adaptation.hpp) replayed without a device: candidates with planted
// times, one of them wrong, and a local search whose neighbours are planted too. The tuner must check every
// candidate before its times count, against the defaults first and then against the fastest candidate that
// agreed with them; never settle on the wrong one however fast; keep its exploring calls, and their time,
// within the share; and find the fastest candidate that its search reaches.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/adaptation.hpp"
#include "support.hpp"

namespace varex::runtime {
namespace {

Candidate candidate(const std::string& variant) {
  Candidate c;
  c.variant = variant;
  c.params = {{"v", variants::Value{variant}}};
  return c;
}

struct Replay {
  std::map<std::string, double> ms;  // each variant's device time
  std::string wrong;                 // the variant whose result differs
  std::map<std::string, std::vector<std::string>> around;
  std::vector<std::string> references;  // what each check was compared with
  std::vector<std::string> checked;     // the candidates checked, in order
  int calls = 0, explored = 0;

  void run(ClassTuner& tuner, int n) {
    const ClassTuner::Neighbours neighbours = [&](const Candidate& c) {
      std::vector<Candidate> out;
      for (const std::string& v : around[c.variant]) out.push_back(candidate(v));
      return out;
    };
    for (int i = 0; i < n; ++i) {
      const ClassTuner::Call call = tuner.plan_call(neighbours);
      const Candidate& returned = tuner.candidates()[call.returns];
      EXPECT_TRUE(returned.verified) << "call " << i << " returned the unchecked " << returned.variant;
      EXPECT_NE(returned.variant, wrong);
      std::optional<ClassTuner::Check> check;
      if (call.checks) {
        const std::string& checked_variant = tuner.candidates()[*call.checks].variant;
        references.push_back(returned.variant);
        checked.push_back(checked_variant);
        check = ClassTuner::Check{checked_variant == wrong ? "differs" : "", ms.at(checked_variant)};
      }
      tuner.finish_call(call, ms.at(returned.variant), check);
      ++calls;
      explored += call.explore ? 1 : 0;
    }
  }
};

TEST(Adaptation, ChecksAgainstTheFastestAgreeingCandidateAndNeverSettlesOnAWrongOne) {
  Replay replay;
  replay.ms = {{"defaults", 100}, {"a", 40}, {"b", 20}, {"wrong", 1}, {"c", 60}, {"b1", 5}, {"b2", 30}};
  replay.wrong = "wrong";
  replay.around = {{"b", {"b1", "b2", "wrong"}}};
  std::vector<Candidate> candidates{candidate("defaults"), candidate("a"), candidate("b"), candidate("c")};
  candidates[0].verified = true;
  const double share = 0.2;
  ClassTuner tuner(candidates, 0, share);
  replay.run(tuner, 400);

  const ClassReport r = tuner.report();
  EXPECT_EQ(tuner.candidates()[r.settled].variant, "b1");  // b's neighbour, reached by the local search
  EXPECT_DOUBLE_EQ(r.settled_ms, 5);
  EXPECT_EQ(r.rejected, 1u);
  for (const Candidate& c : tuner.candidates()) {
    if (c.variant == "wrong") {
      EXPECT_TRUE(c.rejected);
      EXPECT_TRUE(c.ms.empty());
      EXPECT_EQ(c.why, "differs");
    }
  }
  EXPECT_EQ(r.calls, 400u);
  EXPECT_EQ(r.exploring_calls, static_cast<std::uint64_t>(replay.explored));
  EXPECT_LE(replay.explored, share * 400);
  // The first check is against the defaults; once a faster candidate agreed, checks compare with it.
  ASSERT_FALSE(replay.references.empty());
  EXPECT_EQ(replay.references.front(), "defaults");
  EXPECT_NE(replay.references.back(), "defaults");
  EXPECT_EQ(tuner.candidates()[tuner.reference()].variant, "b1");
  // What exploring cost beyond the fastest candidate stays within the share (one call past it at most).
  EXPECT_GT(r.exploring_ms, 0);
  EXPECT_LE(r.exploring_ms, share * r.total_ms + 100);
  // Regret: the time above the settled variant's, summed; below the total.
  EXPECT_GT(r.regret_ms, 0);
  EXPECT_LT(r.regret_ms, r.total_ms);
}

// Defaults far slower than every candidate (the join's are 250 times its tuned variant's): a check runs the
// reference, which a call not exploring would have run as well, so what counts against the share of device
// time is the candidate's run alone, and the search goes on at the share of calls.
TEST(Adaptation, ASlowReferenceDoesNotHoldTheSearchBack) {
  Replay replay;
  replay.ms = {{"defaults", 1000}, {"a", 500}, {"b", 500}, {"c", 500}, {"d", 500}, {"e", 500}, {"f", 10}};
  std::vector<Candidate> candidates{candidate("defaults"), candidate("a"), candidate("b"), candidate("c"),
                                    candidate("d"),        candidate("e"), candidate("f")};
  candidates[0].verified = true;
  ClassTuner tuner(candidates, 0, 0.1);
  replay.run(tuner, 65);  // one exploring call in ten: the sixth at call 60
  for (const Candidate& c : tuner.candidates()) EXPECT_TRUE(c.verified) << c.variant;
  EXPECT_EQ(tuner.candidates()[tuner.report().settled].variant, "f");
  EXPECT_LE(replay.explored, 7);
}

// A first-improvement local search: a candidate that beats where the calls started has its neighbours tried
// next, before the older candidates.
TEST(Adaptation, TheNeighboursOfANewBestAreTriedFirst) {
  Replay replay;
  replay.ms = {{"defaults", 100}, {"a", 50}, {"b", 90}, {"c", 95}, {"a1", 10}, {"a2", 60}};
  replay.around = {{"a", {"a1", "a2"}}};
  std::vector<Candidate> candidates{candidate("defaults"), candidate("a"), candidate("b"), candidate("c")};
  candidates[0].verified = true;
  ClassTuner tuner(candidates, 0, 0.5);
  replay.run(tuner, 12);
  ASSERT_GE(replay.checked.size(), 2u);
  EXPECT_EQ(replay.checked[0], "a");
  EXPECT_EQ(replay.checked[1], "a1");
  EXPECT_EQ(tuner.candidates()[tuner.report().settled].variant, "a1");
}

TEST(Adaptation, AProfileEntryIsCheckedBeforeItsFirstCallCounts) {
  Replay replay;
  replay.ms = {{"defaults", 10}, {"entry", 2}};
  std::vector<Candidate> candidates{candidate("defaults"), candidate("entry")};
  candidates[0].verified = true;
  ClassTuner tuner(candidates, 1, 0.1);
  replay.run(tuner, 20);
  ASSERT_EQ(replay.references.size(), 1u);  // the entry was unchecked: the first call checked it
  EXPECT_EQ(replay.references.front(), "defaults");
  EXPECT_EQ(tuner.candidates()[tuner.report().settled].variant, "entry");
}

// Pairs (two columns of 4-byte rows, no order) and 3-word tuples (one packed buffer, no order) as the device
// holds them.
harness::DeviceResult device_result(harness::Engine& engine,
                                    const std::vector<std::vector<std::uint32_t>>& columns,
                                    std::uint32_t row_bytes) {
  harness::DeviceResult r(harness::OutputKind::Pairs, {}, columns[0].size() * 4 / row_bytes);
  for (const std::vector<std::uint32_t>& c : columns) {
    auto host = engine.allocate_host(c.size() * 4);
    std::copy(c.begin(), c.end(), host->as<std::uint32_t>());
    r.buffers.push_back(engine.allocate(c.size() * 4));
    engine.upload(*r.buffers.back(), 0, *host, c.size() * 4)->elapsed_ms();
    r.parts.push_back({r.buffers.size() - 1, 0, c.size() * 4, row_bytes});
  }
  return r;
}

TEST(Adaptation, ResultsOfNoOrderAgreeAsMultisetsOfWholeRows) {
  harness::Engine& engine = test::cpu_engine();
  const auto pairs = [&](std::vector<std::uint32_t> left, std::vector<std::uint32_t> right) {
    return device_result(engine, {left, right}, 4);
  };
  EXPECT_EQ(result_difference(engine, pairs({1, 2, 3}, {10, 20, 30}), pairs({3, 1, 2}, {30, 10, 20})), "");
  // The same columns as sets, but rows split apart: (1, 20) is no row of the reference.
  EXPECT_NE(result_difference(engine, pairs({1, 2, 3}, {10, 20, 30}), pairs({1, 2, 3}, {20, 10, 30})), "");
  EXPECT_NE(result_difference(engine, pairs({1, 1, 2}, {5, 5, 6}), pairs({1, 2, 2}, {5, 6, 6})), "");
  EXPECT_NE(result_difference(engine, pairs({1, 2}, {5, 6}), pairs({1, 2, 3}, {5, 6, 7})), "");
  // Rows wider than a word (3-word tuples, packed).
  const auto tuples = [&](std::vector<std::uint32_t> words) { return device_result(engine, {words}, 12); };
  EXPECT_EQ(result_difference(engine, tuples({1, 2, 3, 4, 5, 6}), tuples({4, 5, 6, 1, 2, 3})), "");
  EXPECT_NE(result_difference(engine, tuples({1, 2, 3, 4, 5, 6}), tuples({4, 2, 3, 1, 5, 6})), "");
}

}  // namespace
}  // namespace varex::runtime
