#include "audit/report/graphviz.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

extern char** environ;

namespace gp::audit {

std::string draw_svg(const std::filesystem::path& dot_file, const std::filesystem::path& svg, int seconds) {
  std::error_code ec;
  std::filesystem::remove(svg, ec);  // an old drawing is not this one's
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // A relative path as ./path: never read as one of dot's options.
  const auto argument = [](const std::filesystem::path& p) { return (p.is_relative() ? "." / p : p).string(); };
  std::string dot_path = argument(dot_file), svg_path = argument(svg);
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>("-Tsvg"),
                  const_cast<char*>("-o"),  svg_path.data(),
                  dot_path.data(),          nullptr};
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT) return kGraphvizMissing;
  if (spawned != 0) return fmt::format("dot could not be started: {}", std::strerror(spawned));
  // Polled, not waited on: a `dot` that hangs is stopped, and the report goes on without its drawing.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) return fmt::format("dot: waitpid: {}", std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      std::filesystem::remove(svg, ec);
      return fmt::format("dot did not finish in {} s: stopped, no drawing", seconds);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && std::filesystem::is_regular_file(svg, ec)) return "";
  std::filesystem::remove(svg, ec);
  return WIFSIGNALED(status) ? fmt::format("dot was ended by signal {}: no drawing", WTERMSIG(status))
                             : fmt::format("dot failed (exit status {}): no drawing", WEXITSTATUS(status));
}

}  // namespace gp::audit
