// `gpuparanoia model ...`: the reference model as a batch filter on stdin/stdout.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

struct ScalarArgs {
  std::string format;
  std::string op;
  std::string rounding = "rne";
  std::vector<std::string> ftz;  // "in", "out"
  std::string from;
  bool saturate = false;
  bool canonical_nan = false;
  bool flags = false;
};

void add_model_commands(CLI::App& app, int& exit_code);

// Evaluates the batch on `in`, writing results to `out` and one error line to `err`.
// Returns the process exit code (cli/exit_codes.hpp): kExitOk, kExitUsage for bad options,
// kExitBadInput for a bad line (the results before it are written).
int run_model_scalar(const ScalarArgs& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace gp::cli
