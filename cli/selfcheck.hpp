// The model's self-check (`gpuparanoia selfcheck`): the reference model against the host FPU and
// exact host arithmetic, for a user who wants to know that this build's model can be trusted.
#pragma once

#include <cstdint>
#include <ostream>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

struct SelfCheckSummary {
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
};

// Runs every check, printing one line per check (and the first mismatches) to `out`.
// `cases` random cases per (format, op, mode).
SelfCheckSummary run_selfcheck(std::ostream& out, std::uint64_t cases, std::uint64_t seed);

void add_selfcheck_command(CLI::App& app, int& exit_code);

}  // namespace gp::cli
