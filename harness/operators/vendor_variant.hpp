#pragma once
// The vendor library as one more variant of an operator: a tunable `impl` (own: varex's kernels; cub: the
// library's algorithm, harness/backends/vendor_library.hpp) offered only where a device runs the library,
// and the constraint that keeps the operator's own tunables at their defaults for it (they do not apply:
// one vendor variant, not a copy per own setting).
#include <string>
#include <vector>

#include "base/device.hpp"
#include "variants/space.hpp"

namespace varex::harness {

// Appends `impl` and its constraint to a space's tunables and constraints where `device` runs the vendor
// library; `call` names the library's algorithm for the help text; `honoured` lists the own tunables the
// vendor variant still reads (the input layout, say).
void add_vendor_variant(const DeviceInfo& device, const std::string& call,
                        std::vector<variants::Tunable>& tunables,
                        std::vector<variants::Constraint>& constraints,
                        const std::vector<std::string>& honoured = {});

// impl=cub.
bool is_vendor(const variants::Params& params);

}  // namespace varex::harness
