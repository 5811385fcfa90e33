#include "runtime/adaptation.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace varex::runtime {

double Candidate::median() const {
  if (ms.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  return sorted[(sorted.size() - 1) / 2];
}

ClassTuner::ClassTuner(std::vector<Candidate> candidates, std::size_t first, double explore_share)
    : candidates_(std::move(candidates)),
      first_(first),
      share_(explore_share),
      start_(candidates_.at(first).variant) {}

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

bool ClassTuner::in_running(std::size_t index, std::size_t fastest) const {
  const Candidate& c = candidates_[index];
  if (index == fastest || c.rejected || c.ms.size() >= kRunsToCompete) return false;
  return c.ms.empty() || candidates_[fastest].ms.empty() ||
         c.median() <= kCutoff * candidates_[fastest].median();
}

std::size_t ClassTuner::explore_target(std::size_t exploit) const {
  // The neighbours of the latest best first (a first-improvement local search), then the fewest runs.
  std::size_t pick = candidates_.size();
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    if (!in_running(i, exploit)) continue;
    if (pick == candidates_.size()) {
      pick = i;
      continue;
    }
    const Candidate &c = candidates_[i], &p = candidates_[pick];
    if (c.round > p.round || (c.round == p.round && c.ms.size() < p.ms.size())) pick = i;
  }
  return pick;
}

ClassTuner::Pick ClassTuner::next(const Neighbours& neighbours) {
  const std::size_t exploit = fastest();
  // Exploring this call keeps the exploring calls within the share (the first call never explores), and so
  // is what they cost beyond a call of the fastest candidate: a candidate far slower than the rest pauses the
  // search until the calls that run the fastest have made up for it.
  const bool may_explore =
      static_cast<double>(exploring_calls_ + 1) <= share_ * static_cast<double>(calls_ms_.size()) &&
      exploring_ms_ <= share_ * total_ms_;
  if (!may_explore) return {exploit, false};
  std::size_t pick = explore_target(exploit);
  // The search moves with the best: a candidate that beat where the calls started has its neighbours join at
  // once (tried before the older candidates), and so does the fastest when no candidate is left to try.
  const std::string best = candidates_[exploit].variant;
  const bool expanded = std::find(expanded_.begin(), expanded_.end(), best) != expanded_.end();
  if (neighbours && !expanded && (best != start_ || pick == candidates_.size())) {
    expanded_.push_back(best);
    const std::size_t round = expanded_.size();
    for (Candidate& n : neighbours(candidates_[exploit])) {
      const bool known = std::any_of(candidates_.begin(), candidates_.end(),
                                     [&](const Candidate& c) { return c.variant == n.variant; });
      if (known) continue;
      n.round = round;
      candidates_.push_back(std::move(n));
    }
    pick = explore_target(exploit);
  }
  return pick == candidates_.size() ? Pick{exploit, false} : Pick{pick, true};
}

ClassTuner::Call ClassTuner::plan_call(const Neighbours& neighbours) {
  const Pick pick = next(neighbours);
  Call call;
  call.explore = pick.explore;
  const Candidate& fastest_now = candidates_[fastest()];
  call.exploit_ms = fastest_now.ms.empty() ? 0 : fastest_now.median();
  call.returns = pick.index;
  if (!candidates_[pick.index].verified) {
    call.returns = reference();
    call.checks = pick.index;
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
