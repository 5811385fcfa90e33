#include "variants/space.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::variants {

std::optional<std::size_t> Tunable::index_of(const Value& value) const {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] == value) return i;
  }
  return std::nullopt;
}

Value Tunable::parse(std::string_view text, std::string_view op) const {
  const std::string_view t = trim(text);
  std::vector<std::string> allowed;
  for (const Value& v : values) {
    if (to_string(v) == t) return v;
    allowed.push_back(to_string(v));
  }
  throw UsageError(std::string(op) + ": '" + std::string(t) + "' is not a value of tunable '" + name +
                   "' (allowed: " + join(allowed, ", ") + ")");
}

Space::Space(std::string op, std::vector<Tunable> tunables, std::vector<Constraint> constraints,
             std::vector<Inactive> inactive)
    : op_(std::move(op)),
      tunables_(std::move(tunables)),
      constraints_(std::move(constraints)),
      inactive_(std::move(inactive)) {
  for (const Tunable& t : tunables_) {
    if (t.values.empty() || !t.index_of(t.default_value)) {
      throw std::logic_error("space " + op_ + ": tunable " + t.name + " has no values or a foreign default");
    }
  }
  for (const Inactive& i : inactive_) {
    for (const std::string& name : i.tunables) {
      if (std::none_of(tunables_.begin(), tunables_.end(), [&](const Tunable& t) { return t.name == name; }))
        throw std::logic_error("space " + op_ + ": inactive tunable " + name + " is not one of its tunables");
    }
  }
  // The rules whose tunables all follow what they read (Inactive::reads), with those tunables' positions.
  for (std::size_t r = 0; r < inactive_.size(); ++r) {
    const Inactive& i = inactive_[r];
    if (i.reads.empty()) continue;
    std::size_t last_read = 0, first_inactive = tunables_.size();
    std::vector<std::size_t> positions;
    for (std::size_t t = 0; t < tunables_.size(); ++t) {
      if (std::find(i.reads.begin(), i.reads.end(), tunables_[t].name) != i.reads.end()) last_read = t;
      if (std::find(i.tunables.begin(), i.tunables.end(), tunables_[t].name) != i.tunables.end()) {
        first_inactive = std::min(first_inactive, t);
        positions.push_back(t);
      }
    }
    if (last_read < first_inactive) skipping_.emplace_back(r, std::move(positions));
  }
}

std::size_t Space::skipped_tunable(const Params& params) const {
  std::size_t first = tunables_.size();
  for (const auto& [rule, positions] : skipping_) {
    if (!inactive_[rule].when(params)) continue;
    for (std::size_t t : positions) {
      if (t < first && params.at(tunables_[t].name) != tunables_[t].default_value) first = t;
    }
  }
  return first;
}

std::uint64_t Space::next_index(std::uint64_t index, const Params& at_index) const {
  const std::size_t skipped = skipped_tunable(at_index);
  if (skipped == tunables_.size()) return index + 1;
  // Past every point whose digits before the skipped tunable's lesser ones are the same.
  std::uint64_t stride = 1;
  for (std::size_t t = skipped + 1; t < tunables_.size(); ++t) stride *= tunables_[t].values.size();
  return (index / stride + 1) * stride;
}

const Tunable& Space::tunable(std::string_view name) const {
  for (const Tunable& t : tunables_) {
    if (t.name == name) return t;
  }
  std::vector<std::string> names;
  for (const Tunable& t : tunables_) names.push_back(t.name);
  throw UsageError(op_ + ": unknown tunable '" + std::string(name) + "' (tunables: " + join(names, ", ") +
                   ")");
}

std::uint64_t Space::cardinality() const {
  std::uint64_t n = 1;
  for (const Tunable& t : tunables_) n *= t.values.size();
  return n;
}

std::uint64_t Space::count_valid() const {
  if (const std::int64_t known = valid_count_->load(); known >= 0) return static_cast<std::uint64_t>(known);
  const std::uint64_t n = cardinality();
  std::uint64_t count = 0;
  if (n <= kWalkLimit) {
    // On all host cores: the group-by's 2 million points took about 2 s on one, before a tune's first
    // measurement. The constraints are pure functions of a point.
    const unsigned threads = static_cast<unsigned>(
        std::clamp<std::uint64_t>(std::thread::hardware_concurrency(), 1, n / 4096 + 1));
    std::vector<std::uint64_t> counts(threads, 0);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (std::uint64_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
          const Params p = at(i);
          counts[t] += valid(p) && is_canonical(p);
        }
      });
    }
    for (std::thread& worker : pool) worker.join();
    for (const std::uint64_t c : counts) count += c;
  } else {
    // Each sampled point stands for its canonical form, weighed by one over the points that share it (the
    // product of the value counts of the tunables inactive there): the share of canonical points whose
    // points are many (a user operator's few kernels beside a built-in's millions of points, where the
    // built-in's tunables are inactive) is then estimated, not missed by a sample that finds no canonical
    // point there.
    constexpr std::uint64_t kSample = 1 << 16;
    double weight = 0;
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (std::uint64_t i = 0; i < kSample; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: a fixed, seed-free sample
      const Params p = canonical(at(x % n));
      if (!valid(p)) continue;
      const std::vector<bool> inactive = inactive_at(p);
      double shared = 1;
      for (std::size_t t = 0; t < tunables_.size(); ++t) {
        if (inactive[t]) shared *= static_cast<double>(tunables_[t].values.size());
      }
      weight += 1 / shared;
    }
    count = static_cast<std::uint64_t>(std::llround(weight / kSample * static_cast<double>(n)));
    // A valid default is one variant at least, whatever the sample found.
    if (count == 0 && valid(defaults())) count = 1;
  }
  valid_count_->store(static_cast<std::int64_t>(count));
  return count;
}

// The first tunable is the most significant digit, so index order groups the leading (compile-time)
// tunables together.
Params Space::at(std::uint64_t index) const {
  Params p;
  for (auto it = tunables_.rbegin(); it != tunables_.rend(); ++it) {
    p[it->name] = it->values[index % it->values.size()];
    index /= it->values.size();
  }
  return p;
}

std::uint64_t Space::index_of(const Params& params) const {
  std::uint64_t index = 0;
  for (const Tunable& t : tunables_) {
    const auto it = params.find(t.name);
    const auto digit = it == params.end() ? std::nullopt : t.index_of(it->second);
    if (!digit) throw UsageError(op_ + ": parameters lack a valid value for '" + t.name + "'");
    index = index * t.values.size() + *digit;
  }
  return index;
}

std::uint64_t Space::canonical_index(const Params& params) const {
  const std::vector<bool> inactive = inactive_at(params);
  std::uint64_t index = 0;
  for (std::size_t t = 0; t < tunables_.size(); ++t) {
    const Tunable& tunable = tunables_[t];
    std::optional<std::size_t> digit;
    if (inactive[t]) {
      digit = tunable.index_of(tunable.default_value);
    } else if (const auto it = params.find(tunable.name); it != params.end()) {
      digit = tunable.index_of(it->second);
    }
    if (!digit) throw UsageError(op_ + ": parameters lack a valid value for '" + tunable.name + "'");
    index = index * tunable.values.size() + *digit;
  }
  return index;
}

std::uint64_t Space::canonical_index_at(std::uint64_t index, const Params& at_index) const {
  const std::vector<bool> inactive = inactive_at(at_index);
  if (std::none_of(inactive.begin(), inactive.end(), [](bool b) { return b; })) return index;
  std::vector<std::uint64_t> digits(tunables_.size());
  for (std::size_t t = tunables_.size(); t-- > 0;) {
    digits[t] = index % tunables_[t].values.size();
    index /= tunables_[t].values.size();
  }
  std::uint64_t canonical = 0;
  for (std::size_t t = 0; t < tunables_.size(); ++t) {
    const std::uint64_t digit = inactive[t] ? *tunables_[t].index_of(tunables_[t].default_value) : digits[t];
    canonical = canonical * tunables_[t].values.size() + digit;
  }
  return canonical;
}

bool Space::valid_at(const Params& at_index) const {
  return std::all_of(constraints_.begin(), constraints_.end(),
                     [&](const Constraint& c) { return c.holds(at_index); });
}

std::optional<Space::Fault> Space::first_fault(const Params& params) const {
  for (std::size_t t = 0; t < tunables_.size(); ++t) {
    const auto it = params.find(tunables_[t].name);
    if (it == params.end()) return Fault{Fault::Kind::NoValue, t};
    if (!tunables_[t].index_of(it->second)) return Fault{Fault::Kind::ForeignValue, t};
  }
  if (params.size() != tunables_.size()) return Fault{Fault::Kind::ForeignTunable, 0};
  for (std::size_t c = 0; c < constraints_.size(); ++c) {
    if (!constraints_[c].holds(params)) return Fault{Fault::Kind::Constraint, c};
  }
  return std::nullopt;
}

std::optional<std::string> Space::violation(const Params& params) const {
  const auto fault = first_fault(params);
  if (!fault) return std::nullopt;
  switch (fault->kind) {
    case Fault::Kind::NoValue:
      return "tunable '" + tunables_[fault->which].name + "' has no value";
    case Fault::Kind::ForeignValue:
      return std::string("'").append(to_string(params.at(tunables_[fault->which].name))) +
             "' is not a value of '" + tunables_[fault->which].name + "'";
    case Fault::Kind::ForeignTunable:
      return "parameters name a tunable the space does not have";
    case Fault::Kind::Constraint:
      return constraints_[fault->which].description;
  }
  return std::nullopt;
}

std::vector<bool> Space::inactive_at(const Params& params) const {
  std::vector<bool> inactive(tunables_.size(), false);
  for (const Inactive& i : inactive_) {
    if (!i.when(params)) continue;
    for (const std::string& name : i.tunables) {
      for (std::size_t t = 0; t < tunables_.size(); ++t)
        inactive[t] = inactive[t] || tunables_[t].name == name;
    }
  }
  return inactive;
}

Params Space::canonical(const Params& params) const {
  Params p = params;
  const std::vector<bool> inactive = inactive_at(params);
  for (std::size_t t = 0; t < tunables_.size(); ++t) {
    if (inactive[t]) p[tunables_[t].name] = tunables_[t].default_value;
  }
  return p;
}

bool Space::is_canonical(const Params& params) const {
  const std::vector<bool> inactive = inactive_at(params);
  for (std::size_t t = 0; t < tunables_.size(); ++t) {
    if (!inactive[t]) continue;
    const auto it = params.find(tunables_[t].name);
    if (it == params.end() || it->second != tunables_[t].default_value) return false;
  }
  return true;
}

Params Space::defaults() const {
  Params p;
  for (const Tunable& t : tunables_) p[t.name] = t.default_value;
  return p;
}

Params Space::with_settings(const Params& base, const std::map<std::string, std::string>& settings) const {
  Params p = base;
  for (const auto& [name, text] : settings) p[name] = tunable(name).parse(text, op_);
  if (const auto why = violation(p)) {
    throw UsageError(op_ + ": the variant " + describe(p) + " is not valid: " + *why);
  }
  return canonical(p);
}

std::vector<Params> Space::enumerate(const std::map<std::string, std::string>& pins) const {
  // Allowed value indices per tunable (all of them unless pinned).
  std::vector<std::vector<std::size_t>> allowed(tunables_.size());
  for (const auto& [name, _] : pins) tunable(name);  // reject unknown names
  for (std::size_t t = 0; t < tunables_.size(); ++t) {
    const auto pin = pins.find(tunables_[t].name);
    if (pin == pins.end()) {
      for (std::size_t v = 0; v < tunables_[t].values.size(); ++v) allowed[t].push_back(v);
    } else {
      for (const std::string& text : split(pin->second, ',')) {
        allowed[t].push_back(*tunables_[t].index_of(tunables_[t].parse(text, op_)));
      }
    }
  }
  std::vector<Params> out;
  std::vector<std::size_t> digit(tunables_.size(), 0);
  while (true) {
    Params p;
    for (std::size_t t = 0; t < tunables_.size(); ++t)
      p[tunables_[t].name] = tunables_[t].values[allowed[t][digit[t]]];
    // A tunable such a rule leaves inactive off its default stays so until its own digit moves: the digits
    // after it go to their last values, and the step below moves it.
    const std::size_t skip_after = skipped_tunable(p);
    if (skip_after < tunables_.size()) {
      for (std::size_t t = skip_after + 1; t < tunables_.size(); ++t) digit[t] = allowed[t].size() - 1;
    } else if (valid(p) && is_canonical(p)) {
      out.push_back(std::move(p));
    }
    std::size_t t = tunables_.size();
    while (t > 0) {
      --t;
      if (++digit[t] < allowed[t].size()) break;
      digit[t] = 0;
      if (t == 0) return out;
    }
    if (tunables_.empty()) return out;
  }
}

Space Space::fresh_copy() const {
  Space copy = *this;
  copy.valid_count_ = std::make_shared<std::atomic<std::int64_t>>(-1);
  return copy;
}

Space Space::restricted(const std::map<std::string, std::string>& pins) const {
  if (pins.empty()) return *this;  // the same space: its copy keeps what count_valid found
  Space copy = fresh_copy();
  for (const auto& [name, list] : pins) {
    const Tunable& t = tunable(name);
    std::vector<Value> wanted;
    for (const std::string& text : split(list, ',')) wanted.push_back(t.parse(text, op_));
    Tunable& narrowed = *std::find_if(copy.tunables_.begin(), copy.tunables_.end(),
                                      [&](const Tunable& c) { return c.name == t.name; });
    narrowed.values.clear();
    for (const Value& v : t.values) {
      if (std::find(wanted.begin(), wanted.end(), v) != wanted.end()) narrowed.values.push_back(v);
    }
    if (std::find(narrowed.values.begin(), narrowed.values.end(), t.default_value) == narrowed.values.end())
      narrowed.default_value = narrowed.values.front();
  }
  return copy;
}

Space Space::with_constraint(Constraint constraint) const {
  Space copy = fresh_copy();
  copy.constraints_.push_back(std::move(constraint));
  return copy;
}

std::vector<Params> Space::neighbours(const Params& params) const {
  const Params self = canonical(params);
  std::vector<Params> out;
  for (const Tunable& t : tunables_) {
    for (const Value& v : t.values) {
      if (params.at(t.name) == v) continue;
      Params q = params;
      q[t.name] = v;
      if (!valid(q)) continue;
      q = canonical(q);
      if (q != self && std::find(out.begin(), out.end(), q) == out.end()) out.push_back(std::move(q));
    }
  }
  return out;
}

Params Space::compile_part(const Params& params) const {
  Params p;
  for (const Tunable& t : tunables_) {
    if (t.kind == TunableKind::Compile) p[t.name] = params.at(t.name);
  }
  return p;
}

std::vector<Params> Space::compile_parts() const {
  Space compile_only = fresh_copy();  // the compile-time tunables' product, unconstrained
  compile_only.constraints_.clear();
  std::erase_if(compile_only.tunables_, [](const Tunable& t) { return t.kind != TunableKind::Compile; });
  std::vector<Params> out;
  for (std::uint64_t c = 0; c < compile_only.cardinality(); ++c) {
    std::map<std::string, std::string> pins;
    for (const auto& [name, value] : compile_only.at(c)) pins[name] = to_string(value);
    const Space launches = restricted(pins);
    for (std::uint64_t i = 0; i < launches.cardinality(); ++i) {
      Params p = launches.at(i);
      if (valid(p) && is_canonical(p)) {  // the whole space's canonical form: pins move defaults
        out.push_back(std::move(p));
        break;
      }
    }
  }
  return out;
}

}  // namespace varex::variants
