// Errors in ulps (model/ulp_error.hpp) and their range over a set of results.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/expr.hpp"
#include "model/ulp_error.hpp"

namespace gp::scalar::paranoia {

using model::error_q64;
using model::Exact;
using model::i128;
using model::u128;

// model::exact_result of the operation a node names (add, sub, mul, div, sqrt; nullopt otherwise).
std::optional<Exact> exact_result(const model::Format& f, backends::Node op, std::span<const std::uint64_t> x);
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
