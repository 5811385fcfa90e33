#include "fleet/placement_check.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <string_view>
#include <vector>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::fleet {

namespace {

// Written out rather than with std::regex, whose compiler GCC 12 warns about (-Wmaybe-uninitialized)
// under the sanitizers' -O1, an error in scripts/test.sh's build.

bool word_of(std::string_view s, std::string_view extra) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [extra](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
  });
}

bool digits(std::string_view s) {
  return word_of(s, "") && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The parts of `s` between `separator`s (an empty part where two meet).
std::vector<std::string_view> parts(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t end = s.find(separator, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// Slurm's names of partitions, accounts and QOS: letters, digits, '_', '-' and '.'.
bool slurm_name(std::string_view s) {
  return word_of(s, "_.-");
}

// sbatch's time limits: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes,
// days-hours:minutes:seconds, or no limit.
bool slurm_time(std::string_view s) {
  if (s == "UNLIMITED" || s == "INFINITE" || s == "unlimited" || s == "infinite") return true;
  const std::size_t dash = s.find('-');
  if (dash != std::string_view::npos) {
    if (!digits(s.substr(0, dash))) return false;
    s = s.substr(dash + 1);
  }
  const auto fields = parts(s, ':');
  return fields.size() <= 3 && std::all_of(fields.begin(), fields.end(), digits);
}

// name[:type][:count] items separated by commas (gpu:1, gpu:h100:1, gpu:2,nvme:1).
bool slurm_gres(std::string_view s) {
  const auto items = parts(s, ',');
  return std::all_of(items.begin(), items.end(), [](std::string_view item) {
    const auto fields = parts(item, ':');
    if (fields.size() > 3 || fields[0].empty() || !std::isalpha(static_cast<unsigned char>(fields[0][0])) ||
        !word_of(fields[0], "_./-"))
      return false;
    return std::all_of(fields.begin() + 1, fields.end(),
                       [](std::string_view f) { return word_of(f, "_.-"); });
  });
}

// Any other sbatch option, one word as an #SBATCH line takes it: --constraint=h100, --mem=64G.
bool sbatch_word(std::string_view s) {
  return s.size() >= 2 && s[0] == '-' && std::none_of(s.begin(), s.end(), [](char c) {
           return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' || c == '\\';
         });
}

void refuse_control_characters(const std::string& flag, const std::string& value) {
  const bool control = std::any_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (control)
    throw UsageError(flag + " '" + printable(value) +
                     "' holds a newline or another control character, which would end its #SBATCH line");
}

// `value` (unless empty: the flag not given) must be of `form`; else UsageError saying what it should be.
void check_value(const std::string& flag, const std::string& value,
                 const std::function<bool(std::string_view)>& form, const std::string& expected) {
  if (value.empty()) return;
  refuse_control_characters(flag, value);
  if (!form(value)) throw UsageError(flag + " '" + value + "' is not " + expected);
}

}  // namespace

void check_placement(const Placement& p) {
  check_value("--partition", p.partition, slurm_name, "a Slurm partition name (letters, digits, _ - .)");
  check_value("--account", p.account, slurm_name, "a Slurm account name (letters, digits, _ - .)");
  check_value("--qos", p.qos, slurm_name, "a Slurm QOS name (letters, digits, _ - .)");
  check_value("--time", p.time, slurm_time,
              "a Slurm time limit: minutes (90), hours:minutes:seconds (2:00:00) or days-hours (1-0)");
  check_value("--gres", p.gres, slurm_gres, "a Slurm gres list such as gpu:1, gpu:h100:1 or gpu:2,nvme:1");
  for (const std::string& o : p.options) {
    refuse_control_characters("--sbatch-option", o);
    if (!sbatch_word(o))
      throw UsageError("--sbatch-option '" + o +
                       "' is not one sbatch option of one word such as --constraint=h100 (no spaces, "
                       "quotes or backslashes: an #SBATCH line splits words at spaces)");
  }
}

}  // namespace varex::fleet
