// `gpuparanoia check --against RESULT.json`: whether a device still computes as a result recorded
// (audit/health_check.hpp), in bounded time; exit 0 when it does, 1 when it does not.
#pragma once

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

void add_check_command(CLI::App& app, int& exit_code);

}  // namespace gp::cli
