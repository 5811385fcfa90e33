#include "runtime/adaptation.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tuner/strategy.hpp"

namespace varex::runtime {

double Candidate::median() const {
  if (ms.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  return sorted[(sorted.size() - 1) / 2];
}

ClassTuner::ClassTuner(variants::Space space, const std::vector<variants::Params>& start, std::size_t first,
                       const std::string& strategy, double explore_share, NameOf name_of)
    : search_(std::make_unique<tuner::SearchSpace>(std::move(space), 1)),
      strategy_(tuner::make_strategy(strategy, search_->space())),
      name_of_(std::move(name_of)),
      first_(0),
      share_(explore_share) {
  for (std::size_t i = 0; i < start.size(); ++i) {
    const std::size_t index = add(start[i]);
    if (i == first) first_ = index;
  }
  candidates_.at(0).verified = true;
}

std::size_t ClassTuner::add(const variants::Params& params) {
  const variants::Params canonical = search_->space().canonical(params);
  const std::string variant = name_of_(canonical);
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    if (candidates_[i].variant == variant) return i;
  search_->mark(canonical);
  Candidate c;
  c.params = canonical;
  c.variant = variant;
  candidates_.push_back(std::move(c));
  return candidates_.size() - 1;
}

std::size_t ClassTuner::fastest() const {
  std::size_t best = first_;
  double best_ms = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    const Candidate& c = candidates_[i];
    if (c.rejected || c.ms.empty()) continue;
    if (c.median() < best_ms) {
      best = i;
      best_ms = c.median();
    }
  }
  return best;
}

std::size_t ClassTuner::reference() const {
  // Only verified candidates are ever run (the defaults are verified from the start), so the fastest one that
  // has run is the fastest verified one.
  const std::size_t f = fastest();
  return candidates_[f].ms.empty() ? 0 : f;
}

std::optional<std::size_t> ClassTuner::explore_target(const Runnable& runnable) {
  // The start points first (the profile's entry and its runners-up), in order.
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    if (!candidates_[i].observed && !candidates_[i].rejected && i != fastest()) return i;
  }
  for (std::size_t looked = 0; looked < kProposalsPerCall; ++looked) {
    if (proposed_.empty()) {
      proposed_ = strategy_->propose(*search_);
      std::reverse(proposed_.begin(), proposed_.end());  // taken from the back, in the strategy's order
      if (proposed_.empty()) return std::nullopt;
    }
    const variants::Params params = std::move(proposed_.back().params);
    proposed_.pop_back();
    search_->mark(params);
    if (!search_->space().valid(params) || !runnable(params)) {
      // Cannot run on these buffers: to the strategy, a failed evaluation.
      strategy_->observe({params, 0, false, std::numeric_limits<double>::infinity(), 0, 0, false});
      continue;
    }
    const std::size_t index = add(params);
    if (!candidates_[index].observed) return index;
  }
  return std::nullopt;
}

ClassTuner::Call ClassTuner::plan_call(const Runnable& runnable) {
  const std::size_t exploit = fastest();
  // Exploring this call keeps the exploring calls within the share (the first call never explores), and so
  // is what they cost beyond a call of the fastest candidate: a candidate far slower than the rest pauses the
  // search until the calls that run the fastest have made up for it.
  const bool may_explore =
      static_cast<double>(exploring_calls_ + 1) <= share_ * static_cast<double>(calls_ms_.size()) &&
      exploring_ms_ <= share_ * total_ms_;
  const std::optional<std::size_t> target = may_explore ? explore_target(runnable) : std::nullopt;
  Call call;
  call.explore = target.has_value();
  const Candidate& fastest_now = candidates_[exploit];
  call.exploit_ms = fastest_now.ms.empty() ? 0 : fastest_now.median();
  call.returns = target.value_or(exploit);
  if (!candidates_[call.returns].verified) {
    call.checks = call.returns;
    call.returns = reference();
  }
  return call;
}

void ClassTuner::finish_call(const Call& call, double returns_ms, const std::optional<Check>& check) {
  candidates_.at(call.returns).ms.push_back(returns_ms);
  double ms = returns_ms;
  if (call.checks && check) {
    Candidate& c = candidates_.at(*call.checks);
    c.why = check->why;
    c.rejected = !check->why.empty();
    c.verified = !c.rejected;
    if (check->ms) {
      ms += *check->ms;
      if (c.verified) c.ms.push_back(*check->ms);
    }
  }
  calls_ms_.push_back(ms);
  total_ms_ += ms;
  if (call.explore) {
    ++exploring_calls_;
    // What exploring cost is the time beyond a call of the fastest candidate: a check returns the
    // reference's result (the fastest's time) and adds the candidate's run.
    exploring_ms_ += std::max(0.0, ms - call.exploit_ms);
  }
  // A candidate's first run is its evaluation: the strategy learns of it at once. Its later runs (a call of
  // the fastest runs it) settle the fastest by median.
  observe(call.returns);
  if (call.checks) observe(*call.checks);
}

void ClassTuner::observe(std::size_t index) {
  Candidate& c = candidates_[index];
  if (c.observed || (c.ms.empty() && !c.rejected)) return;
  c.observed = true;
  const double value = c.rejected ? std::numeric_limits<double>::infinity() : c.ms.front();
  strategy_->observe({c.params, 0, !c.rejected, value, 0, c.rejected ? 0 : value / 1e3, false});
}

ClassReport ClassTuner::report() const {
  ClassReport r;
  r.calls = calls_ms_.size();
  r.exploring_calls = exploring_calls_;
  r.candidates = candidates_.size();
  for (const Candidate& c : candidates_) {
    r.verified += c.verified ? 1 : 0;
    r.rejected += c.rejected ? 1 : 0;
  }
  r.exploring_ms = exploring_ms_;
  r.settled = fastest();
  r.settled_ms = candidates_[r.settled].ms.empty() ? 0 : candidates_[r.settled].median();
  r.total_ms = total_ms_;
  for (const double ms : calls_ms_) r.regret_ms += std::max(0.0, ms - r.settled_ms);
  return r;
}

namespace {

// What a result's parts hold: the ordered ranges one after the other, and the rows of no order (each the
// concatenation of its bytes in every such part) in a canonical order: a join's 2^24 pairs are compared in
// well under a second, not as 2^24 strings.
struct Contents {
  std::string ordered;
  std::vector<std::uint64_t> narrow_rows;  // rows of at most 8 bytes, each packed into a word, sorted
  std::string wide_rows;                   // longer rows, concatenated in sorted order
};

// `rows` rows of `width` bytes, row-major, in a canonical order.
void sort_rows(const std::string& row_major, std::uint64_t rows, std::size_t width, Contents& out) {
  if (width <= 8) {
    out.narrow_rows.assign(rows, 0);
    for (std::uint64_t r = 0; r < rows; ++r)
      std::memcpy(&out.narrow_rows[r], row_major.data() + r * width, width);
    std::sort(out.narrow_rows.begin(), out.narrow_rows.end());
    return;
  }
  std::vector<std::uint64_t> order(rows);
  for (std::uint64_t r = 0; r < rows; ++r) order[r] = r;
  std::sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
    return std::memcmp(row_major.data() + a * width, row_major.data() + b * width, width) < 0;
  });
  out.wide_rows.resize(row_major.size());
  for (std::uint64_t r = 0; r < rows; ++r)
    std::memcpy(&out.wide_rows[r * width], row_major.data() + order[r] * width, width);
}

Contents contents(harness::Engine& engine, const harness::DeviceResult& result) {
  std::vector<harness::ResultPart> parts = result.parts;
  if (parts.empty() && result.kind == harness::OutputKind::Bitmap)
    parts.push_back({0, 0, (result.rows + 7) / 8, 0});
  Contents out;
  std::uint64_t rows = 0;
  std::vector<std::string> columns;
  for (const harness::ResultPart& part : parts) {
    if (part.bytes == 0) continue;
    const harness::DeviceBuffer& buffer = *result.buffers.at(part.buffer);
    if (part.offset + part.bytes > buffer.bytes()) throw std::logic_error("a result part beyond its buffer");
    harness::PageableHostBuffer host(part.offset + part.bytes);
    engine.download(host, buffer, part.bytes, part.offset)->elapsed_ms();
    std::string bytes(static_cast<const char*>(host.data()), part.bytes);
    if (part.row_bytes == 0) {
      out.ordered += bytes;
    } else {
      rows = part.bytes / part.row_bytes;
      columns.push_back(std::move(bytes));
    }
  }
  // A bitmap's bits past its rows are no result's.
  if (result.kind == harness::OutputKind::Bitmap && result.rows % 8 && !out.ordered.empty())
    out.ordered.back() = static_cast<char>(out.ordered.back() & ((1 << (result.rows % 8)) - 1));
  if (rows == 0) return out;
  std::size_t width = 0;
  for (const std::string& column : columns) width += column.size() / rows;
  std::string row_major(rows * width, '\0');
  std::size_t at = 0;  // the column's first byte within a row
  for (const std::string& column : columns) {
    const std::size_t w = column.size() / rows;
    for (std::uint64_t r = 0; r < rows; ++r)
      std::memcpy(&row_major[r * width + at], column.data() + r * w, w);
    at += w;
  }
  sort_rows(row_major, rows, width, out);
  return out;
}

}  // namespace

std::string result_difference(harness::Engine& engine, const harness::DeviceResult& reference,
                              const harness::DeviceResult& candidate) {
  if (reference.kind != candidate.kind) return "another kind of result";
  if (reference.rows != candidate.rows)
    return std::to_string(candidate.rows) + " rows where the reference gives " +
           std::to_string(reference.rows);
  if (reference.parts.empty() && reference.kind != harness::OutputKind::Bitmap)
    return "a result the runtime cannot compare";
  const Contents a = contents(engine, reference), b = contents(engine, candidate);
  if (a.ordered != b.ordered) return "a result other than the reference's (in order)";
  if (a.narrow_rows != b.narrow_rows || a.wide_rows != b.wide_rows) return "rows other than the reference's";
  return {};
}

}  // namespace varex::runtime
