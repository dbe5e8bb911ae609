// `gpuparanoia devices` and `gpuparanoia run`: the audit of the devices found.
#pragma once

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

void add_audit_commands(CLI::App& app, int& exit_code);

}  // namespace gp::cli
