#include "operators/plan/plan_tables.hpp"

#include <filesystem>
#include <fstream>

#include "base/errors.hpp"
#include "operators/plan/plan_reference.hpp"

namespace varex::plan {

namespace {

std::string sql_value(const ColumnType& type, std::int64_t v) {
  switch (type.kind) {
    case datasets::TpchType::Date:
      return datasets::format_date(static_cast<std::int32_t>(v));
    case datasets::TpchType::Dict:
      return type.dictionary.at(static_cast<std::size_t>(v));
    case datasets::TpchType::Decimal: {
      std::int64_t scale = 1;
      for (int i = 0; i < type.scale; ++i) scale *= 10;
      const std::string sign = v < 0 ? "-" : "";
      const std::uint64_t a = static_cast<std::uint64_t>(v < 0 ? -v : v);
      std::string frac = std::to_string(a % static_cast<std::uint64_t>(scale));
      frac.insert(0, static_cast<std::size_t>(type.scale) - frac.size(), '0');
      return sign + std::to_string(a / static_cast<std::uint64_t>(scale)) + (type.scale ? "." + frac : "");
    }
    case datasets::TpchType::Int:
      break;
  }
  return std::to_string(v);
}

std::string int128_text(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 a =
      negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string out;
  while (a) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(a % 10)));
    a /= 10;
  }
  return negative ? "-" + out : out;
}

}  // namespace

nlohmann::json write_plan_tables(const nlohmann::json& doc, const std::string& origin, double scale_factor,
                                 std::uint64_t seed, const std::string& dir) {
  const Plan plan = parse_plan(doc, origin);
  datasets::TpchData data(scale_factor, seed);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw RuntimeError("cannot create " + dir + ": " + ec.message());
  // Every column any scan of a table reads, once.
  std::map<std::string, Schema> tables;
  for (const Step& s : plan.steps) {
    if (s.kind != StepKind::Scan) continue;
    for (const Column& c : s.schema) {
      if (column_index(tables[s.table], c.name) < 0) tables[s.table].push_back(c);
    }
  }
  for (const auto& [table, schema] : tables) {
    const std::string path = dir + "/" + table + ".csv";
    std::ofstream out(path);
    if (!out) throw RuntimeError("cannot write " + path);
    for (std::size_t c = 0; c < schema.size(); ++c) out << (c ? "," : "") << schema[c].name;
    out << "\n";
    std::vector<const std::vector<std::int32_t>*> columns;
    for (const Column& c : schema) columns.push_back(&data.column(c.name));
    std::string line;
    for (std::uint64_t r = 0; r < data.rows(table); ++r) {
      line.clear();
      for (std::size_t c = 0; c < schema.size(); ++c) {
        if (c) line += ',';
        line += sql_value(schema[c].type, (*columns[c])[r]);
      }
      line += '\n';
      out << line;
    }
    if (!out) throw RuntimeError("cannot write " + path);
  }
  std::ofstream(dir + "/plan.json") << doc.dump(2) << "\n";

  const std::vector<HostRelation> reference = plan_reference(plan, data);
  nlohmann::json outputs = nlohmann::json::array();
  for (int o : plan.outputs) {
    const Step& step = plan.steps[static_cast<std::size_t>(o)];
    const HostRelation& r = reference[static_cast<std::size_t>(o)];
    nlohmann::json columns = nlohmann::json::array();
    for (std::size_t c = 0; c < step.schema.size(); ++c) {
      __int128 sum = 0;
      for (std::int64_t v : *r.columns[c]) sum += v;
      const ColumnType& t = step.schema[c].type;
      columns.push_back({{"name", step.schema[c].name},
                         {"type", datasets::to_string(t.kind)},
                         {"scale", t.scale},
                         {"dictionary", t.dictionary},
                         {"sum", int128_text(sum)}});
    }
    outputs.push_back({{"id", step.id}, {"rows", r.rows}, {"columns", columns}});
  }
  nlohmann::json table_schemas = nlohmann::json::object();
  for (const auto& [table, schema] : tables) {
    for (const Column& c : schema) {
      table_schemas[table].push_back(
          {{"name", c.name}, {"type", datasets::to_string(c.type.kind)}, {"scale", c.type.scale}});
    }
  }
  nlohmann::json summary{{"plan", plan.name},       {"sf", scale_factor}, {"seed", seed},
                         {"tables", table_schemas}, {"outputs", outputs}, {"sql", plan.sql}};
  std::ofstream(dir + "/summary.json") << summary.dump(2) << "\n";
  return summary;
}

}  // namespace varex::plan
