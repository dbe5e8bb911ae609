#include "cli/results_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "audit/report/compare.hpp"
#include "audit/report/fleet.hpp"
#include "audit/report/report.hpp"
#include "audit/report/result_check.hpp"
#include "audit/self_consistency.hpp"
#include "audit/shard_merge.hpp"
#include "backends/file_write.hpp"
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

// The result files named, folders searched for *.json (sorted, so that the report is stable).
std::vector<std::string> result_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(p, ec); !ec && it != decltype(it)(); it.increment(ec))
      if (it->path().extension() == ".json" && it->is_regular_file(ec)) found.push_back(it->path().string());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

// `fleet`: the files read on every core (thousands of results), the unreadable ones named on stderr.
int run_fleet(const std::vector<std::string>& paths, const std::string& as) {
  const std::vector<std::string> files = result_files(paths);
  std::vector<std::optional<nlohmann::json>> docs(files.size());
  std::vector<std::string> errors(files.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      input::InputError err;
      docs[i] = audit::read_result(files[i], err);
      if (!docs[i])
        errors[i] = input::error_line(err.text());
      else
        docs[i] = audit::fleet_part(*docs[i], audit::self_contradictions(*docs[i]));  // keep what fleet reads
    }
  };
  std::vector<std::thread> threads;
  const unsigned n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), unsigned(files.size())));
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  std::vector<std::pair<std::string, nlohmann::json>> read;
  bool unreadable = false;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (docs[i])
      read.emplace_back(files[i], std::move(*docs[i]));
    else
      unreadable = true, fmt::print(stderr, "{}", errors[i]);
  }
  const audit::Fleet fleet = audit::fleet_of(read);
  if (as == "json")
    fmt::print("{}\n", audit::fleet_json(fleet).dump(2));
  else
    fmt::print("{}", as == "markdown" ? audit::fleet_markdown(fleet) : audit::fleet_text(fleet));
  if (unreadable || files.empty()) return kExitBadInput;
  return fleet.outliers() ? kExitDifferences : kExitOk;
}

// `merge`: the shards of one device's sharded run as one result, written to `out` ("-": stdout).
int run_merge(const std::vector<std::string>& files, const std::string& out) {
  std::vector<std::pair<std::string, nlohmann::json>> shards;
  for (const std::string& f : files) {
    auto doc = read_result(f);
    if (!doc) return kExitBadInput;
    shards.emplace_back(f, std::move(*doc));
  }
  const auto merged = audit::merge_shards(shards);
  if (!merged) {
    fmt::print(stderr, "gpuparanoia: {}\n", merged.error().message);
    return kExitBadInput;
  }
  const std::string text = merged->dump(1) + "\n";
  if (out == "-") {
    fmt::print("{}", text);
    return kExitOk;
  }
  if (auto w = backends::write_atomically(out, text); !w) {
    fmt::print(stderr, "gpuparanoia: {}\n", w.error().message);
    return kExitWriteFailed;
  }
  fmt::print("{}: {} shards of {} merged\n", out, files.size(), (*merged)["device"].value("id", std::string("?")));
  return kExitOk;
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

  auto fleet_paths = std::make_shared<std::vector<std::string>>();
  auto fleet_as = std::make_shared<std::string>("text");
  CLI::App* fleet = app.add_subcommand(
      "fleet", "Group the results of many devices by model, driver and arithmetic, and name the outliers");
  fleet->add_option("RESULTS", *fleet_paths, "Result JSON files (audits and checks), or folders of them")->required();
  CLI::Option* md = fleet->add_flag_callback(
      "--markdown", [fleet_as] { *fleet_as = "markdown"; }, "Write Markdown");
  fleet
      ->add_flag_callback(
          "--json", [fleet_as] { *fleet_as = "json"; }, "Write JSON for scripts")
      ->excludes(md);
  fleet->callback([fleet_paths, fleet_as, &exit_code] { exit_code = run_fleet(*fleet_paths, *fleet_as); });

  auto merge_files = std::make_shared<std::vector<std::string>>();
  auto merge_out = std::make_shared<std::string>();
  CLI::App* merge = app.add_subcommand("merge", "Combine the shards of one device's sharded run into one result");
  merge->add_option("SHARDS", *merge_files, "The shards' result JSON files (run --shard I/N, the same seed)")
      ->required();
  merge->add_option("--json", *merge_out, "Write the merged result here (- for stdout)")->required();
  merge->callback([merge_files, merge_out, &exit_code] { exit_code = run_merge(*merge_files, *merge_out); });
}

}  // namespace gp::cli
