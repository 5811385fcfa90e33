#pragma once
// The host reference of a plan: every step evaluated row by row over the generated columns, in 64-bit
// integers, sharing nothing with the kernels or their generated code.
#include <cstdint>
#include <memory>
#include <vector>

#include "operators/plan/plan_file.hpp"
#include "operators/plan/tpch.hpp"

namespace varex::plan {

struct HostRelation {
  std::uint64_t rows = 0;
  std::vector<std::shared_ptr<const std::vector<std::int64_t>>> columns;  // in the step's schema order
};

// The hash tables' empty slot (INT_MIN): a join's build key may not take it.
constexpr std::int64_t kEmptyKey = -2147483647LL - 1;

// One relation per step of plan.steps. UsageError where a join's build side repeats a key.
std::vector<HostRelation> plan_reference(const Plan& plan, datasets::TpchData& data);

}  // namespace varex::plan
