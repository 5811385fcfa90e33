#pragma once
// Where operators come from: every folder operators/<name>/ defines
//   void varex::operators::register_<name>(varex::harness::OperatorRegistry&)
// and the build generates the one list that calls them all (cmake/operator_registry.cmake), so adding an
// operator is adding its folder: no other file changes.
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

// Calls every folder's register function once (generated).
void register_all_operators(OperatorRegistry& registry);

}  // namespace varex::harness
