#pragma once
// The vendor library as one more variant of an operator: a tunable `impl` (own: varex's kernels; cub: the
// library's algorithm, harness/backends/vendor_library.hpp) offered only where a device runs the library.
// The operator's own tunables are inactive for it (variants::Inactive: one vendor variant, its canonical
// form with them at their defaults, not a copy per own setting), so that a search draws the vendor variant
// about as often as the own ones together, which a constraint pinning them made one draw in the own space's
// size (a 30 s tune of ra_sort on an H100 drew 41 own variants and not CUB's, 3 times faster).
#include <string>
#include <vector>

#include "base/device.hpp"
#include "variants/space.hpp"

namespace varex::harness {

// Appends `impl` to a space's tunables, and the own tunables' inactivity to its list, where `device` runs the
// vendor library; `call` names the library's algorithm for the help text; `honoured` lists the own tunables
// the vendor variant still reads (the input layout, say).
void add_vendor_variant(const DeviceInfo& device, const std::string& call,
                        std::vector<variants::Tunable>& tunables, std::vector<variants::Inactive>& inactive,
                        const std::vector<std::string>& honoured = {});

// impl=cub.
bool is_vendor(const variants::Params& params);

}  // namespace varex::harness
