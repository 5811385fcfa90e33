// Ocelot's range selection (document 000, sec. 2.2.1 and 3.1), producing a bitmap: bit r%8 of byte r/8
// is set when row r qualifies. The host folds the predicate's flags into an inclusive range [lo, hi]
// (an empty range is lo > hi) plus a negation bit. One source for OpenCL and CUDA
// (kernels/common/portable.h).
//
// Specialised by defines:
//   SEL_OVERFLOW  0: the original kernel, a bounds check per row and an unconditional write;
//                 1: Fett's overflow kernel, the number of valid rows is computed once, surplus
//                    work-items retire, and full chunks take a branch-free (vectorisable) path.
//   EPT           rows per work-item: 1, 2, 4, 8, 16 or 32.
//   VEC           vector width of the loads on the full-chunk path (divides EPT); at most 4 on CUDA
//                 (16-byte loads).
//   MAX_LOCAL     the device's largest work-group (sizes the local buffer that combines bits for EPT < 8).
// EPT >= 8 writes whole bytes (uchar/ushort/uint) per work-item. EPT < 8 shares a byte between
// work-items, whose bits are merged into whole 32-bit words: on OpenCL a work-group gathers them in local
// memory, which needs local size x EPT to be a multiple of 32; on CUDA 32/EPT neighbouring lanes merge
// them with warp shuffles, which needs the block size to be a multiple of 32 (the space guarantees both).

#include "common/portable.h"

#if EPT == 32
typedef uint chunk_t;
#elif EPT == 16
typedef ushort chunk_t;
#else
typedef uchar chunk_t;
#endif
#define COMBINE (EPT < 8)

#define IN_RANGE(x) ((uint)(((x) >= lo) & ((x) <= hi)))
#define PASS(x) (IN_RANGE(x) ^ neg)
#define FULL_MASK (EPT == 32 ? 0xffffffffu : ((1u << EPT) - 1u))

#if VEC > 1 && VAREX_OPENCL
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
typedef CAT(int, VEC) vint_t;
typedef CAT(uint, VEC) vuint_t;
#define VLOAD CAT(vload, VEC)
#if VEC == 2
#define WEIGHTS ((vuint_t)(1u, 2u))
#define HOR_OR(w) ((w).s0 | (w).s1)
#elif VEC == 4
#define WEIGHTS ((vuint_t)(1u, 2u, 4u, 8u))
#define HOR_OR(w) ((w).s0 | (w).s1 | (w).s2 | (w).s3)
#elif VEC == 8
#define WEIGHTS ((vuint_t)(1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u))
#define HOR_OR(w) ((w).s0 | (w).s1 | (w).s2 | (w).s3 | (w).s4 | (w).s5 | (w).s6 | (w).s7)
#elif VEC == 16
#define WEIGHTS \
  ((vuint_t)(1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u, 256u, 512u, 1024u, 2048u, 4096u, 8192u, 16384u, 32768u))
#define HOR_OR(w)                                                                                     \
  ((w).s0 | (w).s1 | (w).s2 | (w).s3 | (w).s4 | (w).s5 | (w).s6 | (w).s7 | (w).s8 | (w).s9 | (w).sa | \
   (w).sb | (w).sc | (w).sd | (w).se | (w).sf)
#endif
#endif
#if VEC > 4 && VAREX_CUDA
#error "VEC must be 1, 2 or 4 on CUDA"
#endif

// The original loop: every row is checked against n inside the loop.
FUNC chunk_t eval_checked(GLOBAL const int* RESTRICT in, uint base, uint n, int lo, int hi, uint neg) {
  uint bits = 0;
  for (uint i = 0; i < EPT; ++i) {
    const uint pos = base + i;
    if (pos < n) bits |= PASS(in[pos]) << i;
  }
  return (chunk_t)bits;
}

// Overflow kernel: a full chunk needs no checks at all.
FUNC chunk_t eval_full(GLOBAL const int* RESTRICT in, uint base, int lo, int hi, uint neg) {
  uint bits = 0;
#if VEC == 1
  PRAGMA_UNROLL for (uint i = 0; i < EPT; ++i) bits |= IN_RANGE(in[base + i]) << i;
#elif VAREX_CUDA && VEC == 2
  PRAGMA_UNROLL for (uint j = 0; j < EPT; j += 2) {
    const int2 v = *(const int2*)(in + base + j);
    bits |= (IN_RANGE(v.x) | IN_RANGE(v.y) << 1) << j;
  }
#elif VAREX_CUDA && VEC == 4
  PRAGMA_UNROLL for (uint j = 0; j < EPT; j += 4) {
    const int4 v = *(const int4*)(in + base + j);
    bits |= (IN_RANGE(v.x) | IN_RANGE(v.y) << 1 | IN_RANGE(v.z) << 2 | IN_RANGE(v.w) << 3) << j;
  }
#else
  PRAGMA_UNROLL for (uint j = 0; j < EPT; j += VEC) {
    const vint_t v = VLOAD(0, in + base + j);
    const vuint_t m = CAT(as_uint, VEC)((v >= lo) & (v <= hi)) & WEIGHTS;
    bits |= HOR_OR(m) << j;
  }
#endif
  return (chunk_t)(neg ? bits ^ FULL_MASK : bits);
}

// Overflow kernel: the one partial chunk at the end loops over `count` rows only.
FUNC chunk_t eval_partial(GLOBAL const int* RESTRICT in, uint base, uint count, int lo, int hi, uint neg) {
  uint bits = 0;
  for (uint i = 0; i < count; ++i) bits |= PASS(in[base + i]) << i;
  return (chunk_t)bits;
}

// The bits of rows at or past `valid` (the caller's rows; under host padding the kernel reads n > valid
// rows) are 0: the bitmap's bits past its rows are 0, as every bitmap's are.
FUNC chunk_t only_valid(chunk_t bits, uint base, uint valid) {
  if (base + EPT <= valid) return bits;
  return base >= valid ? (chunk_t)0 : (chunk_t)(bits & ((1u << (valid - base)) - 1u));
}

#if COMBINE && VAREX_CUDA
// Merges the EPT-bit pieces of 32/EPT neighbouring lanes into one word; the first lane writes it.
// Every lane of the warp must call this.
FUNC void combine_write(uint* out_words, uint chunk, chunk_t bits, uint nwords) {
  const uint per_word = 32 / EPT;
  uint word = (uint)bits << ((lid() % per_word) * EPT);
  PRAGMA_UNROLL for (uint offset = 1; offset < per_word; offset <<= 1) word |=
      __shfl_xor_sync(0xffffffffu, word, offset);
  if (lid() % per_word == 0 && chunk / per_word < nwords) out_words[chunk / per_word] = word;
}
#define COMBINE_WRITE(out_words, group_first, chunk, bits, nwords) \
  combine_write(out_words, chunk, bits, nwords)
#elif COMBINE
// Gathers the EPT-bit pieces of a work-group into 32-bit words and writes them. `first_chunk` is the
// group's first chunk; every work-item of the group must call this (it has barriers).
FUNC void combine_write(LOCAL uchar* parts, GLOBAL uint* out_words, uint first_chunk, chunk_t bits,
                        uint nwords) {
  const uint l = lid();
  parts[l] = bits;
  LOCAL_BARRIER();
  const uint per_word = 32 / EPT;
  if (l < lsize() / per_word) {
    uint word = 0;
    for (uint j = 0; j < per_word; ++j) word |= (uint)parts[l * per_word + j] << (j * EPT);
    const uint index = first_chunk / per_word + l;
    if (index < nwords) out_words[index] = word;
  }
  LOCAL_BARRIER();
}
#define COMBINE_WRITE(out_words, group_first, chunk, bits, nwords) \
  combine_write(parts, out_words, group_first, bits, nwords)
#endif

KERNEL void selection(GLOBAL const int* RESTRICT in, GLOBAL uchar* RESTRICT out, const uint n,
                      const uint valid, const int lo, const int hi, const uint neg) {
  const uint nchunks = (n + EPT - 1) / EPT;
  const uint nwords = (n + 31) / 32;
#if COMBINE
#if VAREX_OPENCL
  LOCAL_ARRAY uchar parts[MAX_LOCAL];
#endif
  // Whole words are written; the chunks past the rows contribute zero bits.
  const uint written_chunks = nchunks;
#else
  // Chunks of 8 or 16 rows are written one by one: the last word's chunks past the rows are written too
  // (as 0), so that no bit of it is left as the buffer held it.
  const uint written_chunks = nwords * (32 / EPT);
#endif
#if SEL_OVERFLOW
  // Work-group-uniform stride loop: with groups_per_cu=cover it runs once.
  const uint stride = gsize();
  for (uint first = group_id() * lsize(); first < written_chunks; first += stride) {
    const uint chunk = first + lid();
    chunk_t bits = 0;
    if (chunk < nchunks) {
      const uint base = chunk * EPT;
      const uint count = min((uint)EPT, n - base);
      bits = count == EPT ? eval_full(in, base, lo, hi, neg) : eval_partial(in, base, count, lo, hi, neg);
      bits = only_valid(bits, base, valid);
    }
#if COMBINE
    COMBINE_WRITE((GLOBAL uint*)out, first, chunk, bits, nwords);
#else
    if (chunk < written_chunks) ((GLOBAL chunk_t*)out)[chunk] = bits;
#endif
  }
#else
  const uint chunk = gid();
  const chunk_t bits = only_valid(eval_checked(in, chunk * EPT, n, lo, hi, neg), chunk * EPT, valid);
#if COMBINE
  COMBINE_WRITE((GLOBAL uint*)out, group_id() * lsize(), chunk, bits, nwords);
#else
  ((GLOBAL chunk_t*)out)[chunk] = bits;
  // The last word's chunks that no work-item of the grid writes: the last chunk's work-item zeroes them.
  if (chunk + 1 == nchunks) {
    for (uint c = max(nchunks, gsize()); c < written_chunks; ++c) ((GLOBAL chunk_t*)out)[c] = 0;
  }
#endif
#endif
}
