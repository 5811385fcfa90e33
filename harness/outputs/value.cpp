#include "harness/outputs/value.hpp"

#include <string>

namespace varex::harness {

ValueOutput::ValueOutput(Engine& engine, Digest reference)
    : engine_(engine), reference_(reference), device_(engine.allocate(16)), host_(engine.allocate_host(16)) {}

void ValueOutput::poison() {
  engine_.fill(*device_, kPoisonWord, 0, 16)->elapsed_ms();
}

Collected ValueOutput::collect() {
  Collected c;
  c.d2h_ms = engine_.download(*host_, *device_, 16)->elapsed_ms();
  const auto* words = host_->as<std::uint64_t>();
  c.digest = {words[0], words[1]};
  c.verified = c.digest == reference_;
  if (!c.verified) {
    c.mismatch = "expected rows " + std::to_string(reference_.rows) + " and " +
                 std::to_string(static_cast<std::int64_t>(reference_.checksum)) + ", got rows " +
                 std::to_string(words[0]) + " and " + std::to_string(static_cast<std::int64_t>(words[1]));
  }
  return c;
}

}  // namespace varex::harness
