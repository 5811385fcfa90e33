#pragma once
// A Red Fox operator over one relation (document 002): its name is its kernel family; its workload is a
// relation (relation_workload's flags, generated keys `keys` unless --keys says otherwise), half the cache's
// rows by default. An operator adds its query keys, flags of its own and how it reads its query.
#include <string>
#include <vector>

#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {

class RelationOperator : public Operator {
 public:
  RelationOperator(std::string name, std::string description, OutputKind output,
                   datasets::KeyDistribution keys = datasets::KeyDistribution::Uniform)
      : name_(std::move(name)), description_(std::move(description)), output_(output), keys_(keys) {}

  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  std::string kernel_family() const override { return name_; }
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 2; }

 protected:
  virtual std::vector<QueryKeyDecl> query_keys() const { return {}; }
  virtual std::vector<FlagDecl> own_flags() const { return {}; }
  // Query keys that describe an application's buffers in a runtime call (relation_buffer_keys), declared
  // after query_keys() and refused on the command line, where the flags and tunables say it; none by default.
  virtual std::vector<QueryKeyDecl> buffer_keys() const { return {}; }
  // Reads the query into `spec`, the relation's workload (an operator without query keys refuses a query
  // before anything is read, and has nothing to read).
  virtual void read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const;

 private:
  std::string name_;
  std::string description_;
  OutputKind output_;
  datasets::KeyDistribution keys_;
};

}  // namespace varex::operators
