#include "harness/operators/operator.hpp"

#include "harness/errors.hpp"
#include "harness/hash.hpp"
#include "harness/operators/groupby.hpp"
#include "harness/operators/hashjoin.hpp"
#include "harness/operators/selection.hpp"
#include "harness/text.hpp"

namespace varex::harness {

const std::vector<const Operator*>& operators() {
  static const SelectionOperator selection;
  static const HashJoinOperator hashjoin;
  static const GroupByOperator groupby;
  static const std::vector<const Operator*> all{&selection, &hashjoin, &groupby};
  return all;
}

const Operator& find_operator(std::string_view name) {
  std::vector<std::string> names;
  for (const Operator* op : operators()) {
    if (op->name() == name) return *op;
    names.push_back(op->name());
  }
  throw UsageError("unknown operator '" + std::string(name) + "' (operators: " + join(names, ", ") + ")");
}

void check_fits(const Operator& op, const datasets::WorkloadSpec& spec, const DeviceInfo& device) {
  const DeviceFootprint need = op.footprint(spec, device);
  if (device.global_mem && need.total > device.global_mem) {
    throw UsageError("input too large: the " + op.name() + " workload needs " + format_bytes(need.total) +
                     " of device memory but " + device.id + " has " + format_bytes(device.global_mem));
  }
  if (device.max_alloc && need.largest > device.max_alloc) {
    throw UsageError("input too large: the " + op.name() + " workload needs a buffer of " +
                     format_bytes(need.largest) + " but " + device.id + " allocates at most " +
                     format_bytes(device.max_alloc));
  }
}

std::string variant_id(const Operator& op, Backend backend, const variants::Params& params) {
  const KernelSource& source = kernel_source(backend, op.kernel_family());
  std::uint64_t h = fnv1a(op.name());
  h = fnv1a("|", h);
  h = fnv1a(to_string(backend), h);
  h = fnv1a("|", h);
  h = fnv1a(variants::canonical(params), h);
  h = fnv1a("|" + source.hash, h);
  return hex64(h);
}

}  // namespace varex::harness
