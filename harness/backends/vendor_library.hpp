#pragma once
// The vendor library (vendor/varex_vendor.h): libvarex_cub.so, CUB compiled by nvcc when varex was built,
// loaded with dlopen on first use. Where it was not built or cannot be found there is none, and the
// operators offer no impl=cub variants.
#include "base/device.hpp"
#include "vendor/varex_vendor.h"

namespace varex::harness {

// Null without a usable library. Looks at $VAREX_VENDOR_LIBRARY, then beside the executable, then in
// ../lib from it (an installed or carried build).
const varex_vendor_table* vendor_library();

// Whether `device` runs the vendor library's variants: a CUDA device, and the library is there.
bool has_vendor_library(const DeviceInfo& device);

}  // namespace varex::harness
