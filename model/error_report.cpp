#include "model/error_report.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gp::model {

namespace {

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

}  // namespace

std::string_view distribution_name(ErrorDistribution d) {
  for (const auto& x : error_distributions())
    if (x.id == d) return x.name;
  return "";
}

namespace {

std::string sci(double x) {
  if (std::isnan(x)) return "-";
  if (std::isinf(x)) return "inf";
  return fmt::format("{:.2e}", x);
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
  for (ErrorDistribution d : r.distributions)
    for (const auto& x : error_distributions())
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
      u.label, name(u.config.algorithm), u.config.a->name, u.config.b->name, u.config.d->name, u.config.c->name,
      u.kstep > 0 ? std::to_string(u.kstep) : "all K", u.command, r.trials, r.seed);
  s += "rel: |d - exact| / |exact|; bias: mean of (d - exact) / |exact|; correct: share of d equal to the exact\n"
       "result rounded to nearest even into d's format; normwise: max |d - exact| / (|c| + sum |a_i b_i|), the\n"
       "quantity the bounds bound (the bound holds on a trial when normwise <= bound).\n\n";
  for (ErrorDistribution d : r.distributions) {
    for (const auto& x : error_distributions())
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

}  // namespace gp::model
