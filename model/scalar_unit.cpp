#include "model/scalar_unit.hpp"

#include <array>
#include <cmath>
#include <span>

#include "model/ulp_error.hpp"
#include "model/value.hpp"

namespace gp::model {

std::string_view name(const UnitRounding& r) { return r.chop ? std::string_view("chop") : name(r.mode); }

std::optional<UnitRounding> find_unit_rounding(std::string_view n) {
  if (n == "chop") return UnitRounding::chopped();
  if (auto r = find_rounding(n)) return UnitRounding::ieee(*r);
  return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 3> propagation_names = {"first", "last", "larger_payload"};
constexpr std::array<std::string_view, 4> default_nan_names = {"quiet", "negative_quiet", "all_ones",
                                                               "negative_all_ones"};
constexpr std::array<std::string_view, 6> fma_nan_order_names = {"abc", "acb", "bac", "bca", "cab", "cba"};
// The enumerator whose name is n: names[i] names E(i).
template <class E>
std::optional<E> find_name(std::span<const std::string_view> names, std::string_view n) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == n) return E(i);
  return std::nullopt;
}
}  // namespace

std::string_view name(ZeroAddend z) { return zero_addend_names[std::size_t(z)]; }
std::optional<ZeroAddend> find_zero_addend(std::string_view n) { return find_name<ZeroAddend>(zero_addend_names, n); }
std::string_view name(NanPropagation p) { return propagation_names[std::size_t(p)]; }
std::optional<NanPropagation> find_nan_propagation(std::string_view n) {
  return find_name<NanPropagation>(propagation_names, n);
}
std::string_view name(DefaultNan d) { return default_nan_names[std::size_t(d)]; }
std::optional<DefaultNan> find_default_nan(std::string_view n) { return find_name<DefaultNan>(default_nan_names, n); }
std::string_view name(FmaNanOrder o) { return fma_nan_order_names[std::size_t(o)]; }
std::string words(FmaNanOrder o) {
  const std::string_view n = name(o);
  return {n[0], ',', ' ', n[1], ',', ' ', n[2]};
}
std::optional<FmaNanOrder> find_fma_nan_order(std::string_view n) {
  return find_name<FmaNanOrder>(fma_nan_order_names, n);
}
std::string_view name(DivMethod m) { return div_method_names[std::size_t(m)]; }
std::optional<DivMethod> find_div_method(std::string_view n) { return find_name<DivMethod>(div_method_names, n); }

std::string to_string(const UlpBound& b) {
  constexpr std::uint32_t one = 1u << UlpBound::frac_bits;
  std::string s = std::to_string(b.units / one);
  std::uint32_t rest = b.units % one;
  if (rest) s += '.';
  while (rest) {  // units / 2^8 has at most 8 decimals
    rest *= 10;
    s += char('0' + rest / one);
    rest %= one;
  }
  return s;
}

std::optional<UlpBound> ulp_bound(double ulps) {
  const double units = std::ceil(ulps * double(1u << UlpBound::frac_bits));
  if (!(units >= 0 && units < double(1u << 31))) return std::nullopt;
  return UlpBound{std::uint32_t(units)};
}

std::string check(const ScalarUnit& u) {
  if (!u.format) return "scalar unit has no format";
  if (std::size_t(u.fma_zero_addend) >= std::size(zero_addend_names)) return "fma.zero_addend must be ieee or product";
  if (u.nan.fma_order && std::size_t(*u.nan.fma_order) >= fma_nan_order_names.size())
    return "nan.fma_order must be a permutation of a, b, c";
  auto bad_guard = [](const AdderParams& a) {
    return a.guard_bits && (*a.guard_bits < 0 || *a.guard_bits > max_guard_bits);
  };
  if (bad_guard(u.add) || (u.add_cascaded && bad_guard(*u.add_cascaded)))
    return "guard_bits must lie in 0.." + std::to_string(max_guard_bits);
  if (u.mul.truncated_columns && *u.mul.truncated_columns < 0) return "truncated_columns must be >= 0";
  return "";
}

namespace {

constexpr bool finite(const Unpacked& x) { return x.cls == Class::zero || is_finite_nonzero(x.cls); }

// The guard-bit adder of the header comment, on finite operands.
Result guard_add(const Format& f, int g, bool sticky, const Options& o, const Unpacked& a, const Unpacked& b) {
  if (a.sig == 0 || b.sig == 0) {
    if (a.sig == 0 && b.sig == 0) return zero(f, detail::zero_sum_sign(o, a.neg, b.neg));
    const Unpacked& x = a.sig == 0 ? b : a;
    return round_pack(f, o, x.neg, x.exp, x.sig);
  }
  // Unpacked exponents are those of the last significand bit: for normals the exponent field
  // decides, and a subnormal shares the smallest normal's.
  const bool a_big = a.exp >= b.exp;
  const Unpacked& big = a_big ? a : b;
  const Unpacked& small = a_big ? b : a;
  const int s = sticky ? 1 : 0;
  const int lsb = big.exp - g - s;  // weight of the register's last bit
  const u128 hi = u128(big.sig) << (g + s);
  const int shift = lsb - small.exp;  // right shift of the smaller significand into the register
  u128 lo;
  if (shift <= 0)
    lo = u128(small.sig) << -shift;  // -shift <= g + s: nothing is dropped
  else if (sticky)
    lo = shift_right_jam(u128(small.sig), shift);  // bit 0 is the sticky bit
  else
    lo = shift >= 64 ? 0 : u128(small.sig >> shift);
  u128 r;
  bool neg = big.neg;
  if (big.neg == small.neg) {
    r = hi + lo;
  } else if (hi >= lo) {
    r = hi - lo;
  } else {
    r = lo - hi;
    neg = small.neg;
  }
  if (r == 0) return zero(f, detail::zero_sum_sign(o, a.neg, b.neg));
  int e = lsb;
  const std::uint64_t sig = narrow_jam(r, e);
  return round_pack(f, o, neg, e, sig);
}

Result adder_unpacked(const Format& f, const AdderParams& p, const Options& o, const Unpacked& a, const Unpacked& b) {
  if (!finite(a) || !finite(b) || !p.guard_bits) return detail::add_unpacked(f, o, a, b);
  const int g = *p.guard_bits < 0 ? 0 : *p.guard_bits > max_guard_bits ? max_guard_bits : *p.guard_bits;
  return guard_add(f, g, p.sticky, o, a, b);
}

Options with_rounding(Options o, const UnitRounding& r) {
  o.rounding = r.effective();
  return o;
}

// 1.0 in format f.
constexpr std::uint64_t one(const Format& f) { return pack(f, false, std::uint64_t(f.bias) << f.man_bits); }

}  // namespace

Result adder_add(const Format& f, const AdderParams& p, const Options& base, std::uint64_t a, std::uint64_t b) {
  const Options o = with_rounding(base, p.rounding);
  if (!p.guard_bits) return add(f, o, a, b);
  return adder_unpacked(f, p, o, unpack(f, a, o.ftz_in), unpack(f, b, o.ftz_in));
}

Result adder_sub(const Format& f, const AdderParams& p, const Options& base, std::uint64_t a, std::uint64_t b) {
  const Options o = with_rounding(base, p.rounding);
  if (!p.guard_bits) return sub(f, o, a, b);
  Unpacked ub = unpack(f, b, o.ftz_in);
  if (!is_nan(ub.cls) || o.nan_sub_flips) ub.neg = !ub.neg;
  return adder_unpacked(f, p, o, unpack(f, a, o.ftz_in), ub);
}

Result multiplier_mul(const Format& f, const MultiplierParams& p, const Options& base, std::uint64_t a,
                      std::uint64_t b) {
  const Options o = with_rounding(base, p.rounding);
  if (!p.truncated_columns) return mul(f, o, a, b);
  const Unpacked ua = unpack(f, a, o.ftz_in), ub = unpack(f, b, o.ftz_in);
  // Zeros, infinities and NaNs: the exact product's special result.
  if (!is_finite_nonzero(ua.cls) || !is_finite_nonzero(ub.cls)) return mul(f, o, a, b);
  const int p1 = f.precision() - 1;
  // Significands normalised to p bits (a subnormal operand gets an exponent below emin).
  const int sa = p1 - msb(ua.sig), sb = p1 - msb(ub.sig);
  const std::uint64_t A = ua.sig << sa, B = ub.sig << sb;
  const int t = *p.truncated_columns < 0 ? 0 : *p.truncated_columns;
  const int low = t >= p1 ? 0 : p1 - t;  // lowest generated column
  // Row j (b_j set) is A << j; its bits in columns below `low` are not generated.
  u128 sum = p.correction;
  for (std::uint64_t rows = B; rows != 0; rows &= rows - 1) {
    const int j = std::countr_zero(rows);
    sum += j >= low ? u128(A) << (j - low) : u128(A >> (low - j));
  }
  int e = ua.exp - sa + ub.exp - sb + low;
  const std::uint64_t sig = narrow_jam(sum, e);
  return round_pack(f, o, ua.neg != ub.neg, e, sig);
}

Result unit_add(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, Adder which) {
  const AdderParams& p = which == Adder::cascaded_first && u.add_cascaded ? *u.add_cascaded : u.add;
  return adder_add(*u.format, p, unit_options(u, p.rounding, FlushOp::add), a, b);
}

Result unit_sub(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, Adder which) {
  const AdderParams& p = which == Adder::cascaded_first && u.add_cascaded ? *u.add_cascaded : u.add;
  return adder_sub(*u.format, p, unit_options(u, p.rounding, FlushOp::add), a, b);
}

Result unit_mul(const ScalarUnit& u, std::uint64_t a, std::uint64_t b) {
  return multiplier_mul(*u.format, u.mul, unit_options(u, u.mul.rounding, FlushOp::mul), a, b);
}

namespace {

// The operands as the operation reads them: flushed subnormals are zeros of their sign.
std::array<std::uint64_t, 2> read(const Format& f, bool ftz_in, std::span<const std::uint64_t> x) {
  std::array<std::uint64_t, 2> r{};
  for (std::size_t i = 0; i < x.size() && i < 2; ++i)
    r[i] = ftz_in && classify(f, x[i]) == Class::subnormal ? zero(f, sign_of(f, x[i])).bits : x[i];
  return r;
}

// Whether d is within the bound of op's exact result on the operands `x` (as read), and a value the
// operation's output flushing keeps (see "Approximate" in the header).
bool within_bound(const Format& f, const UlpBound& b, Op op, std::span<const std::uint64_t> x, std::uint64_t d,
                  bool ftz_out) {
  const Class c = classify(f, d);
  if (!is_finite_nonzero(c) || (ftz_out && c == Class::subnormal)) return false;
  const auto exact = exact_result(f, op, x);
  if (!exact) return false;
  const auto e = error_q64(f, *exact, d);
  const i128 bound = i128(b.units) << (64 - UlpBound::frac_bits);
  return e && *e <= bound && *e >= -bound;
}

// The stand-in of an approximate operation: `cr` (the correctly rounded result) moved by up to
// max_error + 1 ulps, by a hash of the operands, and toward `cr` until within the bound. Exact
// results stay (the probes' powers of two, as a reciprocal sequence keeps them).
Result approximation(const Format& f, const UlpBound& b, Op op, std::span<const std::uint64_t> x, Result cr,
                     bool ftz_out) {
  if (!is_finite_nonzero(classify(f, cr.bits)) || !(cr.flags & Flag::inexact)) return cr;
  std::uint64_t h = std::uint64_t(op) * 0x9e3779b97f4a7c15ULL;
  for (std::uint64_t v : x) {  // splitmix64 steps
    h = (h ^ v) + 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  const std::int64_t reach = std::int64_t(b.units >> UlpBound::frac_bits) + 1;
  const std::uint64_t step = std::uint64_t{1} << f.pad_bits;
  const std::uint64_t magnitude = cr.bits & f.magnitude_mask();
  for (std::int64_t k = std::int64_t(h % std::uint64_t(2 * reach + 1)) - reach; k != 0; k -= k > 0 ? 1 : -1) {
    if (k < 0 && magnitude <= std::uint64_t(-k) * step) continue;
    const std::uint64_t moved = (cr.bits & ~f.magnitude_mask()) | (magnitude + std::uint64_t(k) * step);
    if (within_bound(f, b, op, x, moved, ftz_out)) return {moved, cr.flags | Flag::inexact};
  }
  return cr;
}

}  // namespace

Result unit_div(const ScalarUnit& u, std::uint64_t a, std::uint64_t b) {
  const Format& f = *u.format;
  const Options o = unit_options(u, u.div.rounding, FlushOp::div);
  if (u.div.method == DivMethod::correctly_rounded) return div(f, o, a, b);
  if (u.div.method == DivMethod::approximate) {
    const std::uint64_t x[] = {a, b};
    return approximation(f, u.div.max_error, Op::div, read(f, o.ftz_in, x), div(f, o, a, b), o.ftz_out);
  }
  const Unpacked ua = unpack(f, a, o.ftz_in), ub = unpack(f, b, o.ftz_in);
  if (!is_finite_nonzero(ua.cls) || !is_finite_nonzero(ub.cls)) return div(f, o, a, b);
  const Result r = div(f, o, one(f), b);
  Result q = unit_mul(u, a, r.bits);
  q.flags |= r.flags;
  return q;
}

Result unit_sqrt(const ScalarUnit& u, std::uint64_t a) {
  const Options o = unit_options(u, u.sqrt, FlushOp::sqrt);
  const Result cr = sqrt(*u.format, o, a);
  if (!u.sqrt_max_error) return cr;
  const std::uint64_t x[] = {a};
  const std::array<std::uint64_t, 2> r = read(*u.format, o.ftz_in, x);
  return approximation(*u.format, *u.sqrt_max_error, Op::sqrt, std::span(r).first(1), cr, o.ftz_out);
}

bool approximate(const ScalarUnit& u, Op op) {
  return (op == Op::div && u.div.method == DivMethod::approximate) || (op == Op::sqrt && u.sqrt_max_error);
}

bool unit_accepts(const ScalarUnit& u, Op op, std::span<const std::uint64_t> x, std::uint64_t d, const Format& from) {
  if (!approximate(u, op)) return unit_evaluate(u, op, x, from).bits == d;
  const Format& f = *u.format;
  const bool div_op = op == Op::div;
  const Options o = div_op ? unit_options(u, u.div.rounding, FlushOp::div) : unit_options(u, u.sqrt, FlushOp::sqrt);
  const Result cr = div_op ? div(f, o, x[0], x[1]) : sqrt(f, o, x[0]);
  if (cr.bits == d) return true;
  if (!is_finite_nonzero(classify(f, cr.bits))) return false;
  const std::array<std::uint64_t, 2> r = read(f, o.ftz_in, x);
  return within_bound(f, div_op ? u.div.max_error : *u.sqrt_max_error, op, std::span(r).first(x.size()), d, o.ftz_out);
}

Result unit_mad(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  if (u.mad_fused) return fma(*u.format, unit_options(u, u.add.rounding, FlushOp::mad), a, b, c);
  const Result p = unit_mul(u, a, b);
  Result r = unit_add(u, p.bits, c);
  r.flags |= p.flags;
  return r;
}

Result unit_fma(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  if (u.fma_zero_addend == ZeroAddend::product) {
    const Format& f = *u.format;
    const bool ftz_ab = u.fma_fused && flushing(u, FlushOp::fma).flush_input;
    const bool ftz_c = flushing(u, u.fma_fused ? FlushOp::fma : FlushOp::add).flush_input;
    const Unpacked ua = unpack(f, a, ftz_ab), ub = unpack(f, b, ftz_ab);
    // A flushed operand reaches the multiplier as the zero it was read as.
    const auto read = [&](const Unpacked& x, std::uint64_t bits) {
      return x.cls == Class::zero ? zero(f, x.neg).bits : bits;
    };
    if (unpack(f, c, ftz_c).cls == Class::zero && finite(ua) && finite(ub))
      return unit_mul(u, read(ua, a), read(ub, b));
  }
  if (u.fma_fused) return fma(*u.format, unit_options(u, u.add.rounding, FlushOp::fma), a, b, c);
  // The fma's NaN order is the operation's, fused or not: a NaN operand gives the fused result.
  if (u.nan.fma_order) {
    const Format& f = *u.format;
    if (is_nan(classify(f, a)) || is_nan(classify(f, b)) || is_nan(classify(f, c)))
      return fma(f, unit_options(u, u.mul.rounding, FlushOp::mul), a, b, c);
  }
  return unit_mad(u, a, b, c);
}

Result unit_cvt(const ScalarUnit& u, const Format& to, const Format& from, std::uint64_t bits) {
  return cvt(to, from, unit_options(u, u.convert, FlushOp::cvt), bits);
}

namespace {

Result transfer(const ScalarUnit& u, const Format& to, const Format& from, std::uint64_t bits) {
  const Unpacked x = unpack(from, bits);
  const bool same = to.name == from.name;
  if (is_nan(x.cls)) {
    const bool quiet = u.nan.quiet_on_transfer || x.cls == Class::quiet_nan;
    if (same && to.nan == NanStyle::ieee) return {quiet ? bits | pack(to, false, to.quiet_bit()) : bits, 0};
    if (to.nan == NanStyle::ieee && from.nan == NanStyle::ieee) {
      // The payload left-aligned, the quiet bit as the policy says; a signalling NaN whose
      // payload does not survive keeps its lowest bit, so that it stays a NaN.
      const std::uint64_t frac = from.man_bits >= to.man_bits ? x.sig >> (from.man_bits - to.man_bits)
                                                              : x.sig << (to.man_bits - from.man_bits);
      std::uint64_t f = quiet ? frac | to.quiet_bit() : frac & ~to.quiet_bit();
      if (f == 0) f = 1;
      return {pack(to, x.neg && to.has_sign(), to.inf_magnitude() | f), 0};
    }
    Result r = propagate_nan(to, from, x, Options{});
    r.flags = 0;
    return r;
  }
  if (x.cls == Class::subnormal && u.subnormals.flush_transfer) return zero(to, x.neg);
  if (same) return {bits, 0};
  Options o;
  o.rounding = u.convert.effective();
  o.ftz_out = u.subnormals.flush_transfer;
  return cvt(to, from, o, bits);
}

}  // namespace

Result unit_load(const ScalarUnit& u, std::uint64_t bits) { return transfer(u, *u.format, u.storage_format(), bits); }

Result unit_store(const ScalarUnit& u, std::uint64_t bits) { return transfer(u, u.storage_format(), *u.format, bits); }

Result unit_evaluate(const ScalarUnit& u, Op op, std::span<const std::uint64_t> x, const Format& from) {
  switch (op) {
    case Op::add: return unit_add(u, x[0], x[1]);
    case Op::sub: return unit_sub(u, x[0], x[1]);
    case Op::mul: return unit_mul(u, x[0], x[1]);
    case Op::div: return unit_div(u, x[0], x[1]);
    case Op::sqrt: return unit_sqrt(u, x[0]);
    case Op::fma: return unit_fma(u, x[0], x[1], x[2]);
    case Op::cvt: return unit_cvt(u, *u.format, from, x[0]);
  }
  return invalid_result(*u.format);
}

namespace {

std::string rounded(const UnitRounding& r) { return r.chop ? "chopped" : "rounded " + std::string(name(r.mode)); }

// An operation computed exactly and rounded once.
std::string exactly(const UnitRounding& r) {
  return r.chop ? "chopped (exact result truncated)" : "correctly rounded " + std::string(name(r.mode));
}

std::string within(const UlpBound& b) { return "approximate, within " + to_string(b) + " ulp of the exact result"; }

std::string describe_adder(const AdderParams& a) {
  if (!a.guard_bits) return exactly(a.rounding);
  const int g = *a.guard_bits;
  return rounded(a.rounding) + ", " + std::to_string(g) + (g == 1 ? " guard bit, " : " guard bits, ") +
         (a.sticky ? "sticky bit" : "no sticky bit");
}

}  // namespace

std::string describe(const ScalarUnit& u) {
  if (!u.format) return "UNIT: malformed (no format)\n";
  std::string s = "UNIT: " + std::string(u.name) + " (" + std::string(u.format->name) + " registers, " +
                  std::string(u.storage_format().name) + " storage)\n";
  s += "ADDITION: " + describe_adder(u.add) + "\n";
  if (u.add_cascaded && !(*u.add_cascaded == u.add))
    s += "ADDITION (first of two cascaded): " + describe_adder(*u.add_cascaded) + "\n";
  s += "MULTIPLICATION: ";
  if (!u.mul.truncated_columns) {
    s += exactly(u.mul.rounding) + "\n";
  } else {
    const int t = *u.mul.truncated_columns;
    s += rounded(u.mul.rounding) + ", partial products generated down to column " + std::to_string(t) +
         " below the LSB, correction " + std::to_string(u.mul.correction) + " (units of that column)\n";
  }
  s += std::string("MAD: ") + (u.mad_fused ? "fused, one rounding\n" : "not fused: product rounded, then added\n");
  s += std::string("FMA: ") + (u.fma_fused ? "fused, one rounding" : "evaluated as the MAD") +
       (u.fma_zero_addend == ZeroAddend::product ? "; a zero addend returns the multiplier's product a*b\n" : "\n");
  s += "DIVISION: ";
  if (u.div.method == DivMethod::correctly_rounded)
    s += exactly(u.div.rounding) + "\n";
  else if (u.div.method == DivMethod::approximate)
    s += within(u.div.max_error) + "\n";
  else
    s += "x * (1/y " + rounded(u.div.rounding) + "), by the multiplier\n";
  s += "SQUARE ROOT: " + (u.sqrt_max_error ? within(*u.sqrt_max_error) : exactly(u.sqrt)) + "\n";
  s += "CONVERSION: " + rounded(u.convert) + "\n";
  const SubnormalPolicy& sp = u.subnormals;
  s += "SUBNORMALS: ";
  if (!sp.flush_input && !sp.flush_output && !sp.flush_transfer) {
    s += "preserved\n";
  } else {
    std::string where;
    auto note = [&](bool on, const char* w) {
      if (!on) return;
      if (!where.empty()) where += ", ";
      where += w;
    };
    note(sp.flush_input, "input");
    note(sp.flush_output, "output");
    note(sp.flush_transfer, "transfer");
    s += "flushed to zero on " + where + "\n";
  }
  for (std::size_t i = 0; i < kFlushOps; ++i)
    if (const auto& of = u.op_flush[i])
      s += std::string("SUBNORMALS (") + std::string(flush_op_names[i]) +
           "): " + (of->flush_input ? "operands flushed" : "operands kept") + ", " +
           (of->flush_output ? "results flushed" : "results kept") + "\n";
  static constexpr const char* which[] = {"first", "last", "larger-payload"};
  s += std::string("NaN: ") +
       (u.nan.canonical
            ? "canonical NaN results"
            : std::string(which[std::size_t(u.nan.propagation)]) + " NaN operand propagated, " +
                  (u.nan.quiet ? "quieted" : "signalling ones kept") +
                  (u.nan.sub_flips ? ", a - NaN flips its sign" : "") +
                  (u.nan.fma_order ? "; fma takes its NaN operands in the order " + words(*u.nan.fma_order) : "")) +
       (u.nan.default_nan != DefaultNan::quiet ? "; default NaN " + std::string(name(u.nan.default_nan)) : "") +
       (u.nan.quiet_on_transfer ? "; signalling NaNs quieted on transfer\n" : "; NaNs unchanged on transfer\n");
  return s;
}

// --- Built-in units --------------------------------------------------------------------------

ScalarUnit ieee_unit(const Format& f, Rounding r) {
  ScalarUnit u;
  u.name = f.name == "binary32"   ? "ieee-binary32"
           : f.name == "binary16" ? "ieee-binary16"
           : f.name == "binary64" ? "ieee-binary64"
                                  : "ieee";
  u.format = &f;
  const UnitRounding ur = UnitRounding::ieee(r);
  u.add = {ur, std::nullopt, false};
  u.mul = {ur, std::nullopt, 0};
  u.mad_fused = false;  // a * b + c with contraction off: two roundings
  u.fma_fused = true;
  u.div = {DivMethod::correctly_rounded, ur, {}};
  u.sqrt = ur;
  u.convert = ur;
  return u;
}

ScalarUnit nvidia_g70() {
  ScalarUnit u;
  u.name = "nvidia-g70";
  // [DGD] 2.1: registers hold binary32, no extended range ((MAX+MAX)-MAX) or precision
  // ((1.5-2^-i)+2^-i), in vertex and pixel shaders.
  u.format = &binary32;
  // [DGD] 2.3: 1.5 - 2^-i == 1.5 exactly for i >= 26 (vertex and pixel shaders) and the two
  // cascaded pixel-shader adders alike ((1.5-2^-i)-1.5 == 0 for i >= 26): chop with 2 guard bits.
  // A sticky bit would make that subtraction round toward zero (1.5 - 2^-23 for every i >= 24).
  // App. A agrees: "SUBTRACTION: Appears to have guard bit, no round bit", add error [-1, 0] ulp.
  // (App. A's "1-0.5*U1 = 1" is the one addition line the model does not give: it gives F9.)
  u.add = {UnitRounding::chopped(), 2, false};
  // [DGD] 2.2: partial products generated up to the 6th column, a bias constant added, result
  // chopped ([DGD] 1.3: multiplication truncated, faithful). The constant is not published: the
  // ten products of App. A's multiplication rounding tests ((1.5-U2)(1+U2) -> 1.5+U2, ...,
  // (1+U2)(1-U2) -> 1) hold exactly for 33 <= correction <= 64 (more than half an ulp), and App.
  // A's measured error bound, up to +0.625 ulp, needs correction >= 40 (0.625 ulp = 40/64): 40
  // is the smallest value consistent with both (half an ulp for rounding, 32, plus 8). With it,
  // the model's error on 2*10^6 random significand pairs lies in [-0.765, +0.624] ulp, close to
  // App. A's [-0.78125, +0.625].
  u.mul = {UnitRounding::chopped(), 6, 40};
  // [DGD] 2.1: no MAD keeps the product beyond 24 bits: MAD(x, y, -x*y) is the unfused MAD.
  u.mad_fused = false;
  // Assumed: the shader models of the G70 have no fma; fma() is the MAD.
  u.fma_fused = false;
  // [DGD] 1.3 (from App. A): division is x times an approximation of 1/y. The reciprocal's
  // rounding is assumed: rounded up reproduces 12 of App. A's 16 division results (the most of
  // any rounding; rne 9, rz 8); no rounding of 1/y reproduces all, since App. A needs two
  // different reciprocals of 1+U2 ((1.5+2U2)/(1+U2) = 1.5+U2 and (1+2U2)/(1+U2) = 1).
  u.div = {DivMethod::reciprocal, UnitRounding::ieee(Rounding::ru), {}};
  u.sqrt = UnitRounding::chopped();     // assumed: [DGD] does not test square roots
  u.convert = UnitRounding::chopped();  // assumed; as nvidia_g70_binary16's stores
  // [DGD] 2.1: subnormals replaced by 0 on transfer. Input and output flushing: assumed.
  u.subnormals = {true, true, true};
  // [DGD] 2.1: NaNs unchanged on transfer on NVIDIA. Propagation in arithmetic: assumed (model).
  u.nan = {false, false};
  return u;
}

ScalarUnit nvidia_g70_binary16() {
  ScalarUnit u = nvidia_g70();
  u.name = "nvidia-g70-binary16";
  // [DGD] 2.3, last paragraph: binary16 additions are computed at full precision (26 bits: the
  // binary32 adder and its 2 guard bits) and then rounded to 11 bits. The threshold they saw
  // needs a directed rounding to binary16; chop is assumed, and chopping the adder's chopped
  // binary32 result equals chopping its 26-bit register once. Other binary16 operations: the
  // binary32 unit's, assumed. Subnormal transfers: as binary32, assumed.
  u.storage = &binary16;
  u.convert = UnitRounding::chopped();
  return u;
}

ScalarUnit ati_r520() {
  ScalarUnit u;
  u.name = "ati-r520";
  u.format = &binary32;  // [DGD] 2.1: no extended registers
  // [DGD] 2.3: a single addition, in vertex and pixel shaders: 1.5 - 2^-i == 1.5 for i >= 26.
  u.add = {UnitRounding::chopped(), 2, false};
  // [DGD] 2.3: in a pixel shader, (1.5 - 2^-i) - 1.5 == 0 for i >= 25: the first of two cascaded
  // additions runs on an adder with one guard bit (chop, no sticky: i >= 25 needs both).
  u.add_cascaded = AdderParams{UnitRounding::chopped(), 1, false};
  // [DGD] 2.2: partial products up to the 9th column, a bias added "to compensate the missing
  // partial products", chopped. The constant is not published: assumed to be that compensation
  // alone, Schulte and Swartzlander's expected value of the dropped columns (3 units of column 9).
  u.mul = {UnitRounding::chopped(), 9, expected_dropped_correction(24, 9)};
  u.mad_fused = false;  // [DGD] 2.1: no MAD keeps the product beyond 24 bits
  u.fma_fused = false;  // assumed: no fma in the shader models of the R520; fma() is the MAD
  // [DGD] 1.3 says division is x * approx(1/y) on the GPUs Hillesland and Lastra tested (a
  // 7800GTX and an R300): assumed here, with the reciprocal chopped (assumed).
  u.div = {DivMethod::reciprocal, UnitRounding::chopped(), {}};
  u.sqrt = UnitRounding::chopped();     // assumed
  u.convert = UnitRounding::chopped();  // assumed
  u.subnormals = {true, true, true};    // [DGD] 2.1: flushed on transfer; input, output assumed
  u.nan = {false, true};                // [DGD] 2.1: ATI turns signalling NaNs into quiet ones on transfer
  return u;
}

ScalarUnit ati_r300() {
  ScalarUnit u;
  u.name = "ati-r300";
  // [DGD] table 1: ATI's 24-bit format s1e7m16. Storage assumed fp24 too (the R300 also reads
  // and writes binary32 textures: set storage = &binary32 to model that).
  u.format = &fp24;
  // [DGD] 1.3, from Hillesland and Lastra's R300 table: addition truncated, and subtraction
  // without the guard bit NVIDIA's has: chop, 0 guard bits, no sticky bit.
  u.add = {UnitRounding::chopped(), 0, false};
  // [DGD] 1.3: multiplication truncated and faithful. Truncated partial products: unknown;
  // assumed none (the exact product, chopped, is faithful).
  u.mul = {UnitRounding::chopped(), std::nullopt, 0};
  u.mad_fused = false;  // assumed, as the R520 ([DGD] 2.1)
  u.fma_fused = false;  // assumed
  // [DGD] 1.3: division is x times an approximation of 1/y; the reciprocal chopped (assumed).
  u.div = {DivMethod::reciprocal, UnitRounding::chopped(), {}};
  u.sqrt = UnitRounding::chopped();     // assumed
  u.convert = UnitRounding::chopped();  // assumed
  u.subnormals = {true, true, true};    // assumed, as the R520
  u.nan = {false, true};                // assumed, as the R520 ([DGD] table 1: specials "absent" in fp24)
  return u;
}

std::span<const ScalarUnit> builtin_units() {
  static const std::array<ScalarUnit, 7> units = {ieee_unit(binary32), ieee_unit(binary16),   ieee_unit(binary64),
                                                  nvidia_g70(),        nvidia_g70_binary16(), ati_r520(),
                                                  ati_r300()};
  return units;
}

std::optional<ScalarUnit> find_builtin_unit(std::string_view n) {
  for (const ScalarUnit& u : builtin_units())
    if (u.name == n) return u;
  return std::nullopt;
}

}  // namespace gp::model
