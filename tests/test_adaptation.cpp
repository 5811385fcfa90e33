// Online adaptation (runtime/adaptation.hpp) replayed without a device: a small space of two tunables with
// planted times, one variant wrong, searched by the tuner's strategies over the calls. The tuner must check
// every candidate before its times count, against the defaults first and then against the fastest candidate
// that agreed with them; never settle on the wrong one however fast; keep its exploring calls, and their
// time, within the share; and find the fastest variant that its search reaches.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "runtime/adaptation.hpp"
#include "support.hpp"
#include "tuner/strategy.hpp"

namespace varex::runtime {
namespace {

// x and y from 0 to `n` - 1, the defaults at (0, 0).
variants::Space grid(std::int64_t n) {
  std::vector<variants::Tunable> tunables;
  for (const char* name : {"x", "y"}) {
    variants::Tunable t;
    t.name = name;
    for (std::int64_t v = 0; v < n; ++v) t.values.emplace_back(std::in_place_type<std::int64_t>, v);
    t.default_value = t.values.front();
    tunables.push_back(std::move(t));
  }
  return variants::Space("grid", std::move(tunables), {});
}

variants::Params at(std::int64_t x, std::int64_t y) {
  return {{"x", variants::Value{x}}, {"y", variants::Value{y}}};
}

std::string name_of(const variants::Params& p) {
  return "x" + variants::to_string(p.at("x")) + "y" + variants::to_string(p.at("y"));
}

struct Replay {
  std::function<double(std::int64_t, std::int64_t)> ms;  // each variant's device time
  std::string wrong;                                     // the variant whose result differs
  std::function<bool(const variants::Params&)> runnable = [](const variants::Params&) { return true; };
  std::vector<std::string> references;  // what each check was compared with
  std::vector<std::string> checked;     // the candidates checked, in order
  int calls = 0, explored = 0;

  double time_of(const Candidate& c) const {
    return ms(std::get<std::int64_t>(c.params.at("x")), std::get<std::int64_t>(c.params.at("y")));
  }
  void run(ClassTuner& tuner, int n) {
    for (int i = 0; i < n; ++i) {
      const ClassTuner::Call call = tuner.plan_call(runnable);
      const Candidate& returned = tuner.candidates()[call.returns];
      EXPECT_TRUE(returned.verified) << "call " << i << " returned the unchecked " << returned.variant;
      EXPECT_NE(returned.variant, wrong);
      EXPECT_TRUE(runnable(returned.params)) << returned.variant;
      std::optional<ClassTuner::Check> check;
      if (call.checks) {
        const Candidate& c = tuner.candidates()[*call.checks];
        EXPECT_TRUE(runnable(c.params)) << c.variant;
        references.push_back(returned.variant);
        checked.push_back(c.variant);
        check = ClassTuner::Check{c.variant == wrong ? "differs" : "", time_of(c)};
      }
      tuner.finish_call(call, time_of(returned), check);
      ++calls;
      explored += call.explore ? 1 : 0;
    }
  }
};

TEST(Adaptation, ChecksAgainstTheFastestAgreeingCandidateAndNeverSettlesOnAWrongOne) {
  Replay replay;
  // Faster towards (4, 4), where the local search climbs; (4, 3) faster still, but wrong.
  replay.ms = [](std::int64_t x, std::int64_t y) {
    return x == 4 && y == 3 ? 1.0
                            : 100.0 - 10.0 * static_cast<double>(x) - 9.0 * static_cast<double>(y) + 1.0;
  };
  replay.wrong = "x4y3";
  const double share = 0.2;
  ClassTuner tuner(grid(5), {at(0, 0)}, 0, "local", share, name_of);
  replay.run(tuner, 400);

  const ClassReport r = tuner.report();
  EXPECT_EQ(tuner.candidates()[r.settled].variant, "x4y4");
  EXPECT_DOUBLE_EQ(r.settled_ms, 1 + 100 - 40 - 36);
  EXPECT_EQ(r.rejected, 1u);
  for (const Candidate& c : tuner.candidates()) {
    if (c.variant == "x4y3") {
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
  EXPECT_EQ(replay.references.front(), "x0y0");
  EXPECT_NE(replay.references.back(), "x0y0");
  EXPECT_EQ(tuner.candidates()[tuner.reference()].variant, "x4y4");
  // What exploring cost beyond the fastest candidate stays within the share (one call past it at most).
  EXPECT_GT(r.exploring_ms, 0);
  EXPECT_LE(r.exploring_ms, share * r.total_ms + 100);
  // Regret: the time above the settled variant's, summed; below the total.
  EXPECT_GT(r.regret_ms, 0);
  EXPECT_LT(r.regret_ms, r.total_ms);
}

// Every strategy of the tuner drives the calls: the wrong variant is never returned nor settled on, and the
// settled variant is the fastest verified one by median.
TEST(Adaptation, EveryStrategyOfTheTunerCanDriveTheCalls) {
  for (const std::string& name : tuner::strategy_names()) {
    Replay replay;
    replay.ms = [](std::int64_t x, std::int64_t y) {
      return x == 1 && y == 2 ? 0.5 : 10.0 + static_cast<double>((x * 7 + y * 3) % 5);
    };
    replay.wrong = "x1y2";
    ClassTuner tuner(grid(4), {at(0, 0)}, 0, name, 0.5, name_of);
    replay.run(tuner, 120);
    const ClassReport r = tuner.report();
    EXPECT_NE(tuner.candidates()[r.settled].variant, "x1y2") << name;
    EXPECT_GE(r.candidates, 4u) << name;
    for (const Candidate& c : tuner.candidates()) {
      if (!c.ms.empty()) {
        EXPECT_TRUE(c.verified) << name << " " << c.variant;
        EXPECT_GE(c.median(), r.settled_ms) << name << " " << c.variant;
      }
    }
  }
  EXPECT_THROW(ClassTuner(grid(2), {at(0, 0)}, 0, "no-such", 0.1, name_of), varex::UsageError);
}

// Defaults far slower than every candidate (the join's are 250 times its tuned variant's): a check runs the
// reference, which a call not exploring would have run as well, so what counts against the share of device
// time is the candidate's run alone, and the search goes on at the share of calls.
TEST(Adaptation, ASlowReferenceDoesNotHoldTheSearchBack) {
  Replay replay;
  replay.ms = [](std::int64_t x, std::int64_t y) {
    return x == 0 && y == 0 ? 1000.0 : 10.0 + 100.0 * static_cast<double>(6 - x - y);
  };
  ClassTuner tuner(grid(4), {at(0, 0)}, 0, "local", 0.1, name_of);
  replay.run(tuner, 400);
  for (const Candidate& c : tuner.candidates()) {
    if (!c.ms.empty()) {
      EXPECT_TRUE(c.verified) << c.variant;
    }
  }
  EXPECT_EQ(tuner.candidates()[tuner.report().settled].variant, "x3y3");
  EXPECT_LE(replay.explored, 40);
}

// A first-improvement local search: a candidate that beats the climb's point has its neighbours tried next,
// one value of each tunable before a second of either; variants that cannot run on the call's buffers are
// never run.
TEST(Adaptation, TheNeighboursOfANewBestAreTriedFirst) {
  Replay replay;
  // From the profile's entry (2, 2): (0, 2) is no better, (2, 0) is; then (2, 0)'s neighbours.
  replay.ms = [](std::int64_t x, std::int64_t y) {
    if (x == 2 && y == 2) return 50.0;
    if (x == 2 && y == 0) return 20.0;
    if (x == 3 && y == 0) return 5.0;
    return 90.0;
  };
  replay.runnable = [](const variants::Params& p) { return std::get<std::int64_t>(p.at("x")) != 1; };
  ClassTuner tuner(grid(4), {at(0, 0), at(2, 2)}, 1, "local", 0.5, name_of);
  replay.run(tuner, 40);
  ASSERT_GE(replay.checked.size(), 5u);
  EXPECT_EQ(replay.checked[0], "x2y2");  // the profile's entry, on the first call
  EXPECT_EQ(replay.checked[1], "x0y2");  // its neighbour in x…
  EXPECT_EQ(replay.checked[2], "x2y0");  // …and in y, the new best
  EXPECT_EQ(replay.checked[3], "x2y1");  // then (2, 0)'s: x1y0 cannot run, …
  EXPECT_EQ(replay.checked[4], "x3y0");
  EXPECT_EQ(tuner.candidates()[tuner.report().settled].variant, "x3y0");
}

TEST(Adaptation, AProfileEntryIsCheckedBeforeItsFirstCallCounts) {
  Replay replay;
  replay.ms = [](std::int64_t x, std::int64_t) { return x == 1 ? 2.0 : 10.0; };
  ClassTuner tuner(grid(2), {at(0, 0), at(1, 1)}, 1, "local", 0.1, name_of);
  replay.run(tuner, 20);
  ASSERT_GE(replay.references.size(), 1u);  // the entry was unchecked: the first call checked it
  EXPECT_EQ(replay.checked.front(), "x1y1");
  EXPECT_EQ(replay.references.front(), "x0y0");
  EXPECT_EQ(tuner.candidates()[tuner.report().settled].variant.substr(0, 2), "x1");
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
