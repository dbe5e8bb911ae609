// The exact value type: what a probe constructs (an MMA case's summands) and what an error is
// measured against (a quotient's or a root's exact result). model/value.hpp decodes encodings
// (classes, NaN payloads); the model's evaluators keep packed terms of their own on their hot paths
// (model/ops.hpp Finite, the dot products' and summation trees' stacks), a word or two each.
#pragma once

#include <cstdint>

#include "model/rounding.hpp"
#include "model/wide.hpp"

namespace gp::model {

// (-1)^neg * (sig + d) * 2^exp, with 0 < d < 1 where `sticky` (a result that does not terminate,
// its bits below sig's last one not all zero) and d = 0 otherwise. sig = 0 without sticky is a zero
// of that sign.
struct Exact {
  bool neg = false;
  u128 sig = 0;
  int exp = 0;
  bool sticky = false;
  constexpr bool zero() const { return sig == 0 && !sticky; }
};

// The exponent of the leading bit of a nonzero sig.
constexpr int lead(const Exact& v) { return v.exp + msb(v.sig); }

// v rounded into f (bits beyond the 64 that rounding takes jammed into its sticky bit).
inline Result round_pack(const Format& f, const Options& o, const Exact& v) {
  int exp = v.exp;
  const std::uint64_t sig = narrow_jam(v.sig, exp);
  return round_pack(f, o, v.neg, exp, sig, v.sticky);
}

}  // namespace gp::model
