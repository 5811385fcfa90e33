#pragma once
#include "variants/space.hpp"

namespace varex::operators {

// Ocelot's range selection (document 000, sections 2.2.1 and 3.1). The default point is the source's
// kernel as shipped: the loop-checked kernel, 8 rows per work-item, no padding, the driver's local size.
variants::Space selection_space(const variants::SpaceContext& context);

}  // namespace varex::operators
