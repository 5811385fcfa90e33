#include "operators/strings/regex/automaton.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

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
  std::size_t max_states = kMaxNfaStates;
  void check_size() const {
    if (states.size() > max_states) {
      throw UsageError("the pattern is too large: its automaton needs more than " +
                       std::to_string(max_states) + " NFA states");
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
Nfa make_nfa(const Pattern& p, std::size_t max_states) {
  Nfa nfa;
  nfa.max_states = max_states;
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

// Epsilon closures, with the marks kept between calls (a stamp per call instead of clearing them).
class Closure {
 public:
  explicit Closure(const Nfa& nfa) : nfa_(nfa), mark_(nfa.states.size(), 0) {}

  // The states reachable from `set` over epsilon edges, sorted; `^` edges only at the start of the string,
  // `$` only at its end.
  std::vector<int> operator()(std::vector<int> set, bool at_begin, bool at_end) {
    if (++stamp_ == 0) {
      std::fill(mark_.begin(), mark_.end(), 0);
      stamp_ = 1;
    }
    std::size_t kept = 0;
    for (const int s : set) {
      if (mark_[s] != stamp_) {
        mark_[s] = stamp_;
        set[kept++] = s;
      }
    }
    set.resize(kept);
    for (std::size_t i = 0; i < set.size(); ++i) {
      for (const auto& [t, kind] : nfa_.states[set[i]].epsilon) {
        if (mark_[t] == stamp_ || (kind == Nfa::Edge::Begin && !at_begin) ||
            (kind == Nfa::Edge::End && !at_end))
          continue;
        mark_[t] = stamp_;
        set.push_back(t);
      }
    }
    // Sorting costs m log m; reading the marks back in order costs the NFA's size. Long chains of
    // repetitions make closures of thousands of states, where the second is cheaper.
    if (set.size() * 16 < mark_.size()) {
      std::sort(set.begin(), set.end());
    } else {
      set.clear();
      for (std::size_t s = 0; s < mark_.size(); ++s) {
        if (mark_[s] == stamp_) set.push_back(static_cast<int>(s));
      }
    }
    return set;
  }

 private:
  const Nfa& nfa_;
  std::vector<std::uint32_t> mark_;
  std::uint32_t stamp_ = 0;
};

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

[[noreturn]] void too_many_states(std::size_t limit) {
  throw UsageError("the pattern's automaton needs more than " + std::to_string(limit) +
                   " states; simplify it (bounded repetitions of alternatives grow fastest)");
}

// Hopcroft's partition refinement: start from {accepts at the end, does not}, and split blocks by the
// predecessors of a splitter (a block and a byte class) until no splitter is left. A block that is split
// while its splitter waits is replaced there by both halves; otherwise only the smaller half is queued,
// which bounds the work by O(n k log n) for n states and k classes. The result names each state's block,
// numbered in the order of the blocks' first states, so the numbering does not depend on the order of the
// work.
std::vector<std::uint32_t> minimise(const std::vector<std::uint32_t>& next, int nclasses,
                                    const std::vector<bool>& accept_at_end) {
  const std::size_t n = accept_at_end.size(), k = static_cast<std::size_t>(nclasses);
  // Predecessors per (target, class), in one array: from[at[t * k + c] .. at[t * k + c + 1]).
  std::vector<std::uint32_t> at(n * k + 1, 0), from(n * k);
  for (std::size_t e = 0; e < n * k; ++e) ++at[next[e] * k + e % k + 1];
  for (std::size_t i = 0; i < n * k; ++i) at[i + 1] += at[i];
  {
    std::vector<std::uint32_t> fill(at.begin(), at.end() - 1);
    for (std::size_t e = 0; e < n * k; ++e)
      from[fill[next[e] * k + e % k]++] = static_cast<std::uint32_t>(e / k);
  }

  // The partition: `order` lists the states block by block, a block being a range [begin, end) of it.
  // While a splitter is applied, the states it marks move to the front of their block, up to `marked`.
  struct Block {
    std::uint32_t begin, end, marked;
  };
  std::vector<Block> blocks;
  std::vector<std::uint32_t> order(n), where(n), block_of(n);
  {
    std::uint32_t i = 0;
    for (const bool accepting : {false, true}) {
      const std::uint32_t begin = i;
      for (std::size_t s = 0; s < n; ++s) {
        if (accept_at_end[s] != accepting) continue;
        order[i] = static_cast<std::uint32_t>(s);
        where[s] = i++;
        block_of[s] = static_cast<std::uint32_t>(blocks.size());
      }
      if (i > begin) blocks.push_back({begin, i, begin});
    }
  }
  const auto size = [&](std::uint32_t b) { return blocks[b].end - blocks[b].begin; };

  // Splitters waiting, and whether a (block, class) pair waits. Either initial block splits the same way
  // as the other (they are complements), so the smaller one suffices.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work;
  std::vector<bool> waiting(n * k, false);
  const auto enqueue = [&](std::uint32_t b, std::uint32_t c) {
    waiting[b * k + c] = true;
    work.push_back({b, c});
  };
  if (blocks.size() == 2) {
    const std::uint32_t smaller = size(0) <= size(1) ? 0 : 1;
    for (std::uint32_t c = 0; c < k; ++c) enqueue(smaller, c);
  }

  std::vector<std::uint32_t> splitter, touched;
  while (!work.empty()) {
    const auto [a, c] = work.back();
    work.pop_back();
    waiting[a * k + c] = false;
    // A copy: marking reorders the states of the blocks it touches, the splitter's own among them.
    splitter.assign(order.begin() + blocks[a].begin, order.begin() + blocks[a].end);
    for (const std::uint32_t t : splitter) {
      for (std::uint32_t i = at[t * k + c]; i < at[t * k + c + 1]; ++i) {
        const std::uint32_t s = from[i];
        Block& b = blocks[block_of[s]];
        if (where[s] < b.marked) continue;  // marked already
        if (b.marked == b.begin) touched.push_back(block_of[s]);
        const std::uint32_t other = order[b.marked];  // swap s to the end of the marked part
        std::swap(order[where[s]], order[b.marked]);
        where[other] = where[s];
        where[s] = b.marked++;
      }
    }
    for (const std::uint32_t b : touched) {
      if (blocks[b].marked == blocks[b].end) {  // every state moves: no split
        blocks[b].marked = blocks[b].begin;
        continue;
      }
      // The marked states become a block of their own; b keeps the rest.
      const auto fresh = static_cast<std::uint32_t>(blocks.size());
      blocks.push_back({blocks[b].begin, blocks[b].marked, blocks[b].begin});
      blocks[b].begin = blocks[b].marked;
      for (std::uint32_t i = blocks[fresh].begin; i < blocks[fresh].end; ++i) block_of[order[i]] = fresh;
      for (std::uint32_t d = 0; d < k; ++d) {
        if (waiting[b * k + d]) {
          enqueue(fresh, d);
        } else {
          enqueue(size(fresh) <= size(b) ? fresh : b, d);
        }
      }
    }
    touched.clear();
  }

  // Number the blocks by their first states.
  constexpr std::uint32_t kUnnamed = ~std::uint32_t{0};
  std::vector<std::uint32_t> name(blocks.size(), kUnnamed), result(n);
  std::uint32_t names = 0;
  for (std::size_t s = 0; s < n; ++s) {
    std::uint32_t& id = name[block_of[s]];
    if (id == kUnnamed) id = names++;
    result[s] = id;
  }
  return result;
}

}  // namespace

Automaton compile(const Pattern& pattern, const Limits& limits) {
  const Nfa nfa = make_nfa(pattern, limits.nfa_states);
  int nclasses = 0;
  const std::vector<int> byte_class = byte_classes(nfa, &nclasses);
  std::vector<int> representative(nclasses, -1);
  for (int b = 0; b < 256; ++b) {
    if (representative[byte_class[b]] < 0) representative[byte_class[b]] = b;
  }

  // Subset construction over the reachable sets only. The start state is the closure at the start of the
  // string; every later one follows a byte, where `^` no longer holds. The empty set is the dead state.
  // Each set is kept once, in `sets`; `ids` finds it by a hash of its states.
  Closure closure(nfa);
  std::vector<std::vector<int>> sets;
  std::unordered_multimap<std::uint64_t, std::uint32_t> ids;
  std::vector<std::uint32_t> next;  // sets x classes
  const auto id_of = [&](std::vector<int> set) {
    std::uint64_t hash = 0x9e3779b97f4a7c15ULL;
    for (const int s : set) hash = (hash ^ static_cast<std::uint32_t>(s)) * 0x100000001b3ULL;
    for (auto [it, end] = ids.equal_range(hash); it != end; ++it) {
      if (sets[it->second] == set) return it->second;
    }
    if (sets.size() >= 4 * limits.states) too_many_states(limits.states);
    const auto id = static_cast<std::uint32_t>(sets.size());
    ids.emplace(hash, id);
    sets.push_back(std::move(set));
    return id;
  };
  const std::uint32_t initial = id_of(closure({nfa.start}, true, false));
  std::vector<int> moved;
  for (std::size_t d = 0; d < sets.size(); ++d) {
    for (int c = 0; c < nclasses; ++c) {
      moved.clear();
      for (int s : sets[d]) {
        const Nfa::State& st = nfa.states[s];
        if (st.bytes >= 0 && nfa.sets[st.bytes].test(representative[c])) moved.push_back(st.to);
      }
      next.push_back(id_of(moved.empty() ? std::vector<int>{} : closure(moved, false, false)));
    }
  }
  // A string may end in a state when `$` edges from there reach the accepting state: when it holds an NFA
  // state from which plain and `$` edges lead there (found once, backwards from the accepting state).
  std::vector<std::vector<int>> into(nfa.states.size());
  for (std::size_t s = 0; s < nfa.states.size(); ++s) {
    for (const auto& [t, kind] : nfa.states[s].epsilon) {
      if (kind != Nfa::Edge::Begin) into[t].push_back(static_cast<int>(s));
    }
  }
  std::vector<bool> ends(nfa.states.size(), false);
  ends[nfa.accept] = true;
  for (std::vector<int> stack{nfa.accept}; !stack.empty();) {
    const int t = stack.back();
    stack.pop_back();
    for (const int s : into[t]) {
      if (!ends[s]) {
        ends[s] = true;
        stack.push_back(s);
      }
    }
  }
  const std::size_t n = sets.size();
  std::vector<bool> accept_at_end(n);
  for (std::size_t d = 0; d < n; ++d)
    accept_at_end[d] = std::any_of(sets[d].begin(), sets[d].end(), [&](int s) { return ends[s]; });

  const std::vector<std::uint32_t> block = minimise(next, nclasses, accept_at_end);
  const std::uint32_t minimal = *std::max_element(block.begin(), block.end()) + 1;
  if (minimal > limits.states) too_many_states(limits.states);

  Automaton a;
  a.states = minimal;
  a.classes = static_cast<std::uint32_t>(nclasses);
  a.start = block[initial];
  // The empty string is at the start and at the end at once: both kinds of assertion hold.
  a.empty_matches = contains(closure({nfa.start}, true, true), nfa.accept);
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
