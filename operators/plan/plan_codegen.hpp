#pragma once
// How a plan's element-wise steps become kernels: the groups that run as one kernel triple (fused or not)
// and the code kernels/plan.cl is specialised with for a group.
#include <cstdint>
#include <string>
#include <vector>

#include "operators/plan/plan_file.hpp"

namespace varex::plan {

// Steps that run one after the other over one relation (`source`, a scan or a relation an earlier group
// materialised). Fused: every element-wise step over a scan, however many outputs it feeds (a chain of
// SELECTs, several filters of one relation, an expression). Not fused: each step alone, reading its input.
struct Group {
  int source = -1;
  std::vector<int> steps;    // inputs first
  std::vector<int> outputs;  // the steps whose relations it materialises
  // The step whose tunables the group's kernels take (the first with a kernel); -1 for projections only.
  int leader = -1;
};
std::vector<Group> plan_groups(const Plan& plan, bool fuse);

// Steps that run kernels of their own (and have tunables).
bool has_kernel(StepKind kind);

// One materialised step as the group leaves it: compacted (a SELECT lies between the source and it: every
// column written) or row for row (columns that are the source's own are the source's buffers, the others
// written).
struct OutputLayout {
  int step = -1;
  int compacted = -1;       // its index among the group's compacted outputs, or -1
  std::vector<int> shared;  // per column of its schema: the source column it is, or -1 (written)
};

struct GroupCode {
  std::string prelude;                      // the defines kernels/plan.cl expects
  std::vector<std::pair<int, int>> writes;  // (step, column) of each written column, as o0, o1, …
  std::vector<OutputLayout> outputs;        // as group.outputs
  std::uint32_t compacted = 0;              // outputs that need plan_count, plan_offsets, plan_scatter
  bool mapped = false;                      // outputs that need plan_map
};
// The source's columns are the parameters c0, c1, … in schema order.
GroupCode generate_group(const Plan& plan, const Group& group);

}  // namespace varex::plan
