// MPFR oracle for the scalar model (model/ops.hpp): the exact result of an operation comes from
// MPFR, and is rounded to the target format by code written apart from the model's.
//
// Independence: the oracle reads only the Format descriptor's fields and enums, and the Options and
// Rounding types. It decodes operands with its own decoder, derives every format constant (largest
// finite value, emin, quanta) from the fields, and never calls the model's unpack, round_pack,
// operations or special-value helpers.
//
// Method. Add, sub, mul, fma and cvt are computed exactly in MPFR (the precision is taken from the
// exponent span of the operands). Div and sqrt are computed with MPFR_RNDZ at 2p + 20 bits, keeping
// MPFR's ternary value as a sticky bit: every value strictly between two such numbers rounds alike
// in every mode, since the target has p <= 53 bits. The value is then split on the format's grid
// (quantum 2^(e - man_bits), never below the smallest subnormal quantum) into a kept integer and a
// discarded part (zero, below, at or above half a quantum), and on the unbounded-exponent grid for
// tininess. Each mode picks one of the two neighbours; ties to even/odd and round to odd choose by
// the parity of the neighbours' encodings. The special-value conventions of model/rounding.hpp
// are applied last.
//
// The exact part does not depend on the rounding mode or on the output options, so a test computes
// it once per operand tuple (Oracle::exact) and rounds it in every mode (Oracle::round).
#pragma once

#include <gmp.h>
#include <mpfr.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/format.hpp"
#include "model/rounding.hpp"  // Options, Rounding and the flag bits only

namespace gp::oracle {

using model::Flags;
using model::Format;
using model::Options;
using model::Rounding;

enum class Op : std::uint8_t { add, sub, mul, div, sqrt, fma, cvt };
std::string_view name(Op op);
int arity(Op op);

struct Expected {
  std::uint64_t bits;
  Flags flags;
};

// Format constants derived from the descriptor's fields by the oracle itself.
struct Info {
  int m;  // stored fraction bits
  long bias;
  bool gradual;              // exponent field 0 holds zero and the subnormals
  long emin;                 // exponent of the smallest normal number
  long qmin;                 // exponent of the smallest quantum (smallest subnormal's, or emin's ulp)
  long emax;                 // exponent of the largest finite number's leading bit
  std::uint64_t all_ones;    // magnitude (exponent and fraction fields) with every bit set
  std::uint64_t max_finite;  // magnitude of the largest finite number
  std::uint64_t inf_mag;     // exponent field all ones, fraction zero
  std::uint64_t quiet;       // fraction MSB (IEEE NaN style)
  std::uint64_t sign_mask;   // sign bit in storage, 0 for unsigned formats
};
Info info(const Format& f);

// A decoded operand: finite values are (-1)^neg * sig * 2^exp exactly; NaNs keep their fraction.
struct Decoded {
  enum class Kind : std::uint8_t { zero, finite, infinite, quiet_nan, signaling_nan } kind;
  bool neg;
  std::uint64_t sig;
  long exp;
  std::uint64_t frac;
};
Decoded decode(const Format& f, std::uint64_t bits, bool ftz_in = false);
constexpr bool is_nan(Decoded::Kind k) { return k == Decoded::Kind::quiet_nan || k == Decoded::Kind::signaling_nan; }
// Whether bits encode a subnormal number (the only encodings ftz_in changes).
bool is_subnormal(const Format& f, std::uint64_t bits);

// The encoding of (-1)^neg * sig * 2^exp if f holds it exactly (for building test operands).
std::optional<std::uint64_t> encode_exact(const Format& f, bool neg, std::uint64_t sig, long exp);

// Where a value lies on a grid of quantum 2^q: kept = floor(|v| / 2^q), and the discarded part.
struct Split {
  std::uint64_t kept;
  long q;
  bool inexact, tie, above;  // discarded part nonzero, exactly half a quantum, above half
};

// The mode-independent outcome of an operation.
struct Outcome {
  enum class Kind : std::uint8_t {
    value,     // a finite nonzero value: e, grid, unbounded
    zero,      // an exact zero of sign neg
    zero_sum,  // an exact zero sum: sign neg if both terms had it (signs_agree), else +0 (-0 under rd)
    infinite,  // an exact infinity of sign neg
    nan,       // a NaN operand propagates: nan_from, neg, frac
    invalid,   // an invalid operation: the canonical NaN
  } kind = Kind::invalid;
  bool neg = false;
  bool signs_agree = false;
  Flags flags = 0;    // raised in every mode (invalid from a signalling NaN, divbyzero, ...)
  long e = 0;         // exponent of the leading bit of the value
  Split grid{};       // split on the format's grid
  Split unbounded{};  // split at precision p with an unbounded exponent (differs from grid below emin)
  const Format* nan_from = nullptr;
  std::uint64_t frac = 0;
};

class Oracle {
 public:
  Oracle();
  ~Oracle();
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  // The exact outcome of op in format f on operands x (cvt converts x[0] of format `from` to f).
  // ftz_in reads subnormal operands as zeros of the same sign.
  Outcome exact(Op op, const Format& f, const Format& from, bool ftz_in, std::span<const std::uint64_t> x);
  // The outcome rounded under o (o.ftz_in is ignored here: exact() applied it).
  static Expected round(const Format& f, const Options& o, const Outcome& r);
  Expected evaluate(Op op, const Format& f, const Format& from, const Options& o, std::span<const std::uint64_t> x) {
    return round(f, o, exact(op, f, from, o.ftz_in, x));
  }

 private:
  Outcome value(const Format& f, mpfr_srcptr x, bool sticky);
  void load(mpfr_ptr dst, const Decoded& d);
  mpfr_t a_, b_, c_, prod_, res_;
  mpz_t z_, t_;
};

// Text helpers for failure messages.
std::string flag_names(Flags f);
std::string describe(const Options& o);

}  // namespace gp::oracle
