// `gpuparanoia error`: what a unit's arithmetic costs (README, Error analysis). The unit is stated as
// `model dot` states it (--instruction, or --algorithm with its formats and parameters), or as a
// profile's MMA configuration (--profile, --config); model/error_analysis.hpp computes,
// model/error_report.hpp writes the text table, the JSON and the CSV, this file parses, writes the
// files and draws the plots with python/gpuparanoia/plot.py (embedded at build time) where matplotlib is installed.
#pragma once

namespace CLI {
class App;
}

namespace gp::cli {

void add_error_command(CLI::App& app, int& exit_code);

}  // namespace gp::cli
