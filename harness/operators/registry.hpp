#pragma once
// Where the harness finds operators: the binary installs them once at start (varex::operators::install(),
// operators/install.hpp), so the harness, the tuner and the command line name no operator and include
// nothing above them. Every folder operators/<name>/ defines
//   void varex::operators::register_<name>(varex::harness::OperatorRegistry&)
// and the build generates the one function that calls them all (cmake/operator_registry.cmake), so adding
// an operator is adding its folder: no other file changes.
#include <memory>
#include <vector>

#include "harness/operators/operator.hpp"

namespace varex::harness {

class OperatorRegistry {
 public:
  void add(std::unique_ptr<Operator> op) { operators_.push_back(std::move(op)); }
  const std::vector<std::unique_ptr<Operator>>& all() const { return operators_; }

 private:
  std::vector<std::unique_ptr<Operator>> operators_;
};

// Makes `registry`'s operators those that operators() and find_operator() return, for the life of the
// process. Once only: a second call throws std::logic_error.
void install_operators(OperatorRegistry registry);

}  // namespace varex::harness
