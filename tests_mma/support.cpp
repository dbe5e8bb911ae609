#include "tests_mma/support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "model/ops.hpp"

namespace gp::mma {

using model::Class;
using model::u128;

namespace {

int ctz(std::uint64_t x) { return std::countr_zero(x); }

__extension__ typedef __int128 i128;

// 2^k written for a verdict: small integers as such, others as 2^k.
std::string power(int k) { return k >= 0 && k <= 10 ? std::to_string(1u << k) : fmt::format("2^{}", k); }

}  // namespace

Exact add(Exact x, Exact y) {
  if (x.sig == 0) return y.sig == 0 ? Exact{x.neg && y.neg, 0, 0} : y;
  if (y.sig == 0) return x;
  const int e = std::min(x.exp, y.exp);
  // Exact in 128 bits; a sum wider than 63 bits keeps its leading 63 (probes never build one).
  const int sx = std::min(x.exp - e, 126 - model::msb(x.sig)), sy = std::min(y.exp - e, 126 - model::msb(y.sig));
  const i128 xs = i128(x.sig) << sx, ys = i128(y.sig) << sy;
  i128 s = (x.neg ? -xs : xs) + (y.neg ? -ys : ys);
  const bool negative = s < 0;
  if (negative) s = -s;
  int exp = e;
  while (s >> 63) {
    s >>= 1;
    ++exp;
  }
  return {negative, u128(s), exp};
}

std::string show(Exact v) {
  if (v.sig == 0) return v.neg ? "-0" : "0";
  const int tz = ctz(std::uint64_t(v.sig));
  const std::uint64_t s = std::uint64_t(v.sig >> tz);
  const int e = v.exp + tz;
  std::string body;
  if (std::popcount(s) <= 3) {
    std::vector<std::string> terms;
    for (int bit = model::msb(s); bit >= 0; --bit)
      if ((s >> bit) & 1) terms.push_back(power(bit + e));
    for (std::size_t i = 0; i < terms.size(); ++i) body += (i ? " + " : "") + terms[i];
    if (terms.size() > 1 && v.neg) return "-(" + body + ")";
  } else if (std::has_single_bit(s + 1)) {
    body = power(model::msb(s + 1) + e) + " - " + power(e);
    if (v.neg) return "-(" + body + ")";
  } else {
    body = fmt::format("{} * {}", s, power(e));
  }
  return (v.neg ? "-" : "") + body;
}

std::optional<std::uint64_t> encode(const Format& f, Exact v) {
  if (v.neg && !f.has_sign()) return std::nullopt;
  if (v.sig == 0) {
    if (!f.has_zero() || (v.neg && !f.has_negative_zero())) return std::nullopt;
    return model::zero(f, v.neg).bits;
  }
  model::Options o;
  o.rounding = model::Rounding::rz;
  const model::Result r = model::round_pack(f, o, v);
  if (r.flags & (model::Flag::inexact | model::Flag::overflow | model::Flag::invalid)) return std::nullopt;
  const Class c = model::classify(f, r.bits);
  if (!model::is_finite_nonzero(c)) return std::nullopt;
  return r.bits;
}

Exact decode(const Format& f, std::uint64_t bits) {
  const model::Unpacked u = model::unpack(f, bits);
  if (!model::is_finite_nonzero(u.cls)) return {u.neg, 0, 0};
  return {u.neg, u.sig, u.exp};
}

bool is_nan(const Format& f, std::uint64_t bits) { return model::is_nan(model::classify(f, bits)); }

std::string show(const Format& f, std::uint64_t bits) {
  const Class c = model::classify(f, bits);
  const int w = (f.storage_bits + 3) / 4;
  if (model::is_nan(c)) return fmt::format("NaN ({:0{}x})", bits, w);
  if (c == Class::infinite) return model::sign_of(f, bits) ? "-inf" : "inf";
  return show(decode(f, bits));
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> factor(const Format& fa, const Format& fb, Exact v) {
  if (v.sig == 0) {
    // A zero product: the sign goes on a where it can.
    const auto a = encode(fa, {v.neg && fa.has_sign(), 0, 0});
    const auto b = encode(fb, {v.neg && !fa.has_sign(), 0, 0});
    if (!a || !b) return std::nullopt;
    return std::pair{*a, *b};
  }
  const int tz = ctz(std::uint64_t(v.sig));
  const std::uint64_t s = std::uint64_t(v.sig >> tz);
  const int e = v.exp + tz;
  const bool sign_on_a = fa.has_sign();
  if (v.neg && !fa.has_sign() && !fb.has_sign()) return std::nullopt;
  // Divisor pairs of the odd significand (short ones only: probes use few-bit values).
  std::vector<std::uint64_t> divisors;
  if (model::msb(s) < fa.precision() + fb.precision() + 1 && s < (std::uint64_t{1} << 24)) {
    for (std::uint64_t d = 1; d * d <= s; ++d)
      if (s % d == 0) {
        divisors.push_back(d);
        if (d != s / d) divisors.push_back(s / d);
      }
  } else {
    divisors = {s, 1};
  }
  // The best pair: subnormal factors last, then a power-of-two factor, then balanced magnitudes (the
  // lowest score; of equal scores the first divisor, then the smallest exponent of a).
  std::optional<std::pair<std::uint64_t, std::uint64_t>> best;
  long best_score = 0;
  const int lo = fa.quantum_min() - 2, hi = fa.emax() + 1;
  for (std::uint64_t s1 : divisors) {
    const std::uint64_t s2 = s / s1;
    const int m1 = model::msb(s1), m2 = model::msb(s2);
    if (m1 >= fa.precision() || m2 >= fb.precision()) continue;
    const long power_of_two = 1000L * (s1 != 1 && s2 != 1);
    // a = s1 2^x, b = s2 2^(e-x): the magnitudes' distance |la - lb| is |2x - t|. The exponents x
    // of [lo - m1, hi] are visited by distance, then x, so that the first pair without subnormals
    // ends the search (two encodings where a scan of the range took hundreds).
    const int first = lo - m1, last = hi, t = e + m2 - m1;
    for (int d = t & 1;; d += 2) {
      const int below = (t - d) / 2, above = (t + d) / 2;
      if (below < first && above > last) break;
      if (best && power_of_two + d >= best_score) break;  // no later x scores lower
      const int xs[2] = {below, above};
      for (int i = 0; i < (d == 0 ? 1 : 2); ++i) {
        const int x = xs[i];
        if (x < first || x > last) continue;
        const auto a = encode(fa, {v.neg && sign_on_a, s1, x});
        if (!a) continue;
        const auto b = encode(fb, {v.neg && !sign_on_a, s2, e - x});
        if (!b) continue;
        const bool sub_a = model::classify(fa, *a) == Class::subnormal,
                   sub_b = model::classify(fb, *b) == Class::subnormal;
        const long score = 10000L * (sub_a + sub_b) + power_of_two + d;
        if (!best || score < best_score) {
          best = std::pair{*a, *b};
          best_score = score;
        }
      }
    }
  }
  return best;
}

std::uint64_t round_to(const Format& d, int bits, model::Rounding r, Exact v) {
  model::Options o;
  o.rounding = r;
  if (bits >= d.man_bits) return model::round_pack(d, o, v).bits;
  Format narrow = d;
  narrow.name = "narrowed output";
  narrow.man_bits = bits;
  narrow.storage_bits = d.storage_bits - d.pad_bits - (d.man_bits - bits);
  narrow.pad_bits = 0;
  const std::uint64_t x = model::round_pack(narrow, o, v).bits;
  const std::uint64_t m = model::magnitude_of(narrow, x);
  const std::uint64_t widened =
      ((m >> narrow.man_bits) << d.man_bits) | ((m & narrow.man_mask()) << (d.man_bits - bits));
  return model::pack(d, model::sign_of(narrow, x), widened);
}

std::uint64_t ieee_sum(const Format& d, model::Rounding r, const std::vector<Exact>& terms) {
  model::Options o;
  o.rounding = r;
  std::uint64_t acc = 0;
  bool first = true;
  for (const Exact& t : terms) {
    const std::uint64_t x = t.sig == 0 ? model::zero(d, t.neg).bits : model::round_pack(d, o, t).bits;
    acc = first ? x : model::add(d, o, acc, x).bits;
    first = false;
  }
  return acc;
}

int lowest_summand_exponent(const MmaConfig& cfg) {
  return std::min({cfg.a->emin() + cfg.b->emin(), cfg.c->emin(), cfg.d->emin()});
}

bool usable(const MmaConfig& cfg) {
  return cfg.a && cfg.b && cfg.c && cfg.d && cfg.k >= 1 && cfg.m >= 1 && cfg.n >= 1 && cfg.d->has_sign();
}

CaseBuilder::CaseBuilder(const MmaConfig& cfg) : cfg_(&cfg), k_(cfg.k) {
  case_.a.assign(std::size_t(k_), model::zero(*cfg.a, false).bits);
  case_.b.assign(std::size_t(k_), model::zero(*cfg.b, false).bits);
  case_.c = model::zero(*cfg.c, false).bits;
}

bool CaseBuilder::set(int s, Exact v) {
  if (s < 0 || s > k_) {
    ok_ = false;
    return false;
  }
  if (s == k_) {
    const auto c = encode(*cfg_->c, v);
    if (!c) return ok_ = false;
    case_.c = *c;
    return true;
  }
  const auto ab = factor(*cfg_->a, *cfg_->b, v);
  if (!ab) return ok_ = false;
  case_.a[std::size_t(s)] = ab->first;
  case_.b[std::size_t(s)] = ab->second;
  return true;
}

void CaseBuilder::raw(int k, std::uint64_t a, std::uint64_t b) {
  case_.a[std::size_t(k)] = a;
  case_.b[std::size_t(k)] = b;
}
void CaseBuilder::raw_c(std::uint64_t c) { case_.c = c; }

DotCase CaseBuilder::done(std::string note) const {
  DotCase d = case_;
  d.note = std::move(note);
  return d;
}

Expected<std::vector<std::uint64_t>> run(backends::Device& device, const MmaConfig& cfg,
                                         const std::vector<DotCase>& cases) {
  const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
  const std::size_t per = std::min(M, N);
  const std::size_t tiles = (cases.size() + per - 1) / per;
  const std::uint64_t za = model::zero(*cfg.a, false).bits, zb = model::zero(*cfg.b, false).bits,
                      zc = model::zero(*cfg.c, false).bits;
  std::vector<std::uint64_t> a(tiles * M * K, za), b(tiles * K * N, zb), c(tiles * M * N, zc);
  std::vector<std::pair<std::size_t, std::size_t>> where(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const DotCase& x = cases[i];
    if (x.a.size() != K || x.b.size() != K)
      return Error{fmt::format("case '{}' does not have K = {} products", x.note, K)};
    const std::size_t t = i / per, r = i % per;
    const std::size_t row = M <= N ? r : (r + t) % M, col = M <= N ? (r + t) % N : r;
    for (std::size_t k = 0; k < K; ++k) {
      a[t * M * K + row * K + k] = x.a[k];
      b[t * K * N + k * N + col] = x.b[k];
    }
    c[t * M * N + row * N + col] = x.c;
    where[i] = {t, row * N + col};
  }
  auto d = device.mma({&cfg, a, b, c});
  if (!d) return d.error();
  if (d->size() != tiles * M * N)
    return Error{fmt::format("the device returned {} elements for {} tiles of {}x{}", d->size(), tiles, M, N)};
  std::vector<std::uint64_t> out(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) out[i] = (*d)[where[i].first * M * N + where[i].second];
  return out;
}

audit::Observation observation(const MmaConfig& cfg, const DotCase& c, std::uint64_t output,
                               std::vector<std::pair<std::string, std::uint64_t>> predictions) {
  audit::Observation o;
  o.inputs.reserve(c.a.size() * 2 + 1);
  o.inputs.push_back(c.c);
  o.inputs.insert(o.inputs.end(), c.a.begin(), c.a.end());
  o.inputs.insert(o.inputs.end(), c.b.begin(), c.b.end());
  o.output = output;
  o.predictions = std::move(predictions);
  o.input_bits = std::max({cfg.a->storage_bits, cfg.b->storage_bits, cfg.c->storage_bits});
  o.output_bits = cfg.d->storage_bits;
  o.note = c.note;
  return o;
}

std::optional<DotCase> case_of(const MmaConfig& cfg, const audit::Observation& o) {
  const std::size_t K = std::size_t(cfg.k);
  if (o.inputs.size() != 2 * K + 1) return std::nullopt;
  DotCase c;
  c.c = o.inputs[0];
  c.a.assign(o.inputs.begin() + 1, o.inputs.begin() + 1 + std::ptrdiff_t(K));
  c.b.assign(o.inputs.begin() + 1 + std::ptrdiff_t(K), o.inputs.end());
  c.note = o.note;
  return c;
}

DotConfig base_config(const MmaConfig& cfg, MmaAlgorithm alg) {
  return model::default_dot_config(alg, *cfg.a, *cfg.b, *cfg.c, *cfg.d, cfg.k);
}

std::uint64_t predict(const model::Dot& dot, const DotCase& c) { return dot(c.c, c.a, c.b, c.sa, c.sb); }

std::string dot_line(const MmaConfig& cfg, const Format* scale, const DotCase& c) {
  const auto hex = [](std::uint64_t v, const Format& f) { return fmt::format("{:0{}x}", v, (f.storage_bits + 3) / 4); };
  std::string s = hex(c.c, *cfg.c);
  for (std::uint64_t v : c.a) s += " " + hex(v, *cfg.a);
  for (std::uint64_t v : c.b) s += " " + hex(v, *cfg.b);
  if (scale)
    for (const auto* w : {&c.sa, &c.sb})
      for (std::uint64_t v : *w) s += " " + hex(v, *scale);
  return s;
}

bool nan_free(const DotConfig& cfg) {
  return cfg.algorithm == MmaAlgorithm::sfma || cfg.algorithm == MmaAlgorithm::gps ||
         cfg.algorithm == MmaAlgorithm::tree || cfg.nan == model::MmaNan::format;
}

bool agrees(const DotConfig& cfg, std::uint64_t predicted, std::uint64_t output) {
  if (predicted == output) return true;
  return nan_free(cfg) && is_nan(*cfg.d, predicted) && is_nan(*cfg.d, output);
}

Expected<std::vector<std::uint64_t>> observe(backends::Device& device, const MmaConfig& cfg,
                                             const std::vector<DotCase>& cases, audit::Finding& finding) {
  auto out = run(device, cfg, cases);
  if (!out) return out.error();
  for (std::size_t i = 0; i < cases.size(); ++i) finding.observations.push_back(observation(cfg, cases[i], (*out)[i]));
  return out;
}

std::vector<std::string> matching(const std::vector<std::uint64_t>& outputs, const std::vector<Reference>& references) {
  std::vector<std::string> names;
  for (const Reference& r : references)
    if (r.outputs == outputs) names.push_back(r.name);
  return names;
}

std::string join(const std::vector<std::string>& v, std::string_view sep, std::string_view last) {
  std::string r;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) r += i + 1 == v.size() ? last : sep;
    r += v[i];
  }
  return r;
}

ProductRange product_range(const MmaConfig& cfg) {
  const Format &a = *cfg.a, &b = *cfg.b;
  const int lo_a = a.has_subnormals() ? a.quantum_min() : a.emin(),
            lo_b = b.has_subnormals() ? b.quantum_min() : b.emin();
  return {a.emax() + b.emax(), lo_a + lo_b};
}

Expected<Calibration> measure_kept_bits(backends::Device& device, const MmaConfig& cfg,
                                        std::vector<audit::Observation>* observations) {
  Calibration cal;
  if (cfg.k < 2) return cal;
  const Format& d = *cfg.d;
  const ProductRange pr = product_range(cfg);
  // X as large as the products and d allow, so that 2^(e(X) - t) stays representable far down.
  int E = std::min(pr.max_exp, d.emax());
  // The small summand from normal factors only: units that flush subnormal inputs must not lose
  // it for that reason.
  const int bottom = std::max(cfg.a->emin() + cfg.b->emin(), d.has_subnormals() ? d.quantum_min() : d.emin());
  const int T = std::min(64, E - bottom);
  if (T < 1) return cal;
  std::vector<DotCase> cases;
  std::vector<std::uint64_t> expect;
  for (int t = 0; t <= T; ++t) {
    CaseBuilder b(cfg);
    if (cfg.k >= 3) {
      b.product(0, pow2(E));
      b.product(1, pow2(E, true));
      b.product(2, pow2(E - t));
    } else {
      b.c(pow2(E));
      b.product(0, pow2(E, true));
      b.product(1, pow2(E - t));
    }
    const auto y = encode(d, pow2(E - t));
    if (!b.ok() || !y) break;
    cases.push_back(b.done(fmt::format("X + (-X) + X * 2^-{}, X = {}", t, show(pow2(E)))));
    expect.push_back(*y);
  }
  if (cases.size() < 2) return cal;
  auto out = run(device, cfg, cases);
  if (!out) return out.error();
  cal.tested_up_to = int(cases.size()) - 1;
  int first_lost = -1;
  for (std::size_t t = 0; t < cases.size(); ++t) {
    if (observations)
      observations->push_back(observation(cfg, cases[t], (*out)[t], {{"small summand kept", expect[t]}}));
    if ((*out)[t] != expect[t] && first_lost < 0) first_lost = int(t);
  }
  if (first_lost < 0)
    cal.exact = true;
  else if (first_lost > 0)
    cal.F = first_lost - 1;
  return cal;
}

std::string_view name(Gen g) {
  switch (g) {
    case Gen::bits: return "random bit patterns";
    case Gen::normal: return "random normal values";
    case Gen::wide: return "random finite values";
    case Gen::cancel: return "cancelling summands";
    case Gen::tiny: return "tiny summands";
    case Gen::tie: return "near rounding boundaries";
    case Gen::overflow: return "near overflow";
    case Gen::special: return "special values";
    case Gen::carry: return "carrying sums";
    case Gen::deep: return "summands below d's range";
    case Gen::full: return "summands at the top of one binade";
  }
  return "random";
}

RandomInputs::RandomInputs(const MmaConfig& cfg, std::uint64_t seed) : cfg_(&cfg), rng_(seed) {}

void RandomInputs::draw_scales(const Format* scale, std::size_t n, DotCase& c) {
  if (!scale) return;
  const std::uint64_t one = encode(*scale, pow2(0)).value_or(0);
  const std::uint64_t spread = scale == &model::ue8m0 ? 4 : 16;
  for (auto* v : {&c.sa, &c.sb}) {
    v->resize(n);
    for (std::uint64_t& w : *v) w = one - spread + rng_() % (2 * spread + 1);
  }
}

namespace {

// One dot product's inputs drawn for one generator of RandomInputs: a method per generator, each
// drawing from the shared stream in the order the single switch of its cases did (the seeds'
// inputs must not change).
class DotInputDrawer {
 public:
  DotInputDrawer(const MmaConfig& cfg, std::mt19937_64& rng)
      : cfg_(cfg), rng_(rng), fa(*cfg.a), fb(*cfg.b), fc(*cfg.c), fd(*cfg.d), K(cfg.k) {}

  std::uint64_t random_finite(const Format& f, int lo, int hi, bool allow_sub);
  std::uint64_t normal_value(const Format& f, int spread);

  void any_bits(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void normals(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void wide_range(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void cancelling(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void tiny_summands(bool deep, std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void near_ties(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void near_overflow(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void carrying(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void full_binade(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  void with_specials(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);

 private:
  static int spread(const Format& f) { return std::max(1, std::min(8, (f.emax() - f.emin()) / 6)); }
  // Every encoding, and nothing in a container's spare bits (e2m1 in 8 bits: 0 to f).
  std::uint64_t bits(const Format& f) {
    return rng_() & (f.storage_mask() >> (f.storage_bits - f.pad_bits - f.value_bits()));
  }

  const MmaConfig& cfg_;
  std::mt19937_64& rng_;
  const Format &fa, &fb, &fc, &fd;
  const int K;
};

// A finite value of f with leading exponent in [lo, hi] (clipped to the format), or a subnormal.
std::uint64_t DotInputDrawer::random_finite(const Format& f, int lo, int hi, bool allow_sub) {
  lo = std::max(lo, f.emin());
  hi = std::min(hi, f.emax());
  if (lo > hi) lo = hi;
  for (int tries = 0; tries < 16; ++tries) {
    std::uint64_t mag;
    const std::uint64_t frac = f.man_bits ? rng_() & f.man_mask() : 0;
    if (allow_sub && f.has_subnormals() && rng_() % 8 == 0) {
      mag = frac ? frac : 1;
    } else {
      const int e = lo + int(rng_() % std::uint64_t(hi - lo + 1));
      mag = (std::uint64_t(e + f.bias) << f.man_bits) | frac;
    }
    const bool neg = f.has_sign() && (rng_() & 1);
    const std::uint64_t bits = model::pack(f, neg, mag & f.magnitude_mask());
    const Class c = model::classify(f, bits);
    if (model::is_finite_nonzero(c)) return bits;
  }
  return model::pack(f, false, f.max_finite_magnitude());
}

std::uint64_t DotInputDrawer::normal_value(const Format& f, int spread) {
  if (rng_() % 16 == 0) return model::zero(f, f.has_negative_zero() && (rng_() & 1)).bits;
  return random_finite(f, -spread, spread, false);
}

void DotInputDrawer::any_bits(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  for (int k = 0; k < K; ++k) a[k] = bits(fa), b[k] = bits(fb);
  c = bits(fc);
}

void DotInputDrawer::normals(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  for (int k = 0; k < K; ++k) a[k] = normal_value(fa, spread(fa)), b[k] = normal_value(fb, spread(fb));
  c = normal_value(fc, std::min(spread(fa) + spread(fb), std::max(1, fc.emax() / 2)));
}

void DotInputDrawer::wide_range(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  for (int k = 0; k < K; ++k) {
    a[k] = random_finite(fa, fa.emin(), fa.emax(), true);
    b[k] = random_finite(fb, fb.emin(), fb.emax(), true);
  }
  const ProductRange pr = product_range(cfg_);
  c = rng_() % 4 == 0 ? random_finite(fc, fc.emin(), fc.emax(), true) : random_finite(fc, pr.min_exp, pr.max_exp, true);
}

void DotInputDrawer::cancelling(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  // Two products that cancel exactly, the others smaller by random gaps.
  for (int k = 0; k < K; ++k) a[k] = normal_value(fa, spread(fa)), b[k] = normal_value(fb, spread(fb));
  const int i = int(rng_() % std::uint64_t(K)), j = int(rng_() % std::uint64_t(K));
  const int ea = fa.emax() - int(rng_() % std::uint64_t(std::max(1, spread(fa))));
  const int eb = fb.emax() - int(rng_() % std::uint64_t(std::max(1, spread(fb))));
  a[i] = random_finite(fa, ea, ea, false);
  b[i] = random_finite(fb, eb, eb, false);
  for (int k = 0; k < K; ++k) {
    if (k == i) continue;
    if (rng_() % 3 == 0) {
      // As far below as the formats go: beyond the kept bits of the largest product.
      a[k] = random_finite(fa, fa.emin(), fa.emin() + 1, true);
      b[k] = random_finite(fb, fb.emin(), fb.emin() + 1, true);
      continue;
    }
    const int gap = int(rng_() % 48);
    a[k] = random_finite(fa, ea - gap / 2, ea - gap / 2, rng_() % 4 == 0);
    b[k] = random_finite(fb, eb - (gap - gap / 2), eb - (gap - gap / 2), rng_() % 4 == 0);
  }
  if (j != i && fa.has_sign()) {
    a[j] = a[i] ^ fa.sign_mask();
    b[j] = b[i];
  }
  const Exact x = [&] {
    const Exact va = decode(fa, a[i]), vb = decode(fb, b[i]);
    return Exact{va.neg != vb.neg, va.sig * vb.sig, va.exp + vb.exp};
  }();
  const auto cx = encode(fc, neg(x));
  if (j == i && cx)
    c = *cx;
  else
    c = random_finite(fc, lead(x) - int(rng_() % 60), lead(x), true);
  // Half of the time c lies 20 to 35 binades below the cancelled pair, with a full
  // significand: where aligning c rounds down, toward zero, or not at all (MMA-Sim VI-C).
  if (j != i && rng_() % 2) {
    const int e = lead(x) - 20 - int(rng_() % 16);
    c = random_finite(fc, e, e, false);
  }
}

void DotInputDrawer::tiny_summands(bool deep, std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  // Summands near d's smallest numbers: a leading one at a random exponent there and smaller
  // ones below it, c mostly zero, so that an alignment floor decides what is kept (MMA-Sim's
  // alignment of all-tiny sums, section IV-C step 3). `deep` starts as low as products reach:
  // a floor far below d's range decides whether such a sum is kept at all (rounded up or
  // away from zero it gives d's smallest number; dropped, zero).
  for (int k = 0; k < K; ++k) a[k] = model::zero(fa, false).bits, b[k] = model::zero(fb, false).bits;
  c = model::zero(fc, false).bits;
  const int lo = deep ? lowest_summand_exponent(cfg_) : fd.has_subnormals() ? fd.quantum_min() - 2 : fd.emin() - 1;
  const int eb = lo + int(rng_() % std::uint64_t(fd.emin() + 3 - lo));
  const auto put = [&](int slot, Exact v) {
    if (slot == K) {
      if (const auto x = encode(fc, v)) c = *x;
    } else if (const auto p = factor(fa, fb, v)) {
      a[slot] = p->first, b[slot] = p->second;
    }
  };
  const int first = int(rng_() % std::uint64_t(K + 1));
  put(first, {rng_() % 4 == 0, 1 + 2 * (rng_() % 4), eb - 2});
  const int n = 1 + int(rng_() % 3);
  for (int i = 0; i < n; ++i) {
    const int slot = int(rng_() % std::uint64_t(K + 1));
    if (slot == first) continue;
    put(slot, {rng_() % 2 == 0, 1 + 2 * (rng_() % 2), eb - 2 - int(rng_() % 50)});
  }
}

void DotInputDrawer::near_ties(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  for (int k = 0; k < K; ++k) a[k] = model::zero(fa, false).bits, b[k] = model::zero(fb, false).bits;
  const ProductRange pr = product_range(cfg_);
  const int ob = fd.man_bits;
  const int u = 1 + int(rng_() % std::uint64_t(std::max(1, ob)));
  if (rng_() % 2 && u < fa.precision() && ob + 1 - u >= 1 && ob + 1 - u < fb.precision()) {
    // One product exactly halfway between two outputs, (1 + 2^-u)(1 + 2^-v) with u + v = p(d),
    // and a tiny c on either side of it (or none).
    const int ea = int(rng_() % 5) - 2, eb = int(rng_() % 5) - 2;
    const auto x = encode(fa, {rng_() % 2 == 0, (std::uint64_t{1} << u) + 1, ea - u});
    const auto y = encode(fb, {false, (std::uint64_t{1} << (ob + 1 - u)) + 1, eb - (ob + 1 - u)});
    if (x && y) {
      const int k = int(rng_() % std::uint64_t(K));
      a[k] = *x, b[k] = *y;
      const Exact tiny = {rng_() % 2 == 0, 1, ea + eb - ob - 2 - int(rng_() % 40)};
      const auto ct = encode(fc, tiny);
      c = rng_() % 4 == 0 || !ct ? model::zero(fc, false).bits : *ct;
      return;
    }
  }
  // c with random low bits; one product at a rounding position of d (or near it).
  const int top = std::min({pr.max_exp, fc.emax(), fd.emax()}) - 2;
  const int bottom = std::max(pr.min_exp, fc.emin());
  const int ec = bottom + int(rng_() % std::uint64_t(std::max(1, top - bottom + 1)));
  c = random_finite(fc, ec, ec, false);
  const int j = int(rng_() % std::uint64_t(fd.man_bits + 6));
  const Exact target = {rng_() % 2 == 0, 1 + 2 * (rng_() % 2), ec - j - 1};
  if (const auto p = factor(fa, fb, target)) a[0] = p->first, b[0] = p->second;
  if (K > 1 && rng_() % 2) {
    const Exact tiny = {rng_() % 2 == 0, 1, ec - j - 2 - int(rng_() % 30)};
    if (const auto p = factor(fa, fb, tiny)) a[1] = p->first, b[1] = p->second;
  }
  for (int k = 2; k < K; ++k)
    if (rng_() % 4 == 0) {
      a[k] = normal_value(fa, spread(fa));
      b[k] = normal_value(fb, spread(fb));
    }
}

void DotInputDrawer::near_overflow(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  for (int k = 0; k < K; ++k) {
    a[k] = rng_() % 2 ? random_finite(fa, fa.emax() - 2, fa.emax(), false) : normal_value(fa, spread(fa));
    b[k] = rng_() % 2 ? random_finite(fb, fb.emax() - 2, fb.emax(), false) : normal_value(fb, spread(fb));
  }
  const int e = std::min(fc.emax(), fd.emax());
  c = random_finite(fc, e - 1, e, false);
}

void DotInputDrawer::carrying(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  const bool negative = rng_() % 2;
  const int ea = int(rng_() % 3) - 1, eb = int(rng_() % 3) - 1;
  for (int k = 0; k < K; ++k) {
    a[k] = random_finite(fa, ea - int(rng_() % 2), ea, false);
    b[k] = random_finite(fb, eb - int(rng_() % 2), eb, false);
    a[k] = fa.has_sign() ? (a[k] & ~fa.sign_mask()) | (negative ? fa.sign_mask() : 0) : a[k];
    b[k] &= ~fb.sign_mask();
  }
  c = random_finite(fc, ea + eb - int(rng_() % 3), ea + eb + 1, false);
  if (fc.has_sign()) c = (c & ~fc.sign_mask()) | (negative ? fc.sign_mask() : 0);
}

void DotInputDrawer::full_binade(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  // Products just below 4 x 2^(ea + eb) and c just below twice that, all of one sign (a few
  // low bits cleared at random): the sum of K + 1 summands needs bit_width(K) carry-out bits
  // above the largest leading bit, which a shorter accumulator wraps (Valpey et al. 4.3).
  const bool negative = rng_() % 2;
  const int ea = int(rng_() % 3) - 1, eb = int(rng_() % 3) - 1;
  const auto top = [&](const Format& f, int e, bool neg) {
    const int p = f.precision();
    const std::uint64_t sig = ((std::uint64_t{1} << p) - 1) & ~(rng_() % 4 == 0 ? rng_() & 3 : 0);
    return encode(f, {neg, sig, e + 1 - p});
  };
  for (int k = 0; k < K; ++k) {
    const auto x = top(fa, ea, negative && fa.has_sign()), y = top(fb, eb, false);
    a[k] = x && y ? *x : model::zero(fa, false).bits;
    b[k] = x && y ? *y : model::zero(fb, false).bits;
  }
  c = rng_() % 4 == 0 ? model::zero(fc, false).bits
                      : top(fc, ea + eb + 1, negative).value_or(model::zero(fc, false).bits);
}

void DotInputDrawer::with_specials(std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  const auto special = [&](const Format& f) -> std::uint64_t {
    switch (rng_() % 7) {
      case 0: return model::zero(f, f.has_negative_zero() && (rng_() & 1)).bits;
      case 1: return f.has_inf() ? model::pack(f, f.has_sign() && (rng_() & 1), f.inf_magnitude()) : bits(f);
      case 2: return model::canonical_nan(f);
      case 3: return model::pack(f, f.has_sign() && (rng_() & 1), f.max_finite_magnitude());
      case 4: return f.has_subnormals() ? model::pack(f, f.has_sign() && (rng_() & 1), 1) : bits(f);
      case 5: return bits(f);
      default:
        return f.nan == model::NanStyle::ieee
                   ? model::pack(f, rng_() & 1, f.inf_magnitude() | (rng_() & f.man_mask()) | 1)
                   : bits(f);
    }
  };
  for (int k = 0; k < K; ++k) {
    a[k] = rng_() % 4 == 0 ? special(fa) : normal_value(fa, spread(fa));
    b[k] = rng_() % 4 == 0 ? special(fb) : normal_value(fb, spread(fb));
  }
  c = rng_() % 4 == 0 ? special(fc) : normal_value(fc, spread(fa) + spread(fb));
}

}  // namespace

std::uint64_t RandomInputs::random_finite(const Format& f, int lo, int hi, bool allow_sub) {
  return DotInputDrawer(*cfg_, rng_).random_finite(f, lo, hi, allow_sub);
}

std::uint64_t RandomInputs::normal_value(const Format& f, int spread) {
  return DotInputDrawer(*cfg_, rng_).normal_value(f, spread);
}

void RandomInputs::draw(Gen g, std::uint64_t& c, std::uint64_t* a, std::uint64_t* b) {
  DotInputDrawer d(*cfg_, rng_);
  switch (g) {
    case Gen::bits: return d.any_bits(c, a, b);
    case Gen::normal: return d.normals(c, a, b);
    case Gen::wide: return d.wide_range(c, a, b);
    case Gen::cancel: return d.cancelling(c, a, b);
    case Gen::tiny: return d.tiny_summands(false, c, a, b);
    case Gen::deep: return d.tiny_summands(true, c, a, b);
    case Gen::tie: return d.near_ties(c, a, b);
    case Gen::overflow: return d.near_overflow(c, a, b);
    case Gen::carry: return d.carrying(c, a, b);
    case Gen::full: return d.full_binade(c, a, b);
    case Gen::special: return d.with_specials(c, a, b);
  }
}

}  // namespace gp::mma
