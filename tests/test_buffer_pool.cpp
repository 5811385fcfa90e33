// The engine's buffer pool (harness/buffer_pool.hpp) on the OpenCL CPU device: a released buffer is handed
// out again for an allocation of about its size, at the same device address and with its contents usable;
// one too small or too large is not; the pool keeps no more than it was given room for; releasing it frees
// everything; without a pool every allocation is the backend's own.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "harness/buffer_pool.hpp"
#include "support.hpp"

namespace varex::harness {
namespace {

// An engine of its own: the tests' shared one runs without a pool.
std::unique_ptr<Engine> pooled_engine(std::size_t max_cached_bytes) {
  std::unique_ptr<Engine> engine = open_engine(test::cpu_device());
  engine->set_buffer_pool(max_cached_bytes);
  return engine;
}

TEST(BufferPool, AReleasedBufferIsHandedOutAgainForAboutItsSize) {
  auto engine = pooled_engine(1 << 20);
  std::uint64_t first = 0;
  {
    auto a = engine->allocate(4096);
    EXPECT_EQ(a->bytes(), 4096u);
    first = engine->handle(*a);
    EXPECT_EQ(engine->cached_memory_bytes(), 0u);
  }
  EXPECT_EQ(engine->cached_memory_bytes(), 4096u);
  {
    auto b = engine->allocate(4000);  // within a quarter: the same block
    EXPECT_EQ(engine->handle(*b), first);
    EXPECT_EQ(b->bytes(), 4000u);
    EXPECT_EQ(engine->cached_memory_bytes(), 0u);
    // Its contents are the caller's like any buffer's.
    std::vector<std::uint32_t> values(1000);
    std::iota(values.begin(), values.end(), 7u);
    auto host = engine->allocate_host(4000);
    std::copy(values.begin(), values.end(), host->as<std::uint32_t>());
    engine->upload(*b, 0, *host, 4000)->elapsed_ms();
    auto back = engine->allocate_host(4000);
    engine->download(*back, *b, 4000)->elapsed_ms();
    EXPECT_TRUE(std::equal(values.begin(), values.end(), back->as<std::uint32_t>()));
  }
  {
    auto small = engine->allocate(1024);  // the kept block is four times larger: not handed out
    EXPECT_NE(engine->handle(*small), first);
    auto large = engine->allocate(8192);  // nor for a larger one
    EXPECT_NE(engine->handle(*large), first);
    EXPECT_EQ(engine->cached_memory_bytes(), 4096u);
  }
  EXPECT_EQ(engine->cached_memory_bytes(), 4096u + 1024u + 8192u);
  engine->release_cached_memory();
  EXPECT_EQ(engine->cached_memory_bytes(), 0u);
}

TEST(BufferPool, KeepsNoMoreThanItsRoomAndNothingWithoutOne) {
  auto engine = pooled_engine(6000);
  {
    auto a = engine->allocate(4096);
    auto b = engine->allocate(4096);
  }
  EXPECT_EQ(engine->cached_memory_bytes(), 4096u);  // the second did not fit: freed
  engine->set_buffer_pool(0);
  EXPECT_EQ(engine->cached_memory_bytes(), 0u);
  { auto c = engine->allocate(4096); }
  EXPECT_EQ(engine->cached_memory_bytes(), 0u);
}

TEST(BufferPool, BuffersOutlivingThePoolAreFreedNotKept) {
  auto engine = pooled_engine(1 << 20);
  auto kept = engine->allocate(4096);
  engine->set_buffer_pool(1 << 20);  // a new pool: the old one is gone when `kept` is released
  kept.reset();
  EXPECT_EQ(engine->cached_memory_bytes(), 0u);
}

}  // namespace
}  // namespace varex::harness
