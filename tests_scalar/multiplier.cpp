// Truncated multiplier: the columns of partial products it generates and its correction constant
// (Daumas, da Graca, Defour 2006, section 2.2; Schulte and Swartzlander 1993).
//
// The paper multiplies 2^(p-1) + 3 by y1 = 1, y2i = y2i-1 + 1, y2i+1 = 4 y2i-1 + 2 (a chain of ones
// without carries below the result, then one that carries from the rightmost column), and
// (2^(p-1) + 1) by every odd 2i + 1; it finds partial products generated down to the 6th column
// below the result on NVIDIA, the 9th on ATI, and a constant added to make up for the rest.
// Operands here are those integers normalised into [1, 2) (the multiplier only sees significands).
//
// Every multiplier of model/scalar_unit.hpp is a hypothesis: the exact product rounded in each
// mode, or t = 0 .. p-1 columns generated below the result's last bit, a correction c in units of
// the lowest generated column, and chop or a rounding mode. The result grows with c, so for each
// (rounding, t) the constants that reproduce an output form an interval, found by bisection; the
// intervals of all cases intersect to the constants consistent with the device. What survives is
// reported, several survivors as an ambiguity.
//
// scalar.mul.truncated_columns runs the first sequence and random pairs; scalar.mul.correction
// runs the odd multiples (all of them for binary32 in the full tier, 2^23 products), the first
// sequence and a few random pairs.
#include <fmt/format.h>

#include <functional>
#include <random>

#include "model/scalar_unit.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::MultiplierParams;
using model::Rounding;
using model::UnitRounding;

// An integer significand m (1 <= m < 2^p) as a value of f in [1, 2).
std::uint64_t normalised(const Format& f, std::uint64_t m) { return value(f, false, -model::msb(m), m); }

std::vector<Case> paper_sequence(const Format& f) {
  const int p = f.precision();
  const std::uint64_t x = (std::uint64_t{1} << (p - 1)) + 3;
  std::vector<Case> v;
  std::uint64_t odd = 1;  // y_{2i-1}
  for (int n = 1;; ++n) {
    const std::uint64_t y = n % 2 ? odd : odd + 1;
    if (y >> p) break;
    v.push_back({{normalised(f, x), normalised(f, y)}, fmt::format("(2^{} + 3) * y{} (y{} = {:#x})", p - 1, n, n, y)});
    if (n % 2 == 0) odd = 4 * odd + 2;
  }
  return v;
}

// The odd multiples in chunks (a full run makes 2^23 of them): chunk `c` of `size`, empty past the end.
std::vector<Case> odd_multiples(const Format& f, std::uint64_t n, std::uint64_t seed, std::uint64_t c,
                                std::uint64_t size) {
  const int p = f.precision();
  const std::uint64_t x = (std::uint64_t{1} << (p - 1)) + 1,
                      last = (std::uint64_t{1} << (p - 1)) - 1;  // 0 < i < 2^(p-1)
  const std::uint64_t count = std::min(n, last);
  std::vector<Case> v;
  std::mt19937_64 rng(seed ^ 0x636f72726563ULL ^ c);
  for (std::uint64_t k = c * size; k < count && k < (c + 1) * size; ++k) {
    // All of them when they fit, else the first half of the count and random ones.
    const std::uint64_t i = last <= n || k < n / 2 ? k + 1 : 1 + rng() % last;
    v.push_back({{normalised(f, x), normalised(f, 2 * i + 1)},
                 k < 4096 ? fmt::format("(2^{} + 1) * {}", p - 1, 2 * i + 1) : std::string()});
  }
  return v;
}

// (2^(p-1) + 1) * B with B's bits below the result's last bit set to half, zero or one ulp, plus or
// minus one bit in column j, for every j: whether column j is generated decides the rounding of
// a product just off a tie or an exact value (for every rounding, chopping included).
std::vector<Case> column_probes(const Format& f) {
  const int p = f.precision();
  const std::uint64_t a = (std::uint64_t{1} << (p - 1)) + 1, top = std::uint64_t{1} << (p - 1), half = top >> 1;
  std::vector<Case> v;
  // Exact ties, kept part odd then even, both signs: they separate the ways of breaking ties.
  for (std::uint64_t x : {a, a + 2})
    for (bool neg : {false, true})
      v.push_back({{value(f, neg, -(p - 1), x), normalised(f, top + half)},
                   fmt::format("{}(2^{} + {}) * {:#x}: a tie", neg ? "-" : "", p - 1, x - top, top + half)});
  for (int j = 0; j + 2 < p; ++j) {
    const std::uint64_t bit = std::uint64_t{1} << j;
    const std::pair<std::uint64_t, const char*> bs[] = {{top + half + bit, "tie + 2^{}"},
                                                        {top + half - bit, "tie - 2^{}"},
                                                        {top + bit, "exact + 2^{}"},
                                                        {2 * top - bit, "ulp - 2^{}"}};
    for (const auto& [b, what] : bs)
      v.push_back(
          {{normalised(f, a), normalised(f, b)},
           fmt::format("(2^{} + 1) * {:#x}: below the last bit, {}", p - 1, b, fmt::format(fmt::runtime(what), j))});
  }
  return v;
}

// Dense random significands A, B whose exact product has a chosen rest below its last bit: 1 and
// one ulp minus 1 (in units of column 0: a truncated array, missing the many bits of the low
// columns, falls below the multiple; a correction constant carries over it), half plus and minus 1
// (the same around a tie). B solves A * B = rest modulo 2^(p-1); a product with a carry-out has its
// last bit one column higher, and its rest is what it is.
std::vector<Case> residue_probes(const Format& f, std::uint64_t n, std::uint64_t seed) {
  using model::u128;
  const int p = f.precision();
  const std::uint64_t top = std::uint64_t{1} << (p - 1), mask = top - 1;
  std::mt19937_64 rng(seed ^ 0x7265736964756573ULL);
  const std::uint64_t rests[] = {1, mask, (top >> 1) + 1, (top >> 1) - 1};
  static constexpr const char* what[] = {"1", "ulp - 1", "half + 1", "half - 1"};
  std::vector<Case> v;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t r = rests[i % 4];
    const std::uint64_t a = top | (rng() & mask) | 1;
    std::uint64_t inv = a;  // a^-1 modulo 2^64 by Newton's iteration (a odd)
    for (int k = 0; k < 6; ++k) inv *= 2 - a * inv;
    const std::uint64_t b = top | ((r * inv) & mask);
    const u128 prod = u128(a) * b;
    const int lsb = prod >> (2 * p - 1) ? p : p - 1;
    const std::uint64_t rest = std::uint64_t(prod & ((u128{1} << lsb) - 1));
    v.push_back({{normalised(f, a), normalised(f, b)},
                 fmt::format("{:#x} * {:#x}: rest below the last bit {:#x} (aimed at {})", a, b, rest, what[i % 4])});
  }
  return v;
}

std::vector<Case> random_pairs(const Format& f, std::uint64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x6d756c2d636f6cULL);
  std::vector<Case> v;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t a = random_normal(f, rng(), 0, rng() & 1, 0, 0),
                        b = random_normal(f, rng(), 0, rng() & 1, 0, 0);
    v.push_back({{a, b}, fmt::format("{} * {}", show(f, a), show(f, b))});
  }
  return v;
}

std::vector<UnitRounding> roundings() {
  std::vector<UnitRounding> v = {UnitRounding::chopped()};
  for (Rounding r : model::all_roundings)
    if (r != Rounding::rz) v.push_back(UnitRounding::ieee(r));
  return v;
}

// A surviving multiplier: exact (t null) or t columns with corrections lo..hi.
struct Candidate {
  UnitRounding r;
  std::optional<int> t;
  std::uint64_t lo = 0, hi = 0;
  bool alive = true;
};

std::uint64_t mul(const Format& f, const UnitRounding& r, std::optional<int> t, std::uint64_t c, const Case& k) {
  return model::multiplier_mul(f, MultiplierParams{r, t, c}, model::Options{}, k.operands[0], k.operands[1]).bits;
}

// Narrows the candidate's correction interval to the constants that give `out` for case k.
void narrow(const Format& f, Candidate& cand, const Case& k, std::uint64_t out) {
  if (!cand.t) {
    cand.alive = mul(f, cand.r, std::nullopt, 0, k) == out;
    return;
  }
  const auto m = [&](std::uint64_t c) { return mul(f, cand.r, cand.t, c, k); };
  const model::Class oc = model::classify(f, out);
  const bool comparable = (oc == model::Class::normal || oc == model::Class::infinite) &&
                          model::sign_of(f, out) == model::sign_of(f, m(cand.lo));
  if (!comparable) {  // a special or mis-signed output: only exact agreement at both ends keeps it
    cand.alive = m(cand.lo) == out && m(cand.hi) == out;
    return;
  }
  const std::uint64_t target = model::magnitude_of(f, out);
  const auto mag = [&](std::uint64_t c) { return model::magnitude_of(f, m(c)); };
  // Smallest c in [lo, hi] with mag >= target, largest with mag <= target (mag grows with c).
  std::uint64_t a = cand.lo, b = cand.hi;
  const std::uint64_t at_lo = mag(a), at_hi = a == b ? at_lo : mag(b);
  if (at_hi < target || at_lo > target) {
    cand.alive = false;
    return;
  }
  if (at_lo == target && at_hi == target) return;  // the whole interval fits: nothing to narrow
  while (a < b) {
    const std::uint64_t mid = a + (b - a) / 2;
    if (mag(mid) >= target)
      b = mid;
    else
      a = mid + 1;
  }
  const std::uint64_t lo = a;
  a = cand.lo;
  b = cand.hi;
  while (a < b) {
    const std::uint64_t mid = a + (b - a + 1) / 2;
    if (mag(mid) <= target)
      a = mid;
    else
      b = mid - 1;
  }
  const std::uint64_t hi = a;
  if (lo > hi || mag(lo) != target) {
    cand.alive = false;
    return;
  }
  cand.lo = lo;
  cand.hi = hi;
}

struct Identification {
  std::vector<Candidate> survivors;
  std::vector<std::vector<std::uint64_t>> outputs;  // per case set
};

// The truncated array's exact sum A * B of hypothesis (t, c), in units of column 0, over the rows
// of B's bits below `below` only (the definition of model/scalar_unit.hpp, to aim inputs; the
// predictions themselves always come from the model).
model::u128 array_sum(int p, int t, std::uint64_t c, std::uint64_t a, std::uint64_t b, int below) {
  const int low = t >= p - 1 ? 0 : p - 1 - t;
  model::u128 sum = model::u128(c) << low;
  for (int j = 0; j < below && j < p; ++j)
    if (b >> j & 1) sum += (model::u128(j >= low ? a << (j - low) : a >> (low - j))) << low;
  return sum;
}

// An operand pair on which two multipliers (exact products count as t = p - 1, c = 0) give
// different results, if one is found. Rows of B at or above both lowest generated columns add the
// same to both sums; B's lower bits are drawn at random and its upper bits chosen so that a
// rounding boundary (a multiple of the ulp, or of half of it, with or without a carry-out) falls
// between the two sums.
std::optional<Case> separate(const Format& f, const Candidate& h1, std::uint64_t c1, const Candidate& h2,
                             std::uint64_t c2, std::mt19937_64& rng) {
  using model::u128;
  __extension__ typedef __int128 i128;
  const int p = f.precision();
  const int t1 = h1.t ? *h1.t : p - 1, t2 = h2.t ? *h2.t : p - 1;
  const int lmax = std::max(t1 >= p - 1 ? 0 : p - 1 - t1, t2 >= p - 1 ? 0 : p - 1 - t2);
  const std::uint64_t top = std::uint64_t{1} << (p - 1);
  for (int attempt = 0; attempt < 400; ++attempt) {
    const std::uint64_t a = top | (rng() & (top - 1)) | 1;
    const std::uint64_t blow = lmax ? rng() & ((std::uint64_t{1} << lmax) - 1) : 0;
    const u128 x1 = array_sum(p, t1, c1, a, blow, lmax), x2 = array_sum(p, t2, c2, a, blow, lmax);
    const i128 delta = i128(x2) - i128(x1);
    if (delta == 0 && h1.r == h2.r) continue;
    const int space_bits = p - 1 + int(rng() % 2);  // boundary spacing: the ulp without or with a carry-out
    const u128 space = u128{1} << space_bits;
    const u128 boundary = rng() % 2 ? 0 : space / 2;
    // X1 + shift must end just below the boundary (delta > 0), on it (delta < 0: X2 falls below it),
    // or exactly on it (a tie or an exact result, for roundings that differ there); shift is a
    // multiple of 2^lmax, so the distance r from the boundary has X1's residue modulo 2^lmax.
    const u128 g = u128{1} << lmax;
    const i128 adelta = delta < 0 ? -delta : delta;
    u128 target;
    if (delta > 0 && rng() % 3) {
      u128 r = (boundary - x1) & (g - 1);  // X1 + shift == boundary - r (mod space), r in [1, delta]
      if (r == 0) r = g;
      if (i128(r) > adelta) continue;
      target = (boundary - r) & (space - 1);
    } else if (delta < 0 && rng() % 3) {
      const u128 r = (x1 - boundary) & (g - 1);  // X1 + shift == boundary + r, r in [0, -delta)
      if (i128(r) >= adelta) continue;
      target = (boundary + r) & (space - 1);
    } else {
      if (((boundary - x1) & (g - 1)) != 0) continue;  // X1 exactly on the boundary
      target = boundary;
    }
    // shift = a * k * 2^lmax == target - x1 (mod space)
    const u128 need = ((target - x1) & (space - 1)) >> lmax;
    const int kbits = space_bits - lmax;
    if (kbits <= 0) continue;
    std::uint64_t inv = a;
    for (int k = 0; k < 6; ++k) inv *= 2 - a * inv;
    const u128 kmask = (u128{1} << kbits) - 1;
    const std::uint64_t k = std::uint64_t((need * inv) & kmask);
    std::uint64_t b = blow | (k << lmax);
    if (b >> p) continue;
    if (!(b & top)) {
      if (space_bits == p) continue;  // adding the top bit would move the residue
      b |= top;
    }
    const bool neg = rng() % 2;  // roundings toward an infinity tell the signs apart
    const Case cs{{value(f, neg, -(p - 1), a), normalised(f, b)},
                  fmt::format("{}{:#x} * {:#x}: aimed between two multipliers", neg ? "-" : "", a, b)};
    if (mul(f, h1.r, h1.t, c1, cs) != mul(f, h2.r, h2.t, c2, cs)) return cs;
  }
  return std::nullopt;
}

// `more` yields further cases, chunk by chunk (empty at the end), that narrow the candidates but are
// not kept for the observations.
using Chunks = std::function<std::vector<Case>(std::uint64_t)>;

Expected<Identification> identify(backends::Device& device, const Format& f, std::vector<std::vector<Case>>& sets,
                                  std::uint64_t seed, const Chunks& more = {}) {
  const int p = f.precision();
  std::vector<Candidate> cands;
  for (const UnitRounding& r : roundings()) {
    cands.push_back({r, std::nullopt, 0, 0, true});
    for (int t = 0; t <= p - 1; ++t) {
      const int bits = std::min(t + 2, 62);
      cands.push_back({r, t, 0, (std::uint64_t{1} << bits), true});
    }
  }
  Identification id;
  const Expr expr = backends::binary(Node::mul, f);
  const auto feed = [&](const std::vector<Case>& cases) -> Expected<bool> {
    auto out = run_cases(device, expr, cases);
    if (!out) return out.error();
    for (std::size_t i = 0; i < cases.size(); ++i)
      for (Candidate& c : cands)
        if (c.alive) narrow(f, c, cases[i], (*out)[i]);
    id.outputs.push_back(std::move(*out));
    return true;
  };
  for (const std::vector<Case>& cases : sets)
    if (auto r = feed(cases); !r) return r.error();
  if (more)
    for (std::uint64_t c = 0;; ++c) {
      const std::vector<Case> chunk = more(c);
      if (chunk.empty()) break;
      if (auto r = feed(chunk); !r) return r.error();
      id.outputs.pop_back();
    }
  // Adaptive rounds: operands aimed between the surviving multipliers (pairs of survivors, and the
  // two ends of a survivor's interval of constants), until one remains or none can be told apart.
  std::mt19937_64 rng(seed ^ 0x61696d6564ULL);
  std::vector<Case> aimed;
  for (int round = 0; round < 40; ++round) {
    std::vector<const Candidate*> alive;
    for (const Candidate& c : cands)
      if (c.alive) alive.push_back(&c);
    if (alive.empty()) break;
    std::vector<Case> batch;
    const std::size_t m = std::min<std::size_t>(alive.size(), 24);
    for (std::size_t i = 0; i < m; ++i) {
      const Candidate& x = *alive[i];
      // The two ends of the interval of constants (and its middle, to halve it).
      if (x.t && x.lo != x.hi) {
        const std::uint64_t mid = x.lo + (x.hi - x.lo) / 2;
        for (std::uint64_t c : {x.lo, mid})
          if (auto k = separate(f, x, c, x, c == x.lo ? x.hi : mid + 1, rng)) batch.push_back(*k);
      }
      // Against the first survivor, at both ends.
      if (i == 0) continue;
      const Candidate& y = *alive[0];
      if (auto k = separate(f, y, y.lo, x, x.lo, rng)) batch.push_back(*k);
      if (x.hi != x.lo || y.hi != y.lo)
        if (auto k = separate(f, y, y.hi, x, x.hi, rng)) batch.push_back(*k);
    }
    if (batch.empty()) break;
    if (auto r = feed(batch); !r) return r.error();
    id.outputs.pop_back();
    aimed.insert(aimed.end(), batch.begin(), batch.end());
  }
  if (!aimed.empty()) {
    auto out = run_cases(device, expr, aimed);
    if (!out) return out.error();
    sets.push_back(std::move(aimed));
    id.outputs.push_back(std::move(*out));
  }
  for (const Candidate& c : cands)
    if (c.alive) id.survivors.push_back(c);
  return id;
}

// Products past the largest value, both signs: a nearest mode gives an infinity where the
// directed mode its tie rule names may give the largest value (rnz and chop), which a multiplier
// that keeps one column cannot show otherwise (probe_support.hpp, tie_directed).
std::vector<Case> overflow_probes(const Format& f) {
  std::vector<Case> v;
  for (bool neg : {false, true}) {
    v.push_back({{largest(f, neg), value(f, false, -1, 3)}, fmt::format("{}MAX * 1.5", neg ? "-" : "")});
    v.push_back({{pow2(f, f.emax(), neg), pow2(f, 1)}, fmt::format("{}2^{} * 2", neg ? "-" : "", f.emax())});
  }
  return v;
}

// Random products in the subnormal range: their rests have many bits even where the array keeps
// one column. Concluded on, not identified on (identify() narrows on normal outputs).
std::vector<Case> tiny_products(const Format& f, std::uint64_t n, std::uint64_t seed) {
  std::vector<Case> v;
  if (!f.has_subnormals()) return v;
  std::mt19937_64 rng(seed ^ 0x74696e79ULL);
  for (std::uint64_t i = 0; i < n; ++i) {
    const int below = 1 + int(rng() % std::uint64_t(f.man_bits));
    const std::uint64_t a = random_normal(f, rng(), 0, rng() & 1, f.emin(), f.emin());
    const std::uint64_t b = random_normal(f, rng(), 0, rng() & 1, -below, -below);
    v.push_back({{a, b}, fmt::format("{} * {}: a subnormal product", show(f, a), show(f, b))});
  }
  return v;
}

// The cases of scalar.mul.truncated_columns.
std::vector<std::vector<Case>> column_sets(const Format& f, const audit::ProbeContext& ctx) {
  return {paper_sequence(f), column_probes(f), residue_probes(f, ctx.cases(32, 128, 4096), ctx.seed),
          random_pairs(f, ctx.cases(64, 256, 65536), ctx.seed), overflow_probes(f)};
}

// The candidate units: the multipliers identify() left, every constant of a short interval, the
// ends and middle of a long one, after the IEEE unit (the reference of the observations); each
// keeps subnormal products or flushes them (tiny_products), as stores that flush do.
std::vector<model::ScalarUnit> materialize(const Format& f, const Identification& id) {
  std::vector<model::ScalarUnit> units = {model::ieee_unit(f)};
  const auto add = [&](const Candidate& c, std::uint64_t k) {
    model::ScalarUnit u = model::ieee_unit(f);
    u.mul = {c.r, c.t, c.t ? k : 0};
    units.push_back(u);
    if (!f.has_subnormals()) return;
    u.subnormals.flush_output = true;
    units.push_back(u);
  };
  for (const Candidate& c : id.survivors) {
    if (c.hi - c.lo <= 64)
      for (std::uint64_t k = c.lo; k <= c.hi; ++k) add(c, k);
    else
      for (std::uint64_t k : {c.lo, c.lo + (c.hi - c.lo) / 2, c.hi}) add(c, k);
  }
  return units;
}

// The multiplier's answer, from its parameters: the multiplier of f that computes the same
// products of values of f, where the model says which.
//   - generating every column (t >= p - 1) with no constant is the exact product (chopping: all
//     but column 0); chop is rz's
//     arithmetic, named chop when columns were dropped, rz for the exact product;
//   - registers of p' = p + d bits, d >= p + 1, stored to f by chopping: the register product of
//     two values of f (bits in columns 2d and above) plus the constant is below the next multiple
//     of 2^(2d) when the array generates column 2d and the constant is less than 2^(2d) there, and
//     so is its rounding to p' bits (one ulp of the register is at most 2^(2d-1)); chopping that
//     to f chops the exact product. Other register units answer with their registers' format.
MultiplierAnswer multiplier_answer(const model::ScalarUnit& u, bool with_correction) {
  const Format& f = u.storage_format();
  const int p = f.precision(), pr = u.format->precision(), d = pr - p;
  model::MultiplierParams m = u.mul;
  const auto canonical = [](int q, model::MultiplierParams& x) {
    const Rounding r = x.rounding.effective();
    if (x.truncated_columns && *x.truncated_columns >= q - 1) x.truncated_columns = q - 1;
    // A constant of 1 with at most column 0 dropped (t >= q - 2) adds 1 or 2 to the rest below any
    // rounding position (2 only to an even rest: a0 b0 is 0), and the tie is even: rnz then rounds
    // up exactly the rests at or above the tie, which is rna of the exact product.
    if (x.truncated_columns && *x.truncated_columns >= q - 2 && r == Rounding::rnz && x.correction == 1) {
      x = {UnitRounding::ieee(Rounding::rna), std::nullopt, 0};
      return;
    }
    // Without a constant, every column (or all but column 0 when chopping: it holds a_0 b_0, 1 only
    // for odd A and B, whose odd product is never a multiple of the ulp) is the exact product; so
    // is all but column 0 for rna: it takes 1 off an odd rest, which moves half + 1 onto the tie
    // (rounded away as half + 1 is) and never reaches or leaves zero.
    if (x.truncated_columns && x.correction == 0 &&
        *x.truncated_columns >= q - (r == Rounding::rz || r == Rounding::rna ? 2 : 1))
      x.truncated_columns = std::nullopt;
    x.rounding = x.truncated_columns && r == Rounding::rz ? UnitRounding::chopped() : UnitRounding::ieee(r);
    if (!x.truncated_columns) x.correction = 0;
  };
  canonical(pr, m);
  bool registers = d > 0;
  if (registers && d >= p + 1 && u.convert.effective() == Rounding::rz) {
    const int lowest = m.truncated_columns ? std::max(pr - 1 - *m.truncated_columns, 0) : 0;
    if (!m.truncated_columns ||
        (lowest <= 2 * d && (2 * d - lowest >= 64 || m.correction < (std::uint64_t{1} << (2 * d - lowest))))) {
      m = {UnitRounding::ieee(Rounding::rz), std::nullopt, 0};
      registers = false;
    }
  }
  // Registers of p' = p + d >= 2p bits hold the product P of two values of f exactly (bits in
  // columns 2d and above, all generated when the lowest generated column is at most 2d); a
  // constant that adds less than half an ulp of the register (a whole ulp when chopping) leaves P
  // there, which the store rounds once: the exact product in the store's mode.
  if (registers && d >= p) {
    const int lowest = m.truncated_columns ? std::max(pr - 1 - *m.truncated_columns, 0) : 0;
    const Rounding r = m.rounding.effective();
    const int room = r == Rounding::rz ? pr - 1 : model::name(r).starts_with("rn") ? pr - 2 : lowest;
    const bool stays =
        m.correction == 0 || (lowest < room && m.correction < (std::uint64_t{1} << std::min(room - lowest, 63)));
    if (lowest <= 2 * d && stays) {
      m = {u.convert, std::nullopt, 0};
      canonical(p, m);
      registers = false;
    }
  }
  // One column kept, a constant below 4 and flushed results: rna multiplies as ra (probe_support.hpp,
  // rounding_class). The array's sum X is a multiple of column p - 1 and below 2^(2p) (A * B <=
  // (2^p - 1)^2, the constant adds less than 2^(p+1)): normalised to p bits its rest is nothing or
  // the tie bit, which rna rounds away as ra does; overflow gives infinities in both; tininess is
  // decided on the result rounded with an unbounded exponent, the same in both, and a tiny result
  // is flushed (by the multiplier, or by the store of the product). Subnormal results, kept, round
  // more bits and tell them apart; so does overflow the
  // other pairs of tie_directed (rnz gives inf where chop gives MAX), which the probe's products
  // at the top of the range show.
  const bool flushed = model::flushing(u, model::FlushOp::mul).flush_output || u.subnormals.flush_transfer;
  if (!registers && flushed && m.truncated_columns == 0 && m.correction < 4) {
    if (m.rounding == UnitRounding::ieee(Rounding::rna)) m.rounding = UnitRounding::ieee(Rounding::ra);
    if (m.rounding == UnitRounding::ieee(Rounding::ra))
      return {m, nullptr, rounding_class("ra", true), with_correction};
  }
  return {m, registers ? u.format : nullptr, {}, with_correction};
}

std::string say_multiplier(const MultiplierAnswer& a) {
  const std::string r =
      (a.mul.rounding.chop ? std::string("chopped") : fmt::format("rounded {}", model::name(a.mul.rounding))) +
      or_equivalently(a.equivalent_roundings);
  const std::string regs = in_registers(a.registers);
  if (!a.mul.truncated_columns)
    return fmt::format("every partial product generated (no truncated columns), {}{}", r, regs);
  const std::string c = a.with_correction ? fmt::format(", correction {} ({:#x}) in units of the last kept column",
                                                        a.mul.correction, a.mul.correction)
                                          : "";
  return fmt::format("truncated, {} columns kept below the LSB{}, {}{}", *a.mul.truncated_columns, c, r, regs);
}

// The profile's "mul": the constant, or the columns and rounding (with the class of roundings).
backends::ScalarProfile multiplier_profile(const MultiplierAnswer& a) {
  backends::ScalarProfile p;
  backends::ScalarProfile::Operation& mul = p.stated(backends::UnitOp::mul);
  if (a.with_correction) {
    mul.correction = a.mul.correction;
    return p;
  }
  mul.rounding = a.mul.rounding;
  mul.truncated_columns = a.mul.truncated_columns;
  if (!a.equivalent_roundings.empty()) mul.equivalent_roundings = a.equivalent_roundings;
  return p;
}

class MultiplierProbe : public UnitProbe {
 public:
  explicit MultiplierProbe(bool correction)
      : correction_(correction),
        q_{{"MULTIPLICATION",
            correction ? "the correction constant of the multiplier" : "the truncated columns of the multiplier",
            audit::typed(say_multiplier)},
           [correction](const model::ScalarUnit& u) { return audit::Answer(multiplier_answer(u, correction)); },
           audit::typed(multiplier_profile)} {}
  std::string_view source() const override {
    return "Daumas, da Graca, Defour 2006, section 2.2; Schulte and Swartzlander 1993";
  }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 3 && f.precision() <= 62; }
  const UnitQuestion& question() const override { return q_; }

 protected:
  // Identifies on the sets (and the streamed chunks), then concludes on the sets.
  audit::Finding conclude_on(backends::Device& device, const Format& f, std::vector<std::vector<Case>>& sets,
                             std::uint64_t seed, const Chunks& more, std::size_t head) const {
    auto id = identify(device, f, sets, seed, more);
    if (!id) return audit::failed(id.error());
    std::vector<Group> groups;
    std::vector<KeepFn> keep;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      groups.push_back({backends::binary(Node::mul, f), sets[s]});
      keep.push_back(keep_some(s == 0 ? head : 4, 4));
    }
    groups.push_back({backends::binary(Node::mul, f), tiny_products(f, 64, seed)});
    keep.push_back(keep_some(0, 4));
    audit::Finding finding;
    auto out = conclude(device, groups, materialize(f, *id), question(), finding, keep);
    if (!out) return audit::failed(out.error());
    return finding;
  }

 private:
  bool correction_;
  UnitQuestion q_;
};

class ColumnsProbe final : public MultiplierProbe {
 public:
  ColumnsProbe() : MultiplierProbe(false) {}
  std::string_view id() const override { return "scalar.mul.truncated_columns"; }
  std::string_view title() const override { return "Truncated partial products of the multiplier"; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::vector<std::vector<Case>> sets = column_sets(f, ctx);
    return conclude_on(device, f, sets, ctx.seed, {}, 64);
  }
};

class CorrectionProbe final : public MultiplierProbe {
 public:
  CorrectionProbe() : MultiplierProbe(true) {}
  std::string_view id() const override { return "scalar.mul.correction"; }
  std::string_view title() const override { return "Correction constant of the truncated multiplier"; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    // The odd multiples: the first chunk is kept for the observations, the rest streams through.
    const std::uint64_t n = ctx.cases(256, 4096, std::uint64_t{1} << 23), chunk = 1 << 16;
    // The aimed sets first: they leave few candidates for the many odd multiples to narrow.
    std::vector<std::vector<Case>> sets = {paper_sequence(f),
                                           column_probes(f),
                                           residue_probes(f, ctx.cases(32, 128, 4096), ctx.seed + 1),
                                           random_pairs(f, ctx.cases(32, 64, 4096), ctx.seed + 1),
                                           overflow_probes(f),
                                           odd_multiples(f, n, ctx.seed, 0, chunk)};
    const Chunks rest = [&](std::uint64_t c) { return odd_multiples(f, n, ctx.seed, c + 1, chunk); };
    audit::Finding finding = conclude_on(device, f, sets, ctx.seed, rest, 32);
    finding.parameters["products"] = std::min(n, (std::uint64_t{1} << (f.precision() - 1)) - 1);
    return finding;
  }
};

}  // namespace

nlohmann::json answer_fields(const MultiplierAnswer& a) {
  nlohmann::json j = nlohmann::json::object();
  if (a.registers) j["registers"] = a.registers->name;
  j["rounding"] = model::name(a.mul.rounding);
  j["truncated_columns"] = a.mul.truncated_columns ? nlohmann::json(*a.mul.truncated_columns) : nlohmann::json(nullptr);
  if (a.with_correction) j["correction"] = a.mul.correction;
  if (!a.equivalent_roundings.empty()) j["equivalent_roundings"] = a.equivalent_roundings;
  return j;
}

MultiplierAnswer truncation_answer(const model::ScalarUnit& u) { return multiplier_answer(u, false); }

static Expected<std::vector<model::MultiplierParams>> identify_multipliers(backends::Device& device, const Format& f,
                                                                           const audit::ProbeContext& ctx) {
  std::vector<std::vector<Case>> sets = column_sets(f, ctx);
  auto id = identify(device, f, sets, ctx.seed);
  if (!id) return id.error();
  std::vector<model::MultiplierParams> out;
  for (const Candidate& c : id->survivors)
    for (std::uint64_t k : {c.lo, c.hi}) {
      const model::MultiplierParams m{c.r, c.t, c.t ? k : 0};
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    }
  return out;
}

Expected<std::vector<model::MultiplierParams>> reproducing_multipliers(backends::Device& device, const Format& f,
                                                                       const audit::ProbeContext& ctx) {
  return remembered(ctx, &audit::ProbeMemo::multipliers, f, [&] { return identify_multipliers(device, f, ctx); });
}

void add_multiplier_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const ColumnsProbe columns;
  static const CorrectionProbe correction;
  out.push_back(&columns);
  out.push_back(&correction);
}

}  // namespace gp::scalar
