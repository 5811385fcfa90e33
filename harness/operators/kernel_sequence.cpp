#include "harness/operators/kernel_sequence.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "base/errors.hpp"
#include "variants/launch.hpp"

namespace varex::harness {

std::uint64_t max_local(const DeviceInfo& device) {
  return std::max<std::uint64_t>(std::bit_floor(std::max<std::uint64_t>(device.max_work_group, 1)),
                                 kAutoPadLocal);
}

LaunchPlan::LaunchPlan(const variants::Params& params, const DeviceInfo& device)
    : local_(params.count("local") ? static_cast<std::uint64_t>(variants::get_int_or(params, "local", 0))
                                   : 0),
      groups_(variants::Grid::of(params).work_groups(device.compute_units)),
      padding_(params.count("padding") ? variants::get_string(params, "padding") : "guard") {}

LaunchShape LaunchPlan::cover(std::uint64_t n) const {
  if (padding_ == "none") return {n, local_ && n % local_ == 0 ? local_ : 0};
  return {round_up(n, pad_local()), local_};
}

LaunchShape LaunchPlan::rows(std::uint64_t n, std::uint64_t per_item) const {
  if (groups_) return {groups_ * pad_local(), pad_local()};
  return cover((n + per_item - 1) / per_item);
}

std::uint64_t LaunchPlan::indexed(std::uint64_t n, std::uint64_t per_item) const {
  return padding_ == "host" ? round_up(n, pad_local() * per_item) : n;
}

void KernelSequence::add(const std::string& label, double ms) {
  for (KernelTiming& k : kernels_) {
    if (k.kernel == label) {
      k.ms += ms;
      return;
    }
  }
  kernels_.push_back({label, ms});
}

void KernelSequence::run(const std::string& label, const std::string& kernel, const LaunchShape& shape,
                         const std::vector<KernelArg>& args) {
  if (shape.global == 0) return;
  if (!program_) throw std::logic_error("KernelSequence: " + kernel + " launched without a program");
  add(label, engine_.launch(*program_, kernel, shape, args)->elapsed_ms());
}

void KernelSequence::fill(const std::string& label, DeviceBuffer& buffer, std::uint32_t pattern,
                          std::size_t bytes) {
  if (bytes) add(label, engine_.fill(buffer, pattern, 0, bytes)->elapsed_ms());
}

void* VendorScratch::get(std::size_t bytes) {
  if (!buffer_ || buffer_->bytes() < bytes) buffer_ = engine_.allocate(std::max<std::size_t>(bytes, 256));
  return engine_.native_address(*buffer_);
}

void KernelSequence::vendor(const std::string& label, VendorScratch& scratch, const VendorCall& call) {
  std::size_t bytes = 0;
  if (const int status = call(nullptr, &bytes, nullptr); status != 0) {
    throw LaunchError(label + ": the vendor library refused the call (status " + std::to_string(status) +
                      ")");
  }
  void* temp = scratch.get(bytes);
  add(label,
      engine_.call_native(label, [&](void* stream) { return call(temp, &bytes, stream); })->elapsed_ms());
}

void KernelSequence::read(HostBuffer& dst, const DeviceBuffer& src, std::size_t bytes, std::size_t offset) {
  add("readback", engine_.download(dst, src, bytes, offset)->elapsed_ms());
}

ExecutionTimes KernelSequence::times() const {
  ExecutionTimes t;
  t.kernels = kernels_;
  for (const KernelTiming& k : kernels_) t.total_ms += k.ms;
  return t;
}

}  // namespace varex::harness
