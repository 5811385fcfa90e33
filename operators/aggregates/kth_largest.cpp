// kth_largest: the k-th largest value (k = 1 the maximum), or a quantile.
#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "operators/aggregates/aggregates.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::add_vendor_variant;
}  // namespace varex::operators

namespace varex::operators {

std::vector<QueryKeyDecl> KthLargestOperator::own_keys() const {
  return {{"k", "which largest value, 1 (the maximum) to the rows kept"},
          {"quantile",
           "instead of k: the value with a share q of the rows at or below it, 0 to 1 (default 0.5, the "
           "median)"}};
}

void KthLargestOperator::parse_own(const std::map<std::string, std::string>& query,
                                   nlohmann::json& out) const {
  for (const auto& [key, value] : query) {
    if (key == "k") {
      const std::int64_t k = parse_int(value, "query k");
      if (k < 1) throw UsageError("query k=" + value + ": k counts from 1 (the largest)");
      out["k"] = k;
    } else if (key == "quantile") {
      const double q = parse_double(value, "query quantile");
      if (!(q >= 0 && q <= 1))
        throw UsageError("query quantile=" + value + ": a quantile lies between 0 and 1");
      out["quantile"] = q;
    } else {
      throw UsageError("kth_largest: unknown query key '" + key + "' (keys: k, quantile, attr, where)");
    }
  }
  if (out.contains("k") && out.contains("quantile"))
    throw UsageError("kth_largest: give k or quantile, not both");
  if (!out.contains("k") && !out.contains("quantile")) out["quantile"] = 0.5;
}

std::vector<variants::Tunable> KthLargestOperator::own_tunables(const DeviceInfo&) const {
  return {{"radix_bits",
           variants::TunableKind::Launch,
           {1, 2, 4, 8, 11},
           8,
           "bits of the digit one counting pass decides (1: the paper's one pass per bit; 8 or 11: a radix "
           "select)"}};
}

void KthLargestOperator::check(const datasets::WorkloadSpec& spec) const {
  if (spec.rows() == 0) throw UsageError("kth_largest: the records are empty; there is no k-th largest");
  // Here, as the workload is declared, rather than only when a worker prepares it: a series checks every
  // workload before it records any (issue 48: --rows 2^12,2^10 --query k=2000 left the first session).
  // Whether a filter keeps k rows is known only once the records are there (checked_k, then).
  if (spec.query.contains("k") && spec.query.at("k").get<std::uint64_t>() > spec.rows()) {
    const std::uint64_t rows = spec.rows();
    throw UsageError("kth_largest: k=" + spec.query.at("k").dump() + ", but " + std::to_string(rows) +
                     " row" + (rows == 1 ? "" : "s") + " exist");
  }
}

void KthLargestOperator::add_vendor(const DeviceInfo& device, std::vector<variants::Tunable>& tunables,
                                    std::vector<variants::Inactive>& inactive) const {
  add_vendor_variant(device, "DeviceRadixSort::SortKeys of the kept values, then the (n - k)-th", tunables,
                     inactive, {"local", "ept", "grid"});
}

Defines KthLargestOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return AttributeAggregateVariant(params, device, /*kth_largest=*/true).defines;
}

}  // namespace varex::operators
