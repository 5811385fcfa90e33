#include "operators/plan/plan_reference.hpp"

#include <algorithm>
#include <unordered_map>

#include "base/errors.hpp"
#include "datasets/int_columns.hpp"

namespace varex::plan {

namespace {

// Chunks of rows a selection splits its work into.
constexpr std::uint64_t kChunks = 256;

std::int64_t operand(const HostRelation& in, const Operand& o, std::uint64_t r) {
  return o.column < 0 ? o.literal : (*in.columns[static_cast<std::size_t>(o.column)])[r];
}

HostRelation evaluate(const Step& s, const std::vector<HostRelation>& done, datasets::TpchData& data) {
  HostRelation out;
  if (s.kind == StepKind::Scan) {
    out.rows = data.rows(s.table);
    for (const Column& c : s.schema) {
      const std::vector<std::int32_t>& base = data.column(c.name);
      auto wide = std::make_shared<std::vector<std::int64_t>>(base.size());
      datasets::parallel_rows(base.size(), [&](std::uint64_t b, std::uint64_t e) {
        std::copy(base.begin() + static_cast<std::ptrdiff_t>(b),
                  base.begin() + static_cast<std::ptrdiff_t>(e),
                  wide->begin() + static_cast<std::ptrdiff_t>(b));
      });
      out.columns.push_back(std::move(wide));
    }
    return out;
  }
  const HostRelation& in = done[static_cast<std::size_t>(s.input)];
  switch (s.kind) {
    case StepKind::Select: {
      // The rows kept, chunk by chunk on all host cores, then gathered in order.
      const std::uint64_t per = (in.rows + kChunks - 1) / kChunks;
      std::vector<std::vector<std::uint64_t>> kept(kChunks);
      datasets::parallel_rows(kChunks, [&](std::uint64_t first, std::uint64_t last) {
        for (std::uint64_t k = first; k < last; ++k) {
          for (std::uint64_t r = k * per; r < std::min(in.rows, (k + 1) * per); ++r) {
            bool keep = true;
            for (const Condition& c : s.where) {
              keep = keep && compares((*in.columns[static_cast<std::size_t>(c.column)])[r], c.op,
                                      operand(in, c.rhs, r));
            }
            if (keep) kept[k].push_back(r);
          }
        }
      });
      std::vector<std::uint64_t> at(kChunks + 1, 0);
      for (std::uint64_t k = 0; k < kChunks; ++k) at[k + 1] = at[k] + kept[k].size();
      out.rows = at[kChunks];
      for (const auto& column : in.columns) {
        auto gathered = std::make_shared<std::vector<std::int64_t>>(out.rows);
        datasets::parallel_rows(kChunks, [&](std::uint64_t first, std::uint64_t last) {
          for (std::uint64_t k = first; k < last; ++k) {
            for (std::uint64_t i = 0; i < kept[k].size(); ++i) (*gathered)[at[k] + i] = (*column)[kept[k][i]];
          }
        });
        out.columns.push_back(std::move(gathered));
      }
      return out;
    }
    case StepKind::Arith: {
      out = in;
      auto computed = std::make_shared<std::vector<std::int64_t>>(in.rows);
      for (std::uint64_t r = 0; r < in.rows; ++r) {
        const std::int64_t a = operand(in, s.lhs, r) * s.lhs_factor, b = operand(in, s.rhs, r) * s.rhs_factor;
        (*computed)[r] = s.arith == ArithOp::Add ? a + b : s.arith == ArithOp::Sub ? a - b : a * b;
      }
      out.columns.push_back(std::move(computed));
      return out;
    }
    case StepKind::Join: {
      const HostRelation& build = done[static_cast<std::size_t>(s.build)];
      const auto& build_keys = *build.columns[static_cast<std::size_t>(s.build_key)];
      std::unordered_map<std::int64_t, std::uint64_t> row_of;
      row_of.reserve(build.rows);
      for (std::uint64_t b = 0; b < build.rows; ++b) {
        if (build_keys[b] == kEmptyKey)
          throw UsageError("join '" + s.id + "': the build key " + std::to_string(build_keys[b]) +
                           " is the hash table's empty marker");
        if (!row_of.emplace(build_keys[b], b).second)
          throw UsageError("join '" + s.id + "': the build side's key " + std::to_string(build_keys[b]) +
                           " is there twice (a join's build side must be a key)");
      }
      const auto& probe_keys = *in.columns[static_cast<std::size_t>(s.probe_key)];
      std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
      for (std::uint64_t r = 0; r < in.rows; ++r) {
        const auto it = row_of.find(probe_keys[r]);
        if (it != row_of.end()) pairs.emplace_back(r, it->second);
      }
      out.rows = pairs.size();
      const auto gather = [&](const std::vector<std::int64_t>& column, bool probe_side) {
        auto g = std::make_shared<std::vector<std::int64_t>>();
        g->reserve(pairs.size());
        for (const auto& [r, b] : pairs) g->push_back(column[probe_side ? r : b]);
        return g;
      };
      for (const auto& column : in.columns) out.columns.push_back(gather(*column, true));
      for (std::size_t c = 0; c < build.columns.size(); ++c) {
        if (static_cast<int>(c) != s.build_key) out.columns.push_back(gather(*build.columns[c], false));
      }
      return out;
    }
    case StepKind::Project:
      out.rows = in.rows;
      for (int c : s.columns) out.columns.push_back(in.columns[static_cast<std::size_t>(c)]);
      return out;
    case StepKind::Scan:
      break;
  }
  return out;
}

}  // namespace

std::vector<HostRelation> plan_reference(const Plan& plan, datasets::TpchData& data) {
  std::vector<HostRelation> done;
  for (const Step& s : plan.steps) done.push_back(evaluate(s, done, data));
  return done;
}

}  // namespace varex::plan
