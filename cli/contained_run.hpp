// A real device's run in a child process, so that a driver crash ends only the probe or
// configuration it hit, never the run. The child is this program again (`gpuparanoia worker`, not
// listed in --help) running the same runner on the same device; it mirrors its result document
// into the parent's as events on a pipe (audit::ResultDocument::on_change). When a fatal signal
// ends it, the parent records the probe in progress as `error: the driver crashed (SIGSEGV) in
// <call>` (backends/driver_call.hpp), leaves that configuration's pending findings unjudged, and
// starts a child that resumes after it. The reference backend's devices run in the process: they
// are the model, with no driver.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "audit/runner.hpp"

namespace gp::cli {

struct DeviceRun {
  std::string device_id, backend;  // DeviceInfo's id and backend
  audit::RunSettings settings;     // settings.stop is the parent's alone
  std::vector<std::string> profile_files;
  std::string code_dir;  // run --code: where the device keeps its kernels' code, "" for nowhere
};

// Runs the scalar and MMA suites of the device in children until done or stopped (stop_signal(),
// forwarded to the child); the document holds what they did. The tally of its findings.
audit::Tally run_contained(const DeviceRun& run, audit::ResultDocument& doc, const audit::ProgressFn& progress);

// The child's command: gpuparanoia worker REQUEST_FILE EVENTS_FD.
void add_worker_command(CLI::App& app, int& exit_code);

}  // namespace gp::cli
