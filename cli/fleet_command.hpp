#pragma once
// `varex fleet sweep|tune|status|resume|cancel|merge`: sweeps and tunes spread over a Slurm cluster
// (docs/FLEET.md). The work is in fleet/; this wires it to the command line.
#include <CLI/CLI.hpp>

namespace varex::cli {

// `check_session`: runs `varex KIND ARGS --check` in this process, so that a fleet's flags are refused as
// the sweep or tune would refuse them, before anything is submitted.
using SessionCheck = void (*)(const std::string& kind, const std::vector<std::string>& args);
void add_fleet(CLI::App& app, SessionCheck check_session);

}  // namespace varex::cli
