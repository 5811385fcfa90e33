#pragma once
// The workload flags several operators take, declared once with their usual help text; an operator adds
// its own beside them (FlagDecl{...}) or passes its own wording.
#include <string>

#include "harness/operators/operator.hpp"

namespace varex::harness::flags {

inline FlagDecl input(std::string help = "Read the input from FILE instead of generating it") {
  return {"input", "FILE", std::move(help)};
}
inline FlagDecl rows(std::string help =
                         "Generated rows (an integer or 2^N; default: four times the largest "
                         "device cache)") {
  return {"rows", "N", std::move(help), datasets::ScaleKind::Count, /*sizes_input=*/true};
}
inline FlagDecl seed() {
  return {"seed", "N", "Seed of the generator (default 42)"};
}
inline FlagDecl selectivity(std::string help) {
  return {"selectivity", "X", std::move(help), datasets::ScaleKind::Fraction};
}
inline FlagDecl distinct(std::string help) {
  return {"distinct", "N", std::move(help), datasets::ScaleKind::Count};
}
inline FlagDecl zipf() {
  return {"zipf", "X", "Zipf exponent of the key choice, 0 to 10 (default 0: uniform)",
          datasets::ScaleKind::Fraction};
}

}  // namespace varex::harness::flags
