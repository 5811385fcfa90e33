#include "operators/ra_sort/ra_sort.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <thread>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/rows.hpp"
#include "harness/primitives/scan.hpp"
#include "operators/common/relations/relation_call.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::add_vendor_variant;
using harness::has_register_cap;
using harness::has_warp_ballot;
using harness::is_vendor;
using harness::KernelSequence;
using harness::kPoisonWord;
using harness::LaunchBundle;
using harness::LaunchPlan;
using harness::register_cap_define;
using harness::RowsOutput;
using harness::TupleLayout;
using harness::VariantRun;
using harness::vendor_library;
using harness::VendorScratch;
using harness::warp_ballot_defines;
namespace primitives = harness::primitives;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint32_t kMaxWidth = 4;   // MAX_WIDTH: words of the widest tuple
constexpr std::uint64_t kMaxBins = 256;  // 2^bits for the largest digit
constexpr std::uint64_t kRadixMaxTile = 2048;
constexpr std::uint64_t kOnesweepMaxTile = 8192;
constexpr std::uint64_t kMergeMaxTile = 1024;
// The one-sweep passes' histograms: a digit of at least 4 bits, so at most 8 digits per word, 2^bits bins.
constexpr std::uint64_t kMaxHistogramWords = kMaxWidth * 4 * 256;  // 8-bit digits (4 x 16 and 6 x 64 less)
constexpr std::uint32_t kMaxPasses = kMaxWidth * 8;
// Tuples the one-sweep histogram kernel's work-items read each.
constexpr std::uint64_t kHistogramItems = 64;
// The shape of the shared device-wide scan of the radix sort's digit counts.
const primitives::ScanShape kScanShape{128, 8};

bool is_merge(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "merge";
}

bool is_onesweep(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "onesweep";
}

// max_regs (devices with a register cap only; 0: the compiler's choice, also for params recorded before it).
int max_regs_of(const variants::Params& params) {
  const auto it = params.find("max_regs");
  return it != params.end() && it->second == variants::Value{64} ? 64 : 0;
}

std::uint32_t digits_per_word(std::uint32_t bits) {
  return (32 + bits - 1) / bits;
}

// Local memory of the variant's largest kernel, in bytes; `ballots`: the device ranks by warp ballots
// (common/radix_rank.h).
std::uint64_t local_bytes(const variants::Params& params, bool ballots) {
  const auto local = static_cast<std::uint64_t>(variants::get_int(params, "local"));
  const std::uint64_t tile = local * variants::get_int(params, "ept");
  if (is_merge(params)) return tile * (kMaxWidth + 2) * 4;  // stage + two orders (ra_sort_block)
  const auto bits = static_cast<std::uint32_t>(variants::get_int(params, "bits"));
  const std::uint64_t bins = std::uint64_t{1} << bits;
  // common/radix_rank.h's words: each warp's counters, or the tile's sort keys and places.
  const std::uint64_t rank = ballots && local % 32 == 0 && local >= bins ? local / 32 * bins : 2 * tile;
  if (is_onesweep(params)) {
    // ra_sort_onesweep: the ranking's, scan, count, first, base, stage (a pair per tuple), ticket;
    // ra_sort_histograms.
    return std::max(rank + local + 1 + 3 * bins + 2 * tile + 1, kMaxWidth * digits_per_word(bits) * bins) * 4;
  }
  // ra_sort_scatter: the ranking's, scan, count, first, order.
  return (rank + local + 1 + 2 * bins + tile) * 4;
}

// Per-tile digit counts of any valid variant: 2^bits x ceil(n / tile) with tile >= 2^bits.
std::uint64_t max_counts(std::uint64_t rows) {
  return rows + kMaxBins;
}

// Runs the shared device-wide scan (harness/primitives/scan.hpp) on the family's own scan kernels, timed
// under `label` in the runner's kernel sequence.
void scan_in(KernelSequence& seq, const primitives::DeviceScan& scan, const std::string& label,
             const DeviceBuffer& in, DeviceBuffer& out, std::uint64_t n) {
  primitives::Launcher launcher;
  launcher.launch = [&seq, &label](const std::string& kernel, const LaunchShape& shape,
                                   const std::vector<KernelArg>& args) {
    seq.run(label, kernel, shape, args);
  };
  launcher.fill = [&seq, &label](DeviceBuffer& buffer, std::uint32_t pattern, std::size_t bytes) {
    seq.fill(label, buffer, pattern, bytes);
  };
  scan.enqueue(launcher, in, out, n);
}

// A variant of the sort, decoded once: the algorithm, the tuple layout, the tile (local x ept tuples), the
// radix sort's digit bits and skip, and the defines the family's kernels are built with.
struct RaSortVariant : LaunchBundle {
  RaSortVariant(const variants::Params& params, const DeviceInfo& device);
  bool merge;          // algorithm=merge (else radix or onesweep)
  bool onesweep;       // algorithm=onesweep
  TupleLayout layout;  // of the input and the output (aos for the vendor call, whatever the parameters say)
  std::uint64_t local;
  std::uint64_t ept;
  std::uint32_t bits;  // radix: bits per digit
  bool skip;           // radix: only the passes whose digit varies
  int max_regs;        // onesweep: a work-item's registers (0: the compiler's choice)
};

RaSortVariant::RaSortVariant(const variants::Params& params, const DeviceInfo& device)
    : LaunchBundle(params, device),
      merge(is_merge(params)),
      onesweep(is_onesweep(params)),
      layout(vendor ? TupleLayout::Aos : layout_of(params)),
      local(static_cast<std::uint64_t>(variants::get_int(params, "local"))),
      ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))),
      bits(static_cast<std::uint32_t>(variants::get_int(params, "bits"))),
      skip(variants::get_string(params, "skip") == "on"),
      max_regs(max_regs_of(params)) {
  defines = {{"ALGO_MERGE", merge ? "1" : "0"},
             {"WG_SIZE", std::to_string(local)},
             {"EPT", std::to_string(ept)},
             {"LAYOUT_SOA", layout == TupleLayout::Soa ? "1" : "0"}};
  if (!merge) defines.push_back({"BITS", std::to_string(bits)});
  if (onesweep) {
    defines.push_back({"ALGO_ONESWEEP", "1"});
    defines.push_back(register_cap_define(max_regs));
    for (Define& d : warp_ballot_defines(device)) defines.push_back(std::move(d));
  } else if (!merge) {
    for (const auto& define : kScanShape.defines()) defines.push_back(define);
  }
}

// The sort of `rows` tuples of `width` words from an input buffer into an output buffer, both in the
// variant's layout (under soa with their capacity in tuples per column), whoever owns the two. It owns the
// working buffers any variant needs for that many tuples: a second output (the passes alternate between
// it and the output), the radix sort's digit counts, their offsets and scan, the merge sort's splits, the
// bits that vary and the vendor library's scratch.
class SortWork {
 public:
  // `capacity`: the tuples the output holds (per column under soa); `keys`: the words compared
  // (sort_key_words).
  SortWork(Engine& engine, std::uint64_t rows, std::uint32_t width, std::uint32_t keys,
           std::uint64_t capacity)
      : engine_(engine), rows_(rows), width_(width), keys_(keys) {
    scratch_ = engine.allocate(std::max<std::uint64_t>(capacity * width_, 1) * 4);
    counts_ = engine.allocate(max_counts(rows_) * 4);
    offsets_ = engine.allocate((max_counts(rows_) + 1) * 4);
    splits_ = engine.allocate(((rows_ + 31) / 32 + 1) * 4);  // one per output tile (tiles >= 32 tuples)
    bits_ = engine.allocate(2 * kMaxWidth * 4);
    host_bits_ = engine.allocate_host(2 * kMaxWidth * 4);
    histograms_ = engine.allocate(kMaxHistogramWords * 4);
    host_histograms_ = engine.allocate_host(kMaxHistogramWords * 4);
    tickets_ = engine.allocate(kMaxPasses * 4);
    scan_ = std::make_unique<primitives::DeviceScan>(engine, max_counts(rows_), kScanShape);
  }

  DeviceBuffer& scratch() { return *scratch_; }

  void run(const RaSortVariant& variant, KernelSequence& seq, const DeviceBuffer& input,
           std::uint64_t in_capacity, DeviceBuffer& output, std::uint64_t out_capacity) {
    if (variant.vendor) {
      run_cub(variant.merge ? 1 : 0, seq, input, output);
      return;
    }
    if (rows_ == 0) return;
    const std::uint64_t tile = variant.local * variant.ept;
    const std::uint64_t tiles = (rows_ + tile - 1) / tile;
    const Step step{.seq = seq,
                    .plan = variant.launch,
                    .input = input,
                    .output = output,
                    .in_capacity = u32(in_capacity),
                    .out_capacity = u32(out_capacity),
                    .local = variant.local,
                    .tile = tile,
                    .tiles = tiles};
    if (variant.merge) {
      merge_sort(step);
    } else if (variant.onesweep) {
      onesweep_sort(step, variant.bits, variant.skip);
    } else {
      radix_sort(step, variant.bits, variant.skip);
    }
  }

 private:
  struct Step {
    KernelSequence& seq;
    const LaunchPlan& plan;
    const DeviceBuffer& input;
    DeviceBuffer& output;
    std::uint32_t in_capacity, out_capacity;
    std::uint64_t local, tile, tiles;
  };

  std::uint32_t u32(std::uint64_t v) const { return static_cast<std::uint32_t>(v); }

  // CUB's DeviceRadixSort::SortKeys over whole tuples (a decomposer names their first `keys` words, key
  // first) or DeviceMergeSort::StableSortKeysCopy; AoS in and out.
  void run_cub(int algorithm, KernelSequence& seq, const DeviceBuffer& input, DeviceBuffer& output) {
    const varex_vendor_table& cub = *vendor_library();
    const auto* in = static_cast<const unsigned*>(engine_.native_address(input));
    auto* out = static_cast<unsigned*>(engine_.native_address(output));
    seq.vendor(algorithm ? "cub_merge_sort" : "cub_radix_sort", vendor_scratch_,
               [&](void* temp, std::size_t* bytes, void* stream) {
                 return cub.sort_tuples(temp, bytes, in, out, rows_, static_cast<int>(width_),
                                        static_cast<int>(keys_), algorithm, stream);
               });
  }

  // The relation copied to the output as it is (nothing left to sort).
  void copy(const Step& s) {
    s.seq.run("copy", "ra_sort_copy", s.plan.rows(s.tiles * s.local),
              {KernelArg::of(s.input), KernelArg::of(s.output), KernelArg::of(u32(rows_)),
               KernelArg::of(width_), KernelArg::of(s.in_capacity), KernelArg::of(s.out_capacity)});
  }

  // The buffer that writer j of `writers` writes: the last writes the output, the others alternate.
  DeviceBuffer& target(const Step& s, std::uint64_t j, std::uint64_t writers) {
    return (writers - 1 - j) % 2 == 0 ? s.output : *scratch_;
  }

  void radix_sort(const Step& s, std::uint32_t bits, bool skip) {
    const LaunchShape over_tiles = s.plan.rows(s.tiles * s.local);
    const auto n = u32(rows_);
    const auto tiles = u32(s.tiles);
    // The bits of each attribute that vary between tuples (all, unless skip asks).
    std::uint32_t varying[kMaxWidth] = {~0u, ~0u, ~0u, ~0u};
    if (skip) {
      s.seq.fill("bits", *bits_, 0, 2 * kMaxWidth * 4);
      s.seq.run("bits", "ra_sort_bits", over_tiles,
                {KernelArg::of(s.input), KernelArg::of(*bits_), KernelArg::of(n), KernelArg::of(width_),
                 KernelArg::of(s.in_capacity)});
      s.seq.read(*host_bits_, *bits_, 2 * kMaxWidth * 4, 0);
      const auto* words = host_bits_->as<std::uint32_t>();
      for (std::uint32_t c = 0; c < kMaxWidth; ++c) varying[c] = words[c] & words[kMaxWidth + c];
    }
    // Least significant first: the last compared word's digits, ..., the key's.
    struct Pass {
      std::uint32_t word, shift;
    };
    std::vector<Pass> passes;
    for (std::uint32_t word = keys_; word-- > 0;) {
      for (std::uint32_t shift = 0; shift < 32; shift += bits) {
        const std::uint32_t digit_bits = std::min(bits, 32 - shift);
        const std::uint32_t mask = digit_bits == 32 ? ~0u : ((1u << digit_bits) - 1) << shift;
        if (varying[word] & mask) passes.push_back({word, shift});
      }
    }
    if (passes.empty()) {
      copy(s);
      return;
    }
    const std::uint64_t counts = (std::uint64_t{1} << bits) * s.tiles;
    if (counts > max_counts(rows_)) throw LaunchError("ra_sort: more digit counts than allocated");
    const DeviceBuffer* src = &s.input;
    std::uint32_t src_capacity = s.in_capacity;
    for (std::size_t j = 0; j < passes.size(); ++j) {
      const Pass& p = passes[j];
      DeviceBuffer& dst = target(s, j, passes.size());
      s.seq.run(
          "count", "ra_sort_count", over_tiles,
          {KernelArg::of(*src), KernelArg::of(*counts_), KernelArg::of(n), KernelArg::of(width_),
           KernelArg::of(src_capacity), KernelArg::of(p.word), KernelArg::of(p.shift), KernelArg::of(tiles)});
      scan_in(s.seq, *scan_, "scan", *counts_, *offsets_, counts);
      s.seq.run("scatter", "ra_sort_scatter", over_tiles,
                {KernelArg::of(*src), KernelArg::of(dst), KernelArg::of(*offsets_), KernelArg::of(n),
                 KernelArg::of(width_), KernelArg::of(src_capacity), KernelArg::of(s.out_capacity),
                 KernelArg::of(p.word), KernelArg::of(p.shift), KernelArg::of(tiles)});
      src = &dst;
      src_capacity = s.out_capacity;
    }
  }

  // One kernel per pass (ra_sort.cl, ALGO_ONESWEEP): every pass's digit histogram at once, their bins'
  // starts, then the passes, each placing its tiles by a look-back per digit over the digit counts (one
  // word per tile and digit in counts_, cleared before each pass). skip: the histograms are read back and a
  // pass whose digit is the same in every tuple (one bin holds all) is left out.
  void onesweep_sort(const Step& s, std::uint32_t bits, bool skip) {
    if (rows_ >= (std::uint64_t{1} << 30))
      throw LaunchError("ra_sort: onesweep sorts fewer than 2^30 tuples");
    const auto n = u32(rows_);
    const auto tiles = u32(s.tiles);
    const std::uint32_t digits = digits_per_word(bits);
    const std::uint64_t bins = std::uint64_t{1} << bits;
    const std::uint32_t histograms = width_ * digits;
    s.seq.fill("histograms", *histograms_, 0, histograms * bins * 4);
    s.seq.fill("histograms", *tickets_, 0, kMaxPasses * 4);
    s.seq.run("histograms", "ra_sort_histograms", s.plan.rows(s.tiles * s.local, kHistogramItems),
              {KernelArg::of(s.input), KernelArg::of(*histograms_), KernelArg::of(n), KernelArg::of(width_),
               KernelArg::of(s.in_capacity)});
    // Least significant first, as the LSD passes: the last compared word's digits, ..., the key's.
    std::vector<std::uint32_t> passes;  // histogram c x digits + k: digit k of attribute c
    const std::uint32_t* counts = nullptr;
    if (skip) {
      s.seq.read(*host_histograms_, *histograms_, histograms * bins * 4, 0);
      counts = host_histograms_->as<std::uint32_t>();
    }
    for (std::uint32_t c = keys_; c-- > 0;) {
      for (std::uint32_t h = c * digits; h < (c + 1) * digits; ++h) {
        const std::uint32_t* bin = counts ? counts + h * bins : nullptr;
        if (!bin || std::find(bin, bin + bins, n) == bin + bins) passes.push_back(h);
      }
    }
    if (passes.empty()) {
      copy(s);
      return;
    }
    s.seq.run("histograms", "ra_sort_bin_starts", s.plan.rows(std::uint64_t{histograms} * s.local),
              {KernelArg::of(*histograms_), KernelArg::of(histograms)});
    if (bins * s.tiles > max_counts(rows_)) throw LaunchError("ra_sort: more digit counts than allocated");
    const DeviceBuffer* src = &s.input;
    std::uint32_t src_capacity = s.in_capacity;
    for (std::uint32_t j = 0; j < passes.size(); ++j) {
      const std::uint32_t h = passes[j];
      DeviceBuffer& dst = target(s, j, passes.size());
      s.seq.fill("onesweep", *counts_, 0, bins * s.tiles * 4);
      s.seq.run(
          "onesweep", "ra_sort_onesweep", s.plan.rows(s.tiles * s.local),
          {KernelArg::of(*src), KernelArg::of(dst), KernelArg::of(*histograms_), KernelArg::of(*counts_),
           KernelArg::of(*tickets_), KernelArg::of(j), KernelArg::of(h), KernelArg::of(n),
           KernelArg::of(width_), KernelArg::of(src_capacity), KernelArg::of(s.out_capacity),
           KernelArg::of(h / digits), KernelArg::of((h % digits) * bits), KernelArg::of(tiles)});
      src = &dst;
      src_capacity = s.out_capacity;
    }
  }

  void merge_sort(const Step& s) {
    const auto n = u32(rows_);
    const auto tiles = u32(s.tiles);
    std::uint64_t passes = 0;
    for (std::uint64_t run = s.tile; run < rows_; run *= 2) ++passes;
    const LaunchShape over_tiles = s.plan.rows(s.tiles * s.local);
    DeviceBuffer* dst = &target(s, 0, passes + 1);
    s.seq.run("block_sort", "ra_sort_block", over_tiles,
              {KernelArg::of(s.input), KernelArg::of(*dst), KernelArg::of(n), KernelArg::of(width_),
               KernelArg::of(keys_), KernelArg::of(s.in_capacity), KernelArg::of(s.out_capacity),
               KernelArg::of(tiles)});
    std::uint64_t run = s.tile;
    for (std::uint64_t j = 1; j <= passes; ++j, run *= 2) {
      DeviceBuffer* src = dst;
      dst = &target(s, j, passes + 1);
      s.seq.run("partition", "ra_sort_partition", s.plan.rows(s.tiles),
                {KernelArg::of(*src), KernelArg::of(*splits_), KernelArg::of(n), KernelArg::of(width_),
                 KernelArg::of(keys_), KernelArg::of(s.out_capacity), KernelArg::of(u32(run)),
                 KernelArg::of(tiles)});
      s.seq.run("merge", "ra_sort_merge", over_tiles,
                {KernelArg::of(*src), KernelArg::of(*dst), KernelArg::of(*splits_), KernelArg::of(n),
                 KernelArg::of(width_), KernelArg::of(keys_), KernelArg::of(s.out_capacity),
                 KernelArg::of(u32(run)), KernelArg::of(tiles)});
    }
  }

  Engine& engine_;
  std::uint64_t rows_;
  std::uint32_t width_;
  std::uint32_t keys_;  // the words compared: width_, or 1 (by=key)
  std::unique_ptr<DeviceBuffer> scratch_, counts_, offsets_, splits_, bits_, histograms_, tickets_;
  std::unique_ptr<HostBuffer> host_bits_, host_histograms_;
  std::unique_ptr<primitives::DeviceScan> scan_;
  VendorScratch vendor_scratch_{engine_};
};

class SortRun final : public VariantRun<RaSortVariant> {
 public:
  SortRun(Engine& engine, const datasets::WorkloadSpec& spec) : VariantRun(engine, "ra_sort") {
    const datasets::Relation relation = materialise_relation(spec);
    rows_ = relation.rows();
    width_ = relation.attributes();
    const bool by_key = spec.query.is_object() && spec.query.value("by", std::string("tuple")) == "key";
    const std::uint32_t keys = by_key ? 1 : width_;
    output_ = std::make_unique<RowsOutput>(engine, width_, rows_, sort_reference(relation, keys),
                                           /*counted=*/false);
    inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
    work_ = std::make_unique<SortWork>(engine, rows_, width_, keys, output_->capacity());
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override {
    output_->poison();
    engine_.fill(work_->scratch(), kPoisonWord, 0, work_->scratch().bytes())->elapsed_ms();
  }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // At least: every tuple read once and written once.
  std::uint64_t bytes_moved() const override { return 2 * rows_ * width_ * 4; }
  std::uint64_t working_set_bytes() const override {
    return 3 * rows_ * width_ * 4 + 2 * max_counts(rows_) * 4;
  }

 private:
  RaSortVariant decode(const variants::Params& params) const override {
    return RaSortVariant(params, engine_.device());
  }

  void run(const RaSortVariant& variant, KernelSequence& seq) override {
    output_->set_layout(variant.layout);
    work_->run(variant, seq, inputs_->buffer(variant.layout), inputs_->capacity(), output_->tuple_buffer(),
               output_->capacity());
  }

  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
  std::unique_ptr<SortWork> work_;
};

// On an application's relation (relation_call.hpp): the sorted relation, in the input's layout and as
// densely, in one buffer of the bound run's own; the working buffers are the bound run's too.
class SortBound final : public RelationCall<RaSortVariant> {
 public:
  SortBound(Engine& engine, const BoundRelation& relation, datasets::WorkloadClass workload_class,
            std::uint32_t keys)
      : RelationCall(engine, "ra_sort", relation, std::move(workload_class), OutputKind::Rows,
                     relation.width),
        work_(engine, relation.rows, relation.width, keys, relation.rows) {}

 private:
  void run(const RaSortVariant& variant, KernelSequence& seq) override {
    DeviceBuffer& out = output(relation_.rows * relation_.width * 4);
    work_.run(variant, seq, in(), relation_.rows, out, relation_.rows);
  }

  SortWork work_;
};

}  // namespace

namespace {

using HostTuple = std::array<std::uint32_t, kMaxWidth>;

// std::stable_sort over the host's cores: each core's share sorted, then neighbouring runs merged in pairs,
// the merges of a round side by side (std::merge takes equal tuples from the left run first, so the order
// stays stable). A tune at 2^26 tuples spent its 20 s budget on the single-threaded sort before this.
void parallel_stable_sort(std::vector<HostTuple>& tuples) {
  const std::uint64_t n = tuples.size();
  // At least two shares, so that the merge runs (and its test means something) on a machine of one core too.
  const std::uint64_t cores = std::max(2u, std::min(std::thread::hardware_concurrency(), 64u));
  const std::uint64_t share = std::max<std::uint64_t>((n + cores - 1) / cores, 1 << 16);
  std::vector<std::uint64_t> bounds;
  for (std::uint64_t b = 0; b < n; b += share) bounds.push_back(b);
  bounds.push_back(n);
  auto side_by_side = [](std::size_t count, const std::function<void(std::size_t)>& body) {
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < count; ++i) pool.emplace_back(body, i);
    for (auto& t : pool) t.join();
  };
  side_by_side(bounds.size() - 1, [&](std::size_t i) {
    std::stable_sort(tuples.begin() + bounds[i], tuples.begin() + bounds[i + 1]);
  });
  std::vector<HostTuple> merged(bounds.size() > 2 ? n : 0);
  while (bounds.size() > 2) {
    std::vector<std::uint64_t> next;
    for (std::size_t i = 0; i + 1 < bounds.size(); i += 2) next.push_back(bounds[i]);
    next.push_back(n);
    side_by_side((bounds.size()) / 2, [&](std::size_t pair) {
      const std::size_t i = 2 * pair;
      const auto first = tuples.begin() + bounds[i];
      const auto middle = tuples.begin() + bounds[i + 1];
      const auto last = i + 2 < bounds.size() ? tuples.begin() + bounds[i + 2] : middle;
      std::merge(first, middle, middle, last, merged.begin() + bounds[i]);
    });
    tuples.swap(merged);
    bounds = std::move(next);
  }
}

}  // namespace

std::vector<std::uint32_t> sort_reference(const datasets::Relation& relation, std::uint32_t keys) {
  const std::uint64_t rows = relation.rows();
  const std::uint32_t width = relation.attributes();
  // Tuples padded with zeros to four words: with one width for all, the padded order is the tuples' order.
  // The words past `keys` are compared too, but as the tuple's input position: the stable order by `keys`.
  std::vector<HostTuple> tuples(rows, HostTuple{});
  const std::uint32_t compared = std::min(keys, width);
  for (std::uint32_t c = 0; c < compared; ++c)
    for (std::uint64_t r = 0; r < rows; ++r) tuples[r][c] = relation.columns[c][r];
  if (compared < width) {
    for (std::uint64_t r = 0; r < rows; ++r) tuples[r][compared] = static_cast<std::uint32_t>(r);
  }
  parallel_stable_sort(tuples);  // std::array's operator< is lexicographic
  if (compared < width) {
    for (auto& t : tuples) {
      const auto r = t[compared];
      for (std::uint32_t c = compared; c < width; ++c) t[c] = relation.columns[c][r];
    }
  }
  std::vector<std::uint32_t> out;
  out.reserve(rows * width);
  for (const auto& t : tuples) out.insert(out.end(), t.begin(), t.begin() + width);
  return out;
}

std::uint32_t sort_key_words(const std::map<std::string, std::string>& query, std::uint32_t width) {
  const auto it = query.find("by");
  if (it == query.end() || it->second == "tuple") return width;
  if (it->second == "key") return 1;
  throw UsageError("ra_sort: query by=" + printable(it->second) + ": a sort is by=tuple or by=key");
}

std::vector<QueryKeyDecl> RaSortOperator::query_keys() const {
  return {{"by",
           "what the sort compares: tuple (the default: key, then the values) or key (the key alone, "
           "equal keys in input order)"}};
}

void RaSortOperator::read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const {
  for (const auto& [key, value] : options.query) {
    if (key != "by") throw UsageError("ra_sort: unknown query key '" + printable(key) + "' (it takes by)");
  }
  // by=tuple is the workload every database before the query knew: it stays without a query.
  if (sort_key_words(options.query, 4) == 1) spec.query = {{"by", "key"}};
}

variants::Space RaSortOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"algorithm",
       variants::TunableKind::Compile,
       {Value{"merge"}, Value{"radix"}, Value{"onesweep"}},
       Value{"merge"},
       "merge: the source's merge sort (VexCL's, after Modern GPU): tiles sorted in local memory, then "
       "merge-path passes over pairs of sorted runs; radix: LSD radix sort, a pass per digit (per-tile digit "
       "counts, the shared device-wide scan, a stable scatter); onesweep: the same passes one kernel each, "
       "as CUB's Onesweep (all histograms in one read first; tiles ranked by warp ballots where the device "
       "has them, placed by a look-back per digit, written out in digit order)"},
      relation_layout(),
      relation_local(context.device, variants::TunableKind::Compile,
                     "work-group size (compile-time: sizes the local arrays)"),
      {"ept",
       variants::TunableKind::Compile,
       {1, 2, 4, 8, 16},
       4,
       "tuples per work-item; a tile (sorted in local memory, ranked per radix pass, or one merge output "
       "partition) holds local x ept tuples; 16 for onesweep only"},
      {"bits",
       variants::TunableKind::Compile,
       {4, 6, 8},
       8,
       "radix, onesweep: bits per digit (2^bits digits; ceil(32/bits) passes per attribute)"},
      {"skip",
       variants::TunableKind::Launch,
       {Value{"off"}, Value{"on"}},
       Value{"off"},
       "radix, onesweep: on first finds the bits that vary between tuples (radix: one kernel, a 32-byte "
       "read-back; onesweep: its histograms read back) and runs only the passes whose digit varies; off runs "
       "every pass"},
      relation_grid(),
  };
  if (has_register_cap(context.device)) {
    tunables.push_back({"max_regs",
                        variants::TunableKind::Compile,
                        {Value{"auto"}, Value{64}},
                        Value{"auto"},
                        "onesweep: auto leaves a work-item's registers to the compiler; 64 caps them at 64 "
                        "(CUDA: asks for 65,536 / (local x 64) work-groups per multiprocessor, "
                        "__launch_bounds__; NVIDIA's OpenCL: -cl-nv-maxrregcount=64)"});
  }
  const std::uint64_t local_mem = context.device.local_mem;
  const bool ballots = has_warp_ballot(context.device);
  std::vector<variants::Constraint> constraints{
      {"merge has no digits: bits and skip keep their defaults (8, off)",
       [](const variants::Params& p) {
         return !is_merge(p) ||
                (variants::get_int(p, "bits") == 8 && variants::get_string(p, "skip") == "off");
       }},
      {"radix: a tile (local x ept tuples) holds at least 2^bits tuples",
       [](const variants::Params& p) {
         return is_merge(p) || variants::get_int(p, "local") * variants::get_int(p, "ept") >=
                                   (1 << variants::get_int(p, "bits"));
       }},
      {"a tile holds at most 2048 tuples (radix), 8192 (onesweep) or 1024 (merge: whole tuples staged in "
       "local memory)",
       [](const variants::Params& p) {
         const auto tile =
             static_cast<std::uint64_t>(variants::get_int(p, "local") * variants::get_int(p, "ept"));
         return tile <= (is_merge(p) ? kMergeMaxTile : is_onesweep(p) ? kOnesweepMaxTile : kRadixMaxTile);
       }},
      {"ept 16 for onesweep only",
       [](const variants::Params& p) { return is_onesweep(p) || variants::get_int(p, "ept") <= 8; }},
      {"onesweep: local >= 2^bits (a work-item per digit)",
       [](const variants::Params& p) {
         return !is_onesweep(p) || variants::get_int(p, "local") >= (1 << variants::get_int(p, "bits"));
       }},
      {"max_regs for onesweep only",
       [](const variants::Params& p) { return is_onesweep(p) || max_regs_of(p) == 0; }},
      {"impl=cub runs CUB's radix or merge sort (CUB's radix sort is its Onesweep)",
       [](const variants::Params& p) { return !is_vendor(p) || !is_onesweep(p); }},
      {"the tile's local arrays must fit the device's local memory",
       [local_mem, ballots](const variants::Params& p) {
         return local_mem == 0 || local_bytes(p, ballots) <= local_mem;
       }},
  };
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device,
                     "DeviceRadixSort::SortKeys (algorithm=radix) or DeviceMergeSort::StableSortKeysCopy "
                     "(merge) over whole tuples or the key alone (by=key)",
                     tunables, inactive, {"algorithm"});
  return variants::Space("ra_sort", std::move(tunables), std::move(constraints), std::move(inactive));
}

Defines RaSortOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return RaSortVariant(params, device).defines;
}

DeviceFootprint RaSortOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t image = spec.rows() * (1 + relation_values(spec)) * 4;
  // Both input layouts, the output, the scratch buffer, the digit counts and their offsets.
  return {4 * image + 2 * max_counts(spec.rows()) * 4 + spec.rows() / 8 + 64, image};
}

std::unique_ptr<PreparedRun> RaSortOperator::prepare(Engine& engine,
                                                     const datasets::WorkloadSpec& spec) const {
  return std::make_unique<SortRun>(engine, spec);
}

std::unique_ptr<BoundRun> RaSortOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  std::map<std::string, std::string> query = binding.query;
  const BoundRelation relation = bound_relation(name(), *binding.inputs[0], binding.rows[0], query);
  const std::uint32_t keys = sort_key_words(query, relation.width);
  const nlohmann::json call_query =
      keys < relation.width ? nlohmann::json{{"by", "key"}} : nlohmann::json::object();
  return std::make_unique<SortBound>(engine, relation, relation_call_class(*this, relation, call_query),
                                     keys);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_sort(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaSortOperator>());
}

}  // namespace varex::operators
