#include "model/mma_algorithms.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <type_traits>

#include "model/fda_fast.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"
#include "model/wide.hpp"

namespace gp::model {

bool is_fdrda_family(MmaAlgorithm a) {
  return a == MmaAlgorithm::fdrda || a == MmaAlgorithm::cofdrda || a == MmaAlgorithm::gfdrda ||
         a == MmaAlgorithm::cogfdrda;
}
bool is_fused(MmaAlgorithm a) { return a != MmaAlgorithm::sfma && a != MmaAlgorithm::gps && a != MmaAlgorithm::tree; }
MmaAlgorithm unchained(MmaAlgorithm a) {
  switch (a) {
    case MmaAlgorithm::cofda: return MmaAlgorithm::fda;
    case MmaAlgorithm::cofdrda: return MmaAlgorithm::fdrda;
    case MmaAlgorithm::cogfdrda: return MmaAlgorithm::gfdrda;
    default: return a;
  }
}
int effective_block(const DotConfig& c, int k) { return c.block > 0 && c.block < k ? c.block : k; }

namespace {

constexpr std::array<std::string_view, 11> algorithm_names = {"sfma",    "gps",    "fda",      "cofda", "gdfs", "fdrda",
                                                              "cofdrda", "gfdrda", "cogfdrda", "tree",  "ocfda"};

using fda_fast::align_trunc;

// floor(v * 2^shift) for a signed v (rounding down, two's complement truncation).
inline std::int64_t align_floor_signed(std::int64_t v, int shift) {
  if (shift >= 0) return v << shift;
  if (shift <= -63) return v < 0 ? -1 : 0;
  return v >> -shift;  // arithmetic shift: floor
}

// trunc(v * 2^shift) for a signed v (rounding toward zero).
inline std::int64_t align_trunc_signed(std::int64_t v, int shift) {
  const std::uint64_t m = align_trunc(std::uint64_t(v < 0 ? -v : v), shift);
  return v < 0 ? -std::int64_t(m) : std::int64_t(m);
}

using fda_fast::align_exp;

// Special-value bookkeeping of MMA-Sim's step 1.
struct Specials {
  bool nan = false, pos_inf = false, neg_inf = false;
  Specials() = default;
  explicit Specials(const Unpacked& c) { add_addend(c); }
  bool any() const { return nan || pos_inf || neg_inf; }
  void add_inf(bool neg) { (neg ? neg_inf : pos_inf) = true; }
  // A product of two decoded inputs, at least one of them not finite.
  void add_product(const Unpacked& x, const Unpacked& y) {
    if (is_nan(x.cls) || is_nan(y.cls)) {
      nan = true;
    } else if (x.cls == Class::zero || y.cls == Class::zero) {
      nan = true;  // 0 * inf
    } else {
      add_inf(x.neg != y.neg);
    }
  }
  void add_addend(const Unpacked& c) {
    if (is_nan(c.cls))
      nan = true;
    else if (c.cls == Class::infinite)
      add_inf(c.neg);
  }
  // The result when any() holds.
  std::uint64_t result(const Dot& dot) const {
    if (nan || (pos_inf && neg_inf)) return dot.nan_bits();
    return dot.inf_bits(neg_inf);
  }
};

using fda_fast::finite;

// One exact product: (-1)^neg * sig * 2^exp.
struct Term {
  std::uint64_t sig;
  int exp;
  bool neg;
};

// Scale factor of product k: significand and exponent of its LSB (sig * 2^exp), or NaN.
struct Scale {
  std::uint64_t sig;
  int exp;
  bool nan;
};
inline Scale decode_scale(const Format& sf, std::uint64_t bits) {
  const Unpacked u = unpack(sf, bits);
  if (is_nan(u.cls)) return {0, 0, true};
  if (u.cls == Class::zero) return {0, sf.quantum_min(), false};
  return {u.sig, u.exp, false};
}

// ---------------------------------------------------------------------------------------------
// FDA (and CoFDA by chaining): MMA-Sim IV-C. FA and FB give the a and b formats: a constant
// one lets the compiler fold the decoding of the common formats.
struct RuntimeA {
  static const Format& get(const DotConfig& c) { return *c.a; }
};
struct RuntimeB {
  static const Format& get(const DotConfig& c) { return *c.b; }
};
template <const Format& F>
struct Fixed {
  static constexpr const Format& get(const DotConfig&) { return F; }
};

// A fixed-point sum acc (LSB 2^q) in an accumulator of carry_bits integer bits above the largest
// leading bit E of the terms (c and the exact products), and a sign bit: it wraps modulo
// 2^(E + carry_bits + 2), as the bit-vector adder of Valpey et al. does.
std::int64_t wrap_carries(int carry_bits, const Format& cf, const Unpacked& uc, const Term* t, int n, int q,
                          std::int64_t acc) {
  int e = INT_MIN / 2;
  if (is_finite_nonzero(uc.cls)) e = align_exp(cf, uc);  // a subnormal c counts at emin, as there
  for (int k = 0; k < n; ++k)
    if (t[k].sig != 0) e = std::max(e, t[k].exp + msb(t[k].sig));
  const int width = e + carry_bits + 1 - q;  // bits of |sum| the accumulator holds
  // Below 0 every term lies under the LSB (their truncations sum to acc, 0): nothing to wrap.
  if (e == INT_MIN / 2 || width >= 62 || width < 0) return acc;
  const std::int64_t half = std::int64_t(1) << width;
  const std::int64_t low = acc & (2 * half - 1);  // acc mod 2^(width + 1)
  return low >= half ? low - 2 * half : low;
}

template <class FA, class FB>
std::uint64_t fda_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                        const std::uint64_t* b, int n, const std::uint64_t* sa, const std::uint64_t* sb, int k0) {
  const DotConfig& cfg = dot.config();
  const Format& fa = FA::get(cfg);
  const Format& fb = FB::get(cfg);
  const Unpacked uc = unpack(cf, c);
  Specials sp(uc);
  bool all_neg_zero = uc.cls == Class::zero && uc.neg;
  bool any_nonzero = false;
  int emax = cfg.align_floor;
  if (is_finite_nonzero(uc.cls)) {
    emax = std::max(emax, align_exp(cf, uc));
    any_nonzero = true;
  }
  Term t[kMaxDotK];
  int pmax = INT_MIN / 2;  // largest LSB exponent of a nonzero product
  int m = fa.man_bits + fb.man_bits;
  if (sa) m += 2 * cfg.scale->man_bits;
  for (int k = 0; k < n; ++k) {
    const Unpacked x = unpack(fa, a[k]), y = unpack(fb, b[k]);
    if (!finite(x.cls) || !finite(y.cls)) [[unlikely]] {
      sp.add_product(x, y);
      t[k] = {0, 0, false};
      continue;
    }
    std::uint64_t sig = x.sig * y.sig;
    int exp = x.exp + y.exp;
    if (sa) {
      const int s = (k0 + k) / cfg.scale_block;
      const Scale p = decode_scale(*cfg.scale, sa[s]), q = decode_scale(*cfg.scale, sb[s]);
      if (p.nan || q.nan) sp.nan = true;
      sig *= p.sig * q.sig;
      exp += p.exp + q.exp;
    }
    const bool neg = x.neg != y.neg;
    t[k] = {sig, exp, neg};
    all_neg_zero &= sig == 0 && neg;
    if (sig != 0) {
      pmax = std::max(pmax, exp);
      any_nonzero = true;
    }
  }
  if (sp.any()) [[unlikely]]
    return sp.result(dot);
  if (!any_nonzero) return dot.round_out(all_neg_zero, 0, 0);
  if (pmax > INT_MIN / 2) emax = std::max(emax, pmax + m);
  const int q = emax - cfg.F;  // exponent of the accumulator's LSB
  std::int64_t acc = 0;
  if (is_finite_nonzero(uc.cls)) {
    const auto v = std::int64_t(align_trunc(uc.sig, uc.exp - q));
    acc = uc.neg ? -v : v;
  }
  for (int k = 0; k < n; ++k) {
    const auto v = std::int64_t(align_trunc(t[k].sig, t[k].exp - q));
    acc += t[k].neg ? -v : v;
  }
  if (cfg.carry_bits > 0) acc = wrap_carries(cfg.carry_bits, cf, uc, t, n, q, acc);
  const bool neg = acc < 0;
  return dot.round_out(neg, std::uint64_t(neg ? -acc : acc), q);
}

// The FDA fast path for fixed a and b formats (fda_fast::with_format) without scale factors:
// branch-free decoding into biased exponents, one pass for the maximum, one for the sum, in lanes
// of T (std::uint32_t where the block fits them, which the compiler vectorizes best). Blocks with
// an infinity or NaN, and blocks longer than 64 products, take fda_block.
template <const Format& A, const Format& B, class T>
std::uint64_t fda_fast_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                             const std::uint64_t* b, int n, const std::uint64_t* sa, const std::uint64_t* sb, int k0) {
  using P = fda_fast::Pair<A, B>;
  constexpr int kMax = 64;
  const DotConfig& cfg = dot.config();
  if (n > kMax) return fda_block<Fixed<A>, Fixed<B>>(dot, cf, c, a, b, n, sa, sb, k0);
  if constexpr (!std::is_same_v<T, std::uint64_t>)
    if (!P::template fits<T>(std::max(cfg.F - P::m, 0), n))
      return fda_fast_block<A, B, std::uint64_t>(dot, cf, c, a, b, n, sa, sb, k0);
  alignas(64) std::uint32_t sig[kMax];
  alignas(64) std::int32_t pe[kMax];
  alignas(64) T ngm[kMax];
  std::uint32_t special = 0, not_neg_zero = 0;
  std::int32_t pmax = fda_fast::kNoProduct;
  for (int k = 0; k < n; ++k) {
    const fda_fast::Operand x = fda_fast::decode<A>(a[k]), y = fda_fast::decode<B>(b[k]);
    special |= x.special | y.special;
    const std::uint32_t p = x.sig * y.sig, ng = x.neg ^ y.neg;
    sig[k] = p;
    pe[k] = x.exp + y.exp;
    ngm[k] = T(0) - T(ng);
    not_neg_zero |= std::uint32_t(p != 0) | (ng ^ 1);
    pmax = std::max(pmax, p != 0 ? pe[k] : fda_fast::kNoProduct);
  }
  const fda_fast::Addend ca = fda_fast::decode_addend(fda_fast::AddendFormat(cf), c);
  if (special || ca.special) [[unlikely]]
    return fda_block<Fixed<A>, Fixed<B>>(dot, cf, c, a, b, n, sa, sb, k0);
  if (pmax == fda_fast::kNoProduct && ca.zero) return fda_fast::zero_result(dot, ca.neg, !not_neg_zero);
  const fda_fast::Alignment al = fda_fast::alignment<P>(cfg, ca, pmax);
  T pos = 0, neg = 0;
  for (int k = 0; k < n; ++k) {
    const T v = fda_fast::aligned<T>(sig[k], pe[k], al.top, al.lp);
    pos += v & ~ngm[k];
    neg += v & ngm[k];
  }
  const fda_fast::FastRounding fr(dot);
  return fda_fast::result(dot, fr, std::int64_t(pos) - std::int64_t(neg) + fda_fast::c_term(ca, al), al.q);
}

// ---------------------------------------------------------------------------------------------
// FDRDA, GFDRDA (and their chains): MMA-Sim IV-F to IV-I.
std::uint64_t fdrda_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                          const std::uint64_t* b, int n, const std::uint64_t*, const std::uint64_t*, int) {
  const DotConfig& cfg = dot.config();
  const Format& fa = *cfg.a;
  const Format& fb = *cfg.b;
  const Format& d = *cfg.d;
  const bool grouped = cfg.algorithm == MmaAlgorithm::gfdrda || cfg.algorithm == MmaAlgorithm::cogfdrda;
  // Step 1: special inputs.
  const Unpacked uc = unpack(cf, c);
  Specials sp(uc);
  Term t[kMaxDotK];
  for (int k = 0; k < n; ++k) {
    const Unpacked x = unpack(fa, a[k]), y = unpack(fb, b[k]);
    if (!finite(x.cls) || !finite(y.cls)) {
      sp.add_product(x, y);
      t[k] = {0, 0, false};
      continue;
    }
    t[k] = {x.sig * y.sig, x.exp + y.exp, x.neg != y.neg};
  }
  if (sp.any()) return sp.result(dot);
  // Steps 2 and 3: products of 2^(emax+1) or more overflow to infinity.
  Specials ovf;
  for (int k = 0; k < n; ++k)
    if (t[k].sig != 0 && t[k].exp + msb(t[k].sig) > d.emax()) ovf.add_inf(t[k].neg);
  if (ovf.any()) return ovf.result(dot);
  // Step 4 and 5: each group aligned to its largest product exponent, F bits kept, truncated.
  const int m = fa.man_bits + fb.man_bits;
  const int ngroups = grouped ? 2 : 1;
  int gmax[2] = {INT_MIN / 2, INT_MIN / 2};
  for (int k = 0; k < n; ++k)
    if (t[k].sig != 0) gmax[grouped ? k & 1 : 0] = std::max(gmax[grouped ? k & 1 : 0], t[k].exp + m);
  std::int64_t gsum[2] = {0, 0};
  for (int k = 0; k < n; ++k) {
    if (t[k].sig == 0) continue;
    const int g = grouped ? k & 1 : 0;
    const auto v = std::int64_t(align_trunc(t[k].sig, t[k].exp - (gmax[g] - cfg.F)));
    gsum[g] += t[k].neg ? -v : v;
  }
  // Step 6 and 7 of GFDRDA: the two group sums aligned to the larger exponent, rounded down.
  int edot = gmax[0];
  std::int64_t sdot = gsum[0];  // at quantum 2^(edot - F)
  if (ngroups == 2) {
    edot = std::max(gmax[0], gmax[1]);
    sdot = 0;
    for (int g = 0; g < 2; ++g)
      if (gmax[g] > INT_MIN / 2) sdot += align_floor_signed(gsum[g], gmax[g] - edot);
  }
  const bool has_dot = edot > INT_MIN / 2;
  const bool has_c = is_finite_nonzero(uc.cls);
  if (!has_dot && !has_c) {
    const bool neg_zero = uc.neg && std::all_of(t, t + n, [](const Term& x) { return x.neg; });
    return dot.round_out(neg_zero, 0, 0);
  }
  // Alignment of the dot product (31 fraction bits) and c (F bits) to their larger exponent.
  const int ec = has_c ? align_exp(cf, uc) : INT_MIN / 2;
  const int emax = std::max({has_dot ? edot : INT_MIN / 2, ec, cfg.align_floor});
  const int q = emax - kFdrdaDotBits;
  std::int64_t sum = 0;
  if (has_dot) {
    const int shift = (edot - cfg.F) - q;
    sum += cfg.round_down_alignment ? align_floor_signed(sdot, shift) : align_trunc_signed(sdot, shift);
  }
  if (has_c) {
    const int qc = emax - cfg.F;
    const std::int64_t vc = uc.neg ? -std::int64_t(uc.sig) : std::int64_t(uc.sig);
    // GFDRDA: c far below the dot product (e_c < e_max - 25) is truncated instead of rounded down.
    const bool toward_zero = !cfg.round_down_alignment || (grouped && ec < emax - 25);
    const std::int64_t cq = toward_zero ? align_trunc_signed(vc, uc.exp - qc) : align_floor_signed(vc, uc.exp - qc);
    sum += cq * (std::int64_t{1} << (qc - q));
  }
  const bool neg = sum < 0;
  return dot.round_out(neg, std::uint64_t(neg ? -sum : sum), q);
}

// ---------------------------------------------------------------------------------------------
// GDFS: MMA-Sim IV-E.
std::uint64_t gdfs_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                         const std::uint64_t* b, int n, const std::uint64_t* sa, const std::uint64_t* sb, int k0) {
  const DotConfig& cfg = dot.config();
  const Format& fa = *cfg.a;
  const Format& fb = *cfg.b;
  const Unpacked uc = unpack(cf, c);
  Specials sp(uc);
  const int qp = fa.quantum_min() + fb.quantum_min();  // quantum of every exact product
  const int gsize = cfg.group;
  const int ngroups = (n + gsize - 1) / gsize;
  bool all_neg_zero = uc.cls == Class::zero && uc.neg;
  // Steps 2 and 3: products and their group sums, exactly, at quantum 2^qp.
  std::int64_t sigma[kMaxDotK];
  for (int g = 0; g < ngroups; ++g) {
    std::int64_t s = 0;
    for (int k = g * gsize; k < std::min(n, (g + 1) * gsize); ++k) {
      const Unpacked x = unpack(fa, a[k]), y = unpack(fb, b[k]);
      if (!finite(x.cls) || !finite(y.cls)) {
        sp.add_product(x, y);
        continue;
      }
      const auto v = std::int64_t((x.sig * y.sig) << (x.exp + y.exp - qp));
      all_neg_zero &= v == 0 && x.neg != y.neg;
      s += x.neg != y.neg ? -v : v;
    }
    sigma[g] = s;
  }
  // Step 4: each group sum times its scale factors; exponent e_g = e(sfa) + e(sfb).
  Term gt[kMaxDotK];
  int emax = cfg.align_floor;
  for (int g = 0; g < ngroups; ++g) {
    std::uint64_t sig = std::uint64_t(sigma[g] < 0 ? -sigma[g] : sigma[g]);
    int exp = qp, e = 0;
    if (sa) {
      const int s = (k0 + g * gsize) / cfg.scale_block;
      const Scale p = decode_scale(*cfg.scale, sa[s]), q = decode_scale(*cfg.scale, sb[s]);
      if (p.nan || q.nan) sp.nan = true;
      sig *= p.sig * q.sig;
      exp += p.exp + q.exp;
      e = p.exp + q.exp + 2 * cfg.scale->man_bits;
    }
    gt[g] = {sig, exp, sigma[g] < 0};
    emax = std::max(emax, e);
  }
  if (sp.any()) return sp.result(dot);
  const bool has_c = is_finite_nonzero(uc.cls);
  if (has_c) emax = std::max(emax, align_exp(cf, uc));
  if (ngroups == 0 && !has_c) return dot.round_out(all_neg_zero, 0, 0);
  // Steps 5 to 7: alignment to the largest exponent with F fraction bits, truncated; exact sum.
  const int q = emax - cfg.F;
  std::int64_t acc = 0;
  if (has_c) {
    const auto v = std::int64_t(align_trunc(uc.sig, uc.exp - q));
    acc = uc.neg ? -v : v;
  }
  for (int g = 0; g < ngroups; ++g) {
    const auto v = std::int64_t(align_trunc(gt[g].sig, gt[g].exp - q));
    acc += gt[g].neg ? -v : v;
  }
  if (acc == 0) return dot.round_out(all_neg_zero, 0, 0);
  const bool neg = acc < 0;
  return dot.round_out(neg, std::uint64_t(neg ? -acc : acc), q);
}

// ---------------------------------------------------------------------------------------------
// SFMA: MMA-Sim IV-A. IEEE FMA in d's format, RNE, one product after the other.
std::uint64_t sfma_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                         const std::uint64_t* b, int n, const std::uint64_t*, const std::uint64_t*, int) {
  const DotConfig& cfg = dot.config();
  const Format& d = *cfg.d;
  const Options o;
  std::uint64_t acc = &cf == &d ? c : cvt(d, cf, o, c).bits;
  for (int k = 0; k < n; ++k) {
    const std::uint64_t x = cfg.a == &d ? a[k] : cvt(d, *cfg.a, o, a[k]).bits;
    const std::uint64_t y = cfg.b == &d ? b[k] : cvt(d, *cfg.b, o, b[k]).bits;
    acc = fma(d, o, x, y, acc).bits;
  }
  return acc;
}

// ---------------------------------------------------------------------------------------------
// GPS: MMA-Sim IV-B. FP32 operations (RNE) with subnormal flushing.
constexpr std::uint64_t flush_signed(std::uint64_t x) {
  return classify(binary32, x) == Class::subnormal ? x & binary32.sign_mask() : x;
}

std::uint64_t pairwise_sum(const std::uint64_t* p, int n) {
  if (n == 1) return p[0];
  const Options o;
  const std::uint64_t lo = pairwise_sum(p, n / 2), hi = pairwise_sum(p + n / 2, n - n / 2);
  return flush_signed(add(binary32, o, lo, hi).bits);
}

std::uint64_t gps_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                        const std::uint64_t* b, int n, const std::uint64_t*, const std::uint64_t*, int) {
  const DotConfig& cfg = dot.config();
  const Options o;
  // Step 1: subnormal inputs become +0 (each in its own format).
  auto to32 = [&](const Format& f, std::uint64_t x) {
    if (classify(f, x) == Class::subnormal) return std::uint64_t{0};
    return &f == &binary32 ? x : cvt(binary32, f, o, x).bits;
  };
  // Step 2: FP32 products, subnormal products flushed keeping their sign.
  std::uint64_t p[kMaxDotK];
  for (int k = 0; k < n; ++k) p[k] = flush_signed(mul(binary32, o, to32(*cfg.a, a[k]), to32(*cfg.b, b[k])).bits);
  // Steps 3 and 4: c, then each group's pairwise sum, sequentially.
  std::uint64_t d = to32(cf, c);
  for (int k = 0; k < n; k += cfg.group)
    d = flush_signed(add(binary32, o, d, pairwise_sum(p + k, std::min(cfg.group, n - k))).bits);
  return cfg.d == &binary32 ? d : cvt(*cfg.d, binary32, o, d).bits;
}

// ---------------------------------------------------------------------------------------------
// OCFDA: the dot unit of AMD RDNA 3.5 (gfx1151) as ROCm/rocm-systems issue 12056 describes it from
// silicon measurements of V_DOT2_F32_F16, V_DOT2_F32_BF16 and WMMA:
//  - the products are exact and never flushed; with flush_inputs, subnormal a and b read as zeros
//    first (bf16 on gfx11; f16 inputs are kept there);
//  - the grid's top is the largest of c's exponent and, per product, the sum of its operands'
//    exponents each floored at its format's emin (align_exp: subnormals count at emin), not the
//    product's own leading bit; its LSB lies F bits below (F, the accumulator width, is not
//    published: 24 reproduces the example -1 + 3*8 + 8*4 -> 55 + 2^-18, see
//    unittests/amd_dot_test.cpp);
//  - the adder is sign-magnitude with c's sign as the frame (a zero c's too: assumed): every summand is
//    truncated onto the grid and added as an integer, one opposing the frame as its bit inversion
//    without the +1, so -m - 1 units (one's complement, the end-around carry dropped);
//  - the sum's magnitude is rounded once to d (out_rounding: not published, RNE assumed); specials
//    as IEEE.
// Assumed beyond the issue: zero summands take no part (they neither set the grid nor are
// inverted), bits below the grid are truncated before the inversion (a nonzero product that leaves
// nothing on the grid still enters as -1 when it opposes), an exact zero sum is +0.
std::uint64_t ocfda_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                          const std::uint64_t* b, int n, const std::uint64_t*, const std::uint64_t*, int) {
  const DotConfig& cfg = dot.config();
  const Unpacked uc = unpack(cf, c);
  Specials sp(uc);
  const bool has_c = is_finite_nonzero(uc.cls);
  bool all_neg_zero = uc.cls == Class::zero && uc.neg;
  int top = has_c ? std::max(cfg.align_floor, align_exp(cf, uc)) : cfg.align_floor;
  Term t[kMaxDotK];
  bool any = has_c;
  for (int k = 0; k < n; ++k) {
    const Unpacked x = unpack(*cfg.a, a[k], cfg.flush_inputs), y = unpack(*cfg.b, b[k], cfg.flush_inputs);
    t[k] = {0, 0, x.neg != y.neg};
    if (!finite(x.cls) || !finite(y.cls)) {
      sp.add_product(x, y);
      continue;
    }
    all_neg_zero &= t[k].neg;
    if (x.cls == Class::zero || y.cls == Class::zero) continue;
    t[k] = {x.sig * y.sig, x.exp + y.exp, t[k].neg};
    top = std::max(top, align_exp(*cfg.a, x) + align_exp(*cfg.b, y));
    any = true;
  }
  if (sp.any()) return sp.result(dot);
  if (!any) return dot.round_out(all_neg_zero, 0, 0);
  const int q = top - cfg.F;  // exponent of the grid's LSB
  const bool frame = uc.neg;
  std::int64_t acc = has_c ? std::int64_t(align_trunc(uc.sig, uc.exp - q)) : 0;
  for (int k = 0; k < n; ++k) {
    if (t[k].sig == 0) continue;
    const auto m = std::int64_t(align_trunc(t[k].sig, t[k].exp - q));
    acc += t[k].neg == frame ? m : -m - 1;
  }
  return dot.round_out(frame != (acc < 0), std::uint64_t(acc < 0 ? -acc : acc), q);
}

// ---------------------------------------------------------------------------------------------
std::uint64_t tree_block(const Dot& dot, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                         const std::uint64_t* b, int n, const std::uint64_t*, const std::uint64_t*, int) {
  return evaluate_tree(*dot.config().tree, dot.config(), cf, c, a, b, n);
}

}  // namespace

std::string_view name(MmaAlgorithm a) { return algorithm_names[std::size_t(a)]; }

std::optional<MmaAlgorithm> find_mma_algorithm(std::string_view n) {
  for (std::size_t i = 0; i < algorithm_names.size(); ++i)
    if (algorithm_names[i] == n) return MmaAlgorithm(i);
  return std::nullopt;
}

DotConfig default_dot_config(MmaAlgorithm alg, const Format& a, const Format& b, const Format& c, const Format& d,
                             int k) {
  DotConfig cfg;
  cfg.algorithm = alg;
  cfg.a = &a;
  cfg.b = &b;
  cfg.c = &c;
  cfg.d = &d;
  cfg.out_fraction_bits = d.man_bits;
  cfg.out_rounding = &d == &binary16 ? Rounding::rne : Rounding::rz;
  cfg.nan = MmaNan::nvidia;
  switch (alg) {
    case MmaAlgorithm::sfma:
      cfg.out_rounding = Rounding::rne;
      cfg.nan = MmaNan::format;
      break;
    case MmaAlgorithm::gps:
      cfg.group = 4;
      cfg.out_rounding = Rounding::rne;
      cfg.nan = MmaNan::format;
      break;
    case MmaAlgorithm::fda: cfg.F = 24; break;
    case MmaAlgorithm::cofda:
      cfg.F = 24;
      cfg.block = k > 1 ? k / 2 : 0;
      break;
    case MmaAlgorithm::gdfs:
      cfg.F = 35;
      cfg.group = 16;
      break;
    case MmaAlgorithm::fdrda:
    case MmaAlgorithm::cofdrda:
    case MmaAlgorithm::gfdrda:
    case MmaAlgorithm::cogfdrda:
      cfg.F = 24;
      cfg.out_rounding = Rounding::rne;
      cfg.nan = MmaNan::format;
      if (alg == MmaAlgorithm::cofdrda) cfg.block = k > 1 ? k / 2 : 0;
      if (alg == MmaAlgorithm::gfdrda || alg == MmaAlgorithm::cogfdrda) cfg.block = 16;
      break;
    case MmaAlgorithm::tree:
      cfg.out_rounding = Rounding::rne;
      cfg.nan = MmaNan::format;
      break;
    case MmaAlgorithm::ocfda:
      // F inferred from the example, blocks of 2 and RNE assumed (model/mma_instructions.cpp).
      cfg.F = 24;
      cfg.block = 2;
      cfg.out_rounding = Rounding::rne;
      cfg.nan = MmaNan::format;
      cfg.flush_inputs = &a == &bfloat16 || &b == &bfloat16;
      break;
  }
  return cfg;
}

int scale_count(const DotConfig& cfg, int k) {
  if (!cfg.scale) return 0;
  return (k + cfg.scale_block - 1) / cfg.scale_block;
}

std::string check(const DotConfig& cfg) {
  if (!cfg.a || !cfg.b || !cfg.c || !cfg.d) return "a, b, c and d formats are required";
  const Format &a = *cfg.a, &b = *cfg.b, &d = *cfg.d;
  if (cfg.block < 0 || cfg.block > kMaxDotK) return "block must lie in 0.." + std::to_string(kMaxDotK);
  if (cfg.algorithm == MmaAlgorithm::sfma) {
    if (cfg.scale) return "sfma takes no scale factors";
    return "";
  }
  if (cfg.algorithm == MmaAlgorithm::tree) {
    if (!cfg.tree) return "the tree algorithm needs a tree (--tree)";
    return check_tree(*cfg.tree, cfg);
  }
  if (cfg.algorithm == MmaAlgorithm::gps) {
    if (cfg.group < 1 || cfg.group > kMaxDotK) return "gps needs a group size G of at least 1";
    if (cfg.scale) return "gps takes no scale factors";
    return "";
  }
  if (cfg.F < 0 || cfg.F > kMaxF) return "F must lie in 0.." + std::to_string(kMaxF);
  if (cfg.carry_bits != 0 && unchained(cfg.algorithm) != MmaAlgorithm::fda)
    return "carry bits are a parameter of fda and cofda";
  if (cfg.carry_bits < 0 || cfg.carry_bits > kMaxCarryBits)
    return "carry bits must lie in 0.." + std::to_string(kMaxCarryBits) + " (0: every carry kept)";
  if (cfg.flush_inputs && cfg.algorithm != MmaAlgorithm::ocfda)
    return "flushing subnormal inputs is a parameter of ocfda";
  if (is_fdrda_family(cfg.algorithm) && cfg.F > kFdrdaDotBits)
    return "the fdrda family keeps at most " + std::to_string(kFdrdaDotBits) +
           " fraction bits (F <= " + std::to_string(kFdrdaDotBits) + ")";
  if (!d.has_sign() || !d.has_subnormals() || d.nan != NanStyle::ieee)
    return "the fused algorithms need an IEEE-style d format (binary32, binary16, ...)";
  if (cfg.out_fraction_bits < 0 || cfg.out_fraction_bits > d.man_bits)
    return "out fraction bits must lie in 0.." + std::to_string(d.man_bits);
  if (a.precision() + b.precision() > 50) return "a and b products must fit 50 bits (use sfma for wide formats)";
  if (cfg.c->precision() > 53 || d.precision() > 53) return "c and d must have at most 53 bits of precision";
  if (cfg.scale) {
    if (cfg.scale->has_sign() || cfg.scale->precision() > 4) return "scale factors must be ue8m0 or ue4m3";
    if (cfg.scale_block < 1) return "the scale block must be at least 1";
    if (is_fdrda_family(cfg.algorithm) || cfg.algorithm == MmaAlgorithm::ocfda)
      return std::string(name(cfg.algorithm)) + " takes no scale factors";
  }
  if (cfg.algorithm == MmaAlgorithm::gdfs) {
    if (cfg.group < 1 || cfg.group > 64) return "gdfs needs a group size of 1..64";
    const int span = (a.emax() + 1 - a.quantum_min()) + (b.emax() + 1 - b.quantum_min()) + 7;
    // Two e4m3 operands span 43 bits: e4m3 fits only beside fp4 or fp6.
    if (span > 40)
      return "gdfs needs narrow a and b formats (fp4 and fp6, or e4m3 with one of them): exact group sums must fit 40 "
             "bits, " +
             std::string(a.name) + " x " + std::string(b.name) + " needs " + std::to_string(span);
  }
  return "";
}

Dot::Dot(const DotConfig& cfg) : cfg_(cfg), narrow_(*cfg.d) {
  if (is_fused(cfg.algorithm) && cfg.out_fraction_bits < cfg.d->man_bits) {
    use_narrow_ = true;
    narrow_.name = "narrowed output";
    narrow_.man_bits = cfg.out_fraction_bits;
    narrow_.storage_bits = cfg.d->storage_bits - cfg.d->pad_bits - (cfg.d->man_bits - cfg.out_fraction_bits);
    narrow_.pad_bits = 0;
  }
  switch (cfg.algorithm) {
    case MmaAlgorithm::sfma: block_fn_ = sfma_block; break;
    case MmaAlgorithm::gps: block_fn_ = gps_block; break;
    case MmaAlgorithm::tree: block_fn_ = tree_block; break;
    case MmaAlgorithm::ocfda: block_fn_ = ocfda_block; break;
    case MmaAlgorithm::gdfs: block_fn_ = gdfs_block; break;
    case MmaAlgorithm::fdrda:
    case MmaAlgorithm::cofdrda:
    case MmaAlgorithm::gfdrda:
    case MmaAlgorithm::cogfdrda: block_fn_ = fdrda_block; break;
    case MmaAlgorithm::fda:
    case MmaAlgorithm::cofda:
      block_fn_ = fda_block<RuntimeA, RuntimeB>;
      fda_fast::with_format(cfg, [&]<const Format & F>() { block_fn_ = fda_fast_block<F, F, std::uint32_t>; });
      break;
  }
}

std::uint64_t Dot::nan_bits() const {
  const Format& d = *cfg_.d;
  return cfg_.nan == MmaNan::nvidia ? pack(d, false, d.magnitude_mask()) : canonical_nan(d);
}

std::uint64_t Dot::inf_bits(bool neg) const { return infinity(*cfg_.d, Options{}, neg).bits; }

std::uint64_t Dot::round_out(bool neg, std::uint64_t mag, int exp) const {
  const Format& d = *cfg_.d;
  if (mag == 0) return zero(d, neg).bits;
  if (exp + msb(mag) > d.emax()) return inf_bits(neg);
  Options o;
  o.rounding = cfg_.out_rounding;
  if (!use_narrow_) return round_pack(d, o, neg, exp, mag).bits;
  const std::uint64_t r = round_pack(narrow_, o, neg, exp, mag).bits;
  const std::uint64_t m = magnitude_of(narrow_, r);
  const std::uint64_t widened =
      ((m >> narrow_.man_bits) << d.man_bits) | ((m & narrow_.man_mask()) << (d.man_bits - narrow_.man_bits));
  return pack(d, sign_of(narrow_, r), widened);
}

std::uint64_t Dot::operator()(std::uint64_t c, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                              std::span<const std::uint64_t> sa, std::span<const std::uint64_t> sb) const {
  const int k = int(std::min(a.size(), b.size()));
  int block = cfg_.block > 0 ? cfg_.block : k;
  if (!is_fused(cfg_.algorithm) || block < 1) block = std::max(k, 1);
  if (cfg_.algorithm != MmaAlgorithm::tree)
    block = std::min(block, kMaxDotK);  // longer blocks chain (sfma and gps: the same result)
  const std::uint64_t* psa = cfg_.scale ? sa.data() : nullptr;
  const std::uint64_t* psb = cfg_.scale ? sb.data() : nullptr;
  const Format* cf = cfg_.c;
  int k0 = 0;
  do {
    const int n = std::min(block, k - k0);
    c = block_fn_(*this, *cf, c, a.data() + k0, b.data() + k0, n, psa, psb, k0);
    cf = cfg_.d;
    k0 += n;
  } while (k0 < k);
  return c;
}

std::uint64_t dot(const DotConfig& cfg, std::uint64_t c, std::span<const std::uint64_t> a,
                  std::span<const std::uint64_t> b, std::span<const std::uint64_t> sa,
                  std::span<const std::uint64_t> sb) {
  return Dot(cfg)(c, a, b, sa, sb);
}

}  // namespace gp::model
