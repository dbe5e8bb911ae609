// gpuparanoia: audits the floating-point arithmetic of GPUs against a bit-accurate model.
#include <CLI/CLI.hpp>

#include "cli/audit_command.hpp"
#include "cli/results_command.hpp"
#include "cli/model_command.hpp"
#include "cli/selfcheck.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpuparanoia: what does this GPU really compute?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(GPUPARANOIA_VERSION));
  int exit_code = 0;
  gp::cli::add_model_commands(app, exit_code);
  gp::cli::add_audit_commands(app, exit_code);
  gp::cli::add_results_commands(app, exit_code);
  gp::cli::add_selfcheck_command(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
