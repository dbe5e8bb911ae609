// An exact sum of products and values of the model's formats: a fixed-point accumulator (Kulisch's
// long accumulator) wide enough for every product of two finite values of the formats it is sized
// for, and for K of them plus c, with no rounding anywhere. What the error analysis measures against
// (model/error_analysis.hpp); it hands its value over as the model's exact-value type.
#pragma once

#include <cstdint>
#include <vector>

#include "model/exact.hpp"
#include "model/format.hpp"

namespace gp::model {

class ExactSum {
 public:
  // Room for `terms` products of a and b values and `terms` values of each of the `values` formats.
  ExactSum(const Format& a, const Format& b, std::initializer_list<const Format*> values, long terms);

  // Adds a * b (finite values of the formats the sum is sized for; NaN and infinity are refused by
  // the caller), negated when `negate`.
  void add_product(const Format& af, std::uint64_t a, const Format& bf, std::uint64_t b, bool negate = false);
  // Adds a finite value of one of the value formats, negated when `negate`; |value| when `magnitude`.
  void add(const Format& f, std::uint64_t bits, bool negate = false, bool magnitude = false);
  void clear();

  // The sum exactly (sticky set where it has more than 128 significant bits: the rounding it is
  // handed to then sees every bit below them).
  Exact value() const;
  // value() rounded once to f with `rounding` (no flushing, overflow to infinity).
  std::uint64_t rounded(const Format& f, Rounding rounding = Rounding::rne) const;
  double to_double() const;  // RNE

 private:
  void add_at(u128 mag, int exp, bool negate);
  int lo_ = 0;                       // the exponent of bit 0 of limb 0
  std::vector<std::uint64_t> limb_;  // two's complement, least significant limb first
};

}  // namespace gp::model
