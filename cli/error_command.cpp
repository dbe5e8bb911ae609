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

nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
nlohmann::json numbers(const std::vector<double>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}
nlohmann::json parameter_json(const model::DotParameterValue& v) {
  struct J {
    nlohmann::json operator()(std::monostate) const { return nullptr; }
    nlohmann::json operator()(bool b) const { return b; }
    nlohmann::json operator()(std::int64_t i) const { return i; }
    nlohmann::json operator()(const std::string& s) const { return s; }
    nlohmann::json operator()(const std::vector<std::string>& l) const { return l; }
    nlohmann::json operator()(double x) const { return x; }
  };
  return std::visit(J{}, v);
}

std::string_view distribution_name(model::ErrorDistribution d) {
  for (const auto& x : model::error_distributions())
    if (x.id == d) return x.name;
  return "";
}

std::string sci(double x) {
  if (std::isnan(x)) return "-";
  if (std::isinf(x)) return "inf";
  return fmt::format("{:.2e}", x);
}

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
  const nlohmann::json doc = error_json(u, rep);
  const std::string json_text = doc.dump(2) + "\n", csv = error_csv(rep);
  std::string text = error_text(u, rep) + fmt::format("{:.1f} s\n", seconds);
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

nlohmann::json error_json(const ErrorUnit& u, const ErrorReport& r) {
  nlohmann::json doc;
  doc["schema"] = "gpuparanoia-error/1";
  doc["unit"] = {{"label", u.label},
                 {"command", u.command},
                 {"k_instruction", u.kstep > 0 ? u.kstep : u.k_min},
                 {"a_format", u.config.a->name},
                 {"b_format", u.config.b->name},
                 {"c_format", u.config.c->name},
                 {"d_format", u.config.d->name}};
  doc["ks"] = r.ks;
  doc["trials"] = r.trials;
  doc["seed"] = r.seed;
  doc["lambda"] = r.lambda;
  doc["bounds"] = {{"deterministic", r.deterministic_bound}, {"probabilistic", r.probabilistic_bound}};
  nlohmann::json dists = nlohmann::json::array();
  for (model::ErrorDistribution d : r.distributions)
    for (const auto& x : model::error_distributions())
      if (x.id == d)
        dists.push_back({{"name", x.name},
                         {"description", std::string(x.description) + ", rounded to nearest even into the input "
                                                                      "formats (c into c's)"}});
  doc["distributions"] = dists;
  nlohmann::json series = nlohmann::json::array();
  for (const ErrorSeries& s : r.series) {
    nlohmann::json j = {{"label", s.label}, {"kind", s.kind}};
    if (s.kind == "what-if") {
      nlohmann::json w = nlohmann::json::object();
      for (const auto& [key, v] : s.what_if) w[key] = parameter_json(v);
      j["what_if"] = w;
    }
    j["distribution"] = distribution_name(s.distribution);
    j["max_rel"] = numbers(s.max_rel);
    j["mean_rel"] = numbers(s.mean_rel);
    j["mean_signed_rel"] = numbers(s.mean_signed_rel);
    j["correctly_rounded"] = numbers(s.correctly_rounded);
    j["max_normwise"] = numbers(s.max_normwise);
    const auto bound = [](const std::vector<double>& b) {
      bool any = false;
      for (double x : b) any = any || std::isfinite(x);
      return any ? numbers(b) : nlohmann::json(nullptr);
    };
    j["bound_deterministic"] = bound(s.bound_deterministic);
    j["bound_probabilistic"] = bound(s.bound_probabilistic);
    series.push_back(std::move(j));
  }
  doc["series"] = series;
  return doc;
}

std::string error_csv(const ErrorReport& r) {
  std::string s =
      "distribution,label,kind,k,max_rel,mean_rel,mean_signed_rel,correctly_rounded,max_normwise,"
      "bound_deterministic,bound_probabilistic\n";
  const auto num = [](double x) { return std::isfinite(x) ? fmt::format("{:.17g}", x) : std::string(); };
  for (const ErrorSeries& e : r.series)
    for (std::size_t i = 0; i < r.ks.size(); ++i)
      s += fmt::format("{},\"{}\",{},{},{},{},{},{},{},{},{}\n", distribution_name(e.distribution), e.label, e.kind,
                       r.ks[i], num(e.max_rel[i]), num(e.mean_rel[i]), num(e.mean_signed_rel[i]),
                       num(e.correctly_rounded[i]), num(e.max_normwise[i]), num(e.bound_deterministic[i]),
                       num(e.bound_probabilistic[i]));
  return s;
}

std::string error_text(const ErrorUnit& u, const ErrorReport& r) {
  std::string s = fmt::format(
      "Error analysis of {} ({}), {} x {} -> {} (c {}), {} products per call\n{}\n{} trials per K and "
      "distribution, seed {}\n\n",
      u.label, model::name(u.config.algorithm), u.config.a->name, u.config.b->name, u.config.d->name, u.config.c->name,
      u.kstep > 0 ? std::to_string(u.kstep) : "all K", u.command, r.trials, r.seed);
  s += "rel: |d - exact| / |exact|; bias: mean of (d - exact) / |exact|; correct: share of d equal to the exact\n"
       "result rounded to nearest even into d's format; normwise: max |d - exact| / (|c| + sum |a_i b_i|), the\n"
       "quantity the bounds bound (the bound holds on a trial when normwise <= bound).\n\n";
  for (model::ErrorDistribution d : r.distributions) {
    for (const auto& x : model::error_distributions())
      if (x.id == d) s += fmt::format("{}: {}\n", x.name, x.description);
    s += fmt::format("{:>6}  {:<28} {:>9} {:>9} {:>10} {:>7} {:>9} {:>9} {:>9}\n", "K", "series", "max rel", "mean rel",
                     "bias", "correct", "normwise", "bound", "prob.");
    for (std::size_t i = 0; i < r.ks.size(); ++i)
      for (const ErrorSeries& e : r.series) {
        if (e.distribution != d) continue;
        const bool first = &e == &r.series.front() || e.kind == "unit";
        s += fmt::format("{:>6}  {:<28} {:>9} {:>9} {:>10} {:>6.1f}% {:>9} {:>9} {:>9}\n",
                         first ? std::to_string(r.ks[i]) : "", e.kind == "unit" ? "unit" : e.label, sci(e.max_rel[i]),
                         sci(e.mean_rel[i]), sci(e.mean_signed_rel[i]), 100 * e.correctly_rounded[i],
                         sci(e.max_normwise[i]), sci(e.bound_deterministic[i]), sci(e.bound_probabilistic[i]));
      }
    s += "\n";
  }
  s += "Deterministic bound: " + r.deterministic_bound + ".\nProbabilistic bound (lambda " +
       fmt::format("{}", r.lambda) + "): " + r.probabilistic_bound + ".\n";
  return s;
}

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
