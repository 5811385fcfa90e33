#include "operators/plan/plan_file.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"

namespace varex::plan {

namespace {

using datasets::TpchType;
using nlohmann::json;

// The first kMaxColumns columns of a relation are all a kernel's parameter list takes comfortably.
constexpr std::size_t kMaxColumns = 16;
// A plan is a few kilobytes of JSON; a file far larger is not one.
constexpr std::size_t kMaxPlanFileBytes = 16 << 20;

[[noreturn]] void refuse(const std::string& origin, const std::string& what) {
  throw UsageError("plan " + origin + ": " + what);
}

std::string text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  return value.dump();
}

// "12", "-3", "0.05": the digits as an integer and the number of decimals; false where it is not one.
bool parse_decimal(const std::string& text, std::int64_t& value, int& scale) {
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  value = 0;
  scale = -1;
  bool digits = false;
  for (; i < text.size(); ++i) {
    if (text[i] == '.' && scale < 0) {
      scale = 0;
      continue;
    }
    if (text[i] < '0' || text[i] > '9' || value > 100000000000000LL) return false;
    value = value * 10 + (text[i] - '0');
    digits = true;
    if (scale >= 0) ++scale;
  }
  if (scale < 0) scale = 0;
  if (negative) value = -value;
  return digits;
}

std::int64_t power10(int n) {
  std::int64_t p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

// A literal compared with a column of type `type`, in that column's representation.
std::int64_t typed_literal(const json& value, const Column& column, const std::string& where) {
  const std::string text = text_of(value);
  const ColumnType& type = column.type;
  switch (type.kind) {
    case TpchType::Date: {
      const std::int32_t days = datasets::parse_date(text);
      if (days == datasets::kBadDate)
        throw UsageError(where + ": '" + text + "' is not a date (YYYY-MM-DD) to compare with " +
                         column.name);
      return days;
    }
    case TpchType::Dict: {
      const auto it = std::find(type.dictionary.begin(), type.dictionary.end(), text);
      if (it == type.dictionary.end())
        throw UsageError(where + ": '" + text + "' is not a value of " + column.name + " (" +
                         join(type.dictionary, ", ") + ")");
      return it - type.dictionary.begin();
    }
    case TpchType::Int:
    case TpchType::Decimal: {
      std::int64_t v = 0;
      int scale = 0;
      if (!parse_decimal(text, v, scale))
        throw UsageError(where + ": '" + text + "' is not a number to compare with " + column.name + ", a " +
                         type.describe());
      if (scale > type.scale)
        throw UsageError(where + ": " + text + " has more decimals than " + column.name + ", a " +
                         type.describe());
      return v * power10(type.scale - scale);
    }
  }
  return 0;
}

CompareOp compare_op(const std::string& text, const std::string& where) {
  static const std::map<std::string, CompareOp> ops{
      {"=", CompareOp::Eq},  {"<>", CompareOp::Ne}, {"!=", CompareOp::Ne}, {"<", CompareOp::Lt},
      {"<=", CompareOp::Le}, {">", CompareOp::Gt},  {">=", CompareOp::Ge}};
  const auto it = ops.find(text);
  if (it == ops.end()) throw UsageError(where + ": unknown comparison '" + text + "' (=, <>, <, <=, >, >=)");
  return it->second;
}

ColumnType base_type(const datasets::TpchColumn& c) {
  ColumnType t;
  t.kind = c.type;
  t.scale = c.type == TpchType::Decimal ? 2 : 0;
  t.dictionary = c.dictionary;
  return t;
}

std::string required_string(const json& step, const char* key, const std::string& where) {
  if (!step.contains(key) || !step[key].is_string())
    throw UsageError(where + ": needs \"" + key + "\", a string");
  return step[key].get<std::string>();
}

std::vector<std::string> string_list(const json& step, const char* key, const std::string& where) {
  if (!step.contains(key) || !step[key].is_array() || step[key].empty())
    throw UsageError(where + ": needs \"" + key + "\", a list of names");
  std::vector<std::string> out;
  for (const json& v : step[key]) {
    if (!v.is_string()) throw UsageError(where + ": \"" + key + "\" holds names (strings)");
    out.push_back(v.get<std::string>());
  }
  return out;
}

int input_column(const Schema& schema, const std::string& name, const std::string& where) {
  const int i = column_index(schema, name);
  if (i < 0) {
    std::vector<std::string> names;
    for (const Column& c : schema) names.push_back(c.name);
    throw UsageError(where + ": its input has no column '" + name + "' (" + join(names, ", ") + ")");
  }
  return i;
}

// An arithmetic operand: a numeric column of the input or a number.
Operand arith_operand(const json& value, const Schema& schema, const std::string& where, ColumnType& type) {
  Operand o;
  const std::string text = text_of(value);
  if (value.is_string() && column_index(schema, text) >= 0) {
    o.column = column_index(schema, text);
    type = schema[static_cast<std::size_t>(o.column)].type;
    if (!type.numeric())
      throw UsageError(where + ": arithmetic on " + text + ", a " + type.describe() + " (numbers only)");
    return o;
  }
  if (!parse_decimal(text, o.literal, o.scale))
    throw UsageError(where + ": '" + text + "' is neither a column of its input nor a number");
  type = ColumnType{};
  type.kind = o.scale ? TpchType::Decimal : TpchType::Int;
  type.scale = o.scale;
  return o;
}

void parse_step_body(Step& s, const json& j, const Plan& plan, const std::map<std::string, int>& index,
                     const std::string& where) {
  if (s.kind == StepKind::Scan) {
    s.table = required_string(j, "table", where);
    const auto& tables = datasets::tpch_tables();
    if (std::find(tables.begin(), tables.end(), s.table) == tables.end())
      throw UsageError(where + ": unknown table '" + s.table + "' (" + join(tables, ", ") + ")");
    for (const std::string& name : string_list(j, "columns", where)) {
      const datasets::TpchColumn* c = datasets::find_tpch_column(name);
      if (!c || c->table != s.table)
        throw UsageError(where + ": " + s.table + " has no generated column '" + name + "'");
      if (column_index(s.schema, name) >= 0) throw UsageError(where + ": column '" + name + "' twice");
      s.schema.push_back({name, base_type(*c)});
    }
    return;
  }
  const std::string input = required_string(j, "input", where);
  s.input = index.at(input);
  const Schema& in = plan.steps[static_cast<std::size_t>(s.input)].schema;
  switch (s.kind) {
    case StepKind::Select: {
      if (!j.contains("where") || !j["where"].is_array() || j["where"].empty())
        throw UsageError(where + ": needs \"where\", a list of [column, comparison, value]");
      for (const json& c : j["where"]) {
        if (!c.is_array() || c.size() != 3 || !c[0].is_string() || !c[1].is_string())
          throw UsageError(where + ": a condition is [column, comparison, value], not " + c.dump());
        Condition cond;
        cond.column = input_column(in, c[0].get<std::string>(), where);
        cond.op = compare_op(c[1].get<std::string>(), where);
        const Column& lhs = in[static_cast<std::size_t>(cond.column)];
        if (c[2].is_object()) {
          if (!c[2].contains("column") || !c[2]["column"].is_string())
            throw UsageError(where + ": a column on the right is {\"column\": name}");
          cond.rhs.column = input_column(in, c[2]["column"].get<std::string>(), where);
          const Column& rhs = in[static_cast<std::size_t>(cond.rhs.column)];
          if (!comparable(lhs.type, rhs.type))
            throw UsageError(where + ": type mismatch: " + lhs.name + " is a " + lhs.type.describe() + ", " +
                             rhs.name + " a " + rhs.type.describe());
        } else {
          cond.rhs.literal = typed_literal(c[2], lhs, where);
        }
        s.where.push_back(cond);
      }
      s.schema = in;
      return;
    }
    case StepKind::Arith: {
      if (!j.contains("compute") || !j["compute"].is_array() || j["compute"].size() != 4 ||
          !j["compute"][0].is_string() || !j["compute"][2].is_string())
        throw UsageError(where + ": needs \"compute\": [name, operand, \"+\" | \"-\" | \"*\", operand]");
      const json& c = j["compute"];
      const std::string name = c[0].get<std::string>();
      if (column_index(in, name) >= 0)
        throw UsageError(where + ": its input already has a column '" + name + "'");
      ColumnType lt, rt;
      s.lhs = arith_operand(c[1], in, where, lt);
      s.rhs = arith_operand(c[3], in, where, rt);
      const std::string op = c[2].get<std::string>();
      if (op != "+" && op != "-" && op != "*")
        throw UsageError(where + ": unknown arithmetic '" + op + "' (+, -, *)");
      s.arith = op == "+" ? ArithOp::Add : op == "-" ? ArithOp::Sub : ArithOp::Mul;
      ColumnType out;
      out.kind = TpchType::Decimal;
      out.wide = true;
      if (s.arith == ArithOp::Mul) {
        out.scale = lt.scale + rt.scale;
      } else {
        out.scale = std::max(lt.scale, rt.scale);
        s.lhs_factor = power10(out.scale - lt.scale);
        s.rhs_factor = power10(out.scale - rt.scale);
      }
      if (out.scale > 8)
        throw UsageError(where + ": the result would have " + std::to_string(out.scale) +
                         " decimals (at most 8)");
      s.schema = in;
      s.schema.push_back({name, out});
      return;
    }
    case StepKind::Join: {
      s.build = index.at(j["build"].get<std::string>());
      const Schema& build = plan.steps[static_cast<std::size_t>(s.build)].schema;
      const std::vector<std::string> on = string_list(j, "on", where);
      if (on.size() != 2)
        throw UsageError(where + ": \"on\" is [a column of its input, a column of its build side]");
      s.probe_key = input_column(in, on[0], where);
      const int b = column_index(build, on[1]);
      if (b < 0) throw UsageError(where + ": its build side has no column '" + on[1] + "'");
      s.build_key = b;
      const Column& pk = in[static_cast<std::size_t>(s.probe_key)];
      const Column& bk = build[static_cast<std::size_t>(b)];
      if (!comparable(pk.type, bk.type) || pk.type.wide || bk.type.wide)
        throw UsageError(where + ": type mismatch: " + pk.name + " is a " + pk.type.describe() + ", " +
                         bk.name + " a " + bk.type.describe() + " (join keys are 32-bit values of one type)");
      const int probe_root = plan.steps[static_cast<std::size_t>(s.input)].root;
      if (probe_root == plan.steps[static_cast<std::size_t>(s.build)].root)
        throw UsageError(where + ": both sides come from one scan (a self-join is not supported)");
      s.schema = in;
      for (std::size_t c = 0; c < build.size(); ++c) {
        if (static_cast<int>(c) == b) continue;
        if (column_index(s.schema, build[c].name) >= 0)
          throw UsageError(where + ": both sides have a column '" + build[c].name + "'");
        s.schema.push_back(build[c]);
      }
      return;
    }
    case StepKind::Project: {
      for (const std::string& name : string_list(j, "columns", where)) {
        const int i = input_column(in, name, where);
        if (std::find(s.columns.begin(), s.columns.end(), i) != s.columns.end())
          throw UsageError(where + ": column '" + name + "' twice");
        s.columns.push_back(i);
        s.schema.push_back(in[static_cast<std::size_t>(i)]);
      }
      return;
    }
    case StepKind::Scan:
      return;
  }
}

}  // namespace

std::string ColumnType::describe() const {
  std::string out = wide ? "int64 " : "";
  switch (kind) {
    case TpchType::Int:
      return out + "int";
    case TpchType::Date:
      return out + "date";
    case TpchType::Decimal:
      return out + "decimal(" + std::to_string(scale) + ")";
    case TpchType::Dict:
      return out + "dict(" + join(dictionary, ",") + ")";
  }
  return out;
}

bool comparable(const ColumnType& a, const ColumnType& b) {
  if (a.numeric() && b.numeric()) return a.scale == b.scale;
  return a.kind == b.kind && a.dictionary == b.dictionary;
}

int column_index(const Schema& schema, const std::string& name) {
  for (std::size_t i = 0; i < schema.size(); ++i) {
    if (schema[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string to_string(StepKind kind) {
  switch (kind) {
    case StepKind::Scan:
      return "scan";
    case StepKind::Select:
      return "select";
    case StepKind::Arith:
      return "arith";
    case StepKind::Project:
      return "project";
    case StepKind::Join:
      return "join";
  }
  return "?";
}

namespace {

Plan parse_plan_document(const json& doc, const std::string& origin) {
  if (!doc.is_object()) refuse(origin, "a plan is a JSON object");
  Plan plan;
  plan.name = doc.value("plan", std::string());
  if (plan.name.empty()) refuse(origin, "needs \"plan\", its name");
  plan.about = doc.value("about", std::string());
  if (!doc.contains("steps") || !doc["steps"].is_array() || doc["steps"].empty())
    refuse(origin, "needs \"steps\", a list of steps");

  // Ids and operators first, so that inputs may name any step; then the order in which inputs come first.
  static const std::map<std::string, StepKind> kinds{{"scan", StepKind::Scan},
                                                     {"select", StepKind::Select},
                                                     {"arith", StepKind::Arith},
                                                     {"project", StepKind::Project},
                                                     {"join", StepKind::Join}};
  std::map<std::string, std::size_t> position;
  std::vector<std::vector<std::string>> inputs;  // per step: its input, and a join's build side
  const json& steps = doc["steps"];
  const auto id_of = [&](std::size_t i) { return steps[i]["id"].get<std::string>(); };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json& j = steps[i];
    if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || j["id"].get<std::string>().empty())
      refuse(origin, "step " + std::to_string(i + 1) + " needs \"id\", a name");
    const std::string where = "step '" + id_of(i) + "'";
    if (!position.emplace(id_of(i), i).second) refuse(origin, where + " is declared twice");
    const std::string op = j.value("op", std::string());
    if (!kinds.count(op))
      refuse(origin, where + ": unknown operator '" + op + "' (scan, select, arith, project, join)");
    inputs.emplace_back();
    for (const char* key : {"input", "build"}) {
      if (kinds.at(op) == StepKind::Scan || (kinds.at(op) != StepKind::Join && std::string(key) == "build"))
        continue;
      if (!j.contains(key) || !j[key].is_string())
        refuse(origin, where + ": needs \"" + key + "\", a step id");
      inputs.back().push_back(j[key].get<std::string>());
    }
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (const std::string& in : inputs[i]) {
      if (!position.count(in)) refuse(origin, "step '" + id_of(i) + "': unknown input '" + in + "'");
    }
  }
  // Depth first from every step: a step is placed once its inputs are; meeting a step that is still on the
  // path is a cycle, named in the direction data flows.
  std::vector<int> state(steps.size(), 0);  // 0 unseen, 1 on the path, 2 placed
  std::vector<std::size_t> order, path;
  std::function<void(std::size_t)> place = [&](std::size_t at) {
    if (state[at] == 2) return;
    if (state[at] == 1) {
      std::vector<std::string> cycle;
      for (auto it = std::find(path.begin(), path.end(), at); it != path.end(); ++it)
        cycle.push_back(id_of(*it));
      std::reverse(cycle.begin(), cycle.end());
      cycle.push_back(cycle.front());
      refuse(origin, "the steps " + join(cycle, " -> ") + " form a cycle");
    }
    state[at] = 1;
    path.push_back(at);
    for (const std::string& in : inputs[at]) place(position.at(in));
    path.pop_back();
    state[at] = 2;
    order.push_back(at);
  };
  for (std::size_t start = 0; start < steps.size(); ++start) place(start);

  std::map<std::string, int> index;
  for (std::size_t i : order) {
    const json& j = steps[i];
    Step s;
    s.id = j["id"].get<std::string>();
    s.kind = kinds.at(j["op"].get<std::string>());
    try {
      parse_step_body(s, j, plan, index, "step '" + s.id + "'");
    } catch (const UsageError& e) {
      refuse(origin, e.what());
    }
    if (s.schema.size() > kMaxColumns)
      refuse(origin, "step '" + s.id + "' has " + std::to_string(s.schema.size()) + " columns (at most " +
                         std::to_string(kMaxColumns) + ")");
    index[s.id] = static_cast<int>(plan.steps.size());
    s.root = s.kind == StepKind::Scan ? index[s.id] : plan.steps[static_cast<std::size_t>(s.input)].root;
    plan.steps.push_back(std::move(s));
  }

  for (const std::string& out : string_list(doc, "outputs", "plan " + origin)) {
    if (!index.count(out)) refuse(origin, "unknown output '" + out + "'");
    if (plan.steps[static_cast<std::size_t>(index.at(out))].kind == StepKind::Scan)
      refuse(origin, "output '" + out + "' is a scan: a plan's outputs are results of its operators");
    plan.outputs.push_back(index.at(out));
  }
  if (doc.contains("sql")) {
    plan.sql = string_list(doc, "sql", "plan " + origin);
    if (plan.sql.size() != plan.outputs.size())
      refuse(origin, "\"sql\" has " + std::to_string(plan.sql.size()) + " statements for " +
                         std::to_string(plan.outputs.size()) + " outputs");
  }
  return plan;
}

}  // namespace

Plan parse_plan(const json& doc, const std::string& origin) {
  // The checks above name what a plan needs; a value of a type no check expected (a number where a column
  // name goes, found by fuzzing) is refused here too, never an exception of the JSON library's.
  try {
    return parse_plan_document(doc, origin);
  } catch (const json::exception& e) {
    refuse(origin, std::string("a value of the wrong type or shape: ") + e.what());
  } catch (const std::out_of_range& e) {
    refuse(origin, std::string("a reference to nothing: ") + e.what());
  }
}

json read_plan_file(const std::string& path) {
  // Only a regular file is read: a FIFO would block until a writer came, a directory is not a plan.
  const std::string text = datasets::read_input_file(path, kMaxPlanFileBytes, "plan");
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // Syntax errors, and numbers no double holds (json::out_of_range), are the file's, not varex's.
    throw UsageError("plan " + path + ": not JSON varex can read: " + std::string(e.what()));
  }
}

std::vector<std::string> tables_of(const Plan& plan) {
  std::vector<std::string> tables;
  for (const Step& s : plan.steps) {
    if (s.kind == StepKind::Scan && std::find(tables.begin(), tables.end(), s.table) == tables.end())
      tables.push_back(s.table);
  }
  return tables;
}

}  // namespace varex::plan
