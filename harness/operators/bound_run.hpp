#pragma once
// An operator's kernels on buffers an application owns: what the varex runtime library (runtime/) calls.
// There is no host data and no reference here: the inputs are the caller's device buffers in the layout
// the operator documents (docs/RUNTIME.md), and the result stays on the device, handed over with its rows.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/workload.hpp"
#include "harness/engine.hpp"
#include "harness/operators/operator.hpp"
#include "variants/space.hpp"

namespace varex::harness {

// What a call hands an operator.
struct Binding {
  std::vector<const DeviceBuffer*> inputs;   // one per declared input (WorkloadDecl::inputs), in order
  std::vector<std::uint64_t> rows;           // the rows of each input
  std::map<std::string, std::string> query;  // the query's keys, as `--query key=value` takes them
};

// A byte range of a result that a comparison across variants reads (the runtime's online adaptation checks
// a new variant's first result against the default variant's on the same inputs): compared as it is, or,
// with row_bytes, as rows of that many bytes in no particular order, zipped by row index with the result's
// other such ranges (a join's two row ids, a group's key and aggregates).
struct ResultPart {
  std::size_t buffer = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint32_t row_bytes = 0;
};

// `rows` tuples of `width` 32-bit words in `buffer`: packed (column_stride 0), or column by column
// `column_stride` bytes apart; in the result's order or in none.
std::vector<ResultPart> tuple_parts(std::uint64_t rows, std::uint32_t width, std::uint64_t column_stride,
                                    bool ordered, std::size_t buffer = 0);

// A result left on the device: one buffer or several (columns of a relation, keys and aggregates of groups),
// in the order and layout docs/RUNTIME.md gives for the operator.
struct DeviceResult {
  DeviceResult() = default;
  DeviceResult(OutputKind kind, std::vector<std::unique_ptr<DeviceBuffer>> buffers, std::uint64_t rows)
      : kind(kind), buffers(std::move(buffers)), rows(rows) {}

  OutputKind kind = OutputKind::Bitmap;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::uint64_t rows = 0;  // tuples, pairs or groups; the bits of a bitmap; 1 for a scalar
  // What of the buffers a comparison reads; empty for a bitmap (its rows' bits); none for the rest means the
  // result cannot be compared.
  std::vector<ResultPart> parts;
};

class BoundRun {
 public:
  virtual ~BoundRun() = default;
  // The call's workload class from what the call knows (rows, the query's shape): the profile lookup's key.
  virtual datasets::WorkloadClass workload_class() const = 0;
  // Why a variant cannot run on these buffers (host padding that would read past the caller's buffer, say);
  // empty where it can.
  virtual std::string refuses(const variants::Params&) const { return {}; }
  // Tunables the caller's buffers decide (a relation's layout): the defaults a call falls back to take them.
  virtual std::map<std::string, std::string> fixed() const { return {}; }
  virtual CompileInfo compile(const variants::Params& params) = 0;
  virtual ExecutionTimes execute(const variants::Params& params) = 0;
  // The result of the last execute, handed over: the next execute writes a buffer of its own.
  virtual DeviceResult take_result() = 0;
  // The buffers a kernel of another source uses through the operator's contract for the next execution
  // (as PreparedRun::contract_buffers); nullopt where the operator offers none.
  virtual std::optional<ContractBuffers> contract_buffers() { return std::nullopt; }
};

// Throws UsageError unless `binding` has one buffer and a row count per declared input of `op` and only
// query keys `op` declares.
void check_binding(const Operator& op, const Binding& binding);

}  // namespace varex::harness
