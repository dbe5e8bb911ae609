// `gpuparanoia devices` and `gpuparanoia run`: the audit of the devices found.
#pragma once

#include <CLI/CLI.hpp>

namespace gp::cli {

void add_audit_commands(CLI::App& app, int& exit_code);

}  // namespace gp::cli
