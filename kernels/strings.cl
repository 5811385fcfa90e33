// String selection with lane refill (document 003, ch. 4-8, appendices A and B): equality, prefix, automata
// (LIKE and regular expressions) and DogQC's LIKE by segments over Arrow string columns (bytes + int32
// offsets). The result is a bitmap, bit r%32 of word r/32 set when row r matches; the host clears it first.
// One source for OpenCL and CUDA (kernels/common/portable.h); the refill loop is each API's own.
//
// Specialised by defines:
//   MODE           1 equality, 2 prefix, 3 automaton, 4 LIKE by segments (DogQC's: the literal runs between
//                  `%` compared byte by byte, `_` any byte; operators/strings/regex/like_segments.hpp has the
//                  image and why the leftmost place of each segment is enough)
//   LAYOUT         automaton layout: 1 flat (byte class, then a row per state), 2 table (binary search
//                  over each state's byte ranges); see operators/strings/regex/automaton.hpp for the image
//   REFILL         0: the naive kernel, a work-item runs its row to the end; 1: lane refill
//   THRESHOLD_PCT  refill when fewer than this share of the refill group's work-items are active
//   UNROLL         bytes each active work-item consumes between two activity checks
//   LOAD_BYTES     1: a load per byte; 4: a work-item keeps the aligned word holding its cursor and loads
//                  the next only when the cursor crosses into it (the bytes buffer is padded to 4)
//   MAX_LOCAL      the device's largest work-group (sizes the refill buffer)
//   BUFFER_REGS    CUDA only: 0: the warp's buffer of waiting rows lives in shared memory (32 entries per
//                  warp); 1: entry i of it lives in lane i's registers and moves with __shfl_sync
// OpenCL 1.2 has no warp vote, so there the refill group is the work-group: active work-items are counted
// with a local atomic between barriers, and buffer slots are handed out by a local atomic counter (the
// order of the slots does not matter, only that they are distinct). On CUDA the refill group is the warp,
// as in document 003's appendices A and B: active lanes are counted with __ballot_sync. Lane masks are
// computed without the listing's 0xffffffff >> (32 - lane), which shifts by 32 for lane 0.

#include "common/portable.h"

#define ACCEPT_AT_END 1
#define DEAD 2
#define SURE 4

// LIKE by segments: the image's flags, the token of `_`, and how a token is packed (like_segments.hpp).
#define SEG_ANCHORED_START 1
#define SEG_ANCHORED_END 2
#define SEG_HAS_PERCENT 4
#define ANY_BYTE 256
#define SEG_TOKEN_BITS 0x1ffu
#define SEG_LAST_TOKEN 0x200u
#define SEG_NUMBER_SHIFT 10

typedef struct {
  uint row;
  uint cursor;  // next byte of the string
  uint end;     // one past its last byte
  uint state;   // automaton state, the position in the needle, or the pattern's token (MODE 4)
  uint word;    // LOAD_BYTES 4: the aligned word holding the cursor's byte
} Lane;

typedef struct {
  GLOBAL const uchar* RESTRICT bytes;
  GLOBAL const uint* RESTRICT words;  // the same bytes as aligned words (the buffer is padded to 4)
  GLOBAL const int* RESTRICT offsets;
  GLOBAL const uchar* RESTRICT needle;
  uint needle_length;
  GLOBAL const int* RESTRICT m;  // automaton image, or the segments' image (MODE 4)
#if MODE == 4
  uint tokens, segments, seg_flags, starts_at, tokens_at;
#else
  uint classes, start, class_at, next_at, flags_at, empty_matches;
#endif
  GLOBAL uint* out;
} Query;

FUNC void emit(const Query* q, uint row) {
  atomic_or_u32(&q->out[row >> 5], 1u << (row & 31));
}

#if MODE == 3
FUNC uint next_state(const Query* q, uint s, uint b) {
#if LAYOUT == 1
  return (uint)q->m[q->next_at + s * q->classes + (uint)q->m[q->class_at + b]];
#else
  int lo = q->m[q->class_at + s], hi = q->m[q->class_at + s + 1] - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if ((uint)(q->m[q->next_at + mid] >> 16) < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (uint)(q->m[q->next_at + lo] & 0xffff);
#endif
}
#endif

// Work-items read different strings, so every load is an access of its own: LOAD_BYTES 4 makes a
// quarter of them.
FUNC void prime_word(const Query* q, Lane* l) {
#if LOAD_BYTES == 4
  if (l->cursor & 3) l->word = q->words[l->cursor >> 2];
#endif
}

FUNC uint fetch(const Query* q, Lane* l) {
#if LOAD_BYTES == 4
  if ((l->cursor & 3) == 0) l->word = q->words[l->cursor >> 2];
#if VAREX_CUDA || defined(__ENDIAN_LITTLE__)  // CUDA devices are little-endian
  return (l->word >> ((l->cursor & 3) * 8)) & 0xffu;
#else
  return (l->word >> ((3 - (l->cursor & 3)) * 8)) & 0xffu;
#endif
#else
  return q->bytes[l->cursor];
#endif
}

#if MODE == 4
// Moves to segment k, whose tokens start at `first`: false when the rest of the string is shorter than the
// tokens left. The last segment of a pattern that does not end with `%` is placed at the string's end.
FUNC bool enter_segment(const Query* q, Lane* l, uint k) {
  const uint first = (uint)q->m[q->starts_at + k];
  if (l->end - l->cursor < q->tokens - first) return false;
  l->state = first;
  if (k + 1 == q->segments && (q->seg_flags & SEG_ANCHORED_END)) {
    l->cursor = l->end - (q->tokens - first);
    prime_word(q, l);
  }
  return true;
}
#endif

// Starts a row; false when it is decided at once (its match, if any, already written).
FUNC bool start_row(const Query* q, Lane* l, uint row) {
  l->row = row;
  l->cursor = (uint)q->offsets[row];
  l->end = (uint)q->offsets[row + 1];
  prime_word(q, l);
  const uint length = l->end - l->cursor;
#if MODE == 1 || MODE == 2
  l->state = 0;
#if MODE == 1
  if (length != q->needle_length) return false;
#else
  if (length < q->needle_length) return false;
#endif
  if (q->needle_length == 0) {
    emit(q, row);
    return false;
  }
  if (MODE == 2) l->end = l->cursor + q->needle_length;  // only the prefix is compared
  return true;
#elif MODE == 4
  if (q->segments == 0) {  // "" matches the empty string, any run of `%` every string
    if ((q->seg_flags & SEG_HAS_PERCENT) || length == 0) emit(q, row);
    return false;
  }
  if (length < q->tokens || (!(q->seg_flags & SEG_HAS_PERCENT) && length != q->tokens)) return false;
  return enter_segment(q, l, 0);
#else
  if (length == 0) {
    if (q->empty_matches) emit(q, row);
    return false;
  }
  l->state = q->start;
  const uint f = (uint)q->m[q->flags_at + l->state];
  if (f & (DEAD | SURE)) {
    if (f & SURE) emit(q, row);
    return false;
  }
  return true;
#endif
}

// Consumes one byte of an active row; false when the row is decided (its match, if any, written).
FUNC bool step(const Query* q, Lane* l) {
  const uint b = fetch(q, l);
#if MODE == 1 || MODE == 2
  if (b != q->needle[l->state]) return false;
  ++l->state;
  if (++l->cursor == l->end) {
    emit(q, l->row);
    return false;
  }
  return true;
#elif MODE == 4
  const uint t = l->state;
  const uint packed = (uint)q->m[q->tokens_at + t];  // one load a byte: the token, whether last, its segment
  const uint token = packed & SEG_TOKEN_BITS;
  const uint k = packed >> SEG_NUMBER_SHIFT;
  if (token == ANY_BYTE || token == b) {
    ++l->cursor;
    l->state = t + 1;
    if (!(packed & SEG_LAST_TOKEN)) return true;
    if (k + 1 < q->segments) return enter_segment(q, l, k + 1);
    emit(q, l->row);  // the last segment, at the end when the pattern does not end with `%`
    return false;
  }
  // A segment placed at the start or the end has one place; any other tries the next byte.
  if ((k == 0 && (q->seg_flags & SEG_ANCHORED_START)) ||
      (k + 1 == q->segments && (q->seg_flags & SEG_ANCHORED_END)))
    return false;
  const uint first = (uint)q->m[q->starts_at + k];
  l->cursor = l->cursor - (t - first) + 1;
  l->state = first;
  if (l->end - l->cursor < q->tokens - first) return false;
  prime_word(q, l);
  return true;
#else
  l->state = next_state(q, l->state, b);
  ++l->cursor;
  const uint f = (uint)q->m[q->flags_at + l->state];
  if (f & (DEAD | SURE) || l->cursor == l->end) {
    if ((f & SURE) || (!(f & DEAD) && l->cursor == l->end && (f & ACCEPT_AT_END))) emit(q, l->row);
    return false;
  }
  return true;
#endif
}

FUNC void advance(const Query* q, Lane* l, bool* active) {
  PRAGMA_UNROLL for (uint u = 0; u < UNROLL; ++u) {
    if (*active) *active = step(q, l);
  }
}

#if REFILL && VAREX_OPENCL
// How many work-items of the group are active (every work-item must call it).
FUNC uint group_count(bool active, volatile LOCAL uint* counter) {
  LOCAL_BARRIER();
  if (lid() == 0) *counter = 0;
  LOCAL_BARRIER();
  if (active) atomic_inc(counter);
  LOCAL_BARRIER();
  return *counter;
}
#endif

KERNEL void strings_select(GLOBAL const uchar* RESTRICT bytes, GLOBAL const int* RESTRICT offsets,
                           const uint rows, GLOBAL const uchar* RESTRICT needle, const uint needle_length,
                           GLOBAL const int* RESTRICT machine, GLOBAL uint* out) {
  Query q;
  q.bytes = bytes;
  q.words = (GLOBAL const uint*)bytes;
  q.offsets = offsets;
  q.needle = needle;
  q.needle_length = needle_length;
  q.m = machine;
#if MODE == 4
  q.tokens = (uint)machine[0];
  q.segments = (uint)machine[1];
  q.seg_flags = (uint)machine[2];
  q.starts_at = (uint)machine[3];
  q.tokens_at = (uint)machine[4];
#else
  q.classes = (uint)machine[1];
  q.start = (uint)machine[2];
  q.class_at = (uint)machine[3];
  q.next_at = (uint)machine[4];
  q.flags_at = (uint)machine[5];
  q.empty_matches = (uint)machine[6];
#endif
  q.out = out;
  Lane l;
#if !REFILL
  for (uint row = gid(); row < rows; row += gsize()) {
    bool active = start_row(&q, &l, row);
    while (active) advance(&q, &l, &active);
  }
#elif VAREX_OPENCL
  LOCAL_ARRAY uint buf_row[MAX_LOCAL], buf_cursor[MAX_LOCAL], buf_end[MAX_LOCAL], buf_state[MAX_LOCAL];
  volatile LOCAL_ARRAY uint counter, taken;
  const uint width = lsize();
  const uint self = lid();
  const uint threshold = max(1u, width * THRESHOLD_PCT / 100u);
  uint buffered = 0;
  for (uint base = group_id() * width;; base += num_groups() * width) {
    const bool fresh = base < rows;  // uniform over the work-group
    if (!fresh && buffered == 0) break;
    bool active = fresh && base + self < rows && start_row(&q, &l, base + self);
    // Without fresh rows the buffer drains: work goes on while anything is left.
    const uint keep_above = fresh ? threshold : 0;
    const uint refill_below = fresh ? threshold : width;
    uint busy = group_count(active, &counter);
    while (buffered + busy > keep_above) {
      if (busy < refill_below && buffered > 0) {
        // Idle work-items take rows from the end of the buffer.
        const uint refill = min(width - busy, buffered);
        const uint remaining = buffered - refill;
        if (self == 0) taken = 0;
        LOCAL_BARRIER();
        if (!active) {
          const uint rank = atomic_inc(&taken);
          if (rank < refill) {
            const uint i = remaining + rank;
            l.row = buf_row[i];
            l.cursor = buf_cursor[i];
            l.end = buf_end[i];
            l.state = buf_state[i];
            prime_word(&q, &l);
            active = true;
          }
        }
        buffered = remaining;
        LOCAL_BARRIER();
      }
      advance(&q, &l, &active);
      busy = group_count(active, &counter);
    }
    if (busy > 0) {
      // Too few to go on: the active rows wait in the buffer while fresh rows come in.
      if (self == 0) taken = 0;
      LOCAL_BARRIER();
      if (active) {
        const uint i = buffered + atomic_inc(&taken);
        buf_row[i] = l.row;
        buf_cursor[i] = l.cursor;
        buf_end[i] = l.end;
        buf_state[i] = l.state;
      }
      buffered += busy;
      LOCAL_BARRIER();
    }
  }
#else  // REFILL on CUDA: the warp refills its lanes
#define FULL_WARP 0xffffffffu
  const uint lane = lid() & 31;
  const uint lower = (1u << lane) - 1u;  // lanes below this one (0 for lane 0)
  const uint warps = gsize() >> 5;
  const uint threshold = max(1u, 32u * THRESHOLD_PCT / 100u);
#if !BUFFER_REGS
  LOCAL_ARRAY uint buf_row[MAX_LOCAL], buf_cursor[MAX_LOCAL], buf_end[MAX_LOCAL], buf_state[MAX_LOCAL];
  const uint slots = lid() & ~31u;  // this warp's 32 entries
#else
  Lane held;  // buffer entry `lane` of this warp
#endif
  uint buffered = 0;
  for (uint base = (gid() >> 5) * 32;; base += warps * 32) {
    const bool fresh = base < rows;
    if (!fresh && buffered == 0) break;
    bool active = fresh && base + lane < rows && start_row(&q, &l, base + lane);
    const uint keep_above = fresh ? threshold : 0;
    const uint refill_below = fresh ? threshold : 32;
    uint mask = __ballot_sync(FULL_WARP, active);
    uint busy = __popc(mask);
    while (buffered + busy > keep_above) {
      if (busy < refill_below && buffered > 0) {
        const uint refill = min(32 - busy, buffered);
        const uint remaining = buffered - refill;
        const uint rank = __popc(~mask & lower);  // idle lanes below this one
        const bool take = !active && rank < refill;
#if !BUFFER_REGS
        if (take) {
          const uint i = slots + remaining + rank;
          l.row = buf_row[i];
          l.cursor = buf_cursor[i];
          l.end = buf_end[i];
          l.state = buf_state[i];
          prime_word(&q, &l);
        }
        __syncwarp();
#else
        const uint from = take ? remaining + rank : lane;
        const Lane got{__shfl_sync(FULL_WARP, held.row, from), __shfl_sync(FULL_WARP, held.cursor, from),
                       __shfl_sync(FULL_WARP, held.end, from), __shfl_sync(FULL_WARP, held.state, from)};
        if (take) {
          l = got;
          prime_word(&q, &l);
        }
#endif
        active = active || take;
        buffered = remaining;
      }
      advance(&q, &l, &active);
      mask = __ballot_sync(FULL_WARP, active);
      busy = __popc(mask);
    }
    if (busy > 0) {
      // Too few to go on: the active rows wait in the buffer while fresh rows come in.
#if !BUFFER_REGS
      if (active) {
        const uint i = slots + buffered + __popc(mask & lower);
        buf_row[i] = l.row;
        buf_cursor[i] = l.cursor;
        buf_end[i] = l.end;
        buf_state[i] = l.state;
      }
      __syncwarp();
#else
      // Entry t of the buffer comes from the (t - buffered)-th active lane.
      const bool receive = lane >= buffered && lane < buffered + busy;
      const uint from = receive ? __fns(mask, 0, (int)(lane - buffered) + 1) : lane;
      const Lane got{__shfl_sync(FULL_WARP, l.row, from), __shfl_sync(FULL_WARP, l.cursor, from),
                     __shfl_sync(FULL_WARP, l.end, from), __shfl_sync(FULL_WARP, l.state, from)};
      if (receive) held = got;
#endif
      buffered += busy;
    }
  }
#endif
}
