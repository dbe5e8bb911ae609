// Paranoia's core milestones for GPU arithmetic (Kahan's Paranoia in Karpinski's C version, and
// the subset Hillesland and Lastra ran on GPUs, whose 7800GTX log is appendix A of Daumas, da
// Graca, Defour 2006): radix and precision (U1, U2, F9, B9), comparison against subtraction,
// guard digits of *, / and -, whether *, / and +/- are chopped, correctly rounded or neither,
// the sticky bit, and commutativity of *. Each probe states the two hypotheses Paranoia tells
// apart, "ieee" (correctly rounded, to nearest even) and "chopped" (toward zero), with their
// predictions as observations; the verdict applies Paranoia's own criteria to the outputs.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

constexpr std::string_view kParanoia = "Paranoia (Kahan; Karpinski, Byte 1985), C version";
constexpr std::string_view kGpuLog =
    "GPU Paranoia (Hillesland and Lastra 2004); 7800GTX log in Daumas, da Graca, Defour 2006, appendix A";

class ParanoiaProbe : public audit::ScalarProbe {
 public:
  ParanoiaProbe(std::string_view id, std::string_view title, std::string_view source)
      : id_(id), title_(title), source_(source) {}
  std::string_view id() const override { return id_; }
  std::string_view title() const override { return title_; }
  std::string_view source() const override { return source_; }
  bool applies(const Format& f) const override { return paranoid_format(f); }
  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    return guarded([&] { return body(device, f, ctx); });
  }

 protected:
  virtual audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const = 0;

 private:
  std::string_view id_, title_, source_;
};

u64 magnitude(const Format& f, u64 x) { return x & ~f.sign_mask(); }

Item single(const Bench& b, Node op, u64 x, u64 y, std::string note) {
  return Item{&b.op(op), {x, y}, std::move(note)};
}

// " (consistent with: chopped, 2 guard bits, no sticky)" when only guard-bit adders explain the outputs.
std::string adder_hint(const std::vector<std::string>& consistent) {
  for (const std::string& h : consistent)
    if (h == "ieee" || h == "chopped") return "";
  return consistent.empty() ? "" : " (consistent with: " + join(consistent, "; ") + ")";
}

// Paranoia's W = Radix^k is built in the device's registers (W = W * Radix there): here as the
// product of two powers of 2 of the format, so that registers wider than the format show their
// digits. The largest k tried, and the operands (2^a, 2^b, y) of W = 2^a * 2^b = 2^k.
int max_digits(const Format& f) { return std::min(2 * (f.emax() - 1), 66); }
std::vector<u64> w_operands(const Consts& c, int k, u64 y) {
  const int a = std::min(k, c.f.emax() - 1);
  return {c.v(1, a), c.v(1, k - a), y};
}

// ---------------------------------------------------------------------------------------------
// Radix (milestone 20): W doubles until ((W + 1) - W) - 1 is no longer below 1 in magnitude; the
// radix is the first nonzero (W + Y) - W for Y = 1, 2, 4, ...

class RadixProbe final : public ParanoiaProbe {
 public:
  RadixProbe() : ParanoiaProbe("scalar.paranoia.radix", "Radix (Paranoia milestone 20)", kParanoia) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    backends::ExprBuilder e1(f, 3);
    {
      const int w = e1.op(Node::mul, e1.in(0), e1.in(1)), one = e1.in(2);
      e1.op(Node::sub, e1.op(Node::sub, e1.op(Node::add, w, one), w), one);
    }
    const Expr lost = e1.done();
    const int kmax = max_digits(f);
    std::vector<Item> items;
    for (int k = 1; k <= kmax; ++k)
      items.push_back({&lost, w_operands(c, k, c.one), fmt::format("((W + 1) - W) - 1, W = 2^{}", k)});
    const std::vector<u64> out = b.run(items);
    int kw = 0;
    for (int k = 1; k <= kmax && kw == 0; ++k) {
      const u64 y = out[std::size_t(k - 1)];
      if (is_nan(f, y) || compare(f, magnitude(f, y), c.one) >= 0) kw = k;
    }
    fi.parameters["consistent"] = b.consistent();
    if (kw == 0) {
      fi.verdict = fmt::format("RADIX: FAILURE: ((W + 1) - W) - 1 stays below 1 in magnitude up to W = 2^{}", kmax);
      return fi;
    }
    backends::ExprBuilder e2(f, 3);
    {
      const int w = e2.op(Node::mul, e2.in(0), e2.in(1)), y = e2.in(2);
      e2.op(Node::sub, e2.op(Node::add, w, y), w);
    }
    const Expr gap = e2.done();
    items.clear();
    for (int j = 0; j <= 6; ++j)
      items.push_back({&gap, w_operands(c, kw, c.v(1, j)), fmt::format("(W + 2^{}) - W, W = 2^{}", j, kw)});
    const std::vector<u64> out2 = b.run(items);
    std::optional<u64> radix;
    for (u64 r : out2)
      if (!radix && compare(f, r, c.zero) != 0) radix = r;
    fi.parameters["w"] = fmt::format("2^{}", kw);
    fi.parameters["consistent"] = b.consistent();
    if (!radix) {
      fi.parameters["radix"] = nullptr;
      fi.verdict = fmt::format("RADIX: FAILURE: (W + Y) - W is zero for every Y up to 64 (W = 2^{})", kw);
      return fi;
    }
    fi.parameters["radix"] = show(f, *radix);
    if (same_value(f, *radix, c.two)) {
      fi.verdict = fmt::format("RADIX: 2 (W = 2^{} is the first power of 2 with ((W + 1) - W) - 1 != 0)", kw);
    } else {
      fi.verdict = fmt::format("RADIX: FAILURE: radix found to be {}, not 2 (W = 2^{})", show(f, *radix), kw);
    }
    return fi;
  }
};

// ---------------------------------------------------------------------------------------------
// Precision (milestones 20 and 30), U1 and U2 recalculated from 4/3 and 2/3, and the log's
// "Verifying U1 U2 F9 and B9" (which also fails on incomplete carry propagation).

class PrecisionProbe final : public ParanoiaProbe {
 public:
  PrecisionProbe()
      : ParanoiaProbe("scalar.paranoia.precision", "Precision, U1, U2, F9 and B9 (Paranoia milestones 20, 30)",
                      kParanoia) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    const int kmax = max_digits(f);
    const int precision = measured_digits(b, c, kmax);
    // Floors of the recalculation: the measured digits, unless they do not fit the format.
    const int p = precision > 1 && precision <= f.precision() ? precision : f.precision();
    const u64 u1_digits = c.v(1, -p), u2_digits = c.v(1, -(p - 1));
    const u64 u2 = recalculated_u2(b, c, u2_digits);
    const u64 u1 = recalculated_u1(b, c, u1_digits);
    const std::vector<Check> verify = verified_constants(b, c);

    fi.parameters["precision"] = precision > 0 ? nlohmann::json(precision) : nlohmann::json(nullptr);
    fi.parameters["format_precision"] = f.precision();
    fi.parameters["u1"] = show_pow2(f, u1);
    fi.parameters["u2"] = show_pow2(f, u2);
    fi.parameters["verify"] = checks_json(verify);
    fi.parameters["consistent"] = b.consistent();
    fi.verdict = precision_verdict(c, precision, kmax, u1, u2, verify);
    return fi;
  }

 private:
  // Digits: the first W = 2^k with (W + 1) - W != 1 (k, or 0 where none is up to 2^kmax).
  static int measured_digits(Bench& b, const Consts& c, int kmax) {
    const Format& f = c.f;
    backends::ExprBuilder e1(f, 3);
    {
      const int w = e1.op(Node::mul, e1.in(0), e1.in(1)), one = e1.in(2);
      e1.op(Node::sub, e1.op(Node::add, w, one), w);
    }
    const Expr carry = e1.done();
    std::vector<Item> items;
    for (int k = 1; k <= kmax; ++k)
      items.push_back({&carry, w_operands(c, k, c.one), fmt::format("(W + 1) - W, W = 2^{}", k)});
    const std::vector<u64> out = b.run(items);
    int precision = 0;
    for (int k = 1; k <= kmax && precision == 0; ++k)
      if (!same_value(f, out[std::size_t(k - 1)], c.one)) precision = k;
    return precision;
  }

  // U2 from 4/3: X = |((1/2 - (4/3 - 1)) * 2) - (4/3 - 1)|, then U2 = X; X = (1 + (U2/2 + 32 U2^2)) - 1
  // until U2 <= X or X <= 0.
  static u64 recalculated_u2(Bench& b, const Consts& c, u64 u2_digits) {
    const Format& f = c.f;
    backends::ExprBuilder e2(f, 4);
    {
      const int four = e2.in(0), three = e2.in(1), one = e2.in(2), half = e2.in(3);
      const int third = e2.op(Node::sub, e2.op(Node::div, four, three), one);
      const int f6 = e2.op(Node::sub, half, third);
      e2.op(Node::sub, e2.op(Node::add, f6, f6), third);
    }
    const Expr start2 = e2.done();
    backends::ExprBuilder e3(f, 4);
    {
      const int u = e3.in(0), half = e3.in(1), k32 = e3.in(2), one = e3.in(3);
      const int y = e3.op(Node::add, e3.op(Node::mul, half, u), e3.op(Node::mul, e3.op(Node::mul, k32, u), u));
      e3.op(Node::sub, e3.op(Node::add, one, y), one);
    }
    const Expr step2 = e3.done();
    const u64 k32 = c.v(32, 0);
    u64 x = magnitude(f, b.run1(start2, {c.v(4, 0), c.three, c.one, c.half}, "|(1/2 - (4/3 - 1)) * 2 - (4/3 - 1)|"));
    if (!is_nan(f, x) && compare(f, x, u2_digits) < 0) x = u2_digits;
    u64 u2 = x;
    for (int it = 0; it < 64; ++it) {
      u2 = x;
      x = b.run1(step2, {u2, c.half, k32, c.one}, "(1 + (U2/2 + 32 U2^2)) - 1");
      if (is_nan(f, x) || compare(f, u2, x) <= 0 || compare(f, x, c.zero) <= 0) break;
    }
    return u2;
  }

  // U1 from 2/3: X = |((2/3 - 1/2) * 2 - 1/2) + (2/3 - 1/2)|, then U1 = X; Y = 1/2 - (U1/2 + 32 U1^2);
  // X = 1/2 + (1/2 - (1/2 + Y)) until U1 <= X or X <= 0.
  static u64 recalculated_u1(Bench& b, const Consts& c, u64 u1_digits) {
    const Format& f = c.f;
    backends::ExprBuilder e4(f, 3);
    {
      const int two = e4.in(0), three = e4.in(1), half = e4.in(2);
      const int f6 = e4.op(Node::sub, e4.op(Node::div, two, three), half);
      const int third = e4.op(Node::add, f6, f6);
      e4.op(Node::add, e4.op(Node::sub, third, half), f6);
    }
    const Expr start1 = e4.done();
    backends::ExprBuilder e5(f, 3);
    {
      const int u = e5.in(0), half = e5.in(1), k = e5.in(2);
      int y = e5.op(Node::add, e5.op(Node::mul, half, u), e5.op(Node::mul, e5.op(Node::mul, k, u), u));
      y = e5.op(Node::sub, half, y);
      const int x1 = e5.op(Node::add, half, y);
      const int y1 = e5.op(Node::sub, half, x1);
      e5.op(Node::add, half, y1);
    }
    const Expr step1 = e5.done();
    const u64 k32 = c.v(32, 0);
    u64 x = magnitude(f, b.run1(start1, {c.two, c.three, c.half}, "|((2/3 - 1/2) * 2 - 1/2) + (2/3 - 1/2)|"));
    if (!is_nan(f, x) && compare(f, x, u1_digits) < 0) x = u1_digits;
    u64 u1 = x;
    for (int it = 0; it < 64; ++it) {
      u1 = x;
      x = b.run1(step1, {u1, c.half, k32}, "1/2 + (1/2 - (1/2 + (1/2 - (U1/2 + 32 U1^2))))");
      if (is_nan(f, x) || compare(f, u1, x) <= 0 || compare(f, x, c.zero) <= 0) break;
    }
    return u1;
  }

  // Verifying U1 U2 F9 and B9.
  static std::vector<Check> verified_constants(Bench& b, const Consts& c) {
    const Format& f = c.f;
    backends::ExprBuilder e6(f, 2);
    {
      const int h = e6.in(0), u = e6.in(1);
      e6.op(Node::add, e6.op(Node::sub, h, u), h);
    }
    const Expr f9_expr = e6.done();
    backends::ExprBuilder e7(f, 3);
    {
      const int two = e7.in(0), one = e7.in(1), u = e7.in(2);
      e7.op(Node::add, e7.op(Node::sub, e7.op(Node::sub, two, one), u), one);
    }
    const Expr b9_expr = e7.done();
    const std::vector<u64> v = b.run({
        single(b, Node::add, c.F9, c.U1, "F9 + U1"),
        single(b, Node::add, c.B9, c.U2, "B9 + U2"),
        {&f9_expr, {c.half, c.U1}, "(1/2 - U1) + 1/2"},
        {&b9_expr, {c.two, c.one, c.U2}, "((2 - 1) - U2) + 1"},
        single(b, Node::sub, c.F9, c.half, "F9 - 1/2"),
    });
    const std::vector<Check> verify = {
        {"F9 + U1 == 1", same_value(f, v[0], c.one)},
        {"B9 + U2 == 2", same_value(f, v[1], c.two)},
        {"(1/2 - U1) + 1/2 == F9", same_value(f, v[2], c.F9)},
        {"((2 - 1) - U2) + 1 == B9", same_value(f, v[3], c.B9)},
        {"F9 - 1/2 < 1/2", !is_nan(f, v[4]) && compare(f, v[4], c.half) < 0},
    };
    return verify;
  }

  static std::string precision_verdict(const Consts& c, int precision, int kmax, u64 u1, u64 u2,
                                       const std::vector<Check>& verify) {
    const Format& f = c.f;
    const bool digits_ok = precision == f.precision();
    const bool u1_ok = same_value(f, u1, c.U1), u2_ok = same_value(f, u2, c.U2);
    std::vector<std::string> parts;
    if (precision == 0)
      parts.push_back(fmt::format("FAILURE: (W + 1) - W == 1 up to W = 2^{}: precision not found", kmax));
    else if (precision > f.precision())
      parts.push_back(fmt::format("{} significant bits measured, the format has {} (registers wider than the format)",
                                  precision, f.precision()));
    else if (!digits_ok)
      parts.push_back(fmt::format("{} significant bits measured, the format has {}", precision, f.precision()));
    else
      parts.push_back(fmt::format("{} significant bits", precision));
    if (u1_ok && u2_ok)
      parts.push_back(fmt::format("U1 = {} and U2 = {} confirmed", show_pow2(f, u1), show_pow2(f, u2)));
    else
      parts.push_back(fmt::format("Paranoia's recalculation gives U1 = {}, U2 = {} (the format's are {} and {})",
                                  show_pow2(f, u1), show_pow2(f, u2), show_pow2(f, c.U1), show_pow2(f, c.U2)));
    if (all_pass(verify))
      parts.push_back("U1 U2 F9 B9 verified");
    else
      parts.push_back("FAILURE: U1 U2 F9 B9 not verified (can also mean incomplete carry propagation): " +
                      failures(verify));
    return "PRECISION: " + join(parts, "; ");
  }
};

// ---------------------------------------------------------------------------------------------
// Comparison against subtraction (milestones 30 and 35, line 2720; the log's FUZZY TEST and
// SUBTRACTION COMPARISON TESTS). Comparisons are made by the host on the bits the device returns,
// so what is tested is that X != Y never comes with X - Y == 0 (or of the wrong sign).

class CompareSubProbe final : public ParanoiaProbe {
 public:
  CompareSubProbe()
      : ParanoiaProbe("scalar.paranoia.compare_sub", "Comparison and subtraction consistent (Paranoia 30, 35, 2720)",
                      kParanoia) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    backends::ExprBuilder e1(f, 2);
    {
      const int x = e1.in(0), h = e1.in(1);
      e1.op(Node::sub, e1.op(Node::sub, x, h), h);
    }
    const Expr fuzzy = e1.done();
    backends::ExprBuilder e2(f, 2);
    {
      const int x = e2.in(0), y = e2.in(1);
      e2.op(Node::add, e2.op(Node::sub, x, y), e2.op(Node::sub, y, x));
    }
    const Expr sym = e2.done();

    // Fuzzy comparison: X != 1 or (X - 1/2) - 1/2 == 0.
    const std::vector<u64> fz = b.run({{&fuzzy, {c.F9, c.half}, "(F9 - 1/2) - 1/2"},
                                       {&fuzzy, {c.one_plus(1), c.half}, "((1 + U2) - 1/2) - 1/2"},
                                       {&fuzzy, {c.one, c.half}, "(1 - 1/2) - 1/2"}});
    std::vector<Check> fuzz = {
        {"X = F9: X != 1 and (X - 1/2) - 1/2 < 0", !is_nan(f, fz[0]) && compare(f, fz[0], c.zero) < 0},
        {"X = 1 + U2: X != 1 and (X - 1/2) - 1/2 > 0", !is_nan(f, fz[1]) && compare(f, fz[1], c.zero) > 0},
        {"X = 1: (X - 1/2) - 1/2 == 0", same_value(f, fz[2], c.zero)},
    };

    // Subtraction of distinct neighbours is nonzero and has the sign of the comparison.
    std::vector<Item> items = {single(b, Node::sub, c.F9, c.one, "F9 - 1"), single(b, Node::sub, c.one, c.F9, "1 - F9"),
                               single(b, Node::sub, c.one_plus(1), c.one, "(1 + U2) - 1"),
                               single(b, Node::sub, c.B9, c.two, "B9 - 2")};
    // Neighbours at 2^j whose difference 2^(j-P) is normal (underflow is the underflow probe's).
    const u64 mants[] = {c.one, c.one_plus(1), c.onehalf, c.two_minus(2)};
    for (int j : {std::max(-c.P - 2, f.emin() + c.P), -1, 0, 1, std::min(c.P + 2, f.emax() - 1)})
      for (u64 m : mants) {
        const u64 y = model::mul(f, {}, m, c.v(1, j)).bits;
        const u64 x = y + (u64{1} << f.pad_bits);  // the next value up
        items.push_back(single(b, Node::sub, x, y, fmt::format("next({0}) - {0}", show(f, y))));
        items.push_back(single(b, Node::sub, y, x, fmt::format("{0} - next({0})", show(f, y))));
      }
    const std::vector<u64> diffs = b.run(items);
    int inconsistent = 0;
    std::string first;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const int want = compare(f, items[i].x[0], items[i].x[1]);
      const bool ok = !is_nan(f, diffs[i]) && compare(f, diffs[i], c.zero) == want;
      if (!ok && inconsistent++ == 0) first = fmt::format("{} = {}", items[i].note, show(f, diffs[i]));
    }

    // (X - Y) + (Y - X) == 0 (line 2720), X = 1 + 1/2 (1 + 1/2), Y = (1 + U2) / 2, and more pairs.
    const std::vector<std::pair<u64, u64>> pairs = {{c.v(7, -2), model::mul(f, {}, c.one_plus(1), c.half).bits},
                                                    {c.one, c.F9},
                                                    {c.onehalf_plus(1), c.v(1, -c.P - 3)},
                                                    {c.three, c.one_plus(3)}};
    items.clear();
    for (const auto& [x, y] : pairs)
      items.push_back({&sym, {x, y}, fmt::format("(X - Y) + (Y - X), X = {}, Y = {}", show(f, x), show(f, y))});
    const std::vector<u64> s = b.run(items);
    int nonzero = 0;
    for (u64 r : s) nonzero += !same_value(f, r, c.zero);

    fi.parameters["fuzzy"] = checks_json(fuzz);
    fi.parameters["inconsistent_differences"] = inconsistent;
    fi.parameters["differences"] = items.size();
    fi.parameters["x_minus_y_plus_y_minus_x_zero"] = nonzero == 0;
    fi.parameters["consistent"] = b.consistent();
    std::vector<std::string> parts;
    parts.push_back(all_pass(fuzz) ? "No fuzziness detected in comparison"
                                   : "FAILURE: comparison is fuzzy: " + failures(fuzz));
    if (inconsistent == 0)
      parts.push_back("Comparison and Subtraction consistent");
    else
      parts.push_back(
          fmt::format("SERIOUS: comparison alleges X != Y although subtraction disagrees in {} cases "
                      "(first: {})",
                      inconsistent, first));
    parts.push_back(nonzero == 0 ? "(X - Y) + (Y - X) == 0" : "FLAW: (X - Y) + (Y - X) is nonzero");
    fi.verdict = "SUBTRACTION: " + join(parts, "; ");
    return fi;
  }
};

// ---------------------------------------------------------------------------------------------
// Guard digits (milestone 35 and the log's MULTIPLICATION / DIVISION / SUBTRACTION GUARD BIT TESTS).

class MulGuardProbe final : public ParanoiaProbe {
 public:
  MulGuardProbe()
      : ParanoiaProbe("scalar.mul.guard_digit", "Guard digit and accuracy of multiplication (Paranoia 35, line 1980)",
                      kGpuLog) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    const u64 two_two_u2 = c.v((std::int64_t{1} << c.P) + 1, 1 - c.P);  // 2 + 2 U2
    const std::vector<u64> o = b.run({
        single(b, Node::mul, c.F9, c.one, "F9 * 1"),
        single(b, Node::mul, c.one, c.F9, "1 * F9"),
        single(b, Node::mul, c.one_plus(1), c.two, "(1 + U2) * 2"),
        single(b, Node::mul, c.two, c.one_plus(1), "2 * (1 + U2)"),
        single(b, Node::mul, c.one_plus(2), c.one_plus(2), "(1 + 2 U2) * (1 + 2 U2) = 1 + 4 U2 + 4 U2^2"),
        single(b, Node::mul, c.one_minus(2), c.one_minus(2), "(1 - U2) * (1 - U2) = 1 - 2 U2 + U2^2"),
    });
    const auto within = [&](u64 x, u64 lo, u64 hi) {
      return !is_nan(f, x) && compare(f, lo, x) <= 0 && compare(f, x, hi) <= 0;
    };
    const std::vector<Check> guard = {
        {"F9 * 1 == F9", same_value(f, o[0], c.F9)},
        {"1 * F9 == F9", same_value(f, o[1], c.F9)},
        {"(1 + U2) * 2 == 2 + 2 U2", same_value(f, o[2], two_two_u2)},
        {"2 * (1 + U2) == 2 + 2 U2", same_value(f, o[3], two_two_u2)},
    };
    const std::vector<Check> accuracy = {
        {"|(1 + 2 U2)^2 - (1 + 4 U2)| <= U2", within(o[4], c.one_plus(3), c.one_plus(5))},
        {"|(1 - U2)^2 - (1 - 2 U2)| <= U1", within(o[5], c.one_minus(5), c.one_minus(3))},
    };
    fi.parameters["guard_digit"] = all_pass(guard);
    fi.parameters["tests"] = checks_json(guard);
    fi.parameters["accuracy"] = checks_json(accuracy);
    fi.parameters["consistent"] = b.consistent();
    std::string v = all_pass(guard)
                        ? "MULTIPLICATION: Seems to have guard bit"
                        : "MULTIPLICATION: SERIOUS: lacks a Guard Digit, so 1*X != X (" + failures(guard) + ")";
    v += all_pass(accuracy) ? "; accuracy tests passed"
                            : "; FAILURE: * gets too many final digits wrong (" + failures(accuracy) + ")";
    fi.verdict = v;
    return fi;
  }
};

class DivGuardProbe final : public ParanoiaProbe {
 public:
  DivGuardProbe()
      : ParanoiaProbe("scalar.div.guard_digit", "Guard digit of division (Paranoia 35, lines 2000-2070)", kGpuLog) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    backends::ExprBuilder e(f, 2);
    {
      const int r = e.in(0), one = e.in(1);
      e.op(Node::mul, e.op(Node::div, one, r), r);
    }
    const Expr inverse = e.done();
    const std::vector<u64> o = b.run({
        single(b, Node::div, c.one, c.one_minus(2), "1 / (1 - U2)"),
        single(b, Node::div, c.one, c.three, "1 / 3"),
        single(b, Node::div, c.three, c.v(9, 0), "3 / 9"),
        single(b, Node::div, c.v(9, 0), c.v(27, 0), "9 / 27"),
        single(b, Node::div, c.F9, c.one, "F9 / 1"),
        single(b, Node::div, c.one_plus(1), c.one, "(1 + U2) / 1"),
        single(b, Node::div, c.one, c.one_plus(1), "1 / (1 + U2)"),
        single(b, Node::div, c.two_minus(2), c.two, "((1 - U2) * 2) / 2"),
        single(b, Node::div, c.v((std::int64_t{1} << c.P) + 2, 1 - c.P), c.two, "((1 + 2 U2) * 2) / 2"),
        {&inverse, {c.two, c.one}, "(1 / 2) * 2"},
    });
    const std::vector<Check> guard = {
        {"1/(1 - U2) - (1 + U2) == 0", same_value(f, o[0], c.one_plus(1))},
        {"1/3 == 3/9", same_value(f, o[1], o[2]) && !is_nan(f, o[1])},
        {"3/9 == 9/27", same_value(f, o[2], o[3]) && !is_nan(f, o[2])},
    };
    const std::vector<Check> by_one = {
        {"F9/1 == F9", same_value(f, o[4], c.F9)},
        {"(1 + U2)/1 == 1 + U2", same_value(f, o[5], c.one_plus(1))},
    };
    const std::vector<Check> other = {
        {"1/(1 + U2) < 1", !is_nan(f, o[6]) && compare(f, o[6], c.one) < 0},
        {"((1 - U2) * 2) / 2 == 1 - U2", same_value(f, o[7], c.one_minus(2))},
        {"((1 + 2 U2) * 2) / 2 == 1 + 2 U2", same_value(f, o[8], c.one_plus(2))},
        {"2 * (1 / 2) == 1", same_value(f, o[9], c.one)},
    };
    fi.parameters["guard_digit"] = all_pass(guard) && all_pass(by_one);
    fi.parameters["tests"] = checks_json(guard);
    fi.parameters["x_over_1"] = checks_json(by_one);
    fi.parameters["other"] = checks_json(other);
    fi.parameters["consistent"] = b.consistent();
    std::vector<std::string> parts;
    if (!all_pass(guard)) parts.push_back("FAILURE: Division lacks guard digit (" + failures(guard) + ")");
    if (!all_pass(by_one)) parts.push_back("SERIOUS: Division lacks a Guard Digit, so X/1 != X");
    if (parts.empty()) parts.push_back("Seems to have guard digit");
    if (!all_pass(other)) parts.push_back("FAILURE: " + failures(other) + " is false");
    fi.verdict = "DIVISION: " + join(parts, "; ");
    return fi;
  }
};

class SubGuardProbe final : public ParanoiaProbe {
 public:
  SubGuardProbe()
      : ParanoiaProbe("scalar.sub.guard_digit", "Guard digit of subtraction (Paranoia 35; the log's extra tests)",
                      kGpuLog) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    std::vector<Hyp> hyps = ieee_and_chopped(f);
    for (Hyp& h : guard_bit_adders(f)) hyps.push_back(h);
    Bench b(device, f, fi, hyps);
    backends::ExprBuilder e1(f, 2);
    {
      const int x = e1.in(0), y = e1.in(1);
      e1.op(Node::sub, x, e1.op(Node::sub, x, y));
    }
    const Expr twice = e1.done();
    // Paranoia: X = W / Radix^2; Y = X + 1; Z = Y - X; T = Z + U2; X = T - Z must be U2.
    backends::ExprBuilder e2(f, 3);
    {
      const int x = e2.in(0), one = e2.in(1), u = e2.in(2);
      const int z = e2.op(Node::sub, e2.op(Node::add, x, one), x);
      e2.op(Node::sub, e2.op(Node::add, z, u), z);
    }
    const Expr normalized = e2.done();
    const std::vector<u64> o = b.run({
        single(b, Node::sub, c.one, c.F9, "1 - F9"),
        {&twice, {c.one, c.U1}, "1 - (1 - U1)"},
        single(b, Node::sub, c.two, c.B9, "2 - B9"),
        {&twice, {c.two, c.U2}, "2 - (2 - U2)"},
        {&normalized, {c.v(1, c.P - 1), c.one, c.U2}, "((X + 1) - X + U2) - ((X + 1) - X), X = W / 4"},
        // The log's EXTRA ADDITION/SUBTRACTION TESTS ("This setup presumes chopping").
        single(b, Node::sub, c.one, c.U1, "1 - U1"),
        single(b, Node::sub, c.one, c.v((std::int64_t{1} << (c.P + 1)) - 1, -2 * c.P - 2), "1 - F9 * U1"),
        single(b, Node::sub, c.one, c.v(1, -c.P - 2), "1 - 0.5 * U1"),
        single(b, Node::sub, c.one, c.v((std::int64_t{1} << (c.P + 1)) - 1, -2 * c.P - 3), "1 - F9 * 0.5 * U1"),
    });
    const std::vector<Check> guard = {
        {"1 - F9 == U1", same_value(f, o[0], c.U1)},
        {"1 - (1 - U1) == U1", same_value(f, o[1], c.U1)},
        {"2 - B9 == U2", same_value(f, o[2], c.U2)},
        {"2 - (2 - U2) == U2", same_value(f, o[3], c.U2)},
    };
    const bool normal = same_value(f, o[4], c.U2);
    const std::vector<Check> extra = {
        {"1 - U1 < 1", !is_nan(f, o[5]) && compare(f, o[5], c.one) < 0},
        {"1 - F9*U1 == F9", same_value(f, o[6], c.F9)},
        {"1 - 0.5*U1 == 1", same_value(f, o[7], c.one)},
        {"1 - F9*0.5*U1 == 1", same_value(f, o[8], c.one)},
    };
    fi.parameters["guard_digit"] = all_pass(guard);
    fi.parameters["tests"] = checks_json(guard);
    fi.parameters["normalized"] = normal;
    fi.parameters["extra"] = checks_json(extra);
    fi.parameters["consistent"] = b.consistent();
    std::string v = all_pass(guard) ? "SUBTRACTION: Seems to have guard bit"
                                    : "SUBTRACTION: SERIOUS: - lacks Guard Digit, so cancellation is obscured (" +
                                          failures(guard) + ")";
    v += adder_hint(b.consistent());
    if (!normal) v += "; FAILURE: subtraction is not normalized, X = Y, X + Z != Y + Z";
    fi.verdict = v;
    return fi;
  }
};

// ---------------------------------------------------------------------------------------------
// Rounding of * and / (milestones 40 and 45; the log's lines 2390/2400 and 2480/2490): four
// preconditions, then six products or quotients whose correctly rounded and chopped results
// differ. Paranoia calls the operation rounded when all six are correctly rounded, chopped when
// all six are chopped, and "neither" otherwise.

struct Precondition {
  std::string note;
  u64 a, b, bound;
  bool equal;  // == bound, else <= bound
};
struct Classified {
  std::string note;
  u64 a, b;
};

class ProductRoundingProbe final : public ParanoiaProbe {
 public:
  ProductRoundingProbe(Node op, std::string_view id, std::string_view title)
      : ParanoiaProbe(id, title, kGpuLog), op_(op) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    std::vector<Precondition> pre;
    std::vector<Classified> cls;
    if (op_ == Node::mul) {
      pre = {{"(1.5 - U2) * (1 + U2) = 1.5 + 0.5 U2 - U2^2 -> 1.5", c.onehalf_plus(-1), c.one_plus(1), c.onehalf, true},
             {"(1.5 + 2 U2) * (1 - U2) = 1.5 + 0.5 U2 - 2 U2^2 -> 1.5", c.onehalf_plus(2), c.one_minus(2), c.onehalf,
              true},
             {"(1.5 - 2 U2) * (1 + U2) = 1.5 - 0.5 U2 - 2 U2^2 <= 1.5 - U2", c.onehalf_plus(-2), c.one_plus(1),
              c.onehalf_plus(-1), false},
             {"(1.5 + U2) * (1 - U2) = 1.5 - 0.5 U2 - U2^2 <= 1.5 - U2", c.onehalf_plus(1), c.one_minus(2),
              c.onehalf_plus(-1), false}};
      cls = {{"(1.5 + U2) * (1 + U2) = 1.5 + 2.5 U2 + U2^2", c.onehalf_plus(1), c.one_plus(1)},
             {"(1.5 - 2 U2) * (1 - U2) = 1.5 - 3.5 U2 + 2 U2^2", c.onehalf_plus(-2), c.one_minus(2)},
             {"(1.5 + 2 U2) * (1 + U2) = 1.5 + 3.5 U2 + 2 U2^2", c.onehalf_plus(2), c.one_plus(1)},
             {"(1.5 - U2) * (1 - U2) = 1.5 - 2.5 U2 + U2^2", c.onehalf_plus(-1), c.one_minus(2)},
             {"(1 + 2 U2) * (1 - U2) = 1 + U2 - 2 U2^2", c.one_plus(2), c.one_minus(2)},
             {"(1 + U2) * (1 - U2) = 1 - U2^2", c.one_plus(1), c.one_minus(2)}};
    } else {
      pre = {{"(1.5 + 2 U2) / (1 + U2) <= 1.5", c.onehalf_plus(2), c.one_plus(1), c.onehalf, false},
             {"(1.5 - 3 U2) / (1 - U2) <= 1.5 - 2 U2", c.onehalf_plus(-3), c.one_minus(2), c.onehalf_plus(-2), false},
             {"(1.5 + 3 U2) / (1 + U2) <= 1.5 + U2", c.onehalf_plus(3), c.one_plus(1), c.onehalf_plus(1), false},
             {"(1.5 - 2 U2) / (1 - U2) <= 1.5 - U2", c.onehalf_plus(-2), c.one_minus(2), c.onehalf_plus(-1), false}};
      cls = {{"1.5 / (1 + U2) = 1.5 - 1.5 U2 + ...", c.onehalf, c.one_plus(1)},
             {"(1.5 - U2) / (1 - U2) = 1.5 + 0.5 U2 + ...", c.onehalf_plus(-1), c.one_minus(2)},
             {"(1.5 + U2) / (1 + U2) = 1.5 - 0.5 U2 + ...", c.onehalf_plus(1), c.one_plus(1)},
             {"1.5 / (1 - U2) = 1.5 + 1.5 U2 + ...", c.onehalf, c.one_minus(2)},
             {"(1 + 2 U2) / (1 + U2) = 1 + U2 - U2^2 + ...", c.one_plus(2), c.one_plus(1)},
             {"(F9 - U1) / F9 = 1 - U1 - U1^2 - ...", c.one_minus(2), c.F9}};
    }
    std::vector<Item> items;
    for (const Precondition& p : pre) items.push_back(single(b, op_, p.a, p.b, p.note));
    for (const Classified& k : cls) items.push_back(single(b, op_, k.a, k.b, k.note));
    const std::vector<u64> o = b.run(items);
    std::vector<Check> pre_checks;
    bool rounds_up = false;
    for (std::size_t i = 0; i < pre.size(); ++i) {
      const int cmp = is_nan(f, o[i]) ? 2 : compare(f, o[i], pre[i].bound);
      const bool pass = pre[i].equal ? cmp == 0 : cmp <= 0;
      rounds_up = rounds_up || cmp > 0;
      pre_checks.push_back({pre[i].note, pass});
    }
    bool all_rounded = true, all_chopped = true;
    nlohmann::json results = nlohmann::json::array();
    for (std::size_t k = 0; k < cls.size(); ++k) {
      const Item& it = items[pre.size() + k];
      const u64 out = o[pre.size() + k];
      const u64 rn = b.predict("ieee", it), rz = b.predict("chopped", it);
      const bool r = out == rn, z = out == rz;
      all_rounded = all_rounded && r;
      all_chopped = all_chopped && z;
      results.push_back({{"test", cls[k].note},
                         {"output", show(f, out)},
                         {"result", r   ? "EXACT"
                                    : z ? "CHOPPED"
                                        : "NEITHER"}});
    }
    const bool pre_ok = all_pass(pre_checks);
    const std::string rounding = pre_ok && all_rounded ? "rounded" : pre_ok && all_chopped ? "chopped" : "neither";
    fi.parameters["rounding"] = rounding;
    fi.parameters["preconditions"] = checks_json(pre_checks);
    fi.parameters["tests"] = results;
    fi.parameters["consistent"] = b.consistent();
    const std::string what(shout(op_));
    if (rounding == "rounded")
      fi.verdict = what + ": appears to round correctly";
    else if (rounding == "chopped")
      fi.verdict = what + ": appears to chop";
    else
      fi.verdict = what + ": Is neither chopped nor correctly rounded";
    if (!pre_ok && rounds_up) fi.verdict += " (rounds up where it should round down)";
    return fi;
  }

 private:
  Node op_;
};

// Rounding of addition and subtraction (milestone 50; the log's SUBTRACTION ROUNDING TESTS, lines
// 2620-2670): chopped when 1 - U1^2 gives F9 and 1 + U2 (1 - U2) gives 1; rounded when the guard
// digit is there and 1 + (1/2 +- U2) U2 and 1 - (1/2 +- U2) U1 round to nearest. The operands are
// built on the host, as in the log's "LESS MACs" variant.
class AddSubRoundingProbe final : public ParanoiaProbe {
 public:
  AddSubRoundingProbe()
      : ParanoiaProbe("scalar.sub.paranoia_rounding",
                      "Addition/subtraction chopped, rounded or neither (Paranoia 50, lines 2620-2670)", kGpuLog) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    const int P = c.P;
    audit::Finding fi;
    std::vector<Hyp> hyps = ieee_and_chopped(f);
    for (Hyp& h : guard_bit_adders(f)) hyps.push_back(h);
    Bench b(device, f, fi, hyps);
    const std::int64_t h = std::int64_t{1} << (P - 1);  // 1/2 in units of U2
    const std::vector<u64> o = b.run({
        single(b, Node::add, c.F9, c.U1, "F9 + U1 -> 1"),
        single(b, Node::add, c.B9, c.U2, "B9 + U2 -> 2"),
        single(b, Node::sub, c.one, c.F9, "1 - F9 -> U1"),
        single(b, Node::sub, c.two, c.B9, "2 - B9 -> U2"),
        single(b, Node::sub, c.one, c.v(1, -2 * P - 2), "1 - U1*U1 -> F9 if chopped"),
        single(b, Node::add, c.one, c.v((std::int64_t{1} << P) - 1, -2 * P), "1 + U2*(1 - U2) -> 1 if chopped"),
        single(b, Node::add, c.one, c.v(h + 1, -2 * P), "1 + (0.5 + U2)*U2 = 1 + 0.5 U2 + U2^2 -> 1 + U2"),
        single(b, Node::add, c.one, c.v(h - 1, -2 * P), "1 + (0.5 - U2)*U2 = 1 + 0.5 U2 - U2^2 -> 1"),
        single(b, Node::sub, c.one, c.v(h + 1, -2 * P - 1), "1 - (0.5 + U2)*U1 = 1 - 0.5 U1 - U2 U1 -> F9"),
        single(b, Node::sub, c.one, c.v(h - 1, -2 * P - 1), "1 - (0.5 - U2)*U1 = 1 - 0.5 U1 + U2 U1 -> 1"),
    });
    const std::vector<Check> carry = {{"F9 + U1 == 1", same_value(f, o[0], c.one)},
                                      {"B9 + U2 == 2", same_value(f, o[1], c.two)}};
    const std::vector<Check> guard = {{"1 - F9 == U1", same_value(f, o[2], c.U1)},
                                      {"2 - B9 == U2", same_value(f, o[3], c.U2)}};
    const std::vector<Check> chop = {{"1 - U1*U1 == F9", same_value(f, o[4], c.F9)},
                                     {"1 + U2*(1 - U2) == 1", same_value(f, o[5], c.one)}};
    const std::vector<Check> round = {{"1 + (0.5 + U2)*U2 == 1 + U2", same_value(f, o[6], c.one_plus(1))},
                                      {"1 + (0.5 - U2)*U2 == 1", same_value(f, o[7], c.one)},
                                      {"1 - (0.5 + U2)*U1 == F9", same_value(f, o[8], c.F9)},
                                      {"1 - (0.5 - U2)*U1 == 1", same_value(f, o[9], c.one)}};
    const bool chopped = all_pass(chop), rounded = all_pass(guard) && all_pass(round);
    const std::string rounding = rounded ? "rounded" : chopped ? "chopped" : "neither";
    fi.parameters["rounding"] = rounding;
    fi.parameters["carry"] = checks_json(carry);
    fi.parameters["chopped_tests"] = checks_json(chop);
    fi.parameters["rounded_tests"] = checks_json(round);
    fi.parameters["consistent"] = b.consistent();
    std::string v = rounded   ? "ADDITION/SUBTRACTION: appears to round correctly"
                    : chopped ? "ADDITION/SUBTRACTION: appears to be chopped"
                              : "ADDITION/SUBTRACTION: Is neither chopped nor correctly rounded";
    v += adder_hint(b.consistent());
    if (!all_pass(carry)) v += "; FAILURE: incomplete carry-propagation in addition (" + failures(carry) + ")";
    fi.verdict = v;
    return fi;
  }
};

// ---------------------------------------------------------------------------------------------
// Sticky bit (milestone 50): sums and products just beyond, at and just short of a half ulp, which
// round to nearest correctly only when the bits beyond the guard and round bits are remembered.

class StickyProbe final : public ParanoiaProbe {
 public:
  StickyProbe() : ParanoiaProbe("scalar.paranoia.sticky", "Sticky bit (Paranoia milestone 50)", kParanoia) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    const int P = c.P;
    audit::Finding fi;
    std::vector<Hyp> hyps = ieee_and_chopped(f);
    for (Hyp& h : guard_bit_adders(f)) hyps.push_back(h);
    Bench b(device, f, fi, hyps);
    const u64 y2 = c.v(1, -P - 1);                               // U2 / 2
    const u64 x2 = c.v((std::int64_t{1} << P) + 1, -2 * P - 1);  // (1/2 + U1) U2
    const u64 y1 = c.v(1, -P - 2);                               // U1 / 2
    const u64 x1 = c.v((std::int64_t{1} << P) + 1, -2 * P - 2);  // (1/2 + U1) U1
    const u64 z1 = c.v((std::int64_t{1} << P) - 1, -2 * P - 2);  // (1/2 - U1) U1
    const u64 onequarter = c.v(5, -2);                           // 1 + 1/(2 Radix)
    const u64 one_two_u2 = c.one_plus(2);
    const std::vector<Item> items = {
        single(b, Node::add, c.one, y2, "1 + U2/2 -> 1"),
        single(b, Node::add, c.one, x2, "1 + (1/2 + U1) U2 -> 1 + U2"),
        single(b, Node::add, c.one_plus(1), y2, "(1 + U2) + U2/2 -> 1 + 2 U2"),
        single(b, Node::sub, one_two_u2, x2, "(1 + 2 U2) - (1/2 + U1) U2 -> 1 + U2"),
        single(b, Node::sub, c.one, y1, "1 - U1/2 -> 1"),
        single(b, Node::sub, c.one, x1, "1 - (1/2 + U1) U1 -> F9"),
        single(b, Node::sub, c.F9, z1, "F9 - (1/2 - U1) U1 -> F9"),
        single(b, Node::sub, c.F9, y1, "F9 - U1/2 -> F9 - U1"),
        single(b, Node::mul, c.one_plus(1), c.onehalf, "(1 + U2) * 1.5 -> 1.5 + 2 U2"),
        single(b, Node::mul, onequarter, one_two_u2, "(1 + 1/4) * (1 + 2 U2) -> 1.25 + 2 U2"),
    };
    const std::vector<u64> want = {
        c.one, c.one_plus(1), c.one_plus(2),  c.one_plus(1),     c.one,
        c.F9,  c.F9,          c.one_minus(2), c.onehalf_plus(2), c.v((std::int64_t{5} << (P - 2)) + 2, -P)};
    const std::vector<u64> o = b.run(items);
    std::vector<Check> checks;
    for (std::size_t i = 0; i < items.size(); ++i) checks.push_back({items[i].note, same_value(f, o[i], want[i])});
    const bool ok = all_pass(checks);
    const std::vector<std::string> cons = b.consistent();
    fi.parameters["sticky"] = ok;
    fi.parameters["tests"] = checks_json(checks);
    fi.parameters["consistent"] = cons;
    if (ok) {
      fi.verdict = "STICKY BIT: apparently used correctly";
    } else {
      fi.verdict = "STICKY BIT: used incorrectly or not at all";
      if (!cons.empty()) fi.verdict += " (consistent with: " + join(cons, "; ") + ")";
    }
    return fi;
  }
};

// ---------------------------------------------------------------------------------------------
// X * Y == Y * X (milestone 60; the log's "TESTING X*Y == Y*X") on random pairs and Paranoia's pair.

class CommutativeProbe final : public ParanoiaProbe {
 public:
  CommutativeProbe()
      : ParanoiaProbe("scalar.mul.commutative", "Commutativity of multiplication (Paranoia milestone 60)", kParanoia) {}

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    const Consts c(f);
    audit::Finding fi;
    const std::size_t n = ctx.cases(64, 4096, std::uint64_t{1} << 20);
    std::mt19937_64 rng(ctx.seed ^ 0x636f6d6d75746521ULL);
    const int spread = std::min(f.emax() / 2 - 1, 16);
    std::vector<std::pair<u64, u64>> pairs;
    // Paranoia's own pair: (1 + 1/6) and (1 + U2 + U1), as the machine would hold them.
    pairs.push_back({model::div(f, {}, c.v(7, 0), c.v(6, 0)).bits, model::add(f, {}, c.one_plus(1), c.U1).bits});
    while (pairs.size() < n) {
      const auto draw = [&] {
        const int e = int(rng() % std::uint64_t(2 * spread + 1)) - spread;
        const u64 sig = (u64{1} << c.P) | (rng() & f.man_mask());
        return model::round_pack(f, {}, rng() & 1, e - c.P, sig).bits;
      };
      const u64 x = draw(), y = draw();
      pairs.push_back({x, y});
    }
    const Expr mul = backends::binary(Node::mul, f);
    std::vector<u64> operands;
    operands.reserve(4 * pairs.size());
    for (const auto& [x, y] : pairs) operands.insert(operands.end(), {x, y, y, x});
    auto r = device.scalar({&mul, operands});
    if (!r) return audit::failed(r.error());
    if (r->size() != 2 * pairs.size()) return audit::failed("the device returned the wrong number of results");
    std::size_t fails = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const u64 xy = (*r)[2 * i], yx = (*r)[2 * i + 1];
      const bool ok = xy == yx || (is_nan(f, xy) && is_nan(f, yx));
      fails += !ok;
      if (i < 4 || (!ok && fails <= 16)) {
        const u64 rn = model::mul(f, {}, pairs[i].second, pairs[i].first).bits;
        audit::Observation o{
            {pairs[i].second, pairs[i].first},
            yx,
            {{"commutative", xy}, {"ieee", rn}},
            f.storage_bits,
            f.storage_bits,
            fmt::format("Y * X against X * Y, X = {}, Y = {}", show(f, pairs[i].first), show(f, pairs[i].second))};
        fi.observations.push_back(std::move(o));
      }
    }
    fi.parameters["pairs"] = pairs.size();
    fi.parameters["failures"] = fails;
    fi.parameters["seed"] = ctx.seed;
    fi.parameters["commutative"] = fails == 0;
    fi.verdict = fails == 0 ? fmt::format("MULTIPLICATION: {} pairs commuted", pairs.size())
                            : fmt::format("MULTIPLICATION: DEFECT: X * Y == Y * X trial fails for {} of {} pairs",
                                          fails, pairs.size());
    return fi;
  }
};

}  // namespace
}  // namespace paranoia

void add_paranoia_probes(std::vector<const audit::ScalarProbe*>& out) {
  using namespace paranoia;
  static const RadixProbe radix;
  static const PrecisionProbe precision;
  static const CompareSubProbe compare_sub;
  static const MulGuardProbe mul_guard;
  static const DivGuardProbe div_guard;
  static const SubGuardProbe sub_guard;
  static const ProductRoundingProbe mul_rounding(
      Node::mul, "scalar.mul.paranoia_rounding",
      "Multiplication chopped, rounded or neither (Paranoia 40, lines 2390-2400)");
  static const ProductRoundingProbe div_rounding(Node::div, "scalar.div.paranoia_rounding",
                                                 "Division chopped, rounded or neither (Paranoia 45, lines 2480-2490)");
  static const AddSubRoundingProbe addsub_rounding;
  static const StickyProbe sticky;
  static const CommutativeProbe commutative;
  for (const audit::ScalarProbe* p : std::initializer_list<const audit::ScalarProbe*>{
           &radix, &precision, &compare_sub, &mul_guard, &div_guard, &sub_guard, &mul_rounding, &div_rounding,
           &addsub_rounding, &sticky, &commutative})
    out.push_back(p);
}

}  // namespace gp::scalar
