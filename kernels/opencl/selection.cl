// Ocelot's range selection (document 000, sec. 2.2.1 and 3.1), producing a bitmap: bit r%8 of byte r/8
// is set when row r qualifies. The host folds the predicate's flags into an inclusive range [lo, hi]
// (an empty range is lo > hi) plus a negation bit.
//
// Specialised by defines:
//   SEL_OVERFLOW  0: the original kernel, a bounds check per row and an unconditional write;
//                 1: Fett's overflow kernel, the number of valid rows is computed once, surplus
//                    work-items retire, and full chunks take a branch-free (vectorisable) path.
//   EPT           rows per work-item: 1, 2, 4, 8, 16 or 32.
//   VEC           vector width of the loads on the full-chunk path (divides EPT).
//   MAX_LOCAL     the device's largest work-group (sizes the local buffer that combines bits for EPT < 8).
// EPT >= 8 writes whole bytes (uchar/ushort/uint) per work-item. EPT < 8 shares a byte between
// work-items: a work-group gathers its bits in local memory and writes whole 32-bit words, which needs
// local size x EPT to be a multiple of 32 (the space guarantees it).

#if EPT == 32
typedef uint chunk_t;
#elif EPT == 16
typedef ushort chunk_t;
#else
typedef uchar chunk_t;
#endif
#define COMBINE (EPT < 8)

#define PASS(x) ((uint)(((x) >= lo) & ((x) <= hi)) ^ neg)
#define FULL_MASK ((chunk_t)(EPT == 32 ? 0xffffffffu : ((1u << EPT) - 1u)))

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#if VEC > 1
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

// The original loop: every row is checked against n inside the loop.
inline chunk_t eval_checked(__global const int* in, uint base, uint n, int lo, int hi, uint neg) {
  chunk_t bits = 0;
  for (uint i = 0; i < EPT; ++i) {
    const uint pos = base + i;
    if (pos < n) bits |= (chunk_t)(PASS(in[pos]) << i);
  }
  return bits;
}

// Overflow kernel: a full chunk needs no checks at all.
inline chunk_t eval_full(__global const int* in, uint base, int lo, int hi, uint neg) {
  chunk_t bits = 0;
#if VEC == 1
#pragma unroll
  for (uint i = 0; i < EPT; ++i) bits |= (chunk_t)((uint)((in[base + i] >= lo) & (in[base + i] <= hi)) << i);
#else
#pragma unroll
  for (uint j = 0; j < EPT; j += VEC) {
    const vint_t v = VLOAD(0, in + base + j);
    const vuint_t m = CAT(as_uint, VEC)((v >= lo) & (v <= hi)) & WEIGHTS;
    bits |= (chunk_t)(HOR_OR(m) << j);
  }
#endif
  return neg ? (chunk_t)(bits ^ FULL_MASK) : bits;
}

// Overflow kernel: the one partial chunk at the end loops over `count` rows only.
inline chunk_t eval_partial(__global const int* in, uint base, uint count, int lo, int hi, uint neg) {
  chunk_t bits = 0;
  for (uint i = 0; i < count; ++i) bits |= (chunk_t)(PASS(in[base + i]) << i);
  return bits;
}

#if COMBINE
// Gathers the EPT-bit pieces of a work-group into 32-bit words and writes them. `first_chunk` is the
// group's first chunk; every work-item of the group must call this (it has barriers).
inline void combine_write(__local uchar* parts, __global uint* out_words, uint first_chunk, chunk_t bits,
                          uint nwords) {
  const uint lid = get_local_id(0);
  parts[lid] = bits;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint per_word = 32 / EPT;
  if (lid < get_local_size(0) / per_word) {
    uint word = 0;
    for (uint j = 0; j < per_word; ++j) word |= (uint)parts[lid * per_word + j] << (j * EPT);
    const uint index = first_chunk / per_word + lid;
    if (index < nwords) out_words[index] = word;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

__kernel void selection(__global const int* restrict in, __global uchar* restrict out, const uint n,
                        const int lo, const int hi, const uint neg) {
  const uint nchunks = (n + EPT - 1) / EPT;
#if COMBINE
  __local uchar parts[MAX_LOCAL];
  const uint nwords = (n + 31) / 32;
#endif
#if SEL_OVERFLOW
  // Work-group-uniform stride loop: with groups_per_cu=cover it runs once.
  const uint stride = get_global_size(0);
  for (uint first = get_group_id(0) * get_local_size(0); first < nchunks; first += stride) {
    const uint chunk = first + get_local_id(0);
    chunk_t bits = 0;
    if (chunk < nchunks) {
      const uint base = chunk * EPT;
      const uint count = min((uint)EPT, n - base);
      bits = count == EPT ? eval_full(in, base, lo, hi, neg) : eval_partial(in, base, count, lo, hi, neg);
    }
#if COMBINE
    combine_write(parts, (__global uint*)out, first, bits, nwords);
#else
    if (chunk < nchunks) ((__global chunk_t*)out)[chunk] = bits;
#endif
  }
#else
  const uint chunk = get_global_id(0);
  const chunk_t bits = eval_checked(in, chunk * EPT, n, lo, hi, neg);
#if COMBINE
  combine_write(parts, (__global uint*)out, get_group_id(0) * get_local_size(0), bits, nwords);
#else
  ((__global chunk_t*)out)[chunk] = bits;
#endif
#endif
}
