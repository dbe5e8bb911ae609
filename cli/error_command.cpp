#include "cli/error_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "audit/result.hpp"
#include "backends/reference/profile.hpp"
#include "cli/exit_codes.hpp"
#include "cli/model_dot.hpp"
#include "cli/plot_script.hpp"
#include "model/error_report.hpp"
#include "input/input_error.hpp"

namespace gp::cli {

namespace {

namespace fs = std::filesystem;
using model::ErrorReport;
using model::ErrorSeries;
using model::ErrorUnit;

struct ErrorArgs {
  DotArgs unit;
  std::string profile, config;
  int k_max = 65536;
  std::vector<int> ks;
  int trials = 20;
  std::uint64_t seed = 1;
  double lambda = 6;
  std::vector<std::string> distributions, what_ifs;
  std::string json, csv, out;
  unsigned threads = 0;
};

// The unit the options state, or the exit code and its message.
int unit_of(const ErrorArgs& a, ErrorUnit& u, std::ostream& err) {
  const int forms = int(!a.unit.instruction.empty()) + int(!a.unit.algorithm.empty()) + int(!a.profile.empty());
  if (forms != 1) {
    err << "gpuparanoia: error needs one of --instruction ARCH:NAME, --algorithm A or --profile FILE|NAME\n";
    return kExitUsage;
  }
  if (!a.config.empty() && a.profile.empty()) {
    err << "gpuparanoia: --config names a configuration of --profile\n";
    return kExitUsage;
  }
  if (!a.unit.instruction.empty()) {
    const model::MmaInstruction* ins = nullptr;
    if (const int rc = resolve_instruction(a.unit, ins, err); rc != kExitOk) return rc;
    u = model::instruction_error_unit(ins->id(), ins->config, ins->k);
    return kExitOk;
  }
  if (!a.unit.algorithm.empty()) {
    DotAlgorithmForm f;
    if (const int rc = resolve_algorithm(a.unit, f, err); rc != kExitOk) return rc;
    u = model::algorithm_error_unit(f.algorithm, *f.a, *f.b, *f.c, *f.d, f.parameters);
    return kExitOk;
  }
  // A profile's configuration: a file, or a built-in device's name.
  std::vector<backends::Profile> profiles;
  std::error_code ec;
  if (fs::exists(a.profile, ec)) {
    auto p = backends::load_profile_file(a.profile);
    if (!p) {
      err << input::error_line(p.error().message);
      return kExitBadInput;
    }
    profiles = std::move(*p);
  } else if (auto p = backends::builtin_profile(a.profile.starts_with("ref:") ? a.profile.substr(4) : a.profile)) {
    profiles.push_back(std::move(*p));
  } else {
    err << input::error_line(fmt::format("--profile: '{}' is neither a file nor a built-in device", a.profile));
    return kExitUsage;
  }
  std::string known;
  for (const backends::Profile& p : profiles)
    for (const backends::MmaConfig& m : p.mma) {
      known += (known.empty() ? "" : ", ") + m.name() + (m.instruction.empty() ? "" : " (" + m.instruction + ")");
      const bool chosen = a.config.empty() ? profiles.size() == 1 && p.mma.size() == 1
                                           : a.config == m.name() || a.config == m.instruction;
      if (!chosen) continue;
      const model::DotConfig* cfg = backends::mma_model(p.models, m);
      if (!cfg) continue;
      u = model::instruction_error_unit("ref:" + p.name + " " + m.name(), *cfg, m.k);
      return kExitOk;
    }
  err << input::error_line(known.empty() ? fmt::format("--profile {}: no MMA configuration", a.profile)
                                         : fmt::format("--config: name one of {}", known));
  return kExitUsage;
}

// The request the options state, or the exit code and its message.
int request_of(const ErrorArgs& a, const ErrorUnit& u, model::ErrorRequest& r, std::ostream& err) {
  const auto usage = [&](const std::string& why) {
    err << input::error_line(why);
    return kExitUsage;
  };
  if (!a.ks.empty()) {
    r.ks = a.ks;
  } else {
    if (a.k_max < u.k_min) return usage(fmt::format("--k-max {} is below the unit's K = {}", a.k_max, u.k_min));
    for (long k = u.k_min; k <= a.k_max; k *= 2) r.ks.push_back(int(k));
  }
  if (a.distributions.empty()) {
    for (const auto& d : model::error_distributions())
      if (model::default_distribution(d.id)) r.distributions.push_back(d.id);
  } else {
    for (const std::string& name : a.distributions) {
      const auto* d = model::find_error_distribution(name);
      if (!d)
        return usage(fmt::format(
            "--distributions: unknown '{}' (normal, uniform-positive, cancellation, ml, large-products)", name));
      r.distributions.push_back(d->id);
    }
  }
  for (const std::string& w : a.what_ifs) {
    std::string why;
    auto parsed = model::parse_what_if(w, why);
    if (!parsed) return usage(why);
    r.what_ifs.push_back(std::move(*parsed));
  }
  r.trials = a.trials;
  r.seed = a.seed;
  r.lambda = a.lambda;
  r.threads = a.threads;
  if (!(a.lambda > 0)) return usage("--lambda: a positive number");
  if (const std::string why = model::check(u, r); !why.empty()) return usage(why);
  return kExitOk;
}

// Draws the plots into `dir` with plot.py (python3 from GPUPARANOIA_PYTHON or PATH, its text on
// stdin); what happened, for the text report.
std::string draw_plots(const fs::path& dir) {
  const char* py = std::getenv("GPUPARANOIA_PYTHON");
  const std::string python = py && *py ? py : "python3";
  const auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string cmd =
      quote(python) + " - --json " + quote((dir / "error.json").string()) + " --out " + quote(dir.string()) + " 1>&2";
  std::fflush(nullptr);
  FILE* p = ::popen(cmd.c_str(), "w");
  if (!p) return "plots not drawn: python3 could not be started";
  const bool written = std::fwrite(kPlotScript, 1, sizeof kPlotScript - 1, p) == sizeof kPlotScript - 1;
  const int status = ::pclose(p);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (written && code == 0) return "plots: error_vs_k.svg, bias_vs_k.svg, what_if.svg (python/gpuparanoia/plot.py)";
  if (code == kPlotNoMatplotlib)
    return "plots not drawn: matplotlib is not installed for " + python + " (Debian: python3-matplotlib)";
  if (code == 127) return "plots not drawn: " + python + " is not installed";
  return fmt::format("plots not drawn: plot.py failed (exit status {})", code);
}

int run_error(const ErrorArgs& a, std::ostream& out, std::ostream& err) {
  ErrorUnit u;
  if (const int rc = unit_of(a, u, err); rc != kExitOk) return rc;
  model::ErrorRequest r;
  if (const int rc = request_of(a, u, r, err); rc != kExitOk) return rc;
  if (!a.out.empty()) {
    std::error_code ec;
    fs::create_directories(a.out, ec);
    if (ec) {
      err << input::error_line(fmt::format("cannot create {}: {}", a.out, ec.message()));
      return kExitWriteFailed;
    }
  }
  // Progress on stderr once the run has taken a second.
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  bool shown = false;
  const auto progress = [&](long done, long total) {
    const auto now = std::chrono::steady_clock::now();
    if (now - t0 < std::chrono::seconds(1) || (now - last < std::chrono::milliseconds(500) && done < total)) return;
    last = now;
    shown = true;
    err << fmt::format("\rerror: {}/{} trials ({:.0f}%)", done, total, 100.0 * double(done) / double(total))
        << std::flush;
  };
  const ErrorReport rep = model::analyse_error(u, r, progress);
  if (shown) err << "\n";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const nlohmann::json doc = model::error_json(u, rep);
  const std::string json_text = doc.dump(2) + "\n", csv = model::error_csv(rep);
  std::string text = model::error_text(u, rep) + fmt::format("{:.1f} s\n", seconds);
  const auto write = [&](const fs::path& path, const std::string& content) {
    if (auto w = audit::write_atomically(path, content); !w) {
      err << input::error_line(w.error().message);
      return false;
    }
    return true;
  };
  if (!a.json.empty() && !write(a.json, json_text)) return kExitWriteFailed;
  if (!a.csv.empty() && !write(a.csv, csv)) return kExitWriteFailed;
  if (!a.out.empty()) {
    const fs::path dir(a.out);
    if (!write(dir / "error.json", json_text) || !write(dir / "error.csv", csv)) return kExitWriteFailed;
    text += draw_plots(dir) + "\n";
    if (!write(dir / "error.txt", text)) return kExitWriteFailed;
  }
  out << text;
  return kExitOk;
}

}  // namespace

void add_error_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ErrorArgs>();
  CLI::App* cmd = app.add_subcommand(
      "error", "What a unit's arithmetic costs: errors against K beside binary32, with the error bounds");
  add_dot_unit_options(*cmd, a->unit);
  cmd->add_option("--profile", a->profile, "A profile or result file, or a built-in device, whose MMA configuration");
  cmd->add_option("--config", a->config, "... is this one (its name or instruction)");
  cmd->add_option("--k-max", a->k_max, "Largest K (default 65536): powers of two from the unit's K");
  cmd->add_option("--ks", a->ks, "The K values instead, e.g. 16,256,4096")->delimiter(',');
  cmd->add_option("--trials", a->trials, "Dot products per K and distribution (default 20)");
  cmd->add_option("--seed", a->seed, "Seed of the inputs (default 1)");
  cmd->add_option("--distributions", a->distributions,
                  "normal,uniform-positive,cancellation,ml (the default), large-products")
      ->delimiter(',');
  cmd->add_option("--what-if", a->what_ifs, "KEY=VALUE[,KEY=VALUE]: a variant of the unit (repeatable)");
  cmd->add_option("--lambda", a->lambda, "The probabilistic bound's lambda (default 6)");
  cmd->add_option("--threads", a->threads, "Worker threads (default: every core)");
  cmd->add_option("--json", a->json, "Write the JSON report (schema gpuparanoia-error/1)");
  cmd->add_option("--csv", a->csv, "Write the CSV");
  cmd->add_option("--out", a->out, "Write error.txt, error.json, error.csv and the SVG plots into DIR");
  cmd->callback([a, &exit_code] { exit_code = run_error(*a, std::cout, std::cerr); });
}

}  // namespace gp::cli
