#include "operators/user/compile_check.hpp"

#include <optional>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/engine.hpp"
#include "harness/kernel_source.hpp"
#include "operators/user/contract_operator.hpp"

namespace varex::operators::user {

bool is_user_operator(const harness::Operator& op) {
  return op.kernel_family().starts_with("user/");
}

std::string first_compiler_error(const std::string& message) {
  std::string first;
  for (const std::string& line : split(message, '\n')) {
    const std::string t(trim(line));
    if (t.empty()) continue;
    if (first.empty()) first = t;
    if (t.find("error") != std::string::npos && t.find(':') != std::string::npos) {
      // The log's own line, without what varex put before it on the first one (the program, its options and
      // the API's status: "…: NVRTC_ERROR_COMPILATION: " or "…: CL_BUILD_PROGRAM_FAILURE (-11): ").
      for (const char* status : {"_ERROR_COMPILATION: ", "_FAILURE (-11): "}) {
        if (const std::size_t at = t.find(status); at != std::string::npos)
          return t.substr(at + std::string_view(status).size());
      }
      return t;
    }
  }
  return first;
}

void check_default_compiles(const harness::Operator& op, const DeviceInfo& device,
                            const datasets::WorkloadSpec& spec,
                            const std::map<std::string, std::string>& pins) {
  if (!is_user_operator(op)) return;
  variants::Params start;
  std::optional<variants::Space> space;
  try {
    space.emplace(harness::space_for(op, device, spec).restricted(pins));
    start = space->canonical(space->defaults());
  } catch (const UsageError&) {
    return;  // the pins are refused where the command checks them
  }
  if (!space->valid(start) || !ContractOperator::is_user(start)) return;
  const std::unique_ptr<Engine> engine = harness::open_engine(device);
  try {
    engine->compile(harness::kernel_source(device.backend, op.kernel_family()), op.defines(start, device));
  } catch (const harness::CompileError& e) {
    throw UsageError(op.name() + "'s kernel does not compile on " + device.id + ": " +
                     first_compiler_error(e.what()));
  }
}

}  // namespace varex::operators::user
