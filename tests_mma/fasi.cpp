// The tests of Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores"
// (section 3.1; section 3.2 reruns them with constants moved by the extra bit of the T4): exact
// products, the number of roundings and the order of accumulation, the rounding of the
// accumulation on both signs, the rounding of a narrow output, extra alignment bits,
// normalization in addition and in subtraction, carry-out bits and monotonicity.
//
// The paper's constants assume binary16 inputs, binary32 accumulation and 23 kept bits; here they
// follow the configuration: 2^-24 becomes 2^-(F+1) with F the kept bits measured first (as the
// paper does for the T4), 1 - 2^-24 the largest value below 1 that c can hold, and so on. Each
// probe reads its outputs against what exact arithmetic would give (its references); its verdict
// comes from the identification's candidates (tests_mma/questions.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "model/ops.hpp"
#include "tests_mma/families.hpp"

namespace gp::mma {
namespace {

using nlohmann::json;

using model::Rounding;

constexpr const char* kFasi = "Fasi, Higham, Mikaitis, Pranesh 2021, section ";

// The kept fraction bits below the largest summand (MMA-Sim's -X + X + y), or the output's
// fraction bits when the sum keeps everything.
struct Kept {
  int F;
  bool measured;
};
Expected<Kept> kept_bits(backends::Device& device, const MmaConfig& cfg) {
  auto cal = measure_kept_bits(device, cfg);
  if (!cal) return cal.error();
  if (cal->F) return Kept{*cal->F, true};
  return Kept{cfg.d->man_bits, false};
}

std::string kept_note(const Kept& k) {
  return k.measured ? fmt::format("F = {} kept bits measured first", k.F)
                    : fmt::format("no bits lost beside X when measured; F taken as d's {} fraction bits", k.F);
}

DotConfig fused(const MmaConfig& cfg, int F, Rounding r) {
  DotConfig c = base_config(cfg, MmaAlgorithm::fda);
  c.F = std::clamp(F, 0, model::kMaxF);
  c.out_rounding = r;
  return c;
}

// The products: exact, or rounded to a format (GPS: binary32, its subnormal products flushed).
struct Products {
  const Format* rounded_to = nullptr;  // none: exact
  bool subnormals_flushed = false;
};

std::string say_products(const Products& p) {
  if (!p.rounded_to) return "exact";
  return fmt::format("rounded to {}{}", p.rounded_to->name, p.subnormals_flushed ? ", subnormal products flushed" : "");
}
json answer_fields(const Products& p) { return {{"products", say_products(p)}}; }

MmaQuestion exact_products_question() {
  return {{"PRODUCTS", "whether products are exact", audit::typed(say_products)},
          [](const MmaConfig&, const DotConfig& c) {
            switch (unchained(c.algorithm)) {
              case MmaAlgorithm::gps: return audit::Answer(Products{&model::binary32, true});
              case MmaAlgorithm::tree: return audit::Answer(Products{c.tree->product_format});
              default: return audit::Answer(Products{});
            }
          }};
}

// ---------------------------------------------------------------------------------------------
class ExactProductsProbe final : public ProbeBase {
 public:
  ExactProductsProbe()
      : ProbeBase("mma.fasi.exact_products", "Exact products", std::string(kFasi) + "3.1.2",
                  exact_products_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format &fa = *cfg.a, &fb = *cfg.b, &fd = *cfg.d;
    const int pa = fa.precision(), pb = fb.precision();
    if (pa + pb > 62 || pa + pb > fd.precision() + 40)
      return audit::unsupported(
          fmt::format("products of {} and {} need {} bits, far beyond {}", fa.name, fb.name, pa + pb, fd.name));
    // The largest values below 2: every significand bit set.
    const Exact xa = {false, (std::uint64_t{1} << pa) - 1, 1 - pa}, xb = {false, (std::uint64_t{1} << pb) - 1, 1 - pb};
    const Exact p = {false, xa.sig * xb.sig, xa.exp + xb.exp};
    Cases cs;
    add_squares(cfg, xa, p, cs);
    add_power_of_two_sum(cfg, xa, xb, cs);
    add_opposite_ulps(cfg, xa, cs);
    if (cs.cases.empty()) return audit::unsupported("the exact products cannot be shown in d with these formats");
    // Rounding to a format that holds the products exactly is no reference of its own.
    std::vector<Reference> refs = {{"exact products", cs.exact}};
    if (pa + pb > fd.precision()) refs.push_back({fmt::format("products rounded to {} first", fd.name), cs.rounded_d});
    if (&fa != &fd) refs.push_back({fmt::format("products rounded to {} first", fa.name), cs.rounded_a});
    audit::Finding f;
    auto out = observe(device, cfg, cs.cases, f);
    if (!out) return audit::failed(out.error());
    judge(matching(*out, refs), xa, p, pa + pb, f);
    return f;
  }

 private:
  // The cases and, one per case, d's output with exact products and with products rounded to d
  // or to a first.
  struct Cases {
    std::vector<DotCase> cases;
    std::vector<std::uint64_t> exact, rounded_d, rounded_a;
    // sd, sa: the sums of the products rounded to d and to a.
    void push(const Format& fd, DotCase x, std::uint64_t e, Exact sd, Exact sa) {
      cases.push_back(std::move(x));
      exact.push_back(e);
      rounded_d.push_back(round_to(fd, fd.man_bits, Rounding::rne, sd));
      rounded_a.push_back(round_to(fd, fd.man_bits, Rounding::rne, sa));
    }
  };

  static Exact round_d(const MmaConfig& cfg, Exact v) {
    return decode(*cfg.d, round_to(*cfg.d, cfg.d->man_bits, Rounding::rne, v));
  }
  static Exact round_a(const MmaConfig& cfg, Exact v) {
    return decode(*cfg.a, model::round_pack(*cfg.a, model::Options{}, v).bits);
  }

  // (a) two products x_a x_b, c = 0: 2 x_a x_b, exact in whatever order a unit adds (with every
  // product, as Fasi et al., a unit that rounds its partial sums would not show exact products).
  static void add_squares(const MmaConfig& cfg, Exact xa, Exact p, Cases& cs) {
    CaseBuilder b(cfg);
    const int n = std::min(cfg.k, 2);
    for (int k = 0; k < n; ++k) b.product(k, p);
    Exact sum{}, sd{}, sa{};
    for (int k = 0; k < n; ++k) {
      sum = add(sum, p);
      sd = add(sd, round_d(cfg, p));
      sa = add(sa, round_a(cfg, p));
    }
    const auto e = encode(*cfg.d, sum);
    if (b.ok() && e) {
      const std::string note = fmt::format("{} products ({})^2 = {}", n, show(xa), show(p));
      cs.push(*cfg.d, b.done(note), *e, sd, sa);
    }
  }

  // (b) x_a b_0 + x_a b_1 with b_0 + b_1 a power of two: x_a 2^s exactly, though x_a b_0 is long.
  static void add_power_of_two_sum(const MmaConfig& cfg, Exact xa, Exact xb, Cases& cs) {
    const Format &fa = *cfg.a, &fb = *cfg.b, &fd = *cfg.d;
    const int pb = fb.precision();
    for (int s : {pb - 1, 0}) {
      const Exact b0 = {false, xb.sig, 1 - pb + s}, b1 = pow2(1 - pb + s);
      CaseBuilder b(cfg);
      const auto a0 = encode(fa, xa), e0 = encode(fb, b0), e1 = encode(fb, b1);
      if (!a0 || !e0 || !e1 || cfg.k < 2) continue;
      b.raw(0, *a0, *e0);
      b.raw(1, *a0, *e1);
      const Exact q0 = {false, xa.sig * b0.sig, xa.exp + b0.exp}, q1 = {false, xa.sig, xa.exp + b1.exp};
      const auto e = encode(fd, add(q0, q1));
      if (!e) continue;
      const std::string note = fmt::format("({}) ({}) + ({}) ({})", show(xa), show(b0), show(xa), show(b1));
      cs.push(fd, b.done(note), *e, add(round_d(cfg, q0), round_d(cfg, q1)), add(round_a(cfg, q0), round_a(cfg, q1)));
      break;
    }
  }

  // (c) x_a (1 + u) + x_a (1 - u), u the ulp of b at 1: 2 x_a exactly, while each product is
  // long and, rounded first, the two roundings add up (they separate where (b) cannot: d as
  // narrow as a).
  static void add_opposite_ulps(const MmaConfig& cfg, Exact xa, Cases& cs) {
    if (cfg.k < 2) return;
    const Format &fa = *cfg.a, &fb = *cfg.b, &fd = *cfg.d;
    const Exact u = pow2(1 - fb.precision()), one = pow2(0);
    const Exact b0 = add(one, u), b1 = add(one, {true, u.sig, u.exp});
    const auto a0 = encode(fa, xa), e0 = encode(fb, b0), e1 = encode(fb, b1);
    const Exact q0 = {false, xa.sig * b0.sig, xa.exp + b0.exp}, q1 = {false, xa.sig * b1.sig, xa.exp + b1.exp};
    const auto e = encode(fd, add(q0, q1));
    if (!(a0 && e0 && e1 && e)) return;
    CaseBuilder b(cfg);
    b.raw(0, *a0, *e0);
    b.raw(1, *a0, *e1);
    const std::string note = fmt::format("({}) ({}) + ({}) ({})", show(xa), show(b0), show(xa), show(b1));
    cs.push(fd, b.done(note), *e, add(round_d(cfg, q0), round_d(cfg, q1)), add(round_a(cfg, q0), round_a(cfg, q1)));
  }

  // `as`: the references the outputs match; `bits`: the bits of the product (x_a)^2 = p.
  static void judge(const std::vector<std::string>& as, Exact xa, Exact p, int bits, audit::Finding& f) {
    const bool is_exact = !as.empty() && as.front() == "exact products";
    f.parameters["matching"] = as;
    if (is_exact && as.size() > 1) {
      f.verdict = "PRODUCTS: exact and rounded products give the same outputs here (" + join(as) + ")";
      return;
    }
    f.parameters["exact_products"] = is_exact;
    f.verdict =
        is_exact
            ? fmt::format("PRODUCTS: exact: ({})^2 = {} needs {} bits and is kept", show(xa), show(p), bits)
            : "PRODUCTS: not kept exactly (" + (as.empty() ? std::string("as none of the references") : join(as)) + ")";
  }
};

// How often the accumulation rounds: its shape (questions.hpp) in words.
struct Roundings {
  Accumulation accumulation;
};

std::string say_roundings(const Roundings& r) {
  const Accumulation& a = r.accumulation;
  switch (a.algorithm) {
    case MmaAlgorithm::sfma: return "one per product (an FMA chain)";
    case MmaAlgorithm::gps: return "one per product and per sum (binary32)";
    case MmaAlgorithm::tree: return "one per sum of the tree " + a.tree->text();
    default:
      return a.block == a.k ? std::string("one, of the fused sum")
                            : fmt::format("one per fused block of {} products", a.block);
  }
}
json answer_fields(const Roundings& r) { return {{"roundings", say_roundings(r)}}; }

MmaQuestion order_question() {
  return {{"ROUNDINGS", "how often the accumulation rounds", audit::typed(say_roundings)},
          [](const MmaConfig& cfg, const DotConfig& c) { return audit::Answer(Roundings{accumulation(cfg, c)}); }};
}

// ---------------------------------------------------------------------------------------------
class OrderProbe final : public ProbeBase {
 public:
  OrderProbe()
      : ProbeBase("mma.fasi.order", "Number of roundings and order of accumulation: 1 and K copies of 2^-(F+1)",
                  std::string(kFasi) + "3.1.2", order_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    const Format& fd = *cfg.d;
    auto kept = kept_bits(device, cfg);
    if (!kept) return audit::failed(kept.error());
    const Exact y = pow2(-(kept->F + 1));
    Exact exact = pow2(0);
    for (int k = 0; k < K; ++k) exact = add(exact, y);
    const std::uint64_t one = *encode(fd, pow2(0));
    const std::uint64_t rz = round_to(fd, fd.man_bits, Rounding::rz, exact),
                        rne = round_to(fd, fd.man_bits, Rounding::rne, exact);
    if (rz == one && rne == one)
      return audit::unsupported(
          fmt::format("d cannot show {} copies of {} beside 1 ({})", K, show(y), kept_note(*kept)));
    std::vector<DotCase> cases;
    for (int pos = 0; pos <= K; ++pos) {
      CaseBuilder b(cfg);
      for (int s = 0; s <= K; ++s) b.set(s, s == pos ? pow2(0) : y);
      if (b.ok())
        cases.push_back(b.done(
            fmt::format("1 at {}, {} elsewhere", pos == K ? std::string("c") : "p" + std::to_string(pos), show(y))));
    }
    if (cases.empty()) return audit::unsupported("1 and " + show(y) + " cannot be expressed in these formats");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    std::vector<std::string> exact_at;
    for (std::size_t i = 0; i < cases.size(); ++i)
      if ((*out)[i] != one) exact_at.push_back(cases[i].note.substr(0, cases[i].note.find(',')));
    f.parameters["aligned_to_largest"] = exact_at.empty();
    f.parameters["small_summands_kept"] = exact_at;
    f.message = kept_note(*kept);
    f.verdict = exact_at.empty()
                    ? fmt::format(
                          "ORDER: 1 + {} x {} gives 1 wherever the 1 is: every summand is aligned to the largest "
                          "before it is added (up to {} rounding errors, none summed before alignment)",
                          K, show(y), K)
                    : fmt::format(
                          "ORDER: 1 + {} x {} keeps the small summands with {}: they are summed before they "
                          "meet the 1",
                          K, show(y), join(exact_at));
    return f;
  }
};

// ---------------------------------------------------------------------------------------------
class AccumulationRoundingProbe final : public ProbeBase {
 public:
  AccumulationRoundingProbe()
      : ProbeBase("mma.fasi.rounding", "Rounding of the accumulation on both signs: 2 + 0.75 ulp(2)",
                  std::string(kFasi) + "3.1.3",
                  rounding_question("ACCUMULATION ROUNDING", "the rounding of the accumulation")) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format& fd = *cfg.d;
    const Exact small = {false, 3, -1 - fd.man_bits};  // 0.75 ulp(2) in d
    std::vector<DotCase> cases;
    for (bool negative : {false, true}) {
      CaseBuilder b(cfg);
      b.product(0, pow2(1, negative));
      Exact s = small;
      s.neg = negative;
      if (cfg.k >= 2) b.product(1, s);
      if (!b.ok() || cfg.k < 2) {
        b = CaseBuilder(cfg);
        b.product(0, pow2(1, negative));
        b.c(s);
      }
      if (b.ok())
        cases.push_back(b.done(negative ? fmt::format("-2 - ({})", show(small)) : fmt::format("2 + {}", show(small))));
    }
    if (cases.size() < 2) return audit::unsupported("2 and 0.75 ulp(2) cannot be expressed in these formats");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    const Exact up = add(pow2(1), pow2(1 - fd.man_bits));
    const bool pos_up = (*out)[0] == *encode(fd, up);
    const bool neg_away = (*out)[1] == *encode(fd, neg(up));
    const std::string mode = !pos_up && !neg_away  ? "toward zero"
                             : !pos_up && neg_away ? "down"
                             : pos_up && !neg_away ? "up"
                                                   : "to nearest or away";
    f.parameters["rounding"] = mode;
    f.verdict = fmt::format("ACCUMULATION ROUNDING: {} ({} -> {}, {} -> {})", mode, cases[0].note, show(fd, (*out)[0]),
                            cases[1].note, show(fd, (*out)[1]));
    f.message =
        "Valpey et al. (4.2) show that bits shifted out at alignment are dropped: truncation, which this test "
        "cannot tell from round-toward-zero (see mma.valpey.truncation)";
    return f;
  }
};

// ---------------------------------------------------------------------------------------------
class OutputRoundingProbe final : public ProbeBase {
 public:
  OutputRoundingProbe()
      : ProbeBase("mma.fasi.output_rounding",
                  "Rounding of a narrow (binary16) output: 0.75, 0.25, 0.5 and 1.5 times d's smallest subnormal",
                  std::string(kFasi) + "3.1.3", rounding_question("OUTPUT ROUNDING", "the rounding of the output")) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format& fd = *cfg.d;
    if (!fd.has_subnormals()) return audit::unsupported("d has no subnormals");
    const int q = fd.quantum_min();  // the smallest subnormal is 2^q
    struct Row {
      const char* text;
      std::vector<Exact> terms;
    };
    const std::vector<Row> rows = {{"0.75", {pow2(q - 1), pow2(q - 2)}},
                                   {"0.25", {pow2(q - 2)}},
                                   {"0.5", {pow2(q - 1)}},
                                   {"1.5", {pow2(q), pow2(q - 1)}}};
    std::vector<DotCase> cases;
    std::vector<Exact> exact;
    for (const Row& r : rows)
      for (bool negative : {false, true}) {
        if (int(r.terms.size()) > cfg.k) continue;
        CaseBuilder b(cfg);
        Exact sum{};
        for (std::size_t i = 0; i < r.terms.size(); ++i) {
          Exact t = r.terms[i];
          t.neg = negative;
          b.product(int(i), t);
          sum = add(sum, t);
        }
        if (b.ok()) {
          cases.push_back(b.done(fmt::format("{}{} x 2^{}", negative ? "-" : "", r.text, q)));
          exact.push_back(sum);
        }
      }
    if (cases.size() < 4) return audit::unsupported(fmt::format("products cannot reach 2^{} in these formats", q - 2));
    std::vector<Reference> refs;
    for (Rounding r : model::all_roundings) {
      Reference ref{std::string(model::name(r)), {}};
      for (const Exact& v : exact) ref.outputs.push_back(round_to(fd, fd.man_bits, r, v));
      refs.push_back(std::move(ref));
    }
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    std::vector<std::string> rows_out;
    for (std::size_t i = 0; i < cases.size(); ++i) rows_out.push_back(cases[i].note + " -> " + show(fd, (*out)[i]));
    const std::vector<std::string> modes = matching(*out, refs);
    f.parameters["rounding"] = modes;
    f.message = join(rows_out, "; ", "; ");
    f.verdict =
        modes.empty()
            ? fmt::format("OUTPUT ROUNDING ({}): no rounding of the exact sums gives the subnormal results", fd.name)
            : fmt::format("OUTPUT ROUNDING ({}): {} (0.75 x 2^{} -> {})", fd.name, join(modes, ", ", " or "), q,
                          show(fd, (*out)[0]));
    return f;
  }
};

// ---------------------------------------------------------------------------------------------
class AlignmentBitsProbe final : public ProbeBase {
 public:
  AlignmentBitsProbe()
      : ProbeBase("mma.fasi.alignment_bits", "Extra bits in the alignment of significands: 1 + (-(1 - 2^-t))",
                  std::string(kFasi) + "3.1.4", kept_bits_question("ALIGNMENT")) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format &fa = *cfg.a, &fb = *cfg.b, &fc = *cfg.c, &fd = *cfg.d;
    const int pc = fc.precision(), pp = fa.precision() + fb.precision();
    std::vector<DotCase> cases;
    std::vector<int> ts;
    for (int t = 1; t <= std::max(pc, pp) && t <= 60; ++t) {
      const Exact x = {true, (std::uint64_t{1} << t) - 1, -t};  // -(1 - 2^-t)
      CaseBuilder b(cfg);
      if (t <= pc) {
        b.product(0, pow2(0));
        b.c(x);
      } else {
        b.c(pow2(0));
        b.product(0, x);
      }
      if (!b.ok() || !encode(fd, pow2(-t))) continue;
      cases.push_back(b.done(t <= pc ? fmt::format("1 + c, c = {}", show(x)) : fmt::format("c = 1, p0 = {}", show(x))));
      ts.push_back(t);
    }
    if (cases.empty()) return audit::unsupported("1 - 2^-t cannot be expressed in these formats");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    int kept = 0;
    std::size_t first_bad = cases.size();
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if ((*out)[i] == *encode(fd, pow2(-ts[i]))) {
        if (first_bad == cases.size()) kept = ts[i];
      } else if (first_bad == cases.size()) {
        first_bad = i;
      }
    }
    f.parameters["kept_bits"] = kept;
    if (first_bad == cases.size()) {
      f.parameters["guard_bits"] = nullptr;
      f.verdict = fmt::format(
          "ALIGNMENT: 1 - (1 - 2^-t) exact for every t up to {}: at least {} bits kept below the "
          "leading bit of the largest summand",
          kept, kept);
      return f;
    }
    const Exact got = decode(fd, (*out)[first_bad]);
    const int t = ts[first_bad];
    f.verdict = fmt::format(
        "ALIGNMENT: 1 - (1 - 2^-{}) gives {}: {} bits kept below the leading bit of the largest "
        "summand, no guard bit beyond them{}",
        t, show(fd, (*out)[first_bad]), kept,
        got.sig != 0 && lead(got) == -kept && t == kept + 1 ? " (relative error 1)" : "");
    return f;
  }
};

// ---------------------------------------------------------------------------------------------
// Normalization in addition and in subtraction: the output against a fused sum (model FDA with the
// measured F, rounding toward zero or to nearest) and IEEE additions that normalize every partial
// sum. Carry-out bits and monotonicity: the outputs against the exact sums.
class NormalizationProbe final : public ProbeBase {
 public:
  explicit NormalizationProbe(bool subtraction)
      : ProbeBase(subtraction ? "mma.fasi.normalization_sub" : "mma.fasi.normalization_add",
                  subtraction ? "Normalization in subtraction: 1 + (-(1 - 2^-q)) - 2^-(F+1)"
                              : "Normalization in addition: (1 - 2^-q) + K x 2^-q",
                  std::string(kFasi) + "3.1.4",
                  normalization_question(subtraction ? "NORMALIZATION IN SUBTRACTION" : "NORMALIZATION")),
        sub_(subtraction) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    const Format &fc = *cfg.c, &fd = *cfg.d;
    auto kept = kept_bits(device, cfg);
    if (!kept) return audit::failed(kept.error());
    const int q = std::min(fc.precision(), kept->F + 1);
    const Exact c = {sub_, (std::uint64_t{1} << q) - 1, -q};  // +-(1 - 2^-q)
    std::vector<Exact> terms = {c};
    CaseBuilder b(cfg);
    b.c(c);
    if (!sub_) {
      for (int k = 0; k < K; ++k) {
        b.product(k, pow2(-q));
        terms.push_back(pow2(-q));
      }
    } else {
      if (K < 2) return audit::unsupported("K = 1 leaves no room for 1 and -2^-(F+1)");
      const Exact y = pow2(-(kept->F + 1), true);
      b.product(0, pow2(0));
      b.product(1, y);
      terms = {pow2(0), c, y};
    }
    if (!b.ok()) return audit::unsupported("the summands cannot be expressed in these formats");
    const DotCase x = b.done(sub_ ? fmt::format("c = {}, p0 = 1, p1 = {}", show(c), show(pow2(-(kept->F + 1), true)))
                                  : fmt::format("c = {}, {} products {}", show(c), K, show(pow2(-q))));
    // The fused sum with the measured F, normalized once at the end, against IEEE additions that
    // normalize every partial sum (Fasi et al.'s two readings).
    const std::uint64_t fz = predict(model::Dot(fused(cfg, kept->F, Rounding::rz)), x),
                        fn = predict(model::Dot(fused(cfg, kept->F, Rounding::rne)), x);
    const std::uint64_t nrz = ieee_sum(fd, Rounding::rz, terms), nrne = ieee_sum(fd, Rounding::rne, terms);
    std::vector<Reference> refs = {{"not normalized (fused, rounded toward zero)", {fz}},
                                   {"not normalized (fused, rounded to nearest)", {fn}},
                                   {"normalized after each addition (toward zero)", {nrz}},
                                   {"normalized after each addition (to nearest)", {nrne}}};
    // Fasi's other order: (-2^-(F+1) + 1) + c.
    if (sub_)
      refs.push_back(
          {"normalized, smallest first (toward zero)", {ieee_sum(fd, Rounding::rz, {terms[2], terms[0], terms[1]})}});
    if ((fz == nrz || fz == nrne) && (fn == nrz || fn == nrne))
      return audit::unsupported("normalized and unnormalized sums agree here (" + kept_note(*kept) + ")");
    audit::Finding f;
    auto outs = observe(device, cfg, {x}, f);
    if (!outs) return audit::failed(outs.error());
    const std::vector<std::string> as = matching(*outs, refs);
    const auto any_of = [&](std::string_view prefix) {
      return std::any_of(as.begin(), as.end(), [&](const std::string& n) { return n.starts_with(prefix); });
    };
    const bool normalized = any_of("normalized"), unnormalized = any_of("not normalized");
    f.parameters["normalized_partial_sums"] = normalized && !unnormalized   ? nlohmann::json(true)
                                              : unnormalized && !normalized ? nlohmann::json(false)
                                                                            : nlohmann::json(nullptr);
    f.parameters["matching"] = as;
    f.message = kept_note(*kept);
    const std::string what = sub_ ? "NORMALIZATION IN SUBTRACTION" : "NORMALIZATION";
    const std::string out = show(fd, (*outs)[0]);
    f.verdict = unnormalized && !normalized
                    ? fmt::format(
                          "{}: only the final sum is normalized: {} gives {} (normalizing each partial sum "
                          "gives {})",
                          what, x.note, out, show(fd, nrz))
                : normalized && !unnormalized
                    ? fmt::format("{}: partial sums are normalized: {} gives {}", what, x.note, out)
                    : fmt::format("{}: {} gives {} ({})", what, x.note, out,
                                  as.empty() ? "as none of the references" : join(as));
    return f;
  }

 private:
  bool sub_;
};

class CarryBitsProbe final : public ProbeBase {
 public:
  CarryBitsProbe()
      : ProbeBase("mma.fasi.carry_bits", "Extra bits for carry-out: 2 bits, then 3 bits", std::string(kFasi) + "3.1.4",
                  carries_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    const Format &fc = *cfg.c, &fd = *cfg.d;
    if (K < 4) return audit::unsupported("the carry tests need four products");
    auto kept = kept_bits(device, cfg);
    if (!kept) return audit::failed(kept.error());
    std::vector<DotCase> cases;
    std::vector<std::uint64_t> exact;  // one per case
    // Two bits: c = 1 + 2^-(f-1) + 2^-f, products 1, 1, 1, 2^-f in every order: 4 + 2^-(f-2).
    const int f2 = std::min({kept->F, fc.precision() - 1, fd.man_bits});
    if (f2 >= 2) {
      const Exact c = {false, (std::uint64_t{1} << f2) + 3, -f2};
      const Exact sum = {false, (std::uint64_t{1} << f2) + 1, 2 - f2};
      for (int small = 0; small < 4; ++small) {
        CaseBuilder b(cfg);
        b.c(c);
        std::vector<Exact> terms = {c};
        for (int k = 0; k < 4; ++k) {
          const Exact v = k == small ? pow2(-f2) : pow2(0);
          b.product(k, v);
          terms.push_back(v);
        }
        const auto e = encode(fd, sum);
        if (!b.ok() || !e) continue;
        const std::string note = fmt::format("2 bits: c = {}, 2^-{} at p{}", show(c), f2, small);
        cases.push_back(b.done(note));
        exact.push_back(*e);
      }
    }
    // Three bits: 1.875 + 1 + 1.5 + 1.75 + 1.875 = 8; two carry bits would wrap it to 0.
    {
      CaseBuilder b(cfg);
      b.c({false, 15, -3});
      b.product(0, pow2(0));
      b.product(1, {false, 3, -1});
      b.product(2, {false, 7, -2});
      b.product(3, {false, 15, -3});
      if (b.ok()) {
        const std::string note = "3 bits: 1.875 + 1 + 1.5 + 1.75 + 1.875";
        cases.push_back(b.done(note));
        exact.push_back(*encode(fd, pow2(3)));
      }
    }
    if (cases.empty()) return audit::unsupported("the carry sums cannot be expressed in these formats");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    int two_ok = 0, two_n = 0;
    std::optional<bool> three;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const bool ok = (*out)[i] == exact[i];
      if (cases[i].note.starts_with("2 bits")) {
        ++two_n;
        two_ok += ok;
      } else {
        three = ok;
      }
    }
    f.parameters["two_bits"] = two_n ? nlohmann::json(two_ok == two_n) : nlohmann::json(nullptr);
    f.parameters["three_bits"] = three ? nlohmann::json(*three) : nlohmann::json(nullptr);
    std::vector<std::string> parts;
    if (two_n)
      parts.push_back(two_ok == two_n ? fmt::format("at least 2 carry-out bits ({} + 1 + 1 + 1 + 2^-{} = {} in all 4 "
                                                    "orders)",
                                                    show(Exact{false, (std::uint64_t{1} << f2) + 3, -f2}), f2,
                                                    show(Exact{false, (std::uint64_t{1} << f2) + 1, 2 - f2}))
                                      : fmt::format("carries lost in {} of 4 orders", two_n - two_ok));
    if (three)
      parts.push_back(*three ? "a third one (1.875 + 1 + 1.5 + 1.75 + 1.875 = 8, not 0)"
                             : "no third one (1.875 + 1 + 1.5 + 1.75 + 1.875 gives " +
                                   show(fd, (*out)[cases.size() - 1]) + ")");
    f.verdict = "CARRIES: " + join(parts, "; ", "; ");
    f.message = kept_note(*kept);
    return f;
  }
};

// Whether the dot product is monotone: guaranteed unless a fused sum drops bits at alignment.
struct Monotone {
  bool guaranteed = true;
};

std::string say_monotone(const Monotone& m) {
  return m.guaranteed ? "yes: every step is a monotone rounding"
                      : "not guaranteed: bits shifted out at alignment depend on the largest summand";
}
json answer_fields(const Monotone& m) { return {{"monotone", say_monotone(m)}}; }

MmaQuestion monotonicity_question() {
  return {{"MONOTONICITY", "the monotonicity of the dot product", audit::typed(say_monotone)},
          [](const MmaConfig&, const DotConfig& c) { return audit::Answer(Monotone{!is_fused(c.algorithm)}); }};
}

class MonotonicityProbe final : public ProbeBase {
 public:
  MonotonicityProbe()
      : ProbeBase("mma.fasi.monotonicity",
                  "Monotonicity of the dot product: c = 1 - 2^-q against c = 1 beside K x 2^-(F+1)",
                  std::string(kFasi) + "3.1.4", monotonicity_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    const Format &fa = *cfg.a, &fb = *cfg.b, &fc = *cfg.c, &fd = *cfg.d;
    auto kept = kept_bits(device, cfg);
    if (!kept) return audit::failed(kept.error());
    // Pairs (x, x') with x <= x' summand by summand; the sum is monotonic if d(x) <= d(x').
    std::vector<DotCase> cases;
    std::vector<std::string> labels;
    {
      // Fasi's pair: c just below 1, then c = 1, with K copies of 2^-(F+1).
      const int q = std::min(fc.precision(), kept->F + 1);
      const Exact y = pow2(-(kept->F + 1));
      bool ok = true;
      std::vector<DotCase> pair;
      for (const Exact& c : {Exact{false, (std::uint64_t{1} << q) - 1, -q}, pow2(0)}) {
        CaseBuilder b(cfg);
        b.c(c);
        for (int k = 0; k < K; ++k) b.product(k, y);
        ok &= b.ok();
        pair.push_back(b.done(fmt::format("c = {}, {} products {}", show(c), K, show(y))));
      }
      if (ok) {
        cases.insert(cases.end(), pair.begin(), pair.end());
        labels.push_back("c");
      }
    }
    {
      // The same product 2.25 as 1.5 x 1.5 (aligned at 2^0) and as 1.125 x 2 (aligned at 2^1),
      // with 2^-F beside it in every other summand: equal summands, different sums.
      const auto a1 = encode(fa, {false, 3, -1}), b1 = encode(fb, {false, 3, -1});
      const auto a2 = encode(fa, {false, 9, -3}), b2 = encode(fb, pow2(1));
      const Exact y = pow2(-kept->F);
      if (a1 && b1 && a2 && b2 && K >= 2) {
        bool ok = true;
        std::vector<DotCase> pair;
        for (int v = 0; v < 2; ++v) {
          CaseBuilder b(cfg);
          b.raw(0, v ? *a2 : *a1, v ? *b2 : *b1);
          for (int k = 1; k < K; ++k) b.product(k, y);
          if (!b.c(y)) {
            b = CaseBuilder(cfg);
            b.raw(0, v ? *a2 : *a1, v ? *b2 : *b1);
            for (int k = 1; k < K; ++k) b.product(k, y);
          }
          ok &= b.ok();
          pair.push_back(b.done(fmt::format("2.25 as {}, {} beside it", v ? "1.125 x 2" : "1.5 x 1.5", show(y))));
        }
        if (ok) {
          cases.insert(cases.end(), pair.begin(), pair.end());
          labels.push_back("factoring");
        }
      }
    }
    if (cases.empty()) return audit::unsupported("the summands cannot be expressed in these formats");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    const auto& o = *out;
    std::vector<std::string> shown, held;
    for (std::size_t p = 0; p < labels.size(); ++p) {
      const std::uint64_t x = o[2 * p], y = o[2 * p + 1];
      const bool finite =
          model::is_finite_nonzero(model::classify(fd, x)) && model::is_finite_nonzero(model::classify(fd, y));
      const Exact diff = add(decode(fd, x), neg(decode(fd, y)));
      const std::string text =
          fmt::format("{} gives {}, {} gives {}", cases[2 * p].note, show(fd, x), cases[2 * p + 1].note, show(fd, y));
      (finite && diff.sig != 0 && !diff.neg ? shown : held).push_back(text);
    }
    f.parameters["monotonic"] = shown.empty();
    f.message = kept_note(*kept) + (held.empty() ? "" : "; monotonic here: " + join(held, "; ", "; "));
    f.verdict = shown.empty() ? "MONOTONICITY: not violated by the pairs tried (" + join(held, "; ", "; ") + ")"
                              : "MONOTONICITY: violated: " + join(shown, "; ", "; ");
    return f;
  }
};

}  // namespace

void add_fasi_probes(std::vector<const audit::MmaProbe*>& out) {
  static const ExactProductsProbe exact;
  static const OrderProbe order;
  static const AccumulationRoundingProbe rounding;
  static const OutputRoundingProbe output;
  static const AlignmentBitsProbe alignment;
  static const NormalizationProbe add_norm(false), sub_norm(true);
  static const CarryBitsProbe carries;
  static const MonotonicityProbe monotonicity;
  for (const audit::MmaProbe* p : std::initializer_list<const audit::MmaProbe*>{
           &exact, &order, &rounding, &output, &alignment, &add_norm, &sub_norm, &carries, &monotonicity})
    out.push_back(p);
}

}  // namespace gp::mma
