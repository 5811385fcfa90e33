// Picks tuned parameters for a device the way a consuming build does: from a JSON profile at run time and,
// when built with one, from a generated header. Prints one line per source:
//   json: level=<fallback level> params=<name=value,...> kernel_ms=<measured>
// --objective time|energy|edp takes the entries best by that objective (time unless given).
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <varex/profile_json.hpp>
#ifdef VAREX_PROFILE_HEADER
#include VAREX_PROFILE_HEADER
#endif

namespace {

void print(const char* source, const varex::profile::Choice& c) {
  std::cout << source << ": level=" << varex::profile::to_string(c.level) << " params=";
  bool first = true;
  for (const auto& [name, value] : c.params) {
    std::cout << (first ? "" : ",") << name << "=" << value;
    first = false;
  }
  std::cout << " kernel_ms=" << (c.entry ? c.entry->kernel_ms : 0.0) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args{
      {"--op", "selection"}, {"--rows", "268435456"}, {"--selectivity", "-1"}, {"--objective", "time"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  const varex::profile::DeviceKey device{args["--backend"], args["--vendor"], args["--name"],
                                         args["--arch"],    args["--type"],   ""};
  const std::uint64_t rows = std::strtoull(args["--rows"].c_str(), nullptr, 10);
  const double selectivity = std::strtod(args["--selectivity"].c_str(), nullptr);
  if (!args["--profile"].empty()) {
    try {
      const auto profile = varex::profile::load_profile_file(args["--profile"]);
      print("json", profile.lookup(args["--op"], device, rows, selectivity, args["--objective"]));
    } catch (const std::exception& e) {
      // A consuming engine would go on with its own defaults; the example says why and stops.
      std::cerr << "profile_consumer: " << e.what() << "\n";
      return 2;
    }
  }
#ifdef VAREX_PROFILE_HEADER
  print("header",
        varex_tuned::profile().lookup(args["--op"], device, rows, selectivity, args["--objective"]));
#endif
  return 0;
}
