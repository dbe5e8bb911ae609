// The commands that read result files:
//   gpuparanoia compare A.json B.json   what differs between two audits (audit/report/compare.hpp); exit
//                                       status as diff's: 0 no difference, 1 differences, 2 an unreadable file
//   gpuparanoia table FILE...           the results side by side, one Markdown table (results/README.md)
//   gpuparanoia fleet RESULTS...        a fleet's results by model, driver and arithmetic, its outliers
//                                       named (audit/report/fleet.hpp); exit 1 when there is one
//   gpuparanoia merge SHARDS... --json F  a sharded run's results as one (audit/shard_merge.hpp)
#pragma once

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

void add_results_commands(CLI::App& app, int& exit_code);

}  // namespace gp::cli
