// gpuparanoia: audits the floating-point arithmetic of GPUs against a bit-accurate model.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/audit_command.hpp"
#include "cli/check_command.hpp"
#include "cli/contained_run.hpp"
#include "cli/error_command.hpp"
#include "cli/exit_codes.hpp"
#include "cli/fit_command.hpp"
#include "cli/model_command.hpp"
#include "cli/results_command.hpp"
#include "cli/selfcheck.hpp"
#include "input/input_error.hpp"

namespace {

// The table of cli/exit_codes.hpp, as the README has it.
constexpr const char* kExitCodesHelp = R"(Exit status:
  0        success
  1        differences found (compare), mismatches found (selfcheck), a probe ended in error (run),
           no candidate found that reproduces every captured line (fit), the device does not
           compute as recorded or nothing could be checked (check)
  2        usage error: unknown subcommand or option, bad value, unknown --device, a --probe
           or --config that matches nothing; nothing was run
  3        bad input data (a batch line, a result JSON, a profile file)
  4        an output could not be written (the previous file is untouched)
  128+n    stopped by signal n (SIGINT 130, SIGTERM 143) after saving what was done)";

// Output that did not reach stdout (a full disk, a closed pipe's EIO) is a write failure, not success.
bool stdout_written() {
  std::cout.flush();
  return std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
}

// CLI11 reports a missing subcommand before an unknown word, which then goes unnamed ("model frob":
// "A subcommand is required"): every level takes at most one, and a level that has subcommands but
// got none is reported after parsing.
void allow_one_subcommand(CLI::App& app) {
  app.require_subcommand(0, 1);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) allow_one_subcommand(*sub);
}

void check_subcommand_given(CLI::App& app) {
  CLI::App* level = &app;
  while (!level->get_subcommands().empty()) level = level->get_subcommands().front();
  if (!level->get_subcommands([](CLI::App*) { return true; }).empty())
    throw CLI::RequiredError(level == &app ? "A subcommand" : fmt::format("A subcommand of {}", level->get_name()));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gp::cli;
  CLI::App app{"gpuparanoia: what does this GPU really compute?"};
  app.set_version_flag("--version", "gpuparanoia " + std::string(GPUPARANOIA_VERSION));
  app.footer(kExitCodesHelp);
  int exit_code = kExitOk;
  add_model_commands(app, exit_code);
  add_audit_commands(app, exit_code);
  add_worker_command(app, exit_code);
  add_results_commands(app, exit_code);
  add_check_command(app, exit_code);
  add_fit_commands(app, exit_code);
  add_error_command(app, exit_code);
  add_selfcheck_command(app, exit_code);
  allow_one_subcommand(app);
  try {
    app.parse(argc, argv);
    check_subcommand_given(app);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      exit_code = app.exit(e);
    } else {
      // CLI11's own codes (106, 109, ...) are not this program's: each is a usage error.
      fmt::print(stderr, "{}", gp::input::error_line(fmt::format("{} (gpuparanoia --help)", e.what())));
      return kExitUsage;
    }
  }
  if (!stdout_written()) {
    fmt::print(stderr, "gpuparanoia: cannot write standard output: {}\n", std::strerror(errno));
    return exit_code >= kExitSignalBase ? exit_code : kExitWriteFailed;
  }
  return exit_code;
}
