#include "cli/contained_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "audit/result.hpp"
#include "backends/device.hpp"
#include "backends/driver_call.hpp"
#include "cli/exit_codes.hpp"
#include "cli/stop_signal.hpp"
#include "input/input_error.hpp"
#include "input/json_input.hpp"

extern char** environ;

namespace gp::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The descriptor the child writes its events to.
constexpr int kEventsFd = 3;

std::string line_of(const json& event) { return event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

// ---- The child -------------------------------------------------------------------------------

int crash_fd = -1;

// A fatal signal: one line naming it and the driver call in progress, then the default action.
// Only async-signal-safe calls (no allocation).
extern "C" void on_fatal_signal(int sig) {
  char line[512] = R"({"crash":{"signal":")";
  std::strncat(line, signal_name(sig).data(), signal_name(sig).size());
  std::strcat(line, R"(","call":")");
  if (const char* call = backends::DriverCall::in_progress()) std::strncat(line, call, 200);
  std::strcat(line, "\"}}\n");
  if (crash_fd >= 0 && ::write(crash_fd, line, std::strlen(line)) < 0) crash_fd = -1;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void report_fatal_signals(int fd) {
  crash_fd = fd;
  static char stack[64 * 1024];  // a stack overflow still reports
  stack_t alt{};
  alt.ss_sp = stack;
  alt.ss_size = sizeof stack;
  sigaltstack(&alt, nullptr);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(sig, &action, nullptr);
}

int run_worker(const std::string& request_file, int fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent killed outright takes its child along
  input::InputError err;
  const std::optional<json> read = input::read_json_file(request_file, err);
  if (!read) {
    fmt::print(stderr, "{}", input::error_line(err.text()));
    return kExitBadInput;
  }
  const json& request = *read;
  backends::BackendOptions options;
  for (const std::string& f : request.value("profile_files", std::vector<std::string>{}))
    options.profile_files.emplace_back(f);
  options.code = request.value("code", "");
  auto all = backends::all_backends(options);
  if (!all) return kExitBadInput;
  const std::string id = request.value("device", ""), backend = request.value("backend", "");
  std::unique_ptr<backends::Device> device;
  for (auto& b : *all) {
    if (b->name() != backend) continue;
    auto devices = b->enumerate();
    if (!devices) {
      fmt::print(stderr, "gpuparanoia worker: {}: {}\n", backend, devices.error().message);
      return kExitBadInput;
    }
    for (auto& d : *devices)
      if (d->info().id == id) device = std::move(d);
  }
  if (!device) {
    fmt::print(stderr, "gpuparanoia worker: no device {} in this process\n", id);
    return kExitBadInput;
  }
  audit::RunSettings settings = audit::RunSettings::from_json(request.at("settings"));
  settings.stop = [] { return stop_signal() != 0; };
  catch_stop_signals();
  audit::ResultDocument doc(*device, GPUPARANOIA_VERSION_STRING, settings.to_json());
  doc.resume(request.at("document"));
  report_fatal_signals(fd);
  bool lost_pipe = false;
  const auto send = [&](const json& event) { lost_pipe = !audit::write_all_of(fd, line_of(event)) || lost_pipe; };
  doc.on_change(send);
  const auto progress = [&](std::string_view probe, std::string_view target, std::size_t i, std::size_t n) {
    send({{"progress", {{"probe", probe}, {"target", target}, {"index", i}, {"count", n}}}});
  };
  audit::run_scalar_suite(*device, settings, doc, progress);
  audit::run_mma_suite(*device, settings, doc, progress);
  if (stop_signal()) return kExitSignalBase + stop_signal();
  doc.finish();
  return lost_pipe ? kExitWriteFailed : kExitOk;
}

// ---- The parent ------------------------------------------------------------------------------

// How one child ended, and what it was doing.
struct ChildEnd {
  bool clean = false;      // exit 0, or stopped by the signal the parent forwarded
  std::string why;         // otherwise: "the driver crashed (SIGSEGV) in vkCreateComputePipelines"
  json in_progress;        // the last progress event's {probe, target}, null before the first
  bool bad_event = false;  // an event the document refused (a broken child)
};

std::string ended_by(int status, const json& crash) {
  if (!crash.is_null()) {
    const std::string call = crash.value("call", "");
    return fmt::format("the driver crashed ({}){}", crash.value("signal", "signal"), call.empty() ? "" : " in " + call);
  }
  if (WIFSIGNALED(status))
    return fmt::format("the process running the device ended by {}", signal_name(WTERMSIG(status)));
  return fmt::format("the process running the device exited with status {}", WEXITSTATUS(status));
}

// Writes the child's request (the run and the document so far) to a new temporary file: its path.
Expected<std::string> write_child_request(const DeviceRun& run, const audit::ResultDocument& doc) {
  std::error_code ec;
  std::string request_path = (fs::temp_directory_path(ec) / "gpuparanoia-run-XXXXXX").string();
  const int request_fd = ::mkstemp(request_path.data());
  if (request_fd < 0) return Error{fmt::format("cannot write the child's request: {}", std::strerror(errno))};
  const json request = {{"device", run.device_id},
                        {"backend", run.backend},
                        {"settings", run.settings.to_json()},
                        {"profile_files", run.profile_files},
                        {"code", run.code_dir},
                        {"document", {{"findings", doc.json()["findings"]}, {"profile", doc.json()["profile"]}}}};
  const bool written = audit::write_all_of(request_fd, line_of(request));
  ::close(request_fd);
  if (!written) {
    ::unlink(request_path.c_str());
    return Error{"cannot write the child's request"};
  }
  return request_path;
}

// A started worker: its process and the read end of the pipe its events come through.
struct WorkerChild {
  pid_t pid = 0;
  int events_fd = -1;
};

// Starts `gpuparanoia worker` on the request, its events written to the pipe as kEventsFd.
Expected<WorkerChild> start_worker(std::string request_path) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{fmt::format("cannot make a pipe: {}", std::strerror(errno))};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], kEventsFd);  // dup2 clears close-on-exec
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group: a terminal's SIGINT reaches the parent alone, which forwards it once.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::string fd_arg = std::to_string(kEventsFd);
  char* argv[] = {const_cast<char*>("gpuparanoia"), const_cast<char*>("worker"), request_path.data(), fd_arg.data(),
                  nullptr};
  pid_t child = 0;
  const int spawned = posix_spawn(&child, "/proc/self/exe", &actions, &attributes, argv, environ);
  if (spawned == 0) stop_child_too(child);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    return Error{fmt::format("cannot start the process running the device: {}", std::strerror(spawned))};
  }
  return WorkerChild{child, pipe_fds[0]};
}

// Applies the child's events until its pipe closes: progress into `end` and `progress`, a crash
// report into `crash`, the rest into doc. A stop signal is forwarded to the child once; whether it
// was.
bool read_child_events(const WorkerChild& child, audit::ResultDocument& doc, const audit::ProgressFn& progress,
                       ChildEnd& end, json& crash) {
  std::string pending;
  bool forwarded = false;
  char buffer[1 << 16];
  for (;;) {
    if (const int sig = stop_signal(); sig != 0 && !forwarded) {
      ::kill(child.pid, sig);
      forwarded = true;
    }
    pollfd p{child.events_fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::read(child.events_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, std::size_t(n));
    for (std::size_t at; (at = pending.find('\n')) != std::string::npos; pending.erase(0, at + 1)) {
      const json event = json::parse(pending.begin(), pending.begin() + long(at), nullptr, false);
      if (const auto it = event.find("progress"); it != event.end() && it->is_object()) {
        end.in_progress = *it;
        if (progress)
          progress(it->value("probe", ""), it->value("target", ""), it->value("index", std::size_t{0}),
                   it->value("count", std::size_t{0}));
      } else if (event.contains("crash")) {
        crash = event["crash"];
      } else if (!doc.apply(event)) {
        end.bad_event = true;
      }
    }
  }
  return forwarded;
}

// Writes the request, starts the child and applies its events until it ends.
ChildEnd run_child(const DeviceRun& run, audit::ResultDocument& doc, const audit::ProgressFn& progress) {
  ChildEnd end;
  const auto request_path = write_child_request(run, doc);
  if (!request_path) {
    end.why = request_path.error().message;
    return end;
  }
  struct Remove {
    const char* path;
    ~Remove() { ::unlink(path); }
  } remove{request_path->c_str()};
  const auto child = start_worker(*request_path);
  if (!child) {
    end.why = child.error().message;
    return end;
  }
  json crash;
  const bool forwarded = read_child_events(*child, doc, progress, end, crash);
  ::close(child->events_fd);
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  stop_child_too(0);
  const bool stopped = forwarded && WIFEXITED(status) && WEXITSTATUS(status) >= kExitSignalBase;
  end.clean = crash.is_null() && !end.bad_event && WIFEXITED(status) && (WEXITSTATUS(status) == kExitOk || stopped);
  if (!end.clean)
    end.why = end.bad_event ? "the process running the device sent a broken result" : ended_by(status, crash);
  return end;
}

}  // namespace

audit::Tally run_contained(const DeviceRun& run, audit::ResultDocument& doc, const audit::ProgressFn& progress) {
  for (;;) {
    const ChildEnd end = run_child(run, doc, progress);
    if (end.clean || stop_signal()) break;
    const std::string probe = end.in_progress.value("probe", ""), target = end.in_progress.value("target", "");
    // The work in progress ends in error and the next child resumes after it; a crash outside any
    // probe (before the first, or after the one in progress was recorded) ends the device's run.
    audit::Finding f = audit::finding_of(probe.empty() ? audit::kDeviceRun : probe);
    f.status = audit::Status::error;
    f.message = end.why;
    const bool mma = std::any_of(doc.json()["device"]["capabilities"]["mma"].begin(),
                                 doc.json()["device"]["capabilities"]["mma"].end(),
                                 [&](const json& c) { return c.value("config", "") == target; });
    (mma ? f.config : f.format) = target;
    const bool resumable = !probe.empty() && !doc.holds(probe, target);
    if (!resumable)
      f.message += (probe.empty() ? ", before any probe ran" : fmt::format(", after {} on {}", probe, target)) +
                   "; the device's run ends here";
    if (mma) audit::end_configuration(doc, target, end.why);
    doc.add(f);
    if (!resumable) break;
  }
  audit::Tally tally;
  for (const json& f : doc.json()["findings"]) {
    const std::string s = f.value("status", "");
    tally.add(s == "ok" ? audit::Status::ok : s == "unsupported" ? audit::Status::unsupported : audit::Status::error);
  }
  return tally;
}

void add_worker_command(CLI::App& app, int& exit_code) {
  auto request = std::make_shared<std::string>();
  auto fd = std::make_shared<int>(kEventsFd);
  CLI::App* worker = app.add_subcommand("worker", "");  // no description: not listed in --help
  worker->group("");
  worker->add_option("request", *request)->required();
  worker->add_option("events_fd", *fd)->required();
  worker->callback([request, fd, &exit_code] { exit_code = run_worker(*request, *fd); });
}

}  // namespace gp::cli
