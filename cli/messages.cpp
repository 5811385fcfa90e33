#include "cli/messages.hpp"

#include <cstdio>
#include <regex>

namespace varex::cli {

std::string rephrase_parse_error(const std::string& message) {
  struct Rule {
    std::regex pattern;
    const char* replacement;
  };
  static const Rule rules[] = {
      {std::regex(R"(^(--[\w-]+): Value (.*) not in range (.*) to (.*)$)"),
       "$1 $2: give a number from $3 to $4"},
      {std::regex(R"(^(--[\w-]+): (.*) not in \{(.*)\}$)"), "$1 $2: give one of {$3}"},
      {std::regex(R"(^(--[\w-]+): At Most 1 required but received (\d+)$)"),
       "$1 is given $2 times; it takes one value"},
      {std::regex(R"(^(--[\w-]+): \d+ required .* missing$)"), "$1 needs a value"},
      {std::regex(R"(^The following arguments? (?:was|were) not expected: (.*)$)"),
       "unexpected argument: $1 (varex help lists the commands, varex COMMAND --help their flags)"},
      {std::regex(R"(^(--[\w-]+) is required$)"), "$1 is required: this command needs it"},
  };
  for (const Rule& r : rules) {
    if (std::regex_match(message, r.pattern)) {
      std::string out = std::regex_replace(message, r.pattern, r.replacement);
      // CLI11 lists choices as {a,b,c}.
      if (const auto open = out.find('{'); open != std::string::npos) {
        for (std::size_t at = out.find(',', open); at != std::string::npos; at = out.find(',', at + 2))
          out.insert(at + 1, " ");
      }
      return out;
    }
  }
  return message;
}

}  // namespace varex::cli
