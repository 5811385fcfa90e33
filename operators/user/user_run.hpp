#pragma once
// A user operator's workload on a device: its inputs generated and uploaded, its reference computed by the
// user's command, its kernel launched as the declaration says for each variant.
#include <memory>

#include "operators/user/user_operator.hpp"

namespace varex::operators::user {

std::unique_ptr<PreparedRun> make_user_run(const UserOperator& op, Engine& engine,
                                           const datasets::WorkloadSpec& spec);
// The runtime library's run of it on an application's buffers (UserOperator::bind).
std::unique_ptr<BoundRun> make_user_bound(const UserOperator& op, Engine& engine, const Binding& binding);

}  // namespace varex::operators::user
