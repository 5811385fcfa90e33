#pragma once
// Who runs a session: a process's identity as it is recorded with the sessions it owns, and whether the
// process a recorded identity names still runs.
#include <chrono>
#include <string>

namespace varex {

// "host pid start": the host name, the process id and the process's start time (clock ticks since boot),
// so that a reused pid is not taken for the process that owned a session before.
std::string process_token();

// Whether the process a token names still runs: on this host, by its pid and start time; on another host
// (a database on a shared disk), by its last heartbeat being younger than `lease_seconds`.
bool token_alive(const std::string& token, double seconds_since_heartbeat, double lease_seconds = 60);

// "pid 4242 on node7", for messages.
std::string describe_token(const std::string& token);

// When this process started (its static initialisation): where a command's wall-time budget counts from.
std::chrono::steady_clock::time_point process_started();

}  // namespace varex
