// Errors in ulps, with integers only: the exact result of an operation (a wide significand, and a
// sticky bit where it does not terminate), and the error of a device result against it,
// (d - x) / ulp(x), in fixed point with 64 fraction bits. ulp(x) is the spacing of the format in
// the binade of the exact result x (2^(max(e(x), emin) - man_bits); the smallest quantum for
// x = 0), so that a correctly rounded result has an error of at most 1/2.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/expr.hpp"
#include "model/exact.hpp"

namespace gp::scalar::paranoia {

__extension__ typedef __int128 i128;
using model::u128;

// Exact results (model/exact.hpp): quotients and roots carry 121 significant bits and a sticky bit,
// sums at least 120 bits below the larger operand's leading bit.
using model::Exact;

// The exact result of add, sub, mul, div or sqrt on finite operands of f; nullopt for NaN or
// infinite operands, division by zero and square roots of negative numbers.
std::optional<Exact> exact_result(const model::Format& f, backends::Node op, std::span<const std::uint64_t> x);

// (d - x) / ulp(x) * 2^64, rounded toward zero (within 2^-64 ulp); nullopt when d is not finite.
// Errors beyond 2^60 ulps are clamped there.
std::optional<i128> error_q64(const model::Format& f, const Exact& x, std::uint64_t d);
double q64_to_double(i128 q);

// The range of errors over a set of results, with the cases that reached its ends.
struct ErrorRange {
  std::uint64_t results = 0;     // results measured (finite exact value, finite output)
  std::uint64_t mismatches = 0;  // outputs that differ from the correctly rounded result (NaNs equivalent)
  std::uint64_t nonfinite = 0;   // infinite or NaN outputs where the correctly rounded result is finite
  std::uint64_t skipped = 0;     // exact result not finite in the format (overflow), or operands special
  i128 min = 0, max = 0;
  std::size_t argmin = 0, argmax = 0;  // indices of the cases
  void add(i128 e, std::size_t index);
  double min_ulps() const { return q64_to_double(min); }
  double max_ulps() const { return q64_to_double(max); }
  // Whether every measured error lies within [-1/2, 1/2] and every output is the correct rounding.
  bool correctly_rounded() const;
  // Whether every error lies strictly within one ulp.
  bool faithful() const;
  nlohmann::json to_json() const;
  std::string bounds() const;  // "[-0.78125, 0.625]"
};

}  // namespace gp::scalar::paranoia
