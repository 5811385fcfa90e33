#include "cli/messages.hpp"

#include <string_view>

namespace varex::cli {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// CLI11 lists choices as {a,b,c}: with a space after each comma.
std::string spaced(std::string_view list) {
  std::string out;
  for (char c : list) {
    out += c;
    if (c == ',') out += ' ';
  }
  return out;
}

}  // namespace

// Plain string matching, not std::regex: GCC 12 warns inside <regex> under the sanitizers' -O1.
std::string rephrase_parse_error(const std::string& message) {
  const std::string_view m = message;
  for (const char* prefix :
       {"The following argument was not expected: ", "The following arguments were not expected: "}) {
    if (starts_with(m, prefix)) {
      return "unexpected argument: " + std::string(m.substr(std::string_view(prefix).size())) +
             " (varex help lists the commands, varex COMMAND --help their flags)";
    }
  }
  if (starts_with(m, "--") && ends_with(m, " is required")) return message + ": this command needs it";
  const std::size_t colon = m.find(": ");
  if (!starts_with(m, "--") || colon == std::string_view::npos) return message;
  const std::string flag(m.substr(0, colon));
  const std::string_view rest = m.substr(colon + 2);
  if (starts_with(rest, "Value ")) {  // Value V not in range A to B
    const std::size_t in = rest.find(" not in range ");
    const std::size_t to = rest.rfind(" to ");
    if (in != std::string_view::npos && to != std::string_view::npos && to > in) {
      return flag + " " + std::string(rest.substr(6, in - 6)) + ": give a number from " +
             std::string(rest.substr(in + 14, to - in - 14)) + " to " + std::string(rest.substr(to + 4));
    }
  }
  if (const std::size_t in = rest.find(" not in {"); in != std::string_view::npos && ends_with(rest, "}"))
    return flag + " " + std::string(rest.substr(0, in)) + ": give one of {" +
           spaced(rest.substr(in + 9, rest.size() - in - 10)) + "}";
  if (starts_with(rest, "At Most 1 required but received "))
    return flag + " is given " + std::string(rest.substr(32)) + " times; it takes one value";
  if (rest.find(" required ") != std::string_view::npos && ends_with(rest, " missing"))
    return flag + " needs a value";
  return message;
}

}  // namespace varex::cli
