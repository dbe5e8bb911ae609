#include "model/error_analysis.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <thread>

#include "model/exact_sum.hpp"
#include "model/gemm.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"

namespace gp::model {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr ErrorDistributionInfo kDistributions[] = {
    {ErrorDistribution::normal, "normal", "a, b, c ~ N(0,1)"},
    {ErrorDistribution::uniform_positive, "uniform-positive", "a, b, c ~ U(0,1)"},
    {ErrorDistribution::cancellation, "cancellation",
     "pairs that nearly cancel: for i < K/2, a_i, b_i ~ N(0,1); a_(i+K/2) = -a_i, b_(i+K/2) = b_i (1 + 2^-6 "
     "N(0,1)); c ~ N(0,1)"},
    {ErrorDistribution::ml, "ml",
     "activations times weights: a_i = max(0, N(0,1)), times 32 in outlier channels (each channel one with "
     "probability 1/64); b_i ~ N(0,1)/sqrt(K); c = 0"},
    // Xie et al. (MMA-Sim), section VI-C (b) and Figure 2: CDNA3's round-down alignment of a small c
    // against large products biases d downwards.
    {ErrorDistribution::large_products, "large-products",
     "MMA-Sim's bias experiment (section VI-C): a, b ~ 1000 N(0,1), c ~ N(0,1)"},
};

// SplitMix64 (Steele, Lea, Flood 2014): a generator whose stream is fixed by its seed on every
// platform, unlike the standard library's distributions.
struct Random {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {                                            // Box-Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
};

// x rounded to nearest even into f; beyond f's range, its largest finite value.
std::uint64_t round_into(const Format& f, double x) {
  Options o;
  o.saturate = true;
  return cvt(f, binary64, o, std::bit_cast<std::uint64_t>(x)).bits;
}
double value_of(const Format& f, std::uint64_t bits) {
  return std::bit_cast<double>(cvt(binary64, f, Options{}, bits).bits);
}
float float_of(const Format& f, std::uint64_t bits) {
  return std::bit_cast<float>(std::uint32_t(cvt(binary32, f, Options{}, bits).bits));
}
bool finite(const Format& f, std::uint64_t bits) {
  const Class c = classify(f, bits);
  return c != Class::infinite && !is_nan(c);
}

bool to_nearest(Rounding r) {
  return r == Rounding::rne || r == Rounding::rna || r == Rounding::rnz || r == Rounding::rnu || r == Rounding::rnd ||
         r == Rounding::rno;
}

// Higham and Mary's gamma~_n(lambda) for unit roundoff u.
double gamma_tilde(double n, double u, double lambda) {
  return std::expm1(lambda * std::sqrt(n) * u + n * u * u / (1 - u));
}
double gamma_det(double n, double u) { return std::expm1(n * std::log1p(u)); }

std::string value_text(const DotParameterValue& v) {
  struct Text {
    std::string operator()(std::monostate) const { return "none"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string s;
      for (const std::string& x : l) s += (s.empty() ? "" : ",") + x;
      return s;
    }
    std::string operator()(double x) const { return std::to_string(x); }
  };
  return std::visit(Text{}, v);
}

// One trial's measures of one result against the exact sum.
struct Measure {
  double d = 0, exact = 0, rel = 0, signed_rel = 0, normwise = 0;
  bool correctly_rounded = false;
};

Measure measure(const ExactSum& exact, double exact_value, double abs_sum, const Format& f, std::uint64_t r) {
  Measure m;
  m.exact = exact_value;
  m.d = finite(f, r) ? value_of(f, r) : kNaN;
  if (!finite(f, r)) {
    m.rel = m.normwise = kInf;
    m.signed_rel = kNaN;
    return m;
  }
  ExactSum diff = exact;
  diff.add(f, r, true);
  const double err = -diff.to_double();  // r - exact, rounded once
  const double scale = std::fabs(exact_value);
  m.rel = err == 0 ? 0 : scale == 0 ? kInf : std::fabs(err) / scale;
  m.signed_rel = err == 0 ? 0 : scale == 0 ? kNaN : err / scale;
  m.normwise = err == 0 ? 0 : abs_sum == 0 ? kInf : std::fabs(err) / abs_sum;
  const std::uint64_t cr = exact.rounded(f);
  m.correctly_rounded = cr == r || (magnitude_of(f, cr) == 0 && magnitude_of(f, r) == 0);
  return m;
}

}  // namespace

std::span<const ErrorDistributionInfo> error_distributions() { return kDistributions; }

bool default_distribution(ErrorDistribution d) { return d != ErrorDistribution::large_products; }

const ErrorDistributionInfo* find_error_distribution(std::string_view name) {
  for (const ErrorDistributionInfo& d : kDistributions)
    if (d.name == name) return &d;
  return nullptr;
}

namespace {

// A parameter as `model dot` takes it: "--out-rounding rne".
std::string option_text(const std::string& key, const DotParameterValue& v) {
  std::string text = value_text(v);
  if (text.find_first_of(" ()+") != std::string::npos) text = "'" + text + "'";
  return spell(key, ParameterSpelling::option) + " " + text;
}

// The `model dot --algorithm` line of a configuration of K products.
std::string algorithm_command(const DotConfig& cfg, int k) {
  std::string s = "gpuparanoia model dot --algorithm " + std::string(name(cfg.algorithm));
  const std::pair<const char*, const Format*> formats[] = {
      {"--a-format", cfg.a}, {"--b-format", cfg.b}, {"--c-format", cfg.c}, {"--d-format", cfg.d}};
  for (const auto& [option, f] : formats) s += " " + std::string(option) + " " + std::string(f->name);
  for (const auto& [key, v] : dot_config_parameters(cfg, k)) s += " " + option_text(key, v);
  return s;
}

DotParameters merged(DotParameters base, const DotParameters& over) {
  for (const auto& [key, v] : over) base[key] = v;
  return base;
}

}  // namespace

ErrorUnit instruction_error_unit(std::string_view id, const DotConfig& cfg, int k) {
  ErrorUnit u;
  u.label = std::string(id);
  u.command = id.find(':') != std::string_view::npos && id.find(' ') == std::string_view::npos
                  ? "gpuparanoia model dot --instruction " + u.label
                  : algorithm_command(cfg, k);
  u.config = cfg;
  u.kstep = k;
  u.k_min = k;
  u.variant = [cfg, k](int, const DotParameters& what_if) -> DotConfigOrError {
    if (what_if.empty()) return {cfg, "", ""};
    return dot_config_from_parameters(cfg.algorithm, *cfg.a, *cfg.b, *cfg.c, *cfg.d, k,
                                      merged(dot_config_parameters(cfg, k), what_if));
  };
  return u;
}

ErrorUnit algorithm_error_unit(MmaAlgorithm alg, const Format& a, const Format& b, const Format& c, const Format& d,
                               const DotParameters& parameters) {
  ErrorUnit u;
  u.variant = [alg, &a, &b, &c, &d, parameters](int k, const DotParameters& what_if) {
    return dot_config_from_parameters(alg, a, b, c, d, alg == MmaAlgorithm::tree ? 0 : k, merged(parameters, what_if));
  };
  u.label = std::string(name(alg));
  u.command = "gpuparanoia model dot --algorithm " + std::string(name(alg));
  for (const auto& [option, f] : {std::pair<const char*, const Format*>{"--a-format", &a},
                                  {"--b-format", &b},
                                  {"--c-format", &c},
                                  {"--d-format", &d}})
    u.command += " " + std::string(option) + " " + std::string(f->name);
  for (const auto& [key, v] : parameters) u.command += " " + option_text(key, v);
  u.kstep = 0;
  const DotConfigOrError first = u.variant(16, {});
  if (first.config && first.config->tree) {
    u.kstep = u.k_min = first.config->tree->k;
  } else if (const auto it = parameters.find("block"); it != parameters.end()) {
    if (const auto* i = std::get_if<std::int64_t>(&it->second); i && *i > 0) u.k_min = int(*i);
  }
  if (const DotConfigOrError cfg = u.variant(u.k_min, {}); cfg.config) u.config = *cfg.config;
  return u;
}

std::optional<WhatIf> parse_what_if(std::string_view text, std::string& error) {
  WhatIf w;
  w.label = std::string(text);
  std::string last;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view piece = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t eq = piece.find('=');
    if (eq == std::string_view::npos) {
      // A list's further items: flush=inputs,c.
      auto* list = last.empty() ? nullptr : std::get_if<std::vector<std::string>>(&w.parameters[last]);
      if (!list || piece.empty()) {
        error = "--what-if: KEY=VALUE[,KEY=VALUE...], got '" + std::string(text) + "'";
        return std::nullopt;
      }
      list->emplace_back(piece);
      continue;
    }
    const std::string key(piece.substr(0, eq));
    const std::string value(piece.substr(eq + 1));
    const DotParameter* p = find_dot_parameter(key);
    if (!p) {
      std::string known;
      for (std::string_view n : dot_parameter_names()) known += (known.empty() ? "" : " ") + std::string(n);
      error = "--what-if: unknown parameter '" + key + "' (known: " + known + ")";
      return std::nullopt;
    }
    DotParameterValue v = value;
    if (p->type == DotParameterType::integer || p->type == DotParameterType::integer_or_null) {
      std::int64_t i = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), i);
      if (p->type == DotParameterType::integer_or_null && (value == "none" || value == "null")) {
        v = std::monostate{};
      } else if (ec != std::errc() || ptr != value.data() + value.size()) {
        error = "--what-if: " + key + " takes an integer, got '" + value + "'";
        return std::nullopt;
      } else {
        v = i;
      }
    } else if (p->type == DotParameterType::boolean) {
      if (value != "true" && value != "false") {
        error = "--what-if: " + key + " takes true or false, got '" + value + "'";
        return std::nullopt;
      }
      v = value == "true";
    } else if (p->type == DotParameterType::list) {
      v = std::vector<std::string>{value};
    }
    w.parameters[key] = std::move(v);
    last = key;
  }
  return w;
}

std::string check(const ErrorUnit& u, const ErrorRequest& r) {
  if (r.ks.empty()) return "no K to run";
  if (r.trials < 1) return "trials: at least 1";
  for (int k : r.ks) {
    if (k < 1 || k > (1 << 20)) return "K = " + std::to_string(k) + ": must lie in 1..1048576";
    if (u.kstep > 0 && k % u.kstep != 0)
      return "K = " + std::to_string(k) + " is not a multiple of " + u.label + "'s K = " + std::to_string(u.kstep);
  }
  const int kcall = u.kstep > 0 ? u.kstep : r.ks.back();
  if (DotConfigOrError c = u.variant(kcall, {}); !c.config) return c.error;
  for (const WhatIf& w : r.what_ifs)
    if (DotConfigOrError c = u.variant(kcall, w.parameters); !c.config) return "what-if " + w.label + ": " + c.error;
  return "";
}

ErrorInputs error_inputs(const DotConfig& cfg, int kstep, ErrorDistribution dist, int k, int trial,
                         std::uint64_t seed) {
  // One stream per (seed, distribution, K, trial): a trial's inputs do not depend on which others run.
  Random rng{seed * 0x9E3779B97F4A7C15ull ^ (std::uint64_t(dist) << 56) ^ (std::uint64_t(k) << 24) ^
             std::uint64_t(trial)};
  rng.next();
  ErrorInputs in;
  const Format &af = *cfg.a, &bf = *cfg.b, &cf = *cfg.c;
  in.a.resize(std::size_t(k));
  in.b.resize(std::size_t(k));
  const auto uk = std::size_t(k);
  switch (dist) {
    case ErrorDistribution::normal:
    case ErrorDistribution::large_products:
    case ErrorDistribution::uniform_positive: {
      // c, then a_i and b_i in turn, of one law each.
      const bool uniform = dist == ErrorDistribution::uniform_positive;
      const double scale = dist == ErrorDistribution::large_products ? 1000 : 1;
      const auto draw = [&] { return uniform ? rng.uniform() : rng.normal(); };
      in.c = round_into(cf, draw());
      for (std::size_t i = 0; i < uk; ++i) {
        in.a[i] = round_into(af, scale * draw());
        in.b[i] = round_into(bf, scale * draw());
      }
      break;
    }
    case ErrorDistribution::cancellation: {
      in.c = round_into(cf, rng.normal());
      const std::size_t h = uk / 2;
      for (std::size_t i = 0; i < h; ++i) {
        in.a[i] = round_into(af, rng.normal());
        in.b[i] = round_into(bf, rng.normal());
        in.a[i + h] = round_into(af, -value_of(af, in.a[i]));
        in.b[i + h] = round_into(bf, value_of(bf, in.b[i]) * (1 + 0x1p-6 * rng.normal()));
      }
      if (uk % 2) {
        in.a[uk - 1] = round_into(af, rng.normal());
        in.b[uk - 1] = round_into(bf, rng.normal());
      }
      break;
    }
    case ErrorDistribution::ml: {
      in.c = round_into(cf, 0.0);
      const double w = 1 / std::sqrt(double(k));
      for (std::size_t i = 0; i < uk; ++i) {
        const double act = std::max(0.0, rng.normal());
        const bool outlier = rng.next() % 64 == 0;
        in.a[i] = round_into(af, outlier ? 32 * act : act);
        in.b[i] = round_into(bf, w * rng.normal());
      }
      break;
    }
  }
  if (cfg.scale) {
    const int calls = kstep > 0 ? k / kstep : 1;
    const auto n = std::size_t(scale_count(cfg, kstep > 0 ? kstep : k) * calls);
    in.scale_a.assign(n, round_into(*cfg.scale, 1.0));
    in.scale_b = in.scale_a;
  }
  return in;
}

float numpy_pairwise_sum(const float* x, long n) {
  if (n < 8) {
    float res = 0.f;
    for (long i = 0; i < n; ++i) res += x[i];
    return res;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = x[j];
    long i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += x[i + j];
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += x[i];
    return res;
  }
  long n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(x, n2) + numpy_pairwise_sum(x + n2, n - n2);
}

float numpy_add_reduce(const float* x, long n) {
  float s = 0.f;
  for (long i = 0; i < n; i += kNumpyBuffer) s += numpy_pairwise_sum(x + i, std::min(kNumpyBuffer, n - i));
  return s;
}

int numpy_add_reduce_depth(long n) {
  return numpy_pairwise_depth(std::min(n, kNumpyBuffer)) + int((n + kNumpyBuffer - 1) / kNumpyBuffer);
}

int numpy_pairwise_depth(long n) {
  if (n < 8) return int(std::max(0L, n - 1));
  if (n <= 128) return int((n - n % 8) / 8 - 1 + 3 + n % 8);
  long n2 = n / 2;
  n2 -= n2 % 8;
  return 1 + std::max(numpy_pairwise_depth(n2), numpy_pairwise_depth(n - n2));
}

ErrorBounds unit_error_bounds(const DotConfig& cfg, int kstep, long k, double lambda) {
  const MmaAlgorithm alg = cfg.algorithm;
  const long per_call = kstep > 0 ? kstep : k;
  const long calls = k / per_call;
  double u = 0, beta = 0, m = 0;
  bool nearest = true;
  if (alg == MmaAlgorithm::sfma) {
    // An FMA chain in d's format, to nearest even: one rounding per product.
    u = std::ldexp(1.0, -cfg.d->precision());
    m = double(k);
  } else if (is_fused(alg)) {
    const long b = std::min<long>(effective_block(cfg, int(per_call)), kMaxDotK);
    m = double(calls * ((per_call + b - 1) / b));
    const int p = std::min(cfg.out_fraction_bits, cfg.d->man_bits) + 1;
    nearest = to_nearest(cfg.out_rounding);
    u = std::ldexp(1.0, nearest ? -p : 1 - p);
    const double f = std::ldexp(1.0, -cfg.F);
    switch (alg) {
      case MmaAlgorithm::fda:
      case MmaAlgorithm::cofda:
        // Carry-out bits too few for b + 1 terms: a sum may wrap, which is no rounding error.
        if (cfg.carry_bits > 0 && (1L << cfg.carry_bits) < b + 1) return {kNaN, kNaN};
        beta = double(b + 1) * f;
        break;
      case MmaAlgorithm::gdfs: beta = double(b + 1) * f; break;
      case MmaAlgorithm::ocfda: beta = 2 * double(b + 1) * f; break;  // an inverted term is one unit short
      default:  // the fdrda family: products at F, the even and odd sums, the dot product and c at 24 or more
        beta = double(b) * f + 4 * 0x1p-24;
        break;
    }
  } else {
    return {kNaN, kNaN};  // gps, tree: not a block FMA
  }
  ErrorBounds out;
  const double internal = m * std::log1p(beta);
  out.deterministic = std::expm1(m * std::log1p(u) + internal);
  out.probabilistic = nearest ? std::expm1(std::log1p(gamma_tilde(m, u, lambda)) + internal) : out.deterministic;
  return out;
}

ErrorReport analyse_error(const ErrorUnit& unit, const ErrorRequest& req,
                          const std::function<void(long, long)>& progress) {
  ErrorReport rep;
  rep.ks = req.ks;
  rep.trials = req.trials;
  rep.seed = req.seed;
  rep.lambda = req.lambda;
  rep.distributions = req.distributions;
  rep.deterministic_bound =
      "|d - exact| <= ((1+u)^m (1+beta)^m - 1) (|c| + sum |a_i b_i|): m roundings of block results (K/b "
      "blocks of b products; an FMA chain: K) at the output's unit roundoff u (2^-p to nearest, 2^(1-p) "
      "directed, p the output's precision), beta a block's internal error relative to |c| + the block's "
      "sum |a_i b_i| (alignment truncating each of its b + 1 terms below F fraction bits of the largest: "
      "(b+1) 2^-F; ocfda twice that; the fdrda family b 2^-F + 4 2^-24); Blanchard, Higham, Lopez, Mary, "
      "Pranesh 2020 (block FMA, internal precision u_int = 2^-F), underflow and the alignment floor "
      "ignored; none for gps, tree, or carry bits too few for b + 1 terms. binary32: (1+2^-24)^n - 1, "
      "n = K FMAs, or the pairwise sum's deepest path (over c and the K products) plus the product's rounding";
  rep.probabilistic_bound =
      "Higham and Mary 2019: gamma~_m(lambda) = exp(lambda sqrt(m) u + m u^2/(1-u)) - 1 over the m roundings "
      "to nearest (independent, mean zero), times (1+beta)^m for the alignment (biased, kept deterministic); "
      "directed output rounding: the deterministic bound. Holds with probability at least 1 - 2m "
      "exp(-lambda^2 (1-u)^2 / 2)";

  // The configurations: the unit, then each what-if, per K (the algorithm form's defaults depend on K).
  const std::size_t nv = 1 + req.what_ifs.size(), nk = req.ks.size(), nd = req.distributions.size();
  const auto nt = std::size_t(req.trials);
  std::vector<std::vector<std::unique_ptr<DotConfig>>> cfgs(nv);
  for (std::size_t v = 0; v < nv; ++v)
    for (int k : req.ks) {
      const int kcall = unit.kstep > 0 ? unit.kstep : k;
      DotConfigOrError c = unit.variant(kcall, v == 0 ? DotParameters{} : req.what_ifs[v - 1].parameters);
      cfgs[v].push_back(std::make_unique<DotConfig>(c.config ? *c.config : unit.config));
    }
  const std::size_t ns = nv + 2;  // + float32 FMA chain, pairwise
  // measures[((s * nd + d) * nk + ki) * nt + t]
  std::vector<Measure> measures(ns * nd * nk * nt);
  struct Task {
    std::size_t d, ki, t;
  };
  std::vector<Task> tasks;
  for (std::size_t ki = nk; ki-- > 0;)  // the longest first: the threads finish together
    for (std::size_t d = 0; d < nd; ++d)
      for (std::size_t t = 0; t < nt; ++t) tasks.push_back({d, ki, t});

  const auto run_task = [&](const Task& task) {
    const int k = req.ks[task.ki];
    const DotConfig& base = *cfgs[0][task.ki];
    const ErrorInputs in = error_inputs(base, unit.kstep, req.distributions[task.d], k, int(task.t), req.seed);
    const Format &af = *base.a, &bf = *base.b, &cf = *base.c;
    ExactSum exact(af, bf, {&cf, base.d, &binary32}, k), abs_sum(af, bf, {&cf}, k);
    exact.add(cf, in.c);
    abs_sum.add(cf, in.c, false, true);
    for (std::size_t i = 0; i < in.a.size(); ++i) {
      exact.add_product(af, in.a[i], bf, in.b[i]);
      abs_sum.add_product(af, in.a[i], bf, in.b[i], (sign_of(af, in.a[i]) != sign_of(bf, in.b[i])));
    }
    const double exact_value = exact.to_double(), abs_value = abs_sum.to_double();
    const auto slot = [&](std::size_t s) -> Measure& {
      return measures[((s * nd + task.d) * nk + task.ki) * nt + task.t];
    };
    for (std::size_t v = 0; v < nv; ++v) {
      const DotConfig& cfg = *cfgs[v][task.ki];
      std::uint64_t d = 0;
      GemmOperands g;
      g.m = g.n = 1;
      g.k = std::size_t(k);
      g.kstep = unit.kstep;
      // One row of a, one column of b (K x 1), c 1 x 1; the scale factors only where the unit has them.
      g.a = BitMatrix::row_major(in.a, in.a.size());
      g.b = BitMatrix::row_major(in.b, 1);
      g.c = BitMatrix::row_major({&in.c, 1}, 1);
      if (!in.scale_a.empty()) {
        g.sa = BitMatrix::row_major(in.scale_a, in.scale_a.size());
        g.sb = BitMatrix::row_major(in.scale_b, 1);
      }
      gemm(cfg, g, OutBitMatrix::row_major({&d, 1}, 1), 1);
      slot(v) = measure(exact, exact_value, abs_value, *cfg.d, d);
    }
    // binary32: the inputs converted (exactly where narrower), c first.
    // numpy's np.add.reduce([c, p_0, ..., p_K-1]) hands the whole array, c included, to its pairwise sum.
    std::vector<float> a32(in.a.size()), b32(in.b.size()), cp(in.a.size() + 1);
    for (std::size_t i = 0; i < a32.size(); ++i) {
      a32[i] = float_of(af, in.a[i]);
      b32[i] = float_of(bf, in.b[i]);
    }
    const float c32 = float_of(cf, in.c);
    float chain = c32;
    for (std::size_t i = 0; i < a32.size(); ++i) chain = std::fma(a32[i], b32[i], chain);
    cp[0] = c32;
    for (std::size_t i = 0; i < a32.size(); ++i) cp[i + 1] = a32[i] * b32[i];
    const float pairwise = numpy_add_reduce(cp.data(), long(cp.size()));
    slot(nv) = measure(exact, exact_value, abs_value, binary32, std::bit_cast<std::uint32_t>(chain));
    slot(nv + 1) = measure(exact, exact_value, abs_value, binary32, std::bit_cast<std::uint32_t>(pairwise));
  };

  const unsigned threads = std::max(
      1u, std::min<unsigned>(req.threads ? req.threads : std::thread::hardware_concurrency(), unsigned(tasks.size())));
  std::atomic<std::size_t> next{0};
  std::atomic<long> done{0};
  const auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < tasks.size();) {
      run_task(tasks[i]);
      done.fetch_add(1);
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker);
    while (progress && done.load() < long(tasks.size())) {
      progress(done.load(), long(tasks.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (progress) progress(long(tasks.size()), long(tasks.size()));

  // The statistics, in a fixed order whatever the threads did.
  for (std::size_t d = 0; d < nd; ++d)
    for (std::size_t s = 0; s < ns; ++s) {
      ErrorSeries e;
      e.distribution = req.distributions[d];
      if (s == 0) {
        e.label = unit.label;
        e.kind = "unit";
      } else if (s < nv) {
        e.label = req.what_ifs[s - 1].label;
        e.kind = "what-if";
        e.what_if = req.what_ifs[s - 1].parameters;
      } else {
        e.label = e.kind = s == nv ? "float32-fma-chain" : "float32-pairwise";
      }
      for (std::size_t ki = 0; ki < nk; ++ki) {
        double max_rel = 0, sum_rel = 0, sum_signed = 0, max_norm = 0;
        std::size_t correct = 0;
        for (std::size_t t = 0; t < nt; ++t) {
          const Measure& m = measures[((s * nd + d) * nk + ki) * nt + t];
          max_rel = std::max(max_rel, m.rel);
          max_norm = std::max(max_norm, m.normwise);
          sum_rel += m.rel;
          sum_signed += m.signed_rel;
          correct += m.correctly_rounded;
          e.trial_d.push_back(m.d);
          e.trial_exact.push_back(m.exact);
          e.trial_rel.push_back(m.signed_rel);
          e.trial_normwise.push_back(m.normwise);
        }
        e.max_rel.push_back(max_rel);
        e.mean_rel.push_back(sum_rel / double(nt));
        e.mean_signed_rel.push_back(sum_signed / double(nt));
        e.correctly_rounded.push_back(double(correct) / double(nt));
        e.max_normwise.push_back(max_norm);
        const long k = req.ks[ki];
        ErrorBounds b;
        if (s < nv) {
          b = unit_error_bounds(*cfgs[s][ki], unit.kstep, k, req.lambda);
        } else {
          // Inputs wider than binary32 are rounded on conversion: no bound given.
          const DotConfig& base = *cfgs[0][ki];
          const bool exact_in = base.a->precision() <= 24 && base.b->precision() <= 24 && base.c->precision() <= 24;
          const double n = s == nv ? double(k) : double(numpy_add_reduce_depth(k + 1) + 1);
          b = exact_in ? ErrorBounds{gamma_det(n, 0x1p-24), gamma_tilde(n, 0x1p-24, req.lambda)}
                       : ErrorBounds{kNaN, kNaN};
        }
        e.bound_deterministic.push_back(b.deterministic);
        e.bound_probabilistic.push_back(b.probabilistic);
      }
      rep.series.push_back(std::move(e));
    }
  return rep;
}

}  // namespace gp::model
