// Ocelot's range selection (document 000, sec. 2.2.1 and 3.1), producing a bitmap: bit r%8 of byte r/8
// is set when row r qualifies. The host folds the predicate's flags into an inclusive range [lo, hi]
// (an empty range is lo > hi) plus a negation bit. Same defines and semantics as
// kernels/opencl/selection.cl (SEL_OVERFLOW, EPT, VEC); VEC is at most 4 (16-byte loads). For EPT < 8
// the bits of 32/EPT neighbouring lanes are merged with warp shuffles into one 32-bit word, which needs
// the block size to be a multiple of 32 (the space guarantees it).

#if EPT == 32
typedef unsigned int chunk_t;
#elif EPT == 16
typedef unsigned short chunk_t;
#else
typedef unsigned char chunk_t;
#endif
#define COMBINE (EPT < 8)
#define FULL_MASK (EPT == 32 ? 0xffffffffu : ((1u << EPT) - 1u))

__device__ __forceinline__ unsigned in_range(int x, int lo, int hi) {
  return (unsigned)((x >= lo) & (x <= hi));
}

// The original loop: every row is checked against n inside the loop.
__device__ __forceinline__ chunk_t eval_checked(const int* __restrict__ in, unsigned base, unsigned n, int lo,
                                                int hi, unsigned neg) {
  unsigned bits = 0;
  for (unsigned i = 0; i < EPT; ++i) {
    const unsigned pos = base + i;
    if (pos < n) bits |= (in_range(in[pos], lo, hi) ^ neg) << i;
  }
  return (chunk_t)bits;
}

// Overflow kernel: a full chunk needs no checks at all.
__device__ __forceinline__ chunk_t eval_full(const int* __restrict__ in, unsigned base, int lo, int hi,
                                             unsigned neg) {
  unsigned bits = 0;
#if VEC == 1
#pragma unroll
  for (unsigned i = 0; i < EPT; ++i) bits |= in_range(in[base + i], lo, hi) << i;
#elif VEC == 2
#pragma unroll
  for (unsigned j = 0; j < EPT; j += 2) {
    const int2 v = *reinterpret_cast<const int2*>(in + base + j);
    bits |= (in_range(v.x, lo, hi) | in_range(v.y, lo, hi) << 1) << j;
  }
#elif VEC == 4
#pragma unroll
  for (unsigned j = 0; j < EPT; j += 4) {
    const int4 v = *reinterpret_cast<const int4*>(in + base + j);
    bits |= (in_range(v.x, lo, hi) | in_range(v.y, lo, hi) << 1 | in_range(v.z, lo, hi) << 2 |
             in_range(v.w, lo, hi) << 3)
            << j;
  }
#else
#error "VEC must be 1, 2 or 4 on CUDA"
#endif
  return (chunk_t)(neg ? bits ^ FULL_MASK : bits);
}

// Overflow kernel: the one partial chunk at the end loops over `count` rows only.
__device__ __forceinline__ chunk_t eval_partial(const int* __restrict__ in, unsigned base, unsigned count,
                                                int lo, int hi, unsigned neg) {
  unsigned bits = 0;
  for (unsigned i = 0; i < count; ++i) bits |= (in_range(in[base + i], lo, hi) ^ neg) << i;
  return (chunk_t)bits;
}

#if COMBINE
// Merges the EPT-bit pieces of 32/EPT neighbouring lanes into one word; the first lane writes it.
// Every lane of the warp must call this.
__device__ __forceinline__ void combine_write(unsigned* out_words, unsigned chunk, chunk_t bits,
                                              unsigned nwords) {
  const unsigned per_word = 32 / EPT;
  unsigned word = (unsigned)bits << ((threadIdx.x % per_word) * EPT);
#pragma unroll
  for (unsigned offset = 1; offset < per_word; offset <<= 1)
    word |= __shfl_xor_sync(0xffffffffu, word, offset);
  if (threadIdx.x % per_word == 0 && chunk / per_word < nwords) out_words[chunk / per_word] = word;
}
#endif

extern "C" __global__ void selection(const int* __restrict__ in, unsigned char* __restrict__ out, unsigned n,
                                     int lo, int hi, unsigned neg) {
  const unsigned nchunks = (n + EPT - 1) / EPT;
#if COMBINE
  const unsigned nwords = (n + 31) / 32;
#endif
#if SEL_OVERFLOW
  // Block-uniform stride loop: with groups_per_cu=cover it runs once.
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned first = blockIdx.x * blockDim.x; first < nchunks; first += stride) {
    const unsigned chunk = first + threadIdx.x;
    chunk_t bits = 0;
    if (chunk < nchunks) {
      const unsigned base = chunk * EPT;
      const unsigned count = min((unsigned)EPT, n - base);
      bits = count == EPT ? eval_full(in, base, lo, hi, neg) : eval_partial(in, base, count, lo, hi, neg);
    }
#if COMBINE
    combine_write(reinterpret_cast<unsigned*>(out), chunk, bits, nwords);
#else
    if (chunk < nchunks) reinterpret_cast<chunk_t*>(out)[chunk] = bits;
#endif
  }
#else
  const unsigned chunk = blockIdx.x * blockDim.x + threadIdx.x;
  const chunk_t bits = eval_checked(in, chunk * EPT, n, lo, hi, neg);
#if COMBINE
  combine_write(reinterpret_cast<unsigned*>(out), chunk, bits, nwords);
#else
  reinterpret_cast<chunk_t*>(out)[chunk] = bits;
#endif
#endif
}
