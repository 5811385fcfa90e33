#include "harness/fault_injection.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "base/text.hpp"
#include "harness/engine.hpp"
#include "harness/kernel_source.hpp"

namespace varex::harness {

namespace {

FaultKind kind_named(std::string_view name) {
  if (name == "crash") return FaultKind::Crash;
  if (name == "hang") return FaultKind::Hang;
  if (name == "throw") return FaultKind::Throw;
  if (name == "resources") return FaultKind::Resources;
  if (name == "illegal_address") return FaultKind::IllegalAddress;
  if (name == "spoil") return FaultKind::Spoil;
  throw UsageError("VAREX_INJECT_FAULT: unknown fault '" + std::string(name) +
                   "' (crash, hang, throw, resources, illegal_address, spoil)");
}

// One work-item writes to address 16, which no device maps: the same source for both APIs.
const KernelSource& faulting_source() {
  static const KernelSource source = [] {
    KernelSource s;
    s.name = "fault_injection.cl";
    s.text = resolve_includes(
        "#include \"common/portable.h\"\n"
        "KERNEL void varex_write_to_invalid_address(ulong address) {\n"
        "  *((GLOBAL volatile uint*)address) = 1u;\n"
        "}\n");
    s.hash = hex64(fnv1a(s.text));
    return s;
  }();
  return source;
}

}  // namespace

std::vector<InjectedFault> parse_injected_faults(const std::string& text) {
  std::vector<InjectedFault> faults;
  for (const std::string& entry : split(text, ';')) {
    const std::string_view item = trim(entry);
    if (item.empty()) continue;
    const auto colon = item.find(':');
    InjectedFault fault{kind_named(trim(item.substr(0, colon))), {}};
    if (colon != std::string_view::npos) {
      for (const std::string& pair : split(item.substr(colon + 1), ',')) {
        const auto eq = pair.find('=');
        if (eq == std::string::npos) throw UsageError("VAREX_INJECT_FAULT: '" + pair + "' is not name=value");
        fault.match[std::string(trim(pair.substr(0, eq)))] = std::string(trim(pair.substr(eq + 1)));
      }
    }
    faults.push_back(std::move(fault));
  }
  return faults;
}

std::optional<FaultKind> injected_fault(const variants::Params& params) {
  const char* text = std::getenv("VAREX_INJECT_FAULT");
  if (!text || !*text) return std::nullopt;
  for (const InjectedFault& fault : parse_injected_faults(text)) {
    bool matches = true;
    for (const auto& [name, value] : fault.match) {
      const auto it = params.find(name);
      matches =
          matches && it != params.end() && variants::to_string(it->second) == variants::to_string(value);
    }
    if (matches) return fault.kind;
  }
  return std::nullopt;
}

namespace {
bool spoiled = false;
}  // namespace

bool spoiled_by_injected_fault() {
  return spoiled;
}

void strike_if_injected(const variants::Params& params, Engine& engine) {
  const std::optional<FaultKind> kind = injected_fault(params);
  if (!kind) return;
  switch (*kind) {
    case FaultKind::Crash:
      // With the default action: a handler (LLVM's, in PoCL's compiler) may return from a raised signal.
      ::signal(SIGSEGV, SIG_DFL);
      ::raise(SIGSEGV);
      break;
    case FaultKind::Hang:
      while (true) ::pause();
    case FaultKind::Throw:
      throw std::runtime_error("injected fault: an exception from the operator");
    case FaultKind::Resources:
      engine.allocate(static_cast<std::size_t>(engine.device().max_alloc) + (std::size_t{1} << 20));
      throw std::logic_error("injected fault: the device granted an allocation beyond its largest");
    case FaultKind::IllegalAddress: {
      const Program& program = engine.compile(faulting_source(), {});
      engine.launch(program, "varex_write_to_invalid_address", {1, 1}, {KernelArg::of(std::uint64_t{16})});
      engine.finish();
      throw std::logic_error("injected fault: a write to address 16 went through");
    }
    case FaultKind::Spoil:
      spoiled = true;
      throw LaunchError("injected fault: an error that leaves the device unusable");
  }
}

}  // namespace varex::harness
