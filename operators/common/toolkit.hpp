#pragma once
// The floor operators stand on: the harness's toolkit (Operator, PreparedRun, Engine, kernel sequences,
// outputs). Operators live in varex::operators, above the harness: the harness includes nothing of theirs
// and finds them through the registry the binary installs. Each names the harness pieces it uses: these,
// which every operator does, here; an output, a primitive or a kernel sequence where it includes one.
#include "harness/operators/operator.hpp"

namespace varex::operators {
// The operator contract (harness/operators/operator.hpp).
using harness::Binding;
using harness::BoundRun;
using harness::Collected;
using harness::ContractBuffers;
using harness::ContractCounter;
using harness::ContractDecl;
using harness::DeviceFootprint;
using harness::ExecutionTimes;
using harness::FlagDecl;
using harness::InputDecl;
using harness::Operator;
using harness::OperatorCommand;
using harness::OutputKind;
using harness::PreparedRun;
using harness::QueryKeyDecl;
using harness::WorkloadDecl;
using harness::WorkloadOptions;
// The device (harness/engine.hpp, harness/buffers.hpp).
using harness::CompileInfo;
using harness::Define;
using harness::Defines;
using harness::DeviceBuffer;
using harness::Engine;
using harness::EventPtr;
using harness::HostBuffer;
using harness::KernelArg;
using harness::LaunchError;
using harness::LaunchShape;
using harness::Program;
}  // namespace varex::operators
