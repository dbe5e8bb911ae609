#include "cli/results_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <optional>

#include "audit/compare.hpp"
#include "audit/report.hpp"

namespace gp::cli {

namespace {

std::optional<nlohmann::json> read_result(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "gpuparanoia: cannot open {}\n", path);
    return std::nullopt;
  }
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("findings")) {
    fmt::print(stderr, "gpuparanoia: {} is not a gpuparanoia result (JSON with \"findings\")\n", path);
    return std::nullopt;
  }
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
    const auto a = read_result(args->a), b = read_result(args->b);
    if (!a || !b) {
      exit_code = 2;
      return;
    }
    const audit::Comparison c = audit::compare_results(*a, *b);
    fmt::print("{}", args->markdown ? audit::comparison_markdown(c) : audit::comparison_text(c));
    exit_code = c.differences.empty() ? 0 : 1;
  });

  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* table = app.add_subcommand("table", "Show results side by side in one Markdown table");
  table->add_option("FILE", *files, "Result JSON files")->required();
  table->callback([files, &exit_code] {
    std::vector<nlohmann::json> docs;
    for (const std::string& f : *files) {
      auto doc = read_result(f);
      if (!doc) {
        exit_code = 2;
        return;
      }
      docs.push_back(std::move(*doc));
    }
    fmt::print("{}", audit::results_table(docs));
  });
}

}  // namespace gp::cli
