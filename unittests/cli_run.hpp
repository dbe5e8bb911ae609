// Runs the gpuparanoia program as a user does, for the tests of a backend's command line: the
// program is GPUPARANOIA_BINARY (a compile definition of the test), its JSON result goes to a
// fresh folder of the test's temporary directory.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

extern char** environ;

namespace gp::testing {

// An empty folder `<prefix>-<name>` of the test's temporary directory.
inline std::filesystem::path fresh_folder(const std::string& prefix, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / (prefix + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A JSON file's document, null when it cannot be read or parsed.
inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
}

// The probes a command-line test runs on a real driver: one or more of every operation, the specials
// and subnormals, in a few seconds a device (the whole quick suite takes minutes a device on a
// 2-core machine; the probes' verdicts are tested on the reference devices).
inline constexpr const char* kDriverProbes =
    "--probe 'scalar.mul.*' --probe 'scalar.fma.*' --probe 'scalar.mad.*' --probe 'scalar.sqrt.*' "
    "--probe 'scalar.*.ulp_error' --probe 'scalar.subnormals.*' --probe 'scalar.nan.*' --probe 'scalar.inf.*' "
    "--probe 'scalar.zero.*' --probe 'scalar.storage.*' --probe 'scalar.cvt.*'";

struct CliRun {
  int exit_status = -1;   // -1: the program did not exit (a signal)
  std::string output;     // stdout and stderr
  nlohmann::json result;  // the --json document, null when none was written
  // The end of the output, for failure messages.
  std::string tail() const { return output.substr(output.size() > 4000 ? output.size() - 4000 : 0); }
};

// `gpuparanoia <args>` in the folder `name` of the test's temporary directory, where `{json}` in
// args stands for the path of the JSON result ("run --device vulkan:0 --json {json}"); `env`
// prefixes the command with variable assignments ("VK_DRIVER_FILES=x").
inline CliRun run_cli(const std::string& args, const std::string& name, const std::string& env = "") {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path json = dir / "result.json", log = dir / "log.txt";
  const std::string command =
      fmt::format("{} '{}' {} > '{}' 2>&1", env, GPUPARANOIA_BINARY,
                  fmt::format(fmt::runtime(args), fmt::arg("json", "'" + json.string() + "'")), log.string());
  const int status = std::system(command.c_str());
  CliRun r;
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(log);
  r.output.assign(std::istreambuf_iterator<char>(out), std::istreambuf_iterator<char>());
  if (std::ifstream in(json); in) r.result = nlohmann::json::parse(in, nullptr, false);
  return r;
}

// `gpuparanoia <args>` started in the background, its stdout and stderr to <dir>/<name>.out and
// .err: for the tests that signal a run, or run two at once.
struct CliChild {
  pid_t pid = -1;
  std::filesystem::path out, err;
  // Waits for the program: its exit status, or -1 when a signal ended it.
  int wait() const {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string output() const { return read(out); }
  std::string errors() const { return read(err); }
};

inline CliChild start_cli(const std::vector<std::string>& args, const std::filesystem::path& dir,
                          const std::string& name) {
  CliChild c;
  c.out = dir / (name + ".out");
  c.err = dir / (name + ".err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> words{GPUPARANOIA_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  if (posix_spawn(&c.pid, GPUPARANOIA_BINARY, &actions, nullptr, argv.data(), environ) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return c;
}

// start_cli, then wait.
struct CliResult {
  int exit_status;
  std::string out, err;
};
inline CliResult run_cli_split(const std::vector<std::string>& args, const std::filesystem::path& dir,
                               const std::string& name) {
  const CliChild c = start_cli(args, dir, name);
  const int status = c.wait();
  return {status, c.output(), c.errors()};
}

}  // namespace gp::testing
