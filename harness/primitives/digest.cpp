#include "harness/primitives/digest.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "harness/primitives/launcher.hpp"

namespace varex::harness::primitives {

namespace {

// The work-group size the digest kernels are compiled for; a grid of a few work-groups per compute unit
// strides over the tuples.
constexpr std::uint64_t kLocal = 256;

// SplitMix64's finaliser, as digest_mix on the device: datasets::splitmix64 adds the golden ratio first.
std::uint64_t mix(std::uint64_t x) {
  return datasets::splitmix64(x - 0x9E3779B97F4A7C15ULL);
}

}  // namespace

std::uint64_t HostDigest::start(std::uint64_t position) {
  return mix(position * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL);
}

std::uint64_t HostDigest::add(std::uint64_t h, std::uint32_t word) {
  return mix(h ^ word);
}

DeviceDigest::DeviceDigest(Engine& engine)
    : engine_(engine), sum_(engine.allocate(8)), host_(engine.allocate_host(8)) {}

std::uint64_t DeviceDigest::launch(const std::string& kernel, std::uint64_t n,
                                   const std::vector<KernelArg>& args) {
  if (n >= (std::uint64_t{1} << 32)) throw std::invalid_argument("DeviceDigest: more than 2^32 - 1 tuples");
  engine_.fill(*sum_, 0, 0, 8)->elapsed_ms();
  if (n) {
    const std::uint64_t groups = std::clamp<std::uint64_t>((n + kLocal - 1) / kLocal, 1,
                                                           4 * std::max(1u, engine_.device().compute_units));
    const Program& program = primitives_program(engine_, {{"MAX_LOCAL", std::to_string(kLocal)}});
    engine_.launch(program, kernel, {groups * kLocal, kLocal}, args)->elapsed_ms();
  }
  engine_.download(*host_, *sum_, 8)->elapsed_ms();
  return *host_->as<std::uint64_t>();
}

std::uint64_t DeviceDigest::columns(const std::vector<DigestColumn>& columns, std::uint64_t n, bool ordered) {
  if (columns.empty() || columns.size() > 5) throw std::invalid_argument("DeviceDigest: one to five columns");
  std::uint32_t widths = 0;
  std::vector<KernelArg> args;
  for (std::size_t j = 0; j < 5; ++j) {
    const DigestColumn& c = columns[std::min(j, columns.size() - 1)];
    args.push_back(KernelArg::of(*c.buffer));
    if (j < columns.size()) {
      if (c.width == 0 || c.width > 15)
        throw std::invalid_argument("DeviceDigest: a column of 1 to 15 words");
      widths |= c.width << (4 * j);
    }
  }
  args.push_back(KernelArg::of(*sum_));
  for (std::uint32_t v : {static_cast<std::uint32_t>(n), widths, 0u, ordered ? 1u : 0u})
    args.push_back(KernelArg::of(v));
  return launch("digest_columns", n, args);
}

std::uint64_t DeviceDigest::soa(const DeviceBuffer& buffer, std::uint32_t attributes, std::uint64_t capacity,
                                std::uint64_t n, bool ordered) {
  if (attributes == 0 || attributes > 5) throw std::invalid_argument("DeviceDigest: one to five attributes");
  if (capacity >= (std::uint64_t{1} << 32)) throw std::invalid_argument("DeviceDigest: capacity past 2^32");
  std::uint32_t widths = 0;
  for (std::uint32_t j = 0; j < attributes; ++j) widths |= 1u << (4 * j);
  std::vector<KernelArg> args(5, KernelArg::of(buffer));
  args.push_back(KernelArg::of(*sum_));
  for (std::uint32_t v :
       {static_cast<std::uint32_t>(n), widths, static_cast<std::uint32_t>(capacity), ordered ? 1u : 0u})
    args.push_back(KernelArg::of(v));
  return launch("digest_columns", n, args);
}

std::uint64_t DeviceDigest::gather(const DeviceBuffer& index, const DeviceBuffer& table, std::uint64_t limit,
                                   const DeviceBuffer* own, std::uint64_t n, bool ordered) {
  std::vector<KernelArg> args{KernelArg::of(index), KernelArg::of(table), KernelArg::of(own ? *own : index),
                              KernelArg::of(*sum_)};
  for (std::uint32_t v :
       {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(std::min<std::uint64_t>(limit, UINT32_MAX)),
        own ? 1u : 0u, ordered ? 1u : 0u})
    args.push_back(KernelArg::of(v));
  return launch("digest_gather", n, args);
}

}  // namespace varex::harness::primitives
