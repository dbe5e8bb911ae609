#include "cli/selfcheck.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "cli/exit_codes.hpp"
#include "model/ops.hpp"

namespace gp::cli {

namespace {

using model::Format;
using model::Op;
using model::Options;
using model::Rounding;

// Operands that exercise every path: uniform bit patterns, values of close exponents (cancellation,
// carries), specials and subnormals.
class OperandSource {
 public:
  explicit OperandSource(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t next(const Format& f) {
    const std::uint64_t bits = rng_() & f.storage_mask();
    switch (rng_() % 8) {
      case 0: {  // a special or boundary pattern
        const std::uint64_t specials[] = {0,
                                          1,
                                          f.man_mask(),
                                          f.man_mask() + 1,
                                          f.max_finite_magnitude(),
                                          f.inf_magnitude(),
                                          f.inf_magnitude() | 1,
                                          f.magnitude_mask()};
        return model::pack(f, rng_() & 1, specials[rng_() % 8] & f.magnitude_mask());
      }
      case 1:
      case 2:
      case 3: {  // exponent near 1.0, so that sums cancel and carry
        const std::uint64_t field = std::uint64_t(f.bias) + rng_() % 5 - 2;
        const std::uint64_t mag = (field << f.man_bits) | (rng_() & f.man_mask());
        return model::pack(f, rng_() & 1, mag & f.magnitude_mask());
      }
      default: return bits & ~((std::uint64_t{1} << f.pad_bits) - 1);
    }
  }

 private:
  std::mt19937_64 rng_;
};

struct Check {
  std::ostream& out;
  SelfCheckSummary& total;
  std::uint64_t cases = 0, mismatches = 0;

  void record(bool ok, const std::function<std::string()>& describe) {
    ++cases;
    if (ok) return;
    if (++mismatches <= 5) fmt::print(out, "      mismatch: {}\n", describe());
  }
  void finish(std::string_view what) {
    fmt::print(out, "  {:<66} {:>10} cases, {}\n", what, cases,
               mismatches ? fmt::format("{} MISMATCHES", mismatches) : std::string("no mismatch"));
    total.cases += cases;
    total.mismatches += mismatches;
  }
};

template <class T>
using UInt = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
T host_op(Op op, T a, T b, T c) {
  volatile T x = a, y = b, z = c;
  switch (op) {
    case Op::add: return x + y;
    case Op::sub: return x - y;
    case Op::mul: return x * y;
    case Op::div: return x / y;
    case Op::sqrt: return std::sqrt(T(x));
    case Op::fma: return std::fma(T(x), T(y), T(z));
    case Op::cvt: break;
  }
  return x;
}

// binary32 and binary64 against the host FPU under each fesetround mode.
template <class T>
void check_host(const Format& f, std::ostream& out, SelfCheckSummary& total, std::uint64_t n, OperandSource& src) {
  const std::pair<int, Rounding> modes[] = {{FE_TONEAREST, Rounding::rne},
                                            {FE_UPWARD, Rounding::ru},
                                            {FE_DOWNWARD, Rounding::rd},
                                            {FE_TOWARDZERO, Rounding::rz}};
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::sqrt, Op::fma}) {
    Check check{out, total};
    for (const auto& [host_mode, rounding] : modes) {
      Options o;
      o.rounding = rounding;
      std::fesetround(host_mode);
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t x[3] = {src.next(f), src.next(f), src.next(f)};
        const T h = host_op(op, std::bit_cast<T>(UInt<T>(x[0])), std::bit_cast<T>(UInt<T>(x[1])),
                            std::bit_cast<T>(UInt<T>(x[2])));
        const std::uint64_t m = model::evaluate(op, f, o, std::span(x, std::size_t(model::arity(op))), f).bits;
        const bool ok = std::isnan(h) ? std::isnan(std::bit_cast<T>(UInt<T>(m))) : std::bit_cast<UInt<T>>(h) == m;
        check.record(ok, [&] {
          return fmt::format("{} {} {} {:x} {:x} {:x}: host {:x}, model {:x}", f.name, model::name(op),
                             model::name(rounding), x[0], x[1], x[2], std::bit_cast<UInt<T>>(h), m);
        });
      }
    }
    std::fesetround(FE_TONEAREST);
    check.finish(fmt::format("{} {} vs host FPU (rne ru rd rz)", f.name, model::name(op)));
  }
}

double host_value(const Format& f, std::uint64_t bits) {
  const model::Unpacked u = model::unpack(f, bits);
  return (u.neg ? -1.0 : 1.0) * std::ldexp(double(u.sig), u.exp);
}

// Narrow formats whose sums and products are exact in binary64: the host computes the exact
// result, the model rounds it with cvt; the model's own op must agree in every mode.
void check_exact_in_binary64(const Format& f, Op op, std::ostream& out, SelfCheckSummary& total, std::uint64_t n,
                             OperandSource& src) {
  Check check{out, total};
  for (Rounding r : model::all_roundings) {
    Options o;
    o.rounding = r;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t a = src.next(f), b = src.next(f);
      if (!model::is_finite_nonzero(model::classify(f, a)) || !model::is_finite_nonzero(model::classify(f, b))) {
        continue;
      }
      const double x = host_value(f, a), y = host_value(f, b);
      const double exact = op == Op::mul ? x * y : op == Op::add ? x + y : x - y;
      if (exact == 0) continue;  // the sign of an exact zero is the op's rule, not cvt's
      const std::uint64_t want = model::cvt(f, model::binary64, o, std::bit_cast<std::uint64_t>(exact)).bits;
      const std::uint64_t x2[2] = {a, b};
      const std::uint64_t got = model::evaluate(op, f, o, x2, f).bits;
      check.record(got == want, [&] {
        return fmt::format("{} {} {} {:x} {:x}: rounded exact {:x}, op {:x}", f.name, model::name(op), model::name(r),
                           a, b, want, got);
      });
    }
  }
  check.finish(fmt::format("{} {} vs exact binary64 result, every mode", f.name, model::name(op)));
}

// Every encoding of a narrow format survives the trip through binary64 and back, and its
// binary64 value is the host's.
void check_round_trip(const Format& f, std::ostream& out, SelfCheckSummary& total) {
  Check check{out, total};
  const Options o;
  const std::uint64_t count = std::uint64_t{1} << f.value_bits();
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t bits = i << f.pad_bits;
    const model::Class c = model::classify(f, bits);
    if (model::is_nan(c)) continue;
    if (f.nan == model::NanStyle::negative_zero && bits == f.sign_mask()) continue;
    const std::uint64_t wide = model::cvt(model::binary64, f, o, bits).bits;
    const std::uint64_t back = model::cvt(f, model::binary64, o, wide).bits;
    const double v = std::bit_cast<double>(wide);
    const bool value_ok = c == model::Class::infinite ? std::isinf(v) : v == host_value(f, bits);
    check.record(back == bits && value_ok,
                 [&] { return fmt::format("{} {:x} -> binary64 {:x} -> {:x}", f.name, bits, wide, back); });
  }
  check.finish(fmt::format("{} every encoding through binary64 and back", f.name));
}

}  // namespace

SelfCheckSummary run_selfcheck(std::ostream& out, std::uint64_t n, std::uint64_t seed) {
  SelfCheckSummary total;
  OperandSource src(seed);
  fmt::print(out, "Model self-check (seed {}):\n", seed);
  check_host<float>(model::binary32, out, total, n, src);
  check_host<double>(model::binary64, out, total, n, src);
  for (const Format* f : {&model::binary16, &model::bfloat16, &model::e4m3, &model::e5m2, &model::e2m1})
    for (Op op : {Op::add, Op::sub, Op::mul})
      if (op == Op::mul || model::detail::small_exact_sums(*f)) check_exact_in_binary64(*f, op, out, total, n, src);
  for (const Format* f : model::all_formats())
    if (f->storage_bits - f->pad_bits <= 16) check_round_trip(*f, out, total);
  return total;
}

void add_selfcheck_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd =
      app.add_subcommand("selfcheck", "Check the reference model against the host FPU and exact host arithmetic");
  auto quick = std::make_shared<bool>(false);
  auto seed = std::make_shared<std::uint64_t>(std::random_device{}());
  cmd->add_flag("--quick", *quick, "Fewer random cases");
  cmd->add_option("--seed", *seed, "Seed of the random cases");
  cmd->callback([quick, seed, &exit_code] {
    const SelfCheckSummary s = run_selfcheck(std::cout, *quick ? 20000 : 250000, *seed);
    if (s.mismatches == 0) {
      fmt::print("The model agrees with every oracle: {} cases, no mismatch.\n", s.cases);
    } else {
      fmt::print("THE MODEL DISAGREES in {} of {} cases: this build is not to be trusted.\n", s.mismatches, s.cases);
      exit_code = kExitDifferences;
    }
  });
}

}  // namespace gp::cli
