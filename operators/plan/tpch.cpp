#include "operators/plan/tpch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "base/hash.hpp"
#include "datasets/int_columns.hpp"

namespace varex::datasets {

namespace {

// Specification sec. 4.2.3: STARTDATE, CURRENTDATE and ENDDATE.
const std::int32_t kStartDate = parse_date("1992-01-01");
const std::int32_t kCurrentDate = parse_date("1995-06-17");
const std::int32_t kEndDate = parse_date("1998-12-31");

const std::vector<std::string> kSegments{"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"};
const std::vector<std::string> kPriorities{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};
const std::vector<std::string> kShipModes{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"};

std::vector<TpchColumn> make_columns() {
  using T = TpchType;
  return {
      {"c_custkey", "customer", T::Int, {}, "row + 1"},
      {"c_nationkey", "customer", T::Int, {}, "uniform 0..24"},
      {"c_acctbal", "customer", T::Decimal, {}, "uniform -999.99..9999.99"},
      {"c_mktsegment", "customer", T::Dict, kSegments, "uniform over the five segments"},
      {"o_orderkey", "orders", T::Int, {}, "sparse: 8 of every 32 keys, (row / 8) * 32 + row % 8 + 1"},
      {"o_custkey", "orders", T::Int, {}, "uniform over the customer keys that are not multiples of 3"},
      {"o_orderdate", "orders", T::Date, {}, "uniform STARTDATE .. ENDDATE - 151 days"},
      {"o_orderpriority", "orders", T::Dict, kPriorities, "uniform over the five priorities"},
      {"o_shippriority", "orders", T::Int, {}, "0"},
      {"l_orderkey", "lineitem", T::Int, {}, "its order's key; 1 to 7 lines per order, uniform"},
      {"l_linenumber", "lineitem", T::Int, {}, "1 .. the order's line count"},
      {"l_partkey", "lineitem", T::Int, {}, "uniform 1 .. 200,000 SF"},
      {"l_suppkey",
       "lineitem",
       T::Int,
       {},
       "(partkey + i (S/4 + (partkey - 1) / S)) mod S + 1, S = 10,000 SF, i uniform 0..3"},
      {"l_quantity", "lineitem", T::Int, {}, "uniform 1..50"},
      {"l_extendedprice",
       "lineitem",
       T::Decimal,
       {},
       "quantity x the part's retail price (90000 + (partkey / 10) mod 20001 + 100 (partkey mod 1000)) / "
       "100"},
      {"l_discount", "lineitem", T::Decimal, {}, "uniform 0.00..0.10"},
      {"l_tax", "lineitem", T::Decimal, {}, "uniform 0.00..0.08"},
      {"l_returnflag",
       "lineitem",
       T::Dict,
       {"A", "N", "R"},
       "R or A (uniform) where receiptdate <= CURRENTDATE, else N"},
      {"l_linestatus", "lineitem", T::Dict, {"F", "O"}, "O where shipdate > CURRENTDATE, else F"},
      {"l_shipdate", "lineitem", T::Date, {}, "orderdate + uniform 1..121 days"},
      {"l_commitdate", "lineitem", T::Date, {}, "orderdate + uniform 30..90 days"},
      {"l_receiptdate", "lineitem", T::Date, {}, "shipdate + uniform 1..30 days"},
      {"l_shipmode", "lineitem", T::Dict, kShipModes, "uniform over the seven modes"},
  };
}

// Uniform draws for (seed, stream, index): every value its own counter-based draw, the stream's name hashed
// once (hashed at every draw, it took a tenth of SF 10's generation).
class Stream {
 public:
  Stream(std::uint64_t key, std::string_view name) : key_(key ^ fnv1a(name)) {}
  // A draw in [lo, hi].
  std::int32_t uniform(std::uint64_t index, std::int64_t lo, std::int64_t hi) const {
    const std::uint64_t r = splitmix64(key_ ^ (index * 0xd1342543de82ef95ULL));
    return static_cast<std::int32_t>(lo +
                                     static_cast<std::int64_t>(r % static_cast<std::uint64_t>(hi - lo + 1)));
  }

 private:
  std::uint64_t key_;
};

std::int32_t retail_price(std::int64_t partkey) {
  return static_cast<std::int32_t>(90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000));
}

}  // namespace

std::string to_string(TpchType type) {
  switch (type) {
    case TpchType::Int:
      return "int";
    case TpchType::Date:
      return "date";
    case TpchType::Decimal:
      return "decimal";
    case TpchType::Dict:
      return "dict";
  }
  return "?";
}

const std::vector<TpchColumn>& tpch_columns() {
  static const std::vector<TpchColumn> columns = make_columns();
  return columns;
}

const TpchColumn* find_tpch_column(std::string_view name) {
  for (const TpchColumn& c : tpch_columns()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const std::vector<std::string>& tpch_tables() {
  static const std::vector<std::string> tables{"customer", "orders", "lineitem"};
  return tables;
}

std::uint64_t tpch_base_rows(std::string_view table, double scale_factor) {
  const double per_sf = table == "customer" ? 150000.0 : 1500000.0;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(per_sf * scale_factor)));
}

// Howard Hinnant's days_from_civil.
std::int32_t parse_date(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return kBadDate;
  int parts[3] = {0, 0, 0};
  const std::size_t starts[3] = {0, 5, 8}, lengths[3] = {4, 2, 2};
  for (int p = 0; p < 3; ++p) {
    for (std::size_t i = starts[p]; i < starts[p] + lengths[p]; ++i) {
      if (text[i] < '0' || text[i] > '9') return kBadDate;
      parts[p] = parts[p] * 10 + (text[i] - '0');
    }
  }
  int y = parts[0];
  const unsigned m = static_cast<unsigned>(parts[1]), d = static_cast<unsigned>(parts[2]);
  static const unsigned kDays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m < 1 || m > 12 || d < 1 || d > kDays[m - 1] || (m == 2 && d == 29 && !leap)) return kBadDate;
  y -= m <= 2;
  const int era = y / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int>(doe) - 719468;
}

// Howard Hinnant's civil_from_days.
std::string format_date(std::int32_t days) {
  const int z = days + 719468;
  const int era = z / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int y = static_cast<int>(yoe) + era * 400 + (m <= 2);
  char out[32];
  std::snprintf(out, sizeof out, "%04d-%02u-%02u", y, m, d);
  return out;
}

TpchData::TpchData(double scale_factor, std::uint64_t seed) : scale_factor_(scale_factor), seed_(seed) {
  if (!(scale_factor > 0)) throw std::invalid_argument("TPC-H scale factor must be positive");
}

std::uint64_t TpchData::rows(std::string_view table) {
  if (table != "lineitem") return tpch_base_rows(table, scale_factor_);
  std::lock_guard lock(mutex_);
  lay_out_lineitem();
  return order_of_.size();
}

const std::vector<std::int32_t>& TpchData::column(std::string_view name) {
  const TpchColumn* c = find_tpch_column(name);
  if (!c) throw std::invalid_argument("no generated TPC-H column '" + std::string(name) + "'");
  std::lock_guard lock(mutex_);
  auto it = columns_.find(name);
  if (it == columns_.end()) it = columns_.emplace(c->name, make(*c)).first;
  return it->second;
}

void TpchData::lay_out_lineitem() {
  if (!order_of_.empty()) return;
  const std::uint64_t orders = tpch_base_rows("orders", scale_factor_);
  const std::uint64_t key = splitmix64(seed_);
  std::vector<std::uint64_t> start(orders + 1, 0);
  const Stream lines(key, "lines");
  for (std::uint64_t o = 0; o < orders; ++o) start[o + 1] = start[o] + lines.uniform(o, 1, 7);
  order_of_.resize(start[orders]);
  line_of_.resize(start[orders]);
  parallel_rows(orders, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t o = begin; o < end; ++o) {
      for (std::uint64_t r = start[o]; r < start[o + 1]; ++r) {
        order_of_[r] = static_cast<std::uint32_t>(o);
        line_of_[r] = static_cast<std::uint8_t>(r - start[o]);
      }
    }
  });
}

std::vector<std::int32_t> TpchData::make(const TpchColumn& c) {
  const std::uint64_t key = splitmix64(seed_);
  if (c.table == "lineitem") lay_out_lineitem();
  const std::uint64_t rows =
      c.table == "lineitem" ? order_of_.size() : tpch_base_rows(c.table, scale_factor_);
  const std::int64_t customers = static_cast<std::int64_t>(tpch_base_rows("customer", scale_factor_));
  const std::int64_t parts = std::max<std::int64_t>(1, std::llround(200000.0 * scale_factor_));
  const std::int64_t suppliers = std::max<std::int64_t>(1, std::llround(10000.0 * scale_factor_));
  const std::string& n = c.name;
  const Stream own(key, n), order_dates(key, "o_orderdate"), ship_dates(key, "l_shipdate"),
      receipt_dates(key, "l_receiptdate"), partkeys(key, "l_partkey"), quantities(key, "l_quantity");
  // Values a lineitem row shares with other columns (drawn from the same streams, so they agree).
  const auto order_date = [&](std::uint64_t order) {
    return order_dates.uniform(order, kStartDate, kEndDate - 151);
  };
  const auto ship_date = [&](std::uint64_t r) {
    return order_date(order_of_[r]) + ship_dates.uniform(r, 1, 121);
  };
  const auto receipt_date = [&](std::uint64_t r) { return ship_date(r) + receipt_dates.uniform(r, 1, 30); };
  const auto partkey = [&](std::uint64_t r) { return partkeys.uniform(r, 1, parts); };
  const auto quantity = [&](std::uint64_t r) { return quantities.uniform(r, 1, 50); };
  const auto order_key = [](std::uint64_t o) { return static_cast<std::int32_t>((o / 8) * 32 + o % 8 + 1); };

  std::function<std::int32_t(std::uint64_t)> value;
  if (n == "c_custkey")
    value = [&](std::uint64_t r) -> std::int32_t { return static_cast<std::int32_t>(r + 1); };
  if (n == "c_nationkey") value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, 0, 24); };
  if (n == "c_acctbal")
    value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, -99999, 999999); };
  if (n == "c_mktsegment") value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, 0, 4); };
  if (n == "o_orderkey") value = [&](std::uint64_t r) -> std::int32_t { return order_key(r); };
  if (n == "o_custkey")
    value = [&](std::uint64_t r) -> std::int32_t {
      // The t-th key that is not a multiple of 3: 1, 2, 4, 5, 7, …
      const std::int64_t t = own.uniform(r, 0, customers - customers / 3 - 1);
      return static_cast<std::int32_t>(3 * (t / 2) + t % 2 + 1);
    };
  if (n == "o_orderdate") value = [&](std::uint64_t r) -> std::int32_t { return order_date(r); };
  if (n == "o_orderpriority") value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, 0, 4); };
  if (n == "o_shippriority") value = [](std::uint64_t) -> std::int32_t { return 0; };
  if (n == "l_orderkey") value = [&](std::uint64_t r) -> std::int32_t { return order_key(order_of_[r]); };
  if (n == "l_linenumber") value = [&](std::uint64_t r) -> std::int32_t { return line_of_[r] + 1; };
  if (n == "l_partkey") value = [&](std::uint64_t r) -> std::int32_t { return partkey(r); };
  if (n == "l_suppkey")
    value = [&](std::uint64_t r) -> std::int32_t {
      const std::int64_t p = partkey(r), i = own.uniform(r, 0, 3);
      return static_cast<std::int32_t>((p + i * (suppliers / 4 + (p - 1) / suppliers)) % suppliers + 1);
    };
  if (n == "l_quantity") value = [&](std::uint64_t r) -> std::int32_t { return quantity(r); };
  if (n == "l_extendedprice")
    value = [&](std::uint64_t r) -> std::int32_t { return quantity(r) * retail_price(partkey(r)); };
  if (n == "l_discount") value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, 0, 10); };
  if (n == "l_tax") value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, 0, 8); };
  if (n == "l_returnflag")
    value = [&](std::uint64_t r) -> std::int32_t {  // R (2) or A (0), else N (1)
      return receipt_date(r) <= kCurrentDate ? (own.uniform(r, 0, 1) ? 2 : 0) : 1;
    };
  if (n == "l_linestatus")
    value = [&](std::uint64_t r) -> std::int32_t {  // O (1), else F (0)
      return ship_date(r) > kCurrentDate ? 1 : 0;
    };
  if (n == "l_shipdate") value = [&](std::uint64_t r) -> std::int32_t { return ship_date(r); };
  if (n == "l_commitdate")
    value = [&](std::uint64_t r) -> std::int32_t {
      return order_date(order_of_[r]) + own.uniform(r, 30, 90);
    };
  if (n == "l_receiptdate") value = [&](std::uint64_t r) -> std::int32_t { return receipt_date(r); };
  if (n == "l_shipmode") value = [&](std::uint64_t r) -> std::int32_t { return own.uniform(r, 0, 6); };
  std::vector<std::int32_t> out(rows);
  parallel_rows(rows, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) out[r] = value(r);
  });
  return out;
}

}  // namespace varex::datasets
