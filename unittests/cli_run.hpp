// Runs the gpuparanoia program as a user does, for the tests of a backend's command line: the
// program is GPUPARANOIA_BINARY (a compile definition of the test), its JSON result goes to a
// fresh folder of the test's temporary directory.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace gp::testing {

struct CliRun {
  int exit_status = -1;  // -1: the program did not exit (a signal)
  std::string output;    // stdout and stderr
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
  const std::string command = fmt::format("{} '{}' {} > '{}' 2>&1", env, GPUPARANOIA_BINARY,
                                          fmt::format(fmt::runtime(args), fmt::arg("json", "'" + json.string() + "'")),
                                          log.string());
  const int status = std::system(command.c_str());
  CliRun r;
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(log);
  r.output.assign(std::istreambuf_iterator<char>(out), std::istreambuf_iterator<char>());
  if (std::ifstream in(json); in) r.result = nlohmann::json::parse(in, nullptr, false);
  return r;
}

}  // namespace gp::testing
