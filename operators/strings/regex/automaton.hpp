#pragma once
// A pattern compiled into a minimal deterministic automaton over bytes, in the two layouts the kernels
// read: flat (a row of byte classes per state, indexed directly) and table (per state the byte ranges
// that lead to each next state, searched by binary search; Ragel's two layouts in document 003, ch. 7).
//
// Construction: Thompson NFA over bytes, with `^` and `$` as zero-width edges → byte classes → subset
// construction → minimisation (Hopcroft). `^` holds only in the start state's closure; whether `$` would let
// the string end in a state is a per-state flag; the empty string, where both hold, has a flag of its own.
#include <cstdint>
#include <string_view>
#include <vector>

#include "operators/strings/regex/pattern.hpp"

namespace varex::regex {

// More states than this is an error: the pattern is refused rather than compiled for ages.
constexpr std::size_t kMaxStates = 4096;
// The NFA that subset construction walks: each DFA state's closure costs up to this many steps, so the
// bound keeps a refused pattern (`a{200}{200}`, found by the fuzzer: 2.7 GB and two minutes) quick.
constexpr std::size_t kMaxNfaStates = 4 * kMaxStates;

// The bounds a compilation runs under. The operators use the defaults; the fuzz target lowers them, as
// RE2's fuzzer lowers its memory budget: the same code paths (refusal included) at a cost per input that
// does not grow with the square of the NFA (subset construction of `x{4000}` alone takes 0.1–0.8 s).
struct Limits {
  std::size_t states = kMaxStates;         // states of the minimal automaton
  std::size_t nfa_states = kMaxNfaStates;  // states of the Thompson NFA
};

struct Automaton {
  enum Flag : std::uint8_t {
    kAcceptAtEnd = 1,  // the string may end here and match
    kDead = 2,         // no continuation matches: the lane can stop, no match
    kSure = 4,         // every continuation matches: the lane can stop, match
  };
  std::uint32_t states = 0;
  std::uint32_t classes = 0;  // byte classes (columns of the flat layout)
  std::uint32_t start = 0;
  bool empty_matches = false;            // whether the empty string matches
  std::vector<std::uint8_t> byte_class;  // 256 entries
  std::vector<std::uint32_t> next;       // states x classes
  std::vector<std::uint8_t> flags;       // per state

  std::uint32_t step(std::uint32_t state, unsigned char byte) const {
    return next[state * classes + byte_class[byte]];
  }
  // Runs a whole string: the reference for the layouts, not for the operators.
  bool matches(std::string_view text) const;

  // Flat layout as the kernels read it: a header, byte classes, the transitions and the flags, as int32.
  std::vector<std::int32_t> flat_image() const;
  // Table layout: the header, per state the start of its ranges, then ranges (last byte << 16 | next
  // state) sorted by last byte and covering 0..255, then the flags.
  std::vector<std::int32_t> table_image() const;
};

// Throws UsageError when the automaton needs more than `limits.states` states (or its NFA more than
// `limits.nfa_states`).
Automaton compile(const Pattern& pattern, const Limits& limits = {});

// Offsets into a machine image: [0] states, [1] classes, [2] start, [3] byte classes or range starts,
// [4] transitions or ranges, [5] flags, [6] whether the empty string matches. The kernels use the same
// positions.
constexpr int kImageHeader = 8;

}  // namespace varex::regex
