#include "cli/results_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "audit/report/compare.hpp"
#include "audit/report/report.hpp"
#include "audit/report/result_check.hpp"
#include "cli/exit_codes.hpp"
#include "input/input_error.hpp"

namespace gp::cli {

namespace {

// A result document, or nullopt after one line on stderr naming the file and the key at fault.
std::optional<nlohmann::json> read_result(const std::string& path) {
  input::InputError err;
  auto doc = audit::read_result(path, err);
  if (!doc) fmt::print(stderr, "{}", input::error_line(err.text()));
  return doc;
}

}  // namespace

void add_results_commands(CLI::App& app, int& exit_code) {
  struct Args {
    std::string a, b;
    bool markdown = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("compare", "Show what differs between two results, probe by probe");
  cmd->add_option("A", args->a, "A result JSON (gpuparanoia run --json or --out)")->required();
  cmd->add_option("B", args->b, "Another result JSON")->required();
  cmd->add_flag("--markdown", args->markdown, "Write Markdown instead of text");
  cmd->callback([args, &exit_code] {
    const auto a = read_result(args->a);
    const auto b = a ? read_result(args->b) : std::nullopt;  // one error line at most
    if (!a || !b) {
      exit_code = kExitBadInput;
      return;
    }
    const audit::Comparison c = audit::compare_results(*a, *b);
    fmt::print("{}", args->markdown ? audit::comparison_markdown(c) : audit::comparison_text(c));
    exit_code = c.differences.empty() ? kExitOk : kExitDifferences;
  });

  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* table = app.add_subcommand("table", "Show results side by side in one Markdown table");
  table->add_option("FILE", *files, "Result JSON files")->required();
  table->callback([files, &exit_code] {
    std::vector<nlohmann::json> docs;
    for (const std::string& f : *files) {
      auto doc = read_result(f);
      if (!doc) {
        exit_code = kExitBadInput;
        return;
      }
      docs.push_back(std::move(*doc));
    }
    fmt::print("{}", audit::results_table(docs));
  });
}

}  // namespace gp::cli
