#include "tuner/space_fit.hpp"

#include <map>
#include <set>

namespace varex::tuner {

namespace {

std::string count_of(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace

std::string FittedMeasurements::summary() const {
  if (!changed()) return "";
  std::string out = count_of(recorded, "recorded variant") + ", " + std::to_string(replayable) +
                    " replayed on today's space";
  for (std::size_t i = 0; i < changes.size(); ++i) out += (i == 0 ? ": " : "; ") + changes[i];
  return out;
}

FittedMeasurements fit_to_space(const variants::Space& space,
                                std::vector<results::RecordedMeasurement> measurements) {
  FittedMeasurements out;
  std::set<std::string> today;
  for (const auto& t : space.tunables()) today.insert(t.name);

  // The removed tunables' most frequent values, counted over distinct recorded points.
  std::set<variants::Params> points;
  for (const auto& r : measurements) points.insert(r.params);
  out.recorded = points.size();
  std::map<std::string, std::map<variants::Value, std::size_t>> removed;
  for (const auto& p : points) {
    for (const auto& [name, value] : p) {
      if (!today.count(name)) ++removed[name][value];
    }
  }
  std::map<std::string, variants::Value> kept_value;
  for (const auto& [name, counts] : removed) {
    auto most = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it) most = it->second > most->second ? it : most;
    kept_value[name] = most->first;
    std::size_t others = 0;
    for (const auto& [value, n] : counts) others += value == most->first ? 0 : n;
    out.changes.push_back("'" + name + "' is no longer a tunable: kept its " +
                          variants::to_string(most->first) +
                          (others ? ", left out " + count_of(others, "variant") + " at other values" : ""));
  }
  std::map<std::string, std::size_t> added;      // tunable -> points that lacked it
  std::map<std::string, std::size_t> withdrawn;  // "name=value" -> points left out
  std::size_t refused = 0;
  std::set<variants::Params> seen_refused, seen_withdrawn, seen_added;
  std::set<variants::Params> replayable;
  for (auto& r : measurements) {
    const variants::Params recorded = r.params;
    bool keep = true;
    variants::Params p;
    for (const auto& [name, value] : recorded) {
      if (today.count(name)) {
        p[name] = value;
      } else if (value != kept_value.at(name)) {
        keep = false;
      }
    }
    if (!keep) continue;
    for (const auto& t : space.tunables()) {
      if (p.count(t.name)) {
        if (!t.index_of(p.at(t.name))) {
          if (seen_withdrawn.insert(recorded).second)
            ++withdrawn[t.name + "=" + variants::to_string(p.at(t.name))];
          keep = false;
        }
      } else {
        p[t.name] = t.default_value;
        if (seen_added.insert(recorded).second) ++added[t.name];
      }
    }
    if (!keep) continue;
    if (!space.valid(p)) {
      refused += seen_refused.insert(recorded).second;
      continue;
    }
    r.params = space.canonical(p);
    replayable.insert(r.params);
    out.kept.push_back(std::move(r));
  }
  for (const auto& [name, n] : added)
    out.changes.push_back("'" + name + "' is new: " + count_of(n, "variant") + " replayed at its default, " +
                          variants::to_string(space.tunable(name).default_value));
  for (const auto& [setting, n] : withdrawn)
    out.changes.push_back(setting + " is no longer offered: left out " + count_of(n, "variant"));
  if (refused)
    out.changes.push_back("left out " + count_of(refused, "variant") + " that today's constraints refuse");
  out.replayable = replayable.size();
  if (out.changes.empty() && out.replayable < out.recorded)
    out.changes.push_back(std::to_string(out.recorded - out.replayable) +
                          " became variants recorded twice in today's canonical form");
  return out;
}

}  // namespace varex::tuner
