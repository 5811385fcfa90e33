// `varex report` as a reader sees it: the best-variant tables show only the columns that apply, with
// rounded numbers; best.csv names each row's workload class; a tunable pinned in a sweep gets no panel;
// every sweep of a workload is drawn; plots carry plain, legible tick labels. What was drawn is read from
// plots.json, the manifest the report script writes next to index.html.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "operators/groupby/groupby.hpp"
#include "support.hpp"
#include "synthetic_sweep.hpp"

namespace varex {
namespace {

using test::slurp;

constexpr std::uint64_t kRows = 1 << 16;

// Two identical GPUs, each a device of its own by its physical identity.
DeviceInfo first_device() {
  DeviceInfo d = test::synthetic_device();
  d.physical = "index 0";
  return d;
}

DeviceInfo second_device() {
  DeviceInfo d = test::synthetic_device();
  d.id = "ocl:0:1";
  d.physical = "index 1";
  return d;
}

datasets::WorkloadSpec selection_workload(std::uint64_t rows = kRows) {
  datasets::WorkloadSpec w;
  w.op = "selection";
  w.generator = "uniform_int32";
  w.params = {{"rows", rows}, {"seed", 1}, {"selectivity", 0.5}};
  return w;
}

datasets::WorkloadSpec groupby_workload() {
  datasets::WorkloadSpec w;
  w.op = "groupby";
  w.generator = "group_keys";
  w.params = {{"rows", kRows}, {"distinct", 1024}, {"seed", 1}, {"zipf", 0.0}};
  return w;
}

// The energy a measurement of the synthetic sweep gets where its sweep measured energy: each variant draws
// one of five powers (150 to 310 W, by its id), so that time and energy rank differently.
varex::EnergyReading synthetic_energy(const std::string& variant, double kernel_ms) {
  const double watts = 150 + 40 * static_cast<double>(std::hash<std::string>{}(variant) % 5);
  const int reps = 1000;
  return {"nvml counter", watts * kernel_ms / 1e3 * reps, kernel_ms / 1e3 * reps, reps, 0.001, 1980, 2619};
}

// A sweep of the synthetic selection space restricted by `pins` (as `varex sweep --set` records one): the
// search, then its three fastest verified variants measured again. Returns the session id.
std::int64_t record_sweep(results::Store& store, const DeviceInfo& device,
                          const std::map<std::string, std::string>& pins, std::uint32_t seed,
                          bool with_energy = false, std::uint64_t rows = kRows) {
  operators::SelectionOperator op;
  const std::int64_t row = store.device(device);
  store.set_probe(row, {1000.0, "runtime_copy", {{"bytes", 1}}});
  store.ensure_operator(op.name(), op.description());
  const auto workload = selection_workload(rows);
  store.ensure_workload(workload, op.workload_class(workload));
  const auto space = op.space({device, rows}).restricted(pins);
  const auto session = store.begin_session("sweep", "selection", row, workload.id(), "exhaustive", {});
  std::vector<results::RecordedMeasurement> ok;
  for (const auto& r : test::synthetic_recording(space, seed)) {
    const std::string id = harness::variant_id(op, device.backend, r.params);
    store.ensure_variant(id, "selection", device.backend, r.params, "hash", space.compile_part(r.params));
    auto m = r.m;
    if (with_energy && m.ok() && !m.cut_off) m.energy = synthetic_energy(id, m.kernel.median);
    store.record(session, id, row, workload.id(), m);
    if (r.m.ok()) ok.push_back(r);
  }
  std::sort(ok.begin(), ok.end(),
            [](const auto& a, const auto& b) { return a.m.kernel.median < b.m.kernel.median; });
  results::SessionOutcome outcome;
  for (std::size_t i = 0; i < ok.size() && i < 3; ++i) {
    // Measured again a little slower than its search sample, as a re-measurement often is: the declared
    // best is then not the convergence curve's last point.
    auto again = ok[i].m;
    for (auto& ms : again.samples_ms) ms *= 1.25;
    again.kernel = summarize(again.samples_ms);
    const auto id = harness::variant_id(op, device.backend, ok[i].params);
    if (with_energy) again.energy = synthetic_energy(id, again.kernel.median);
    store.record(session, id, row, workload.id(), again, 0, "remeasure");
    if (outcome.best_variant.empty() || again.kernel.median < outcome.best_kernel_ms) {
      outcome.best_variant = id;
      outcome.best_kernel_ms = again.kernel.median;
    }
  }
  store.end_session(session, "finished", outcome);
  return session;
}

// A short group-by tuning session (two variants, both measured again), so that the best variants span two
// operators with different tunables, as the user's database did.
void record_groupby_tune(results::Store& store, const DeviceInfo& device) {
  operators::GroupByOperator op;
  const std::int64_t row = store.device(device);
  store.ensure_operator(op.name(), op.description());
  const auto workload = groupby_workload();
  store.ensure_workload(workload, op.workload_class(workload));
  const auto space = op.space({device, kRows});
  const auto session =
      store.begin_session("tune", "groupby", row, workload.id(), "random", {{"budget", "2"}}, 1, "2");
  const std::vector<variants::Params> tried{space.defaults(), space.neighbours(space.defaults()).at(0)};
  double ms = 3.0;
  for (const auto& params : tried) {
    varex::Measurement m;
    m.verified = true;
    m.samples_ms = {ms, ms * 1.01, ms * 0.99, ms, ms * 1.02};
    m.kernel = summarize(m.samples_ms);
    m.bytes_moved = 8u << 20;
    m.gbps = static_cast<double>(m.bytes_moved) / (ms * 1e6);
    m.probe_fraction = m.gbps / 1000.0;
    m.h2d_ms = 0.123456789;
    m.d2h_ms = 0.0123456789;
    const std::string id = harness::variant_id(op, device.backend, params);
    store.ensure_variant(id, "groupby", device.backend, params, "hash", space.compile_part(params));
    store.record(session, id, row, workload.id(), m);
    store.record(session, id, row, workload.id(), m, 0, "remeasure");
    ms *= 0.8;
  }
  store.end_session(session, "finished");
}

// A series over rows plots, per point, the best `varex best` names, by its re-measurements (issue 48: the
// fastest search sample; record_sweep re-measures a quarter slower than the search found).
TEST(ReportSeries, TheBestLineIsTheReMeasuredBest) {
  const std::string dir = test::scratch_dir("report_series");
  std::map<std::uint64_t, double> best_ms;  // rows -> varex best's kernel ms
  {
    results::Store store(dir + "/v.db");
    for (const std::uint64_t rows : {kRows, 2 * kRows})
      record_sweep(store, first_device(), {{"kernel", "overflow"}, {"ept", "8,16"}}, 5, false, rows);
    for (const auto& b : store.best()) best_ms[b.workload.rows()] = b.kernel_ms;
  }
  ASSERT_EQ(best_ms.size(), 2u);
  const auto r = test::run_varex({"report", "--db", dir + "/v.db", "--out", dir + "/report"});
  ASSERT_EQ(r.status, 0) << r.err << slurp(dir + "/report/report.log");
  int series = 0;
  for (const auto& p : nlohmann::json::parse(slurp(dir + "/report/plots.json"))) {
    if (p["kind"] != "series") continue;
    ++series;
    // One device, one host: its best line is the one labelled so.
    nlohmann::json line;
    for (const auto& [label, drawn] : p["lines"].items()) {
      if (label.rfind(first_device().id + "@", 0) == 0 &&
          label.find(": best own variant, re-measured") != std::string::npos)
        line = drawn;
    }
    ASSERT_EQ(line.size(), 2u) << line;
    for (const auto& point : line) {
      const auto rows = static_cast<std::uint64_t>(point[0].get<double>());
      EXPECT_NEAR(point[1].get<double>(), best_ms.at(rows), 1e-7 * best_ms.at(rows))
          << rows;  // CSV: 9 digits
    }
  }
  EXPECT_EQ(series, 1);
}

// One best-variant table of index.html: its operator, headings and cell texts (tags removed).
struct HtmlTable {
  std::string op;
  std::string objective;  // what its rows are best by
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::size_t column(const std::string& title) const {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), title) - header.begin());
  }
  bool has(const std::string& title) const { return column(title) < header.size(); }
};

std::string text_of(std::string cell) {
  static const RE2 tag("<[^>]*>");
  RE2::GlobalReplace(&cell, tag, "");
  return cell;
}

// The contents of every <th> or <td> of `row`, in order.
std::vector<std::string> cells(const std::string& row) {
  static const RE2 cell("<t[hd][^>]*>(.*?)</t[hd]>");
  std::vector<std::string> out;
  re2::StringPiece rest(row);
  std::string text;
  while (RE2::FindAndConsume(&rest, cell, &text)) out.push_back(text_of(text));
  return out;
}

// The best-variant tables, found by plain search: the page also holds megabytes of inlined images, which
// a regular expression should not scan.
std::vector<HtmlTable> best_tables(const std::string& html) {
  static const std::string start = "<table class='best' data-op='";
  static const RE2 row("<tr>(.*?)</tr>");
  std::vector<HtmlTable> out;
  for (auto at = html.find(start); at != std::string::npos; at = html.find(start, at + 1)) {
    const auto op_end = html.find('\'', at + start.size());
    const auto end = html.find("</table>", op_end);
    HtmlTable parsed{html.substr(at + start.size(), op_end - at - start.size()), {}, {}, {}};
    static const std::string objective = "data-objective='";
    const auto tag_end = html.find('>', op_end);
    if (const auto o = html.find(objective, op_end); o < tag_end) {
      const auto from = o + objective.size();
      parsed.objective = html.substr(from, html.find('\'', from) - from);
    }
    const std::string body = html.substr(op_end, end - op_end);
    re2::StringPiece rest(body);
    std::string text;
    while (RE2::FindAndConsume(&rest, row, &text)) {
      if (parsed.header.empty()) {
        parsed.header = cells(text);
      } else {
        parsed.rows.push_back(cells(text));
      }
    }
    out.push_back(std::move(parsed));
  }
  return out;
}

// Significant digits of a plain decimal number ("0.02603" has 4).
int significant_digits(const std::string& number) {
  std::string digits = number;
  RE2::GlobalReplace(&digits, "[^0-9]", "");
  const auto first = digits.find_first_not_of('0');
  return first == std::string::npos ? 0 : static_cast<int>(digits.size() - first);
}

// Two devices: the first swept twice with the same workload (kernel pinned), the second swept once with
// kernel and vec pinned, and a group-by tuning session on the first. One report of it for every test.
class ReportPage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(test::scratch_dir("report_page"));
    {
      results::Store store(*dir_ + "/v.db");
      first_sweeps_ = {record_sweep(store, first_device(), {{"kernel", "overflow"}, {"ept", "8,16"}}, 5),
                       record_sweep(store, first_device(), {{"kernel", "overflow"}, {"ept", "8,16"}}, 6)};
      second_sweep_ =
          record_sweep(store, second_device(), {{"kernel", "overflow"}, {"ept", "8,16"}, {"vec", "1"}}, 7,
                       /*with_energy=*/true);
      record_groupby_tune(store, first_device());
    }
    const auto r = test::run_varex({"report", "--db", *dir_ + "/v.db", "--out", out()});
    ASSERT_EQ(r.status, 0) << r.err << slurp(out() + "/report.log");
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string out() { return *dir_ + "/report"; }
  static nlohmann::json plots() { return nlohmann::json::parse(slurp(out() + "/plots.json")); }
  // The plots of one kind about one device's selection sweeps.
  static std::vector<nlohmann::json> plots_of(const std::string& kind, const std::string& device) {
    std::vector<nlohmann::json> found;
    for (const auto& p : plots()) {
      if (p["kind"] == kind && p["target"]["device"] == device && p["target"]["op"] == "selection")
        found.push_back(p);
    }
    return found;
  }

  static inline std::string* dir_ = nullptr;
  static inline std::vector<std::int64_t> first_sweeps_;
  static inline std::int64_t second_sweep_ = 0;
};

TEST_F(ReportPage, BestTablesShowOnlyTheColumnsThatApply) {
  const auto tables = best_tables(slurp(out() + "/index.html"));
  std::set<std::string> ops;
  for (const HtmlTable& t : tables) {
    ops.insert(t.op);
    ASSERT_FALSE(t.rows.empty()) << t.op;
    for (std::size_t c = 0; c < t.header.size(); ++c) {
      bool filled = false;
      for (const auto& row : t.rows) {
        ASSERT_EQ(row.size(), t.header.size()) << t.op;
        filled = filled || !row[c].empty();
      }
      EXPECT_TRUE(filled) << t.op << ": column '" << t.header[c] << "' is empty in every row";
    }
    EXPECT_TRUE(t.has("workload")) << t.op;
  }
  EXPECT_EQ(ops, (std::set<std::string>{"groupby", "selection"}));  // one table per operator
  for (const HtmlTable& t : tables) {
    // Each operator's own tunables, none of the other's.
    EXPECT_EQ(t.has("ept"), t.op == "selection") << t.op;
    EXPECT_EQ(t.has("vec"), t.op == "selection") << t.op;
    EXPECT_TRUE(t.has("grid")) << t.op;  // the launch vocabulary both share
    EXPECT_EQ(t.has("agg"), t.op == "groupby") << t.op;
    EXPECT_EQ(t.has("sizing"), t.op == "groupby") << t.op;
  }
}

// Where re-measured candidates carry energy, a table of the most frugal and one by edp follow the fastest,
// with the energy and power columns, holding what `varex best --objective` holds.
TEST_F(ReportPage, BestTablesByEnergyWhereMeasurementsCarryIt) {
  std::map<std::string, HtmlTable> selection;
  for (const HtmlTable& t : best_tables(slurp(out() + "/index.html"))) {
    if (t.op == "selection") selection[t.objective] = t;
    if (t.op == "groupby") {
      EXPECT_EQ(t.objective, "time");  // no energy measured for it
    }
  }
  ASSERT_EQ(selection.size(), 3u);
  results::Store store(*dir_ + "/v.db", results::Database::Mode::Existing);
  for (const auto objective : {Objective::Energy, Objective::Edp}) {
    const HtmlTable& t = selection.at(to_string(objective));
    EXPECT_TRUE(t.has("mJ") && t.has("W")) << to_string(objective);
    const auto bests = store.best({"selection", std::nullopt, false, objective});
    ASSERT_EQ(bests.size(), 1u);  // the second device's only
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_NE(t.rows[0][t.column("device")].find(bests[0].device.id), std::string::npos);
    EXPECT_NE(t.rows[0][t.column("mJ")], "");
  }
  const std::string csv = slurp(out() + "/best.csv");
  EXPECT_NE(csv.find(",energy,"), std::string::npos);
  EXPECT_NE(csv.find(",edp,"), std::string::npos);
}

TEST_F(ReportPage, BestTablesRoundTheirNumbers) {
  const RE2 one_decimal("[0-9]+\\.[0-9]");
  const RE2 percent("[0-9]+\\.[0-9]%");
  const RE2 plain("[0-9]+(\\.[0-9]+)?");
  const auto tables = best_tables(slurp(out() + "/index.html"));
  ASSERT_FALSE(tables.empty());
  for (const HtmlTable& t : tables) {
    for (const char* title : {"kernel ms", "GB/s", "of probe", "h2d ms", "d2h ms"})
      ASSERT_TRUE(t.has(title)) << title;
    for (const auto& row : t.rows) {
      for (const char* ms : {"kernel ms", "h2d ms", "d2h ms"}) {
        const std::string& cell = row[t.column(ms)];
        EXPECT_TRUE(RE2::FullMatch(cell, plain)) << ms << ": " << cell;
        EXPECT_LE(significant_digits(cell), 4) << ms << ": " << cell;
      }
      EXPECT_TRUE(RE2::FullMatch(row[t.column("GB/s")], one_decimal)) << row[t.column("GB/s")];
      EXPECT_TRUE(RE2::FullMatch(row[t.column("of probe")], percent)) << row[t.column("of probe")];
    }
  }
}

TEST_F(ReportPage, BestCsvKeepsEveryColumnAndNamesTheWorkloadClass) {
  std::istringstream best(slurp(out() + "/best.csv"));
  std::string header, line;
  std::getline(best, header);
  for (const char* column : {"workload", "objective", "value", "variant", "energy_mj", "power_w", "method",
                             "p_ept", "p_agg", "p_grid", "p_sizing"}) {
    EXPECT_NE(("," + header + ",").find(std::string(",") + column + ","), std::string::npos) << column;
  }
  std::vector<std::string> rows;
  while (std::getline(best, line)) rows.push_back(line);
  // By time: selection on both devices, group-by on the first; by energy and by edp: selection on the second.
  EXPECT_EQ(rows.size(), 5u);
  const auto selection = selection_workload();
  const auto groupby = groupby_workload();
  const std::string selection_class = operators::SelectionOperator().workload_class(selection).describe();
  const std::string groupby_class = operators::GroupByOperator().workload_class(groupby).describe();
  int with_selection_class = 0, with_groupby_class = 0;
  for (const auto& row : rows) {
    with_selection_class += row.find("," + selection_class + ",") != std::string::npos;
    with_groupby_class += row.find("," + groupby_class + ",") != std::string::npos;
  }
  EXPECT_EQ(with_selection_class, 4) << selection_class;
  EXPECT_EQ(with_groupby_class, 1) << groupby_class;
}

TEST_F(ReportPage, APinnedTunableGetsNoPanel) {
  const auto first = plots_of("speedups", "ocl:0:0");
  const auto second = plots_of("speedups", "ocl:0:1");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  const auto panels = [](const nlohmann::json& plot) { return plot["panels"].get<std::set<std::string>>(); };
  // kernel is pinned everywhere; vec only in the second device's sweep.
  EXPECT_EQ(panels(first[0]), (std::set<std::string>{"ept", "vec", "padding", "local", "grid"}));
  EXPECT_EQ(panels(second[0]), (std::set<std::string>{"ept", "padding", "local", "grid"}));
}

TEST_F(ReportPage, EverySweepOfAWorkloadIsShown) {
  const std::set<std::string> first_panels{"session #" + std::to_string(first_sweeps_[0]),
                                           "session #" + std::to_string(first_sweeps_[1])};
  const auto heatmaps = plots_of("heatmap", "ocl:0:0");
  ASSERT_EQ(heatmaps.size(), 1u);  // both sweeps in one figure, on one colour scale
  EXPECT_EQ(heatmaps[0]["sessions"].get<std::vector<std::int64_t>>(), first_sweeps_);
  EXPECT_EQ(heatmaps[0]["panels"].get<std::set<std::string>>(), first_panels);
  for (const char* kind : {"speedups", "bandwidth", "convergence"}) {
    const auto found = plots_of(kind, "ocl:0:0");
    ASSERT_FALSE(found.empty()) << kind;
    EXPECT_EQ(found[0]["sessions"].get<std::vector<std::int64_t>>(), first_sweeps_) << kind;
  }
  const auto second = plots_of("heatmap", "ocl:0:1");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0]["sessions"].get<std::vector<std::int64_t>>(), std::vector<std::int64_t>{second_sweep_});
}

// The convergence curve is the fastest search sample; the tables show the re-measured best. The plot marks
// each session's declared best at the tables' figure (a user once saw ~1.7 ms drawn beside 3.18 ms).
TEST_F(ReportPage, ConvergenceMarksTheDeclaredBestOfEachSession) {
  std::map<std::string, double> declared;  // session -> best_kernel_ms, as sessions.csv lists it
  std::istringstream csv(slurp(out() + "/sessions.csv"));
  std::string line;
  std::getline(csv, line);
  const auto split = [](const std::string& text) {  // RFC 4180: a quoted field may hold commas and ""
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"' && quoted && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    return fields;
  };
  const auto header = split(line);
  const auto best = std::find(header.begin(), header.end(), "best_kernel_ms") - header.begin();
  while (std::getline(csv, line)) {
    const auto fields = split(line);
    ASSERT_EQ(fields.size(), header.size()) << line;
    if (!fields[static_cast<std::size_t>(best)].empty())
      declared[fields[0]] = std::stod(fields[static_cast<std::size_t>(best)]);
  }
  const auto plots = plots_of("convergence", "ocl:0:0");
  ASSERT_EQ(plots.size(), 1u);
  const auto& marks = plots[0]["declared_ms"];
  ASSERT_EQ(marks.size(), first_sweeps_.size());
  for (const auto session : first_sweeps_) {
    const auto key = std::to_string(session);
    ASSERT_TRUE(declared.count(key)) << key;
    ASSERT_TRUE(marks.contains(key)) << key;
    EXPECT_NEAR(marks[key].get<double>(), declared.at(key), 1e-9 + 1e-6 * declared.at(key)) << key;
  }
}

// The histogram's bins fill its axis: neither the copy probe far past every variant (1000 GB/s here, the
// variants at a few GB/s) nor an outlier squashes the bars against one side of a 1400 px page.
TEST_F(ReportPage, BandwidthBarsFillTheirAxis) {
  const auto plots = plots_of("bandwidth", "ocl:0:0");
  ASSERT_EQ(plots.size(), 1u);
  const auto x = plots[0]["x_limits"].get<std::vector<double>>();
  const auto bins = plots[0]["bins"].get<std::vector<double>>();
  ASSERT_EQ(x.size(), 2u);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_GT(bins[1], bins[0]);
  EXPECT_GE((bins[1] - bins[0]) / (x[1] - x[0]), 0.5)
      << "bins " << bins[0] << ".." << bins[1] << " on an axis " << x[0] << ".." << x[1];
}

// Time against energy where a sweep measured energy, the Pareto front as the database's measurements give it:
// fastest first, each point more frugal than every faster one, and no measured variant both faster and more
// frugal than a point of the front.
TEST_F(ReportPage, EnergyPlotsMarkTheParetoFront) {
  EXPECT_TRUE(plots_of("energy", "ocl:0:0").empty());  // no energy measured there
  const auto plots = plots_of("energy", "ocl:0:1");
  ASSERT_EQ(plots.size(), 1u);
  std::vector<std::pair<double, double>> points;
  {
    results::Store store(*dir_ + "/v.db", results::Database::Mode::Existing);
    results::Statement s(store.db(), R"sql(SELECT kernel_ms, energy_j * 1000 FROM measurements
        WHERE purpose = 'search' AND status = 'ok' AND cut_off = 0 AND energy_j IS NOT NULL)sql");
    while (s.step()) points.emplace_back(s.real(0), s.real(1));
  }
  EXPECT_EQ(plots[0]["points"].get<std::size_t>(), points.size());
  const auto front = plots[0]["front"].get<std::vector<std::vector<double>>>();
  ASSERT_GE(front.size(), 2u) << "the synthetic powers should make time and energy disagree";
  for (std::size_t i = 1; i < front.size(); ++i) {
    EXPECT_GT(front[i][0], front[i - 1][0]);
    EXPECT_LT(front[i][1], front[i - 1][1]);
  }
  for (const auto& f : front) {
    for (const auto& [t, e] : points) {
      EXPECT_FALSE(t < f[0] - 1e-9 && e < f[1] - 1e-9)
          << t << " ms, " << e << " mJ beats " << f[0] << ", " << f[1];
    }
  }
  const auto fastest = std::min_element(points.begin(), points.end());
  EXPECT_NEAR(front.front()[0], fastest->first, 1e-9);
}

TEST_F(ReportPage, PlotsHavePlainLegibleTickLabels) {
  std::set<std::string> kinds;
  for (const auto& plot : plots()) {
    const auto title = plot["title"].get<std::string>();
    kinds.insert(plot["kind"].get<std::string>());
    EXPECT_GE(plot["smallest_font_pt"].get<double>(), 9.0) << title;
    EXPECT_LE(plot["width_px"].get<int>(), 1320) << title;  // shown unscaled on a 1400 px page
    for (const auto& label : plot["tick_labels"].get<std::vector<std::string>>()) {
      // matplotlib's log axes write 2×10^0 as mathtext; plain decimals have none of it, nor exponents.
      EXPECT_EQ(label.find_first_of("$^\\"), std::string::npos) << title << ": " << label;
      EXPECT_FALSE(RE2::PartialMatch(label, "[0-9]e[-+]?[0-9]")) << title << ": " << label;
    }
  }
  // The log axes (transfers, convergence) and the heat maps' log colour scale are among them.
  EXPECT_EQ(kinds, (std::set<std::string>{"heatmap", "speedups", "transfers", "convergence", "bandwidth",
                                          "energy"}));
}

}  // namespace
}  // namespace varex
