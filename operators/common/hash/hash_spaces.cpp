#include "operators/common/hash/hash_spaces.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <set>

#include "variants/launch.hpp"

namespace varex::operators {

using namespace varex::variants;  // a space is written in the vocabulary of variants/

std::uint32_t max_radix_parts(const DeviceInfo& device) {
  const std::uint64_t local_mem = device.local_mem ? device.local_mem : 32768;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(8192, std::bit_floor(local_mem / 4)));
}

std::uint32_t partition_digit_bits(std::uint32_t bits, std::uint32_t passes) {
  return (bits + passes - 1) / std::max<std::uint32_t>(passes, 1);
}

namespace {

// A plan that does not use some tunables keeps them at their defaults, so that it is one point, not many
// identical ones.
Constraint unused_at_default(const std::string& knob, const std::string& plan, std::set<std::string> unused,
                             const std::vector<Tunable>& tunables) {
  Params defaults;
  for (const Tunable& t : tunables) {
    if (unused.count(t.name)) defaults[t.name] = t.default_value;
  }
  std::string names;
  for (const auto& n : unused) names += (names.empty() ? "" : ", ") + n;
  return {knob + "=" + plan + " does not use " + names + ": they stay at their defaults",
          [knob, plan, defaults](const Params& p) {
            if (p.at(knob) != Value{plan}) return true;
            for (const auto& [name, value] : defaults) {
              if (p.at(name) != value) return false;
            }
            return true;
          }};
}

// Tunables and constraints both hash operators have: the work-group size, the number of work-groups of
// the kernels that walk the rows (`grid`: cover, or fixed counts in all as the source's 16 and 32
// "processors" were), padding, the hash function, probing and the table's load.
struct Common {
  std::vector<Tunable> tunables;
  std::vector<Constraint> constraints;
};

Common common(const DeviceInfo& device, const std::string& walks, const std::vector<Padding>& paddings,
              const Value& default_local, const Value& default_grid) {
  Common c;
  c.tunables = {
      local_tunable(device, {.default_value = default_local}),
      grid_tunable({Value{"cover"}, total_work_groups(16), total_work_groups(32), total_work_groups(128),
                    total_work_groups(512), total_work_groups(2048), total_work_groups(8192)},
                   default_grid, walks),
      padding_tunable(paddings,
                      "the buffers of the kernels that index by work-item alone: the source "
                      "found only those can be"),
      {"hash",
       TunableKind::Compile,
       {Value{"identity"}, Value{"mult"}, Value{"murmur"}},
       Value{"mult"},
       "identity: the key's low bits; mult: multiplicative (Fibonacci) hashing; murmur: murmur3's finaliser"},
      {"probing",
       TunableKind::Compile,
       {Value{"linear"}, Value{"double"}},
       Value{"double"},
       "collision resolution of the pessimistic build: linear probing, or double hashing (the source's "
       "hash2/hash3: a second hash gives each key an odd step)"},
      {"load",
       TunableKind::Launch,
       {25, 50, 75},
       50,
       "the table's largest load in percent of its slots, for as many distinct keys as input rows; the "
       "slot count is the smallest power of two that keeps to it"},
  };
  c.constraints = {
      fixed_grid_needs_local(),
      {"without padding, kernels that cover their elements launch exactly as many work-items as elements, "
       "which a local size rarely divides, so an explicit one applies only to a fixed number of work-groups",
       [](const Params& p) {
         return p.at("padding") != Value{"none"} || !covers(p) || p.at("local") == Value{"auto"};
       }},
  };
  return c;
}

// How the partitioned variants partition: `scatter` and `passes` (PartitionScheme), with `bits_of` the most
// bits of a variant's partition numbers.
void add_partitioning(Common& c, std::function<std::uint32_t(const Params&)> bits_of) {
  c.tunables.push_back(
      {"scatter",
       TunableKind::Compile,
       {Value{"direct"}, Value{"buffered"}},
       Value{"direct"},
       "partitioned variants: direct: one pass, every row written to its partition on its own; buffered: "
       "passes over the partition number's bits, each tile ranked and staged in local memory and written "
       "out partition run by partition run (Sioulas et al., ICDE 2019)"});
  c.tunables.push_back({"passes",
                        TunableKind::Compile,
                        {1, 2, 3},
                        1,
                        "scatter=buffered: the partition number's bits shared by this many passes (fewer "
                        "where the partitions need fewer bits)"});
  c.constraints.push_back({"scatter=direct is one pass", [](const Params& p) {
                             return p.at("scatter") == Value{"buffered"} || get_int(p, "passes") == 1;
                           }});
  c.constraints.push_back({"a buffered pass takes at most 8 bits (256 counters per warp in local memory)",
                           [bits_of](const Params& p) {
                             return p.at("scatter") == Value{"direct"} ||
                                    partition_digit_bits(bits_of(p),
                                                         static_cast<std::uint32_t>(get_int(p, "passes"))) <=
                                        kMaxPartitionDigitBits;
                           }});
}

}  // namespace

Space hashjoin_space(const SpaceContext& context) {
  const DeviceInfo& device = context.device;
  // Every join kernel probes the table or scans; none indexes buffers by work-item only, so host padding
  // would equal the guard (document 000, sec. 3.3.2) and is not offered.
  Common c = common(device,
                    "the probe rows in preprocess_ht, hj_count and hj_exec (one work-item per `batch` rows; "
                    "the source's `processors`: 32wg)",
                    {Padding::None, Padding::Guard}, Value{256}, total_work_groups(32));
  c.tunables.push_back({"batch",
                        TunableKind::Compile,
                        {1, 2, 4, 8},
                        1,
                        "probe rows whose hash-table slots a work-item resolves before using them"});
  c.tunables.push_back({"preprocess",
                        TunableKind::Compile,
                        {Value{"off"}, Value{"on"}},
                        Value{"off"},
                        "PreprocessHT: one kernel stores each probe row's slot, read by hj_count and hj_exec "
                        "instead of probing twice"});
  c.tunables.push_back({"lookup",
                        TunableKind::Compile,
                        {Value{"private"}, Value{"local"}},
                        Value{"private"},
                        "where the batch of resolved slots is kept: private memory, or local memory"});
  const std::uint64_t local_mem = device.local_mem;
  const std::uint64_t max_wg = device.max_work_group;
  c.tunables.push_back(
      {"plan",
       TunableKind::Launch,
       {Value{"source"}, Value{"unique"}, Value{"partitioned"}},
       Value{"source"},
       "source: Ocelot's kernel sequence; unique: a table of packed {key, row} slots built while looking for "
       "duplicate keys, then one probe pass appending pairs through one atomic per work-group tile (a "
       "duplicate falls back to the source's sequence); partitioned: both sides radix-partitioned, each "
       "partition joined in local memory (Sioulas et al., ICDE 2019)"});
  c.tunables.push_back(
      {"radix_bits",
       TunableKind::Launch,
       {6, 9, 12, 13, 14, 15, 16},
       12,
       "plan=partitioned: 2^bits partitions by the top bits of the keys' multiplicative hash (more than the "
       "device's local counters only buffered, where the partitions' starts are read off the output)"});
  add_partitioning(c, [](const Params& p) { return static_cast<std::uint32_t>(get_int(p, "radix_bits")); });
  c.constraints.push_back(unused_at_default(
      "plan", "unique", {"preprocess", "lookup", "radix_bits", "scatter", "passes"}, c.tunables));
  c.tunables.push_back(
      {"append",
       TunableKind::Compile,
       {Value{"group"}, Value{"item"}},
       Value{"group"},
       "plan=unique: pairs appended with one atomic per work-group tile (a work-group scan), or "
       "one per work-item and tile (no barrier)"});
  c.constraints.push_back(unused_at_default(
      "plan", "partitioned", {"preprocess", "lookup", "grid", "padding", "hash", "probing", "load", "append"},
      c.tunables));
  c.constraints.push_back(
      unused_at_default("plan", "source", {"radix_bits", "append", "scatter", "passes"}, c.tunables));
  const std::uint32_t most_parts = max_radix_parts(device);
  c.constraints.push_back({"2^radix_bits partitions in one direct pass need as many counters in local memory",
                           [most_parts](const Params& p) {
                             return p.at("scatter") == Value{"buffered"} ||
                                    (1LL << get_int(p, "radix_bits")) <= most_parts;
                           }});
  c.constraints.push_back({"the lookup array in local memory needs batch > 1", [](const Params& p) {
                             return p.at("lookup") == Value{"private"} || get_int(p, "batch") > 1;
                           }});
  c.constraints.push_back(
      {"the local lookup array (largest work-group x batch x 4 bytes) must fit in the "
       "device's local memory",
       [local_mem, max_wg](const Params& p) {
         return p.at("lookup") == Value{"private"} || local_mem == 0 ||
                max_wg * static_cast<std::uint64_t>(get_int(p, "batch")) * 4 <= local_mem;
       }});
  return Space("hashjoin", std::move(c.tunables), std::move(c.constraints));
}

Space groupby_space(const SpaceContext& context) {
  Common c = common(context.device,
                    "the rows in build, validation, grouping and aggregation (one work-item per row)",
                    {Padding::None, Padding::Host, Padding::Guard}, Value{"auto"}, Value{"cover"});
  c.tunables.push_back({"build",
                        TunableKind::Launch,
                        {Value{"optimistic"}, Value{"pessimistic"}},
                        Value{"optimistic"},
                        "optimistic: every key written to its first slot without atomics, then validated, "
                        "rebuilt pessimistically on a collision (the source); pessimistic: atomic inserts "
                        "with probing from the start"});
  std::vector<Value> aggs{Value{"global"}, Value{"local"}, Value{"registers"}, Value{"partitioned"}};
  // __match_any_sync and the warp reductions are CUDA's; NVIDIA's OpenCL offers no sub-group votes.
  if (context.device.backend == Backend::Cuda) aggs.insert(aggs.begin() + 2, Value{"warp"});
  c.tunables.push_back(
      {"agg", TunableKind::Compile, aggs, Value{"global"},
       "global: every row updates the group's aggregates in global memory with atomics; "
       "local: each work-group aggregates the first groups in local memory and merges once; "
       "registers: as local, each work-item first aggregating the first 16 groups in registers; "
       "warp (CUDA): lanes with the same group combine by warp vote before local memory; "
       "partitioned: the rows' (group id, value) pairs are radix-partitioned by group id, and each tile of "
       "them is aggregated in local memory (for many groups)"});
  c.tunables.push_back({"extents",
                        TunableKind::Launch,
                        {Value{"pass"}, Value{"build"}},
                        Value{"pass"},
                        "pass: the source's extents kernel over every row; build: the row that placed each "
                        "key in the table (pessimistic build) is its group's extent, no pass"});
  c.tunables.push_back({"fuse",
                        TunableKind::Compile,
                        {Value{"off"}, Value{"on"}},
                        Value{"off"},
                        "on: the grouping kernel also aggregates (one pass over keys and values); off: a "
                        "separate kernel reads the group ids"});
  c.tunables.push_back(
      {"sizing",
       TunableKind::Launch,
       {Value{"rows"}, Value{"sketch"}},
       Value{"rows"},
       "rows: the table has room for as many keys as rows (the source); sketch: a HyperLogLog "
       "pass estimates the distinct keys and the table is sized for those (rebuilt from the "
       "rows if it overflows)"});
  c.constraints.push_back(
      {"local aggregation pays only when a work-group walks many rows (a fixed number "
       "of work-groups)",
       [](const Params& p) {
         return p.at("agg") == Value{"global"} || p.at("agg") == Value{"partitioned"} || !covers(p);
       }});
  const auto part_bits = static_cast<std::uint32_t>(std::countr_zero(max_radix_parts(context.device)));
  add_partitioning(c, [part_bits](const Params&) { return part_bits; });
  c.constraints.push_back(
      {"only the partitioned aggregation partitions: scatter and passes stay at their "
       "defaults otherwise",
       [](const Params& p) {
         return p.at("agg") == Value{"partitioned"} ||
                (p.at("scatter") == Value{"direct"} && get_int(p, "passes") == 1);
       }});
  c.constraints.push_back({"the partitioned aggregation is its own pass (fuse=off)", [](const Params& p) {
                             return p.at("agg") != Value{"partitioned"} || p.at("fuse") == Value{"off"};
                           }});
  c.constraints.push_back(
      {"extents at build time need the pessimistic build, which knows the row that placed a key",
       [](const Params& p) {
         return p.at("extents") == Value{"pass"} || p.at("build") == Value{"pessimistic"};
       }});
  return Space("groupby", std::move(c.tunables), std::move(c.constraints));
}

}  // namespace varex::operators
