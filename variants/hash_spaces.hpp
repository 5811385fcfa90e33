#pragma once
#include "variants/space.hpp"

namespace varex::variants {

// Ocelot's hash join (document 000, sections 2.2.2 and 3.2). The default point is the source's host code:
// local size 256, 32 work-groups ("processors", grid=32wg) for hj_count and hj_exec, one tuple per batch, no
// PreprocessHT kernel, the lookup array in private memory, no padding.
Space hashjoin_space(const SpaceContext& context);

// Ocelot's hash group-by (document 000, sections 2.2.3 and 3.3) with COUNT, SUM, MIN, MAX. The default
// point is the source's operator: driver's local size, no padding, optimistic build with validation,
// a separate pass for the aggregates in global memory.
Space groupby_space(const SpaceContext& context);

}  // namespace varex::variants
