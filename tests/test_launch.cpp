// The launch vocabulary (variants/launch.hpp) and the shapes LaunchPlan makes of it: no device needed.
#include <gtest/gtest.h>

#include "base/errors.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/operator.hpp"
#include "variants/launch.hpp"

namespace varex {
namespace {

using variants::Params;
using variants::Value;

DeviceInfo device_with(std::uint32_t compute_units) {
  DeviceInfo d;
  d.id = "ocl:0:0";
  d.max_work_group = 1024;
  d.compute_units = compute_units;
  return d;
}

TEST(Launch, GridValuesCountWorkGroups) {
  EXPECT_EQ(variants::Grid::of({{"grid", Value{"cover"}}}).work_groups(132), 0u);
  EXPECT_EQ(variants::Grid::of({{"grid", Value{4}}}).work_groups(132), 528u);
  EXPECT_EQ(variants::Grid::of({{"grid", Value{"512wg"}}}).work_groups(132), 512u);
  EXPECT_EQ(variants::Grid::of({}).work_groups(132), 0u);  // an operator without a grid covers
  EXPECT_THROW(variants::Grid::of({{"grid", Value{"wg"}}}), UsageError);
  EXPECT_THROW(variants::Grid::of({{"grid", Value{"12x"}}}), UsageError);
}

TEST(Launch, OldNamesAreReadAsGrid) {
  using Map = std::map<std::string, std::string>;
  const variants::Space launches("t", {variants::grid_tunable({Value{"cover"}}, Value{"cover"}, "rows")}, {});
  EXPECT_EQ(variants::upgrade_settings(Map{{"groups_per_cu", "cover,1,4"}, {"ept", "8"}}, launches),
            (Map{{"grid", "cover,1,4"}, {"ept", "8"}}));
  EXPECT_EQ(variants::upgrade_settings(Map{{"processors", "cover,16,32"}}, launches),
            (Map{{"grid", "cover,16wg,32wg"}}));
  EXPECT_EQ(variants::upgrade_settings(Map{{"groups", "8192"}}, launches), (Map{{"grid", "8192wg"}}));
  EXPECT_THROW(variants::upgrade_settings(Map{{"groups", "cover"}, {"grid", "cover"}}, launches), UsageError);
  // A space whose own tunable has an old name (a user operator's "groups") keeps it.
  const variants::Space own("u", {{"groups", variants::TunableKind::Launch, {0, 132}, 0, "work-groups"}}, {});
  EXPECT_EQ(variants::upgrade_settings(Map{{"groups", "0,132"}}, own), (Map{{"groups", "0,132"}}));
}

TEST(Launch, SharedTunablesAreDeclaredAlike) {
  const DeviceInfo d = device_with(4);
  const variants::Tunable local = variants::local_tunable(d);
  EXPECT_EQ(local.name, "local");
  EXPECT_EQ(local.values.front(), Value{"auto"});
  EXPECT_EQ(local.values.back(), Value{1024});
  const variants::Tunable capped =
      variants::local_tunable(d, {.with_auto = false, .default_value = Value{128}, .largest = 256});
  EXPECT_EQ(capped.values, (std::vector<Value>{32, 64, 128, 256}));
  const variants::Tunable padding =
      variants::padding_tunable({variants::Padding::None, variants::Padding::Guard});
  EXPECT_EQ(padding.values, (std::vector<Value>{Value{"none"}, Value{"guard"}}));
  EXPECT_EQ(padding.help.find("host"), std::string::npos);
}

TEST(Launch, PlanShapes) {
  const DeviceInfo d = device_with(10);
  const auto plan = [&](Params p) { return harness::LaunchPlan(p, d); };
  const auto shape = [](const harness::LaunchShape& s) { return std::make_pair(s.global, s.local); };
  using Shape = std::pair<std::uint64_t, std::uint64_t>;
  // No padding: exactly n, with the local size where it divides n.
  const auto none = plan({{"local", Value{64}}, {"padding", Value{"none"}}, {"grid", Value{"cover"}}});
  EXPECT_EQ(shape(none.cover(640)), (Shape{640, 64}));
  EXPECT_EQ(shape(none.cover(641)), (Shape{641, 0}));
  EXPECT_EQ(none.indexed(641), 641u);
  // Guard: whole work-groups; under auto of 128, the size left to the driver.
  const auto guard = plan({{"local", Value{"auto"}}, {"padding", Value{"guard"}}, {"grid", Value{"cover"}}});
  EXPECT_EQ(shape(guard.cover(129)), (Shape{256, 0}));
  EXPECT_EQ(shape(guard.rows(1000, 8)), (Shape{128, 0}));
  // Host padding: the elements a thread-indexed kernel runs over grow too.
  const auto host = plan({{"local", Value{32}}, {"padding", Value{"host"}}, {"grid", Value{"cover"}}});
  EXPECT_EQ(host.indexed(100, 4), 128u);
  EXPECT_EQ(shape(host.cover(100)), (Shape{128, 32}));
  // A fixed grid: k per compute unit, or N in all.
  EXPECT_EQ(shape(plan({{"local", Value{256}}, {"grid", Value{4}}}).rows(1 << 20)), (Shape{40 * 256, 256}));
  EXPECT_EQ(shape(plan({{"local", Value{256}}, {"grid", Value{"32wg"}}}).rows(1 << 20)),
            (Shape{32 * 256, 256}));
  // No padding tunable: the kernels guard their bounds.
  EXPECT_EQ(shape(plan({{"local", Value{128}}}).rows(1000)), (Shape{1024, 128}));
}

}  // namespace
}  // namespace varex
