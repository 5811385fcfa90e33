// The check by the device's digest (Check::Device): for every output kind a right result verifies and a
// wrong one does not — a changed, dropped, duplicated or moved row, a swapped pair where order counts —
// on real device buffers (PoCL). Then the measurement protocol with a test-only operator run whose variants
// leave right or wrong results: a wrong variant is caught by the digest and named by the full comparison,
// and a variant far slower than the cut-off is timed once.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "harness/measure.hpp"
#include "harness/outputs/bitmap.hpp"
#include "harness/outputs/groups.hpp"
#include "harness/outputs/pairs.hpp"
#include "harness/outputs/rows.hpp"
#include "harness/primitives/digest.hpp"
#include "tests/support.hpp"

namespace varex::harness {
namespace {

Engine& engine() {
  return test::cpu_engine();
}

void upload(DeviceBuffer& buffer, const void* data, std::size_t bytes, std::size_t offset = 0) {
  auto host = engine().allocate_host(std::max<std::size_t>(bytes, 1));
  std::memcpy(host->data(), data, bytes);
  if (bytes) engine().upload(buffer, offset, *host, bytes)->elapsed_ms();
}

template <typename T>
void upload(DeviceBuffer& buffer, const std::vector<T>& values, std::size_t offset = 0) {
  upload(buffer, values.data(), values.size() * sizeof(T), offset);
}

TEST(DeviceDigest, MatchesTheHostDigestAndSeesOrder) {
  const std::vector<std::uint32_t> words{5, 0, 0xFFFFFFFFu, 17, 17, 3};
  auto buffer = engine().allocate(words.size() * 4);
  upload(*buffer, words);
  primitives::DeviceDigest digest(engine());
  std::uint64_t ordered = 0, free = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    ordered += primitives::HostDigest::add(primitives::HostDigest::start(i + 1), words[i]);
    free += primitives::HostDigest::add(primitives::HostDigest::start(0), words[i]);
  }
  EXPECT_EQ(digest.columns({{buffer.get(), 1}}, words.size(), true), ordered);
  EXPECT_EQ(digest.columns({{buffer.get(), 1}}, words.size(), false), free);
  EXPECT_EQ(digest.columns({{buffer.get(), 1}}, 0, true), 0u);
  std::vector<std::uint32_t> swapped = words;
  std::swap(swapped[0], swapped[3]);
  upload(*buffer, swapped);
  EXPECT_NE(digest.columns({{buffer.get(), 1}}, words.size(), true), ordered);
  EXPECT_EQ(digest.columns({{buffer.get(), 1}}, words.size(), false), free);
}

TEST(DeviceDigest, BitmapWordsAndTheLastPartialWord) {
  const std::uint64_t rows = 100;  // three whole words and four bits
  std::vector<std::uint8_t> bits((rows + 7) / 8);
  for (std::uint64_t r = 0; r < rows; r += 3) bits[r / 8] |= static_cast<std::uint8_t>(1u << (r % 8));
  auto check = [&](std::vector<std::uint8_t> got) {
    BitmapOutput out(engine(), rows, bits);
    got.resize(out.words() * 4);
    upload(out.buffer(), got);
    return out.check_on_device();
  };
  const Collected right = check(bits);
  EXPECT_TRUE(right.verified);
  EXPECT_EQ(right.digest, bitmap_digest(bits.data(), rows));
  for (const std::uint64_t row : {std::uint64_t{1}, std::uint64_t{40}, std::uint64_t{99}}) {
    auto flipped = bits;
    flipped[row / 8] ^= static_cast<std::uint8_t>(1u << (row % 8));
    EXPECT_FALSE(check(flipped).verified) << row;
  }
  auto slack = bits;
  slack.resize(16, 0);
  slack[12] |= 0xF0;  // rows 100 to 103 do not exist
  EXPECT_TRUE(check(slack).verified);
}

// Tuples (a, b) in AoS or SoA, in order or as a multiset.
Collected check_rows(const std::vector<std::uint32_t>& reference, std::vector<std::uint32_t> got,
                     RowOrder order, TupleLayout layout = TupleLayout::Aos) {
  RowsOutput out(engine(), 2, reference.size() / 2, reference, /*counted=*/true, order);
  out.set_layout(layout);
  const std::uint64_t count = got.size() / 2;
  if (layout == TupleLayout::Soa) {
    std::vector<std::uint32_t> columns(2 * out.capacity(), 0);
    for (std::uint64_t i = 0; i < count; ++i) {
      columns[i] = got[2 * i];
      columns[out.capacity() + i] = got[2 * i + 1];
    }
    got = columns;
  }
  upload(out.tuple_buffer(), got);
  upload(out.count_buffer(), std::vector<std::uint32_t>{static_cast<std::uint32_t>(count)});
  return out.check_on_device();
}

TEST(DeviceDigest, RowsInOrder) {
  const std::vector<std::uint32_t> ref{1, 10, 2, 20, 3, 30, 4, 40};
  for (const TupleLayout layout : {TupleLayout::Aos, TupleLayout::Soa}) {
    EXPECT_TRUE(check_rows(ref, ref, RowOrder::defined(), layout).verified);
    EXPECT_FALSE(
        check_rows(ref, {2, 20, 1, 10, 3, 30, 4, 40}, RowOrder::defined(), layout).verified);    // moved
    EXPECT_FALSE(check_rows(ref, {1, 10, 2, 20, 3, 30}, RowOrder::defined(), layout).verified);  // dropped
    EXPECT_FALSE(
        check_rows(ref, {1, 10, 2, 20, 3, 31, 4, 40}, RowOrder::defined(), layout).verified);  // changed
  }
}

TEST(DeviceDigest, RowsAsAMultiset) {
  const std::vector<std::uint32_t> ref{1, 10, 2, 20, 3, 30, 4, 40};
  const RowOrder any = RowOrder::any();
  EXPECT_TRUE(check_rows(ref, {4, 40, 2, 20, 1, 10, 3, 30}, any).verified);
  EXPECT_FALSE(check_rows(ref, {4, 40, 2, 20, 1, 10, 1, 10}, any).verified);         // dropped and duplicated
  EXPECT_FALSE(check_rows(ref, {4, 40, 20, 2, 1, 10, 3, 30}, any).verified);         // attributes swapped
  EXPECT_FALSE(check_rows(ref, {4, 40, 2, 20, 1, 10, 3, 30, 3, 30}, any).verified);  // one more
}

TEST(DeviceDigest, PairsAsAMultiset) {
  // build {7, 7, 3} joined with probe {3, 7, 9, 7}: (2,0) (0,1) (1,1) (0,3) (1,3).
  PairsReference reference;
  reference.set_begin = {0, 1, 3};
  reference.rows = {2, 0, 1};
  reference.right_set = {0, 1, PairsReference::kNone, 1};
  reference.pairs = 5;
  auto check = [&](const std::vector<std::uint32_t>& left, const std::vector<std::uint32_t>& right) {
    PairsOutput out(engine(), reference);
    upload(out.left_buffer(), left);
    upload(out.right_buffer(), right);
    out.set_count(left.size());
    return out.check_on_device();
  };
  EXPECT_TRUE(check({1, 2, 0, 1, 0}, {3, 0, 3, 1, 1}).verified);
  EXPECT_FALSE(check({1, 2, 0, 1, 1}, {3, 0, 3, 1, 3}).verified);  // (0,1) dropped, (1,3) duplicated
  EXPECT_FALSE(check({1, 0, 0, 1, 0}, {3, 2, 3, 1, 1}).verified);  // (2,0) swapped into (0,2)
  EXPECT_FALSE(check({1, 2, 0, 1}, {3, 0, 3, 1}).verified);        // one missing
}

TEST(DeviceDigest, Groups) {
  // Rows' keys 5, 9, 5, -2; values 1, 2, 3, 4.
  const std::vector<std::int32_t> row_keys{5, 9, 5, -2};
  GroupReference reference;
  reference.groups = {{-2, 1, 4, 4, 4}, {5, 2, 4, 1, 3}, {9, 1, 2, 2, 2}};
  auto host_keys = engine().allocate_host(16);
  std::memcpy(host_keys->data(), row_keys.data(), 16);
  auto device_keys = engine().allocate(16);
  upload(*device_keys, row_keys);
  struct Result {
    std::vector<std::int32_t> keys;
    std::vector<std::uint32_t> counts;
    std::vector<std::int64_t> sums;
    std::vector<std::int32_t> mins, maxs;
    std::vector<std::uint32_t> extents, ids;
  };
  auto check = [&](const Result& r) {
    GroupsOutput out(engine(), reference, *host_keys, 4, 4, 4);
    out.set_device_row_keys(*device_keys);
    upload(out.keys(), r.keys);
    upload(out.counts(), r.counts);
    upload(out.sums(), r.sums);
    upload(out.mins(), r.mins);
    upload(out.maxs(), r.maxs);
    upload(out.extents(), r.extents);
    upload(out.group_ids(), r.ids);
    out.set_count(r.keys.size());
    return out.check_on_device();
  };
  // The groups in another order than the reference's: 9, -2, 5.
  const Result right{{9, -2, 5}, {1, 1, 2}, {2, 4, 4}, {2, 4, 1}, {2, 4, 3}, {1, 3, 2}, {2, 0, 2, 1}};
  EXPECT_TRUE(check(right).verified);
  Result wrong = right;
  wrong.extents[2] = 1;  // row 1 has key 9, not 5
  EXPECT_FALSE(check(wrong).verified);
  wrong = right;
  wrong.ids[2] = 0;  // row 2 (key 5) put in the group of 9
  EXPECT_FALSE(check(wrong).verified);
  wrong = right;
  wrong.ids[3] = 7;  // no such group
  EXPECT_FALSE(check(wrong).verified);
  wrong = right;
  std::swap(wrong.counts[0], wrong.counts[2]);
  EXPECT_FALSE(check(wrong).verified);
  wrong = right;
  wrong.sums[1] += std::int64_t{1} << 32;  // the high word of a 64-bit sum
  EXPECT_FALSE(check(wrong).verified);
}

// A test-only operator run: its "kernel" uploads the result its variant names (`result`: right, swapped,
// duplicated, nothing, or flaky: right the first time, swapped later) into a real output, and its time is the
// variant's `ms`.
class ScriptedRun final : public PreparedRun {
 public:
  ScriptedRun()
      : reference_{1, 10, 2, 20, 3, 30, 4, 40}, out_(engine(), 2, 4, reference_, true, RowOrder::defined()) {}

  double h2d_ms() const override { return 0; }
  void restore_inputs() override {}
  CompileInfo compile(const variants::Params&) override { return {}; }
  void poison() override { out_.poison(); }
  ExecutionTimes execute(const variants::Params& params) override {
    ++executions;
    const std::string result = std::get<std::string>(params.at("result"));
    std::vector<std::uint32_t> got = reference_;
    if (result == "swapped" || (result == "flaky" && executions > 1)) std::swap(got[0], got[2]);
    if (result == "duplicated") std::copy(got.begin(), got.begin() + 2, got.begin() + 6);
    if (result != "nothing") {
      upload(out_.tuple_buffer(), got);
      upload(out_.count_buffer(), std::vector<std::uint32_t>{4});
    }
    return {static_cast<double>(std::get<std::int64_t>(params.at("ms"))), {}};
  }
  Collected collect(Check how) override { return harness::collect(out_, how); }
  Digest reference() const override { return out_.reference(); }
  std::uint64_t bytes_moved() const override { return 64; }
  std::uint64_t working_set_bytes() const override { return UINT64_MAX; }  // never flushed

  int executions = 0;

 private:
  std::vector<std::uint32_t> reference_;
  RowsOutput out_;
};

variants::Params scripted(const std::string& result, std::int64_t ms) {
  return {{"result", variants::Value{result}}, {"ms", variants::Value{ms}}};
}

TEST(MeasureProtocol, AWrongVariantIsCaughtOnTheDeviceAndNamedOnTheHost) {
  MeasureSettings settings;
  settings.check = Check::Device;
  ScriptedRun run;
  const Measurement right = measure(engine(), run, scripted("right", 1), settings, 0);
  ASSERT_TRUE(right.ok()) << right.error;
  EXPECT_EQ(right.checked, Check::Device);
  EXPECT_EQ(right.result, run.reference());
  for (const char* wrong : {"swapped", "duplicated", "nothing"}) {
    const Measurement m = measure(engine(), run, scripted(wrong, 1), settings, 0);
    EXPECT_EQ(m.status, Status::WrongResult) << wrong;
    EXPECT_EQ(m.checked, Check::Host) << wrong;  // the full comparison named it
    EXPECT_NE(m.error.find("tuple"), std::string::npos) << wrong << ": " << m.error;
    EXPECT_TRUE(m.samples_ms.empty()) << wrong;
  }
}

TEST(MeasureProtocol, AVariantSlowerThanTheCutOffIsTimedOnce) {
  MeasureSettings settings;
  settings.cutoff_ms = 10;
  ScriptedRun slow;
  const Measurement cut = measure(engine(), slow, scripted("right", 50), settings, 0);
  ASSERT_TRUE(cut.ok()) << cut.error;
  EXPECT_TRUE(cut.cut_off);
  EXPECT_EQ(cut.samples_ms.size(), 1u);
  EXPECT_EQ(slow.executions, 1);  // the verified run is its one time: no warm-up, no repetition
  EXPECT_EQ(cut.samples_ms.front(), 50);
  ScriptedRun fast;
  const Measurement kept = measure(engine(), fast, scripted("right", 5), settings, 0);
  EXPECT_FALSE(kept.cut_off);
  EXPECT_GE(kept.samples_ms.size(), static_cast<std::size_t>(settings.min_reps));
  // A wrong variant stays wrong, however slow.
  ScriptedRun wrong;
  EXPECT_EQ(measure(engine(), wrong, scripted("swapped", 50), settings, 0).status, Status::WrongResult);
}

TEST(MeasureProtocol, ACandidateFasterThanTheThresholdIsComparedInFullAfterItsTiming) {
  MeasureSettings settings;
  settings.check = Check::Device;
  settings.compare_in_full_below_ms = 10;
  ScriptedRun fast;
  const Measurement compared = measure(engine(), fast, scripted("right", 5), settings, 0);
  ASSERT_TRUE(compared.ok()) << compared.error;
  EXPECT_EQ(compared.checked, Check::Host);
  ScriptedRun slow;
  const Measurement digest_only = measure(engine(), slow, scripted("right", 50), settings, 0);
  ASSERT_TRUE(digest_only.ok()) << digest_only.error;
  EXPECT_EQ(digest_only.checked, Check::Device);
  // A variant whose first result passed (its digest) and whose later ones are wrong is caught and named.
  ScriptedRun flaky;
  const Measurement caught = measure(engine(), flaky, scripted("flaky", 5), settings, 0);
  EXPECT_EQ(caught.status, Status::WrongResult);
  EXPECT_EQ(caught.checked, Check::Host);
  EXPECT_NE(caught.error.find("tuple"), std::string::npos) << caught.error;
}

}  // namespace
}  // namespace varex::harness
