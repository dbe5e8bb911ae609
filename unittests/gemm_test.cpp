// The whole-matrix evaluation (model/gemm.hpp) against Dot chained element by element, bit for
// bit: every instruction of the table, and FDA/CoFDA configurations over F, block, floor, output
// rounding and output bits, on random tiles whose N is no multiple of the kernel's lanes, with
// subnormals, signed zeros, infinities, NaNs, cancellations and values near overflow mixed in, on
// one thread and several; the kernel's floating-point path at its edges and at the bounds of the
// operands' exponents it takes. The FDA fast path's configurations are also checked against
// fda_block, its specification (the same formats at other addresses take the generic path).
#include <gtest/gtest.h>

#include <cfenv>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "model/fda_fast.hpp"
#include "model/gemm.hpp"
#include "model/mma_instructions.hpp"

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace {

using namespace gp::model;

struct Draw {
  std::mt19937_64& rng;
  int special_rate;       // one element in special_rate is an infinity or NaN (0: none)
  bool moderate = false;  // finite values within 2^±20 and zeros only, the kernel's floating-point path

  // Raw bits of f: mostly values near 1 (products cancel, align and truncate), some spread over the
  // whole range, zeros of both signs, subnormals, values near overflow, specials.
  std::uint64_t operator()(const Format& f) {
    const std::uint64_t fmax = f.exp_field_max();
    std::uint64_t field, man = rng() & f.man_mask();
    const unsigned r = unsigned(rng() % 32);
    if (special_rate > 0 && rng() % unsigned(special_rate) == 0) {
      field = fmax;  // infinity or NaN (or the top binade of formats without them)
      if (f.nan == NanStyle::all_ones) man = f.man_mask();
    } else if (r < 2) {
      field = 0, man = 0;  // zero
    } else if (moderate) {
      field = std::uint64_t(std::clamp<int>(f.bias + int(rng() % 41) - 20, 1, int(fmax) - 1));
    } else if (r < 4) {
      field = 0;  // subnormal (or zero)
    } else if (r < 6) {
      field = fmax > 1 ? fmax - 1 : fmax;  // near overflow
    } else if (r < 10) {
      field = 1 + rng() % std::max<std::uint64_t>(fmax - 1, 1);
    } else {
      const auto centre = std::uint64_t(std::min<int>(f.bias, int(fmax) - 1));
      field = std::clamp<std::uint64_t>(centre + rng() % 7, 3, fmax + 2) - 3;
    }
    if (field > fmax) field = fmax;
    const std::uint64_t sign = f.has_sign() ? (rng() & 1) : 0;
    const std::uint64_t pad = f.pad_bits ? rng() & ((std::uint64_t{1} << f.pad_bits) - 1) : 0;
    return (sign << f.sign_shift()) | (((field << f.man_bits) | man) << f.pad_bits) | pad;
  }
};

struct Problem {
  std::size_t m, n, k;
  int kstep;
  std::vector<std::uint64_t> a, bt, c, sa, sbt;
  // As 64-bit patterns, B (and b's scale factors) given transposed.
  GemmOperands operands() const {
    const std::size_t s = sa.size() / std::max<std::size_t>(m, 1);
    GemmOperands g;
    g.m = m, g.n = n, g.k = k, g.kstep = kstep;
    g.a = BitMatrix::row_major(a, k);
    g.b = BitMatrix::row_major(bt, k).transposed();
    g.c = BitMatrix::row_major(c, n);
    if (!sa.empty()) g.sa = BitMatrix::row_major(sa, s), g.sb = BitMatrix::row_major(sbt, s).transposed();
    return g;
  }
};

// The operands as numpy's arrays pass them: each matrix row-major (B K x N) in the narrowest
// elements that hold its format's patterns, c left out where it is all +0.
struct NarrowOperands {
  std::vector<std::byte> store[5];
  GemmOperands g;
  NarrowOperands(const DotConfig& cfg, const Problem& p) {
    const std::size_t s = p.sa.size() / std::max<std::size_t>(p.m, 1);
    g.m = p.m, g.n = p.n, g.k = p.k, g.kstep = p.kstep;
    g.a = narrow(store[0], *cfg.a, BitMatrix::row_major(p.a, p.k), p.m, p.k);
    g.b = narrow(store[1], *cfg.b, BitMatrix::row_major(p.bt, p.k).transposed(), p.k, p.n);
    if (std::any_of(p.c.begin(), p.c.end(), [](std::uint64_t x) { return x != 0; }))
      g.c = narrow(store[2], *cfg.c, BitMatrix::row_major(p.c, p.n), p.m, p.n);
    if (!p.sa.empty()) {
      g.sa = narrow(store[3], *cfg.scale, BitMatrix::row_major(p.sa, s), p.m, s);
      g.sb = narrow(store[4], *cfg.scale, BitMatrix::row_major(p.sbt, s).transposed(), s, p.n);
    }
  }
  static BitMatrix narrow(std::vector<std::byte>& store, const Format& f, const BitMatrix& from, std::size_t rows,
                          std::size_t cols) {
    const int bytes = f.storage_bytes();
    store.resize(rows * cols * std::size_t(bytes));
    const OutBitMatrix to{store.data(), bytes, cols, 1};
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        const std::uint64_t x = from(r, c);
        to.put(r, c, 1, &x);
      }
    return {store.data(), bytes, cols, 1};
  }
};

// A random M x (3 kstep) by (3 kstep) x N problem. Now and then product k + 1 is product k negated
// (a's column repeated, b's row with its signs flipped), for large cancellations.
Problem random_problem(const DotConfig& cfg, std::size_t m, std::size_t n, int kstep, std::mt19937_64& rng,
                       int special_rate, bool moderate = false) {
  Draw draw{rng, special_rate, moderate};
  Problem p{m, n, std::size_t(3 * kstep), kstep, {}, {}, {}, {}, {}};
  p.a.resize(m * p.k);
  p.bt.resize(n * p.k);
  for (auto& x : p.a) x = draw(*cfg.a);
  for (auto& x : p.bt) x = draw(*cfg.b);
  for (std::size_t k = 1; k < p.k; ++k)
    if (rng() % 4 == 0) {
      for (std::size_t i = 0; i < m; ++i) p.a[i * p.k + k] = p.a[i * p.k + k - 1];
      for (std::size_t j = 0; j < n; ++j) p.bt[j * p.k + k] = p.bt[j * p.k + k - 1] ^ cfg.b->sign_mask();
    }
  p.c.resize(m * n);
  Draw cdraw{rng, special_rate ? special_rate * 8 : 0, moderate};
  for (auto& x : p.c) x = cdraw(*cfg.c);
  if (cfg.scale) {
    const std::size_t s = std::size_t(scale_count(cfg, kstep)) * 3;
    p.sa.resize(m * s);
    p.sbt.resize(n * s);
    for (auto& x : p.sa) x = cdraw(*cfg.scale);
    for (auto& x : p.sbt) x = cdraw(*cfg.scale);
  }
  return p;
}

// Dot chained element by element, as the Python module evaluated it before gemm() (with p's scale
// factors, or none where p has none).
std::vector<std::uint64_t> chained(const DotConfig& cfg, const Problem& p) {
  DotConfig next_cfg = cfg;
  next_cfg.c = cfg.d;
  const Dot first(cfg), next(next_cfg);
  const auto uk = std::size_t(p.kstep), per = std::size_t(scale_count(cfg, p.kstep)), s = per * 3;
  std::vector<std::uint64_t> d(p.m * p.n);
  for (std::size_t i = 0; i < p.m; ++i)
    for (std::size_t j = 0; j < p.n; ++j) {
      std::uint64_t acc = p.c[i * p.n + j];
      for (std::size_t t = 0; t < 3; ++t) {
        std::span<const std::uint64_t> sa, sb;
        if (!p.sa.empty()) sa = {p.sa.data() + i * s + t * per, per}, sb = {p.sbt.data() + j * s + t * per, per};
        acc = (t == 0 ? first : next)(acc, {p.a.data() + i * p.k + t * uk, uk}, {p.bt.data() + j * p.k + t * uk, uk},
                                      sa, sb);
      }
      d[i * p.n + j] = acc;
    }
  return d;
}

std::string hex(std::uint64_t x) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(x));
  return s;
}

// gemm() on `threads` threads equals the chain, with every version of the FDA kernel the processor
// runs; returns whether it did (failures say where).
bool matches(const DotConfig& cfg, const Problem& p, const std::vector<std::uint64_t>& want, unsigned threads,
             const std::string& what) {
  const bool fda_kernel = fda_fast::with_format(cfg, []<const Format&>() {});
  for (const GemmKernel kernel : {GemmKernel::best, GemmKernel::avx2, GemmKernel::baseline}) {
    if (kernel != GemmKernel::best && !fda_kernel) break;
    // 64-bit patterns, B transposed; then narrow elements, B as it is (d narrow too).
    std::vector<std::uint64_t> d(p.m * p.n, 0xDEADBEEF);
    gemm(cfg, p.operands(), OutBitMatrix::row_major(d, p.n), threads, kernel);
    const NarrowOperands narrow(cfg, p);
    std::vector<std::byte> d_narrow(p.m * p.n * std::size_t(cfg.d->storage_bytes()), std::byte{0xA5});
    const OutBitMatrix dn{d_narrow.data(), cfg.d->storage_bytes(), p.n, 1};
    gemm(cfg, narrow.g, dn, threads, kernel);
    for (std::size_t x = 0; x < d.size(); ++x)
      for (const auto& [layout, got] : {std::pair{"64-bit", d[x]}, {"narrow", dn(x / p.n, x % p.n)}})
        if (got != want[x]) {
          ADD_FAILURE() << what << ", " << threads << " thread(s), kernel " << int(kernel) << ", " << layout << ": d["
                        << x / p.n << "][" << x % p.n << "] is " << hex(got) << ", Dot chained gives " << hex(want[x]);
          return false;
        }
  }
  return true;
}

// Both shapes (one tile and a bit, one thread; several rows on several threads), with rare and
// frequent specials, and with moderate values (whose products every format's kernel takes on the
// floating-point unit; the whole range sends bfloat16 and tf32 to the integer path), the rows a
// multiple of the rows the kernel evaluates together or not.
void check_config(const DotConfig& cfg, int kstep, std::mt19937_64& rng, const std::string& what,
                  const DotConfig* spec = nullptr) {
  ASSERT_EQ(check(cfg), "") << what;
  for (const auto& [special_rate, moderate] : {std::pair{0, false}, {400, false}, {23, false}, {0, true}, {97, true}}) {
    for (const auto& [m, n, threads] : {std::tuple{3u, 21u, 1u}, std::tuple{11u, 37u, 3u}, std::tuple{8u, 16u, 1u}}) {
      const Problem p = random_problem(cfg, m, n, kstep, rng, special_rate, moderate);
      const std::vector<std::uint64_t> want = chained(cfg, p);
      if (spec) {
        const std::vector<std::uint64_t> ref = chained(*spec, p);
        for (std::size_t x = 0; x < want.size(); ++x)
          if (want[x] != ref[x]) {
            ADD_FAILURE() << what << ": Dot's fast path gives " << hex(want[x]) << ", fda_block " << hex(ref[x]);
            return;
          }
      }
      if (!matches(cfg, p, want, threads, what)) return;
      if (threads > 1 && !matches(cfg, p, want, 1, what)) return;
    }
  }
  // c all +0, which the narrow layout leaves out (numpy's matmul without c).
  if (cfg.c->has_zero()) {
    Problem p = random_problem(cfg, 6, 20, kstep, rng, 0, true);
    std::fill(p.c.begin(), p.c.end(), 0);
    if (!matches(cfg, p, chained(cfg, p), 2, what + " without c")) return;
  }
  // No scale factors given to a scaled configuration: Dot without them (a device's batch has none).
  if (cfg.scale) {
    Problem p = random_problem(cfg, 5, 9, kstep, rng, 23);
    p.sa.clear();
    p.sbt.clear();
    matches(cfg, p, chained(cfg, p), 1, what + " without scale factors");
  }
}

TEST(Gemm, EveryInstruction) {
  std::mt19937_64 rng(1);
  for (const MmaInstruction& ins : all_mma_instructions()) check_config(ins.config, ins.k, rng, ins.id());
}

// Copies of the fast path's formats: equal formats at other addresses, which Dot evaluates with
// fda_block (the fast path is chosen by address).
const Format* spec_copy(const Format* f) {
  static const Format copies[] = {binary16, bfloat16, tf32, e4m3, e5m2};
  for (const Format& c : copies)
    if (c.name == f->name) return &c;
  return nullptr;
}

TEST(Gemm, FdaConfigurations) {
  std::mt19937_64 rng(2);
  const Format* const abs[] = {&binary16, &bfloat16, &tf32, &e4m3, &e5m2};
  const int Fs[] = {0, 3, 10, 13, 20, 23, 24, 25, 26, 30, 35, 40};
  const int ksteps[] = {1, 2, 4, 5, 8, 16, 32, 40, 80};
  const int floors[] = {kNoAlignFloor, -133, -20, 0, 5};
  const Rounding roundings[] = {Rounding::rz, Rounding::rne, Rounding::ru, Rounding::rd, Rounding::rna};
  const auto pick = [&](const auto& list) { return list[rng() % std::size(list)]; };
  for (int x = 0; x < 400; ++x) {
    const Format& ab = *pick(abs);
    const Format& d = rng() % 3 ? binary32 : binary16;
    const Format& c = &d == &binary32 && rng() % 4 == 0 ? binary16 : d;
    const int kstep = pick(ksteps);
    const MmaAlgorithm alg = rng() % 2 ? MmaAlgorithm::fda : MmaAlgorithm::cofda;
    DotConfig cfg = default_dot_config(alg, ab, ab, c, d, kstep);
    cfg.F = pick(Fs);
    const int blocks[] = {0, 1, 3, kstep / 2, kstep, 2 * kstep};
    if (alg == MmaAlgorithm::fda || rng() % 2) cfg.block = std::max(0, pick(blocks));
    cfg.align_floor = pick(floors);
    cfg.out_rounding = pick(roundings);
    const int outs[] = {d.man_bits, d.man_bits, 13 % (d.man_bits + 1), 0};
    cfg.out_fraction_bits = pick(outs);
    cfg.nan = rng() % 2 ? MmaNan::nvidia : MmaNan::format;
    DotConfig spec = cfg;
    spec.a = spec.b = spec_copy(cfg.a);
    const std::string what = std::string(name(alg)) + " " + std::string(ab.name) + " c " + std::string(c.name) + " d " +
                             std::string(d.name) + " kstep " + std::to_string(kstep) + " F " + std::to_string(cfg.F) +
                             " block " + std::to_string(cfg.block) + " floor " + std::to_string(cfg.align_floor) +
                             " rounding " + std::string(name(cfg.out_rounding)) + " out bits " +
                             std::to_string(cfg.out_fraction_bits);
    check_config(cfg, kstep, rng, what, &spec);
  }
}

// Blocks longer than Dot's fast path takes (64) and than one fused block holds (kMaxDotK).
TEST(Gemm, LongBlocks) {
  std::mt19937_64 rng(3);
  for (const Format* ab : {&binary16, &e5m2})
    for (int F : {13, 24, 40}) {
      DotConfig cfg = default_dot_config(MmaAlgorithm::fda, *ab, *ab, binary32, binary32);
      cfg.F = F;
      DotConfig spec = cfg;
      spec.a = spec.b = spec_copy(cfg.a);
      check_config(cfg, 1100, rng, std::string(ab->name) + " K 1100 F " + std::to_string(F), &spec);
    }
}

// Configurations outside the fast path: per-element Dot (carry bits, mixed formats, scale factors).
TEST(Gemm, OtherFdaConfigurations) {
  std::mt19937_64 rng(4);
  DotConfig carry = default_dot_config(MmaAlgorithm::fda, binary16, binary16, binary32, binary32, 16);
  carry.carry_bits = 2;
  check_config(carry, 16, rng, "fda carry bits 2");
  const DotConfig mixed = default_dot_config(MmaAlgorithm::cofda, e4m3, e5m2, binary32, binary32, 32);
  check_config(mixed, 32, rng, "cofda e4m3 x e5m2");
}

}  // namespace

namespace {

// The host's rounding mode, and (x86) flushing of subnormal results and operands, for a scope.
class ScopedFloatingPointMode {
 public:
  ScopedFloatingPointMode(int rounding, bool flush) : rounding_(std::fegetround()) {
    std::fesetround(rounding);
#if defined(__SSE2__)
    csr_ = _mm_getcsr();
    if (flush) _mm_setcsr(csr_ | 0x8040);  // FTZ and DAZ
#else
    (void)flush;
#endif
  }
  ~ScopedFloatingPointMode() {
    std::fesetround(rounding_);
#if defined(__SSE2__)
    _mm_setcsr(csr_);
#endif
  }

 private:
  int rounding_;
#if defined(__SSE2__)
  unsigned csr_;
#endif
};

// The floating-point kernel's edges, whatever the host's rounding mode and subnormal flushing:
// binary32 addends at every scale (subnormal, tiny normal, where the scale leaves binary32's range,
// near overflow, specials) beside blocks of zero products, of the largest products (whose aligned
// sum with c, 0x4effffff at row 3 column 5, overflows 32 bits), of one product 0.75 (whose aligned
// sum with c = 2^24 - 1, row 5 column 1, is 2^26 - 1: a binary32 conversion rounds it up a binade)
// and of mixed ones, for the configurations whose c and d are binary32, or binary16.
TEST(Gemm, FloatingPointKernelEdges) {
  std::mt19937_64 rng(5);
  const std::uint64_t addends[] = {0,          0x80000000, 1,          0x807fffff, 0x00800000, 0x09000000,
                                   0x4b7fffff, 0x3f800000, 0x4effffff, 0xcf000000, 0x7f7fffff, 0x7f800000,
                                   0x7fc00000, 0x5f000000, 0x1f800000, 0x0c800000};
  const std::uint64_t binary16_addends[] = {0,      0x8000, 1,      0x83ff, 0x0400, 0x0800, 0x6bff, 0x3c00,
                                            0x7bff, 0xf800, 0x7bff, 0x7c00, 0x7e00, 0x5bff, 0x1000, 0x2400};
  static_assert(std::size(binary16_addends) == std::size(addends));
  struct Case {
    const Format* ab;
    int F, kstep, floor;
    Rounding rounding;
    int out_bits;
    const Format* cd = &binary32;  // c and d
  };
  const Case cases[] = {{&binary16, 25, 16, kNoAlignFloor, Rounding::rz, 23},
                        {&binary16, 25, 16, -133, Rounding::rne, 23},
                        {&binary16, 24, 8, kNoAlignFloor, Rounding::rne, 13},
                        {&e4m3, 13, 32, -133, Rounding::rz, 13},
                        {&e5m2, 26, 4, kNoAlignFloor, Rounding::rne, 23},
                        {&bfloat16, 25, 16, kNoAlignFloor, Rounding::rz, 23},
                        {&tf32, 1, 1, kNoAlignFloor, Rounding::rz, 23},
                        {&binary16, 25, 16, kNoAlignFloor, Rounding::rz, 10, &binary16},
                        {&e5m2, 13, 32, -30, Rounding::rne, 10, &binary16}};
  for (const Case& x : cases) {
    DotConfig cfg = default_dot_config(MmaAlgorithm::fda, *x.ab, *x.ab, *x.cd, *x.cd, x.kstep);
    cfg.F = x.F, cfg.align_floor = x.floor, cfg.out_rounding = x.rounding, cfg.out_fraction_bits = x.out_bits;
    ASSERT_EQ(check(cfg), "");
    const std::size_t m = 9, n = std::size(addends);
    Problem p{m, n, std::size_t(3 * x.kstep), x.kstep, {}, {}, {}, {}, {}};  // (chained() takes 3 steps)
    const std::uint64_t largest = x.ab->max_finite_magnitude() << x.ab->pad_bits,
                        one = (std::uint64_t(x.ab->bias) << x.ab->man_bits) << x.ab->pad_bits,
                        three_quarters = ((std::uint64_t(x.ab->bias - 1) << x.ab->man_bits) |
                                          (std::uint64_t{1} << (x.ab->man_bits - 1)))
                                         << x.ab->pad_bits;
    Draw moderate{rng, 0, true};
    p.a.resize(m * p.k);
    p.bt.resize(n * p.k);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t k = 0; k < p.k; ++k)
        p.a[i * p.k + k] = i < 3   ? 0
                           : i < 5 ? largest
                           : i < 6 ? (k % std::size_t(x.kstep) == 0 ? one : 0)
                                   : moderate(*x.ab);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < p.k; ++k)
        p.bt[j * p.k + k] = j % 3 == 2 ? largest : j == 1 ? three_quarters : moderate(*x.ab);
    p.c.resize(m * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        p.c[i * n + j] = (x.cd == &binary32 ? addends : binary16_addends)[(i + j) % n];
    const std::vector<std::uint64_t> want = chained(cfg, p);
    const std::string what = std::string(x.ab->name) + " F " + std::to_string(x.F);
    for (const int mode : {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
      ScopedFloatingPointMode scoped(mode, mode != FE_TONEAREST);
      matches(cfg, p, want, 1, what + " rounding mode " + std::to_string(mode));
    }
  }
}

// The bounds of the kernel's floating-point path (float_path: every operand normal, every product
// a normal binary32 below 2^128, the scale at most 2^127), for bfloat16 and tf32, whose operands
// reach past them: blocks whose products' exponents all lie near a target sum, around F - 127
// (the smallest that keeps the scale in range), around binary32's smallest normal, with subnormal
// operands, and past the largest, with c = +0 (the scale then follows the products alone); with
// the host flushing subnormals and not. A kernel that took such a block on the FPU past a bound
// would round, flush or overflow a product that Dot keeps exact.
TEST(Gemm, FloatingPointPathBounds) {
  std::mt19937_64 rng(7);
  for (const Format* ab : {&bfloat16, &tf32})
    for (const int F : {25, 40}) {
      // (a's exponent, b's, their spread): every product's exponent near their sum.
      std::vector<std::tuple<int, int, int>> cases = {{-127, 100, 0}, {-128, 100, 0}, {-126, 100, 0}, {-133, 110, 0}};
      std::vector<int> targets = {-300, -260, -200, -152, -140, -131, -127, -126, -125, 96, 124, 125, 126, 127, 128};
      for (const int d : {-12, -6, -2, -1, 0, 1, 2}) targets.push_back(F - 127 + d);
      for (const int t : targets)
        for (const int spread : {0, 1}) cases.emplace_back(t / 2, t - t / 2, spread);
      for (const auto& [ea, eb, spread] : cases) {
        DotConfig cfg = default_dot_config(MmaAlgorithm::fda, *ab, *ab, binary32, binary32, 8);
        cfg.F = F;
        ASSERT_EQ(check(cfg), "");
        const std::size_t m = 6, n = 19;
        Problem p{m, n, 24, 8, {}, {}, {}, {}, {}};
        // An operand of exponent e +- spread (unbiased; below the normal range a subnormal of that
        // exponent), its significand all ones one time in three (the largest products), else random.
        const auto operand = [&, spread = spread](int e) {
          e += spread ? int(rng() % 3) - 1 : 0;
          const int field = e + ab->bias, top = std::max(field + ab->man_bits - 1, 0);  // subnormal's top bit
          const std::uint64_t man = field >= 1 ? (rng() % 3 == 0 ? ab->man_mask() : rng() & ab->man_mask())
                                               : (std::uint64_t{1} << top) | (rng() & ((std::uint64_t{1} << top) - 1));
          return (((rng() & 1) << ab->sign_shift()) | (std::uint64_t(std::max(field, 0)) << ab->man_bits) | man)
                 << ab->pad_bits;
        };
        p.a.resize(m * p.k);
        p.bt.resize(n * p.k);
        for (auto& x : p.a) x = operand(ea);
        for (auto& x : p.bt) x = operand(eb);
        p.c.assign(m * n, 0);
        const std::vector<std::uint64_t> want = chained(cfg, p);
        for (const bool flush : {false, true}) {
          ScopedFloatingPointMode scoped(FE_TONEAREST, flush);
          matches(cfg, p, want, 1,
                  std::string(ab->name) + " F " + std::to_string(F) + " operand exponents " + std::to_string(ea) +
                      ", " + std::to_string(eb) + " +- " + std::to_string(spread) +
                      (flush ? ", host flushing subnormals" : ""));
        }
      }
    }
}

}  // namespace
