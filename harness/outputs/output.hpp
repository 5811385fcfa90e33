#pragma once
// Output kinds: what an operator's kernels leave on the device, checked one way per kind. Each kind owns
// its device buffers' poison (so an unwritten output cannot verify), the download, the digest that
// `run --json` reports and the full comparison with the host reference, reporting the first mismatch.
// Every operator of a kind uses the same class; see bitmap.hpp, rows.hpp, pairs.hpp, groups.hpp,
// scalar.hpp.
#include <cstdint>

#include "base/measurement.hpp"
#include "harness/engine.hpp"
#include "harness/operators/operator.hpp"

namespace varex::harness {

class Output {
 public:
  virtual ~Output() = default;
  // Fills the output buffers with a pattern no correct result contains in full.
  virtual void poison() = 0;
  // Downloads, digests and compares in full; `mismatch` names the first difference.
  virtual Collected collect() = 0;
  // Checks the output by a digest computed on the device (harness/primitives/digest.hpp) against the
  // reference's, downloading only a few words. Verified: the output equals the reference, and the digest
  // reported is the reference's. Not verified: the digests differ (no mismatch named: collect() names it).
  // Outputs of a few words compare in full here.
  virtual Collected check_on_device() { return collect(); }
  // The reference's digest.
  virtual Digest reference() const = 0;
  // Bytes a correct result writes at least (part of the bytes-moved model).
  virtual std::uint64_t bytes_written() const = 0;
};

// The check `how` asks for.
inline Collected collect(Output& output, Check how) {
  return how == Check::Device ? output.check_on_device() : output.collect();
}

// The pattern poison() writes into 32-bit words.
constexpr std::uint32_t kPoisonWord = 0xA5A5A5A5u;

}  // namespace varex::harness
