// Red Fox PRODUCT (document 002, sec. 3.2.3, alg. 5): every pair of a left and a right tuple. Output tuple
// o = i * m + j (left-major) is (left key, right key, the left values, the right values), so that its
// first two attributes are the two keys.
//
// Tiles: a work-group takes EPT left tuples (a left block) and lsize() right tuples (a right tile); work-item
// lid() holds right tuple j in registers and writes out[i * m + j] for the block's EPT left tuples, so
// neighbouring work-items write neighbouring outputs. Work-groups stride over the blocks x tiles (a fixed
// grid) or cover them once.
//   EPT          left tuples per work-group (the register tiling of the output)
//   STAGE_LOCAL  1: the left block is staged in local memory first (the source); 0: every work-item reads it
//                from global memory (all read the same words: the cache broadcasts them)
//   RIGHT_MAJOR  the order the tiles are taken in: 0 left-major (consecutive work-groups write consecutive
//                output), 1 right-major (consecutive work-groups take the next left block of one right tile)
//   VECTOR_STORE 1: an AoS output tuple is written with 16-byte stores (8-byte ones for 6 words), 0: a word
//                at a time (SoA writes words in any case)
//   LAYOUT_SOA   as the other Red Fox kernels, input and output
// `width` (words per input tuple, 2 to 4) is an argument: the workload decides it, not the variant.
#include "common/portable.h"

#define MAX_WIDTH 4

#if VECTOR_STORE && !LAYOUT_SOA
// Stores `words` (4, 6 or 8) words of `tuple` at out[o * words ...]: aligned, since o * words * 4 is a
// multiple of the store's size.
FUNC void store_tuple(GLOBAL uint* RESTRICT out, ulong o, const uint* tuple, uint words) {
  GLOBAL uint* at = out + o * words;
  if (words % 4 == 0) {
    for (uint c = 0; c < words; c += 4) {
#if VAREX_CUDA
      *(GLOBAL uint4*)(at + c) = make_uint4(tuple[c], tuple[c + 1], tuple[c + 2], tuple[c + 3]);
#else
      vstore4((uint4)(tuple[c], tuple[c + 1], tuple[c + 2], tuple[c + 3]), 0, at + c);
#endif
    }
  } else {
    for (uint c = 0; c < words; c += 2) {
#if VAREX_CUDA
      *(GLOBAL uint2*)(at + c) = make_uint2(tuple[c], tuple[c + 1]);
#else
      vstore2((uint2)(tuple[c], tuple[c + 1]), 0, at + c);
#endif
    }
  }
}
#endif

FUNC uint word_at(CONSTANT_PTR uint* RESTRICT in, uint i, uint c, uint width, uint capacity) {
#if LAYOUT_SOA
  return in[(ulong)c * capacity + i];
#else
  return in[(ulong)i * width + c];
#endif
}

// One tile (a left block of EPT tuples against right tuple j of this work-item) for tuples of W words, W a
// constant in each expansion (2, 3, 4): the tuple's arrays stay in registers and its loops unroll, where a
// `width` known only at run time put them in (slow) local memory on the stack.
#define PRODUCT_TILE(W)                                                                           \
  {                                                                                               \
    uint mine[W];                                                                                 \
    PRAGMA_UNROLL for (uint c = 0; c < W; ++c) mine[c] = word_at(right, j, c, W, right_capacity); \
    for (uint k = 0; k < EPT; ++k) {                                                              \
      const uint i = i0 + k;                                                                      \
      if (i >= n) break;                                                                          \
      const ulong o = (ulong)i * m + j;                                                           \
      uint tuple[2 * W]; /* (left key, right key, the left values, the right values) */           \
      PRAGMA_UNROLL for (uint c = 0; c < W; ++c) {                                                \
        const uint theirs = LEFT_WORD(k, i, c, W);                                                \
        tuple[c == 0 ? 0 : 1 + c] = theirs;                                                       \
      }                                                                                           \
      tuple[1] = mine[0];                                                                         \
      PRAGMA_UNROLL for (uint c = 1; c < W; ++c) tuple[W + c] = mine[c];                          \
      STORE_TUPLE(o, tuple, 2 * W);                                                               \
    }                                                                                             \
  }

#if STAGE_LOCAL
#define LEFT_WORD(k, i, c, W) block[(k) * (W) + (c)]
#else
#define LEFT_WORD(k, i, c, W) word_at(left, i, c, W, left_capacity)
#endif

#if VECTOR_STORE && !LAYOUT_SOA
#define STORE_TUPLE(o, tuple, words) store_tuple(out, o, tuple, words)
#elif LAYOUT_SOA
#define STORE_TUPLE(o, tuple, words) \
  PRAGMA_UNROLL for (uint c = 0; c < (words); ++c) out[c * out_capacity + (o)] = tuple[c];
#else
#define STORE_TUPLE(o, tuple, words) \
  PRAGMA_UNROLL for (uint c = 0; c < (words); ++c) out[(o) * (words) + c] = tuple[c];
#endif

KERNEL void ra_product(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                       GLOBAL uint* RESTRICT out, uint n, uint m, uint width, uint left_capacity,
                       uint right_capacity, ulong out_capacity) {
#if STAGE_LOCAL
  LOCAL_ARRAY uint block[EPT * MAX_WIDTH];
#endif
  const uint blocks = (n + EPT - 1) / EPT;
  const uint tiles = (m + lsize() - 1) / lsize();
  const ulong total = (ulong)blocks * tiles;
  for (ulong t = group_id(); t < total; t += num_groups()) {
#if RIGHT_MAJOR
    const uint b = (uint)(t % blocks), r = (uint)(t / blocks);
#else
    const uint b = (uint)(t / tiles), r = (uint)(t % tiles);
#endif
    const uint i0 = b * EPT;
    const uint j = r * lsize() + lid();
#if STAGE_LOCAL
    LOCAL_BARRIER();  // the previous tile's readers are done with the block
    for (uint w = lid(); w < EPT * width; w += lsize()) {
      const uint i = i0 + w / width;
      block[w] = i < n ? word_at(left, i, w % width, width, left_capacity) : 0;
    }
    LOCAL_BARRIER();
#endif
    if (j >= m) continue;
    if (width == 2) {
      PRODUCT_TILE(2)
    } else if (width == 3) {
      PRODUCT_TILE(3)
    } else {
      PRODUCT_TILE(4)
    }
  }
}
