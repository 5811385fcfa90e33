#include "operators/selection/selection_space.hpp"

#include "variants/launch.hpp"

namespace varex::operators {

using namespace varex::variants;  // a space is written in the vocabulary of variants/

namespace {

bool is_auto(const Params& p) {
  return p.at("local") == Value{"auto"};
}

}  // namespace

Space selection_space(const SpaceContext& context) {
  const DeviceInfo& device = context.device;

  std::vector<Value> widths{1, 2, 4, 8, 16};
  // CUDA has no vector type wider than 16 bytes.
  if (device.backend == Backend::Cuda) widths = {1, 2, 4};

  std::vector<Tunable> tunables{
      {"kernel",
       TunableKind::Compile,
       {Value{"loop"}, Value{"overflow"}},
       Value{"loop"},
       "loop: the original kernel, a bounds check per row; overflow: Fett's kernel, the valid row count is "
       "computed once and surplus work-items exit"},
      {"ept", TunableKind::Compile, {1, 2, 4, 8, 16, 32}, 8, "rows evaluated per work-item"},
      {"vec", TunableKind::Compile, widths, 1, "vector width of the loads (overflow kernel)"},
      padding_tunable({Padding::None, Padding::Host, Padding::Guard},
                      "to a whole work-group of ept-row chunks"),
      local_tunable(device),
      grid_tunable({Value{"cover"}, 1, 2, 4, 8, 16, 32}, Value{"cover"},
                   "the rows (one work-item per ept rows)"),
  };

  const std::uint64_t rows = context.rows;
  std::vector<Constraint> constraints{
      {"vec must divide ept", [](const Params& p) { return get_int(p, "ept") % get_int(p, "vec") == 0; }},
      {"the loop kernel is scalar (vec=1)",
       [](const Params& p) { return p.at("kernel") == Value{"overflow"} || get_int(p, "vec") == 1; }},
      {"the loop kernel writes its result without a guard, so it cannot be padded in the kernel "
       "(padding=guard)",
       [](const Params& p) {
         return p.at("kernel") == Value{"overflow"} || p.at("padding") != Value{"guard"};
       }},
      {"the loop kernel handles one chunk per work-item (grid=cover)",
       [](const Params& p) { return p.at("kernel") == Value{"overflow"} || covers(p); }},
      {"ept below 8 combines the bits of several work-items and needs an explicit local size",
       [](const Params& p) { return get_int(p, "ept") >= 8 || !is_auto(p); }},
      fixed_grid_needs_local(),
      {"a fixed number of work-groups always pads the grid (padding=host or guard)",
       [](const Params& p) { return covers(p) || p.at("padding") != Value{"none"}; }},
      {"without padding, ceil(rows/ept) work-items must be a multiple of the local size",
       [rows](const Params& p) {
         if (p.at("padding") != Value{"none"} || is_auto(p)) return true;
         const std::uint64_t ept = get_int(p, "ept");
         return ((rows + ept - 1) / ept) % static_cast<std::uint64_t>(get_int(p, "local")) == 0;
       }},
  };
  return Space("selection", std::move(tunables), std::move(constraints));
}

}  // namespace varex::operators
