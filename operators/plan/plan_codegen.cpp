#include "operators/plan/plan_codegen.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

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
  std::string lookup;               // a join: the assignment of its build row
  bool compacts = false;            // a SELECT lies on the way from the source
};

std::string operand(const StepCode& in, const Operand& o) {
  return o.column < 0 ? literal(o.literal) : in.values[static_cast<std::size_t>(o.column)];
}

std::string column_param(const ColumnType& type, const std::string& param, const std::string& row) {
  return type.wide ? "(((GLOBAL const slong*)" + param + ")[" + row + "])"
                   : "((slong)(int)" + param + "[" + row + "])";
}

// `join`: the join's ordinal in its group (its table's parameters and build row are named after it).
StepCode step_code(const Plan& plan, const Step& s, const StepCode& in, int join) {
  StepCode out = in;
  switch (s.kind) {
    case StepKind::Join: {
      const std::string j = std::to_string(join), row = "j" + j;
      out.lookup = row + "=plan_lookup(hk" + j + ",hr" + j + ",hm" + j + ",(int)(" +
                   in.values[static_cast<std::size_t>(s.probe_key)] + "))";
      out.keep += "&&((" + out.lookup + ")>=0)";
      const Schema& build = plan.steps[static_cast<std::size_t>(s.build)].schema;
      for (std::size_t c = 0; c < build.size(); ++c) {
        if (static_cast<int>(c) == s.build_key) continue;
        out.values.push_back(column_param(build[c].type, "b" + j + "_" + std::to_string(c), row));
        out.origin.push_back(-1);
      }
      out.compacts = true;
      break;
    }
    case StepKind::Select:
      for (const Condition& c : s.where) {
        const std::string op = c.op == CompareOp::Eq ? "==" : to_string(c.op);
        out.keep += "&&(" + in.values[static_cast<std::size_t>(c.column)] + op + operand(in, c.rhs) + ")";
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
  return kind == StepKind::Select || kind == StepKind::Arith || kind == StepKind::Join;
}

std::vector<Group> plan_groups(const Plan& plan, bool fuse) {
  std::vector<Group> groups;
  const auto& steps = plan.steps;
  // Materialised: the plan's outputs, and the build sides of joins (a hash table is built from them).
  std::vector<bool> materialised(steps.size(), false);
  for (int o : plan.outputs) materialised[static_cast<std::size_t>(o)] = true;
  for (const Step& s : steps) {
    if (s.kind == StepKind::Join) materialised[static_cast<std::size_t>(s.build)] = true;
  }
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
    // Every element-wise step and join belongs to the group of the scan its rows come from; steps are in
    // input order, so the groups are too, except that a group must follow those that make its build sides.
    std::map<int, std::size_t> group_of_root;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == StepKind::Scan) continue;
      auto [it, added] = group_of_root.try_emplace(steps[i].root, groups.size());
      if (added) {
        groups.emplace_back();
        groups.back().source = steps[i].root;
      }
      Group& g = groups[it->second];
      g.steps.push_back(static_cast<int>(i));
      if (materialised[i]) g.outputs.push_back(static_cast<int>(i));
    }
    std::vector<Group> ordered;
    std::vector<bool> done(groups.size(), false);
    while (ordered.size() < groups.size()) {
      const std::size_t before = ordered.size();
      for (std::size_t k = 0; k < groups.size(); ++k) {
        if (done[k]) continue;
        bool ready = true;
        for (int s : groups[k].steps) {
          if (steps[static_cast<std::size_t>(s)].kind != StepKind::Join) continue;
          const Step& build = steps[static_cast<std::size_t>(steps[static_cast<std::size_t>(s)].build)];
          if (build.kind == StepKind::Scan) continue;
          for (std::size_t m = 0; m < groups.size(); ++m) {
            if (!done[m] && groups[m].source == build.root) ready = false;
          }
        }
        if (!ready) continue;
        done[k] = true;
        ordered.push_back(groups[k]);
      }
      if (ordered.size() == before) throw std::logic_error("plan groups depend on each other in a circle");
    }
    groups = std::move(ordered);
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
  GroupCode out;
  std::string row_decl, lookups;
  for (int s : group.steps) {
    const Step& step = plan.steps[static_cast<std::size_t>(s)];
    const int join = static_cast<int>(out.joins.size());
    code[s] = step_code(plan, step, code.at(step.input), join);
    if (step.kind != StepKind::Join) continue;
    out.joins.push_back(s);
    const std::string j = std::to_string(join);
    const Schema& build = plan.steps[static_cast<std::size_t>(step.build)].schema;
    for (std::size_t c = 0; c < build.size(); ++c)
      in_params += "GLOBAL const uint* RESTRICT b" + j + "_" + std::to_string(c) + ",";
    in_params += "GLOBAL const int* RESTRICT hk" + j + ",GLOBAL const uint* RESTRICT hr" + j +
                 ",const uint hm" + j + ",";
    row_decl += "int j" + j + "=-1;";
    lookups += code[s].lookup + ";";
  }

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
                 ">>k)&1u){const uint r=first+k;PLAN_ROW_DECL PLAN_LOOKUPS " + stores + "++slot;}}}";
    } else if (!stores.empty()) {
      out.mapped = true;
      map += stores;
    }
    out.outputs.push_back(layout);
  }
  out.prelude = "#define PLAN_IN_PARAMS " + in_params + "\n#define PLAN_OUT_PARAMS " + out_params +
                "\n#define PLAN_ROW_DECL " + row_decl + "\n#define PLAN_LOOKUPS " + lookups +
                "\n#define PLAN_MASK_DECL " + masks_decl + "\n#define PLAN_MASKS(k) " + masks +
                "\n#define PLAN_TILE_COUNTS " + counts + "\n#define PLAN_SCATTER " + scatter +
                "\n#define PLAN_MAP(r) " + map + "\n";
  return out;
}

}  // namespace varex::plan
