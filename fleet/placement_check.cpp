#include "fleet/placement_check.hpp"

#include <algorithm>
#include <regex>

#include "base/errors.hpp"

namespace varex::fleet {

namespace {

// The value as an error message shows it: control characters escaped, so that the message stays one line.
std::string printable(const std::string& value) {
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += u == '\n' ? std::string("\\n") : std::string("\\x") + hex[u >> 4] + hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
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

// `value` (unless empty: the flag not given) must match `form`; else UsageError saying what it should be.
void check_value(const std::string& flag, const std::string& value, const std::regex& form,
                 const std::string& expected) {
  if (value.empty()) return;
  refuse_control_characters(flag, value);
  if (!std::regex_match(value, form)) throw UsageError(flag + " '" + value + "' is not " + expected);
}

}  // namespace

void check_placement(const Placement& p) {
  // Slurm's names of partitions, accounts and QOS: letters, digits, '_', '-' and '.'.
  static const std::regex name("[A-Za-z0-9_.-]+");
  check_value("--partition", p.partition, name, "a Slurm partition name (letters, digits, _ - .)");
  check_value("--account", p.account, name, "a Slurm account name (letters, digits, _ - .)");
  check_value("--qos", p.qos, name, "a Slurm QOS name (letters, digits, _ - .)");
  // sbatch's forms: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes,
  // days-hours:minutes:seconds, or no limit.
  static const std::regex time(
      R"((\d+(:\d+){0,2})|(\d+-\d+(:\d+){0,2})|UNLIMITED|INFINITE|unlimited|infinite)");
  check_value("--time", p.time, time,
              "a Slurm time limit: minutes (90), hours:minutes:seconds (2:00:00) or days-hours (1-0)");
  // name[:type][:count] items separated by commas (gpu:1, gpu:h100:1, gpu:2,nvme:1), or none.
  static const std::regex gres(
      R"([A-Za-z][A-Za-z0-9_./-]*(:[A-Za-z0-9_.-]+){0,2}(,[A-Za-z][A-Za-z0-9_./-]*(:[A-Za-z0-9_.-]+){0,2})*)");
  check_value("--gres", p.gres, gres, "a Slurm gres list such as gpu:1, gpu:h100:1 or gpu:2,nvme:1");
  // Any other sbatch option, one word as an #SBATCH line takes it: --constraint=h100, --mem=64G.
  static const std::regex option(R"(-[^\s'"\\]+)");
  for (const std::string& o : p.options) {
    refuse_control_characters("--sbatch-option", o);
    if (!std::regex_match(o, option))
      throw UsageError("--sbatch-option '" + o +
                       "' is not one sbatch option of one word such as --constraint=h100 (no spaces, "
                       "quotes or backslashes: an #SBATCH line splits words at spaces)");
  }
}

}  // namespace varex::fleet
