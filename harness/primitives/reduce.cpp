#include "harness/primitives/reduce.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace varex::harness::primitives {

Reduce::Reduce(Engine& engine, std::uint64_t local, std::uint64_t groups, Width width)
    : engine_(engine), local_(local), groups_(groups), width_(width), result_(engine.allocate(8)) {
  if (local == 0) throw std::invalid_argument("Reduce: local must be positive");
}

Defines Reduce::defines() const {
  return {{"MAX_LOCAL", std::to_string(local_)}};
}

void Reduce::enqueue(const Launcher& launcher, const DeviceBuffer& in, std::uint64_t n) const {
  launcher.fill(*result_, 0, 8);
  const std::uint64_t groups =
      groups_ ? groups_ : std::clamp<std::uint64_t>((n + local_ - 1) / local_, 1, 256);
  launcher.launch(width_ == Width::U64 ? "reduce_sum" : "reduce_sum_u32", {groups * local_, local_},
                  {KernelArg::of(in), KernelArg::of(*result_), KernelArg::of(static_cast<std::uint32_t>(n))});
}

Timings Reduce::run(const DeviceBuffer& in, std::uint64_t n, std::uint64_t& sum) {
  Timings timings;
  enqueue(timed(engine_, primitives_program(engine_, defines()), timings), in, n);
  auto host = engine_.allocate_host(8);
  engine_.download(*host, *result_, 8)->elapsed_ms();
  sum = *host->as<std::uint64_t>();
  return timings;
}

}  // namespace varex::harness::primitives
