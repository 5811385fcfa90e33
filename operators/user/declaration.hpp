#pragma once
// A user operator's declaration: the operator.json of its directory, read and checked once
// (docs/USER-OPERATORS.md is the format). Every mistake is a UsageError of one line that names the file and
// the field; expressions are parsed here, so none fails later for a name it does not know.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/params.hpp"
#include "harness/operators/operator.hpp"
#include "operators/user/expression.hpp"

namespace varex::operators::user {

// 32-bit elements: integers are compared exactly, floats within their output's tolerance.
enum class ElementType { Int32, Uint32, Float32 };

// The kernels' language: OpenCL C over varex's portable header (every device), or CUDA C++ (CUDA devices).
enum class Language { OpenCL, Cuda };

struct TunableDecl {
  std::string name;
  std::vector<Value> values;
  Value default_value;
  bool compile = true;  // a define of the kernel (compile) or a value only its launch reads (launch)
  std::string help;
};

// A workload parameter of the user's own (a flag --NAME with an integer value; `rows` and `seed` are
// always there).
struct ParameterDecl {
  std::string name;
  std::int64_t default_value = 0;
  std::string help;
};

// A buffer of the operator's own: an input, the output, or scratch of its kernels.
struct BufferDecl {
  std::string name;
  ElementType type = ElementType::Int32;
  // Elements: inputs and outputs over the workload's names, scratch over the tunables too.
  Expression count;
  // Inputs: how they are generated (uniform over [low, high], or iota: element i is i), or the file that
  // --NAME-file names instead.
  bool iota = false;
  std::int64_t low = INT32_MIN, high = INT32_MAX;  // integer elements
  double low_real = 0, high_real = 1;              // float32 elements
  // Outputs and scratch: a 32-bit word every element is set to before each run (timed), where the kernels
  // accumulate.
  std::optional<std::uint32_t> clear;
  // float32 outputs: an element verifies where |got - want| <= tolerance * max(1, |want|).
  double tolerance = 0;
};

// An argument of a kernel: a buffer by name, or a scalar computed from the variant and the workload.
struct ArgDecl {
  std::string buffer;               // empty for a scalar
  std::optional<Expression> value;  // a scalar's
  enum class Type { Int, Uint, Long, Ulong } type = Type::Uint;
};

// One kernel of the source, launched in the declaration's order.
struct KernelDecl {
  std::string name;  // the kernel function
  Expression global, local;
  std::vector<ArgDecl> args;
};

// The most arguments a reference function takes.
constexpr std::size_t kMostReferenceArgs = 12;

// The reference of an operator's own workload: a command that reads the inputs and writes the expected
// outputs, or a function of a shared library called with the inputs' and outputs' host memory and integers.
struct ReferenceDecl {
  std::vector<std::string> command;
  std::string library;        // relative to the operator's directory
  std::string function;       // int FUNCTION(ARGS...): 0 when it wrote the outputs
  std::vector<ArgDecl> args;  // buffers (pointers) and expressions over the workload (int64_t)
};

struct DefineDecl {
  std::string name;
  Expression value;  // over the tunables
};

// The built-in operators whose contract a declaration may name: each one's buffers and scalars.
using Contracts = std::map<std::string, harness::ContractDecl>;

struct Declaration {
  std::filesystem::path dir;
  std::string name, description;
  std::vector<TunableDecl> tunables;
  std::vector<Expression> constraints;  // over the tunables
  std::vector<DefineDecl> defines;      // beyond the compile-time tunables

  // The workload: a built-in operator's (its contract: inputs, reference and verification are that
  // operator's, and the kernels read and write its buffers), or the operator's own.
  std::string contract;                       // the built-in operator; empty: its own workload
  std::vector<std::string> contract_buffers;  // the contract's buffers, by name
  std::vector<ParameterDecl> parameters;      // its own: beyond rows and seed
  std::vector<BufferDecl> inputs;
  std::vector<BufferDecl> outputs;  // at least one
  ReferenceDecl reference;

  std::vector<BufferDecl> scratch;  // the kernels' own buffers, either way
  std::string source_file;          // relative to the operator's directory
  std::string source_text;          // its contents
  Language language = Language::OpenCL;
  std::vector<KernelDecl> kernels;  // at least one

  // The workload's names: rows and the parameters, or the contract's scalars.
  std::vector<std::string> workload_names;
  // The names expressions read, in the order their values come: the tunables, then the workload's names.
  std::vector<std::string> names() const;
  std::size_t first_workload_name() const { return tunables.size(); }
};

// Reads DIR/operator.json and the kernel source it names. UsageError: "DIR/operator.json: WHAT".
Declaration read_declaration(const std::filesystem::path& dir, const Contracts& contracts);
// The same from the text of an operator.json (the kernel still read from `dir`), for the fuzzers.
Declaration parse_declaration(std::string_view text, const std::filesystem::path& dir,
                              const Contracts& contracts);

}  // namespace varex::operators::user
