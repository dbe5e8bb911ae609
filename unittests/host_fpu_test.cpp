// The scalar model against the host FPU: binary32 and binary64, every fesetround mode, with the
// x86 flush modes (MXCSR DAZ and FTZ) as the oracle of ftz_in and ftz_out. Results and flags must
// agree bit for bit; NaN results are compared as NaNs (x86 picks its own NaN sign and payload).
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <random>

#include "model/ops.hpp"
#if defined(__x86_64__)
#include <xmmintrin.h>
#include "unittests/drawn_seed.hpp"
#endif

namespace gp::model {
namespace {

std::uint64_t seed() { return testing::drawn_seed(20261122); }

// 2x10^5 random operands per op and mode in the test tier, 10^6 in the long tier.
std::uint64_t case_count() {
#ifdef GPUPARANOIA_HOST_FPU_LONG
  return testing::count_from_env("GPUPARANOIA_HOST_CASES", 1000000);
#else
  return testing::count_from_env("GPUPARANOIA_HOST_CASES", 200000);
#endif
}

// Uniform bit patterns, operands of close exponents (cancellation, carries) and values near the
// subnormal range, so that every path of the model is met.
template <class U>
U operand(std::mt19937_64& rng, int man_bits, int bias) {
  const U bits = U(rng());
  const U man = bits & ((U{1} << man_bits) - 1);
  const U sign = U(rng() & 1) << (sizeof(U) * 8 - 1);
  switch (rng() % 6) {
    case 0: return bits;
    case 1:
    case 2: return sign | (U(bias + int(rng() % 5) - 2) << man_bits) | man;
    case 3: return sign | (U(rng() % 4) << man_bits) | man;                     // subnormal or tiny
    case 4: return sign | (U((bias >> 1) + int(rng() % 6)) << man_bits) | man;  // products near underflow
    default: {
      const U specials[] = {0, 1, U((U{1} << man_bits) - 1), U(U{1} << man_bits), U(~U{0} >> 1)};
      return sign | specials[rng() % 5];
    }
  }
}

Flags host_flags() {
  const int e = std::fetestexcept(FE_ALL_EXCEPT);
  Flags f = 0;
  if (e & FE_INEXACT) f |= Flag::inexact;
  if (e & FE_UNDERFLOW) f |= Flag::underflow;
  if (e & FE_OVERFLOW) f |= Flag::overflow;
  if (e & FE_DIVBYZERO) f |= Flag::divbyzero;
  if (e & FE_INVALID) f |= Flag::invalid;
  return f;
}

struct Mode {
  int host;
  Rounding model;
};
constexpr Mode modes[] = {{FE_TONEAREST, Rounding::rne},
                          {FE_UPWARD, Rounding::ru},
                          {FE_DOWNWARD, Rounding::rd},
                          {FE_TOWARDZERO, Rounding::rz}};

template <class T>
T host_eval(Op op, T a, T b, T c) {
  volatile T x = a, y = b, z = c;
  T r{};
  switch (op) {
    case Op::add: r = x + y; break;
    case Op::sub: r = x - y; break;
    case Op::mul: r = x * y; break;
    case Op::div: r = x / y; break;
    case Op::sqrt: r = std::sqrt(T(x)); break;
    case Op::fma: r = std::fma(T(x), T(y), T(z)); break;
    case Op::cvt: break;
  }
  volatile T out = r;
  return out;
}

struct Param {
  const Format* format;
  Op op;
  bool daz, ftz;
};

class HostFpu : public ::testing::TestWithParam<Param> {};

template <class T>
void compare(const Param& p) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const Format& f = *p.format;
  const std::uint64_t n = case_count(), s = seed();
  std::mt19937_64 rng(s);
  std::uint64_t mismatches = 0;
#if defined(__x86_64__)
  const unsigned saved = _mm_getcsr();
  _mm_setcsr((saved & ~0x8040u) | (p.daz ? 0x0040u : 0u) | (p.ftz ? 0x8000u : 0u));
#else
  if (p.daz || p.ftz) GTEST_SKIP() << "the host flush modes are checked on x86-64 only";
#endif
  for (const Mode& m : modes) {
    Options o;
    o.rounding = m.model;
    o.ftz_in = p.daz;
    o.ftz_out = p.ftz;
    std::fesetround(m.host);
    for (std::uint64_t i = 0; i < n; ++i) {
      const U x[3] = {operand<U>(rng, f.man_bits, f.bias), operand<U>(rng, f.man_bits, f.bias),
                      operand<U>(rng, f.man_bits, f.bias)};
      std::feclearexcept(FE_ALL_EXCEPT);
      const T h = host_eval(p.op, std::bit_cast<T>(x[0]), std::bit_cast<T>(x[1]), std::bit_cast<T>(x[2]));
      const Flags hf = host_flags();
      const std::uint64_t ops[3] = {x[0], x[1], x[2]};
      const Result r = evaluate(p.op, f, o, std::span(ops, std::size_t(arity(p.op))), f);
      const bool nan = std::isnan(h);
      bool ok = nan ? std::isnan(std::bit_cast<T>(U(r.bits))) : std::bit_cast<U>(h) == r.bits;
      // glibc's fma decides invalid for 0*inf+qNaN its own way: flags of NaN-operand fma are not compared.
      const bool nan_operand = std::isnan(std::bit_cast<T>(x[0])) || std::isnan(std::bit_cast<T>(x[1])) ||
                               std::isnan(std::bit_cast<T>(x[2]));
      if (!(p.op == Op::fma && nan_operand)) ok = ok && hf == r.flags;
      if (!ok && ++mismatches <= 10) {
        ADD_FAILURE() << f.name << " " << name(p.op) << " " << name(m.model) << (p.daz ? " daz" : "")
                      << (p.ftz ? " ftz" : "") << std::hex << " operands " << x[0] << " " << x[1] << " " << x[2]
                      << ": host " << std::bit_cast<U>(h) << " flags " << hf << ", model " << r.bits << " flags "
                      << r.flags << std::dec << " (seed " << s << ", case " << i << ")";
      }
    }
  }
  std::fesetround(FE_TONEAREST);
#if defined(__x86_64__)
  _mm_setcsr(saved);
#endif
  EXPECT_EQ(mismatches, 0u) << "seed " << s;
}

TEST_P(HostFpu, AgreesBitForBit) {
  if (GetParam().format == &binary32)
    compare<float>(GetParam());
  else
    compare<double>(GetParam());
}

std::vector<Param> params() {
  std::vector<Param> v;
  for (const Format* f : {&binary32, &binary64})
    for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::sqrt, Op::fma}) {
      v.push_back({f, op, false, false});
      if (op != Op::fma) {  // glibc's fma is software where the CPU has none: MXCSR does not reach it
        v.push_back({f, op, true, false});
        v.push_back({f, op, false, true});
      }
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, HostFpu, ::testing::ValuesIn(params()), [](const auto& test) {
  const Param& p = test.param;
  return std::string(p.format->name) + "_" + std::string(name(p.op)) + (p.daz ? "_daz" : "") + (p.ftz ? "_ftz" : "");
});

}  // namespace
}  // namespace gp::model
