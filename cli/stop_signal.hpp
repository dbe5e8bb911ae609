// SIGINT and SIGTERM stop a run after the probe in progress, its results saved; a second one stops
// the program at once.
#pragma once

#include <string_view>

namespace gp::cli {

void catch_stop_signals();
// The process a second signal kills before the program stops (a device's run, cli/contained_run);
// 0: none.
void stop_child_too(int pid);
// The signal that stops the run, 0 while none came.
int stop_signal();
std::string_view signal_name(int sig);  // "SIGINT", "SIGSEGV", ...

}  // namespace gp::cli
