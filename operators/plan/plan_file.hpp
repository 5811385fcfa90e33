#pragma once
// A plan: a small declared chain of relational steps over the generated TPC-H tables (docs/PLANS.md). A
// plan file is JSON:
//   {"plan": "A", "about": "…",
//    "steps": [{"id": "lineitem", "op": "scan", "table": "lineitem", "columns": ["l_shipdate", …]},
//              {"id": "in_1994", "op": "select", "input": "lineitem",
//               "where": [["l_shipdate", ">=", "1994-01-01"], ["l_shipdate", "<", "1995-01-01"]]},
//              {"id": "net", "op": "arith", "input": "in_1994", "compute": ["net", "l_extendedprice", "*",
//               "l_discount"]},
//              {"id": "out", "op": "project", "input": "net", "columns": ["net"]},
//              {"id": "j", "op": "join", "input": "lines", "build": "orders", "on": ["l_orderkey",
//              "o_orderkey"]}],
//    "outputs": ["out"],
//    "sql": ["SELECT … (what DuckDB runs for each output, in order)"]}
// Parsing checks everything a run would trip over and refuses it with one line naming the file and the
// step (UsageError, exit status 2): unknown operators, tables, columns and step ids, a cycle, comparisons
// and arithmetic between values of different types.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "operators/common/attributes/cnf.hpp"
#include "operators/plan/tpch.hpp"

namespace varex::plan {

// The type of a column in a plan. Base columns are 32-bit; an arithmetic result is a 64-bit decimal.
struct ColumnType {
  datasets::TpchType kind = datasets::TpchType::Int;
  int scale = 0;                        // Decimal: digits after the point (hundredths: 2); Int: 0
  bool wide = false;                    // 64-bit
  std::vector<std::string> dictionary;  // Dict

  bool numeric() const { return kind == datasets::TpchType::Int || kind == datasets::TpchType::Decimal; }
  std::string describe() const;  // "date", "decimal(2)", "dict(A,N,R)", "int64 decimal(4)"
};
bool comparable(const ColumnType& a, const ColumnType& b);

struct Column {
  std::string name;
  ColumnType type;
};
using Schema = std::vector<Column>;
// The index of `name` in `schema`, or -1.
int column_index(const Schema& schema, const std::string& name);

using operators::CompareOp;  // operators/common/attributes/cnf.hpp: to_string, compares

// A condition's right-hand side or an arithmetic operand: a column of the step's input, or a literal held
// as the column's own representation (days, hundredths, a dictionary code) or, in arithmetic, as an
// integer with its own scale.
struct Operand {
  int column = -1;  // index in the input schema; -1: the literal
  std::int64_t literal = 0;
  int scale = 0;  // the literal's decimals (arithmetic)
};

struct Condition {
  int column = 0;  // index in the input schema
  CompareOp op = CompareOp::Eq;
  Operand rhs;
};

enum class ArithOp { Add, Sub, Mul };

enum class StepKind { Scan, Select, Arith, Project, Join };
std::string to_string(StepKind kind);

struct Step {
  std::string id;
  StepKind kind = StepKind::Scan;
  int input = -1;                      // index of the input step (every kind but scan); a join's probe side
  int root = -1;                       // the scan the step's rows come from (a join's: its probe side's)
  int build = -1;                      // join: the build side, whose keys are unique (a primary key)
  int probe_key = -1, build_key = -1;  // join: the key columns, in the input's and the build side's schema
  std::string table;                   // scan
  std::vector<int> columns;            // project: indices into the input schema
  std::vector<Condition> where;        // select: a conjunction
  ArithOp arith = ArithOp::Add;        // arith: out = lhs arith rhs, both rescaled to the result's scale
  Operand lhs, rhs;                    // (Mul: no rescaling; the scales add up)
  std::int64_t lhs_factor = 1, rhs_factor = 1;
  Schema schema;  // the step's output
};

struct Plan {
  std::string name;
  std::string about;
  std::vector<Step> steps;  // in an order where every input comes before the steps that read it
  std::vector<int> outputs;
  std::vector<std::string> sql;  // one statement per output (DuckDB's side)
};

// Throws UsageError naming `origin` (the file) and the step.
Plan parse_plan(const nlohmann::json& doc, const std::string& origin);
// Reads and parses a plan file; a file that is missing or not JSON is a UsageError.
nlohmann::json read_plan_file(const std::string& path);

// The tables the plan's scans read, in the order of the steps.
std::vector<std::string> tables_of(const Plan& plan);

}  // namespace varex::plan
