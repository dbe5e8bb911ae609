// Subnormals and special values (Fasi et al. 3.1.1; MMA-Sim section III-F): subnormal a, b and c
// flushed or kept, subnormal products and sums, -0, NaN from 0 * inf and inf - inf, the NaN
// encoding, product and intermediate overflow and the overflow rounding edges, TF32 low bits.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "model/ops.hpp"
#include "tests_mma/families.hpp"

namespace gp::mma {
namespace {

using nlohmann::json;

using model::Class;

// A case, what it tests, the output if kept exactly and the output if flushed.
struct Check {
  DotCase c;
  std::string what;  // "a", "b", "c", "products", "sums"
  std::uint64_t kept, flushed;
};

// A power of two 2^j of fb (normal) that brings x * 2^j into d's normal range, nearest to 1.
std::optional<int> scale_into(const Format& fb, const Format& d, int x) {
  std::optional<int> best;
  for (int j = fb.emin(); j <= fb.emax(); ++j) {
    const int e = x + j;
    if (e < d.emin() || e > d.emax() - 1) continue;
    if (!best || std::abs(e) < std::abs(x + *best)) best = j;
  }
  return best;
}

// What becomes of a subnormal: kept, flushed, or flushed to +0 whatever its sign.
enum class Subnormal { kept, flushed, flushed_to_plus_zero };

std::string_view describe(Subnormal s) {
  switch (s) {
    case Subnormal::kept: return "kept";
    case Subnormal::flushed: return "flushed";
    case Subnormal::flushed_to_plus_zero: return "flushed to +0";
  }
  return "?";
}

// Where subnormals are kept or flushed: inputs, c, products (none for a tree, whose products'
// format is the products question's) and sums.
struct SubnormalsAnswer {
  Subnormal inputs = Subnormal::kept, c = Subnormal::kept;
  std::optional<Subnormal> products = Subnormal::kept;
  Subnormal sums = Subnormal::kept;
};

// The places and what happens there, in the order of the answer's field names.
std::vector<std::pair<std::string_view, Subnormal>> places(const SubnormalsAnswer& s) {
  std::vector<std::pair<std::string_view, Subnormal>> v = {{"a and b", s.inputs}, {"c", s.c}};
  if (s.products) v.emplace_back("products", *s.products);
  v.emplace_back("sums", s.sums);
  return v;
}

json answer_fields(const SubnormalsAnswer& s) {
  json j = json::object();
  for (const auto& [where, what] : places(s)) j[std::string(where)] = std::string(describe(what));
  return j;
}

// The places grouped by what happens there: "flushed in a and b, c; kept in products, sums".
std::string say_subnormals(const SubnormalsAnswer& s) {
  std::map<std::string_view, std::vector<std::string_view>> where;  // what happens -> where
  for (const auto& [k, v] : places(s)) where[describe(v)].push_back(k);
  std::vector<std::string> parts;
  for (const auto& [what, keys] : where) parts.push_back(fmt::format("{} in {}", what, fmt::join(keys, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

MmaQuestion subnormals_question() {
  return {{"SUBNORMALS", "the handling of subnormals", audit::typed(say_subnormals)},
          [](const MmaConfig&, const DotConfig& c) {
            const auto flushed = [](bool f) { return f ? Subnormal::flushed : Subnormal::kept; };
            switch (unchained(c.algorithm)) {
              // MMA-Sim IV-B: subnormal inputs read as +0, subnormal products and sums keep their sign.
              case MmaAlgorithm::gps:
                return audit::Answer(SubnormalsAnswer{Subnormal::flushed_to_plus_zero, Subnormal::flushed_to_plus_zero,
                                                      Subnormal::flushed, Subnormal::flushed});
              case MmaAlgorithm::tree: {
                const model::SummationTree& t = *c.tree;
                return audit::Answer(
                    SubnormalsAnswer{flushed(t.flush_inputs), flushed(t.flush_c), std::nullopt, flushed(t.flush_sums)});
              }
              case MmaAlgorithm::ocfda: return audit::Answer(SubnormalsAnswer{.inputs = flushed(c.flush_inputs)});
              default: return audit::Answer(SubnormalsAnswer{});
            }
          }};
}

class SubnormalProbe final : public ProbeBase {
 public:
  SubnormalProbe()
      : ProbeBase("mma.subnormals", "Subnormal inputs in A, B and C; subnormal products, sums and outputs",
                  "Fasi et al. 2021, section 3.1.1; MMA-Sim section III-F", subnormals_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    std::vector<Check> checks;
    add_subnormal_factor_checks(cfg, checks);
    add_subnormal_c_check(cfg, checks);
    add_subnormal_product_check(cfg, checks);
    add_subnormal_sum_check(cfg, checks);
    if (checks.empty()) return audit::unsupported("no subnormal case can be expressed in these formats");
    std::vector<DotCase> cases;
    for (const Check& c : checks) cases.push_back(c.c);
    auto out = mma::run(device, cfg, cases);
    if (!out) return audit::failed(out.error());
    return judge_subnormals(cfg, checks, *out);
  }

 private:
  // a_k = 2^(emin - 1) (the largest-exponent subnormal), b_k a power of two: k = 0 and K - 1.
  static void add_subnormal_factor_checks(const MmaConfig& cfg, std::vector<Check>& checks) {
    const int K = cfg.k;
    const Format &fa = *cfg.a, &fb = *cfg.b, &fd = *cfg.d;
    for (int which = 0; which < 2; ++which) {
      const Format& fs = which == 0 ? fa : fb;
      const Format& fo = which == 0 ? fb : fa;
      if (!fs.has_subnormals() || fs.man_bits == 0) continue;
      const auto j = scale_into(fo, fd, fs.emin() - 1);
      if (!j) continue;
      for (int k : {0, K - 1}) {
        if (k == K - 1 && K == 1) continue;
        CaseBuilder b(cfg);
        const std::uint64_t sub = model::pack(fs, false, std::uint64_t{1} << (fs.man_bits - 1));
        const auto other = encode(fo, pow2(*j));
        const auto kept = encode(fd, pow2(fs.emin() - 1 + *j));
        if (!other || !kept) continue;
        if (which == 0)
          b.raw(k, sub, *other);
        else
          b.raw(k, *other, sub);
        checks.push_back({b.done(fmt::format("{}_{} = 2^{} (subnormal), {}_{} = 2^{}", which ? 'b' : 'a', k,
                                             fs.emin() - 1, which ? 'a' : 'b', k, *j)),
                          which ? "b" : "a", *kept, model::zero(fd, false).bits});
      }
    }
  }

  // c = 2^(emin(c) - 1), no products.
  static void add_subnormal_c_check(const MmaConfig& cfg, std::vector<Check>& checks) {
    const Format &fc = *cfg.c, &fd = *cfg.d;
    if (fc.has_subnormals() && fc.man_bits > 0) {
      CaseBuilder b(cfg);
      b.raw_c(model::pack(fc, false, std::uint64_t{1} << (fc.man_bits - 1)));
      if (const auto kept = encode(fd, pow2(fc.emin() - 1)))
        checks.push_back({b.done(fmt::format("c = 2^{} (subnormal), A = B = 0", fc.emin() - 1)), "c", *kept,
                          model::zero(fd, false).bits});
    }
  }

  // A product of normal factors below d's (and binary32's) smallest normal: 2^(emin(d) - 1).
  static void add_subnormal_product_check(const MmaConfig& cfg, std::vector<Check>& checks) {
    const Format &fa = *cfg.a, &fb = *cfg.b, &fd = *cfg.d;
    for (int e : {fd.emin() - 1, model::binary32.emin() - 1}) {
      const auto ab = factor(fa, fb, pow2(e, true));
      const auto kept = encode(fd, pow2(e, true));
      if (!ab || !kept) continue;
      if (model::classify(fa, ab->first) != Class::normal || model::classify(fb, ab->second) != Class::normal) continue;
      CaseBuilder b(cfg);
      b.raw(0, ab->first, ab->second);
      checks.push_back({b.done(fmt::format("a_0 b_0 = -2^{} from normal factors", e)), "products", *kept,
                        model::zero(fd, true).bits});
      break;
    }
  }

  // A subnormal sum: 1.5 e + (-e), e = 2^emin(d), from products or c.
  static void add_subnormal_sum_check(const MmaConfig& cfg, std::vector<Check>& checks) {
    const int K = cfg.k;
    const Format& fd = *cfg.d;
    const Exact big = {false, 3, fd.emin() - 1}, small = pow2(fd.emin(), true);
    const auto kept = encode(fd, pow2(fd.emin() - 1));
    for (int layout = 0; layout < 3 && kept; ++layout) {
      CaseBuilder b(cfg);
      if (layout == 0) {
        if (K < 2) continue;
        b.product(0, big);
        b.product(1, small);
      } else if (layout == 1) {
        b.c(big);
        b.product(0, small);
      } else {
        b.c(small);
        b.product(0, big);
      }
      if (!b.ok()) continue;
      checks.push_back({b.done(fmt::format("1.5 * 2^{} - 2^{} = 2^{} (subnormal in {})", fd.emin(), fd.emin(),
                                           fd.emin() - 1, fd.name)),
                        "sums", *kept, model::zero(fd, false).bits});
      break;
    }
  }

  // What each kind of subnormal (a, b, c, products, sums) became: kept, flushed, neither, or mixed.
  static audit::Finding judge_subnormals(const MmaConfig& cfg, const std::vector<Check>& checks,
                                         const std::vector<std::uint64_t>& outputs) {
    const Format& fd = *cfg.d;
    audit::Finding f;
    std::map<std::string, std::string> result;
    for (std::size_t i = 0; i < checks.size(); ++i) {
      const Check& c = checks[i];
      const std::uint64_t o = outputs[i];
      f.observations.push_back(observation(cfg, c.c, o, {{"kept", c.kept}, {"flushed", c.flushed}}));
      const bool zero = model::classify(fd, o) == Class::zero;
      std::string r = o == c.kept ? "preserve" : zero ? "flush" : "other";
      if (result.count(c.what) && result[c.what] != r) r = "mixed";
      result[c.what] = r;
    }
    std::vector<std::string> kept, flushed, other;
    for (const char* w : {"a", "b", "c", "products", "sums"}) {
      f.parameters[w] = result.count(w) ? result[w] : "untested";
      if (!result.count(w)) continue;
      const std::string& r = result[w];
      (r == "preserve" ? kept : r == "flush" ? flushed : other).push_back(w);
    }
    std::vector<std::string> parts;
    if (!kept.empty()) parts.push_back("kept in " + join(kept));
    if (!flushed.empty()) parts.push_back("flushed to zero in " + join(flushed));
    if (!other.empty()) parts.push_back("neither kept nor flushed in " + join(other));
    f.verdict = "SUBNORMALS: " + join(parts, "; ", "; ");
    std::vector<std::string> untested;
    for (const char* w : {"a", "b", "c", "products", "sums"})
      if (!result.count(w)) untested.push_back(w);
    if (!untested.empty())
      f.message = "not expressible in these formats: subnormal " + join(untested) +
                  (std::find(untested.begin(), untested.end(), "products") != untested.end()
                       ? " (products of two normal inputs never fall below the smallest normal of d)"
                       : "");
    return f;
  }
};

// The NaN a fused sum delivers in d; the FMA chain's and GPS's follow the scalar operations' rules,
// whose payloads the model does not follow.
struct NanResults {
  std::optional<model::MmaNan> nan;  // none: payloads not modelled
  const Format* d = nullptr;
};

std::string say_nan(const NanResults& n) {
  if (!n.nan) return "a NaN (payloads not modelled)";
  return *n.nan == model::MmaNan::nvidia ? "NVIDIA's, every magnitude bit set"
                                         : fmt::format("{}'s canonical quiet NaN", n.d->name);
}
json answer_fields(const NanResults& n) { return {{"nan", say_nan(n)}}; }
std::string say_specials(const NanResults& n) { return "NaN results: " + say_nan(n); }

MmaQuestion specials_question() {
  return {{"SPECIALS", "the NaN a result takes", audit::typed(say_specials)},
          [](const MmaConfig& cfg, const DotConfig& c) {
            if (!is_fused(c.algorithm)) return audit::Answer(NanResults{});
            return audit::Answer(NanResults{c.nan, cfg.d});
          }};
}

// ---------------------------------------------------------------------------------------------
class SpecialsProbe final : public ProbeBase {
 public:
  SpecialsProbe()
      : ProbeBase("mma.specials", "Special values: -0, NaN from 0 * inf and inf - inf, overflow, TF32 low bits",
                  "MMA-Sim section III-F and IV-C (TF32 truncation)", specials_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    SpecialCases sc;
    add_zero_and_nan_cases(cfg, sc);
    add_infinity_and_overflow_cases(cfg, sc);
    add_overflow_edge_cases(cfg, sc);
    add_low_bit_cases(cfg, sc);
    if (sc.cases.empty()) return audit::unsupported("no special case can be expressed in these formats");
    audit::Finding f;
    auto outputs = observe(device, cfg, sc.cases, f);
    if (!outputs) return audit::failed(outputs.error());
    judge_specials(*cfg.d, sc, *outputs, f);
    return f;
  }

 private:
  // The cases and the kind of each ("nan", "edge", ...), for the judgement.
  struct SpecialCases {
    std::vector<DotCase> cases;
    std::vector<std::string> kinds;
    void push(CaseBuilder& b, std::string kind, std::string note) {
      if (!b.ok()) return;
      cases.push_back(b.done(std::move(note)));
      kinds.push_back(std::move(kind));
    }
  };

  static std::uint64_t inf(const Format& f, bool negative) { return model::pack(f, negative, f.inf_magnitude()); }
  static std::uint64_t one(const Format& f) { return *encode(f, pow2(0)); }

  static void add_zero_and_nan_cases(const MmaConfig& cfg, SpecialCases& sc) {
    const int K = cfg.k;
    const Format &fa = *cfg.a, &fb = *cfg.b, &fc = *cfg.c;
    // -0 + sum (+0)(-0), and -0 + sum (+0)(+0).
    if (fc.has_negative_zero() && (fa.has_negative_zero() || fb.has_negative_zero())) {
      CaseBuilder b(cfg);
      b.raw_c(model::zero(fc, true).bits);
      const bool on_b = fb.has_negative_zero();
      for (int k = 0; k < K; ++k) b.raw(k, model::zero(fa, !on_b).bits, model::zero(fb, on_b).bits);
      sc.push(b, "negzero", "-0 + sum (+0)(-0)");
      CaseBuilder p(cfg);
      p.raw_c(model::zero(fc, true).bits);
      sc.push(p, "poszero", "-0 + sum (+0)(+0)");
    }
    // NaN from 0 * inf.
    if (fb.has_inf() || fa.has_inf()) {
      CaseBuilder b(cfg);
      if (fb.has_inf())
        b.raw(0, model::zero(fa, false).bits, inf(fb, false));
      else
        b.raw(0, inf(fa, false), model::zero(fb, false).bits);
      sc.push(b, "nan", "0 * inf");
    }
    // NaN from inf - inf: two products, then c and a product.
    if (fa.has_inf() && fa.has_sign() && K >= 2) {
      CaseBuilder b(cfg);
      b.raw(0, inf(fa, false), one(fb));
      b.raw(1, inf(fa, true), one(fb));
      sc.push(b, "nan", "inf * 1 + (-inf) * 1");
    }
    if (fc.has_inf() && fa.has_inf() && fa.has_sign()) {
      CaseBuilder b(cfg);
      b.raw_c(inf(fc, false));
      b.raw(0, inf(fa, true), one(fb));
      sc.push(b, "nan", "c = inf, (-inf) * 1");
    }
    // A NaN c (the only NaN some narrow formats can meet).
    if (fc.has_nan()) {
      CaseBuilder b(cfg);
      b.raw_c(model::canonical_nan(fc));
      b.product(0, pow2(0));
      sc.push(b, "nan", "c = NaN, 1 * 1");
    }
    // A NaN input.
    if (fa.has_nan()) {
      CaseBuilder b(cfg);
      b.raw(0, model::canonical_nan(fa), one(fb));
      sc.push(b, "nan", "a_0 = NaN, b_0 = 1");
    }
  }

  static void add_infinity_and_overflow_cases(const MmaConfig& cfg, SpecialCases& sc) {
    const int K = cfg.k;
    const Format &fa = *cfg.a, &fb = *cfg.b, &fc = *cfg.c, &fd = *cfg.d;
    // Infinities propagate.
    if (fa.has_inf()) {
      CaseBuilder b(cfg);
      b.raw(0, inf(fa, false), one(fb));
      b.c(pow2(0));
      sc.push(b, "inf", "inf * 1 + 1");
    }
    if (fc.has_inf()) {
      CaseBuilder b(cfg);
      b.raw_c(inf(fc, true));
      b.product(0, pow2(0));
      sc.push(b, "inf", "c = -inf, 1 * 1");
    }
    // Product overflow: a_0 b_0 = 2^(emax(d) + 1), c = -2^emax(d).
    {
      CaseBuilder b(cfg);
      b.product(0, pow2(fd.emax() + 1));
      b.c(pow2(fd.emax(), true));
      sc.push(b, "product_overflow", fmt::format("2^{} (one product) - 2^{}", fd.emax() + 1, fd.emax()));
    }
    // Intermediate overflow: c = 2^E, products 2^E and -2^E, E = emax(d).
    if (K >= 2) {
      CaseBuilder b(cfg);
      b.c(pow2(fd.emax()));
      b.product(0, pow2(fd.emax()));
      b.product(1, pow2(fd.emax(), true));
      sc.push(b, "sum_overflow", fmt::format("2^{0} + 2^{0} - 2^{0}", fd.emax()));
    }
  }

  static void add_overflow_edge_cases(const MmaConfig& cfg, SpecialCases& sc) {
    const int K = cfg.k;
    const Format& fd = *cfg.d;
    // Overflow rounding edges: (2 - u) 2^E +- r u 2^E, u = 2^-p(d) + 1.
    const Exact top = {false, (std::uint64_t{2} << fd.man_bits) - 1, fd.emax() - fd.man_bits};
    for (std::uint64_t r : {3u, 2u, 1u})
      for (bool negative : {false, true}) {
        CaseBuilder b(cfg);
        Exact t = top, s = {false, r, fd.emax() - fd.man_bits - 2};
        t.neg = s.neg = negative;
        if (!b.c(t)) {
          b = CaseBuilder(cfg);
          b.product(0, t);
          if (K >= 2)
            b.product(1, s);
          else
            b.set(-1, s);
        } else {
          b.product(0, s);
        }
        sc.push(b, "edge",
                fmt::format("{}((2 - u) 2^{} + {} u 2^{})", negative ? "-" : "", fd.emax(),
                            r == 3   ? "0.75"
                            : r == 2 ? "0.5"
                                     : "0.25",
                            fd.emax()));
      }
  }

  static void add_low_bit_cases(const MmaConfig& cfg, SpecialCases& sc) {
    const Format &fa = *cfg.a, &fb = *cfg.b;
    // TF32: the 13 low bits of each input are ignored (MMA-Sim IV-C step 0).
    if (fa.pad_bits > 0) {
      CaseBuilder b(cfg);
      b.raw(0, one(fa) | ((std::uint64_t{1} << fa.pad_bits) - 1), one(fb));
      sc.push(b, "low_bits", fmt::format("a_0 = 1 with the {} low bits set, b_0 = 1", fa.pad_bits));
      if (fa.has_inf()) {
        CaseBuilder n(cfg);
        n.raw(0, inf(fa, false) | 1, one(fb));
        sc.push(n, "low_bits_nan", "a_0 = 0x7f800001 (a binary32 NaN), b_0 = 1");
      }
    }
  }

  static void judge_specials(const Format& fd, const SpecialCases& sc, const std::vector<std::uint64_t>& out,
                             audit::Finding& f) {
    std::vector<std::string> parts;
    const auto outputs_of = [&](std::string_view kind) {
      std::vector<std::size_t> v;
      for (std::size_t i = 0; i < sc.cases.size(); ++i)
        if (sc.kinds[i] == kind) v.push_back(i);
      return v;
    };
    const auto cls = [&](std::size_t i) { return model::classify(fd, out[i]); };
    for (std::size_t i : outputs_of("negzero")) {
      const bool kept = cls(i) == Class::zero && model::sign_of(fd, out[i]);
      f.parameters["negative_zero"] = kept ? "kept" : "lost";
      parts.push_back(kept ? "-0 + sum (+0)(-0) gives -0" : "-0 + sum (+0)(-0) gives " + show(fd, out[i]));
    }
    say_nans(fd, out, outputs_of("nan"), f, parts);
    for (std::size_t i : outputs_of("product_overflow")) {
      const bool ovf = cls(i) == Class::infinite;
      f.parameters["product_overflow"] = ovf;
      parts.push_back(ovf ? fmt::format("a product of 2^{} overflows", fd.emax() + 1)
                          : fmt::format("products do not overflow (2^{} - 2^{} gives {})", fd.emax() + 1, fd.emax(),
                                        show(fd, out[i])));
    }
    for (std::size_t i : outputs_of("sum_overflow")) {
      const bool ovf = cls(i) == Class::infinite;
      f.parameters["sum_overflow"] = ovf;
      parts.push_back(ovf ? "intermediate sums overflow" : "intermediate sums do not overflow");
    }
    std::vector<std::string> edges;
    nlohmann::json edge_json = nlohmann::json::object();
    for (std::size_t i : outputs_of("edge")) {
      edges.push_back(sc.cases[i].note + " -> " + show(fd, out[i]));
      edge_json[sc.cases[i].note] = show(fd, out[i]);
    }
    if (!edges.empty()) f.parameters["overflow_edges"] = edge_json;
    for (std::size_t i : outputs_of("low_bits")) {
      const bool ignored = out[i] == *encode(fd, pow2(0));
      f.parameters["tf32_low_bits"] = ignored ? "ignored" : "used";
      parts.push_back(ignored ? "the TF32 low bits are ignored" : "the TF32 low bits are used");
    }
    for (std::size_t i : outputs_of("low_bits_nan"))
      parts.push_back("0x7f800001 reads as " + std::string(cls(i) == Class::infinite ? "infinity" : show(fd, out[i])));
    f.verdict = "SPECIALS: " + join(parts, "; ", "; ");
    f.message = "overflow edges: " + join(edges, "; ", "; ");
  }

  // The NaN results' style: none, mixed, NVIDIA's, the format's canonical one, or other.
  static void say_nans(const Format& fd, const std::vector<std::uint64_t>& out, const std::vector<std::size_t>& nans,
                       audit::Finding& f, std::vector<std::string>& parts) {
    if (nans.empty()) return;
    bool all_nan = true, same = true;
    for (std::size_t i : nans) {
      all_nan &= is_nan(fd, out[i]);
      same &= out[i] == out[nans.front()];
    }
    const std::uint64_t nv = model::pack(fd, false, fd.magnitude_mask());
    std::string style = !all_nan                                        ? "none"
                        : !same                                         ? "mixed"
                        : out[nans.front()] == nv                       ? "nvidia"
                        : out[nans.front()] == model::canonical_nan(fd) ? "format"
                                                                        : "other";
    f.parameters["nan"] = style;
    if (all_nan) f.parameters["nan_bits"] = fmt::format("{:x}", out[nans.front()]);
    const int w = (fd.storage_bits + 3) / 4;
    parts.push_back(!all_nan            ? "0 * inf or inf - inf does not always give NaN"
                    : style == "nvidia" ? fmt::format("NaN results are NVIDIA's canonical {:0{}x}", nv, w)
                    : style == "format"
                        ? fmt::format("NaN results are the canonical quiet NaN {:0{}x}", model::canonical_nan(fd), w)
                        : "NaN results with payloads " + show(fd, out[nans.front()]));
  }
};

}  // namespace

void add_specials_probes(std::vector<const audit::MmaProbe*>& out) {
  static const SubnormalProbe subnormals;
  static const SpecialsProbe specials;
  out.push_back(&subnormals);
  out.push_back(&specials);
}

}  // namespace gp::mma
