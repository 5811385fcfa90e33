#pragma once
// How a plan's element-wise steps become kernels: the groups that run as one kernel triple (fused or not)
// and the code kernels/plan.cl is specialised with for a group.
#include <cstdint>
#include <string>
#include <vector>

#include "operators/plan/plan_file.hpp"

namespace varex::plan {

// Steps that run one after the other over one relation (`source`, a scan or a relation an earlier group
// materialised). Fused: every step whose rows come from one scan, however many outputs it feeds (a chain of
// SELECTs, several filters of one relation, an expression, the probes of joins: a pipeline, whose breakers
// are the joins' build sides). Not fused: each step alone, reading its input. Groups come in an order in
// which the build sides a group probes are made before it.
struct Group {
  int source = -1;
  std::vector<int> steps;    // inputs first
  std::vector<int> outputs;  // the steps whose relations it materialises
  // The step whose tunables the group's kernels take (the first with a kernel); -1 for projections only.
  int leader = -1;
};
std::vector<Group> plan_groups(const Plan& plan, bool fuse);

// Steps that run kernels of their own (and have tunables): select, arith and join.
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
  // The joins the group probes, in order: after the source's columns come, per join, its build side's
  // columns (b<j>_0, …) and its table (hk<j> keys, hr<j> build rows, hm<j> the slot mask).
  std::vector<int> joins;
  std::uint32_t compacted = 0;  // outputs that need plan_count, compact_offsets, plan_scatter
  bool mapped = false;          // outputs that need plan_map
};
// The source's columns are the parameters c0, c1, … in schema order.
GroupCode generate_group(const Plan& plan, const Group& group);

}  // namespace varex::plan
