// Errors in ulps, with integers only: the exact result of an operation (a wide significand, and a
// sticky bit where it does not terminate), and the error of a result against it, (d - x) / ulp(x),
// in fixed point with 64 fraction bits. ulp(x) is the spacing of the format in the binade of the
// exact result x (2^(max(e(x), emin) - man_bits); the smallest quantum for x = 0), so that a
// correctly rounded result has an error of at most 1/2. What the ULP probes measure and what an
// approximate operation's bound (model/scalar_unit.hpp) is checked with.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "model/exact.hpp"
#include "model/ops.hpp"

namespace gp::model {

__extension__ typedef __int128 i128;

// The exact result of add, sub, mul, div or sqrt on finite operands of f: quotients and roots carry
// 121 significant bits and a sticky bit, sums at least 120 bits below the larger operand's leading
// bit. nullopt for NaN or infinite operands, division by zero, square roots of negative numbers,
// fma and cvt.
std::optional<Exact> exact_result(const Format& f, Op op, std::span<const std::uint64_t> x);

// (d - x) / ulp(x) * 2^64, rounded toward zero (within 2^-64 ulp); nullopt when d is not finite.
// Errors beyond 2^60 ulps are clamped there.
std::optional<i128> error_q64(const Format& f, const Exact& x, std::uint64_t d);

}  // namespace gp::model
