// String selection with lane refill: same defines and semantics as kernels/opencl/strings.cl (MODE,
// LAYOUT, REFILL, THRESHOLD_PCT, UNROLL, LOAD_BYTES, MAX_LOCAL). Here the refill group is the warp, as in
// document 003's appendices A and B: active lanes are counted with __ballot_sync, and
//   BUFFER_REGS  0: the warp's buffer of waiting rows lives in shared memory (32 entries per warp);
//                1: entry i of it lives in lane i's registers and moves with __shfl_sync.
// Lane masks are computed without the listing's 0xffffffff >> (32 - lane), which shifts by 32 for lane 0.

#define ACCEPT_AT_END 1
#define DEAD 2
#define SURE 4
#define FULL_WARP 0xffffffffu

struct Lane {
  unsigned row, cursor, end, state;
  unsigned word;  // LOAD_BYTES 4: the aligned word holding the cursor's byte
};

struct Query {
  const unsigned char* __restrict__ bytes;
  const unsigned* __restrict__ words;  // the same bytes as aligned words (the buffer is padded to 4)
  const int* __restrict__ offsets;
  const unsigned char* __restrict__ needle;
  unsigned needle_length;
  const int* __restrict__ m;
  unsigned classes, start, class_at, next_at, flags_at, empty_matches;
  unsigned* out;
};

__device__ __forceinline__ void emit(const Query& q, unsigned row) {
  atomicOr(&q.out[row >> 5], 1u << (row & 31));
}

__device__ __forceinline__ unsigned next_state(const Query& q, unsigned s, unsigned b) {
#if LAYOUT == 1
  return (unsigned)q.m[q.next_at + s * q.classes + (unsigned)q.m[q.class_at + b]];
#else
  int lo = q.m[q.class_at + s], hi = q.m[q.class_at + s + 1] - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if ((unsigned)(q.m[q.next_at + mid] >> 16) < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (unsigned)(q.m[q.next_at + lo] & 0xffff);
#endif
}

// LOAD_BYTES 4: a lane keeps the word that holds its cursor and loads the next one only when the cursor
// crosses into it. The lanes read different strings, so every load is an access of its own; this makes
// a quarter of them. CUDA devices are little-endian.
__device__ __forceinline__ void prime_word(const Query& q, Lane& l) {
#if LOAD_BYTES == 4
  if (l.cursor & 3) l.word = q.words[l.cursor >> 2];
#endif
}

__device__ __forceinline__ unsigned fetch(const Query& q, Lane& l) {
#if LOAD_BYTES == 4
  if ((l.cursor & 3) == 0) l.word = q.words[l.cursor >> 2];
  return (l.word >> ((l.cursor & 3) * 8)) & 0xffu;
#else
  return q.bytes[l.cursor];
#endif
}

__device__ __forceinline__ bool start_row(const Query& q, Lane& l, unsigned row) {
  l.row = row;
  l.cursor = (unsigned)q.offsets[row];
  l.end = (unsigned)q.offsets[row + 1];
  prime_word(q, l);
  const unsigned length = l.end - l.cursor;
#if MODE == 1 || MODE == 2
  l.state = 0;
#if MODE == 1
  if (length != q.needle_length) return false;
#else
  if (length < q.needle_length) return false;
#endif
  if (q.needle_length == 0) {
    emit(q, row);
    return false;
  }
  if (MODE == 2) l.end = l.cursor + q.needle_length;
  return true;
#else
  if (length == 0) {
    if (q.empty_matches) emit(q, row);
    return false;
  }
  l.state = q.start;
  const unsigned f = (unsigned)q.m[q.flags_at + l.state];
  if (f & (DEAD | SURE)) {
    if (f & SURE) emit(q, row);
    return false;
  }
  return true;
#endif
}

__device__ __forceinline__ bool step(const Query& q, Lane& l) {
  const unsigned b = fetch(q, l);
#if MODE == 1 || MODE == 2
  if (b != q.needle[l.state]) return false;
  ++l.state;
  if (++l.cursor == l.end) {
    emit(q, l.row);
    return false;
  }
  return true;
#else
  l.state = next_state(q, l.state, b);
  ++l.cursor;
  const unsigned f = (unsigned)q.m[q.flags_at + l.state];
  if (f & (DEAD | SURE) || l.cursor == l.end) {
    if ((f & SURE) || (!(f & DEAD) && l.cursor == l.end && (f & ACCEPT_AT_END))) emit(q, l.row);
    return false;
  }
  return true;
#endif
}

__device__ __forceinline__ void advance(const Query& q, Lane& l, bool& active) {
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u) {
    if (active) active = step(q, l);
  }
}

extern "C" __global__ void strings_select(const unsigned char* __restrict__ bytes,
                                          const int* __restrict__ offsets, unsigned rows,
                                          const unsigned char* __restrict__ needle, unsigned needle_length,
                                          const int* __restrict__ machine, unsigned* out) {
  Query q{bytes,
          reinterpret_cast<const unsigned*>(bytes),
          offsets,
          needle,
          needle_length,
          machine,
          (unsigned)machine[1],
          (unsigned)machine[2],
          (unsigned)machine[3],
          (unsigned)machine[4],
          (unsigned)machine[5],
          (unsigned)machine[6],
          out};
  Lane l;
#if !REFILL
  for (unsigned row = blockIdx.x * blockDim.x + threadIdx.x; row < rows; row += gridDim.x * blockDim.x) {
    bool active = start_row(q, l, row);
    while (active) advance(q, l, active);
  }
#else
  const unsigned lane = threadIdx.x & 31;
  const unsigned lower = (1u << lane) - 1u;  // lanes below this one (0 for lane 0)
  const unsigned warps = (gridDim.x * blockDim.x) >> 5;
  const unsigned threshold = max(1u, 32u * THRESHOLD_PCT / 100u);
#if !BUFFER_REGS
  __shared__ unsigned buf_row[MAX_LOCAL], buf_cursor[MAX_LOCAL], buf_end[MAX_LOCAL], buf_state[MAX_LOCAL];
  const unsigned slots = threadIdx.x & ~31u;  // this warp's 32 entries
#else
  Lane held;  // buffer entry `lane` of this warp
#endif
  unsigned buffered = 0;
  for (unsigned base = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 32;; base += warps * 32) {
    const bool fresh = base < rows;
    if (!fresh && buffered == 0) break;
    bool active = fresh && base + lane < rows && start_row(q, l, base + lane);
    const unsigned keep_above = fresh ? threshold : 0;
    const unsigned refill_below = fresh ? threshold : 32;
    unsigned mask = __ballot_sync(FULL_WARP, active);
    unsigned busy = __popc(mask);
    while (buffered + busy > keep_above) {
      if (busy < refill_below && buffered > 0) {
        const unsigned refill = min(32 - busy, buffered);
        const unsigned remaining = buffered - refill;
        const unsigned rank = __popc(~mask & lower);  // idle lanes below this one
        const bool take = !active && rank < refill;
#if !BUFFER_REGS
        if (take) {
          const unsigned i = slots + remaining + rank;
          l.row = buf_row[i];
          l.cursor = buf_cursor[i];
          l.end = buf_end[i];
          l.state = buf_state[i];
          prime_word(q, l);
        }
        __syncwarp();
#else
        const unsigned from = take ? remaining + rank : lane;
        const Lane got{__shfl_sync(FULL_WARP, held.row, from), __shfl_sync(FULL_WARP, held.cursor, from),
                       __shfl_sync(FULL_WARP, held.end, from), __shfl_sync(FULL_WARP, held.state, from)};
        if (take) {
          l = got;
          prime_word(q, l);
        }
#endif
        active = active || take;
        buffered = remaining;
      }
      advance(q, l, active);
      mask = __ballot_sync(FULL_WARP, active);
      busy = __popc(mask);
    }
    if (busy > 0) {
      // Too few to go on: the active rows wait in the buffer while fresh rows come in.
#if !BUFFER_REGS
      if (active) {
        const unsigned i = slots + buffered + __popc(mask & lower);
        buf_row[i] = l.row;
        buf_cursor[i] = l.cursor;
        buf_end[i] = l.end;
        buf_state[i] = l.state;
      }
      __syncwarp();
#else
      // Entry t of the buffer comes from the (t - buffered)-th active lane.
      const bool receive = lane >= buffered && lane < buffered + busy;
      const unsigned from = receive ? __fns(mask, 0, (int)(lane - buffered) + 1) : lane;
      const Lane got{__shfl_sync(FULL_WARP, l.row, from), __shfl_sync(FULL_WARP, l.cursor, from),
                     __shfl_sync(FULL_WARP, l.end, from), __shfl_sync(FULL_WARP, l.state, from)};
      if (receive) held = got;
#endif
      buffered += busy;
    }
  }
#endif
}
