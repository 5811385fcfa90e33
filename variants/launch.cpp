#include "variants/launch.hpp"

#include <algorithm>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::variants {

namespace {

// "512wg" → 512; nullopt for any other word.
std::optional<std::uint64_t> parse_total(const std::string& word) {
  if (word.size() < 3 || word.compare(word.size() - 2, 2, "wg") != 0) return std::nullopt;
  const std::string digits = word.substr(0, word.size() - 2);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoull(digits);
}

}  // namespace

Grid Grid::of(const Params& params) {
  const auto it = params.find("grid");
  if (it == params.end()) return {};
  if (const auto* k = std::get_if<std::int64_t>(&it->second))
    return {Kind::PerUnit, static_cast<std::uint64_t>(*k)};
  const std::string& word = std::get<std::string>(it->second);
  if (word == "cover") return {};
  if (const auto n = parse_total(word)) return {Kind::Total, *n};
  throw UsageError("grid=" + word + " is neither cover, a number of work-groups per compute unit nor Nwg");
}

std::uint64_t Grid::work_groups(std::uint32_t compute_units) const {
  switch (kind) {
    case Kind::Cover:
      return 0;
    case Kind::PerUnit:
      return n * std::max<std::uint32_t>(compute_units, 1);
    case Kind::Total:
      return n;
  }
  return 0;
}

Value total_work_groups(std::int64_t n) {
  return Value{std::to_string(n) + "wg"};
}

Tunable local_tunable(const DeviceInfo& device, const LocalOptions& options) {
  std::vector<Value> sizes;
  if (options.with_auto) sizes.emplace_back("auto");
  std::uint64_t largest = std::max<std::uint64_t>(device.max_work_group, 1);
  if (options.largest) largest = std::min(largest, options.largest);
  for (std::int64_t l = 32; l <= static_cast<std::int64_t>(largest); l *= 2) sizes.emplace_back(l);
  std::string help = options.help;
  if (options.with_auto) help += "; auto leaves it to the driver";
  return {"local", options.kind, std::move(sizes), options.default_value, help};
}

Tunable grid_tunable(std::vector<Value> values, Value default_value, const std::string& walks) {
  return {"grid", TunableKind::Launch, std::move(values), std::move(default_value),
          "cover: enough work-groups to cover " + walks +
              " once; k: k work-groups per compute unit, striding over them; Nwg: N work-groups in all"};
}

Tunable padding_tunable(const std::vector<Padding>& paddings, const std::string& host_note) {
  std::vector<Value> values;
  std::string help;
  for (const Padding p : paddings) {
    if (!help.empty()) help += "; ";
    switch (p) {
      case Padding::None:
        values.emplace_back("none");
        help += "none: exactly as many work-items as elements";
        break;
      case Padding::Host:
        values.emplace_back("host");
        help += "host: the grid is rounded up to whole work-groups and the input padded on the host" +
                (host_note.empty() ? std::string() : " (" + host_note + ")");
        break;
      case Padding::Guard:
        values.emplace_back("guard");
        help +=
            "guard: the grid is rounded up to whole work-groups and the kernel's bound check retires "
            "surplus work-items";
        break;
    }
  }
  return {"padding", TunableKind::Launch, std::move(values), Value{"none"}, help};
}

bool covers(const Params& params) {
  return Grid::of(params).kind == Grid::Kind::Cover;
}

Constraint fixed_grid_needs_local() {
  return {"a fixed number of work-groups needs an explicit local size",
          [](const Params& p) { return covers(p) || p.at("local") != Value{"auto"}; }};
}

std::map<std::string, std::string> upgrade_settings(const std::map<std::string, std::string>& settings,
                                                    const Space& space) {
  std::map<std::string, std::string> out;
  for (const auto& [name, values] : settings) {
    const std::string& setting = name;  // clang 14 (the fuzz build) does not capture a structured binding
    const bool own = std::any_of(space.tunables().begin(), space.tunables().end(),
                                 [&](const Tunable& t) { return t.name == setting; });
    std::string upgraded = values;
    if (own) {
      if (!out.emplace(name, upgraded).second) throw UsageError("--set " + name + " is given twice");
      continue;
    }
    if (name == "processors" || name == "groups") {  // absolute counts of work-groups: N becomes Nwg
      upgraded.clear();
      for (const std::string& v : split(values, ',')) {
        if (!upgraded.empty()) upgraded += ',';
        const bool number =
            !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
        upgraded += number ? v + "wg" : v;
      }
    }
    const bool old = name == "groups_per_cu" || name == "processors" || name == "groups";
    if (!out.emplace(old ? "grid" : name, upgraded).second)
      throw UsageError("--set " + name + " is the old name of grid, which is given too");
  }
  return out;
}

}  // namespace varex::variants
