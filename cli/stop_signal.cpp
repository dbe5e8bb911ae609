#include "cli/stop_signal.hpp"

#include <signal.h>

#include <csignal>

namespace gp::cli {

namespace {

volatile std::sig_atomic_t stop = 0, child = 0;

extern "C" void on_stop_signal(int sig) {
  if (stop != 0) {
    if (child > 0) ::kill(child, SIGKILL);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  stop = sig;
}

}  // namespace

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;  // drivers' blocking calls go on; the runner stops after the probe
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void stop_child_too(int pid) { child = pid; }

int stop_signal() { return stop; }

std::string_view signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    default: return "signal";
  }
}

}  // namespace gp::cli
