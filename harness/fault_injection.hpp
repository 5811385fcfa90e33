#pragma once
// Faults made on purpose, for the tests of what a failing variant does to a session (a failing variant is
// one failed measurement; the session goes on). `VAREX_INJECT_FAULT` names them, separated by ';', each a
// kind and the variant it strikes:
//
//   VAREX_INJECT_FAULT='crash:local=64;hang:local=128,kernel=overflow'
//
// A variant is struck when every `name=value` given matches its parameters. The kinds:
//   crash      the worker process dies (SIGSEGV), as a driver that faults does
//   hang       the variant never finishes (the worker sleeps), as a kernel in an endless loop
//   throw      an exception escapes the operator, as a vendor library's does
//   resources  a real allocation the device refuses (larger than its largest allocation), as a variant
//              that asks for more than the device has
//   illegal_address  a real kernel writes through an invalid address: on a GPU a real sticky error (the
//              context is spoiled), on a CPU device a crash of the worker
//   spoil      the variant fails with a launch error that does not say it is sticky, and leaves the device
//              unusable: every later call fails until the worker is replaced. A stand-in for CUDA's sticky
//              errors (Thrust's CUDA_ERROR_INVALID_ADDRESS_SPACE on the H100 was one varex did not know),
//              which need a GPU to happen for real; the worker finds it as it finds those, by asking whether
//              its device is still usable after a failed variant.
// Only the measurement reads the variable, after the variant's program is built.
#include <optional>
#include <string>
#include <vector>

#include "base/params.hpp"

namespace varex::harness {

class Engine;

enum class FaultKind { Crash, Hang, Throw, Resources, IllegalAddress, Spoil };

struct InjectedFault {
  FaultKind kind;
  variants::Params match;  // the parameters a struck variant has (as words: "64" matches 64)
};

// Parses a VAREX_INJECT_FAULT value; throws UsageError naming what is wrong.
std::vector<InjectedFault> parse_injected_faults(const std::string& text);

// The fault $VAREX_INJECT_FAULT sets for a variant with `params`, if any.
std::optional<FaultKind> injected_fault(const variants::Params& params);

// Makes the fault $VAREX_INJECT_FAULT sets for `params` happen, if any: crashes or hangs the process, or
// throws what the fault throws.
void strike_if_injected(const variants::Params& params, Engine& engine);

// Whether a spoil fault struck this process: its device counts as unusable from then on.
bool spoiled_by_injected_fault();

}  // namespace varex::harness
