#include <gtest/gtest.h>
#include <cmath>

#include <algorithm>
#include <map>
#include <set>

#include "base/errors.hpp"
#include "operators/selection/selection_space.hpp"
#include "tuner/strategy.hpp"
#include "variants/shard.hpp"

namespace varex::variants {
namespace {

DeviceInfo device(Backend backend, std::uint64_t max_wg, std::uint32_t cus = 4) {
  DeviceInfo d;
  d.id = backend == Backend::Cuda ? "cuda:0" : "ocl:0:0";
  d.backend = backend;
  d.max_work_group = max_wg;
  d.compute_units = cus;
  return d;
}

// Every point of the product, filtered by the constraints one by one: the reference for enumerate().
std::vector<Params> brute_force(const Space& space) {
  std::vector<Params> out;
  for (std::uint64_t i = 0; i < space.cardinality(); ++i) {
    Params p = space.at(i);
    bool ok = true;
    for (const auto& c : space.constraints()) ok = ok && c.holds(p);
    if (ok) out.push_back(p);
  }
  return out;
}

TEST(Space, EnumerationMatchesTheFilteredProduct) {
  for (std::uint64_t rows : {0ULL, 1ULL, 1000ULL, 11999989ULL, 1ULL << 20}) {
    const Space space = operators::selection_space({device(Backend::OpenCL, 1024), rows});
    const auto enumerated = space.enumerate();
    EXPECT_EQ(enumerated, brute_force(space)) << rows;
    for (const Params& p : enumerated) EXPECT_FALSE(space.violation(p)) << describe(p);
  }
}

TEST(Space, IndexRoundTrips) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 256), 4096});
  for (std::uint64_t i = 0; i < space.cardinality(); i += 7) EXPECT_EQ(space.index_of(space.at(i)), i);
}

TEST(Space, DeviceLimitsShapeTheValues) {
  const Space ocl = operators::selection_space({device(Backend::OpenCL, 256), 1 << 20});
  const auto& locals = ocl.tunable("local").values;
  EXPECT_EQ(locals, (std::vector<Value>{Value{"auto"}, 32, 64, 128, 256}));
  EXPECT_EQ(ocl.tunable("vec").values.size(), 5u);
  const Space cuda = operators::selection_space({device(Backend::Cuda, 1024), 1 << 20});
  EXPECT_EQ(cuda.tunable("vec").values, (std::vector<Value>{1, 2, 4}));
  for (const Params& p : cuda.enumerate()) EXPECT_LE(get_int(p, "vec"), 4);
}

TEST(Space, ConstraintsExcludeTheInvalidCombinations) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 1024), 11999989});
  for (const Params& p : space.enumerate()) {
    const bool loop = p.at("kernel") == Value{"loop"};
    const std::int64_t ept = get_int(p, "ept");
    EXPECT_EQ(ept % get_int(p, "vec"), 0);
    if (loop) {
      EXPECT_EQ(get_int(p, "vec"), 1);
      EXPECT_NE(p.at("padding"), Value{"guard"});
      EXPECT_EQ(p.at("grid"), Value{"cover"});
    }
    if (ept < 8) {
      EXPECT_NE(p.at("local"), Value{"auto"});
    }
    if (p.at("padding") == Value{"none"} && p.at("local") != Value{"auto"}) {
      EXPECT_EQ(((11999989 + ept - 1) / ept) % get_int(p, "local"), 0);
    }
  }
}

TEST(Space, DefaultIsTheSourceKernelAndAlwaysValid) {
  for (Backend b : {Backend::OpenCL, Backend::Cuda}) {
    for (std::uint64_t rows : {0ULL, 1ULL, 11999989ULL}) {
      const Space space = operators::selection_space({device(b, 1024), rows});
      const Params d = space.defaults();
      EXPECT_FALSE(space.violation(d));
      EXPECT_EQ(d.at("kernel"), Value{"loop"});
      EXPECT_EQ(d.at("ept"), Value{8});
      EXPECT_EQ(d.at("local"), Value{"auto"});
    }
  }
}

TEST(Space, SettingsAreParsedAndChecked) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 1024), 1 << 20});
  const Params p =
      space.with_settings(space.defaults(), {{"kernel", "overflow"}, {"local", "128"}, {"padding", "guard"}});
  EXPECT_EQ(p.at("local"), Value{128});
  EXPECT_THROW(space.with_settings(space.defaults(), {{"colour", "red"}}), UsageError);
  EXPECT_THROW(space.with_settings(space.defaults(), {{"local", "100"}}), UsageError);
  try {
    space.with_settings(space.defaults(), {{"padding", "guard"}});  // the loop kernel cannot be guarded
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("guard"), std::string::npos);
  }
}

TEST(Space, PinsRestrictTheEnumeration) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 1024), 1 << 20});
  const auto pinned = space.enumerate({{"kernel", "overflow"}, {"local", "128,256"}});
  ASSERT_FALSE(pinned.empty());
  std::set<std::string> locals;
  for (const Params& p : pinned) {
    EXPECT_EQ(p.at("kernel"), Value{"overflow"});
    locals.insert(to_string(p.at("local")));
  }
  EXPECT_EQ(locals, (std::set<std::string>{"128", "256"}));
  EXPECT_THROW(space.enumerate({{"local", "999"}}), UsageError);
}

// count_valid is kept by a space's copies (a tune asked four times for the group-by's 2 million points), and
// not by the spaces made from it by narrowing or constraining it.
TEST(Space, ACountIsKeptByCopiesAndNotByTheSpacesMadeFromThem) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 1024), 1 << 20});
  const std::uint64_t all = space.count_valid();
  EXPECT_EQ(space.restricted({}).count_valid(), all);
  const Space narrowed = space.restricted({{"kernel", "overflow"}});
  EXPECT_EQ(narrowed.count_valid(), narrowed.enumerate().size());
  EXPECT_LT(narrowed.count_valid(), all);
  const Space constrained = space.with_constraint(
      {"no overflow kernel", [](const Params& p) { return p.at("kernel") != Value{"overflow"}; }});
  EXPECT_EQ(constrained.count_valid(), constrained.enumerate().size());
  EXPECT_EQ(constrained.count_valid() + narrowed.count_valid(), all);
}

TEST(Space, NeighboursDifferInOneTunableAndAreValid) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 1024), 1 << 20});
  const Params start = space.defaults();
  const auto neighbours = space.neighbours(start);
  EXPECT_FALSE(neighbours.empty());
  for (const Params& n : neighbours) {
    EXPECT_TRUE(space.valid(n));
    int differences = 0;
    for (const auto& [name, value] : n) differences += start.at(name) != value;
    EXPECT_EQ(differences, 1);
  }
}

// mode=b ignores x (as a fused plan ignores its later steps' shapes).
Space conditional_space() {
  return Space("conditional",
               {{"mode", TunableKind::Compile, {Value{"a"}, Value{"b"}}, Value{"a"}, ""},
                {"x", TunableKind::Compile, {1, 2, 3}, Value{1}, ""},
                {"y", TunableKind::Launch, {1, 2}, Value{1}, ""}},
               {}, {{"b ignores x", [](const Params& p) { return p.at("mode") == Value{"b"}; }, {"x"}}});
}

// Too large to walk: a user's 9 kernels (u, v) beside a built-in's 16^6 points (b0..b5), each side's tunables
// inactive on the other side, as a user operator with a built-in's contract has them.
TEST(Space, TheSideWhoseCanonicalPointsAreFewIsCountedAndListedAtOnce) {
  std::vector<Tunable> tunables{
      {"origin", TunableKind::Compile, {Value{"user"}, Value{"varex"}}, Value{"user"}, ""}};
  std::vector<Value> sixteen;
  for (int v = 1; v <= 16; ++v) sixteen.push_back(v);
  std::vector<std::string> built_in;
  for (int i = 0; i < 6; ++i) {
    built_in.push_back("b" + std::to_string(i));
    tunables.push_back({built_in.back(), TunableKind::Compile, sixteen, Value{1}, ""});
  }
  for (const char* name : {"u", "v"})
    tunables.push_back({name, TunableKind::Compile, {1, 2, 3}, Value{1}, ""});
  const auto user = [](const Params& p) { return p.at("origin") == Value{"user"}; };
  const Space space("contract", tunables, {},
                    {{"the user's", user, built_in, {"origin"}},
                     {"varex's", [&](const Params& p) { return !user(p); }, {"u", "v"}, {"origin"}}});
  ASSERT_GT(space.cardinality(), Space::kWalkLimit);
  const Space users = space.restricted({{"origin", "user"}});
  EXPECT_EQ(users.count_valid(), 9u);
  // Listed at once: the built-in's points are skipped a tunable at a time, not one by one.
  const auto listed = users.enumerate();
  EXPECT_EQ(listed.size(), 9u);
  for (const Params& p : listed) EXPECT_TRUE(space.is_canonical(p) && user(p)) << describe(p);
  const double expected = 9 + std::pow(16.0, 6);
  EXPECT_NEAR(static_cast<double>(space.count_valid()), expected, expected * 0.02);
}

Params point(const char* mode, int x, int y) {
  return {{"mode", Value{mode}}, {"x", Value{x}}, {"y", Value{y}}};
}

TEST(Space, InactiveTunablesMakeOneVariantOfThePointsThatDifferOnlyInThem) {
  const Space space = conditional_space();
  EXPECT_EQ(space.count_valid(), 8u);  // a: 3 x 2; b: 1 x 2
  const auto all = space.enumerate();
  ASSERT_EQ(all.size(), 8u);
  for (const Params& p : all) EXPECT_TRUE(space.is_canonical(p)) << describe(p);
  EXPECT_EQ(space.canonical(point("b", 3, 2)), point("b", 1, 2));
  EXPECT_EQ(space.canonical(point("a", 3, 2)), point("a", 3, 2));
  EXPECT_EQ(space.with_settings(space.defaults(), {{"mode", "b"}, {"x", "3"}}), point("b", 1, 1));
  // Neighbours are canonical and never the point itself.
  EXPECT_EQ(space.neighbours(point("a", 2, 1)).size(), 4u);
  const auto from_b = space.neighbours(point("b", 1, 1));
  EXPECT_EQ(from_b, (std::vector<Params>{point("a", 1, 1), point("b", 1, 2)}));
}

// The tuner's shortcuts: the canonical form's index without building it, and validity of a point made by
// at().
TEST(Space, CanonicalIndicesAndValidityAgreeWithTheCanonicalPoint) {
  for (const Space& space :
       {conditional_space(), operators::selection_space({device(Backend::OpenCL, 256), 4096})}) {
    for (std::uint64_t i = 0; i < space.cardinality(); ++i) {
      const Params p = space.at(i);
      const std::uint64_t expected = space.index_of(space.canonical(p));
      EXPECT_EQ(space.canonical_index(p), expected) << describe(p);
      EXPECT_EQ(space.canonical_index_at(i, p), expected) << describe(p);
      EXPECT_EQ(space.valid_at(p), space.valid(p)) << describe(p);
      EXPECT_EQ(space.is_canonical(p), space.canonical(p) == p) << describe(p);
    }
  }
  // What violation() says, now that valid() finds the fault without the text.
  const Space space = conditional_space();
  EXPECT_EQ(*space.violation(Params{{"mode", Value{"a"}}, {"y", Value{1}}}), "tunable 'x' has no value");
  EXPECT_EQ(*space.violation(point("a", 9, 1)), "'9' is not a value of 'x'");
  Params extra = point("a", 1, 1);
  extra["z"] = Value{1};
  EXPECT_EQ(*space.violation(extra), "parameters name a tunable the space does not have");
  EXPECT_FALSE(space.valid(extra));
}

TEST(Space, TheTunersDrawsGiveAPartWithInactiveTunablesItsShareOfTheProduct) {
  // Pinned by a constraint instead, mode=b would be 2 of the 8 valid points: a quarter of the draws.
  int b_first = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    tuner::SearchSpace space(conditional_space(), seed);
    b_first += space.random_unseen()->at("mode") == Value{"b"};
  }
  EXPECT_GT(b_first, 160);
  EXPECT_LT(b_first, 240);
  // Every variant is drawn once, canonical, and then there is none left.
  tuner::SearchSpace space(conditional_space(), 7);
  std::set<std::uint64_t> drawn;
  while (const auto p = space.random_unseen()) {
    EXPECT_TRUE(space.space().is_canonical(*p));
    EXPECT_TRUE(drawn.insert(space.space().index_of(*p)).second) << describe(*p);
    space.mark(*p);
  }
  EXPECT_EQ(drawn.size(), 8u);
  // A point marked is its variant marked.
  tuner::SearchSpace fresh(conditional_space(), 7);
  fresh.mark(point("b", 3, 2));
  EXPECT_TRUE(fresh.seen(point("b", 1, 2)));
  EXPECT_FALSE(fresh.seen(point("a", 3, 2)));
}

TEST(Space, CompilePartKeepsOnlyCompileTimeTunables) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 1024), 1 << 20});
  const Params part = space.compile_part(space.defaults());
  EXPECT_EQ(part.size(), 3u);
  EXPECT_TRUE(part.count("kernel") && part.count("ept") && part.count("vec"));
}

// One point per program, as listing the whole space and keeping each compile part's first point gives them:
// also where a compile-time tunable is inactive (mode=b ignores x, so b is one program, not three).
TEST(Space, CompilePartsAreTheProgramsOfTheEnumeration) {
  const Space selection = operators::selection_space({device(Backend::OpenCL, 256), 4096});
  const Space inactive = conditional_space();
  for (const Space* space : {&selection, &inactive}) {
    std::map<Params, Params> first;
    for (const Params& p : space->enumerate()) first.emplace(space->compile_part(p), p);
    std::vector<Params> want;
    for (const auto& [part, p] : first) want.push_back(p);
    std::vector<Params> got = space->compile_parts();
    std::sort(got.begin(), got.end(), [&](const Params& a, const Params& b) {
      return space->compile_part(a) < space->compile_part(b);
    });
    EXPECT_EQ(got, want) << space->op();
  }
  EXPECT_EQ(inactive.compile_parts().size(), 4u);  // a with x = 1, 2, 3; b
}

// The shards of a space are disjoint and cover its variants, each variant in exactly one, and they hold
// equal numbers of variants within one: for any number of shards, more shards than variants included, and
// for a space with inactive tunables, whose variants a shard judges by their canonical form.
TEST(Shard, ShardsPartitionTheVariantsInEqualParts) {
  const Space selection = operators::selection_space({device(Backend::OpenCL, 256), 4096});
  const Space inactive = conditional_space();
  for (const Space* space : {&selection, &inactive}) {
    const auto all = space->enumerate();
    for (std::uint32_t count :
         {1u, 3u, 4u, static_cast<std::uint32_t>(space == &inactive ? all.size() + 3 : 7)}) {
      std::multiset<std::string> seen;
      std::uint64_t previous_end = 0;
      for (std::uint32_t k = 0; k < count; ++k) {
        const IndexRange range = shard_range(*space, {k, count});
        EXPECT_EQ(range.begin, previous_end) << k << "/" << count;
        previous_end = range.end;
        const Space shard = shard_of(*space, {k, count});
        const auto part = shard.enumerate();
        EXPECT_EQ(part.size(), shard.count_valid());
        EXPECT_LE(part.size(), all.size() / count + 1) << k << "/" << count;
        EXPECT_GE(part.size(), all.size() / count) << k << "/" << count;
        for (const Params& p : part) seen.insert(describe(p));
      }
      EXPECT_EQ(previous_end, space->cardinality());
      std::multiset<std::string> expected;
      for (const Params& p : all) expected.insert(describe(p));
      EXPECT_EQ(seen, expected) << space->op() << " in " << count << " shards";
    }
  }
}

TEST(Shard, APointOutsideItsShardIsInvalidAndSaysWhy) {
  const Space space = operators::selection_space({device(Backend::OpenCL, 256), 4096});
  const auto all = space.enumerate();
  const Space last = shard_of(space, {3, 4});
  const auto reason = last.violation(all.front());
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("outside shard 3/4"), std::string::npos) << *reason;
  EXPECT_FALSE(last.violation(all.back()));
}

TEST(Shard, ParsesKOfNAndRefusesTheRest) {
  const Shard s = Shard::parse("2/4");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.to_string(), "2/4");
  for (const char* bad : {"", "4/4", "1/0", "2", "a/4", "1/4x", "-1/4", "0/100000", "1 /4"}) {
    EXPECT_THROW(Shard::parse(bad), UsageError) << bad;
  }
}

}  // namespace
}  // namespace varex::variants
