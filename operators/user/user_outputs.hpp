#pragma once
// The outputs of a user operator's own workload: one device buffer per declared output, compared with the
// reference element by element after each run: integers exactly, float32 within the output's tolerance
// (|got - want| <= tolerance * max(1, |want|); a NaN only where the reference has one).
//
// Digest: rows = the elements of all outputs; checksum = the sum over the outputs' words w at position p
// (counted across the outputs in order) of (p + 1) * w, modulo 2^64. A verified result reports the
// reference's digest (a float within its tolerance need not have the reference's bits).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/outputs/output.hpp"
#include "operators/common/toolkit.hpp"
#include "operators/user/declaration.hpp"

namespace varex::operators::user {

// Whether `got` equals `want` as an element of `output` (exactly, or within a float32's tolerance).
bool element_matches(const BufferDecl& output, std::uint32_t got, std::uint32_t want);
// An element as the user reads it: an integer, or a float's value.
std::string show_element(const BufferDecl& output, std::uint32_t word);

class UserOutputs final : public harness::Output {
 public:
  // `reference[o]`: the words d.outputs[o] must hold.
  UserOutputs(Engine& engine, const std::vector<BufferDecl>& outputs,
              std::vector<std::vector<std::uint32_t>> reference);

  DeviceBuffer& buffer(std::size_t output) { return *device_[output]; }
  std::uint64_t elements(std::size_t output) const { return reference_[output].size(); }

  void poison() override;
  Collected collect() override;
  Digest reference() const override { return reference_digest_; }
  std::uint64_t bytes_written() const override;

 private:
  Engine& engine_;
  const std::vector<BufferDecl>& outputs_;
  std::vector<std::vector<std::uint32_t>> reference_;
  Digest reference_digest_;
  std::vector<std::unique_ptr<DeviceBuffer>> device_;
  std::vector<std::unique_ptr<HostBuffer>> host_;
};

}  // namespace varex::operators::user
