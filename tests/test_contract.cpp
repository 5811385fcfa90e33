// The contract every operator keeps, checked once for all of them (the registry's list): a foreign flag or
// query key is refused naming what the operator takes; a poisoned output never verifies; a generated
// workload of one row, of sizes that are not multiples of 8, 32 or a local size, verifies with the default
// variant, checked in full and by the device's digest alike; an empty workload is refused as a usage error or
// runs and verifies. The compile-time variants building with NVRTC are
// Cuda/CudaCompile.CompileVariantsBuildWithNvrtc (test_cuda.cpp).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/operator.hpp"
#include "tests/support.hpp"

namespace varex::harness {
namespace {

class Contract : public testing::TestWithParam<std::string> {
 protected:
  const Operator& op() const { return find_operator(GetParam()); }

  datasets::WorkloadSpec generated(std::uint64_t rows) const {
    WorkloadOptions options;
    options.flags["rows"] = std::to_string(rows);
    return op().workload(options);
  }

  // The default variant's result, checked in full on the host; the check by the device's digest must agree.
  Collected run_default(const datasets::WorkloadSpec& spec) const {
    auto run = op().prepare(test::cpu_engine(), spec);
    const auto params = op().space({test::cpu_device(), spec.rows()}).defaults();
    run->poison();
    run->execute(params);
    const Collected on_device = run->collect(Check::Device);
    EXPECT_EQ(run->collect(Check::Host).checked, Check::Host);
    const Collected c = run->collect();
    EXPECT_EQ(on_device.verified, c.verified) << spec.describe();
    if (on_device.verified) {
      EXPECT_EQ(on_device.digest, c.digest) << spec.describe();
    }
    return c;
  }
};

TEST_P(Contract, DeclaresItsWorkload) {
  const WorkloadDecl d = op().declaration();
  EXPECT_FALSE(d.inputs.empty());
  std::set<std::string> names;
  for (const FlagDecl& f : d.flags) {
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_TRUE(names.insert(f.name).second) << "--" << f.name << " declared twice";
  }
  EXPECT_TRUE(names.count("rows")) << "every operator generates workloads of a chosen size";
  for (const QueryKeyDecl& q : d.query) EXPECT_FALSE(q.help.empty()) << q.key;
}

// An operator declares its scale keys with its flags (FlagDecl::scale); its workloads' classes carry each
// with its kind, and no scale key goes without one.
TEST_P(Contract, TheClassesScaleKeysAreTheDeclaredOnesWithTheirKinds) {
  const datasets::WorkloadClass c = op().workload_class(generated(1000));
  std::set<std::string> declared{"rows"};
  for (const datasets::ScaleKey& k : op().scale_keys()) declared.insert(k.name);
  for (const auto& [key, value] : c.scale.items()) {
    EXPECT_TRUE(c.kinds.contains(key)) << key;
    EXPECT_TRUE(declared.count(key)) << key << " is a scale key its operator does not declare";
  }
  EXPECT_EQ(c.kinds.value("rows", ""), "count");
}

TEST_P(Contract, AForeignFlagOrQueryKeyIsRefusedNamingWhatItTakes) {
  std::set<std::string> own;
  for (const FlagDecl& f : op().declaration().flags) own.insert(f.name);
  int foreign = 0;
  for (const Operator* other : operators()) {
    for (const FlagDecl& f : other->declaration().flags) {
      if (own.count(f.name)) continue;
      WorkloadOptions options;
      options.flags[f.name] = "1";
      ++foreign;
      try {
        check_declared(op(), options);
        ADD_FAILURE() << "--" << f.name << " was accepted by " << op().name();
      } catch (const UsageError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("--" + f.name + " is not a flag of " + op().name()), std::string::npos) << what;
        for (const std::string& name : own) EXPECT_NE(what.find("--" + name), std::string::npos) << what;
      }
    }
  }
  EXPECT_GT(foreign, 0) << "no other operator has a flag this one lacks";
  WorkloadOptions options;
  options.query["no_such_key"] = "1";
  EXPECT_THROW(check_declared(op(), options), UsageError);
}

TEST_P(Contract, APoisonedOutputNeverVerifies) {
  const auto spec = generated(1000);
  auto run = op().prepare(test::cpu_engine(), spec);
  const auto params = op().space({test::cpu_device(), spec.rows()}).defaults();
  run->poison();
  run->execute(params);
  ASSERT_TRUE(run->collect().verified);
  ASSERT_TRUE(run->collect(Check::Device).verified);
  run->poison();  // as if the kernels had written nothing
  EXPECT_FALSE(run->collect(Check::Device).verified);
  const Collected c = run->collect();
  EXPECT_FALSE(c.verified);
  EXPECT_FALSE(c.mismatch.empty());
}

TEST_P(Contract, OneRowAndAwkwardSizesVerify) {
  for (const std::uint64_t rows : {1, 7, 33, 1000, 4099}) {
    const auto spec = generated(rows);
    const Collected c = run_default(spec);
    EXPECT_TRUE(c.verified) << rows << " rows: " << c.mismatch;
    EXPECT_EQ(c.digest, op().prepare(test::cpu_engine(), spec)->reference()) << rows << " rows";
  }
}

TEST_P(Contract, AnEmptyWorkloadIsRefusedOrVerifies) {
  datasets::WorkloadSpec spec;
  try {
    spec = generated(0);
  } catch (const UsageError&) {
    return;  // refused before anything runs: fine
  }
  EXPECT_TRUE(run_default(spec).verified);
}

// On an application's buffers (the runtime library): a binding without the declared inputs, with a null
// buffer or with a query key the operator does not declare is a UsageError, before any buffer is read; so is
// every binding of an operator that does not run there.
TEST_P(Contract, ABindingWithoutItsInputsIsAUsageError) {
  Engine& engine = test::cpu_engine();
  const std::size_t declared = op().declaration().inputs.size();
  const auto buffer = engine.allocate(64);
  EXPECT_THROW(op().bind(engine, Binding{}), UsageError);
  Binding null;
  null.inputs.assign(declared, nullptr);
  null.rows.assign(declared, 1);
  EXPECT_THROW(op().bind(engine, null), UsageError);
  Binding one_short;
  one_short.inputs.assign(declared > 0 ? declared - 1 : 1, buffer.get());
  one_short.rows.assign(one_short.inputs.size(), 1);
  if (declared != one_short.inputs.size()) {
    EXPECT_THROW(op().bind(engine, one_short), UsageError);
  }
  Binding foreign;
  foreign.inputs.assign(declared, buffer.get());
  foreign.rows.assign(declared, 1);
  foreign.query["no_such_key"] = "1";
  EXPECT_THROW(op().bind(engine, foreign), UsageError);
}

// The small instance a short tune searches divides what the operator's flags declare as input sizes
// (FlagDecl::sizes_input) and keeps the other counts: both relations of a join, the group-by's rows but not
// its groups; the hash join keeps its build side on purpose (its own small_instance).
TEST(SmallInstance, DividesTheDeclaredInputSizesAndKeepsTheOtherCounts) {
  const auto small = [](const std::string& name, const std::map<std::string, std::string>& flags) {
    WorkloadOptions options;
    options.flags = flags;
    const auto s = find_operator(name).small_instance(find_operator(name).workload(options), 4);
    EXPECT_TRUE(s) << name;
    return s ? s->params : nlohmann::json();
  };
  const nlohmann::json join = small("ra_join", {{"rows", "4096"}, {"rows2", "8192"}});
  EXPECT_EQ(join.at("rows"), 1024);
  EXPECT_EQ(join.at("rows2"), 2048);
  const nlohmann::json groups = small("groupby", {{"rows", "4096"}, {"distinct", "16"}});
  EXPECT_EQ(groups.at("rows"), 1024);
  EXPECT_EQ(groups.at("distinct"), 16);
  const nlohmann::json hash = small("hashjoin", {{"rows", "4096"}, {"rows2", "8192"}});
  EXPECT_EQ(hash.at("rows"), 4096);
  EXPECT_EQ(hash.at("rows2"), 2048);
}

INSTANTIATE_TEST_SUITE_P(EveryOperator, Contract, testing::ValuesIn(test::operator_names()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace varex::harness
