#include "operators/plan/plan_codegen.hpp"

#include <algorithm>
#include <map>

namespace varex::plan {

namespace {

std::string literal(std::int64_t v) {
  return "((slong)" + (v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v)) + ")";
}

// What a step of the group computes, as expressions over the source's columns for row r.
struct StepCode {
  std::vector<std::string> values;  // per schema column
  std::vector<int> origin;          // per schema column: the source column it is, or -1
  std::string keep = "1";           // the rows it keeps
  bool compacts = false;            // a SELECT lies on the way from the source
};

std::string operand(const StepCode& in, const Operand& o) {
  return o.column < 0 ? literal(o.literal) : in.values[static_cast<std::size_t>(o.column)];
}

StepCode step_code(const Step& s, const StepCode& in) {
  StepCode out = in;
  switch (s.kind) {
    case StepKind::Select:
      for (const Condition& c : s.where) {
        out.keep += "&&(" + in.values[static_cast<std::size_t>(c.column)] + to_string(c.op) +
                    operand(in, c.rhs) + ")";
      }
      out.compacts = true;
      break;
    case StepKind::Arith: {
      const std::string a = "(" + operand(in, s.lhs) + "*" + literal(s.lhs_factor) + ")";
      const std::string b = "(" + operand(in, s.rhs) + "*" + literal(s.rhs_factor) + ")";
      const char* op = s.arith == ArithOp::Add ? "+" : s.arith == ArithOp::Sub ? "-" : "*";
      out.values.push_back("(" + a + op + b + ")");
      out.origin.push_back(-1);
      break;
    }
    case StepKind::Project:
      out.values.clear();
      out.origin.clear();
      for (int c : s.columns) {
        out.values.push_back(in.values[static_cast<std::size_t>(c)]);
        out.origin.push_back(in.origin[static_cast<std::size_t>(c)]);
      }
      break;
    case StepKind::Scan:
      break;
  }
  return out;
}

std::string store(const ColumnType& type, int param, const std::string& at, const std::string& value) {
  const std::string o = "o" + std::to_string(param);
  return type.wide ? "((GLOBAL slong*)" + o + ")[" + at + "]=" + value + ";"
                   : o + "[" + at + "]=(uint)(int)(" + value + ");";
}

}  // namespace

bool has_kernel(StepKind kind) {
  return kind == StepKind::Select || kind == StepKind::Arith;
}

std::vector<Group> plan_groups(const Plan& plan, bool fuse) {
  std::vector<Group> groups;
  const auto& steps = plan.steps;
  const auto is_output = [&](int i) {
    return std::find(plan.outputs.begin(), plan.outputs.end(), i) != plan.outputs.end();
  };
  if (!fuse) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == StepKind::Scan) continue;
      Group g;
      g.source = steps[i].input;
      g.steps = {static_cast<int>(i)};
      g.outputs = {static_cast<int>(i)};
      groups.push_back(g);
    }
  } else {
    // Every element-wise step belongs to the group of the scan it descends from; steps are in input order.
    std::map<int, std::size_t> group_of_scan;
    std::vector<int> root(steps.size(), -1);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == StepKind::Scan) {
        root[i] = static_cast<int>(i);
        continue;
      }
      root[i] = root[static_cast<std::size_t>(steps[i].input)];
      auto [it, added] = group_of_scan.try_emplace(root[i], groups.size());
      if (added) {
        groups.emplace_back();
        groups.back().source = root[i];
      }
      Group& g = groups[it->second];
      g.steps.push_back(static_cast<int>(i));
      if (is_output(static_cast<int>(i))) g.outputs.push_back(static_cast<int>(i));
    }
  }
  for (Group& g : groups) {
    for (int s : g.steps) {
      if (has_kernel(steps[static_cast<std::size_t>(s)].kind)) {
        g.leader = s;
        break;
      }
    }
  }
  return groups;
}

GroupCode generate_group(const Plan& plan, const Group& group) {
  const Step& source = plan.steps[static_cast<std::size_t>(group.source)];
  std::map<int, StepCode> code;
  StepCode& src = code[group.source];
  std::string in_params;
  for (std::size_t c = 0; c < source.schema.size(); ++c) {
    const std::string p = "c" + std::to_string(c);
    in_params += "GLOBAL const uint* RESTRICT " + p + ",";
    src.values.push_back(source.schema[c].type.wide ? "(((GLOBAL const slong*)" + p + ")[r])"
                                                    : "((slong)(int)" + p + "[r])");
    src.origin.push_back(static_cast<int>(c));
  }
  for (int s : group.steps) {
    const Step& step = plan.steps[static_cast<std::size_t>(s)];
    code[s] = step_code(step, code.at(step.input));
  }

  GroupCode out;
  std::string out_params, masks_decl, masks, counts, scatter, map;
  for (int o : group.outputs) {
    const Step& step = plan.steps[static_cast<std::size_t>(o)];
    const StepCode& sc = code.at(o);
    OutputLayout layout;
    layout.step = o;
    std::string stores;
    for (std::size_t c = 0; c < step.schema.size(); ++c) {
      const bool shared = !sc.compacts && sc.origin[c] >= 0;
      layout.shared.push_back(shared ? sc.origin[c] : -1);
      if (shared) continue;
      const int param = static_cast<int>(out.writes.size());
      out.writes.emplace_back(o, static_cast<int>(c));
      out_params += "GLOBAL uint* RESTRICT o" + std::to_string(param) + ",";
      stores += store(step.schema[c].type, param, sc.compacts ? "slot" : "r", sc.values[c]);
    }
    if (sc.compacts) {
      const std::string m = std::to_string(out.compacted);
      layout.compacted = static_cast<int>(out.compacted++);
      masks_decl += "uint mask" + m + "=0;";
      masks += "mask" + m + "|=((uint)(" + sc.keep + "))<<(k);";
      counts += "{const uint total=compact_group_total(part,mask" + m + ");if(lid()==0)counts[" + m +
                "*stride+tile]=total;}";
      scatter += "{uint slot=compact_first_slot(part,mask" + m + ",counts[" + m +
                 "*stride+tile]);for(uint k=0;k<SCAN_ITEMS;++k){if((mask" + m +
                 ">>k)&1u){const uint r=first+k;" + stores + "++slot;}}}";
    } else if (!stores.empty()) {
      out.mapped = true;
      map += stores;
    }
    out.outputs.push_back(layout);
  }
  out.prelude = "#define PLAN_IN_PARAMS " + in_params + "\n#define PLAN_OUT_PARAMS " + out_params +
                "\n#define PLAN_MASK_DECL " + masks_decl + "\n#define PLAN_MASKS(k) " + masks +
                "\n#define PLAN_TILE_COUNTS " + counts + "\n#define PLAN_SCATTER " + scatter +
                "\n#define PLAN_MAP(r) " + map + "\n";
  return out;
}

}  // namespace varex::plan
