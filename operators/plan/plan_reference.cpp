#include "operators/plan/plan_reference.hpp"

namespace varex::plan {

namespace {

bool holds(std::int64_t a, CompareOp op, std::int64_t b) {
  switch (op) {
    case CompareOp::Eq:
      return a == b;
    case CompareOp::Ne:
      return a != b;
    case CompareOp::Lt:
      return a < b;
    case CompareOp::Le:
      return a <= b;
    case CompareOp::Gt:
      return a > b;
    case CompareOp::Ge:
      return a >= b;
  }
  return false;
}

std::int64_t operand(const HostRelation& in, const Operand& o, std::uint64_t r) {
  return o.column < 0 ? o.literal : (*in.columns[static_cast<std::size_t>(o.column)])[r];
}

HostRelation evaluate(const Step& s, const std::vector<HostRelation>& done, datasets::TpchData& data) {
  HostRelation out;
  if (s.kind == StepKind::Scan) {
    out.rows = data.rows(s.table);
    for (const Column& c : s.schema) {
      const std::vector<std::int32_t>& base = data.column(c.name);
      out.columns.push_back(std::make_shared<const std::vector<std::int64_t>>(base.begin(), base.end()));
    }
    return out;
  }
  const HostRelation& in = done[static_cast<std::size_t>(s.input)];
  switch (s.kind) {
    case StepKind::Select: {
      std::vector<std::uint64_t> kept;
      for (std::uint64_t r = 0; r < in.rows; ++r) {
        bool keep = true;
        for (const Condition& c : s.where) {
          keep = keep &&
                 holds((*in.columns[static_cast<std::size_t>(c.column)])[r], c.op, operand(in, c.rhs, r));
        }
        if (keep) kept.push_back(r);
      }
      out.rows = kept.size();
      for (const auto& column : in.columns) {
        auto gathered = std::make_shared<std::vector<std::int64_t>>();
        gathered->reserve(kept.size());
        for (std::uint64_t r : kept) gathered->push_back((*column)[r]);
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
