#include "harness/regex/automaton.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "base/errors.hpp"

namespace varex::regex {

namespace {

// Thompson NFA: every state has epsilon edges (plain, or the zero-width assertions `^` and `$`) and at
// most one byte edge.
struct Nfa {
  enum class Edge { Plain, Begin, End };
  struct State {
    std::vector<std::pair<int, Edge>> epsilon;
    int bytes = -1;  // index into `sets`, or -1
    int to = -1;
  };
  std::vector<State> states;
  std::vector<ByteSet> sets;
  int start = 0, accept = 0;

  int add() {
    states.emplace_back();
    return static_cast<int>(states.size() - 1);
  }
  void epsilon(int from, int to, Edge kind = Edge::Plain) { states[from].epsilon.push_back({to, kind}); }
  void edge(int from, const ByteSet& s, int to) {
    sets.push_back(s);
    states[from].bytes = static_cast<int>(sets.size() - 1);
    states[from].to = to;
  }
  void check_size() const {
    if (states.size() > kMaxNfaStates) {
      throw UsageError("the pattern is too large: its automaton needs more than " +
                       std::to_string(kMaxNfaStates) + " NFA states");
    }
  }
};

struct Fragment {
  int in, out;
};

Fragment build(Nfa& nfa, const Pattern& p, int index) {
  nfa.check_size();
  const Node& n = p.nodes[index];
  switch (n.kind) {
    case Node::Kind::Empty: {
      const int s = nfa.add();
      return {s, s};
    }
    case Node::Kind::Begin:
    case Node::Kind::End: {
      const int a = nfa.add(), b = nfa.add();
      nfa.epsilon(a, b, n.kind == Node::Kind::Begin ? Nfa::Edge::Begin : Nfa::Edge::End);
      return {a, b};
    }
    case Node::Kind::Bytes: {
      const int a = nfa.add(), b = nfa.add();
      nfa.edge(a, n.bytes, b);
      return {a, b};
    }
    case Node::Kind::Concat: {
      Fragment f = build(nfa, p, n.children[0]);
      for (std::size_t i = 1; i < n.children.size(); ++i) {
        const Fragment g = build(nfa, p, n.children[i]);
        nfa.epsilon(f.out, g.in);
        f.out = g.out;
      }
      return f;
    }
    case Node::Kind::Alternation: {
      const int a = nfa.add(), b = nfa.add();
      for (int child : n.children) {
        const Fragment g = build(nfa, p, child);
        nfa.epsilon(a, g.in);
        nfa.epsilon(g.out, b);
      }
      return {a, b};
    }
    case Node::Kind::Repeat: {
      const int a = nfa.add();
      int tail = a;
      if (n.max < 0) {
        // Unbounded: min - 1 copies in sequence, then one copy that loops back to itself (the min-th; with
        // min 0 it may be skipped). One copy for `+` and `*`, so nested ones (`((x+)+)+`) stay linear in size
        // instead of doubling with every level.
        for (int i = 0; i + 1 < n.min; ++i) {
          const Fragment g = build(nfa, p, n.children[0]);
          nfa.epsilon(tail, g.in);
          tail = g.out;
        }
        const int b = nfa.add();
        const Fragment g = build(nfa, p, n.children[0]);
        nfa.epsilon(tail, g.in);
        nfa.epsilon(g.out, g.in);
        nfa.epsilon(g.out, b);
        if (n.min == 0) nfa.epsilon(tail, b);
        return {a, b};
      }
      // Bounded: min copies in sequence, then (max - min) optional ones.
      for (int i = 0; i < n.min; ++i) {
        const Fragment g = build(nfa, p, n.children[0]);
        nfa.epsilon(tail, g.in);
        tail = g.out;
      }
      const int b = nfa.add();
      for (int i = n.min; i < n.max; ++i) {
        const Fragment g = build(nfa, p, n.children[0]);
        nfa.epsilon(tail, g.in);
        nfa.epsilon(tail, b);
        tail = g.out;
      }
      nfa.epsilon(tail, b);
      return {a, b};
    }
  }
  return {0, 0};
}

// Search semantics: any bytes before the pattern and after it.
Nfa make_nfa(const Pattern& p) {
  Nfa nfa;
  const Fragment body = build(nfa, p, p.root);
  ByteSet any;
  any.set();
  const int s = nfa.add(), e = nfa.add();
  nfa.edge(s, any, s);  // a self loop needs the edge on its own state, and the epsilon beside it
  nfa.epsilon(s, body.in);
  nfa.edge(e, any, e);
  nfa.epsilon(body.out, e);
  nfa.start = s;
  nfa.accept = e;
  return nfa;
}

// The states reachable over epsilon edges; `^` edges only at the start of the string, `$` only at its end.
std::vector<int> closure(const Nfa& nfa, std::vector<int> set, bool at_begin, bool at_end) {
  std::vector<bool> seen(nfa.states.size(), false);
  std::vector<int> stack = set;
  for (int s : set) seen[s] = true;
  while (!stack.empty()) {
    const int s = stack.back();
    stack.pop_back();
    for (const auto& [t, kind] : nfa.states[s].epsilon) {
      if (seen[t] || (kind == Nfa::Edge::Begin && !at_begin) || (kind == Nfa::Edge::End && !at_end)) continue;
      seen[t] = true;
      set.push_back(t);
      stack.push_back(t);
    }
  }
  std::sort(set.begin(), set.end());
  return set;
}

bool contains(const std::vector<int>& set, int state) {
  return std::binary_search(set.begin(), set.end(), state);
}

// Bytes that no edge tells apart share a class.
std::vector<int> byte_classes(const Nfa& nfa, int* count) {
  std::map<std::vector<bool>, int> ids;
  std::vector<int> classes(256);
  for (int b = 0; b < 256; ++b) {
    std::vector<bool> signature(nfa.sets.size());
    for (std::size_t i = 0; i < nfa.sets.size(); ++i) signature[i] = nfa.sets[i].test(b);
    classes[b] = ids.emplace(std::move(signature), static_cast<int>(ids.size())).first->second;
  }
  *count = static_cast<int>(ids.size());
  return classes;
}

[[noreturn]] void too_many_states() {
  throw UsageError("the pattern's automaton needs more than " + std::to_string(kMaxStates) +
                   " states; simplify it (bounded repetitions of alternatives grow fastest)");
}

}  // namespace

Automaton compile(const Pattern& pattern) {
  const Nfa nfa = make_nfa(pattern);
  int nclasses = 0;
  const std::vector<int> byte_class = byte_classes(nfa, &nclasses);
  std::vector<int> representative(nclasses, -1);
  for (int b = 0; b < 256; ++b) {
    if (representative[byte_class[b]] < 0) representative[byte_class[b]] = b;
  }

  // Subset construction over the reachable sets only. The start state is the closure at the start of the
  // string; every later one follows a byte, where `^` no longer holds. The empty set is the dead state.
  std::map<std::vector<int>, std::uint32_t> ids;
  std::vector<std::vector<int>> sets;
  std::vector<std::uint32_t> next;  // sets x classes
  const auto id_of = [&](std::vector<int> set) {
    const auto [it, added] = ids.emplace(std::move(set), static_cast<std::uint32_t>(sets.size()));
    if (added) {
      if (sets.size() >= 4 * kMaxStates) too_many_states();
      sets.push_back(it->first);
    }
    return it->second;
  };
  const std::uint32_t initial = id_of(closure(nfa, {nfa.start}, true, false));
  for (std::size_t d = 0; d < sets.size(); ++d) {
    for (int c = 0; c < nclasses; ++c) {
      std::vector<int> moved;
      for (int s : sets[d]) {
        const Nfa::State& st = nfa.states[s];
        if (st.bytes >= 0 && nfa.sets[st.bytes].test(representative[c])) moved.push_back(st.to);
      }
      next.push_back(id_of(moved.empty() ? std::vector<int>{} : closure(nfa, moved, false, false)));
    }
  }
  // A string may end in a state when `$` edges from there reach the accepting state.
  const std::size_t n = sets.size();
  std::vector<bool> accept_at_end(n);
  for (std::size_t d = 0; d < n; ++d)
    accept_at_end[d] = contains(closure(nfa, sets[d], false, true), nfa.accept);

  // Moore minimisation: split blocks by acceptance at the end, then by the blocks their transitions reach.
  std::vector<std::uint32_t> block(n);
  for (std::size_t d = 0; d < n; ++d) block[d] = accept_at_end[d] ? 1 : 0;
  for (std::size_t blocks = 0;;) {
    std::map<std::vector<std::uint32_t>, std::uint32_t> signature_ids;
    std::vector<std::uint32_t> refined(n);
    for (std::size_t d = 0; d < n; ++d) {
      std::vector<std::uint32_t> signature{block[d]};
      for (int c = 0; c < nclasses; ++c) signature.push_back(block[next[d * nclasses + c]]);
      refined[d] =
          signature_ids.emplace(std::move(signature), static_cast<std::uint32_t>(signature_ids.size()))
              .first->second;
    }
    block = std::move(refined);
    if (signature_ids.size() == blocks) break;
    blocks = signature_ids.size();
  }
  const std::uint32_t minimal = *std::max_element(block.begin(), block.end()) + 1;
  if (minimal > kMaxStates) too_many_states();

  Automaton a;
  a.states = minimal;
  a.classes = static_cast<std::uint32_t>(nclasses);
  a.start = block[initial];
  // The empty string is at the start and at the end at once: both kinds of assertion hold.
  a.empty_matches = contains(closure(nfa, {nfa.start}, true, true), nfa.accept);
  a.byte_class.resize(256);
  for (int b = 0; b < 256; ++b) a.byte_class[b] = static_cast<std::uint8_t>(byte_class[b]);
  a.next.assign(static_cast<std::size_t>(minimal) * nclasses, 0);
  a.flags.assign(minimal, 0);
  for (std::size_t d = 0; d < n; ++d) {
    for (int c = 0; c < nclasses; ++c) a.next[block[d] * nclasses + c] = block[next[d * nclasses + c]];
    if (accept_at_end[d]) a.flags[block[d]] |= Automaton::kAcceptAtEnd;
  }

  // Dead: no continuation reaches a state that accepts at the end (backwards reachability).
  std::vector<bool> live(minimal, false);
  for (std::uint32_t s = 0; s < minimal; ++s) live[s] = a.flags[s] & Automaton::kAcceptAtEnd;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t s = 0; s < minimal; ++s) {
      if (live[s]) continue;
      for (std::uint32_t c = 0; c < a.classes && !live[s]; ++c) {
        if (live[a.next[s * a.classes + c]]) live[s] = changed = true;
      }
    }
  }
  // Sure: accepts at the end and every byte leads to a sure state (greatest fixpoint).
  std::vector<bool> sure(minimal);
  for (std::uint32_t s = 0; s < minimal; ++s) sure[s] = a.flags[s] & Automaton::kAcceptAtEnd;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t s = 0; s < minimal; ++s) {
      if (!sure[s]) continue;
      for (std::uint32_t c = 0; c < a.classes; ++c) {
        if (!sure[a.next[s * a.classes + c]]) {
          sure[s] = false;
          changed = true;
          break;
        }
      }
    }
  }
  for (std::uint32_t s = 0; s < minimal; ++s) {
    if (!live[s]) a.flags[s] |= Automaton::kDead;
    if (sure[s]) a.flags[s] |= Automaton::kSure;
  }
  return a;
}

bool Automaton::matches(std::string_view text) const {
  if (text.empty()) return empty_matches;
  std::uint32_t s = start;
  for (const char c : text) s = step(s, static_cast<unsigned char>(c));
  return flags[s] & kAcceptAtEnd;
}

std::vector<std::int32_t> Automaton::flat_image() const {
  std::vector<std::int32_t> image(kImageHeader, 0);
  image[0] = static_cast<std::int32_t>(states);
  image[1] = static_cast<std::int32_t>(classes);
  image[2] = static_cast<std::int32_t>(start);
  image[6] = empty_matches ? 1 : 0;
  image[3] = static_cast<std::int32_t>(image.size());
  for (std::uint8_t c : byte_class) image.push_back(c);
  image[4] = static_cast<std::int32_t>(image.size());
  for (std::uint32_t t : next) image.push_back(static_cast<std::int32_t>(t));
  image[5] = static_cast<std::int32_t>(image.size());
  for (std::uint8_t f : flags) image.push_back(f);
  return image;
}

std::vector<std::int32_t> Automaton::table_image() const {
  std::vector<std::int32_t> image(kImageHeader, 0);
  image[0] = static_cast<std::int32_t>(states);
  image[1] = static_cast<std::int32_t>(classes);
  image[2] = static_cast<std::int32_t>(start);
  image[6] = empty_matches ? 1 : 0;
  std::vector<std::int32_t> range_start{0}, ranges;
  for (std::uint32_t s = 0; s < states; ++s) {
    for (int b = 0; b < 256; ++b) {
      const std::uint32_t to = step(s, static_cast<unsigned char>(b));
      if (b == 255 || step(s, static_cast<unsigned char>(b + 1)) != to) {
        ranges.push_back(static_cast<std::int32_t>((static_cast<std::uint32_t>(b) << 16) | to));
      }
    }
    range_start.push_back(static_cast<std::int32_t>(ranges.size()));
  }
  image[3] = static_cast<std::int32_t>(image.size());
  image.insert(image.end(), range_start.begin(), range_start.end());
  image[4] = static_cast<std::int32_t>(image.size());
  image.insert(image.end(), ranges.begin(), ranges.end());
  image[5] = static_cast<std::int32_t>(image.size());
  for (std::uint8_t f : flags) image.push_back(f);
  return image;
}

}  // namespace varex::regex
