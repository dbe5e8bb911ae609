// `gpuparanoia compare A.json B.json`: what differs between two audits (audit/compare.hpp).
// Exit status as diff's: 0 no difference, 1 differences, 2 an unreadable file.
#pragma once

#include <CLI/CLI.hpp>

namespace gp::cli {

void add_compare_command(CLI::App& app, int& exit_code);

}  // namespace gp::cli
