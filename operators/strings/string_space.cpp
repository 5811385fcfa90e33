#include "operators/strings/string_space.hpp"

#include "variants/launch.hpp"

namespace varex::operators {

using namespace varex::variants;  // a space is written in the vocabulary of variants/

namespace {

bool is(const Params& p, std::string_view name, std::string_view value) {
  return p.at(std::string(name)) == Value{std::string(value)};
}

}  // namespace

Space string_space(const SpaceContext& context, const std::string& op, bool automaton, bool like) {
  const DeviceInfo& device = context.device;
  std::vector<Value> buffers{Value{"shared"}};
  // Only CUDA has the warp shuffles that move a buffer held in registers between lanes.
  if (device.backend == Backend::Cuda) buffers.emplace_back(std::in_place_type<std::string>, "registers");

  std::vector<Tunable> tunables{
      {"kernel",
       TunableKind::Compile,
       {Value{"naive"}, Value{"refill"}},
       Value{"naive"},
       "naive: a work-item runs its row to the end; refill: idle lanes are refilled from a buffer of "
       "waiting rows once activity drops below the threshold (lane refill)"},
      {"threshold",
       TunableKind::Compile,
       {25, 50, 75, 90},
       50,
       "refill when fewer than this percentage of the group's lanes are active (the warp on CUDA, the "
       "work-group on OpenCL)"},
      {"unroll", TunableKind::Compile, {1, 2, 3, 4, 8}, 1, "bytes (or automaton steps) per activity check"},
      {"load",
       TunableKind::Compile,
       {1, 4},
       1,
       "bytes per load: 1 loads each byte; 4 keeps the aligned word that holds the next byte, a quarter "
       "of the loads"},
      {"buffer", TunableKind::Compile, buffers, Value{"shared"},
       "where waiting rows are kept: shared (local) memory, or the warp's registers moved by shuffles"},
      local_tunable(device),
      grid_tunable({Value{"cover"}, 1, 4, 16, 64}, Value{"cover"}, "the rows (one work-item per row)"),
  };
  if (like) {
    tunables.push_back({"algorithm",
                        TunableKind::Compile,
                        {Value{"automaton"}, Value{"segments"}},
                        Value{"automaton"},
                        "automaton: the pattern's minimal automaton, a step per byte; segments: DogQC's "
                        "LIKE, the literal runs "
                        "between % compared byte by byte (_ any byte), each at its leftmost place"});
  }
  if (automaton) {
    tunables.push_back(
        {"layout",
         TunableKind::Compile,
         {Value{"flat"}, Value{"table"}},
         Value{"flat"},
         "the automaton's layout: flat (a row of byte classes per state, indexed directly) or table "
         "(binary search over each state's byte ranges)"});
  }
  std::vector<Constraint> constraints{
      {"the naive kernel has no refill threshold or buffer (threshold=50, buffer=shared)",
       [](const Params& p) {
         return is(p, "kernel", "refill") || (get_int(p, "threshold") == 50 && is(p, "buffer", "shared"));
       }},
      {"lane refill pays only when work-groups stride over many rows (a fixed number of work-groups)",
       [](const Params& p) { return is(p, "kernel", "naive") || !covers(p); }},
      fixed_grid_needs_local(),
  };
  if (like) {
    constraints.push_back({"the segments have no automaton to lay out (layout=flat)", [](const Params& p) {
                             return is(p, "algorithm", "automaton") || is(p, "layout", "flat");
                           }});
  }
  return Space(op, std::move(tunables), std::move(constraints));
}

}  // namespace varex::operators
