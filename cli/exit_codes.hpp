// The program's exit codes, one table for every command (README "Exit codes", --help).
#pragma once

namespace gp::cli {

inline constexpr int kExitOk = 0;
// compare: the results differ (like diff); selfcheck: the model and the host FPU disagree;
// run: a probe ended with `error`; fit: no candidate found that reproduces every captured line;
// check: the device does not compute as recorded (or nothing could be checked).
inline constexpr int kExitDifferences = 1;
// A bad command line: unknown subcommand or option, bad value, unknown --device, a --probe or
// --config that matches nothing. Nothing was run.
inline constexpr int kExitUsage = 2;
// Bad input data: a hex batch line, a result JSON, a profile file, a --tree expression.
inline constexpr int kExitBadInput = 3;
// An output could not be written (the previous file, if any, is untouched).
inline constexpr int kExitWriteFailed = 4;
// Stopped by signal n after saving what was done: 128 + n (SIGINT 130, SIGTERM 143).
inline constexpr int kExitSignalBase = 128;

}  // namespace gp::cli
