#include "harness/outputs/scalar.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace varex::harness {

ScalarOutput::ScalarOutput(Engine& engine, std::uint64_t reference, std::uint64_t max_parts)
    : engine_(engine), reference_(reference), max_parts_(std::max<std::uint64_t>(max_parts, 1)) {
  parts_ = engine.allocate(max_parts_ * 8);
  host_ = engine.allocate_host(max_parts_ * 8);
}

void ScalarOutput::set_parts(std::uint64_t parts) {
  if (parts < 1 || parts > max_parts_) {
    throw std::logic_error("scalar output: " + std::to_string(parts) + " partial sums, room for " +
                           std::to_string(max_parts_));
  }
  parts_count_ = parts;
}

void ScalarOutput::poison() {
  engine_.fill(*parts_, kPoisonWord, 0, parts_->bytes())->elapsed_ms();
}

Collected ScalarOutput::collect() {
  Collected c;
  c.d2h_ms = engine_.download(*host_, *parts_, parts_count_ * 8)->elapsed_ms();
  const auto* parts = host_->as<std::uint64_t>();
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < parts_count_; ++i) sum += parts[i];
  c.digest = {1, sum};
  c.verified = sum == reference_;
  if (!c.verified) {
    c.mismatch = "value " + std::to_string(sum) + ", expected " + std::to_string(reference_) +
                 (parts_count_ > 1 ? " (the sum of " + std::to_string(parts_count_) + " partial sums)" : "");
  }
  return c;
}

}  // namespace varex::harness
